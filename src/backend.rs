//! Data providers' backend functions: `yaml_data`, `json_data` and `hocon_data`
//! (data_hash), `eyaml_lookup_key`, the external `command` backend and embedders' own
//! backends, with each data file read and parsed at most once per process.

pub mod command;
pub mod custom;
pub mod eyaml;
pub mod hocon;
pub mod indexed;

use crate::error::{Error, Result};
use crate::fs::Fs;
use crate::scope::Strict;
use crate::value::{Map, Value};
use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex, OnceLock};

/// The hash a data_hash function returned: parsed, or read entry by entry.
#[derive(Debug)]
pub enum DataHash {
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
    /// The value of a top-level key (an error only if the file, read entry by entry, turns
    /// out not to parse after all).
    pub fn get(&self, key: &str) -> Result<Option<Value>> {
        match self {
            DataHash::Parsed { map, .. } => Ok(map.get(&crate::value::StrKey(key)).cloned()),
            DataHash::Indexed(f) => f.get(key),
        }
    }

    /// The string keys, in file order.
    pub fn keys(&self) -> Vec<&str> {
        match self {
            DataHash::Parsed { map, .. } => map.keys().filter_map(Value::as_str).collect(),
            DataHash::Indexed(f) => f.keys().collect(),
        }
    }

    /// The Ruby class that makes the value of `key` invalid for Puppet, if any.
    pub fn invalid_class(&self, key: &str) -> Option<&'static str> {
        match self {
            DataHash::Parsed { invalid, .. } => invalid
                .iter()
                .find(|(k, _)| k.as_str() == Some(key))
                .map(|(_, c)| *c),
            DataHash::Indexed(f) => f.invalid_class(key),
        }
    }
}

/// A data file as its data_hash function returned it, with the warnings it caused.
#[derive(Debug)]
struct Loaded {
    result: std::result::Result<Arc<DataHash>, Error>,
    warnings: Vec<String>,
}

/// Parsed data files, shared by every lookup of the process (and by the threads of a
/// batch): each file is read and parsed at most once; nothing is kept between processes.
/// Every file a lookup reads is read through this store's [`Fs`] (the disk, or a git
/// revision for `diff`).
#[derive(Debug, Clone)]
pub struct DataFiles {
    shared: Arc<Mutex<HashMap<String, Arc<OnceLock<Loaded>>>>>,
    fs: Arc<dyn Fs>,
}

impl Default for DataFiles {
    fn default() -> DataFiles {
        DataFiles::with_fs(crate::fs::disk())
    }
}

impl DataFiles {
    /// Data files read through `fs`.
    pub fn with_fs(fs: Arc<dyn Fs>) -> DataFiles {
        DataFiles {
            shared: Arc::default(),
            fs,
        }
    }

    /// The file system every lookup of these sessions reads.
    pub fn fs(&self) -> &Arc<dyn Fs> {
        &self.fs
    }

    /// The hash a data_hash function returns for `path`. Warnings (Puppet 7's non-hash
    /// files) are appended to `warnings` every time the file is used.
    pub fn data_hash(
        &self,
        function: &str,
        path: &str,
        strict: Strict,
        warnings: &mut Vec<String>,
    ) -> Result<Arc<DataHash>> {
        let cell = {
            let mut map = self.shared.lock().unwrap_or_else(|e| e.into_inner());
            map.entry(format!("{function}\0{path}"))
                .or_default()
                .clone()
        };
        let loaded = cell.get_or_init(|| {
            let mut w = Vec::new();
            let result = load(&*self.fs, function, path, strict, &mut w).map(Arc::new);
            Loaded {
                result,
                warnings: w,
            }
        });
        warnings.extend(loaded.warnings.iter().cloned());
        loaded.result.clone()
    }
}

fn load(
    fs: &dyn Fs,
    function: &str,
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
    match function {
        // Read entry by entry when the structural pass vouches for the file.
        "yaml_data" => match indexed::IndexedFile::new(indexed::Format::Yaml, path, bytes) {
            Ok(f) => Ok(DataHash::Indexed(f)),
            Err(bytes) => yaml_data(&bytes, path, strict, warnings),
        },
        "hocon_data" => match hocon::parse_hocon(&String::from_utf8_lossy(&bytes)) {
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
        "json_data" => match indexed::IndexedFile::new(indexed::Format::Json, path, bytes) {
            Ok(f) => Ok(DataHash::Indexed(f)),
            Err(bytes) => {
                json_data(&String::from_utf8_lossy(&bytes), path).map(|map| DataHash::Parsed {
                    map,
                    invalid: Vec::new(),
                })
            }
        },
        other => Err(Error::issue(format!(
            "Unable to find 'data_hash' function named '{other}'"
        ))),
    }
}

fn yaml_data(
    bytes: &[u8],
    path: &str,
    strict: Strict,
    warnings: &mut Vec<String>,
) -> Result<DataHash> {
    let doc = crate::yaml::load_document(bytes)
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
    match crate::json::parse(text) {
        Ok(Value::Hash(h)) => Ok(h),
        Ok(other) => Err(Error::Puppet(format!(
            "Value returned from data_hash function 'json_data', when using location '{path}', has wrong type, expects a Hash value, got {}",
            crate::types::simple_name(&other)
        ))),
        Err(e) => Err(Error::lookup(format!("Unable to parse ({path}): {e}"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::parse as parse_json;

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
