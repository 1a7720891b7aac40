//! A data file read entry by entry: the structural pass ([`hiera_formats::yaml::index`],
//! [`hiera_formats::json::index`]) found its top-level entries, and each value is built the first time
//! it is asked for. A lookup of one key in a 5,000-key common.yaml builds two entries (the key
//! and `lookup_options`) instead of the whole file.
//!
//! The structural pass answers only for files it has checked completely, so a value built
//! from its entry's bytes is the one the whole file gives. Should an entry ever fail to build
//! as expected, the whole file is parsed after all and answers for it, so the answer is the
//! full parser's in every case.

use crate::error::{Error, Result};
pub use hiera_formats::yaml::index::{Found, Index};
use hiera_value::value::{Map, Value};
use std::sync::OnceLock;

/// Built entries are kept in chunks of this many, each made when one of its entries is
/// first built: a lookup of one key in a 5,000-key file makes two chunks, not 5,000 slots.
const CHUNK: usize = 64;

type Slot = OnceLock<Box<Built>>;

/// The file's format, which decides how an entry is built.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Format {
    /// An entry is `key: value` YAML text, read by [`hiera_formats::yaml::load_document`].
    Yaml,
    /// An entry is a JSON value, read by [`hiera_formats::json::parse`].
    Json,
}

/// A built entry: the value, and the Ruby class that makes it invalid for Puppet (symbols).
#[derive(Debug)]
struct Built {
    value: Value,
    invalid: Option<&'static str>,
}

/// What the whole file gives, parsed only if an entry could not be built on its own.
type Full = std::result::Result<(Map, Vec<(Value, &'static str)>), Error>;

/// A data file whose entries are built on demand.
#[derive(Debug)]
pub(crate) struct IndexedFile {
    format: Format,
    path: String,
    bytes: Vec<u8>,
    index: Index,
    built: Box<[OnceLock<Box<[Slot]>>]>,
    full: OnceLock<Full>,
}

impl IndexedFile {
    /// The file at `path` (for messages), if the structural pass can index `bytes`.
    pub(crate) fn new(
        format: Format,
        path: &str,
        bytes: Vec<u8>,
    ) -> std::result::Result<Self, Vec<u8>> {
        let index = match format {
            Format::Yaml => hiera_formats::yaml::index::index(&bytes),
            Format::Json => hiera_formats::json::index::index(&bytes),
        };
        let Some(index) = index else {
            return Err(bytes);
        };
        let built = (0..index.len().div_ceil(CHUNK))
            .map(|_| OnceLock::new())
            .collect();
        Ok(IndexedFile {
            format,
            path: path.to_string(),
            bytes,
            index,
            built,
            full: OnceLock::new(),
        })
    }

    /// The value of a top-level key.
    pub(crate) fn get(&self, key: &str) -> Result<Option<Value>> {
        match self.find(key) {
            Some(b) => b.map(|b| Some(b.value.clone())),
            None => Ok(None),
        }
    }

    /// The keys, in file order (a key written twice where it is first written, as in the
    /// whole file's hash).
    pub(crate) fn keys(&self) -> Vec<&str> {
        if !self.index.distinct(&self.bytes) {
            if let Ok((map, _)) = self.full() {
                return map.keys().filter_map(Value::as_str).collect();
            }
        }
        (0..self.index.len())
            .map(|i| self.index.key(&self.bytes, i))
            .collect()
    }

    /// The Ruby class that makes the value of `key` invalid for Puppet, if any.
    pub(crate) fn invalid_class(&self, key: &str) -> Option<&'static str> {
        self.find(key)?.ok()?.invalid
    }

    /// The built entry of `key`, if the file has it.
    fn find(&self, key: &str) -> Option<Result<&Built>> {
        match self.index.find(&self.bytes, key) {
            Found::Absent => None,
            Found::At(i) => Some(self.entry(i, false)),
            // The last value, in the first entry's place: the whole file decides.
            Found::Duplicated(i) => Some(self.entry(i, true)),
        }
    }

    /// Entry `i` built (from its own bytes, or from the whole file when `whole` or when its
    /// bytes do not give what the structural pass promised).
    fn entry(&self, i: usize, whole: bool) -> Result<&Built> {
        let slot = &self.built[i / CHUNK]
            .get_or_init(|| (0..CHUNK).map(|_| OnceLock::new()).collect())[i % CHUNK];
        if let Some(b) = slot.get() {
            return Ok(b);
        }
        let key = self.index.key(&self.bytes, i);
        let built = match (!whole).then(|| self.build(i, key)).flatten() {
            Some(b) => b,
            None => {
                let (map, invalid) = self.full().as_ref().map_err(Clone::clone)?;
                Built {
                    value: map
                        .get(&hiera_value::value::StrKey(key))
                        .cloned()
                        .unwrap_or(Value::Null),
                    invalid: invalid
                        .iter()
                        .find(|(k, _)| k.as_str() == Some(key))
                        .map(|(_, c)| *c),
                }
            }
        };
        Ok(slot.get_or_init(|| Box::new(built)))
    }

    /// Entry `i` parsed on its own, if it gives exactly the one pair for `key`.
    fn build(&self, i: usize, key: &str) -> Option<Built> {
        let text = self.index.text(&self.bytes, i);
        match self.format {
            Format::Yaml => {
                let doc = hiera_formats::yaml::load_document(text).ok()?;
                let Value::Hash(map) = doc.value else {
                    return None;
                };
                if map.len() != 1 {
                    return None;
                }
                let (k, value) = map.into_iter().next()?;
                if k.as_str() != Some(key) {
                    return None;
                }
                let invalid = match doc.ruby_values.as_slice() {
                    [] => None,
                    [r] if r.key.as_str() == Some(key) => Some(r.class),
                    _ => return None,
                };
                Some(Built { value, invalid })
            }
            Format::Json => {
                let text = std::str::from_utf8(text).ok()?;
                let value = hiera_formats::json::parse(text).ok()?;
                Some(Built {
                    value,
                    invalid: None,
                })
            }
        }
    }

    fn full(&self) -> &Full {
        self.full.get_or_init(|| {
            let mut warnings = Vec::new();
            let hash = match self.format {
                Format::Yaml => super::yaml_data(
                    &self.bytes,
                    &self.path,
                    crate::scope::Strict::Error,
                    &mut warnings,
                )?,
                Format::Json => super::DataHash::Parsed {
                    map: super::json_data(&String::from_utf8_lossy(&self.bytes), &self.path)?,
                    invalid: Vec::new(),
                },
            };
            match hash {
                super::DataHash::Parsed { map, invalid } => Ok((map, invalid)),
                _ => Ok((Map::default(), Vec::new())),
            }
        })
    }
}

#[cfg(test)]
mod tests;
