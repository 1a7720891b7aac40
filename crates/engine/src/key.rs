//! Dotted lookup keys (`a.b.0`, `a."x.y"`), split exactly as Puppet's `SubLookup#split_key`.

use hiera_value::value::Value;

/// One segment of a dotted key: a hash key or an array index.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Segment {
    /// A hash key.
    Key(String),
    /// An array index.
    Index(i64),
    /// An integer beyond 64 bits (a Ruby Bignum): its decimal digits. Indexes no array.
    BigIndex(String),
}

impl Segment {
    pub(crate) fn to_value(&self) -> Value {
        match self {
            Segment::Key(s) => Value::String(s.clone()),
            Segment::Index(i) => Value::Int(*i),
            Segment::BigIndex(d) => Value::BigInt(d.clone()),
        }
    }
}

impl std::fmt::Display for Segment {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Segment::Key(s) => f.write_str(s),
            Segment::Index(i) => write!(f, "{i}"),
            Segment::BigIndex(d) => f.write_str(d),
        }
    }
}

/// A key that Puppet's `split_key` rejects ("Syntax error").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SyntaxError;

/// A key that is one segment as written: no dot, no quote.
fn single_segment(key: &str) -> bool {
    !key.contains(['\'', '"', '.'])
}

/// Splits a key into its root and segments. The root is always a string; later segments
/// of the form `[+-]digits` are integers. `Err(SyntaxError)` means "Syntax error"; the caller adds
/// Puppet's context (`in key: '...'` or `in string: ...`).
pub fn split_key(key: &str) -> Result<Vec<Segment>, SyntaxError> {
    if single_segment(key) {
        return Ok(vec![Segment::Key(key.to_string())]);
    }
    // Ruby: key.split(/(\s*"[^"]+"\s*|\s*'[^']+'\s*|[^'".]+)/). The pieces must alternate
    // '' / segment / '.' / segment ...; we scan the same tokens directly.
    let b = key.as_bytes();
    let mut i = 0;
    let mut out = Vec::new();
    loop {
        // A segment token.
        let (tok, next) = match scan_segment(key, i) {
            Some(t) => t,
            None => return Err(SyntaxError),
        };
        out.push(tok);
        i = next;
        if i == b.len() {
            break;
        }
        if b[i] != b'.' {
            return Err(SyntaxError);
        }
        i += 1;
        if i == b.len() {
            return Err(SyntaxError);
        }
    }
    // Integer conversion applies to every segment, the root included, in split_key: an
    // Integer root fails both as a lookup key and as a scope variable name.
    Ok(out)
}

fn scan_segment(key: &str, start: usize) -> Option<(Segment, usize)> {
    let b = key.as_bytes();
    // Quoted alternatives first, as in the regexp: \s*"[^"]+"\s* | \s*'[^']+'\s*
    let mut j = start;
    while j < b.len() && is_space(b[j]) {
        j += 1;
    }
    if j < b.len() && (b[j] == b'"' || b[j] == b'\'') {
        let q = b[j];
        let inner_start = j + 1;
        let mut k = inner_start;
        while k < b.len() && b[k] != q {
            k += 1;
        }
        if k < b.len() && k > inner_start {
            let inner = &key[inner_start..k];
            let mut end = k + 1;
            while end < b.len() && is_space(b[end]) {
                end += 1;
            }
            return Some((Segment::Key(inner.to_string()), end));
        }
        // An unterminated or empty quote can still be matched by [^'".]+ from `start` only
        // if the leading whitespace is followed by something else: it is not, so fail.
        if j == start {
            return None;
        }
    }
    // [^'".]+
    let mut k = start;
    while k < b.len() && !matches!(b[k], b'\'' | b'"' | b'.') {
        k += 1;
    }
    if k == start {
        return None;
    }
    let text = key[start..k].trim_matches(|c: char| c.is_ascii_whitespace());
    Some((plain_segment(text), k))
}

fn is_space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n' | b'\r' | b'\x0c' | b'\x0b')
}

fn plain_segment(text: &str) -> Segment {
    // /^(:?[+-]?[0-9]+)$/ — the optional ':' is a Puppet typo that still matches ":12".
    let t = text.strip_prefix(':').unwrap_or(text);
    let digits = t.strip_prefix(['+', '-']).unwrap_or(t);
    if !digits.is_empty() && digits.bytes().all(|c| c.is_ascii_digit()) {
        // Ruby's to_i stops at the ':' and gives 0 for ":12".
        if text.starts_with(':') {
            return Segment::Index(0);
        }
        let neg = t.starts_with('-');
        return match hiera_value::value::integer_from_digits(neg, 10, digits) {
            Value::Int(n) => Segment::Index(n),
            Value::BigInt(d) => Segment::BigIndex(d),
            _ => Segment::Key(text.to_string()),
        };
    }
    Segment::Key(text.to_string())
}

