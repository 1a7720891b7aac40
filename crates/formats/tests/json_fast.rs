//! `json::parse_fast` (serde_json, for facts files) against `json::parse` (the json gem's
//! port): the same value, variant for variant and float bit for float bit, or the same
//! error, for every JSON file of the repository (the facts of tests/, fixtures/ and
//! benches/realworld/, and the data files beside them) and for generated documents built to
//! land on every place the two parsers could disagree.

use hiera_formats::json::{parse, parse_fast};
use std::path::{Path, PathBuf};

/// Debug's rendering tells Int from Float from BigInt, -0.0 from 0.0, and keeps hash order.
fn agree(text: &str, what: &str) {
    let fast = format!("{:?}", parse_fast(text));
    let port = format!("{:?}", parse(text));
    assert_eq!(fast, port, "{what}: {text:.300}");
}

fn json_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            json_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "json") {
            out.push(p);
        }
    }
}

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn repo_json() -> Vec<(PathBuf, String)> {
    let mut files = Vec::new();
    for d in ["tests", "fixtures", "benches/realworld"] {
        json_files(&repo().join(d), &mut files);
    }
    files.sort();
    files
        .into_iter()
        .filter_map(|p| Some((p.clone(), String::from_utf8(std::fs::read(&p).ok()?).ok()?)))
        .collect()
}

#[test]
fn every_json_file_of_the_repository() {
    let files = repo_json();
    assert!(files.len() > 100, "{} files", files.len());
    let mut fast = 0;
    for (p, text) in &files {
        agree(text, &p.display().to_string());
        fast += usize::from(parse_fast(text).is_ok() && parse(text).is_ok());
    }
    // The real fact sets are all plain JSON: they took the fast path (and agreed).
    assert!(fast >= 30, "{fast}");
}

/// xorshift64*: deterministic, no dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn pick<'a>(&mut self, xs: &[&'a str]) -> &'a str {
        xs[self.below(xs.len())]
    }
}

/// Number tokens where the parsers' number rules could part: 64-bit edges, Bignums, `-0`,
/// float forms, exponents that overflow or underflow, correctly rounded corner cases.
const NUMBERS: &[&str] = &[
    "0",
    "-0",
    "1",
    "-1",
    "9223372036854775807",
    "9223372036854775808",
    "-9223372036854775808",
    "-9223372036854775809",
    "18446744073709551615",
    "18446744073709551616",
    "123456789012345678901234567890",
    "-98765432109876543210",
    "0.0",
    "-0.0",
    "1.5",
    "1e5",
    "1E5",
    "1e+5",
    "1e-5",
    "-2.5E-3",
    "1e400",
    "-1e400",
    "1e-400",
    "0.1",
    "0.30000000000000004",
    "1.7976931348623157e308",
    "2.2250738585072011e-308",
    "5e-324",
    "4.9406564584124654e-324",
    "9007199254740993",
    "9007199254740993.0",
    "0.000000000000000000000000000001",
    "123456789012345678.9",
    "3.141592653589793238462643383279",
    "1e22",
    "1e23",
    "8.98846567431158e307",
];

/// Strings, escapes included; some only the gem reads.
const STRINGS: &[&str] = &[
    r#""""#,
    r#""plain""#,
    r#""tab\tnew\nline""#,
    r#""quote \" back \\ slash \/""#,
    r#""\u00e9\u4e2d\ud83d\ude00""#,
    r#""é中😀""#,
    r#""\u0000""#,
    r#""\b\f\r""#,
    r#""\x""#,
    r#""\ud800""#,
    r#""\ud800x""#,
    r#""\udc00""#,
    r#""\uD83D\uDE00""#,
    "\"ctl\u{1}\"",
    r#""$serde_json::private::Number""#,
];

/// Scalars and bits of syntax only the gem reads (or nobody).
const ODD: &[&str] = &[
    "true",
    "false",
    "null",
    "NaN",
    "Infinity",
    "-Infinity",
    "/* c */ 1",
    "1 // c\n",
    "01",
    "1.",
    ".5",
    "+1",
    "1.5e",
    "tru",
    "[1,]",
    "{\"a\":1,}",
    "'s'",
];

fn value(r: &mut Rng, depth: usize, out: &mut String) {
    let deep = depth > 6;
    match r.below(if deep { 4 } else { 7 }) {
        0 => out.push_str(r.pick(NUMBERS)),
        1 => out.push_str(r.pick(STRINGS)),
        2 => out.push_str(r.pick(&["true", "false", "null"])),
        3 if r.below(20) == 0 => out.push_str(r.pick(ODD)),
        3 => out.push_str(r.pick(NUMBERS)),
        4 | 5 => {
            out.push('{');
            let n = r.below(5);
            for i in 0..n {
                if i > 0 {
                    out.push_str(r.pick(&[",", ", ", ",\n  "]));
                }
                // Repeated keys: the first place, the last value.
                out.push_str(r.pick(&[r#""a""#, r#""b""#, r#""os""#, r#""é""#, r#""""#]));
                out.push_str(r.pick(&[":", ": ", " : "]));
                value(r, depth + 1, out);
            }
            out.push('}');
        }
        _ => {
            out.push('[');
            let n = r.below(5);
            for i in 0..n {
                if i > 0 {
                    out.push(',');
                }
                value(r, depth + 1, out);
            }
            out.push(']');
        }
    }
}

#[test]
fn generated_documents() {
    let mut r = Rng(0x9e37_79b9_7f4a_7c15);
    // How many serde_json reads: the fast path's share (the rest goes to the gem's parser).
    let mut plain = 0;
    for i in 0..20_000 {
        let mut text = String::new();
        if r.below(10) == 0 {
            text.push_str(r.pick(&[" ", "\n", "\u{feff}", "\t"]));
        }
        value(&mut r, 0, &mut text);
        if r.below(10) == 0 {
            text.push_str(r.pick(&[" ", "\n", " x", "]", " /* c */"]));
        }
        agree(&text, &format!("document {i}"));
        plain += usize::from(
            serde_json::from_str::<serde_json::Value>(&text)
                .is_ok_and(|v| v.is_object() || v.is_array()),
        );
    }
    assert!(
        plain > 5_000,
        "{plain} of 20,000 documents took the fast path"
    );
}

#[test]
fn nesting_around_the_gems_limit() {
    for depth in [99, 100, 101, 102, 127, 128, 129, 200] {
        for (open, close) in [("[", "]"), ("{\"a\":", "}")] {
            let text = format!("{}1{}", open.repeat(depth), close.repeat(depth));
            agree(&text, &format!("{depth} deep"));
        }
    }
}

#[test]
fn real_facts_with_every_tricky_token_spliced_in() {
    // Each real fact set with one value replaced by each tricky token: a large realistic
    // document that differs from plain JSON in one place.
    let files = repo_json();
    let facts: Vec<&String> = files
        .iter()
        .filter(|(p, _)| p.to_string_lossy().contains("realworld/facts"))
        .map(|(_, t)| t)
        .collect();
    assert!(!facts.is_empty());
    for text in facts.iter().take(6) {
        let Some(at) = text.find(": \"") else {
            continue;
        };
        let end = at + 2 + text[at + 3..].find('"').unwrap() + 2;
        for token in NUMBERS.iter().chain(STRINGS).chain(ODD) {
            let spliced = format!("{}: {token}{}", &text[..at], &text[end..]);
            agree(&spliced, token);
        }
    }
}
