//! `where` reports as aligned text for people (coloured on request) and JSON for scripts.

use super::fleet::FleetReport;
use super::{Answer, Definition, OptionEntry, Report, Role};
use crate::engine::reach::MergeSource;
use hiera_value::value::{Map, Value};
use std::path::Path;

/// How to print.
#[derive(Debug, Clone, Default)]
pub struct Style {
    /// ANSI colours.
    pub color: bool,
    /// Paths under this directory are printed relative to it.
    pub base: Option<std::path::PathBuf>,
    /// The terminal's width: a table's last column (the value) is cut to fit it. `None`
    /// (a pipe, a file): values are printed whole.
    pub width: Option<usize>,
}

/// The least a cut value keeps, however narrow the terminal.
const MIN_VALUE_WIDTH: usize = 20;

impl Style {
    fn path(&self, file: &str) -> String {
        match &self.base {
            Some(b) => match Path::new(file).strip_prefix(b) {
                Ok(rel) if !rel.as_os_str().is_empty() => rel.display().to_string(),
                _ => file.to_string(),
            },
            None => file.to_string(),
        }
    }

    fn paint(&self, code: &str, text: &str) -> String {
        if self.color && !code.is_empty() {
            format!("\x1b[{code}m{text}\x1b[0m")
        } else {
            text.to_string()
        }
    }

    /// A file (and place in it) as the terminal shows it.
    fn location(&self, file: &str, pos: Option<hiera_formats::position::Pos>) -> String {
        let file = shown(&self.path(file));
        match pos {
            Some(p) => format!("{file}:{}:{}", p.line, p.column),
            None => file,
        }
    }
}

fn role_color(role: Role) -> &'static str {
    match role {
        Role::Wins => "1;32",
        Role::Contributes => "32",
        Role::Shadowed => "2",
        Role::KnockedOut => "31",
        Role::NotReached => "33",
    }
}

/// Text from the tree (a key, a file or node name, a level, an error, a written value) as a
/// terminal may show it: no escape sequence or line break of the data reaches it.
fn shown(s: &str) -> String {
    hiera_value::escape::printable(s)
}

/// A value on one line, as `--explain` prints values (Ruby's inspect).
fn short(v: &Value) -> String {
    hiera_value::text::inspect(v).replace('\n', "\\n")
}

/// `s` cut to `width` characters (the last one `…`).
fn cut(s: &str, width: usize) -> String {
    if s.chars().count() > width {
        let kept: String = s.chars().take(width.saturating_sub(1)).collect();
        format!("{kept}…")
    } else {
        s.to_string()
    }
}

fn source_name(s: &MergeSource) -> &'static str {
    match s {
        MergeSource::Given => "--merge",
        MergeSource::LookupOptions => "lookup_options",
        MergeSource::Default => "default",
    }
}

