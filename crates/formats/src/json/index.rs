//! The structural pass over a JSON data file: the byte range of each top-level value, found
//! by a skipping parser that builds nothing, so that a lookup converts only the values it
//! asks for with [`crate::json::parse`].
//!
//! It accepts strict JSON (RFC 8259) whose root is an object with keys written without
//! escapes (a key written twice gets two entries, as in the YAML pass), nested at most `MAX_NESTING` deep, in valid UTF-8: for such a text the
//! json gem's grammar (src/json/mod.rs) gives the same structure and no error, and each value's
//! bytes parse on their own to the value they are in the file. Anything else (comments,
//! `NaN`, surrogate escapes, a number followed by something other than a delimiter, nesting
//! near the gem's limit, a root that is not an object …) returns `None`: the caller then
//! parses the whole file, which gives the exact value or error.

use crate::yaml::index::Index;

/// Deepest nesting followed (the gem refuses 101 levels; a value parsed on its own is one
/// level shallower than in its file, so this pass stays well below).
pub(crate) const MAX_NESTING: usize = 50;

/// The top-level entries of a JSON object text (each entry's range is its value's).
pub fn index(bytes: &[u8]) -> Option<Index> {
    if bytes.len() >= u32::MAX as usize || std::str::from_utf8(bytes).is_err() {
        return None;
    }
    let s = Skip { b: bytes };
    let mut i = s.ws(0);
    if bytes.get(i) != Some(&b'{') {
        return None;
    }
    let mut index = Index::default();
    i = s.ws(i + 1);
    if bytes.get(i) == Some(&b'}') {
        return None;
    }
    loop {
        if bytes.get(i) != Some(&b'"') {
            return None;
        }
        let key_start = i;
        let key_end = s.string(i)?;
        if bytes[i + 1..key_end - 1].contains(&b'\\') {
            return None;
        }
        i = s.ws(key_end);
        if bytes.get(i) != Some(&b':') {
            return None;
        }
        let start = s.ws(i + 1);
        let end = s.value(start, 1)?;
        index.add((key_start + 1, key_end - 1), start, end);
        i = s.ws(end);
        match bytes.get(i) {
            Some(b',') => i = s.ws(i + 1),
            Some(b'}') => break,
            _ => return None,
        }
    }
    (s.ws(i + 1) == bytes.len()).then_some(index)
}

struct Skip<'a> {
    b: &'a [u8],
}

impl Skip<'_> {
    fn ws(&self, mut i: usize) -> usize {
        while matches!(self.b.get(i), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            i += 1;
        }
        i
    }

    /// A value at `i`: the position after it (which is a delimiter or the end).
    fn value(&self, i: usize, depth: usize) -> Option<usize> {
        let b = self.b;
        let end = match *b.get(i)? {
            b'"' => self.string(i)?,
            b'{' | b'[' => {
                if depth >= MAX_NESTING {
                    return None;
                }
                let close = if b[i] == b'{' { b'}' } else { b']' };
                let mut j = self.ws(i + 1);
                if b.get(j) == Some(&close) {
                    j + 1
                } else {
                    loop {
                        if close == b'}' {
                            if b.get(j) != Some(&b'"') {
                                return None;
                            }
                            j = self.ws(self.string(j)?);
                            if b.get(j) != Some(&b':') {
                                return None;
                            }
                            j = self.ws(j + 1);
                        }
                        j = self.ws(self.value(j, depth + 1)?);
                        match b.get(j) {
                            Some(b',') => j = self.ws(j + 1),
                            Some(&c) if c == close => break j + 1,
                            _ => return None,
                        }
                    }
                }
            }
            b't' if b[i..].starts_with(b"true") => i + 4,
            b'f' if b[i..].starts_with(b"false") => i + 5,
            b'n' if b[i..].starts_with(b"null") => i + 4,
            b'-' | b'0'..=b'9' => self.number(i)?,
            _ => return None,
        };
        // What the gem would read next must be a delimiter, or it might read on.
        matches!(
            b.get(end),
            None | Some(b' ' | b'\t' | b'\n' | b'\r' | b',' | b']' | b'}')
        )
        .then_some(end)
    }

    /// `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`: the position after it. A `.` or
    /// exponent without its digits ends it early, so the caller's delimiter check rejects it.
    fn number(&self, i: usize) -> Option<usize> {
        let n = crate::json::number_extent(self.b, i)?;
        Some(n.float_end.unwrap_or(n.int_end))
    }

    /// A string at its opening quote: the position after the closing quote. Escapes are the
    /// RFC's, without surrogates (whose pairing the gem does its own way).
    fn string(&self, i: usize) -> Option<usize> {
        let b = self.b;
        let mut j = i + 1;
        loop {
            j += memchr::memchr2(b'"', b'\\', &b[j..])?;
            if b[j] == b'"' {
                // No control characters inside.
                return (!b[i + 1..j].iter().any(|&c| c < 0x20)).then_some(j + 1);
            }
            match b.get(j + 1)? {
                b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => j += 2,
                b'u' => {
                    let hex = b.get(j + 2..j + 6)?;
                    if !hex.iter().all(u8::is_ascii_hexdigit)
                        || (matches!(hex[0], b'd' | b'D')
                            && matches!(hex[1], b'8'..=b'9' | b'a'..=b'f' | b'A'..=b'F'))
                    {
                        return None;
                    }
                    j += 6;
                }
                _ => return None,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::index;

    #[test]
    fn values_and_what_is_left_to_the_full_parse() {
        let text = br#" {"a": 1, "b": {"c": [true, null, "x\"y"]}, "d": -1.5e3 } "#;
        let ix = index(text).unwrap();
        let got: Vec<(&str, &[u8])> = (0..ix.len())
            .map(|i| (ix.key(text, i), ix.text(text, i)))
            .collect();
        assert_eq!(
            got,
            [
                ("a", &b"1"[..]),
                ("b", &br#"{"c": [true, null, "x\"y"]}"#[..]),
                ("d", &b"-1.5e3"[..])
            ]
        );
        for text in [
            "",
            "[]",
            "{}",
            "1",
            "{\"a\\n\": 1}",
            "{\"a\": 01}",
            "{\"a\": 1.}",
            "{\"a\": NaN}",
            "{\"a\": [1,]}",
            "{/* c */ \"a\": 1}",
            "{\"a\": 1} x",
            "{\"a\": \"\\ud800\"}",
            "{\"a\": \"\\x\"}",
            "{\"a\": \"\t\"}",
            "{\"a\": tru}",
        ] {
            assert!(index(text.as_bytes()).is_none(), "{text:?}");
        }
        // A key written twice: two entries; the file's reader takes the last (the gem's rule).
        let twice = b"{\"a\": 1, \"b\": 2, \"a\": 3}";
        let ix = index(twice).unwrap();
        assert_eq!(ix.len(), 3);
        assert_eq!(
            ix.find(twice, "a"),
            crate::yaml::index::Found::Duplicated(0)
        );
        let deep = format!("{{\"a\": {}{}}}", "[".repeat(60), "]".repeat(60));
        assert!(index(deep.as_bytes()).is_none());
    }
}
