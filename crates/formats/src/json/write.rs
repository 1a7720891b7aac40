//! json gem 2.6 `generate` as Puppet's `--render-as json` calls it: the writer beside the
//! reader (`json/mod.rs`).

use crate::render::document::RenderError;
use hiera_value::text::{float_to_s, to_s, SENSITIVE_TO_S};
use hiera_value::value::Value;
use std::fmt::Write as _;

/// json gem 2.6 `to_json` (Puppet's `--render-as json`): compact, UTF-8 raw, non-string keys via
/// `to_s`, NaN/Infinity and nesting deeper than 100 are errors.
pub fn to_json(v: &Value) -> Result<String, RenderError> {
    let mut out = String::new();
    write_json(&mut out, v, 0, JSON_MAX_NESTING)?;
    Ok(out)
}

/// [`to_json`] of a document of `levels` levels of its own around values that each keep the
/// json gem's limit (diff's report: a value as deep as a lookup may print, at the bottom of
/// the report's own hashes and arrays).
pub fn to_json_around(v: &Value, levels: usize) -> Result<String, RenderError> {
    let mut out = String::new();
    write_json(&mut out, v, 0, JSON_MAX_NESTING + levels)?;
    Ok(out)
}

/// Appends `v` to `out` as the json gem writes it inside `depth` enclosing arrays or
/// hashes (their nesting counts against the limit). On an error `out` is left as it was.
pub fn write_json_at(out: &mut String, v: &Value, depth: usize) -> Result<(), RenderError> {
    let start = out.len();
    write_json(out, v, depth, JSON_MAX_NESTING).inspect_err(|_| out.truncate(start))
}

/// json gem's default `max_nesting`.
const JSON_MAX_NESTING: usize = 100;

fn write_json(out: &mut String, v: &Value, depth: usize, max: usize) -> Result<(), RenderError> {
    match v {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Int(i) => {
            let _ = write!(out, "{i}");
        }
        Value::BigInt(d) => out.push_str(d),
        Value::Float(f) => {
            // generator.c reports its own source line in the message.
            if f.is_nan() {
                return Err(RenderError::Json("NaN not allowed in JSON".into()));
            }
            if f.is_infinite() {
                let msg = format!("{} not allowed in JSON", float_to_s(*f));
                return Err(RenderError::Json(msg));
            }
            out.push_str(&float_to_s(*f));
        }
        Value::String(s) => json_str(out, s),
        Value::Sensitive(_) => json_str(out, SENSITIVE_TO_S),
        Value::Object(o) => match o.binary_bytes() {
            // A binary String: written as UTF-8 when its bytes are.
            Some(bytes) => {
                check_utf8(&bytes)?;
                json_str(out, &o.to_s)
            }
            None => json_str(out, &o.to_s),
        },
        Value::Array(a) => {
            if depth + 1 > max {
                return Err(nesting_error());
            }
            out.push('[');
            for (i, e) in a.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_json(out, e, depth + 1, max)?;
            }
            out.push(']');
        }
        Value::Hash(h) => {
            if depth + 1 > max {
                return Err(nesting_error());
            }
            out.push('{');
            for (i, (k, e)) in h.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                match k {
                    Value::String(s) => json_str(out, s),
                    _ => json_str(out, &to_s(k)),
                }
                out.push(':');
                write_json(out, e, depth + 1, max)?;
            }
            out.push('}');
        }
    }
    Ok(())
}

/// `Puppet::Util::Json.dump(v, pretty: true)` (MultiJson's json gem adapter with
/// `JSON::PRETTY_STATE_PROTOTYPE`), as the `console` and `flat` renderers print what is neither
/// a String, a Numeric, a Hash nor an Array: two-space indents, `": "` after keys, and the
/// adapter's empty containers (`[` two newlines `]`, `{` one newline `}`), no final newline.
pub fn to_json_pretty(v: &Value) -> Result<String, RenderError> {
    let mut out = String::new();
    write_pretty(&mut out, v, 0)?;
    Ok(out)
}

fn write_pretty(out: &mut String, v: &Value, depth: usize) -> Result<(), RenderError> {
    let indent = |out: &mut String, d: usize| {
        for _ in 0..d {
            out.push_str("  ");
        }
    };
    match v {
        Value::Array(a) => {
            if depth + 1 > JSON_MAX_NESTING {
                return Err(nesting_error());
            }
            out.push_str("[\n");
            for (i, e) in a.iter().enumerate() {
                if i > 0 {
                    out.push_str(",\n");
                }
                indent(out, depth + 1);
                write_pretty(out, e, depth + 1)?;
            }
            out.push('\n');
            indent(out, depth);
            out.push(']');
        }
        Value::Hash(h) => {
            if depth + 1 > JSON_MAX_NESTING {
                return Err(nesting_error());
            }
            out.push_str("{\n");
            for (i, (k, e)) in h.iter().enumerate() {
                if i > 0 {
                    out.push_str(",\n");
                }
                indent(out, depth + 1);
                match k {
                    Value::String(s) => json_str(out, s),
                    _ => json_str(out, &to_s(k)),
                }
                out.push_str(": ");
                write_pretty(out, e, depth + 1)?;
            }
            if !h.is_empty() {
                out.push('\n');
            }
            indent(out, depth);
            out.push('}');
        }
        other => write_json(out, other, depth, JSON_MAX_NESTING)?,
    }
    Ok(())
}

