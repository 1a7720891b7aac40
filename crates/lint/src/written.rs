//! What a YAML file says as written, where the loaded value cannot tell: the keys of each
//! block mapping as they are written (a key written twice, which Psych silently collapses; the
//! top-level keys a byte-order mark makes Psych lose), whether each is quoted, and the plain
//! scalars as written (`no`, `0755`, `1:30`, which YAML 1.1 reads as something else).
//!
//! Where a *loaded* key or value is written is the readers' business
//! ([`hiera_formats::position`], through [`DataFile::path_pos`](super::repo::DataFile::path_pos)):
//! this is a small line scanner over block-style YAML, run only on files that
//! [`hiera_formats::yaml`] has already parsed, for the three rules above. It never decides
//! what a file means. Flow collections (`{a: 1}`, `[x, y]`) are not looked into.

/// A `key:` in a block mapping.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct KeyPos {
    /// The keys (and `-` items, as `#LINE`) of the mappings this one is in.
    pub parents: Vec<String>,
    /// The key as written, unquoted.
    pub key: String,
    /// Whether the key was quoted (a quoted key is always a string).
    pub quoted: bool,
    pub line: usize,
    pub column: usize,
    /// How many characters the key is written in (its quotes included).
    pub len: usize,
}

impl KeyPos {
    /// Where the key is written.
    pub(crate) fn region(&self) -> super::Region {
        let start = super::Pos {
            line: self.line,
            column: self.column,
        };
        super::Region::on_line(start, self.len)
    }
}

/// A plain (unquoted) scalar written on one line, as a mapping value or a sequence item.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct PlainPos {
    pub text: String,
    pub line: usize,
    pub column: usize,
}

impl PlainPos {
    /// Where the scalar is written.
    pub(crate) fn region(&self) -> super::Region {
        let start = super::Pos {
            line: self.line,
            column: self.column,
        };
        super::Region::on_line(start, self.text.chars().count())
    }
}

/// What the scanner found in one file.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Scan {
    pub keys: Vec<KeyPos>,
    pub plains: Vec<PlainPos>,
}

/// 1-based line and column of the first `needle` at or after line `from` (1-based), else of
/// the first anywhere.
pub(crate) fn find_text(text: &str, needle: &str, from: usize) -> Option<(usize, usize)> {
    let lines = hiera_formats::lines::LineIndex::new(text);
    let start = lines.line_start(from.max(1)).unwrap_or(text.len());
    let at = text[start..]
        .find(needle)
        .map(|i| start + i)
        .or_else(|| text.find(needle))?;
    let p = lines.pos(at);
    Some((p.line, p.column))
}

/// Scans block-style YAML.
pub(crate) fn scan(text: &str) -> Scan {
    let mut out = Scan::default();
    // (indent, key) of the open mappings, innermost last.
    let mut stack: Vec<(usize, String)> = Vec::new();
    // Inside a block scalar (`|`, `>`): lines indented more than this are its content.
    let mut block: Option<usize> = None;
    // Inside a quoted scalar that spans lines: its quote character.
    let mut open_quote: Option<char> = None;
    for (i, raw) in text.lines().enumerate() {
        let lineno = i + 1;
        let line = raw.strip_prefix('\u{feff}').unwrap_or(raw);
        let indent = line.len() - line.trim_start_matches([' ', '\t']).len();
        let body = &line[indent..];
        if let Some(q) = open_quote {
            if closes_quote(body, q) {
                open_quote = None;
            }
            continue;
        }
        if let Some(b) = block {
            if body.is_empty() || indent > b {
                continue;
            }
            block = None;
        }
        if body.is_empty()
            || body.starts_with('#')
            || body.starts_with("---")
            || body.starts_with("...")
            || body.starts_with('%')
        {
            continue;
        }
        // `- ` items, possibly nested (`- - x`).
        let mut col = indent;
        let mut rest = body;
        while rest == "-" || rest.starts_with("- ") {
            while stack.last().is_some_and(|(d, _)| *d >= col) {
                stack.pop();
            }
            stack.push((col, format!("#{lineno}")));
            let after = rest[1..].trim_start_matches(' ');
            col += rest.len() - after.len();
            rest = after;
        }
        if rest.is_empty() {
            continue;
        }
        let item_value = col != indent;
        match split_key(rest) {
            Some((key, quoted, len, value)) => {
                while stack.last().is_some_and(|(d, _)| *d >= col) {
                    stack.pop();
                }
                out.keys.push(KeyPos {
                    parents: stack.iter().map(|(_, k)| k.clone()).collect(),
                    key: key.clone(),
                    quoted,
                    line: lineno,
                    column: col + 1,
                    len,
                });
                stack.push((col, key));
                // In characters, as every column (the key before it may not be ASCII).
                let vcol = line[..col + (rest.len() - value.len())].chars().count();
                match value_kind(value) {
                    Kind::Block => block = Some(col),
                    Kind::OpenQuote(q) => open_quote = Some(q),
                    Kind::Plain(p) => out.plains.push(PlainPos {
                        text: p.to_string(),
                        line: lineno,
                        column: vcol + 1,
                    }),
                    Kind::Other => {}
                }
            }
            None if item_value => match value_kind(rest) {
                Kind::Block => block = Some(indent),
                Kind::OpenQuote(q) => open_quote = Some(q),
                Kind::Plain(p) => out.plains.push(PlainPos {
                    text: p.to_string(),
                    line: lineno,
                    column: col + 1,
                }),
                Kind::Other => {}
            },
            None => {}
        }
    }
    out
}

