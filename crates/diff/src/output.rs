//! A [`Report`] for people (text), scripts (JSON), GitHub (workflow annotations on the
//! changed data lines) and pull-request comments (Markdown).

use super::paths::{compact, Edit, MAX_EDITS};
use super::{Group, KeyChange, Report, Resolved};
use hiera_value::escape::{
    github_data, github_property, markdown_code, markdown_fenced, markdown_text, printable,
};
use hiera_value::value::{Map, Value};
use std::collections::{BTreeMap, BTreeSet};

/// An output format of `diff`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// For people: by key, the nodes affected and the edits by path.
    Text,
    /// One JSON document for scripts.
    Json,
    /// GitHub Actions workflow annotations on the changed data lines.
    Github,
    /// A pull-request comment.
    Markdown,
}

impl Format {
    /// Parses `--format` (`text`, `json`, `github`, `markdown` or `md`).
    pub fn parse(s: &str) -> Result<Format, String> {
        match s {
            "text" => Ok(Format::Text),
            "json" => Ok(Format::Json),
            "github" => Ok(Format::Github),
            "markdown" | "md" => Ok(Format::Markdown),
            other => Err(format!(
                "--format expects text, json, github or markdown, got '{other}'"
            )),
        }
    }

    /// The report in this format.
    pub fn render(self, r: &Report) -> String {
        match self {
            Format::Text => text(r),
            Format::Json => json(r),
            Format::Github => github(r),
            Format::Markdown => markdown(r),
        }
    }
}

/// Node names shown in a line before "… and N more".
const SHOWN_NODES: usize = 5;
/// Keys detailed in a Markdown comment (GitHub caps a comment at 65,536 characters).
const MARKDOWN_KEYS: usize = 60;

/// `1,234`.
fn num(n: usize) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{} {}", num(n), if n == 1 { one } else { many })
}

/// The first node names, [`printable`].
fn node_list(nodes: &[String]) -> String {
    let mut s = nodes
        .iter()
        .take(SHOWN_NODES)
        .map(|n| printable(n))
        .collect::<Vec<_>>()
        .join(", ");
    if nodes.len() > SHOWN_NODES {
        s.push_str(&format!(" … and {} more", num(nodes.len() - SHOWN_NODES)));
    }
    s
}

/// The first line of the report: what changed, and how much work that took ([`printable`]:
/// one line, whatever the revisions, directories or files it names).
pub(crate) fn summary(r: &Report) -> String {
    let (base, head) = (printable(&r.base), printable(&r.head));
    let mut s = if r.changes.is_empty() {
        format!("No change between {base} and {head}")
    } else {
        format!(
            "{} changed on {} of {} between {base} and {head}",
            plural(r.changes.len(), "key", "keys"),
            num(r.changed_nodes()),
            plural(r.nodes, "node", "nodes"),
        )
    };
    s.push_str(&format!(
        " ({} × {} recomputed, {} lookups; {} skipped",
        plural(r.keys_recomputed, "key", "keys"),
        plural(r.nodes, "node", "nodes"),
        num(r.lookups),
        plural(r.keys_skipped, "key", "keys"),
    ));
    if r.nodes_skipped > 0 {
        s.push_str(&format!(
            " and {} no changed file reaches",
            plural(r.nodes_skipped, "node", "nodes")
        ));
    }
    if !r.unreadable.is_empty() {
        s.push_str(&format!(
            "; {} whose facts could not be read",
            plural(r.unreadable.len(), "node", "nodes")
        ));
    }
    if r.pairs_skipped > 0 {
        s.push_str(&format!(": {} node × key pairs", num(r.pairs_skipped)));
    }
    match &r.impact.everything {
        Some(why) if r.impact.everything_where_reached => s.push_str(&format!(
            "; every key recomputed on the nodes reaching a changed file: {})",
            printable(why)
        )),
        Some(why) => s.push_str(&format!("; every key recomputed: {})", printable(why))),
        None => s.push(')'),
    }
    if r.opaque > 0 {
        s.push_str(&format!(
            "; {} held encrypted secrets no private key here decrypts, compared by ciphertext",
            plural(r.opaque, "value", "values")
        ));
    }
    s
}

/// The lines describing one group's change (without the nodes), each [`printable`].
fn change_lines(key: &str, g: &Group) -> Vec<String> {
    raw_change_lines(key, g)
        .iter()
        .map(|l| printable(l))
        .collect()
}

