//! Backends that embedders register in Rust, under the function names a hiera.yaml uses
//! (`data_hash: my_backend`, `lookup_key: …`, `data_dig: …`): the library counterpart of
//! Puppet's custom backend functions.
//!
//! The `options` a backend receives are the entry's interpolated `options` plus, as Puppet
//! passes them, `path` (an interpolated `path`/`paths`/`glob`/`mapped_paths` location that
//! exists) or `uri` (a `uri`/`uris` location), so a backend sees exactly what a Ruby
//! backend function would. Errors are plain messages: the engine reports them as Puppet
//! reports a failing backend function.

use crate::value::{Map, Value};
use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

/// A `data_hash` backend: returns the whole hash of one location, which the engine caches
/// and looks keys up in.
pub trait DataHashBackend: Send + Sync {
    fn data_hash(&self, options: &Map) -> Result<Map, String>;
}

/// A `lookup_key` backend: answers one key (the root key of a dotted lookup) at one
/// location, `Ok(None)` meaning "no such key here" (Puppet's `context.not_found`).
pub trait LookupKeyBackend: Send + Sync {
    fn lookup_key(&self, key: &str, options: &Map) -> Result<Option<Value>, String>;
}

/// A `data_dig` backend: answers a whole dotted key, given as its segments (strings, and
/// integers for numeric segments, as Puppet passes them), `Ok(None)` meaning not found.
pub trait DataDigBackend: Send + Sync {
    fn data_dig(&self, segments: &[Value], options: &Map) -> Result<Option<Value>, String>;
}

/// The registered backends, by function name. Cheap to clone (shared handles).
#[derive(Default, Clone)]
pub struct Backends {
    data_hash: HashMap<String, Arc<dyn DataHashBackend>>,
    lookup_key: HashMap<String, Arc<dyn LookupKeyBackend>>,
    data_dig: HashMap<String, Arc<dyn DataDigBackend>>,
}

impl Backends {
    pub fn new() -> Backends {
        Backends::default()
    }

    /// Registers `backend` as the data_hash function `name` (replacing an earlier one).
    pub fn register_data_hash(
        &mut self,
        name: impl Into<String>,
        backend: Arc<dyn DataHashBackend>,
    ) -> &mut Self {
        self.data_hash.insert(name.into(), backend);
        self
    }

    pub fn register_lookup_key(
        &mut self,
        name: impl Into<String>,
        backend: Arc<dyn LookupKeyBackend>,
    ) -> &mut Self {
        self.lookup_key.insert(name.into(), backend);
        self
    }

    pub fn register_data_dig(
        &mut self,
        name: impl Into<String>,
        backend: Arc<dyn DataDigBackend>,
    ) -> &mut Self {
        self.data_dig.insert(name.into(), backend);
        self
    }

    pub fn data_hash(&self, name: &str) -> Option<&Arc<dyn DataHashBackend>> {
        self.data_hash.get(name)
    }

    pub fn lookup_key(&self, name: &str) -> Option<&Arc<dyn LookupKeyBackend>> {
        self.lookup_key.get(name)
    }

    pub fn data_dig(&self, name: &str) -> Option<&Arc<dyn DataDigBackend>> {
        self.data_dig.get(name)
    }

    pub fn is_empty(&self) -> bool {
        self.data_hash.is_empty() && self.lookup_key.is_empty() && self.data_dig.is_empty()
    }
}

impl fmt::Debug for Backends {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names = |m: Vec<&String>| {
            let mut v: Vec<String> = m.into_iter().cloned().collect();
            v.sort();
            v
        };
        f.debug_struct("Backends")
            .field("data_hash", &names(self.data_hash.keys().collect()))
            .field("lookup_key", &names(self.lookup_key.keys().collect()))
            .field("data_dig", &names(self.data_dig.keys().collect()))
            .finish()
    }
}

/// Closures are backends too, for small embedders and tests.
impl<F> DataHashBackend for F
where
    F: Fn(&Map) -> Result<Map, String> + Send + Sync,
{
    fn data_hash(&self, options: &Map) -> Result<Map, String> {
        self(options)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Fixed;
    impl LookupKeyBackend for Fixed {
        fn lookup_key(&self, key: &str, _: &Map) -> Result<Option<Value>, String> {
            Ok((key == "k").then(|| Value::str("v")))
        }
    }

    #[test]
    fn registry_by_kind_and_name() {
        let mut b = Backends::new();
        assert!(b.is_empty());
        b.register_lookup_key("fixed", Arc::new(Fixed));
        b.register_data_hash(
            "static",
            Arc::new(|_: &Map| -> Result<Map, String> { Ok(Map::default()) }),
        );
        assert!(b.lookup_key("fixed").is_some());
        assert!(b.data_hash("fixed").is_none());
        assert!(b.data_dig("fixed").is_none());
        let lk = b.lookup_key("fixed").unwrap();
        assert_eq!(
            lk.lookup_key("k", &Map::default()),
            Ok(Some(Value::str("v")))
        );
        assert_eq!(lk.lookup_key("x", &Map::default()), Ok(None));
        assert_eq!(
            format!("{:?}", b.clone()),
            r#"Backends { data_hash: ["static"], lookup_key: ["fixed"], data_dig: [] }"#
        );
    }
}
