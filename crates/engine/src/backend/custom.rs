//! Backends that embedders register in Rust, under the function names a hiera.yaml uses
//! (`data_hash: my_backend`, `lookup_key: …`, `data_dig: …`): the library counterpart of
//! Puppet's custom backend functions.
//!
//! The `options` a backend receives are the entry's interpolated `options` plus, as Puppet
//! passes them, `path` (an interpolated `path`/`paths`/`glob`/`mapped_paths` location that
//! exists) or `uri` (a `uri`/`uris` location), so a backend sees exactly what a Ruby
//! backend function would. Errors are plain messages: the engine reports them as Puppet
//! reports a failing backend function.
//!
//! The built-in backends (`yaml_data` …, `eyaml_lookup_key`, `command`) implement these
//! same traits; they override the `*_call` methods, which also see the engine's
//! `Call` and `Host` (shared data files, the scope, `--redact`).

use crate::backend::DataHash;
use crate::config::ResolvedLocation;
use crate::error::Error;
use crate::scope::Scope;
use hiera_value::value::{Map, Value};
use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

/// What a lookup does with an eyaml `ENC[...]` token ([`Settings::secrets`](crate::Settings::secrets)).
///
/// An opaque secret is a stand-in string (`ENC[…` + 16 hex digits of its ciphertext's
/// SHA-256 + `]`, see [`backend::eyaml`](crate::backend::eyaml)): merges, interpolation and
/// lookup_options go on with it, and it equals only the stand-in of the same ciphertext.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Secrets {
    /// Decrypt with the level's private key, or fail as Puppet does (`puppet lookup`).
    Decrypt,
    /// Decrypt when the level's private key is there; without one (no key option, its
    /// variable unset, its file missing) the token is opaque. Every other failure (a wrong
    /// or unreadable key, a corrupt value) is still an error. The fleet commands' default:
    /// CI runs the production hiera.yaml without the private key.
    #[default]
    Auto,
    /// Never decrypt (nor read a private key): every token is opaque.
    Opaque,
}

/// One call of a backend function: the hierarchy entry's function, options and location.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Call<'a> {
    /// The function name as hiera.yaml gives it.
    pub function: &'a str,
    /// The entry's interpolated `options` (without `path` or `uri`).
    pub options: &'a Map,
    /// The location (`None`: the entry declares none).
    pub location: Option<&'a ResolvedLocation>,
    /// The hiera.yaml declaring the entry.
    pub config_file: &'a str,
}

impl Call<'_> {
    /// The options a backend function receives: the entry's, plus `path` or `uri`.
    pub(crate) fn options(&self) -> Map {
        let mut o = self.options.clone();
        if let Some(l) = self.location {
            let k = if l.uri { "uri" } else { "path" };
            o.insert(Value::str(k), Value::str(l.location.as_str()));
        }
        o
    }

    /// The file location, if the location is a path (not a URI).
    pub(crate) fn path(&self) -> Option<&str> {
        self.location
            .filter(|l| !l.uri)
            .map(|l| l.location.as_str())
    }

    /// Puppet's function dispatcher raises an ArgumentError (not wrapped) without a path.
    pub(crate) fn missing_path(&self, kind: &str, sep: &str) -> Error {
        Error::run(format!(
            "'{}'{sep} one of 'path', 'paths' 'glob', 'globs' or 'mapped_paths' must be declared in hiera.yaml when using this {kind} function",
            self.function
        ))
    }
}

/// What a built-in backend may ask of the engine running it.
pub(crate) trait Host {
    /// The hash the data_hash function of `format` (`yaml_data` …) makes of the file at
    /// `path`, parsed once.
    fn load_data(
        &mut self,
        format: hiera_formats::DataFormat,
        path: &str,
    ) -> crate::Result<Arc<DataHash>>;
    /// The node's scope.
    fn scope(&self) -> &Scope;
    /// A backend decrypted `plaintext`: with `--redact` it is shown as `[redacted]`
    /// wherever it would be printed (the lookup itself uses it as it is).
    fn decrypted(&mut self, plaintext: &str);
    /// What an encrypted value is without its key ([`Settings::secrets`](crate::Settings)).
    fn secrets(&self) -> Secrets;
    /// The file system data and key files are read from.
    fn fs(&self) -> Arc<dyn crate::fs::Fs>;
}

