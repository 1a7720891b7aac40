//! The differential property of the structural pass: whenever it indexes a file, every entry
//! built on its own equals the whole file's parse (same keys in the same order, same values,
//! same Ruby-object verdicts), and a file the full parser rejects is never indexed. Checked on
//! every data file in the repository and on generated and mutated documents.

use super::*;
use hiera_formats::yaml;

/// Keys, values (as Debug text) and Ruby-object verdicts, in file order.
type Entries = (Vec<String>, Vec<String>, Vec<Option<&'static str>>);

/// What the full parse gives, as the backend sees it.
fn full_yaml(bytes: &[u8]) -> Option<Entries> {
    let doc = yaml::load_document(bytes).ok()?;
    let Value::Hash(map) = doc.value else {
        return None;
    };
    let mut keys = Vec::new();
    let mut values = Vec::new();
    let mut invalid = Vec::new();
    for (k, v) in &map {
        keys.push(k.as_str()?.to_string());
        values.push(format!("{v:?}"));
        invalid.push(
            doc.ruby_values
                .iter()
                .find(|r| &r.key == k)
                .map(|r| r.class),
        );
    }
    Some((keys, values, invalid))
}

/// Checks the property for one text; true if the structural pass indexed it.
fn check(format: Format, bytes: &[u8]) -> bool {
    if format == Format::Yaml {
        // The shortcut for common lines finds what the general scan finds.
        let fast = yaml::index::index(bytes).map(|ix| ix.entries);
        let general = yaml::index::index_general(bytes).map(|ix| ix.entries);
        assert_eq!(
            fast,
            general,
            "the shortcut differs from the general scan on:\n{}",
            String::from_utf8_lossy(bytes)
        );
    }
    let Ok(f) = IndexedFile::new(format, "t", bytes.to_vec()) else {
        return false;
    };
    let text = String::from_utf8_lossy(bytes);
    let (keys, values, invalid) = match format {
        Format::Yaml => full_yaml(bytes).unwrap_or_else(|| {
            panic!(
                "indexed, but the full parse is not a string-keyed hash ({:?}):\n{text}",
                yaml::load_document(bytes).map(|d| d.value)
            )
        }),
        Format::Json => {
            let Ok(Value::Hash(map)) = hiera_formats::json::parse(&text) else {
                panic!("indexed, but the full parse is no hash:\n{text}");
            };
            let keys = map
                .keys()
                .map(|k| k.as_str().unwrap().to_string())
                .collect();
            let values = map.values().map(|v| format!("{v:?}")).collect();
            (keys, values, vec![None; map.len()])
        }
    };
    let got: Vec<&str> = f.keys();
    assert_eq!(got, keys, "keys differ for:\n{text}");
    let b = &f.bytes;
    for (i, k) in keys.iter().enumerate() {
        // Scanning the entries and the hash table agree.
        let found = f.index.scan(b, k);
        assert_eq!(found, f.index.hashed(b, k), "finding {k:?} in:\n{text}");
        if let Found::At(e) = found {
            // Built on its own: the fallback to the full parse must not be needed.
            let built = f
                .build(e, k)
                .unwrap_or_else(|| panic!("entry {k:?} does not build on its own:\n{text}"));
            assert_eq!(
                format!("{:?}", built.value),
                values[i],
                "value of {k:?} in:\n{text}"
            );
            assert_eq!(
                built.invalid, invalid[i],
                "Ruby objects of {k:?} in:\n{text}"
            );
        }
        assert_eq!(format!("{:?}", f.get(k).unwrap().unwrap()), values[i]);
        assert_eq!(f.invalid_class(k), invalid[i], "Ruby objects of {k:?}");
    }
    assert!(f.get("no such key").unwrap().is_none());
    true
}

fn data_files(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = rd.flatten().map(|e| e.path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            data_files(&p, out);
        } else if p
            .extension()
            .is_some_and(|e| matches!(e.to_str(), Some("yaml" | "yml" | "json" | "eyaml")))
        {
            out.push(p);
        }
    }
}

fn repo_files() -> Vec<std::path::PathBuf> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut files = Vec::new();
    for d in ["fixtures", "tests", "docs", "benches"] {
        data_files(&root.join(d), &mut files);
    }
    files
}

