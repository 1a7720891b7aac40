//! What is at a place in a document: a key of a data file, an interpolation, a path of a
//! hiera.yaml, a parameter of a manifest. Positions here are 0-based lines and byte offsets
//! in the line; the server converts them from and to the client's units.

use crate::text::Doc;
use hiera_engine::config::WrittenSetting;
use hiera_engine::interpolation::{parse_expr, tokens_at, Method, Token};
use hiera_formats::lines::LineIndex;
use hiera_formats::position::{positions_of, DataFormat, Pos, PosKind};
use hiera_value::value::Value;
use std::path::Path;

/// What kind of file a document is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileKind {
    /// A hiera.yaml.
    HieraYaml,
    /// A data file (YAML, eyaml, JSON, HOCON).
    Data(DataFormat),
    /// A Puppet manifest.
    Manifest,
    /// Anything else.
    Other,
}

/// The kind of the file at `path`.
pub fn kind_of(path: &Path) -> FileKind {
    match path.file_name().and_then(|n| n.to_str()) {
        Some("hiera.yaml") => FileKind::HieraYaml,
        Some(n) if n.ends_with(".pp") => FileKind::Manifest,
        _ => match DataFormat::of_path(path) {
            Some(f) => FileKind::Data(f),
            None => FileKind::Other,
        },
    }
}

/// A span of one line: (0-based line, start byte, end byte).
pub type Span = (usize, usize, usize);

/// A top-level key of a data file.
#[derive(Debug, Clone, PartialEq)]
pub struct KeyAt {
    /// The key.
    pub key: String,
    /// Where its text is.
    pub span: Span,
}

/// What the cursor is on.
#[derive(Debug, Clone, PartialEq)]
pub enum Target {
    /// A top-level key of a data file (or somewhere in its value).
    Key {
        /// The key, where it is written.
        key: KeyAt,
        /// The cursor is on the key itself (not in its value).
        on_key: bool,
    },
    /// An entry of `lookup_options` (its name: a key or a `^pattern`).
    OptionName(KeyAt),
    /// A `%{…}` interpolation, and the key it looks up when it is `lookup`/`alias`/`hiera`.
    Interpolation {
        /// The whole `%{…}`.
        text: String,
        /// Where.
        span: Span,
        /// The key of `%{lookup('k')}`, `%{alias('k')}`, `%{hiera('k')}`.
        key: Option<String>,
    },
    /// A location of a hiera.yaml level (`path`, `paths`, `glob`, `globs`, `datadir`).
    HieraPath {
        /// The template as written.
        template: String,
        /// Which setting.
        setting: String,
        /// What the configuration makes of it: the absolute template (under the level's
        /// datadir), not interpolated.
        absolute: String,
        /// Where.
        span: Span,
    },
    /// A `$variable` of a manifest.
    Variable {
        /// Its name without `$`.
        name: String,
        /// Where.
        span: Span,
    },
    /// A key string inside `lookup('k')` (a manifest).
    LookupString {
        /// The key.
        key: String,
        /// Where (quotes excluded).
        span: Span,
    },
}

/// The top-level keys of a data file's text with where they are written (by the file's own
/// reader's positions; for YAML that does not parse, by the text's unindented `key:` lines).
pub fn top_keys(format: DataFormat, text: &str) -> Vec<KeyAt> {
    let mut out = Vec::new();
    let lines = LineIndex::new(text);
    match positions_of(format, text.as_bytes()) {
        Ok(Some(tree)) => {
            if let PosKind::Map(entries) = &tree.target().kind {
                for e in entries {
                    let Some(k) = key_text(&e.key) else { continue };
                    if e.merged_from.is_some() {
                        continue;
                    }
                    out.push(key_at(&lines, k, e.key_pos, e.key_end));
                }
            }
        }
        Ok(None) => {}
        Err(_) if format == DataFormat::Yaml => {
            for (i, line) in text.lines().enumerate() {
                if let Some(k) = plain_top_key(line) {
                    out.push(key_at(
                        &lines,
                        k,
                        Pos {
                            line: i + 1,
                            column: 1,
                        },
                        None,
                    ));
                }
            }
        }
        Err(_) => {}
    }
    out
}

