//! Findings as text (`file:line:col: severity rule-id: message`), JSON, GitHub Actions
//! workflow commands, or SARIF 2.1.0 (code scanning).

use super::{Finding, Region, Report, Severity, RULES};
use hiera_value::escape::{github_data, github_property, printable};
use serde_json::{json, Value as Json};

/// An output format of `lint --format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OutputFormat {
    /// `file:line:col: severity rule-id: message` lines.
    #[default]
    Text,
    /// One JSON document.
    Json,
    /// GitHub Actions workflow annotations.
    Github,
    /// SARIF 2.1.0 (code-scanning tools).
    Sarif,
}

impl OutputFormat {
    /// The format named `s` (`text`, `json`, `github`, `sarif`).
    pub fn parse(s: &str) -> Option<OutputFormat> {
        match s {
            "text" => Some(OutputFormat::Text),
            "json" => Some(OutputFormat::Json),
            "github" => Some(OutputFormat::Github),
            "sarif" => Some(OutputFormat::Sarif),
            _ => None,
        }
    }
}

/// The report in `format`, ending with a newline when not empty.
pub fn render(report: &Report, format: OutputFormat) -> String {
    match format {
        OutputFormat::Text => report.findings.iter().map(|f| f.to_text() + "\n").collect(),
        OutputFormat::Json => {
            let list: Vec<Json> = report.findings.iter().map(finding_json).collect();
            serde_json::to_string_pretty(&Json::Array(list)).unwrap_or_default() + "\n"
        }
        OutputFormat::Github => report.findings.iter().map(github).collect(),
        OutputFormat::Sarif => {
            serde_json::to_string_pretty(&sarif(report)).unwrap_or_default() + "\n"
        }
    }
}

fn finding_json(f: &Finding) -> Json {
    json!({
        "file": f.file,
        "line": f.line().max(1),
        "column": f.column().max(1),
        "severity": f.severity.name(),
        "rule": f.rule,
        "message": f.message,
    })
}

/// `::error file=F,line=L,col=C,title=RULE::MESSAGE`: the file name and message
/// [`printable`], then escaped as GitHub's toolkit does ([`github_property`],
/// [`github_data`]), as `diff --format github` writes them.
fn github(f: &Finding) -> String {
    let level = match f.severity {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Info => "notice",
    };
    format!(
        "::{level} file={},line={},col={},title={}::{}\n",
        github_property(&printable(&f.file)),
        f.line().max(1),
        f.column().max(1),
        github_property(f.rule),
        github_data(&printable(&f.message))
    )
}

fn sarif_level(s: Severity) -> &'static str {
    match s {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Info => "note",
    }
}

fn sarif(report: &Report) -> Json {
    let rules: Vec<Json> = RULES
        .iter()
        .map(|r| {
            json!({
                "id": r.id,
                "shortDescription": {"text": r.summary},
                "fullDescription": {"text": format!("{} (docs/lint.md#{}).", r.summary, r.id)},
                "defaultConfiguration": {"level": sarif_level(r.severity)},
            })
        })
        .collect();
    let results: Vec<Json> = report
        .findings
        .iter()
        .map(|f| {
            let index = RULES.iter().position(|r| r.id == f.rule).unwrap_or(0);
            let mut result = json!({
                "ruleId": f.rule,
                "ruleIndex": index,
                "level": sarif_level(f.severity),
                "message": {"text": f.message},
                "locations": [{
                    "physicalLocation": {
                        "artifactLocation": {"uri": uri(&f.file)},
                        "region": sarif_region(&f.region),
                    }
                }],
            });
            if let Some(fix) = &f.fix {
                let replacements: Vec<Json> = fix
                    .edits
                    .iter()
                    .map(|e| {
                        json!({
                            "deletedRegion": sarif_region(&e.region),
                            "insertedContent": {"text": e.new_text},
                        })
                    })
                    .collect();
                result["fixes"] = json!([{
                    "description": {"text": fix.title},
                    "artifactChanges": [{
                        "artifactLocation": {"uri": uri(&f.file)},
                        "replacements": replacements,
                    }],
                }]);
            }
            result
        })
        .collect();
    json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "hiera-lookup",
                "version": env!("CARGO_PKG_VERSION"),
                "rules": rules,
            }},
            "columnKind": "unicodeCodePoints",
            "results": results,
        }],
    })
}