#[test]
fn every_data_file_in_the_repository() {
    let files = repo_files();
    assert!(files.len() > 1000, "found only {} files", files.len());
    let (mut yaml_indexed, mut json_indexed) = (0, 0);
    for p in &files {
        let bytes = std::fs::read(p).unwrap();
        let json = p.extension().is_some_and(|e| e == "json");
        // Every file is tried both ways: a .json file is also YAML, and the reverse.
        if check(Format::Yaml, &bytes) && !json {
            yaml_indexed += 1;
        }
        if check(Format::Json, &bytes) && json {
            json_indexed += 1;
        }
    }
    eprintln!(
        "{yaml_indexed} YAML and {json_indexed} JSON files of {} indexed",
        files.len()
    );
    // Most real data files take the fast path (the rest are tests of odd YAML).
    assert!(yaml_indexed > 600, "{yaml_indexed} YAML files indexed");
    assert!(json_indexed > 20, "{json_indexed} JSON files indexed");
}

/// How many generated documents to try: `HIERA_LOOKUP_DIFF_ROUNDS` for a longer run than
/// the default's (which `cargo test` runs).
fn rounds(default: usize) -> usize {
    std::env::var("HIERA_LOOKUP_DIFF_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

use crate::fuzzing::Rng;

/// Keys and scalars usual in data files, and odd ones (picked one time in twenty-five).
const KEYS: &[&str] = &[
    "a",
    "b",
    "key",
    "profile::x",
    "ntp::servers",
    "a b",
    "x-y",
    "'q'",
    "\"dq\"",
    "k#h",
    "lookup_options",
    "é",
    "a:b",
    "\"é\"",
    "c",
    "d",
    "e",
    "f",
    "g",
    "h",
];
const ODD_KEYS: &[&str] = &[
    "1",
    "yes",
    "~",
    "<<",
    "'it''s'",
    "\"e\\n\"",
    ":sym",
    "-k",
    "?k",
    "2024-01-01",
    "0x_",
    "a ",
    "\"a\"",
    "''",
    "\"\"",
    "[x]",
    "{x}",
    "&a k",
    "!t k",
    "*x",
    "%k",
    "@k",
    "`k",
    "k\tk",
];

const SCALARS: &[&str] = &[
    "v",
    "1",
    "-1",
    "+1",
    "0",
    "007",
    "0x1F",
    "0b101",
    "1_000",
    "1.5",
    ".5",
    "-.5",
    "1e3",
    "1.0e+3",
    ".inf",
    "-.Inf",
    ".nan",
    ":sym",
    "yes",
    "no",
    "on",
    "off",
    "y",
    "~",
    "null",
    "true",
    "a b",
    "a  b",
    "a #c",
    "a#c",
    "a:b",
    "-x",
    "?x",
    "ENC[PKCS7,MIIB]",
    "'%{facts.x}'",
    "\"%{lookup('k')}\"",
    "'it''s'",
    "\"a\\tb\"",
    "\"\\x41\\u00e9\\U0001F600\"",
    "\"a\nb\"",
    "'a\n  b'",
    "\"a\\\n  b\"",
    "'\n'",
    "[]",
    "{}",
    "[a, b]",
    "[a,b]",
    "[ a , b ]",
    "[a, [b, c]]",
    "{a: 1}",
    "{a: 1, b: [2]}",
    "{\"a\":1}",
    "{'a': 'b'}",
    "[a #c\n]",
    "[a,\n  b]",
    "[\"a\",\n'b']",
    "{a: [1, {b: c}]}",
    "[-1, -x]",
    "é",
    "\"é\"",
    "&x 1",
    "&x [a]",
    "0o17",
    "[[[[[[a]]]]]]",
    "a\tb",
];
const ODD_SCALARS: &[&str] = &[
    "0x_",
    "1,000",
    "2024-01-01",
    "2024-01-01 10:00:00",
    "2024-13-45",
    "10:20",
    "1:2:3",
    ":\"q\"",
    "a: b",
    "a:",
    "%x",
    "@x",
    "`x",
    "--x",
    "---",
    "...",
    "? x",
    "!x",
    "&a x",
    "*a",
    "|",
    ">",
    "\"\\q\"",
    "\"\\ud800\"",
    "\"\\xZZ\"",
    "'unterminated",
    "{a:1}",
    "[a: 1]",
    "[a, ]",
    "[, a]",
    "{a: }",
    "{a}",
    "[a\n  b]",
    "[:x]",
    "[a]]",
    "{a: 1}}",
    "[a, b",
    "\t",
    "!!str 1",
    "!ruby/object:Foo {}",
    "*x",
    "<<",
    "1:20",
    "-",
    "- a",
];

fn key(rng: &mut Rng) -> &'static str {
    if rng.chance(4) {
        rng.pick(ODD_KEYS)
    } else {
        rng.pick(KEYS)
    }
}

fn scalar(rng: &mut Rng) -> &'static str {
    if rng.chance(4) {
        rng.pick(ODD_SCALARS)
    } else {
        rng.pick(SCALARS)
    }
}

const HEADERS: &[&str] = &[
    "|", ">", "|-", ">+", "|2", ">1-", "|+2", "| #c", "|", ">", "|", "|0", "|x", "|#c", "|-9",
];