/// The entries under `lookup_options` (name and place).
pub fn option_names(format: DataFormat, text: &str) -> Vec<KeyAt> {
    let Ok(Some(tree)) = positions_of(format, text.as_bytes()) else {
        return Vec::new();
    };
    let Some(e) = tree.entry(&Value::str("lookup_options")) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let lines = LineIndex::new(text);
    if let PosKind::Map(entries) = &e.value.target().kind {
        for e in entries {
            if let Some(k) = key_text(&e.key) {
                out.push(key_at(&lines, k, e.key_pos, e.key_end));
            }
        }
    }
    out
}

fn key_text(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        _ => None,
    }
}

/// An unindented `key:` of a YAML line (not a comment, directive or document marker).
fn plain_top_key(line: &str) -> Option<String> {
    let first = line.chars().next()?;
    if first.is_whitespace() || matches!(first, '#' | '-' | '%' | '.' | '{' | '[' | '?') {
        return None;
    }
    let (k, _) = split_key(line)?;
    let k = k.trim();
    Some(
        k.strip_prefix('"')
            .and_then(|k| k.strip_suffix('"'))
            .or_else(|| k.strip_prefix('\'').and_then(|k| k.strip_suffix('\'')))
            .unwrap_or(k)
            .to_string(),
    )
}

/// The key part of a `key: value` line and the byte where the value starts.
fn split_key(line: &str) -> Option<(&str, usize)> {
    let b = line.as_bytes();
    let mut i = 0;
    if matches!(b.first(), Some(b'"') | Some(b'\'')) {
        let q = b[0];
        i = 1;
        while i < b.len() && b[i] != q {
            i += if b[i] == b'\\' && q == b'"' { 2 } else { 1 };
        }
        i += 1;
    }
    while i < b.len() {
        if b[i] == b':' && (i + 1 == b.len() || b[i + 1] == b' ' || b[i + 1] == b'\t') {
            return Some((&line[..i], i + 1));
        }
        if b[i] == b'#' && i > 0 && b[i - 1] == b' ' {
            return None;
        }
        i += 1;
    }
    None
}

/// A key with the span of its text on its line: from where the reader places it to where it
/// ends (`end`, when the reader knows it; else the key's text is read on the line: a quoted
/// key to its closing quote, a plain one to its `:`). `lines`: the text's, indexed once for
/// all its keys.
fn key_at(lines: &LineIndex<&str>, key: String, start: Pos, end: Option<Pos>) -> KeyAt {
    let line = start.line.max(1);
    let line_start = lines.line_start(line).unwrap_or(0);
    let from = lines.offset(Pos { line, ..start }) - line_start;
    let to = match end {
        Some(end) if end.line == line => lines.offset(end) - line_start,
        _ => {
            let rest = &lines.line(line)[from..];
            from + match rest.chars().next() {
                Some(q @ ('"' | '\'')) => rest[1..].find(q).map_or(rest.len(), |e| e + 2),
                _ => split_key(rest).map_or(rest.len(), |(k, _)| k.trim_end().len()),
            }
        }
    };
    KeyAt {
        key,
        span: (line - 1, from, to.max(from)),
    }
}