enum Kind<'a> {
    Block,
    OpenQuote(char),
    Plain(&'a str),
    Other,
}

/// What a value written after `key: ` (or `- `) is.
fn value_kind(value: &str) -> Kind<'_> {
    let v = strip_comment(value).trim_end();
    if v.is_empty() {
        return Kind::Other;
    }
    let first = v.chars().next().unwrap_or(' ');
    match first {
        '|' | '>' => Kind::Block,
        '"' | '\'' => {
            if closes_quote(&v[1..], first) {
                Kind::Other
            } else {
                Kind::OpenQuote(first)
            }
        }
        '[' | '{' | '&' | '*' | '!' | '@' | '`' => Kind::Other,
        _ => Kind::Plain(v),
    }
}

/// Whether a quoted scalar whose opening quote is before `s` ends in `s`.
fn closes_quote(s: &str, q: char) -> bool {
    quote_end_from(s, 0, q).is_some()
}

/// `# comment` at the end of a plain value (a `#` after whitespace).
fn strip_comment(v: &str) -> &str {
    let b = v.as_bytes();
    for i in 0..b.len() {
        if b[i] == b'#' && (i == 0 || b[i - 1] == b' ' || b[i - 1] == b'\t') {
            return &v[..i];
        }
    }
    v
}

/// Splits `key: value` (key plain, single- or double-quoted) into the key, whether it was
/// quoted, how many characters it is written in, and the text after `:` and its spaces.
fn split_key(s: &str) -> Option<(String, bool, usize, &str)> {
    let first = s.chars().next()?;
    let (key, quoted, after) = if first == '"' || first == '\'' {
        let end = quoted_end(s, first)?;
        let inner = &s[1..end];
        let key = if first == '\'' {
            inner.replace("''", "'")
        } else {
            inner.replace("\\\"", "\"").replace("\\\\", "\\")
        };
        (key, true, s[end + 1..].trim_start_matches(' '))
    } else {
        if matches!(first, '[' | '{' | '#' | '&' | '*' | '!' | '|' | '>' | '?') {
            return None;
        }
        // A plain key ends at the first `: ` or `:` at the end of the line.
        let b = s.as_bytes();
        let mut end = None;
        for i in 0..b.len() {
            if b[i] == b'#' && i > 0 && b[i - 1] == b' ' {
                break;
            }
            if b[i] == b':' && (i + 1 == b.len() || b[i + 1] == b' ' || b[i + 1] == b'\t') {
                end = Some(i);
                break;
            }
        }
        let end = end?;
        (s[..end].trim_end().to_string(), false, &s[end..])
    };
    let rest = after.strip_prefix(':')?;
    if !(rest.is_empty() || rest.starts_with(' ') || rest.starts_with('\t')) {
        return None;
    }
    let written = s[..s.len() - after.len()].trim_end_matches([' ', '\t']);
    Some((
        key,
        quoted,
        written.chars().count(),
        rest.trim_start_matches([' ', '\t']),
    ))
}