/// Pads each column to its widest cell (the last column is not padded).
fn table(rows: &[Vec<(String, &'static str)>], style: &Style, indent: &str) -> String {
    let cols = rows.iter().map(Vec::len).max().unwrap_or(0);
    let mut widths = vec![0; cols];
    for r in rows {
        for (i, (c, _)) in r.iter().enumerate() {
            widths[i] = widths[i].max(c.chars().count());
        }
    }
    let mut out = String::new();
    for r in rows {
        let mut line = String::from(indent);
        let mut used = indent.chars().count();
        for (i, (c, color)) in r.iter().enumerate() {
            let last = i + 1 == r.len();
            let pad = if last {
                0
            } else {
                widths[i] - c.chars().count() + 2
            };
            // The last column gets what the terminal has left.
            let c = match style.width {
                Some(w) if last => cut(c, w.saturating_sub(used).max(MIN_VALUE_WIDTH)),
                _ => c.clone(),
            };
            line.push_str(&style.paint(color, &c));
            line.push_str(&" ".repeat(pad));
            used += c.chars().count() + pad;
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

fn merge_line(r: &Report, style: &Style) -> String {
    let mut m = format!("merge: {}", r.strategy);
    if let Some(o) = &r.strategy_options {
        m.push_str(&format!(" {}", hiera_value::text::inspect(o)));
    }
    m.push_str(&format!(" (from {}", source_name(&r.source)));
    if r.source == MergeSource::LookupOptions {
        if let Some(o) = r.option_entries.iter().find(|o| o.applies) {
            m.push_str(&format!(", {}", style.location(&o.file, o.pos)));
        }
    }
    m.push(')');
    m
}

/// The text report of one node.
pub fn text(r: &Report, style: &Style) -> String {
    let mut out = String::new();
    let node = r
        .node
        .as_ref()
        .map(|n| format!(" for {}", shown(n)))
        .unwrap_or_default();
    let key = shown(&r.key);
    let answer = match &r.answer {
        Answer::Found(v) => {
            let head = format!("{key}{node}: found ").chars().count();
            let value = match style.width {
                Some(w) => cut(&short(v), w.saturating_sub(head).max(MIN_VALUE_WIDTH)),
                None => short(v),
            };
            style.paint("1", &format!("found {value}"))
        }
        Answer::NotFound => style.paint("31", "not found"),
        Answer::Error(e) => style.paint("31", &format!("error: {}", shown(e))),
    };
    out.push_str(&format!("{key}{node}: {answer}\n"));
    out.push_str(&format!(
        "{}; {} location{} searched\n",
        merge_line(r, style),
        r.locations,
        if r.locations == 1 { "" } else { "s" }
    ));
    if r.definitions.is_empty() {
        out.push_str("no definitions\n");
    } else {
        let mut rows = vec![header(&[
            "#", "ROLE", "LAYER", "LEVEL", "LOCATION", "KEY", "VALUE",
        ])];
        for d in &r.definitions {
            rows.push(definition_row(d, style));
            let written = d.written.as_ref().map(|w| format!("written {w}"));
            let notes: Vec<String> = d
                .note
                .iter()
                .chain(written.iter())
                .map(|n| shown(n))
                .collect();
            if !notes.is_empty() {
                rows.push(vec![
                    (String::new(), ""),
                    (String::new(), ""),
                    (String::new(), ""),
                    (String::new(), ""),
                    (format!("  ({})", notes.join("; ")), ""),
                ]);
            }
        }
        out.push_str(&table(&rows, style, ""));
    }
    out.push_str(&options_text(&r.option_entries, style));
    out
}

fn header(cells: &[&str]) -> Vec<(String, &'static str)> {
    cells.iter().map(|c| (c.to_string(), "1")).collect()
}

fn definition_row(d: &Definition, style: &Style) -> Vec<(String, &'static str)> {
    let mut location = style.location(&d.file, d.pos);
    if let Some(a) = d.anchor {
        location.push_str(&format!(" (alias of {}:{})", a.line, a.column));
    }
    let mut level = d.level.as_deref().map_or_else(|| "-".into(), shown);
    if d.default_hierarchy {
        level.push_str(" (default_hierarchy)");
    }
    vec![
        (
            d.order.map_or_else(|| "-".to_string(), |o| o.to_string()),
            "",
        ),
        (d.role.name().to_string(), role_color(d.role)),
        (d.layer.to_string(), ""),
        (level, ""),
        (location, "36"),
        (shown(&d.path), ""),
        (short(&d.value), ""),
    ]
}

fn options_text(entries: &[OptionEntry], style: &Style) -> String {
    if entries.is_empty() {
        return String::new();
    }
    let mut rows = vec![header(&[
        "lookup_options",
        "LAYER",
        "LOCATION",
        "NAME",
        "VALUE",
    ])];
    for o in entries {
        let state = if o.applies { "applies" } else { "overridden" };
        rows.push(vec![
            (state.into(), if o.applies { "32" } else { "2" }),
            (o.layer.to_string(), ""),
            (style.location(&o.file, o.pos), "36"),
            (shown(&o.name), ""),
            (short(&o.value), ""),
        ]);
    }
    table(&rows, style, "")
}

/// Node names, at most `n` of them.
fn names(list: &[String], n: usize) -> String {
    let mut s = list
        .iter()
        .take(n)
        .map(|n| shown(n))
        .collect::<Vec<_>>()
        .join(", ");
    if list.len() > n {
        s.push_str(&format!(", +{} more", list.len() - n));
    }
    s
}

/// The text report of a fleet.
pub fn fleet_text(f: &FleetReport, style: &Style) -> String {
    let mut out = format!(
        "{} over {} node{}: found for {}, not found for {}, errors for {}\n",
        shown(&f.key),
        f.nodes.len(),
        if f.nodes.len() == 1 { "" } else { "s" },
        f.nodes.len() - f.not_found.len() - f.errors.len(),
        f.not_found.len(),
        f.errors.len()
    );
    let mut rows = vec![header(&["NODES", "LAYER", "LOCATION", "KEY", "VALUE"])];
    let mut details = Vec::new();
    for d in &f.definitions {
        let mut parts = Vec::new();
        for (list, what) in [
            (&d.wins, "wins"),
            (&d.contributes, "contributes"),
            (&d.shadowed, "shadowed"),
            (&d.knocked_out, "knocked out"),
        ] {
            if !list.is_empty() {
                parts.push(format!("{what} {}", list.len()));
            }
        }
        let (summary, color) = if d.reached_by == 0 {
            ("no node reaches this".to_string(), "33")
        } else if d.wins.is_empty() && d.contributes.is_empty() {
            (parts.join(", "), "2")
        } else {
            (parts.join(", "), "32")
        };
        let def = &d.definition;
        rows.push(vec![
            (summary, color),
            (def.layer.to_string(), ""),
            (style.location(&def.file, def.pos), "36"),
            (shown(&def.path), ""),
            (short(&def.value), ""),
        ]);
        let who = if !d.wins.is_empty() {
            &d.wins
        } else {
            &d.contributes
        };
        if !who.is_empty() {
            details.push(format!(
                "  {}: {}",
                style.location(&def.file, def.pos),
                names(who, 8)
            ));
        }
    }
    out.push_str(&table(&rows, style, ""));
    if !details.is_empty() {
        out.push_str("nodes:\n");
        for d in details {
            out.push_str(&d);
            out.push('\n');
        }
    }
    for (n, e) in &f.errors {
        out.push_str(&style.paint("31", &format!("error for {}: {}", shown(n), shown(e))));
        out.push('\n');
    }
    out.push_str(&options_text(&f.option_entries, style));
    out
}

fn obj(pairs: Vec<(&str, Value)>) -> Value {
    let mut m = Map::default();
    for (k, v) in pairs {
        m.insert(Value::str(k), v);
    }
    Value::Hash(m)
}

fn opt_str(s: &Option<String>) -> Value {
    s.as_ref().map_or(Value::Null, |s| Value::str(s.as_str()))
}

fn pos_value(p: Option<hiera_formats::position::Pos>) -> (Value, Value) {
    match p {
        Some(p) => (Value::Int(p.line as i64), Value::Int(p.column as i64)),
        None => (Value::Null, Value::Null),
    }
}

fn definition_value(d: &Definition) -> Value {
    let (line, column) = pos_value(d.pos);
    let anchor = d.anchor.map_or(Value::Null, |a| {
        obj(vec![
            ("line", Value::Int(a.line as i64)),
            ("column", Value::Int(a.column as i64)),
        ])
    });
    obj(vec![
        ("role", Value::str(d.role.name())),
        ("layer", Value::str(d.layer.to_string())),
        ("level", opt_str(&d.level)),
        ("default_hierarchy", Value::Bool(d.default_hierarchy)),
        (
            "order",
            d.order.map_or(Value::Null, |o| Value::Int(o as i64)),
        ),
        ("file", Value::str(d.file.as_str())),
        ("line", line),
        ("column", column),
        ("alias_of", anchor),
        ("key", Value::str(d.path.as_str())),
        ("complete", Value::Bool(d.complete)),
        ("value", d.value.clone()),
        ("written", opt_str(&d.written)),
        ("note", opt_str(&d.note)),
    ])
}

fn option_value(o: &OptionEntry) -> Value {
    let (line, column) = pos_value(o.pos);
    obj(vec![
        ("name", Value::str(o.name.as_str())),
        ("applies", Value::Bool(o.applies)),
        ("layer", Value::str(o.layer.to_string())),
        ("file", Value::str(o.file.as_str())),
        ("line", line),
        ("column", column),
        ("value", o.value.clone()),
    ])
}

fn strings(list: &[String]) -> Value {
    Value::Array(list.iter().map(|s| Value::str(s.as_str())).collect())
}

/// The JSON report of one node (one line).
pub fn json(r: &Report) -> Result<String, hiera_formats::render::RenderError> {
    let (found, value, error) = match &r.answer {
        Answer::Found(v) => (true, v.clone(), Value::Null),
        Answer::NotFound => (false, Value::Null, Value::Null),
        Answer::Error(e) => (false, Value::Null, Value::str(e.as_str())),
    };
    let v = obj(vec![
        ("key", Value::str(r.key.as_str())),
        ("node", opt_str(&r.node)),
        ("found", Value::Bool(found)),
        ("value", value),
        ("error", error),
        (
            "merge",
            obj(vec![
                ("strategy", Value::str(r.strategy.as_str())),
                ("options", r.strategy_options.clone().unwrap_or(Value::Null)),
                ("source", Value::str(source_name(&r.source))),
            ]),
        ),
        ("lookup_options", r.options.clone().unwrap_or(Value::Null)),
        ("locations_searched", Value::Int(r.locations as i64)),
        (
            "definitions",
            Value::Array(r.definitions.iter().map(definition_value).collect()),
        ),
        (
            "lookup_options_entries",
            Value::Array(r.option_entries.iter().map(option_value).collect()),
        ),
        ("warnings", strings(&r.warnings)),
    ]);
    hiera_formats::render::to_json(&v)
}

/// The JSON report of a fleet (one line).
pub fn fleet_json(f: &FleetReport) -> Result<String, hiera_formats::render::RenderError> {
    let defs = f
        .definitions
        .iter()
        .map(|d| {
            let Value::Hash(mut m) = definition_value(&d.definition) else {
                unreachable!("definition_value is a hash")
            };
            // Per node, the role is in the lists below.
            m.shift_remove(&Value::str("role"));
            m.shift_remove(&Value::str("order"));
            m.insert(Value::str("reached_by"), Value::Int(d.reached_by as i64));
            m.insert(Value::str("wins"), strings(&d.wins));
            m.insert(Value::str("contributes"), strings(&d.contributes));
            m.insert(Value::str("shadowed"), strings(&d.shadowed));
            m.insert(Value::str("knocked_out"), strings(&d.knocked_out));
            Value::Hash(m)
        })
        .collect();
    let v = obj(vec![
        ("key", Value::str(f.key.as_str())),
        ("nodes", strings(&f.nodes)),
        ("not_found", strings(&f.not_found)),
        (
            "errors",
            Value::Array(
                f.errors
                    .iter()
                    .map(|(n, e)| {
                        obj(vec![
                            ("node", Value::str(n.as_str())),
                            ("error", Value::str(e.as_str())),
                        ])
                    })
                    .collect(),
            ),
        ),
        ("definitions", Value::Array(defs)),
        (
            "lookup_options_entries",
            Value::Array(f.option_entries.iter().map(option_value).collect()),
        ),
        ("warnings", strings(&f.warnings)),
    ]);
    hiera_formats::render::to_json(&v)
}