fn raw_change_lines(key: &str, g: &Group) -> Vec<String> {
    let mut out = Vec::new();
    match (&g.before, &g.after) {
        (Resolved::Found(_), Resolved::Found(_)) => {
            for e in g.edits.iter().take(MAX_EDITS) {
                out.push(e.line(key));
            }
            if g.edits.len() > MAX_EDITS {
                out.push(format!("… and {} more", num(g.edits.len() - MAX_EDITS)));
            }
        }
        (Resolved::NotFound, Resolved::Found(v)) => out.push(format!("+ {key}: {}", compact(v))),
        (Resolved::Found(v), Resolved::NotFound) => {
            out.push(format!("- {key}: {} (no longer found)", compact(v)))
        }
        (before, Resolved::Error(e)) => {
            out.push(format!("error: {e}"));
            match before {
                Resolved::Found(v) => out.push(format!("  (was {})", compact(v))),
                Resolved::NotFound => out.push("  (was not found)".into()),
                // Two errors that print the same differ in what was redacted.
                Resolved::Error(old) if old == e => {
                    out.push("  (was the same error about another encrypted value)".into())
                }
                Resolved::Error(old) => out.push(format!("  (was the error: {old})")),
            }
        }
        (Resolved::Error(e), after) => {
            out.push(format!("error gone: {e}"));
            match after {
                Resolved::Found(v) => out.push(format!("  now {}", compact(v))),
                _ => out.push("  now not found".into()),
            }
        }
        (Resolved::NotFound, Resolved::NotFound) => {}
    }
    out
}

