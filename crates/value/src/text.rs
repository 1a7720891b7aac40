//! Ruby's texts of a value, byte for byte: `to_s` (`--render-as s`, interpolation), Ruby 3.3
//! `inspect` (explain values, error messages), `Float#to_s`, and the explainer's `dump_value`.
//! Every writer above this crate (YAML, JSON, explain) builds on these.

mod nonprint;

use crate::value::{RubyObject, Value};
use std::fmt::Write as _;

/// What Ruby prints for a Sensitive value's `to_s` (and JSON, which is `to_s.to_json`).
pub const SENSITIVE_TO_S: &str = "Sensitive [value redacted]";
/// `Sensitive#inspect`.
const SENSITIVE_INSPECT: &str = "#<Sensitive [value redacted]>";

/// Ruby `to_s`: `--render-as s` and interpolation of non-strings.
/// String raw, nil empty, numbers as Ruby prints them, Hash/Array as `inspect`.
pub fn to_s(v: &Value) -> String {
    to_s_with(v, true)
}

/// Ruby `inspect` as in a UTF-8 locale (Puppet's usual case): `"str"`, `nil`, `{"a"=>1, "b"=>[1, 2]}`.
pub fn inspect(v: &Value) -> String {
    inspect_with(v, true)
}

/// `to_s` with the locale choice of [`inspect_with`].
pub fn to_s_with(v: &Value, utf8_locale: bool) -> String {
    match v {
        Value::Null => String::new(),
        Value::String(s) => s.clone(),
        Value::Sensitive(_) => SENSITIVE_TO_S.to_string(),
        Value::Object(o) => o.to_s.clone(),
        _ => inspect_with(v, utf8_locale),
    }
}

/// Ruby `inspect`. String#inspect depends on Ruby's default external encoding (the locale):
/// with a UTF-8 locale printable non-ASCII is kept raw, otherwise (e.g. `LANG=C`) every non-ASCII
/// character is escaped (`"\u00E9"`). hiera-lookup assumes a UTF-8 locale (see README).
pub fn inspect_with(v: &Value, utf8_locale: bool) -> String {
    let mut out = String::new();
    write_inspect(&mut out, v, utf8_locale);
    out
}

/// The explainer's `dump_value(io, indent, value)`: hashes and arrays one entry per line at
/// `indent + 2` spaces, closing bracket at `indent`; empty ones `{}`/`[]`; the rest `inspect`.
pub fn explain_dump(v: &Value, indent: usize) -> String {
    explain_dump_with(v, indent, true)
}

/// [`explain_dump`] with the locale choice of [`inspect_with`].
pub fn explain_dump_with(v: &Value, indent: usize, utf8_locale: bool) -> String {
    let mut out = String::new();
    write_dump(&mut out, v, indent, utf8_locale);
    out
}

/// Ruby `Float#to_s` (numeric.c `flo_to_s`): shortest round-trip digits; fixed notation when
/// the point falls inside the digits, or for whole numbers below 1e15, or down to 0.0001;
/// else `d.ddde+XX` (at least two exponent digits).
pub fn float_to_s(f: f64) -> String {
    if f.is_nan() {
        return "NaN".to_string();
    }
    if f.is_infinite() {
        return if f > 0.0 { "Infinity" } else { "-Infinity" }.to_string();
    }
    let mut out = String::new();
    if f.is_sign_negative() {
        out.push('-');
    }
    if f == 0.0 {
        out.push_str("0.0");
        return out;
    }
    let (digits, decpt) = shortest_digits(f.abs());
    let ndig = digits.len() as i32;
    if decpt > 0 && decpt < ndig {
        let (int, frac) = digits.split_at(decpt as usize);
        out.push_str(int);
        out.push('.');
        out.push_str(frac);
    } else if decpt > 0 && decpt <= 15 {
        out.push_str(&digits);
        out.extend(std::iter::repeat_n('0', (decpt - ndig) as usize));
        out.push_str(".0");
    } else if (-3..=0).contains(&decpt) {
        out.push_str("0.");
        out.extend(std::iter::repeat_n('0', (-decpt) as usize));
        out.push_str(&digits);
    } else {
        let (first, rest) = digits.split_at(1);
        out.push_str(first);
        out.push('.');
        out.push_str(if rest.is_empty() { "0" } else { rest });
        let e = decpt - 1;
        let _ = write!(
            out,
            "e{}{:02}",
            if e < 0 { '-' } else { '+' },
            e.unsigned_abs()
        );
    }
    out
}

