//! Table-driven tests against Ruby 3.1.2 / Psych 4.0.3 / libyaml 0.2.5 / json 2.6.1 / Puppet 7.23.
//! The table in tests/corpus.rs is printed by tests/data/render/gen.rb (`ruby gen.rb > corpus.rs`, then the
//! header lines are prepended); every expected string there is Ruby's own output.

use super::*;
use crate::yaml::write::scan::would_be_non_string;
use hiera_value::text::{explain_dump, float_to_s, inspect, inspect_with, to_s};
use hiera_value::value::{Map, Value};

mod corpus;

#[allow(non_upper_case_globals)]
const N: Value = Value::Null;
fn b(x: bool) -> Value {
    Value::Bool(x)
}
fn i(x: i64) -> Value {
    Value::Int(x)
}
fn f(x: f64) -> Value {
    Value::Float(x)
}
fn s(x: &str) -> Value {
    Value::String(x.to_string())
}
fn a(x: Vec<Value>) -> Value {
    Value::Array(x)
}
fn h(x: Vec<(Value, Value)>) -> Value {
    Value::Hash(x.into_iter().collect::<Map>())
}
fn sens(x: Value) -> Value {
    Value::Sensitive(Box::new(x))
}

type Expect = Result<&'static str, &'static str>;
/// (value, to_s, inspect, inspect in an ASCII locale, to_json, to_yaml, dump at 0, dump at 4)
type Case = (
    Value,
    &'static str,
    &'static str,
    &'static str,
    Expect,
    Expect,
    &'static str,
    &'static str,
);

fn render_err(r: Result<String, RenderError>) -> Result<String, String> {
    r.map_err(|e| e.to_string())
}

fn expect(e: Expect) -> Result<String, String> {
    e.map(str::to_string).map_err(str::to_string)
}

#[test]
fn corpus_matches_ruby() {
    let mut failures = Vec::new();
    for (v, to_s_, insp, insp_ascii, json, yaml, dump0, dump4) in corpus::corpus() {
        let mut check = |what: &str, got: Result<String, String>, want: Result<String, String>| {
            if got != want {
                failures.push(format!(
                    "{what} of {v:?}\n  got:  {got:?}\n  want: {want:?}"
                ));
            }
        };
        check("to_s", Ok(to_s(&v)), Ok(to_s_.to_string()));
        check("inspect", Ok(inspect(&v)), Ok(insp.to_string()));
        check(
            "inspect(ascii)",
            Ok(inspect_with(&v, false)),
            Ok(insp_ascii.to_string()),
        );
        check("to_json", render_err(to_json(&v)), expect(json));
        check("to_yaml", render_err(to_yaml(&v)), expect(yaml));
        check("dump0", Ok(explain_dump(&v, 0)), Ok(dump0.to_string()));
        check("dump4", Ok(explain_dump(&v, 4)), Ok(dump4.to_string()));
    }
    assert!(
        failures.is_empty(),
        "{} mismatches:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn scanner_matches_psych() {
    let mut failures = Vec::new();
    for (text, want) in corpus::scan_corpus() {
        let want = want.map_err(str::to_string);
        let got = would_be_non_string(text);
        if got != want {
            failures.push(format!("{text:?}: got {got:?}, want {want:?}"));
        }
    }
    assert!(
        failures.is_empty(),
        "{} mismatches:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

fn from_json(j: &serde_json::Value) -> Value {
    match j {
        serde_json::Value::Null => Value::Null,
        serde_json::Value::Bool(x) => Value::Bool(*x),
        serde_json::Value::Number(n) => n
            .as_i64()
            .map_or_else(|| Value::Float(n.as_f64().unwrap_or(0.0)), Value::Int),
        serde_json::Value::String(x) => Value::String(x.clone()),
        serde_json::Value::Array(x) => Value::Array(x.iter().map(from_json).collect()),
        serde_json::Value::Object(x) if x.contains_key("__f") => {
            // Floats travel as Ruby's text so that they parse exactly.
            Value::Float(
                x["__f"]
                    .as_str()
                    .and_then(|t| t.parse().ok())
                    .unwrap_or(f64::NAN),
            )
        }
        serde_json::Value::Object(x) => Value::Hash(
            x.iter()
                .map(|(k, e)| (Value::String(k.clone()), from_json(e)))
                .collect(),
        ),
    }
}

/// Bulk comparison with Ruby on random values: run `ruby tests/data/render/fuzz.rb SEED` for a few seeds into
/// one file, then `RENDER_FUZZ=that.jsonl cargo test -- --ignored` (15 000 values pass). Each line
/// is `{"v": value, "yaml": .., "json": .., "inspect": .., "to_s": ..}`, errors as `ERR <message>`.
#[test]
#[ignore]
fn fuzz_file_matches_ruby() {
    let Ok(path) = std::env::var("RENDER_FUZZ") else {
        return;
    };
    let text = std::fs::read_to_string(path).expect("fuzz file");
    let mut failures = Vec::new();
    for line in text.lines() {
        let rec: serde_json::Value = serde_json::from_str(line).expect("json line");
        let v = from_json(&rec["v"]);
        let flat = |r: Result<String, RenderError>| r.unwrap_or_else(|e| format!("ERR {e}"));
        for (what, got) in [
            ("yaml", flat(to_yaml(&v))),
            ("json", flat(to_json(&v))),
            ("inspect", inspect(&v)),
            ("to_s", to_s(&v)),
        ] {
            let want = rec[what].as_str().unwrap_or_default();
            if got != want {
                failures.push(format!(
                    "{what} of {v:?}\n  got:  {got:?}\n  want: {want:?}"
                ));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} mismatches:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn big_values_render_quickly() {
    let big = h((0..20_000)
        .map(|n| {
            (
                s(&format!("key{n}")),
                a(vec![
                    s("yes"),
                    i(n),
                    f(n as f64 / 3.0),
                    s("a long value with words in it"),
                ]),
            )
        })
        .collect());
    let y = to_yaml(&big).expect("yaml");
    let j = to_json(&big).expect("json");
    let d = explain_dump(&big, 2);
    assert!(
        y.starts_with("---\nkey0:\n- 'yes'\n- 0\n- 0.0\n"),
        "{}",
        &y[..40]
    );
    assert!(j.len() > 100_000 && d.len() > 100_000);
}

/// Ruby `Float#to_s` at the edges of its fixed and exponent notations.
#[test]
fn ruby_float_format() {
    let cases = [
        (1e14, "100000000000000.0"),
        (1e15, "1.0e+15"),
        (123456789012345.6, "123456789012345.6"),
        (1234567890123456.7, "1234567890123456.8"),
        (0.0001, "0.0001"),
        (0.00001, "1.0e-05"),
        (-0.0, "-0.0"),
        (1e100, "1.0e+100"),
        (1.0 / 3.0, "0.3333333333333333"),
        (5e-324, "5.0e-324"),
        (9007199254740993.0, "9.007199254740992e+15"),
    ];
    for (f, want) in cases {
        assert_eq!(float_to_s(f), want);
    }
}
