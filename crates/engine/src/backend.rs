//! Data providers' backend functions: `yaml_data`, `json_data` and `hocon_data`
//! (data_hash), `eyaml_lookup_key`, the external `command` backend and embedders' own
//! backends, with each data file read and parsed at most once per process.

pub(crate) mod command;
pub use command::run_program;
pub mod custom;
pub mod eyaml;
#[cfg(test)]
mod fixture_tests;
use hiera_formats::format::{DataFormat, EYAML_LOOKUP_KEY};
use hiera_formats::hocon;
pub(crate) mod indexed;
pub(crate) mod puppet_function;

use crate::config::FunctionKind;
use crate::error::{Error, Result};
use crate::fs::Fs;
use crate::scope::Strict;
use hiera_value::value::{Map, Value};

use std::path::Path;
use std::sync::{Arc, LazyLock};

/// The hash a data_hash function returned: parsed, or read entry by entry.
#[derive(Debug)]
pub(crate) enum DataHash {
    Parsed {
        map: Map,
        /// Top-level keys whose values hold Ruby objects that Puppet rejects when the key
        /// is looked up (symbols), with the class to name in the error.
        invalid: Vec<(Value, &'static str)>,
    },
    /// A YAML or JSON file whose values are built when first asked for.
    Indexed(indexed::IndexedFile),
}

impl Default for DataHash {
    fn default() -> DataHash {
        DataHash::Parsed {
            map: Map::default(),
            invalid: Vec::new(),
        }
    }
}

impl DataHash {
    /// A hash a backend returned (no invalid values).
    pub(crate) fn from_map(map: Map) -> DataHash {
        DataHash::Parsed {
            map,
            invalid: Vec::new(),
        }
    }

    /// The value of a top-level key (an error only if the file, read entry by entry, turns
    /// out not to parse after all).
    pub(crate) fn get(&self, key: &str) -> Result<Option<Value>> {
        match self {
            DataHash::Parsed { map, .. } => Ok(map.get(&hiera_value::value::StrKey(key)).cloned()),
            DataHash::Indexed(f) => f.get(key),
        }
    }

    /// The string keys, in file order.
    pub(crate) fn keys(&self) -> Vec<&str> {
        match self {
            DataHash::Parsed { map, .. } => map.keys().filter_map(Value::as_str).collect(),
            DataHash::Indexed(f) => f.keys(),
        }
    }

    /// The Ruby class that makes the value of `key` invalid for Puppet, if any.
    pub(crate) fn invalid_class(&self, key: &str) -> Option<&'static str> {
        match self {
            DataHash::Parsed { invalid, .. } => invalid
                .iter()
                .find(|(k, _)| k.as_str() == Some(key))
                .map(|(_, c)| *c),
            DataHash::Indexed(f) => f.invalid_class(key),
        }
    }
}

/// The built-in backend functions, by hiera.yaml name. Adding a backend: one file that
/// implements a trait of [`custom`], and one line here.
static BUILTINS: LazyLock<[Builtin; 5]> = LazyLock::new(|| {
    let data = |f: DataFormat| Builtin::data_hash_fn(f.data_hash_function(), Arc::new(DataFile(f)));
    [
        data(DataFormat::Yaml),
        data(DataFormat::Json),
        data(DataFormat::Hocon),
        Builtin::lookup_key_fn(EYAML_LOOKUP_KEY, Arc::new(eyaml::EyamlLookupKey)),
        Builtin::lookup_key_fn("command", Arc::new(command::CommandBackend)),
    ]
});

/// A built-in backend function, resolved from its name when hiera.yaml is loaded.
#[derive(Clone)]
pub(crate) struct Builtin {
    /// The function name hiera.yaml uses.
    pub name: &'static str,
    /// What the function is.
    pub backend: BuiltinBackend,
}

/// A built-in backend: the same traits embedders implement.
#[derive(Clone)]
pub(crate) enum BuiltinBackend {
    /// A `data_hash` function.
    DataHash(Arc<dyn custom::DataHashBackend>),
    /// A `lookup_key` function.
    LookupKey(Arc<dyn custom::LookupKeyBackend>),
}

impl Builtin {
    fn data_hash_fn(name: &'static str, b: Arc<dyn custom::DataHashBackend>) -> Builtin {
        Builtin {
            name,
            backend: BuiltinBackend::DataHash(b),
        }
    }