/// The changed definitions as `file:line:column` (as compilers and editors name a place;
/// `file:line` or `file` where the parser gave less), [`printable`].
fn sites(c: &KeyChange) -> String {
    c.sites
        .iter()
        .map(|s| {
            let file = printable(&s.file);
            match (s.line, s.column) {
                (Some(l), Some(col)) => format!("{file}:{l}:{col}"),
                (Some(l), None) => format!("{file}:{l}"),
                _ => file,
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// Errors that appear for several keys (a data file that stops parsing fails every key
/// read through it): message → (keys, nodes). Keys that change only by such errors are
/// listed under the error rather than one by one.
fn shared_errors(r: &Report) -> BTreeMap<&str, (BTreeSet<&str>, BTreeSet<&str>)> {
    let mut m: BTreeMap<&str, (BTreeSet<&str>, BTreeSet<&str>)> = BTreeMap::new();
    for c in &r.changes {
        for g in &c.groups {
            if let (false, Resolved::Error(e)) = (matches!(g.before, Resolved::Error(_)), &g.after)
            {
                let entry = m.entry(e.as_str()).or_default();
                entry.0.insert(c.key.as_str());
                entry.1.extend(g.nodes.iter().map(String::as_str));
            }
        }
    }
    m.retain(|_, (keys, _)| keys.len() > 1);
    m
}

/// Whether every change of `c` is the appearance of one of the `shared` errors.
fn only_shared_errors(
    c: &KeyChange,
    shared: &BTreeMap<&str, (BTreeSet<&str>, BTreeSet<&str>)>,
) -> bool {
    c.groups.iter().all(|g| match (&g.before, &g.after) {
        (Resolved::Error(_), _) => false,
        (_, Resolved::Error(e)) => shared.contains_key(e.as_str()),
        _ => false,
    })
}

fn key_list(keys: &BTreeSet<&str>) -> String {
    let mut s = keys
        .iter()
        .take(SHOWN_NODES)
        .map(|k| printable(k))
        .collect::<Vec<_>>()
        .join(", ");
    if keys.len() > SHOWN_NODES {
        s.push_str(&format!(" … and {} more", num(keys.len() - SHOWN_NODES)));
    }
    s
}

fn text(r: &Report) -> String {
    let mut out = summary(r);
    out.push('\n');
    let shared = shared_errors(r);
    for (e, (keys, nodes)) in &shared {
        let nodes: Vec<String> = nodes.iter().map(|n| n.to_string()).collect();
        out.push_str(&format!(
            "\nerror: {}\n  {} on {}: {}\n  keys: {}\n",
            printable(e),
            plural(keys.len(), "key", "keys"),
            plural(nodes.len(), "node", "nodes"),
            node_list(&nodes),
            key_list(keys)
        ));
    }
    for c in r.changes.iter().filter(|c| !only_shared_errors(c, &shared)) {
        out.push('\n');
        out.push_str(&format!(
            "{}  ({})",
            printable(&c.key),
            plural(c.node_count(), "node", "nodes")
        ));
        if !c.sites.is_empty() {
            out.push_str(&format!("  {}", sites(c)));
        }
        out.push('\n');
        for g in &c.groups {
            out.push_str(&format!(
                "  {}: {}\n",
                plural(g.nodes.len(), "node", "nodes"),
                node_list(&g.nodes)
            ));
            for l in change_lines(&c.key, g) {
                out.push_str(&format!("    {l}\n"));
            }
        }
    }
    out
}

/// Hashes and arrays of the report around the values it holds (the report, `changes`, a
/// change, `groups`, a group, `edits`, an edit): each value may nest as deep as JSON lets a
/// lookup print it.
const REPORT_LEVELS: usize = 7;

/// `v` under `field`, or, when JSON cannot hold it (NaN, Infinity, nesting over 100), why
/// under `<field>_error`: one value that cannot be written does not take the rest of the
/// report with it.
fn put(m: &mut Map, field: &str, v: &Value) {
    match hiera_formats::render::to_json(v) {
        Ok(_) => m.insert(Value::str(field), v.clone()),
        Err(e) => m.insert(
            Value::str(format!("{field}_error")),
            Value::str(e.to_string()),
        ),
    };
}

fn resolved_value(r: &Resolved) -> Value {
    let mut m = Map::default();
    match r {
        Resolved::Found(v) => {
            m.insert(Value::str("found"), Value::Bool(true));
            put(&mut m, "value", v);
        }
        Resolved::NotFound => {
            m.insert(Value::str("found"), Value::Bool(false));
        }
        Resolved::Error(e) => {
            m.insert(Value::str("error"), Value::str(e.as_str()));
        }
    }
    Value::Hash(m)
}

fn edit_value(e: &Edit) -> Value {
    let mut m = Map::default();
    m.insert(Value::str("path"), Value::str(e.path()));
    match e {
        Edit::Changed { before, after, .. } => {
            put(&mut m, "before", before);
            put(&mut m, "after", after);
            if before == after {
                // What differed was redacted (a secret decrypted from eyaml changed).
                m.insert(Value::str("redacted"), Value::Bool(true));
            } else if e.opaque_changed() {
                // An opaque secret's ciphertext changed (the values carry its digests).
                m.insert(Value::str("encrypted"), Value::Bool(true));
            }
        }
        Edit::Added { value, .. } => put(&mut m, "added", value),
        Edit::Removed { value, .. } => put(&mut m, "removed", value),
    }
    Value::Hash(m)
}

fn strs<'a>(it: impl IntoIterator<Item = &'a String>) -> Value {
    Value::Array(it.into_iter().map(|s| Value::str(s.as_str())).collect())
}

/// The whole report as one JSON document.
pub(crate) fn to_value(r: &Report) -> Value {
    let int = |n: usize| Value::Int(n as i64);
    let mut m = Map::default();
    m.insert(Value::str("base"), Value::str(r.base.as_str()));
    m.insert(Value::str("head"), Value::str(r.head.as_str()));
    m.insert(Value::str("nodes"), int(r.nodes));
    m.insert(Value::str("changed_keys"), int(r.changes.len()));
    m.insert(Value::str("changed_nodes"), int(r.changed_nodes()));
    m.insert(Value::str("keys_recomputed"), int(r.keys_recomputed));
    m.insert(Value::str("keys_skipped"), int(r.keys_skipped));
    m.insert(Value::str("lookups"), int(r.lookups));
    m.insert(Value::str("nodes_skipped"), int(r.nodes_skipped));
    m.insert(Value::str("pairs_skipped"), int(r.pairs_skipped));
    if !r.unreadable.is_empty() {
        m.insert(
            Value::str("unreadable_nodes"),
            Value::Array(
                r.unreadable
                    .iter()
                    .map(|u| Value::str(u.as_str()))
                    .collect(),
            ),
        );
    }
    m.insert(Value::str("opaque_values"), int(r.opaque));
    m.insert(
        Value::str("recomputed_everything"),
        match &r.impact.everything {
            Some(w) => Value::str(w.as_str()),
            None => Value::Null,
        },
    );
    let files = r
        .impact
        .changed
        .iter()
        .map(|f| {
            let mut fm = Map::default();
            fm.insert(Value::str("path"), Value::str(f.path.as_str()));
            let status = match f.status {
                super::impact::Status::Added => "added",
                super::impact::Status::Removed => "removed",
                super::impact::Status::Modified => "modified",
            };
            fm.insert(Value::str("status"), Value::str(status));
            fm.insert(Value::str("keys"), strs(&f.keys));
            Value::Hash(fm)
        })
        .collect();
    m.insert(Value::str("changed_files"), Value::Array(files));
    let changes = r
        .changes
        .iter()
        .map(|c| {
            let mut cm = Map::default();
            cm.insert(Value::str("key"), Value::str(c.key.as_str()));
            let sites = c
                .sites
                .iter()
                .map(|s| {
                    let mut sm = Map::default();
                    sm.insert(Value::str("file"), Value::str(s.file.as_str()));
                    if let Some(l) = s.line {
                        sm.insert(Value::str("line"), int(l));
                    }
                    Value::Hash(sm)
                })
                .collect();
            cm.insert(Value::str("sites"), Value::Array(sites));
            let groups = c
                .groups
                .iter()
                .map(|g| {
                    let mut gm = Map::default();
                    gm.insert(Value::str("nodes"), strs(&g.nodes));
                    if g.edits.is_empty() {
                        gm.insert(Value::str("before"), resolved_value(&g.before));
                        gm.insert(Value::str("after"), resolved_value(&g.after));
                    } else {
                        // The edits say it all; the whole values may differ by node.
                        gm.insert(
                            Value::str("edits"),
                            Value::Array(g.edits.iter().map(edit_value).collect()),
                        );
                    }
                    Value::Hash(gm)
                })
                .collect();
            cm.insert(Value::str("groups"), Value::Array(groups));
            Value::Hash(cm)
        })
        .collect();
    m.insert(Value::str("changes"), Value::Array(changes));
    Value::Hash(m)
}

fn json(r: &Report) -> String {
    let report = to_value(r);
    let mut s =
        hiera_formats::json::write::to_json_around(&report, REPORT_LEVELS).unwrap_or_else(|e| {
            // Not reached: every value was checked by `put`. Say so rather than print half.
            format!(
                "{{\"error\":{}}}",
                hiera_formats::render::to_json(&Value::str(e.to_string())).unwrap_or_default()
            )
        });
    s.push('\n');
    s
}

/// One `::warning` (`::error` where an error appears) per changed key, on the changed line
/// of each file that defines it, so that a pull request shows it inline; keys changed only
/// through interpolation get an annotation without a file. Every piece of data is
/// [`printable`] and every line escaped as GitHub's toolkit does ([`github_data`],
/// [`github_property`]): nothing in the analysed tree can write a line of its own (a
/// workflow command).
fn github(r: &Report) -> String {
    let mut out = String::new();
    let shared = shared_errors(r);
    for (e, (keys, nodes)) in &shared {
        let nodes: Vec<String> = nodes.iter().map(|n| n.to_string()).collect();
        let body = github_data(&format!(
            "{}\n{} on {}: {}\nkeys: {}",
            printable(e),
            plural(keys.len(), "key", "keys"),
            plural(nodes.len(), "node", "nodes"),
            node_list(&nodes),
            key_list(keys)
        ));
        // The changed file the message names, at the line it names.
        let file =
            r.impact.changed.iter().find(|f| {
                e.contains(&format!("({})", f.path)) || e.contains(&format!("{}:", f.path))
            });
        let title = github_property(&format!(
            "hiera: an error for {}",
            plural(keys.len(), "key", "keys")
        ));
        match file {
            Some(f) => {
                let line = e
                    .split("line ")
                    .nth(1)
                    .and_then(|rest| rest.split(|c: char| !c.is_ascii_digit()).next())
                    .and_then(|n| n.parse::<usize>().ok())
                    .map(|l| format!(",line={l}"))
                    .unwrap_or_default();
                out.push_str(&format!(
                    "::error file={}{line},title={title}::{body}\n",
                    github_property(&printable(&prefixed(r, &f.path)))
                ));
            }
            None => out.push_str(&format!("::error title={title}::{body}\n")),
        }
    }
    for c in r.changes.iter().filter(|c| !only_shared_errors(c, &shared)) {
        let error = c.groups.iter().any(|g| {
            matches!(g.after, Resolved::Error(_)) && !matches!(g.before, Resolved::Error(_))
        });
        let level = if error { "error" } else { "warning" };
        let mut msg = Vec::new();
        for g in &c.groups {
            msg.push(format!(
                "{}: {}",
                plural(g.nodes.len(), "node", "nodes"),
                node_list(&g.nodes)
            ));
            msg.extend(
                change_lines(&c.key, g)
                    .into_iter()
                    .take(20)
                    .map(|l| format!("  {l}")),
            );
        }
        let title = format!(
            "hiera: {} changes for {}",
            printable(&c.key),
            plural(c.node_count(), "node", "nodes")
        );
        let body = github_data(&msg.join("\n"));
        if c.sites.is_empty() {
            out.push_str(&format!(
                "::{level} title={}::{body}\n",
                github_property(&title)
            ));
        }
        for s in &c.sites {
            let file = prefixed(r, &s.file);
            let line = s.line.map(|l| format!(",line={l}")).unwrap_or_default()
                + &s.column.map(|c| format!(",col={c}")).unwrap_or_default();
            out.push_str(&format!(
                "::{level} file={}{line},title={}::{body}\n",
                github_property(&printable(&file)),
                github_property(&title)
            ));
        }
    }
    out.push_str(&summary(r));
    out.push('\n');
    out
}

/// A path of the control repo as a path of the git work tree (what annotations name); a
/// file outside the control repo (`../shared/common.yaml`) is named without the `..`.
fn prefixed(r: &Report, path: &str) -> String {
    let mut parts: Vec<&str> = r.path_prefix.split('/').filter(|p| !p.is_empty()).collect();
    for p in path.split('/') {
        match p {
            ".." => {
                parts.pop();
            }
            "." | "" => {}
            p => parts.push(p),
        }
    }
    parts.join("/")
}

/// A pull-request comment: every piece of data is shown as text ([`markdown_text`],
/// [`markdown_code`], [`markdown_fenced`]), never read as Markdown or HTML.
fn markdown(r: &Report) -> String {
    let mut out = format!(
        "### hiera-lookup diff {} → {}\n\n",
        markdown_code(&r.base),
        markdown_code(&r.head)
    );
    out.push_str(&markdown_text(&summary(r)));
    out.push_str("\n\n");
    if r.changes.is_empty() {
        return out;
    }
    let shared = shared_errors(r);
    for (e, (keys, nodes)) in &shared {
        let nodes: Vec<String> = nodes.iter().map(|n| n.to_string()).collect();
        out.push_str(&format!(
            "**Error** on {} for {}: {}\n\n~~~\n{}\n~~~\n\n",
            plural(nodes.len(), "node", "nodes"),
            plural(keys.len(), "key", "keys"),
            markdown_text(&node_list(&nodes)),
            markdown_fenced(e)
        ));
    }
    let listed: Vec<&KeyChange> = r
        .changes
        .iter()
        .filter(|c| !only_shared_errors(c, &shared))
        .collect();
    if listed.is_empty() {
        return out;
    }
    out.push_str("| key | nodes | defined in |\n|---|---:|---|\n");
    for c in &listed {
        out.push_str(&format!(
            "| {} | {} | {} |\n",
            markdown_code(&c.key),
            num(c.node_count()),
            markdown_text(&sites(c))
        ));
    }
    out.push('\n');
    for c in listed.iter().take(MARKDOWN_KEYS) {
        out.push_str(&format!(
            "<details><summary><code>{}</code> — {}</summary>\n\n",
            markdown_text(&c.key),
            plural(c.node_count(), "node", "nodes")
        ));
        for g in &c.groups {
            out.push_str(&format!(
                "{}: {}\n\n~~~\n",
                plural(g.nodes.len(), "node", "nodes"),
                markdown_text(&node_list(&g.nodes))
            ));
            for l in change_lines(&c.key, g) {
                out.push_str(&markdown_fenced(&l));
                out.push('\n');
            }
            out.push_str("~~~\n\n");
        }
        out.push_str("</details>\n\n");
    }
    if listed.len() > MARKDOWN_KEYS {
        out.push_str(&format!(
            "… and {} more (run `hiera-lookup diff` for all of them)\n",
            plural(listed.len() - MARKDOWN_KEYS, "key", "keys")
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_have_separators() {
        assert_eq!(num(0), "0");
        assert_eq!(num(999), "999");
        assert_eq!(num(1000), "1,000");
        assert_eq!(num(5047000), "5,047,000");
    }
}