/// A parsed lookup key: root key, optional module name and the segments to dig.
#[derive(Debug, Clone, PartialEq)]
pub struct LookupKey {
    /// Shared (as `module_name`): a lookup hands both to the invocation it starts.
    pub key: std::sync::Arc<str>,
    /// The first segment: the key the backends are asked for.
    pub root: String,
    /// The module the key belongs to (`ntp` of `ntp::servers`), if any.
    pub module_name: Option<std::sync::Arc<str>>,
    /// The dotted segments after the root, dug into the found value.
    pub segments: Vec<Segment>,
}

impl LookupKey {
    /// Parses a lookup key, dots and quotes as Puppet splits them.
    pub fn parse(key: &str) -> crate::error::Result<LookupKey> {
        let (root, segs) = if !single_segment(key) {
            let mut segs = split_key(key).map_err(|_| {
                crate::error::Error::lookup(format!("Syntax error in key: '{key}'"))
            })?;
            let root = match segs.remove(0) {
                Segment::Key(s) => s,
                // `root_key.index('::')` on the Integer split_key made of it.
                _ => {
                    return Err(crate::error::Error::run(
                        "undefined method `index' for an instance of Integer",
                    ))
                }
            };
            (root, segs)
        } else {
            // One segment (split_key's first case), without the list: every lookup parses
            // its key.
            (key.to_string(), Vec::new())
        };
        // Ruby's `root[0..i-1]`: for a leading `::` that is the whole key. (A byte scan:
        // every lookup parses its key.)
        let double_colon = root.as_bytes().windows(2).position(|w| w == b"::");
        let module_name =
            double_colon.map(|i| std::sync::Arc::from(if i == 0 { &root[..] } else { &root[..i] }));
        Ok(LookupKey {
            key: std::sync::Arc::from(key),
            root,
            module_name,
            segments: segs,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use Segment::*;

    fn k(s: &str) -> Segment {
        Key(s.to_string())
    }

    #[test]
    fn plain_keys_are_one_segment() {
        assert_eq!(split_key("ntp::servers"), Ok(vec![k("ntp::servers")]));
        assert_eq!(split_key(" a b "), Ok(vec![k(" a b ")]));
    }

    #[test]
    fn dotted_and_indexed() {
        assert_eq!(split_key("a.b.0"), Ok(vec![k("a"), k("b"), Index(0)]));
        assert_eq!(split_key("a.-1"), Ok(vec![k("a"), Index(-1)]));
        assert_eq!(split_key("a.+2"), Ok(vec![k("a"), Index(2)]));
        assert_eq!(split_key(" a . b "), Ok(vec![k("a"), k("b")]));
    }

    #[test]
    fn quoted_segments() {
        assert_eq!(split_key("a.\"x.y\""), Ok(vec![k("a"), k("x.y")]));
        assert_eq!(split_key("'a.b'"), Ok(vec![k("a.b")]));
        assert_eq!(
            split_key("\"f.one\".\"two.three\".1"),
            Ok(vec![k("f.one"), k("two.three"), Index(1)])
        );
        // Quoted digits stay strings.
        assert_eq!(split_key("a.'1'"), Ok(vec![k("a"), k("1")]));
        // Inner text is not stripped.
        assert_eq!(split_key("a.' x '"), Ok(vec![k("a"), k(" x ")]));
    }

    #[test]
    fn syntax_errors() {
        for bad in [
            "a.",
            ".a",
            "a..b",
            "''",
            "a.''",
            "the.'pa'key",
            "a.'b",
            "a\"b\"",
            ".",
        ] {
            assert_eq!(split_key(bad), Err(SyntaxError), "{bad}");
        }
    }

    #[test]
    fn module_name() {
        let lk = LookupKey::parse("mod::a.b").unwrap();
        assert_eq!(lk.root, "mod::a");
        assert_eq!(lk.module_name.as_deref(), Some("mod"));
        assert_eq!(lk.segments, vec![k("b")]);
        assert_eq!(
            LookupKey::parse("a.").unwrap_err().to_string(),
            "Syntax error in key: 'a.'"
        );
    }
}