    fn lookup_key_fn(name: &'static str, b: Arc<dyn custom::LookupKeyBackend>) -> Builtin {
        Builtin {
            name,
            backend: BuiltinBackend::LookupKey(b),
        }
    }

    /// The data_hash backend, if this is one.
    pub(crate) fn data_hash(&self) -> Option<Arc<dyn custom::DataHashBackend>> {
        match &self.backend {
            BuiltinBackend::DataHash(b) => Some(b.clone()),
            _ => None,
        }
    }

    /// The lookup_key backend, if this is one.
    pub(crate) fn lookup_key(&self) -> Option<Arc<dyn custom::LookupKeyBackend>> {
        match &self.backend {
            BuiltinBackend::LookupKey(b) => Some(b.clone()),
            _ => None,
        }
    }

    /// The built-in `kind` function called `name`, if there is one (else an embedder's
    /// backend must provide it). Resolved where a level is searched, so that hiera.yaml's
    /// model (`config`) knows function names only.
    pub(crate) fn resolve(kind: FunctionKind, name: &str) -> Option<&'static Builtin> {
        BUILTINS.iter().find(|b| {
            b.name == name
                && matches!(
                    (kind, &b.backend),
                    (FunctionKind::DataHash, BuiltinBackend::DataHash(_))
                        | (FunctionKind::LookupKey, BuiltinBackend::LookupKey(_))
                )
        })
    }
}

impl std::fmt::Debug for Builtin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Builtin({})", self.name)
    }
}

/// Built-ins are known by their (unique) names.
impl PartialEq for Builtin {
    fn eq(&self, other: &Builtin) -> bool {
        self.name == other.name
    }
}

/// `yaml_data`, `json_data`, `hocon_data`: the hash of a data file in their format, parsed
/// once per process.
struct DataFile(DataFormat);

impl custom::DataHashBackend for DataFile {
    /// Outside the engine (`options` holds `path`): the file parsed as YAML, JSON or HOCON
    /// by its extension, Puppet 8's rules.
    fn data_hash(&self, options: &Map) -> std::result::Result<Map, String> {
        let path = options
            .get(&Value::str("path"))
            .and_then(Value::as_str)
            .ok_or("a data_hash function needs a 'path' option")?;
        let format = DataFormat::of_path(Path::new(path)).unwrap_or(DataFormat::Yaml);
        let hash = load(
            &*crate::fs::disk(),
            format,
            path,
            Strict::Error,
            &mut Vec::new(),
        )
        .map_err(|e| e.to_string())?;
        let mut map = Map::default();
        for k in hash.keys() {
            if let Some(v) = hash.get(k).map_err(|e| e.to_string())? {
                map.insert(Value::str(k), v);
            }
        }
        Ok(map)
    }

    /// Their signature takes `Struct[{path => String[1]}]`: any other option falls through
    /// to the same ArgumentError as a missing path.
    fn data_hash_call(
        &self,
        call: &custom::Call,
        host: &mut dyn custom::Host,
    ) -> Result<Arc<DataHash>> {
        let Some(path) = call.path().filter(|_| call.options.is_empty()) else {
            return Err(call.missing_path("data_hash", ""));
        };
        host.load_data(self.0, path)
    }
}

/// `validate_data_value`: what a backend returned must be Puppet's RichData.
pub(crate) fn validate_data_value(
    fs: &dyn crate::fs::Fs,
    hash: &DataHash,
    root: &str,
    value: &Value,
    function: std::fmt::Arguments,
    location: &str,
) -> Result<()> {
    let got = if !rich_data(value) {
        hiera_types::infer_reduced(value).to_string()
    } else if let Some(class) = hash.invalid_class(root) {
        symbol_value_type(fs, root, location)
            .filter(|_| class == "Symbol")
            .unwrap_or_else(|| format!("Runtime[ruby, '{class}']"))
    } else {
        return Ok(());
    };
    // Named only here, on the error path: lookups call this for every value found.
    let function = function.to_string();
    let returned = if function.starts_with("lookup_key") {
        "returned from"
    } else {
        "in hash returned from"
    };
    // A function called without a location (a legacy data provider function) names none.
    let location = match location {
        "" => String::new(),
        l => format!(", when using location '{l}',"),
    };
    Err(Error::Puppet(format!(
        "Value for key '{root}', {returned} {function}{location} has wrong type, expects Puppet::LookupValue, got {got}"
    )))
}