/// A SARIF region: where it starts, and where it ends when it is more than a place
/// (columns in code points, as the run's `columnKind` says).
fn sarif_region(r: &Region) -> Json {
    let mut region =
        json!({"startLine": r.start.line.max(1), "startColumn": r.start.column.max(1)});
    if r.end > r.start && r.start.line > 0 && r.start.column > 0 {
        region["endLine"] = json!(r.end.line);
        region["endColumn"] = json!(r.end.column);
    }
    region
}

/// A relative file name as a URI reference (percent-encoding what RFC 3986 does not allow).
fn uri(file: &str) -> String {
    let mut out = String::new();
    for b in file.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~/!$&'()*+,;=:@".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report() -> Report {
        Report {
            findings: vec![Finding {
                file: "data/a b.yaml".into(),
                region: Region::on_line(crate::Pos { line: 3, column: 5 }, 2),
                severity: Severity::Warning,
                rule: "yaml11-value",
                message: "'no' is read as the boolean false, 100%".into(),
                fix: Some(crate::Fix {
                    title: "Quote 'no' (a string)".into(),
                    edits: vec![crate::TextEdit {
                        region: Region::on_line(crate::Pos { line: 3, column: 5 }, 2),
                        new_text: "'no'".into(),
                    }],
                }),
            }],
            ..Default::default()
        }
    }

    #[test]
    fn text_and_github() {
        assert_eq!(
            render(&report(), OutputFormat::Text),
            "data/a b.yaml:3:5: warning yaml11-value: 'no' is read as the boolean false, 100%\n"
        );
        assert_eq!(
            render(&report(), OutputFormat::Github),
            "::warning file=data/a b.yaml,line=3,col=5,title=yaml11-value::'no' is read as the boolean false, 100%25\n"
        );
    }

    #[test]
    fn json_and_sarif() {
        let j: Json = serde_json::from_str(&render(&report(), OutputFormat::Json)).unwrap();
        assert_eq!(j[0]["rule"], "yaml11-value");
        assert_eq!(j[0]["line"], 3);
        let s: Json = serde_json::from_str(&render(&report(), OutputFormat::Sarif)).unwrap();
        assert_eq!(s["version"], "2.1.0");
        let run = &s["runs"][0];
        let r = &run["results"][0];
        assert_eq!(r["level"], "warning");
        assert_eq!(
            r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
            "data/a%20b.yaml"
        );
        let region = json!({"startLine": 3, "startColumn": 5, "endLine": 3, "endColumn": 7});
        assert_eq!(r["locations"][0]["physicalLocation"]["region"], region);
        let change = &r["fixes"][0]["artifactChanges"][0];
        assert_eq!(change["artifactLocation"]["uri"], "data/a%20b.yaml");
        assert_eq!(change["replacements"][0]["deletedRegion"], region);
        assert_eq!(change["replacements"][0]["insertedContent"]["text"], "'no'");
        assert_eq!(
            r["fixes"][0]["description"]["text"],
            "Quote 'no' (a string)"
        );
        // JSON stays as it was: the start.
        assert_eq!(j[0]["column"], 5);
        assert_eq!(j[0].as_object().unwrap().len(), 6);
        let idx = r["ruleIndex"].as_u64().unwrap() as usize;
        assert_eq!(run["tool"]["driver"]["rules"][idx]["id"], "yaml11-value");
        assert_eq!(
            run["tool"]["driver"]["rules"].as_array().unwrap().len(),
            RULES.len()
        );
    }
}
