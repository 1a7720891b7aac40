//! The bodies of the fuzz targets: `fuzz/fuzz_targets/<name>.rs` (cargo-fuzz, nightly) calls
//! `run` with `<name>`, and so does `tests/fuzz_smoke.rs` on stable, which replays the seed
//! corpora in `fuzz/corpus/<name>/` and a few thousand deterministic mutations of them. A
//! target fails only by panicking (or by exhausting the stack or memory): every input, however
//! bad, must give a value or an error. fuzz/README.md says how to run them longer.

use hiera_value::value::{Map, Value};

/// A small deterministic generator (xorshift64*): the same inputs on every run and machine,
/// for the fuzz smoke test and the lazy reader's differential tests.
pub struct Rng(pub u64);

impl Rng {
    /// The next 64 random bits.
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    /// A number below `n` (0 when `n` is 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
    /// One of `xs` (which must not be empty).
    pub fn pick<'a>(&mut self, xs: &[&'a str]) -> &'a str {
        xs[self.below(xs.len())]
    }
    /// True `percent` times in a hundred.
    pub fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }
}

/// The target names, each a directory of fuzz/corpus/ and a file of fuzz/fuzz_targets/.
pub const TARGETS: &[&str] = &[
    "yaml",
    "hiera_config",
    "key_interpolation",
    "type_expr",
    "hocon",
    "json",
];

/// Runs target `name` on `data` on a thread with the stack lookups run on (the depth limits
/// are measured against it), so that a fuzzer's main thread does not report overflows the
/// binary cannot have. A panic is passed on.
pub fn run(name: &str, data: &[u8]) {
    let data = data.to_vec();
    let name = name.to_string();
    let r = std::thread::Builder::new()
        .stack_size(hiera_value::limits::LOOKUP_STACK_SIZE)
        .spawn(move || body(&name, &data))
        .expect("a fuzz thread")
        .join();
    if let Err(p) = r {
        std::panic::resume_unwind(p);
    }
}

fn body(name: &str, data: &[u8]) {
    match name {
        "yaml" => yaml(data),
        "hiera_config" => hiera_config(data),
        "key_interpolation" => key_interpolation(data),
        "type_expr" => type_expr(data),
        "hocon" => hocon(data),
        "json" => json(data),
        other => panic!("no fuzz target {other}"),
    }
}

/// Every rendering of a loaded value (JSON, YAML, `to_s`, `inspect`) must also end.
fn render_all(v: &Value) {
    let _ = hiera_formats::render::to_json(v);
    let _ = hiera_formats::render::to_yaml(v);
    let _ = hiera_value::text::to_s(v);
    let _ = hiera_value::text::inspect(v);
}

/// A data file as Psych reads it, and as the structural pass indexes it: the pass (with or
/// without its shortcut for common lines, which must agree) indexes only files that Psych
/// reads as a hash, and the file read entry by entry has exactly its keys and values.
pub(crate) fn yaml(data: &[u8]) {
    if let Ok(v) = hiera_formats::yaml::load_bytes(data) {
        render_all(&v);
    }
    let doc = hiera_formats::yaml::load_document(data);
    let index = hiera_formats::yaml::index::index(data);
    let general = hiera_formats::yaml::index::index_general(data);
    assert_eq!(
        index.as_ref().map(|ix| &ix.entries),
        general.as_ref().map(|ix| &ix.entries),
        "the structural pass's shortcut disagrees with its general scan"
    );
    if index.is_some() {
        let Ok(Value::Hash(map)) = doc.map(|d| d.value) else {
            panic!("indexed, but Psych does not read a hash");
        };
        use crate::backend::indexed::{Format, IndexedFile};
        let Ok(file) = IndexedFile::new(Format::Yaml, "fuzz", data.to_vec()) else {
            panic!("indexed, but not as a data file");
        };
        let full: Vec<Option<&str>> = map.keys().map(Value::as_str).collect();
        let keys: Vec<Option<&str>> = file.keys().into_iter().map(Some).collect();
        assert_eq!(keys, full, "indexed keys differ from Psych's");
        for (k, v) in &map {
            let got = file.get(k.as_str().unwrap_or_default());
            assert_eq!(got.ok().flatten().as_ref(), Some(v), "value of {k:?}");
        }
    }
}

/// A JSON data file (the json gem's parser).
pub(crate) fn json(data: &[u8]) {
    if let Ok(text) = std::str::from_utf8(data) {
        if let Ok(v) = hiera_formats::json::parse(text) {
            render_all(&v);
        }
    }
}

/// A HOCON data file (ruby-hocon), includes and substitutions included.
pub(crate) fn hocon(data: &[u8]) {
    if let Ok(text) = std::str::from_utf8(data) {
        if let Ok(v) = hiera_formats::hocon::parse_hocon(text) {
            render_all(&v);
        }
    }
}

/// A `--type` expression, checked against a few values and printed back.
pub(crate) fn type_expr(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let _ = hiera_types::parse(text);
    if let Ok(t) = hiera_types::parse_cli(text) {
        let _ = t.to_string();
        let mut h = Map::default();
        h.insert(Value::str("a"), Value::Int(1));
        for v in [
            Value::Null,
            Value::Int(3),
            Value::str("abc"),
            Value::Array(vec![Value::str("x"), Value::Float(1.5)]),
            Value::Hash(h),
        ] {
            if !t.is_instance(&v) {
                let _ = hiera_types::describe_mismatch("Found value", &t, &v);
            }
        }
        hiera_types::take_regex_limit_error();
    }
}

/// A lookup key (dotted segments, quoting) and a string interpolated in a node's scope
/// (variables, `%{lookup(...)}` and the other methods, with no data to find).
pub(crate) fn key_interpolation(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let _ = crate::key::split_key(text);
    let _ = crate::key::LookupKey::parse(text);
    let mut facts = Map::default();
    facts.insert(Value::str("hostname"), Value::str("n1"));
    facts.insert(Value::str("list"), Value::Array(vec![Value::Int(1)]));
    let mut os = Map::default();
    os.insert(Value::str("family"), Value::str("Debian"));
    facts.insert(Value::str("os"), Value::Hash(os));
    let scope = crate::scope::Scope::from_facts(facts, "production");
    let mut s = crate::Session::new(scope, Default::default(), Default::default());
    if let Ok(v) = s.interpolate(&Value::str(text), true) {
        render_all(&v);
    }
}

/// A hiera.yaml, loaded as the global layer's configuration.
pub(crate) fn hiera_config(data: &[u8]) {
    use std::io::Write;
    thread_local! {
        static DIR: std::path::PathBuf = {
            let d = std::env::temp_dir().join(format!(
                "hiera-lookup-fuzz-{}-{:?}",
                std::process::id(),
                std::thread::current().id()
            ));
            let _ = std::fs::create_dir_all(&d);
            d
        };
    }
    let path = DIR.with(|d| d.join("hiera.yaml"));
    let written = std::fs::File::create(&path).and_then(|mut f| f.write_all(data));
    if written.is_err() {
        return;
    }
    let ctx = crate::config::LoadContext {
        layer: crate::config::Layer::Global,
        codedir: std::path::PathBuf::from("/nonexistent/codedir"),
        strict_off: false,
    };
    let mut warnings = Vec::new();
    let _ = crate::config::HieraConfig::load(&path, &ctx, &mut warnings);
    let _ = std::fs::remove_file(&path);
    if let Some(d) = path.parent() {
        let _ = std::fs::remove_dir(d);
    }
}