/// The inferred type of a value holding symbols, read again from its YAML file with the
/// symbols kept (this error path is the only one that needs them).
fn symbol_value_type(fs: &dyn crate::fs::Fs, root: &str, path: &str) -> Option<String> {
    let bytes = fs.read(Path::new(path)).ok()?;
    let doc = hiera_formats::yaml::load_document_marking_symbols(&bytes).ok()?;
    let v = doc.value.get(root)?;
    Some(hiera_types::infer_reduced(v).to_string())
}

/// Puppet's `RichData`: hash keys must be strings or numbers, all the way down.
fn rich_data(v: &Value) -> bool {
    match v {
        Value::Array(a) => a.iter().all(rich_data),
        Value::Hash(h) => h.iter().all(|(k, v)| {
            (matches!(
                k,
                Value::String(_) | Value::Int(_) | Value::BigInt(_) | Value::Float(_)
            ) || k.binary_bytes().is_some())
                && rich_data(v)
        }),
        _ => true,
    }
}

/// Reads and parses the data file at `path` with the data_hash function of `format` (what
/// [`DataFiles`](crate::store::DataFiles) keeps, once per file).
pub(crate) fn load(
    fs: &dyn Fs,
    format: DataFormat,
    path: &str,
    strict: Strict,
    warnings: &mut Vec<String>,
) -> Result<DataHash> {
    let bytes = fs.read(Path::new(path)).map_err(|e| {
        Error::lookup(format!(
            "Unable to read ({path}): {}",
            crate::error::io_reason(&e)
        ))
    })?;
    match format {
        // Read entry by entry when the structural pass vouches for the file.
        DataFormat::Yaml => match indexed::IndexedFile::new(indexed::Format::Yaml, path, bytes) {
            Ok(f) => Ok(DataHash::Indexed(f)),
            Err(bytes) => yaml_data(&bytes, path, strict, warnings),
        },
        // `include file(...)` reads through `fs` too (a revision's own files in `diff`).
        DataFormat::Hocon => match hocon::parse_hocon_with(&String::from_utf8_lossy(&bytes), &|p| {
            fs.is_file(p).then(|| fs.read(p))
        }) {
            Ok(Value::Hash(map)) => Ok(DataHash::Parsed {
                map,
                invalid: Vec::new(),
            }),
            Ok(_) => Ok(DataHash::default()),
            Err(e) => match e.strip_prefix(hocon::RAW) {
                Some(raw) => Err(Error::run(raw.to_string())),
                None => Err(Error::lookup(format!("Unable to parse ({path}): {e}"))),
            },
        },
        DataFormat::Json => match indexed::IndexedFile::new(indexed::Format::Json, path, bytes) {
            Ok(f) => Ok(DataHash::Indexed(f)),
            Err(bytes) => {
                json_data(&String::from_utf8_lossy(&bytes), path).map(|map| DataHash::Parsed {
                    map,
                    invalid: Vec::new(),
                })
            }
        },
    }
}

fn yaml_data(
    bytes: &[u8],
    path: &str,
    strict: Strict,
    warnings: &mut Vec<String>,
) -> Result<DataHash> {
    let doc = hiera_formats::yaml::load_document(bytes)
        .map_err(|e| Error::lookup(format!("Unable to parse {}", e.puppet_message(path))))?;
    match doc.value {
        Value::Hash(map) => {
            let invalid = doc
                .ruby_values
                .into_iter()
                .map(|r| (r.key, r.class))
                .collect();
            Ok(DataHash::Parsed { map, invalid })
        }
        other => {
            let msg = format!("{path}: file does not contain a valid yaml hash");
            // An empty document (and a literal `false`) is `false` to Puppet, which never
            // raises for it.
            if strict == Strict::Error && !matches!(other, Value::Null | Value::Bool(false)) {
                return Err(Error::lookup(msg));
            }
            warnings.push(msg);
            Ok(DataHash::default())
        }
    }
}