/// Shortest round-trip decimal digits of a finite positive `f` and the position of the decimal
/// point relative to them (`0.5` => ("5", 0)), as Ruby's dtoa mode 0 yields them.
fn shortest_digits(f: f64) -> (String, i32) {
    let (mut digits, exp) = split_sci(&format!("{f:e}"));
    let mut decpt = exp + 1;
    // When two shortest candidates are equally near (f lies exactly halfway), dtoa takes the one
    // with an even last digit; Rust's formatter rounds such ties up.
    let odd = digits.bytes().last().is_some_and(|d| (d - b'0') % 2 == 1);
    let n = digits.len();
    if odd {
        // Cheap filter first: a tie needs the next digit to round to 5.
        let (near, near_exp) = split_sci(&format!("{f:.n$e}"));
        if near.as_bytes().get(n) == Some(&b'5') && near_exp + 1 == decpt {
            // f64 values have at most 767 significant digits: this is the exact expansion.
            let (exact, exact_exp) = split_sci(&format!("{f:.800e}"));
            let tail_zero = exact
                .as_bytes()
                .get(n + 1..)
                .is_some_and(|t| t.iter().all(|&b| b == b'0'));
            if exact_exp + 1 == decpt && exact.as_bytes().get(n) == Some(&b'5') && tail_zero {
                let lower = &exact[..n];
                let mut pick = if lower == digits {
                    increment(lower)
                } else {
                    lower.to_string()
                };
                if pick.len() > n {
                    decpt += 1; // 99.5 -> 100: the carry adds a digit
                }
                while pick.len() > 1 && pick.ends_with('0') {
                    pick.pop();
                }
                digits = pick;
            }
        }
    }
    (digits, decpt)
}

/// `"d.ddde-x"` -> ("dddd", -x)
fn split_sci(sci: &str) -> (String, i32) {
    let (mant, exp) = sci.split_once('e').unwrap_or((sci, "0"));
    (
        mant.chars().filter(|c| *c != '.').collect(),
        exp.parse().unwrap_or(0),
    )
}

/// Decimal digit string plus one ("199" -> "200", "99" -> "100").
fn increment(digits: &str) -> String {
    let mut b = digits.as_bytes().to_vec();
    let mut i = b.len();
    loop {
        if i == 0 {
            b.insert(0, b'1');
            break;
        }
        i -= 1;
        if b[i] == b'9' {
            b[i] = b'0';
        } else {
            b[i] += 1;
            break;
        }
    }
    String::from_utf8(b).unwrap_or_default()
}

fn write_inspect(out: &mut String, v: &Value, utf8: bool) {
    match v {
        Value::Null => out.push_str("nil"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Int(i) => {
            let _ = write!(out, "{i}");
        }
        Value::BigInt(d) => out.push_str(d),
        Value::Float(f) => out.push_str(&float_to_s(*f)),
        Value::String(s) => inspect_str(out, s, utf8),
        Value::Array(a) => {
            out.push('[');
            for (i, e) in a.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_inspect(out, e, utf8);
            }
            out.push(']');
        }
        Value::Hash(h) => {
            out.push('{');
            for (i, (k, e)) in h.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_inspect(out, k, utf8);
                out.push_str("=>");
                write_inspect(out, e, utf8);
            }
            out.push('}');
        }
        Value::Sensitive(_) => out.push_str(SENSITIVE_INSPECT),
        Value::Object(o) => out.push_str(&o.inspect()),
    }
}