/// What is at byte `byte` of line `line` of `doc`.
pub fn target_at(doc: &Doc, kind: FileKind, line: usize, byte: usize) -> Option<Target> {
    let text = doc.line(line);
    if let Some(t) = interpolation_at(text, line, byte) {
        return Some(t);
    }
    match kind {
        FileKind::Data(format) => {
            let names = option_names(format, doc.text());
            if let Some(o) = names.iter().find(|k| within(k.span, line, byte)) {
                return Some(Target::OptionName(o.clone()));
            }
            let keys = top_keys(format, doc.text());
            if let Some(k) = keys.iter().find(|k| within(k.span, line, byte)) {
                return Some(Target::Key {
                    key: k.clone(),
                    on_key: true,
                });
            }
            // In a value: the last key written above.
            keys.iter()
                .filter(|k| k.span.0 <= line)
                .max_by_key(|k| k.span.0)
                .filter(|k| k.key != "lookup_options")
                .map(|k| Target::Key {
                    key: k.clone(),
                    on_key: false,
                })
        }
        // Its settings need the configuration: [`hiera_setting_at`].
        FileKind::HieraYaml => None,
        FileKind::Manifest => manifest_at(text, line, byte),
        FileKind::Other => None,
    }
}

fn within(span: Span, line: usize, byte: usize) -> bool {
    span.0 == line && span.1 <= byte && byte <= span.2
}

/// The `%{…}` around `byte`, as the engine's tokenizer finds them.
fn interpolation_at(text: &str, line: usize, byte: usize) -> Option<Target> {
    tokens_at(text).find_map(|(range, token)| {
        let key = match token {
            Token::Text(_) => return None,
            Token::Empty => None,
            Token::Expr { expr, .. } => key_of_expr(expr),
        };
        range.contains(&byte).then(|| Target::Interpolation {
            text: text[range.clone()].to_string(),
            span: (line, range.start, range.end),
            key,
        })
    })
}

/// The key an interpolation's expression looks up: `lookup('k')`, `alias("k")`,
/// `hiera('k')` as the engine parses them.
pub fn key_of_expr(expr: &str) -> Option<String> {
    match parse_expr(expr) {
        (Method::Lookup | Method::Alias | Method::Hiera, key, _) => Some(key.to_string()),
        _ => None,
    }
}

/// The datadir or location setting of a hiera.yaml at `byte` of `line`, among `settings`:
/// where the engine's configuration says the file writes them
/// ([`HieraConfig::written_settings`](hiera_engine::config::HieraConfig::written_settings)).
pub fn hiera_setting_at(
    doc: &Doc,
    settings: &[WrittenSetting],
    line: usize,
    byte: usize,
) -> Option<Target> {
    settings.iter().find_map(|w| {
        let (l, start) = doc.line_byte_of(w.start);
        let end = match w.end {
            Some(e) if e.line == w.start.line => doc.line_byte_of(e).1,
            _ => doc.line(l).len(),
        };
        (l == line && start <= byte && byte <= end).then(|| Target::HieraPath {
            template: w.template.clone(),
            setting: w.setting.to_string(),
            absolute: w.absolute.clone(),
            span: (l, start, end),
        })
    })
}

