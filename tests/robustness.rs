//! No input makes the library panic: random keys, interpolations, data and configurations
//! (a small deterministic fuzz; errors are fine, panics are not).

use hiera_engine::environment::EnvOptions;
use hiera_engine::scope::Scope;
use hiera_engine::{Session, Settings};
use hiera_value::{Map, Value};

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn pick<'a>(&mut self, xs: &[&'a str]) -> &'a str {
        xs[(self.next() % xs.len() as u64) as usize]
    }
    fn text(&mut self, parts: &[&str], n: usize) -> String {
        (0..1 + self.next() as usize % n)
            .map(|_| self.pick(parts))
            .collect()
    }
}

const KEY_PARTS: &[&str] = &[
    "a",
    "b",
    ".",
    "'",
    "\"",
    "0",
    "-1",
    "::",
    "x.y",
    " ",
    "lookup_options",
    "c",
];
const INTERP_PARTS: &[&str] = &[
    "%{",
    "}",
    "facts.os.family",
    "::fqdn",
    "lookup('a')",
    "alias('b')",
    "literal('%')",
    "scope('x')",
    "hiera(\"c\")",
    "'",
    "\"",
    ".",
    "nope",
    "%",
    "{",
    "text",
    "trusted.certname",
    "foo(",
    ")",
];
const YAML_VALUES: &[&str] = &[
    "1",
    "yes",
    "~",
    "[1, 2]",
    "{x: 1}",
    "'--drop'",
    "2024-01-01",
    ":sym",
    "&a [1]",
    "*a",
    "0x1F",
    "!!binary aGk=",
    "\"%{lookup('a')}\"",
    "[",
    "{",
    "- x",
    "|\n  lit",
    ">-\n  fold",
];

#[test]
fn random_inputs_never_panic() {
    let mut rng = Rng(0x9e3779b97f4a7c15);
    let dir = std::env::temp_dir().join(format!("hiera-lookup-fuzz-{}", std::process::id()));
    for round in 0..300 {
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("data")).unwrap();
        let merge = rng.pick(&[
            "first",
            "unique",
            "hash",
            "deep",
            "{strategy: deep, knockout_prefix: '--'}",
            "bogus",
        ]);
        let mut data = format!(
            "lookup_options:\n  a: {{merge: {merge}}}\n  '^b': {{convert_to: {}}}\n",
            rng.pick(&["Sensitive", "Integer", "[String, '%x']", "'Foo['"])
        );
        for k in ["a", "b", "c", "x"] {
            let v = if rng.next().is_multiple_of(2) {
                format!("\"{}\"", rng.text(INTERP_PARTS, 6).replace('"', "'"))
            } else {
                rng.pick(YAML_VALUES).to_string()
            };
            data.push_str(&format!("{k}: {v}\n"));
        }
        std::fs::write(dir.join("data/common.yaml"), &data).unwrap();
        let path = rng.text(
            &[
                "%{facts.os.family}",
                "/",
                "x",
                "%{::nope}",
                "common",
                ".yaml",
                "*",
                "{a,b}",
                "%{",
            ],
            4,
        );
        let config = format!(
            "version: {}\nhierarchy:\n  - name: one\n    {}: \"{path}\"\n  - name: common\n    path: common.yaml\n",
            rng.pick(&["5", "4", "3", "'5'", "6"]),
            rng.pick(&["path", "glob", "paths", "mapped_paths", "uri"]),
        );
        std::fs::write(dir.join("hiera.yaml"), &config).unwrap();
        let mut facts = Map::default();
        facts.insert(
            Value::str("os"),
            Value::Hash(
                [(Value::str("family"), Value::str("%{lookup('a')}"))]
                    .into_iter()
                    .collect(),
            ),
        );
        facts.insert(Value::str("clientcert"), Value::str("n1.example.com"));
        let env = EnvOptions {
            hiera_config: Some(dir.join("hiera.yaml")),
            cwd: dir.clone(),
            ..Default::default()
        };
        let Ok(layers) = env.layers() else { continue };
        let settings = Settings {
            explain: round % 3 == 0,
            ..Settings::default()
        };
        let mut session = Session::new(Scope::from_facts(facts, "production"), layers, settings);
        for _ in 0..4 {
            let key = rng.text(KEY_PARTS, 5);
            let _ = session.lookup(&[key], None);
        }
        if let Some(ex) = session.explainer() {
            let _ = ex.explain();
            let _ = hiera_formats::render::to_json(&ex.to_hash());
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}