/// The json gem's check of a String's bytes as UTF-8 (ConvertUTF's `trailingBytesForUTF8` and
/// `isLegalUTF8`), with its two messages.
fn check_utf8(b: &[u8]) -> Result<(), RenderError> {
    let mut i = 0;
    while i < b.len() {
        let lead = b[i];
        let extra = match lead {
            0x00..=0xBF => 0,
            0xC0..=0xDF => 1,
            0xE0..=0xEF => 2,
            0xF0..=0xF7 => 3,
            0xF8..=0xFB => 4,
            _ => 5,
        };
        if i + extra >= b.len() && extra > 0 {
            return Err(RenderError::Json(
                "partial character in source, but hit end".into(),
            ));
        }
        let seq = &b[i..=i + extra];
        let legal = match seq.len() {
            1 => !(0x80..0xC2).contains(&lead),
            2..=4 => {
                let tail_ok = seq[2..].iter().all(|c| (0x80..=0xBF).contains(c));
                let a = seq[1];
                let second_ok = a <= 0xBF
                    && match lead {
                        0xE0 => a >= 0xA0,
                        0xED => a <= 0x9F,
                        0xF0 => a >= 0x90,
                        0xF4 => a <= 0x8F,
                        _ => a >= 0x80,
                    };
                tail_ok && second_ok && (0xC2..=0xF4).contains(&lead)
            }
            _ => false,
        };
        if !legal {
            return Err(RenderError::Json(
                "source sequence is illegal/malformed utf-8".into(),
            ));
        }
        i += extra + 1;
    }
    Ok(())
}

fn nesting_error() -> RenderError {
    RenderError::Json(format!("nesting of {JSON_MAX_NESTING} is too deep"))
}

/// json gem string escaping (script_safe off): `"`, `\`, and C0 controls only.
pub fn json_str(out: &mut String, s: &str) {
    out.push('"');
    // Runs of characters that need no escape are copied whole (most strings are one run).
    let mut rest = s;
    while let Some(at) = first_to_escape(rest.as_bytes()) {
        out.push_str(&rest[..at]);
        // An ASCII byte: the escape is one character.
        let c = rest.as_bytes()[at] as char;
        rest = &rest[at + 1..];
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\x0C' => out.push_str("\\f"),
            '\x08' => out.push_str("\\b"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push_str(rest);
    out.push('"');
}

/// The first byte JSON must escape (`"`, `\\`, below 0x20). Eight bytes at a time: a
/// word with none of them is passed over with a few arithmetic operations (the classic
/// "has a zero byte / a byte below n" tests, which may flag a word falsely but never miss
/// one; a flagged word is then scanned byte by byte).
fn first_to_escape(b: &[u8]) -> Option<usize> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    let zero_byte = |x: u64| x.wrapping_sub(ONES) & !x & HIGHS;
    let mut i = 0;
    while let Some(chunk) = b.get(i..i + 8) {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        let x = u64::from_le_bytes(word);
        let below_space = x.wrapping_sub(ONES * 0x20) & !x & HIGHS;
        let flagged = below_space
            | zero_byte(x ^ (ONES * b'"' as u64))
            | zero_byte(x ^ (ONES * b'\\' as u64));
        if flagged != 0 {
            break;
        }
        i += 8;
    }
    b[i..]
        .iter()
        .position(|&c| c < 0x20 || c == b'"' || c == b'\\')
        .map(|p| p + i)
}

#[cfg(test)]
mod tests {
    use super::json_str;

    /// An independent writer with the json gem's escaping for strings (`"`, `\\`, and
    /// controls as `\n`-style or lowercase `\u00xx` escapes; nothing else escaped).
    fn reference(s: &str) -> String {
        serde_json::to_string(s).unwrap()
    }

    #[test]
    fn strings_escape_as_the_json_gem_does() {
        let mut cases: Vec<String> = [
            "",
            "plain",
            "\"",
            "a\"b\\c",
            "é\u{1}ü\n\t\r\x0c\x08\x1f\x7f",
            "日本語\"\\",
            "\\\\\"\"",
            "end\n",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        // Every character below 0x80, alone and between multi-byte ones.
        cases.extend((0u8..0x80).map(|b| format!("€{}ß", b as char)));
        // Each escape at every place of a word and after it, among bytes that look alike
        // to the word-at-a-time scan (0x20, 0x21, 0x5b, 0xa2 …).
        for c in ['"', '\\', '\n', '\u{0}', '\u{1f}'] {
            for at in 0..20 {
                let mut s: Vec<char> = "! [¢]#".chars().cycle().take(20).collect();
                s.insert(at, c);
                cases.push(s.into_iter().collect());
            }
        }
        for s in &cases {
            let mut out = String::new();
            json_str(&mut out, s);
            assert_eq!(out, reference(s), "{s:?}");
        }
    }
}