fn gen_block(rng: &mut Rng, out: &mut String, indent: usize, depth: usize) {
    let n = 1 + rng.below(4);
    let seq = depth > 0 && rng.chance(30);
    for _ in 0..n {
        let pad = " ".repeat(indent);
        if rng.chance(10) {
            out.push_str(&pad);
            out.push_str(rng.pick(&["# comment", "#", "", "   # c", "  ", "\t# tab"]));
            out.push('\n');
        }
        out.push_str(&pad);
        if seq {
            out.push_str(rng.pick(&["- ", "- ", "-  ", "-"]));
        } else {
            out.push_str(key(rng));
            out.push_str(rng.pick(&[": ", ": ", ": ", ":  ", " : ", ": ", ":", ":\t"]));
        }
        gen_value(rng, out, indent, depth);
    }
}

fn gen_value(rng: &mut Rng, out: &mut String, indent: usize, depth: usize) {
    match rng.below(10) {
        0 | 1 if depth < 4 => {
            // A nested block node.
            if rng.chance(10) {
                out.push_str(rng.pick(&["&anc", "&a", "&x1", "&anc", "!!map", "&"]));
            }
            if rng.chance(10) {
                out.push_str(" # c");
            }
            out.push('\n');
            let step = rng.pick(&["  ", "  ", "    ", " ", ""]).len();
            gen_block(rng, out, indent + step, depth + 1);
        }
        2 if depth < 4 => {
            // A sequence item holding a mapping, or an indentless sequence.
            out.push('\n');
            let pad = " ".repeat(indent + rng.below(3));
            for _ in 0..1 + rng.below(3) {
                out.push_str(&pad);
                out.push_str("- ");
                if rng.chance(50) {
                    out.push_str(key(rng));
                    out.push_str(": ");
                    out.push_str(scalar(rng));
                    out.push('\n');
                    if rng.chance(50) {
                        out.push_str(&pad);
                        out.push_str("  ");
                        out.push_str(key(rng));
                        out.push_str(": ");
                        out.push_str(scalar(rng));
                        out.push('\n');
                    }
                } else {
                    out.push_str(scalar(rng));
                    out.push('\n');
                }
            }
        }
        3 => {
            // A block scalar.
            out.push_str(rng.pick(HEADERS));
            out.push('\n');
            let base = indent + rng.below(4);
            for _ in 0..rng.below(4) {
                match rng.below(6) {
                    0 => out.push('\n'),
                    1 => out.push_str(&" ".repeat(base + 3)),
                    2 if rng.chance(20) => out.push_str(&format!("{}\tx", " ".repeat(base))),
                    _ => {
                        out.push_str(&" ".repeat(base + rng.below(2)));
                        out.push_str(scalar(rng));
                    }
                }
                out.push('\n');
            }
        }
        _ => {
            out.push_str(scalar(rng));
            if rng.chance(10) {
                out.push_str(rng.pick(&[" # c", "  ", " #", " # c", "#c", "\t"]));
            }
            out.push('\n');
        }
    }
}

fn gen_document(rng: &mut Rng) -> String {
    let mut out = String::new();
    match rng.below(30) {
        0..=5 => out.push_str("---\n"),
        6 => out.push_str("--- # c\n"),
        7 => out.push_str("%YAML 1.1\n---\n"),
        8 | 9 => out.push_str("# header\n\n"),
        10 => out.push('\u{feff}'),
        _ => {}
    }
    gen_block(rng, &mut out, 0, 0);
    match rng.below(30) {
        0 => out.push_str("...\n"),
        1 => out.push_str("---\nother: doc\n"),
        2 | 3 => out.push_str("# trailer"),
        4..=6 => {
            out.pop();
        }
        _ => {}
    }
    out
}

/// A few random edits: the kind of damage that finds where the pass is too trusting.
fn mutate(rng: &mut Rng, text: &str) -> String {
    let mut b: Vec<u8> = text.as_bytes().to_vec();
    for _ in 0..1 + rng.below(3) {
        if b.is_empty() {
            break;
        }
        let i = rng.below(b.len() + 1);
        let chars = b" \t\n:-#'\"[]{},&*!|>?%@`\\.0a";
        match rng.below(5) {
            0 if i < b.len() => {
                b.remove(i);
            }
            1 => b.insert(i, chars[rng.below(chars.len())]),
            2 if i < b.len() => b[i] = chars[rng.below(chars.len())],
            3 => {
                // Indent or dedent a line.
                let start = b[..i]
                    .iter()
                    .rposition(|&c| c == b'\n')
                    .map_or(0, |p| p + 1);
                if rng.chance(50) {
                    b.insert(start, b' ');
                } else if b.get(start) == Some(&b' ') {
                    b.remove(start);
                }
            }
            _ => {
                // Duplicate a line.
                let start = b[..i]
                    .iter()
                    .rposition(|&c| c == b'\n')
                    .map_or(0, |p| p + 1);
                let end = b[i..]
                    .iter()
                    .position(|&c| c == b'\n')
                    .map_or(b.len(), |p| i + p + 1);
                let line = b[start..end].to_vec();
                b.splice(end..end, line);
            }
        }
    }
    String::from_utf8_lossy(&b).into_owned()
}

