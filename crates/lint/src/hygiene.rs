//! Rule group 7: what Puppet users trip on in YAML. Keys with a leading `::` (Hiera 5 never
//! strips it), keys given twice in one mapping (Psych silently keeps the last), plain
//! scalars YAML 1.1 reads as something else than they look (`no`, `on`, `0755`, `1:30`,
//! `1e3`, `1.10`: the message says what Puppet sees, e.g. 5400 for `1:30` by Psych's
//! base-60 arithmetic), tabs and byte-order marks.

use super::repo::Repo;
use super::written::{self, Scan};
use super::Sink;
use hiera_formats::DataFormat;
use hiera_value::value::Value;
use std::collections::HashMap;
use std::path::Path;

pub(crate) fn check(repo: &Repo, sink: &mut Sink) {
    for f in &repo.files {
        if f.read_error.is_some() {
            continue;
        }
        text_rules(&f.path, &f.bytes, &f.text, sink);
        if f.format != DataFormat::Yaml || f.parse_error.is_some() {
            continue;
        }
        if f.bytes.starts_with(&[0xEF, 0xBB, 0xBF]) {
            let written = f.scan.keys.iter().filter(|k| k.parents.is_empty()).count();
            let lost = written.saturating_sub(f.data.len());
            if lost > 0 {
                sink.add(
                    &f.path,
                    (1, 1),
                    "bom",
                    format!(
                        "the file starts with a UTF-8 byte-order mark, which Puppet's YAML reader counts as a column: it reads the first key and silently loses the {lost} other top-level key{}; save the file without the mark",
                        if lost == 1 { "" } else { "s" }
                    ),
                );
            } else {
                sink.add(
                    &f.path,
                    (1, 1),
                    "bom",
                    "the file starts with a UTF-8 byte-order mark, which Puppet's YAML reader counts as a column: a second top-level key would be silently lost; save the file without the mark",
                );
            }
        }
        for k in f.data.keys() {
            if let Some(k) = k.as_str() {
                // Psych reads a plain `::a::b` as the Symbol `:a::b`, whose name is `:a::b`.
                if k.starts_with(':') {
                    sink.add(
                        &f.path,
                        f.key_region(k),
                        "leading-colons",
                        format!(
                            "key '{k}' starts with '::': Hiera 5 never strips it, so lookups and class parameters look up '{}' and never find this key",
                            k.trim_start_matches(':')
                        ),
                    );
                }
            }
        }
        duplicates(&f.path, &f.scan, sink);
        yaml11(&f.path, &f.scan, sink);
    }
    for layer in &repo.layers {
        if let Some(p) = &layer.hiera_yaml {
            if let Ok(bytes) = repo.read_bytes(p) {
                let text = String::from_utf8_lossy(&bytes);
                text_rules(p, &bytes, &text, sink);
                duplicates(p, &written::scan(&text), sink);
            }
        }
    }
}

fn text_rules(path: &Path, bytes: &[u8], text: &str, sink: &mut Sink) {
    if bytes.starts_with(&[0xEF, 0xBB, 0xBF]) && DataFormat::of_path(path) != Some(DataFormat::Yaml)
    {
        sink.add(
            path,
            (1, 1),
            "bom",
            "the file starts with a UTF-8 byte-order mark; save the file without it",
        );
    }
    for (i, line) in text.lines().enumerate() {
        let Some(t) = line.find('\t') else { continue };
        // A tab inside a quoted string is the string's business.
        if line[..t].contains(['"', '\'']) {
            continue;
        }
        let col = line[..t].chars().count() + 1;
        let indent = line[..t].chars().all(|c| c == ' ' || c == '\t');
        let msg = if indent {
            "a tab in the indentation: YAML allows only spaces there"
        } else {
            "a tab character: YAML treats it as a separator only in some places; use spaces"
        };
        let start = super::Pos {
            line: i + 1,
            column: col,
        };
        sink.add(path, super::Region::on_line(start, 1), "tab", msg);
    }
}

fn duplicates(path: &Path, scan: &Scan, sink: &mut Sink) {
    let mut seen: HashMap<(&[String], &str), usize> = HashMap::new();
    for k in &scan.keys {
        match seen.get(&(k.parents.as_slice(), k.key.as_str())) {
            Some(first) => {
                let where_ = if k.parents.is_empty() {
                    String::new()
                } else {
                    let p: Vec<&str> = k
                        .parents
                        .iter()
                        .filter(|p| !p.starts_with('#'))
                        .map(String::as_str)
                        .collect();
                    format!(" (in '{}')", p.join("."))
                };
                sink.add(
                    path,
                    k.region(),
                    "duplicate-key",
                    format!(
                        "key '{}' is given again{where_} (first on line {first}): Psych keeps this last value and silently drops the first",
                        k.key
                    ),
                );
            }
            None => {
                seen.insert((k.parents.as_slice(), k.key.as_str()), k.line);
            }
        }
    }
}