impl RubyObject {
    /// Ruby's `inspect` (explain output): a Regexp's `/source/`, a URI's `#<URI::HTTP url>`,
    /// otherwise `to_s`.
    pub fn inspect(&self) -> String {
        if let Some(bytes) = self.binary_bytes() {
            return inspect_binary(&bytes);
        }
        match (self.type_name, &self.scalar) {
            ("Regexp", Some(s)) => s.text.clone(),
            ("URI", _) => format!("#<{} {}>", self.class, self.to_s),
            _ => self.to_s.clone(),
        }
    }
}

/// Ruby's `inspect` of an ASCII-8BIT String: printable ASCII as is, the usual escapes, every
/// other byte `\xHH`.
pub fn inspect_binary(bytes: &[u8]) -> String {
    let mut out = String::from('"');
    for (i, &b) in bytes.iter().enumerate() {
        match b {
            b'"' => out.push_str("\\\""),
            b'\\' => out.push_str("\\\\"),
            b'#' if matches!(bytes.get(i + 1), Some(b'{' | b'$' | b'@')) => out.push_str("\\#"),
            b'\n' => out.push_str("\\n"),
            b'\r' => out.push_str("\\r"),
            b'\t' => out.push_str("\\t"),
            0x0C => out.push_str("\\f"),
            0x0B => out.push_str("\\v"),
            0x08 => out.push_str("\\b"),
            0x07 => out.push_str("\\a"),
            0x1B => out.push_str("\\e"),
            b' '..=b'~' => out.push(b as char),
            _ => {
                let _ = write!(out, "\\x{b:02X}");
            }
        }
    }
    out.push('"');
    out
}

/// Ruby 3.1 `rb_str_inspect` for a UTF-8 string.
fn inspect_str(out: &mut String, s: &str, utf8: bool) {
    out.push('"');
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            // `#{`, `#$`, `#@` would interpolate if the output were read back as Ruby.
            '#' if matches!(chars.peek(), Some('{' | '$' | '@')) => out.push_str("\\#"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\x0C' => out.push_str("\\f"),
            '\x0B' => out.push_str("\\v"),
            '\x08' => out.push_str("\\b"),
            '\x07' => out.push_str("\\a"),
            '\x1B' => out.push_str("\\e"),
            ' '..='~' => out.push(c),
            _ if utf8 && !is_nonprint(c) => out.push(c),
            _ => {
                let cp = c as u32;
                if cp < 0x10000 {
                    let _ = write!(out, "\\u{cp:04X}");
                } else {
                    let _ = write!(out, "\\u{{{cp:X}}}");
                }
            }
        }
    }
    out.push('"');
}

fn is_nonprint(c: char) -> bool {
    let cp = c as u32;
    nonprint::NONPRINT
        .binary_search_by(|&(lo, hi)| {
            if hi < cp {
                std::cmp::Ordering::Less
            } else if lo > cp {
                std::cmp::Ordering::Greater
            } else {
                std::cmp::Ordering::Equal
            }
        })
        .is_ok()
}

fn write_dump(out: &mut String, v: &Value, indent: usize, utf8: bool) {
    let inner = indent + 2;
    match v {
        Value::Hash(h) => {
            out.push('{');
            if !h.is_empty() {
                for (i, (k, e)) in h.iter().enumerate() {
                    out.push_str(if i == 0 { "\n" } else { ",\n" });
                    push_spaces(out, inner);
                    write_dump(out, k, inner, utf8);
                    out.push_str(" => ");
                    write_dump(out, e, inner, utf8);
                }
                out.push('\n');
                push_spaces(out, indent);
            }
            out.push('}');
        }
        Value::Array(a) => {
            out.push('[');
            if !a.is_empty() {
                for (i, e) in a.iter().enumerate() {
                    out.push_str(if i == 0 { "\n" } else { ",\n" });
                    push_spaces(out, inner);
                    write_dump(out, e, inner, utf8);
                }
                out.push('\n');
                push_spaces(out, indent);
            }
            out.push(']');
        }
        _ => write_inspect(out, v, utf8),
    }
}

fn push_spaces(out: &mut String, n: usize) {
    out.extend(std::iter::repeat_n(' ', n));
}