#[test]
fn generated_and_mutated_yaml() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let (mut tried, mut indexed) = (0, 0);
    for _ in 0..rounds(6000) {
        let doc = gen_document(&mut rng);
        tried += 1;
        indexed += usize::from(check(Format::Yaml, doc.as_bytes()));
        for _ in 0..2 {
            let m = mutate(&mut rng, &doc);
            tried += 1;
            indexed += usize::from(check(Format::Yaml, m.as_bytes()));
        }
    }
    eprintln!("{indexed} of {tried} generated YAML documents indexed");
    // The generator must exercise the fast path, not only the fallback.
    assert!(indexed * 10 > tried, "{indexed} of {tried} indexed");
}

#[test]
fn mutated_repository_files() {
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    let files = repo_files();
    let mut indexed = 0;
    for (n, p) in files.iter().enumerate() {
        // Every third file, a few mutants each: all of them over the file list.
        if n % 3 != 0 {
            continue;
        }
        let Ok(text) = std::fs::read_to_string(p) else {
            continue;
        };
        if text.len() > 20_000 {
            continue;
        }
        let json = p.extension().is_some_and(|e| e == "json");
        for _ in 0..4 {
            let m = mutate(&mut rng, &text);
            let format = if json { Format::Json } else { Format::Yaml };
            indexed += usize::from(check(format, m.as_bytes()));
        }
    }
    eprintln!("{indexed} mutants of repository files indexed");
    assert!(indexed > 200, "{indexed} mutants indexed");
}

#[test]
fn generated_json() {
    let mut rng = Rng(7);
    const J: &[&str] = &[
        "1",
        "-0",
        "0.5",
        "1e5",
        "1E-2",
        "true",
        "false",
        "null",
        "\"s\"",
        "\"\\u00e9\"",
        "[]",
        "{}",
        "[1, 2]",
        "{\"a\": [1, {\"b\": null}]}",
        "\"é\"",
        "\"/* c */\"",
        "-12.5e+3",
        "\"a\\\"b\"",
        "[\"x\",\n  {\"y\":\"z\"}]",
    ];
    const ODD: &[&str] = &[
        "012",
        "1.",
        "-",
        "nul",
        "NaN",
        "Infinity",
        "-Infinity",
        "\"\\ud83d\\ude00\"",
        "\"\\x\"",
        "\"a\tb\"",
        "[1,]",
        "{\"a\" 1}",
        "/* c */ 1",
        "[1] // c\n",
        "1 2",
        "{\"a\":1,\"a\":2}",
    ];
    let (mut tried, mut indexed) = (0, 0);
    for _ in 0..rounds(3000) {
        let mut t = String::from(if rng.chance(5) {
            rng.pick(&["\u{feff}{", "[", "//c\n{"])
        } else {
            rng.pick(&["{", " {", "{\n"])
        });
        for i in 0..1 + rng.below(5) {
            if i > 0 {
                t.push_str(if rng.chance(3) {
                    ",,"
                } else {
                    rng.pick(&[",", ", ", ",\n  "])
                });
            }
            t.push_str(if rng.chance(3) {
                rng.pick(&["\"k\\n\"", "k", "\"a\""])
            } else {
                rng.pick(&[
                    "\"k\"", "\"b\"", "\"c\"", "\"d\"", "\"é\"", "\"e\"", "\"f\"",
                ])
            });
            t.push_str(if rng.chance(3) {
                ""
            } else {
                rng.pick(&[":", ": ", " : "])
            });
            t.push_str(if rng.chance(4) {
                rng.pick(ODD)
            } else {
                rng.pick(J)
            });
        }
        t.push_str(if rng.chance(5) {
            rng.pick(&["} x", "", "]"])
        } else {
            rng.pick(&["}", "}\n", " } "])
        });
        tried += 2;
        indexed += usize::from(check(Format::Json, t.as_bytes()));
        let m = mutate(&mut rng, &t);
        indexed += usize::from(check(Format::Json, m.as_bytes()));
    }
    eprintln!("{indexed} of {tried} generated JSON texts indexed");
    assert!(
        indexed * 5 > tried,
        "{indexed} of {tried} JSON texts indexed"
    );
}
