//! Data providers' backend functions: `yaml_data`, `json_data` and `hocon_data`
//! (data_hash), `eyaml_lookup_key`, the external `command` backend and embedders' own
//! backends, with each data file read and parsed at most once per process.

pub mod command;
pub mod custom;
pub mod eyaml;
pub mod hocon;

use crate::error::{Error, Result};
use crate::scope::Strict;
use crate::value::{Map, Value};
use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex, OnceLock};

/// The hash a data_hash function returned: parsed, or read from the parse cache.
#[derive(Debug)]
pub enum DataHash {
    Parsed {
        map: Map,
        /// Top-level keys whose values hold Ruby objects that Puppet rejects when the key
        /// is looked up (symbols), with the class to name in the error.
        invalid: Vec<(Value, &'static str)>,
    },
    Cached(crate::cache::Table),
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
    /// The value of a top-level key.
    pub fn get(&self, key: &str) -> Option<Value> {
        match self {
            DataHash::Parsed { map, .. } => map.get(&crate::value::StrKey(key)).cloned(),
            DataHash::Cached(t) => t.get(key),
        }
    }

    /// The string keys, in file order.
    pub fn keys(&self) -> Vec<&str> {
        match self {
            DataHash::Parsed { map, .. } => map.keys().filter_map(Value::as_str).collect(),
            DataHash::Cached(t) => t.keys().collect(),
        }
    }

    /// The Ruby class that makes the value of `key` invalid for Puppet, if any.
    pub fn invalid_class(&self, key: &str) -> Option<&'static str> {
        match self {
            DataHash::Parsed { invalid, .. } => invalid
                .iter()
                .find(|(k, _)| k.as_str() == Some(key))
                .map(|(_, c)| *c),
            DataHash::Cached(t) => t.invalid.iter().find(|(k, _)| k == key).map(|(_, c)| *c),
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
/// batch): each file is read and parsed at most once.
#[derive(Debug, Clone, Default)]
pub struct DataFiles {
    shared: Arc<Mutex<HashMap<String, Arc<OnceLock<Loaded>>>>>,
    /// Where parsed YAML files are cached between runs (`None`: no cache).
    cache_dir: Option<std::path::PathBuf>,
}

impl DataFiles {
    /// Data files shared by sessions, with the parse cache in `cache_dir`.
    pub fn with_cache(cache_dir: Option<std::path::PathBuf>) -> DataFiles {
        DataFiles {
            shared: Arc::default(),
            cache_dir,
        }
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
            let result =
                load(function, path, strict, self.cache_dir.as_deref(), &mut w).map(Arc::new);
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
    function: &str,
    path: &str,
    strict: Strict,
    cache_dir: Option<&Path>,
    warnings: &mut Vec<String>,
) -> Result<DataHash> {
    // Big YAML files come from the parse cache when it is still valid for them.
    let stamp = match (function, cache_dir) {
        ("yaml_data", Some(dir)) => std::fs::metadata(path)
            .ok()
            .map(|m| crate::cache::Stamp::of(&m))
            .filter(|s| s.size() >= crate::cache::MIN_SIZE)
            .map(|s| (dir, s)),
        _ => None,
    };
    if let Some((dir, stamp)) = &stamp {
        if let Some(t) = crate::cache::read(dir, path, stamp) {
            return Ok(DataHash::Cached(t));
        }
    }
    let bytes = std::fs::read(Path::new(path)).map_err(|e| {
        Error::lookup(format!(
            "Unable to read ({path}): {}",
            crate::error::io_reason(&e)
        ))
    })?;
    match function {
        "yaml_data" => {
            let hash = yaml_data(&bytes, path, strict, warnings)?;
            if let (Some((dir, stamp)), DataHash::Parsed { map, invalid }) = (&stamp, &hash) {
                // Only a file that parsed to a hash (no warnings) is worth caching.
                if !map.is_empty() {
                    crate::cache::write(dir, path, stamp, map, invalid);
                }
            }
            Ok(hash)
        }
        "hocon_data" => match hocon::parse_hocon(&String::from_utf8_lossy(&bytes)) {
            Ok(Value::Hash(map)) => Ok(DataHash::Parsed {
                map,
                invalid: Vec::new(),
            }),
            Ok(_) => Ok(DataHash::default()),
            Err(e) => Err(Error::lookup(format!("Unable to parse ({path}): {e}"))),
        },
        "json_data" => {
            json_data(&String::from_utf8_lossy(&bytes), path).map(|map| DataHash::Parsed {
                map,
                invalid: Vec::new(),
            })
        }
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
    match parse_json(text) {
        Ok(Value::Hash(h)) => Ok(h),
        Ok(other) => Err(Error::Puppet(format!(
            "Value returned from data_hash function 'json_data', when using location '{path}', has wrong type, expects a Hash value, got {}",
            crate::types::simple_name(&other)
        ))),
        Err(e) => Err(Error::lookup(format!("Unable to parse ({path}): {e}"))),
    }
}

/// JSON with key order kept, as the json gem reads it.
pub fn parse_json(text: &str) -> std::result::Result<Value, String> {
    let v: serde_json::Value = serde_json::from_str(text).map_err(|e| json_message(text, &e))?;
    Ok(from_json(v))
}

/// The json gem (2.6) words its errors by where its state machine stopped: a failing
/// array element raises at once (`451: unexpected token at '<rest>'`), a failing object
/// gives up silently so the document fails at the object's start (`859: …`).
fn json_message(text: &str, e: &serde_json::Error) -> String {
    let b = text.as_bytes();
    let start = skip_ws(b, 0);
    let (line, pos) = match json_value(b, start) {
        Ok(end) => {
            let end = skip_ws(b, end);
            if end == b.len() {
                // Our grammar accepted what serde_json did not: keep serde's words.
                return e.to_string();
            }
            (859, end)
        }
        Err(JsonFail::Silent) => (859, start),
        Err(JsonFail::Raise(p)) => (451, p),
    };
    format!(
        "{line}: unexpected token at '{}'",
        String::from_utf8_lossy(&b[pos.min(b.len())..])
    )
}

enum JsonFail {
    /// The value did not parse; the caller decides where to report it.
    Silent,
    /// An array raised at this position.
    Raise(usize),
}

fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && matches!(b[i], b' ' | b'\t' | b'\n' | b'\r') {
        i += 1;
    }
    i
}

fn json_value(b: &[u8], i: usize) -> std::result::Result<usize, JsonFail> {
    match b.get(i) {
        Some(b'{') => json_object(b, i),
        Some(b'[') => json_array(b, i),
        Some(b'"') => json_string(b, i).ok_or(JsonFail::Silent),
        Some(_) => {
            for lit in [&b"true"[..], b"false", b"null"] {
                if b[i..].starts_with(lit) {
                    return Ok(i + lit.len());
                }
            }
            json_number(b, i).ok_or(JsonFail::Silent)
        }
        None => Err(JsonFail::Silent),
    }
}

fn json_string(b: &[u8], i: usize) -> Option<usize> {
    let mut j = i + 1;
    while j < b.len() {
        match b[j] {
            b'"' => return Some(j + 1),
            b'\\' => j += 2,
            c if c < 0x20 => return None,
            _ => j += 1,
        }
    }
    None
}

fn json_number(b: &[u8], i: usize) -> Option<usize> {
    let mut j = i;
    if b.get(j) == Some(&b'-') {
        j += 1;
    }
    let digits = |j: &mut usize| {
        let s = *j;
        while *j < b.len() && b[*j].is_ascii_digit() {
            *j += 1;
        }
        *j > s
    };
    if !digits(&mut j) {
        return None;
    }
    if b.get(j) == Some(&b'.') {
        j += 1;
        if !digits(&mut j) {
            return None;
        }
    }
    if matches!(b.get(j), Some(b'e' | b'E')) {
        j += 1;
        if matches!(b.get(j), Some(b'+' | b'-')) {
            j += 1;
        }
        if !digits(&mut j) {
            return None;
        }
    }
    Some(j)
}

fn json_array(b: &[u8], i: usize) -> std::result::Result<usize, JsonFail> {
    let mut j = skip_ws(b, i + 1);
    if b.get(j) == Some(&b']') {
        return Ok(j + 1);
    }
    loop {
        j = match json_value(b, j) {
            Ok(end) => end,
            Err(JsonFail::Silent) => return Err(JsonFail::Raise(j)),
            Err(r) => return Err(r),
        };
        j = skip_ws(b, j);
        match b.get(j) {
            Some(b',') => j = skip_ws(b, j + 1),
            Some(b']') => return Ok(j + 1),
            _ => return Err(JsonFail::Raise(j)),
        }
    }
}

fn json_object(b: &[u8], i: usize) -> std::result::Result<usize, JsonFail> {
    let mut j = skip_ws(b, i + 1);
    if b.get(j) == Some(&b'}') {
        return Ok(j + 1);
    }
    loop {
        if b.get(j) != Some(&b'"') {
            return Err(JsonFail::Silent);
        }
        j = json_string(b, j).ok_or(JsonFail::Silent)?;
        j = skip_ws(b, j);
        if b.get(j) != Some(&b':') {
            return Err(JsonFail::Silent);
        }
        j = skip_ws(b, j + 1);
        j = json_value(b, j)?;
        j = skip_ws(b, j);
        match b.get(j) {
            Some(b',') => j = skip_ws(b, j + 1),
            Some(b'}') => return Ok(j + 1),
            _ => return Err(JsonFail::Silent),
        }
    }
}

pub fn from_json(v: serde_json::Value) -> Value {
    match v {
        serde_json::Value::Null => Value::Null,
        serde_json::Value::Bool(b) => Value::Bool(b),
        // arbitrary_precision keeps the number's text: the json gem makes an Integer of
        // anything without a fraction or exponent (so `-0` is 0).
        serde_json::Value::Number(n) => {
            let t = n.to_string();
            if t.contains(['.', 'e', 'E']) {
                Value::Float(t.parse().unwrap_or(0.0))
            } else {
                match t.parse::<i64>() {
                    Ok(i) => Value::Int(i),
                    Err(_) => Value::BigInt(t),
                }
            }
        }
        serde_json::Value::String(s) => Value::String(s),
        serde_json::Value::Array(a) => Value::Array(a.into_iter().map(from_json).collect()),
        serde_json::Value::Object(o) => Value::Hash(
            o.into_iter()
                .map(|(k, v)| (Value::String(k), from_json(v)))
                .collect(),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        assert_eq!(parse_json("").unwrap_err(), "859: unexpected token at ''");
        assert_eq!(
            parse_json(r#"{"role": "web",}"#).unwrap_err(),
            r#"859: unexpected token at '{"role": "web",}'"#
        );
        assert_eq!(
            parse_json(r#"{"a": [1,}"#).unwrap_err(),
            "451: unexpected token at '}'"
        );
        assert_eq!(
            parse_json(r#"{"a": 1} x"#).unwrap_err(),
            "859: unexpected token at 'x'"
        );
        assert_eq!(
            parse_json("[1, 2").unwrap_err(),
            "451: unexpected token at ''"
        );
        assert_eq!(
            parse_json(r#" {"a":1"#).unwrap_err(),
            r#"859: unexpected token at '{"a":1'"#
        );
        assert_eq!(parse_json("-0").unwrap(), Value::Int(0));
        assert_eq!(parse_json("1.0e-7").unwrap(), Value::Float(1.0e-7));
    }
}