/// The closing `q` of the quoted scalar `s` starts with.
fn quoted_end(s: &str, q: char) -> Option<usize> {
    quote_end_from(s, 1, q)
}

/// The index in `s` of the `q` that closes a quoted scalar, looking from `from`: a
/// double-quoted scalar's backslash escapes the next byte, a single-quoted one's `''` is a
/// quote inside it.
fn quote_end_from(s: &str, from: usize, q: char) -> Option<usize> {
    let b = s.as_bytes();
    let mut i = from;
    while i < b.len() {
        if q == '"' && b[i] == b'\\' {
            i += 2;
            continue;
        }
        if b[i] == q as u8 {
            if q == '\'' && b.get(i + 1) == Some(&b'\'') {
                i += 2;
                continue;
            }
            return Some(i);
        }
        i += 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(s: &Scan) -> Vec<(Vec<String>, String, usize, usize)> {
        s.keys
            .iter()
            .map(|k| (k.parents.clone(), k.key.clone(), k.line, k.column))
            .collect()
    }

    #[test]
    fn nested_keys_and_items() {
        let s = scan("---\na: 1\nb:\n  c: x # note\n  'd e': |\n    e: not a key\n  f:\n    - g: 1\n      h: 2\n    - g: 3\n\"q\": [1]\n");
        let k = keys(&s);
        assert_eq!(k[0], (vec![], "a".into(), 2, 1));
        assert_eq!(k[1], (vec![], "b".into(), 3, 1));
        assert_eq!(k[2], (vec!["b".into()], "c".into(), 4, 3));
        assert_eq!(k[3], (vec!["b".into()], "d e".into(), 5, 3));
        assert_eq!(k[4], (vec!["b".into()], "f".into(), 7, 3));
        assert_eq!(
            k[5],
            (vec!["b".into(), "f".into(), "#8".into()], "g".into(), 8, 7)
        );
        assert_eq!(
            k[6],
            (vec!["b".into(), "f".into(), "#8".into()], "h".into(), 9, 7)
        );
        assert_eq!(
            k[7],
            (
                vec!["b".into(), "f".into(), "#10".into()],
                "g".into(),
                10,
                7
            )
        );
        assert_eq!(k[8], (vec![], "q".into(), 11, 1));
        assert_eq!(k.len(), 9);
        let p: Vec<_> = s
            .plains
            .iter()
            .map(|p| (p.text.as_str(), p.line, p.column))
            .collect();
        assert_eq!(
            p,
            vec![
                ("1", 2, 4),
                ("x", 4, 6),
                ("1", 8, 10),
                ("2", 9, 10),
                ("3", 10, 10)
            ]
        );
    }

    #[test]
    fn multi_line_quotes_and_urls() {
        let s = scan("a: \"one\n  b: two\"\nc: http://x:80/\n- item: 1\nd:no\n");
        let k: Vec<_> = s.keys.iter().map(|k| k.key.as_str()).collect();
        assert_eq!(k, vec!["a", "c", "item"]);
        assert_eq!(s.plains[0].text, "http://x:80/");
    }

    #[test]
    fn regions_cover_what_is_written() {
        let s = scan("ntp::serverz: 1:30\n'a b' : no # c\n- x:y\n\"ü😀\": on\n");
        let r: Vec<_> = s
            .keys
            .iter()
            .map(|k| (k.region().start.column, k.region().end.column))
            .collect();
        assert_eq!(r, vec![(1, 13), (1, 6), (1, 5)]);
        let p: Vec<_> = s
            .plains
            .iter()
            .map(|p| {
                (
                    p.text.as_str(),
                    p.region().start.column,
                    p.region().end.column,
                )
            })
            .collect();
        assert_eq!(
            p,
            vec![("1:30", 15, 19), ("no", 9, 11), ("x:y", 3, 6), ("on", 7, 9)]
        );
    }

    #[test]
    fn text_search() {
        assert_eq!(find_text("a\nb x\nx", "x", 3), Some((3, 1)));
        assert_eq!(find_text("a\nb x\n", "x", 9), Some((2, 3)));
    }
}