fn yaml11(path: &Path, scan: &Scan, sink: &mut Sink) {
    for k in scan.keys.iter().filter(|k| !k.quoted) {
        if let Some(seen) = surprise(&k.key) {
            sink.add_fixed(
                path,
                k.region(),
                "yaml11-value",
                format!(
                    "key '{}' is read as {seen} (YAML 1.1), not as the string '{}'; quote it",
                    k.key, k.key
                ),
                Some(quote(&k.key, k.region())),
            );
        }
    }
    for p in &scan.plains {
        if let Some(seen) = surprise(&p.text) {
            sink.add_fixed(
                path,
                p.region(),
                "yaml11-value",
                format!(
                    "'{}' is read as {seen} (YAML 1.1); quote it if you mean the string '{}'",
                    p.text, p.text
                ),
                Some(quote(&p.text, p.region())),
            );
        }
    }
}

/// The fix of a plain scalar YAML 1.1 misreads: the same text single-quoted (a string).
fn quote(text: &str, region: super::Region) -> super::Fix {
    super::Fix {
        title: format!("Quote '{text}' (a string)"),
        edits: vec![super::TextEdit {
            region,
            new_text: format!("'{}'", text.replace('\'', "''")),
        }],
    }
}

/// What Puppet sees for a plain scalar that does not look like it, or `None`.
pub(crate) fn surprise(text: &str) -> Option<String> {
    let v = hiera_formats::yaml::resolve_plain_scalar(text);
    match v {
        Value::Bool(b) => {
            let obvious = matches!(text, "true" | "false" | "True" | "False" | "TRUE" | "FALSE");
            (!obvious).then(|| format!("the boolean {b}"))
        }
        Value::Int(n) => {
            let shown = n.to_string();
            (shown != text && format!("+{shown}") != text)
                .then(|| format!("the integer {shown}{}", int_kind(text)))
        }
        Value::Float(f) => {
            let shown = hiera_value::ruby::float_to_s(f);
            // `1.0` and `1.5` are what they look like; `1e3`, `1.10`, `1:30.5` are not.
            (shown != text).then(|| format!("the float {shown}"))
        }
        Value::String(_) if yaml12_number(text) => Some(format!(
            "the string '{text}' (YAML 1.2 readers and editors see a number)"
        )),
        _ => None,
    }
}

/// A YAML 1.2 core-schema number that Psych leaves a string (`1e3`, `+.5e1`).
fn yaml12_number(t: &str) -> bool {
    let t = t.strip_prefix(['-', '+']).unwrap_or(t);
    let (mant, exp) = match t.find(['e', 'E']) {
        Some(i) => (&t[..i], Some(&t[i + 1..])),
        None => (t, None),
    };
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let mant_ok = match mant.split_once('.') {
        Some((a, b)) => {
            (digits(a) || a.is_empty())
                && (digits(b) || b.is_empty())
                && !(a.is_empty() && b.is_empty())
        }
        None => digits(mant),
    };
    let exp_ok = exp.is_none_or(|e| digits(e.strip_prefix(['-', '+']).unwrap_or(e)));
    mant_ok && exp_ok
}

fn int_kind(text: &str) -> &'static str {
    let t = text.trim_start_matches(['-', '+']);
    if t.contains(':') {
        " (base 60)"
    } else if t.starts_with("0x") {
        " (hexadecimal)"
    } else if t.starts_with("0b") {
        " (binary)"
    } else if t.len() > 1 && t.starts_with('0') {
        " (octal)"
    } else {
        ""
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn surprises() {
        assert_eq!(surprise("no").as_deref(), Some("the boolean false"));
        assert_eq!(surprise("on").as_deref(), Some("the boolean true"));
        assert_eq!(surprise("yes").as_deref(), Some("the boolean true"));
        assert_eq!(surprise("true"), None);
        assert_eq!(surprise("0755").as_deref(), Some("the integer 493 (octal)"));
        assert_eq!(
            surprise("1:30").as_deref(),
            Some("the integer 5400 (base 60)")
        );
        assert_eq!(
            surprise("1e3").as_deref(),
            Some("the string '1e3' (YAML 1.2 readers and editors see a number)")
        );
        assert_eq!(surprise("1.10").as_deref(), Some("the float 1.1"));
        assert_eq!(
            surprise("0x1F").as_deref(),
            Some("the integer 31 (hexadecimal)")
        );
        assert_eq!(surprise("42"), None);
        assert_eq!(surprise("-7"), None);
        assert_eq!(surprise("1.5"), None);
        assert_eq!(surprise("0"), None);
        assert_eq!(surprise("1.0"), None);
        assert_eq!(surprise("hello"), None);
        assert_eq!(surprise("~"), None);
        assert_eq!(surprise("0.5"), None);
    }
}