/// A `$variable` or the key string of a lookup call, in a manifest line.
fn manifest_at(text: &str, line: usize, byte: usize) -> Option<Target> {
    let b = text.as_bytes();
    // A quoted string around the cursor, the argument of a lookup function.
    if let Some(open) = text[..byte.min(text.len())].rfind(['\'', '"']) {
        let q = b[open] as char;
        if let Some(close) = text[open + 1..].find(q).map(|c| open + 1 + c) {
            if byte > open && byte <= close {
                let before = text[..open].trim_end();
                let before = before.strip_suffix('(').unwrap_or("").trim_end();
                let f: String = before
                    .chars()
                    .rev()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect::<Vec<_>>()
                    .into_iter()
                    .rev()
                    .collect();
                if matches!(
                    f.as_str(),
                    "lookup" | "hiera" | "hiera_array" | "hiera_hash" | "hiera_include"
                ) {
                    return Some(Target::LookupString {
                        key: text[open + 1..close].to_string(),
                        span: (line, open + 1, close),
                    });
                }
            }
        }
    }
    let word = |c: u8| c.is_ascii_alphanumeric() || c == b'_' || c == b':';
    let mut s = byte.min(b.len());
    while s > 0 && word(b[s - 1]) {
        s -= 1;
    }
    if s > 0 && b[s - 1] == b'$' {
        s -= 1;
    } else if !(s < b.len() && b[s] == b'$') {
        return None;
    }
    let mut e = s + 1;
    while e < b.len() && word(b[e]) {
        e += 1;
    }
    let name = text[s + 1..e].trim_start_matches("::").to_string();
    (!name.is_empty()).then_some(Target::Variable {
        name,
        span: (line, s, e),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(text: &str) -> Doc {
        Doc::new(
            "file:///x.yaml".parse().unwrap(),
            "/x.yaml".into(),
            1,
            text.into(),
        )
    }

    #[test]
    fn keys_values_and_interpolations() {
        let d = doc("---\nntp::servers:\n  - a\n\"x::y\": \"%{lookup('ntp::servers')} é\"\nlookup_options:\n  ntp::servers:\n    merge: unique\n");
        let k = FileKind::Data(DataFormat::Yaml);
        let t = target_at(&d, k, 1, 3).unwrap();
        assert_eq!(
            t,
            Target::Key {
                key: KeyAt {
                    key: "ntp::servers".into(),
                    span: (1, 0, 12)
                },
                on_key: true
            }
        );
        assert!(matches!(
            target_at(&d, k, 2, 4),
            Some(Target::Key { on_key: false, .. })
        ));
        assert!(matches!(
            target_at(&d, k, 3, 14),
            Some(Target::Interpolation { key: Some(ref key), .. }) if key == "ntp::servers"
        ));
        assert!(matches!(
            target_at(&d, k, 3, 2),
            Some(Target::Key { ref key, .. }) if key.key == "x::y" && key.span == (3, 0, 6)
        ));
        assert!(
            matches!(target_at(&d, k, 5, 4), Some(Target::OptionName(ref o)) if o.key == "ntp::servers")
        );
        // Past the end of a line or of the document: nothing, no panic.
        let _ = target_at(&d, k, 99, 999);
        let _ = target_at(&d, k, 3, 999);
    }

    #[test]
    fn broken_yaml_still_lists_keys() {
        let keys = top_keys(DataFormat::Yaml, "a: 1\nb: [\n'c d': 2\n");
        let names: Vec<_> = keys.iter().map(|k| k.key.as_str()).collect();
        assert_eq!(names, ["a", "b", "c d"]);
    }

    #[test]
    fn hiera_paths() {
        let d = doc(
            "version: 5\nhierarchy:\n  - name: n\n    path: \"nodes/%{trusted.certname}.yaml\"\n",
        );
        assert!(matches!(
            target_at(&d, FileKind::HieraYaml, 3, 20),
            Some(Target::Interpolation { .. })
        ));
        let p = |line, column| Pos { line, column };
        let settings = [WrittenSetting {
            setting: "path",
            template: "nodes/%{trusted.certname}.yaml".into(),
            start: p(4, 11),
            end: Some(p(4, 43)),
            absolute: "/r/data/nodes/%{trusted.certname}.yaml".into(),
        }];
        let at = |line, byte| hiera_setting_at(&d, &settings, line, byte);
        assert!(matches!(at(3, 11),
            Some(Target::HieraPath { ref absolute, span: (3, 10, 42), .. }) if absolute.starts_with("/r/data/")));
        assert_eq!(at(3, 9), None);
        assert_eq!(at(2, 11), None);
        assert_eq!(at(3, 43), None);
    }

    #[test]
    fn manifests() {
        let line = "  Array[String] $servers = lookup('ntp::pool'),";
        assert!(matches!(manifest_at(line, 0, 18),
            Some(Target::Variable { ref name, span: (0, 16, 24) }) if name == "servers"));
        assert!(matches!(manifest_at(line, 0, 38),
            Some(Target::LookupString { ref key, .. }) if key == "ntp::pool"));
        assert_eq!(manifest_at(line, 0, 4), None);
    }
}