fn json_data(text: &str, path: &str) -> Result<Map> {
    match hiera_formats::json::parse(text) {
        Ok(Value::Hash(h)) => Ok(h),
        Ok(other) => Err(Error::Puppet(format!(
            "Value returned from data_hash function 'json_data', when using location '{path}', has wrong type, expects a Hash value, got {}",
            hiera_types::simple_name(&other)
        ))),
        Err(e) => Err(Error::lookup(format!("Unable to parse ({path}): {e}"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hiera_formats::json::parse as parse_json;

    #[test]
    fn builtins_resolve_by_kind_and_name() {
        let yaml = Builtin::resolve(FunctionKind::DataHash, "yaml_data");
        assert!(yaml.and_then(Builtin::data_hash).is_some());
        assert!(yaml.and_then(Builtin::lookup_key).is_none());
        assert_eq!(format!("{yaml:?}"), "Some(Builtin(yaml_data))");
        assert_ne!(yaml, Builtin::resolve(FunctionKind::DataHash, "json_data"));
        assert!(
            Builtin::resolve(FunctionKind::LookupKey, "eyaml_lookup_key")
                .and_then(|b| b.lookup_key())
                .is_some()
        );
        assert!(Builtin::resolve(FunctionKind::LookupKey, "command").is_some());
        // The kind must match too, and other names are left to embedders' backends.
        assert!(Builtin::resolve(FunctionKind::LookupKey, "yaml_data").is_none());
        assert!(Builtin::resolve(FunctionKind::DataHash, "eyaml_lookup_key").is_none());
        assert!(Builtin::resolve(FunctionKind::DataDig, "yaml_data").is_none());
        assert!(Builtin::resolve(FunctionKind::DataHash, "my_backend").is_none());
    }

    #[test]
    fn builtins_answer_through_the_embedders_traits() {
        let dir = std::env::temp_dir().join(format!("hl-builtin-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("common.json");
        std::fs::write(&path, r#"{"a": 1, "b": "x"}"#).unwrap();
        let mut options = Map::default();
        options.insert(Value::str("path"), Value::str(path.display().to_string()));
        let json = Builtin::resolve(FunctionKind::DataHash, "json_data")
            .and_then(|b| b.data_hash())
            .expect("json_data is built in");
        let map = json.data_hash(&options).unwrap();
        assert_eq!(map.get(&Value::str("a")), Some(&Value::Int(1)));
        assert!(json.data_hash(&Map::default()).is_err());
        let eyaml = Builtin::resolve(FunctionKind::LookupKey, "eyaml_lookup_key")
            .and_then(|b| b.lookup_key())
            .expect("eyaml_lookup_key is built in");
        std::fs::write(dir.join("e.yaml"), "k: plain\n").unwrap();
        options.insert(
            Value::str("path"),
            Value::str(dir.join("e.yaml").display().to_string()),
        );
        assert_eq!(
            eyaml.lookup_key("k", &options),
            Ok(Some(Value::str("plain")))
        );
        assert_eq!(eyaml.lookup_key("missing", &options), Ok(None));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn json_keeps_order_and_types() {
        let v = parse_json(r#"{"b":1,"a":[1.5,null,true,"x"]}"#).unwrap();
        let Value::Hash(h) = v else { panic!() };
        let keys: Vec<_> = h.keys().map(|k| k.as_str().unwrap().to_string()).collect();
        assert_eq!(keys, ["b", "a"]);
        assert_eq!(
            h[&Value::str("a")],
            Value::Array(vec![
                Value::Float(1.5),
                Value::Null,
                Value::Bool(true),
                Value::str("x")
            ])
        );
    }

    #[test]
    fn json_errors_read_like_the_json_gem() {
        assert_eq!(parse_json("").unwrap_err(), "JSON::ParserError");
        assert_eq!(
            parse_json(r#"{"role": "web",}"#).unwrap_err(),
            r#"unexpected token at '{"role": "web",}'"#
        );
        assert_eq!(
            parse_json(r#"{"a": [1,}"#).unwrap_err(),
            "unexpected token at '}'"
        );
        assert_eq!(
            parse_json(r#"{"a": 1} x"#).unwrap_err(),
            "unexpected token at 'x'"
        );
        assert_eq!(parse_json("[1, 2").unwrap_err(), "unexpected token at ''");
        assert_eq!(
            parse_json(r#" {"a":1"#).unwrap_err(),
            r#"unexpected token at '{"a":1'"#
        );
        assert_eq!(parse_json("-0").unwrap(), Value::Int(0));
        assert_eq!(parse_json("1.0e-7").unwrap(), Value::Float(1.0e-7));
    }
}