/// A value a lookup_key backend found.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Found {
    /// Returned as is.
    Raw(Value),
    /// To be interpolated first (Puppet's `context.interpolate`, as eyaml does).
    Interpolate(Value),
}

/// A `data_hash` backend: returns the whole hash of one location, which the engine caches
/// and looks keys up in.
pub trait DataHashBackend: Send + Sync {
    /// The whole hash of the location `options` names (`options["path"]` …); an `Err` is
    /// reported as a failing backend function.
    fn data_hash(&self, options: &Map) -> Result<Map, String>;

    // The engine's hook, which the built-in backends override: its argument types are
    // crate-private, so an embedder implements only the method above.
    #[doc(hidden)]
    #[allow(private_interfaces)]
    /// The engine's call: [`data_hash`](Self::data_hash) with the call's options, its
    /// message reported as Puppet reports a failing backend function.
    fn data_hash_call(&self, call: &Call, _host: &mut dyn Host) -> crate::Result<Arc<DataHash>> {
        self.data_hash(&call.options())
            .map(|map| Arc::new(DataHash::from_map(map)))
            .map_err(Error::lookup)
    }
}

/// A `lookup_key` backend: answers one key (the root key of a dotted lookup) at one
/// location, `Ok(None)` meaning "no such key here" (Puppet's `context.not_found`).
pub trait LookupKeyBackend: Send + Sync {
    /// The value of `key` at the location `options` names, `Ok(None)` when it has none.
    fn lookup_key(&self, key: &str, options: &Map) -> Result<Option<Value>, String>;

    // The engine's hook, which the built-in backends override: its argument types are
    // crate-private, so an embedder implements only the method above.
    #[doc(hidden)]
    #[allow(private_interfaces)]
    /// The engine's call: [`lookup_key`](Self::lookup_key) with the call's options.
    fn lookup_key_call(
        &self,
        key: &str,
        call: &Call,
        _host: &mut dyn Host,
    ) -> crate::Result<Option<Found>> {
        self.lookup_key(key, &call.options())
            .map(|v| v.map(Found::Raw))
            .map_err(Error::lookup)
    }
}

/// A `data_dig` backend: answers a whole dotted key, given as its segments (strings, and
/// integers for numeric segments, as Puppet passes them), `Ok(None)` meaning not found.
pub trait DataDigBackend: Send + Sync {
    /// The value at the dotted key `segments`, `Ok(None)` when there is none.
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
    /// No backends; register them with the `register_*` methods.
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

    /// Registers `backend` as the lookup_key function `name` (replacing an earlier one).
    pub fn register_lookup_key(
        &mut self,
        name: impl Into<String>,
        backend: Arc<dyn LookupKeyBackend>,
    ) -> &mut Self {
        self.lookup_key.insert(name.into(), backend);
        self
    }

    /// Registers `backend` as the data_dig function `name` (replacing an earlier one).
    pub fn register_data_dig(
        &mut self,
        name: impl Into<String>,
        backend: Arc<dyn DataDigBackend>,
    ) -> &mut Self {
        self.data_dig.insert(name.into(), backend);
        self
    }

    /// The data_hash backend registered as `name`.
    pub fn data_hash(&self, name: &str) -> Option<&Arc<dyn DataHashBackend>> {
        self.data_hash.get(name)
    }

    /// The lookup_key backend registered as `name`.
    pub fn lookup_key(&self, name: &str) -> Option<&Arc<dyn LookupKeyBackend>> {
        self.lookup_key.get(name)
    }

    /// The data_dig backend registered as `name`.
    pub fn data_dig(&self, name: &str) -> Option<&Arc<dyn DataDigBackend>> {
        self.data_dig.get(name)
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
        assert_eq!(
            format!("{b:?}"),
            "Backends { data_hash: [], lookup_key: [], data_dig: [] }"
        );
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
