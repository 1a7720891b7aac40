//! The lookup engine: Puppet's `LookupAdapter`, data providers and merge driver.
//!
//! One [`Session`] answers any number of lookups for one node; data files, configurations
//! and lookup_options are loaded once per session. Explain nodes are only recorded when
//! the session was created with an explainer.

use crate::backend::{DataFiles, DataHash};
use crate::config::{Entry, FunctionKind, HieraConfig, Layer, LoadContext, Locations};
use crate::error::{Error, Result};
use crate::explain::{Explainer, Kind};
use crate::interpolation::{self, Method};
use crate::key::{split_key, LookupKey, Segment};
use crate::location::ResolvedLocation;
use crate::merge::objects::{Heap, Rv};
use crate::merge::{MergeError, MergeStrategy};
use crate::scope::{Scope, Strict};
use crate::value::{Map, Value};
use std::collections::HashMap;
use std::path::PathBuf;
use std::rc::Rc;
use std::sync::Arc;

pub mod reach;

const LOOKUP_OPTIONS: &str = "lookup_options";

/// Where the layers' configurations are.
#[derive(Debug, Clone, Default)]
pub struct Layers {
    /// The global hiera.yaml (absolute). `None` disables the global layer's data.
    pub global: Option<PathBuf>,
    /// The environment directory (its hiera.yaml, if present, is the environment layer).
    pub environment_dir: Option<PathBuf>,
    /// Module directories, by module name, in modulepath order (first wins).
    pub modules: Vec<(String, PathBuf)>,
    /// `$codedir`, for Hiera 3's default datadir.
    pub codedir: PathBuf,
}

/// Session-wide settings.
#[derive(Debug, Clone, Default)]
pub struct Settings {
    pub strict: Strict,
    pub explain: bool,
    pub explain_options_only: bool,
    /// Show `[redacted]` instead of every value decrypted from an `ENC[...]` token.
    pub redact: bool,
}

/// The outcome of one lookup.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    Found(Value),
    NotFound,
}

/// A data provider: the global layer, the environment layer, or one module.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum ProviderId {
    Global,
    Environment,
    Module(String),
}

#[derive(Debug, Clone)]
struct ResolvedEntry {
    entry: Entry,
    /// `None`: the entry declares no location.
    locations: Option<Vec<ResolvedLocation>>,
    /// Interpolated options, passed to lookup_key/data_dig backends.
    #[allow(dead_code)]
    options: Map,
    /// The hiera.yaml declaring the entry, for error messages.
    config_file: String,
}

type EntriesResult = std::result::Result<Rc<Vec<ResolvedEntry>>, Error>;

/// A lookup_options `^pattern` key. An ASCII pattern compiles to a byte regex without
/// Unicode tables: the same matches on ASCII keys, for a fraction of the compile time that
/// every lookup would otherwise pay.
#[derive(Debug, Clone)]
enum KeyPattern {
    Ascii(regex::bytes::Regex),
    Unicode(regex::Regex),
}

impl KeyPattern {
    fn new(pattern: &str) -> Result<KeyPattern> {
        // Translated (and validated, with Ruby's messages) as Ruby reads it.
        let source = crate::merge::ruby_pattern_source(pattern).map_err(Error::run)?;
        if pattern.is_ascii() {
            if let Ok(b) = regex::bytes::RegexBuilder::new(&source)
                .unicode(false)
                .build()
            {
                return Ok(KeyPattern::Ascii(b));
            }
        }
        regex::Regex::new(&source)
            .map(KeyPattern::Unicode)
            .map_err(|e| Error::run(format!("invalid pattern: /{pattern}/ ({e})")))
    }

    fn is_match(&self, key: &str) -> bool {
        match self {
            // A non-ASCII key would be matched byte-wise: fall back to exact semantics.
            KeyPattern::Ascii(b) if key.is_ascii() => b.is_match(key.as_bytes()),
            KeyPattern::Ascii(b) => regex::Regex::new(b.as_str()).is_ok_and(|r| r.is_match(key)),
            KeyPattern::Unicode(r) => r.is_match(key),
        }
    }
}

/// Compiled lookup_options: exact keys and `^pattern` keys.
#[derive(Debug, Clone, Default)]
struct CompiledOptions {
    exact: Map,
    patterns: Vec<(KeyPattern, Value)>,
}

/// One node's lookups.
pub struct Session {
    scope: Scope,
    settings: Settings,
    layers: Layers,
    /// The hiera.yaml of each provider that exists (resolved on first use).
    provider_paths: HashMap<ProviderId, Option<PathBuf>>,
    configs: HashMap<PathBuf, std::result::Result<Rc<HieraConfig>, Error>>,
    entries: HashMap<(ProviderId, bool), EntriesResult>,
    files: DataFiles,
    /// This session's view of `files`, so that the hot path takes no lock.
    local_files: HashMap<String, std::result::Result<Arc<DataHash>, Error>>,
    lookup_options: HashMap<Option<String>, Option<CompiledOptions>>,
    global_lookup_options: Option<Option<Map>>,
    env_lookup_options: Option<Option<Map>>,
    /// Explain only: the objects behind the two caches above.
    global_lookup_options_obj: Option<Rv>,
    env_lookup_options_obj: Option<Rv>,
    /// Explain only: the object an `alias` interpolation returned, until its caller takes it.
    alias_object: Option<Rv>,
    /// Explain only: the object of each scope variable read (the same object every time).
    scope_objects: HashMap<String, Rv>,
    module_default_options: HashMap<String, Option<CompiledOptions>>,
    name_stack: Vec<String>,
    /// Interpolation lookups (`%{lookup('k')}`, `hiera`, `alias`) now in progress, nested.
    lookup_depth: usize,
    /// Interpolation lookups made for the current top-level key, and their answers (without
    /// `--explain`, whose trace shows every one): `b: "%{lookup('c')}%{lookup('c')}"` forty
    /// levels deep is 2^40 lookups unless answers are kept.
    nested_lookups: usize,
    memo: HashMap<(String, bool, bool, bool), Value>,
    top_keys: Vec<String>,
    /// Hiera 3 data confines nested lookups to the global layer.
    global_only: bool,
    /// Variables are read through Hiera 3's scope (a version 3 global layer is searching).
    v3_scope: bool,
    /// A local variable set while a mapped_paths template is interpolated.
    local_var: Option<(String, Value)>,
    /// Interpolating hierarchy locations: undefined variables warn (Puppet 8, PUP-11751).
    in_location: bool,
    /// The module of the current invocation: the key's, which the search for its
    /// lookup_options also uses.
    invocation_module: Option<String>,
    ex: Option<Explainer>,
    warnings: Vec<String>,
    /// Backends registered by an embedding program.
    backends: crate::backend::custom::Backends,
    /// `where` only: what the lookup found (see [`reach`]).
    found_log: Option<reach::FoundLog>,
}

impl Session {
    pub fn new(scope: Scope, layers: Layers, settings: Settings) -> Session {
        Session::with_files(scope, layers, settings, DataFiles::default())
    }

    /// A session that shares parsed data files with other sessions (batch mode).
    pub fn with_files(
        scope: Scope,
        layers: Layers,
        settings: Settings,
        files: DataFiles,
    ) -> Session {
        let ex = if settings.explain || settings.explain_options_only {
            Some(Explainer::new())
        } else {
            None
        };
        Session {
            scope,
            settings,
            layers,
            provider_paths: HashMap::default(),
            configs: HashMap::default(),
            entries: HashMap::default(),
            files,
            local_files: HashMap::default(),
            lookup_options: HashMap::default(),
            global_lookup_options: None,
            env_lookup_options: None,
            global_lookup_options_obj: None,
            env_lookup_options_obj: None,
            scope_objects: HashMap::new(),
            alias_object: None,
            module_default_options: HashMap::default(),
            name_stack: Vec::new(),
            lookup_depth: 0,
            nested_lookups: 0,
            memo: HashMap::new(),
            top_keys: Vec::new(),
            global_only: false,
            v3_scope: false,
            local_var: None,
            in_location: false,
            invocation_module: None,
            ex,
            warnings: Vec::new(),
            backends: Default::default(),
            found_log: None,
        }
    }

    /// Makes embedders' backends available to hierarchy entries naming them.
    pub fn set_backends(&mut self, backends: crate::backend::custom::Backends) {
        self.backends = backends;
    }

    pub fn scope(&self) -> &Scope {
        &self.scope
    }

    /// Warnings gathered so far (each once), as Puppet would log them.
    pub fn take_warnings(&mut self) -> Vec<String> {
        let mut seen = Vec::new();
        for w in self.warnings.drain(..) {
            if !seen.contains(&w) {
                seen.push(w);
            }
        }
        seen
    }

    pub fn explainer(&self) -> Option<&Explainer> {
        self.ex.as_ref()
    }

    pub fn explainer_mut(&mut self) -> Option<&mut Explainer> {
        self.ex.as_mut()
    }

    // ---- explain helpers -------------------------------------------------------------

    fn with<T>(&mut self, kind: impl FnOnce() -> Kind, f: impl FnOnce(&mut Self) -> T) -> T {
        if let Some(ex) = self.ex.as_mut() {
            ex.push(kind());
            let r = f(self);
            if let Some(ex) = self.ex.as_mut() {
                ex.pop();
            }
            r
        } else {
            f(self)
        }
    }
    fn report_found(&mut self, key: &str, v: &Value) {
        if let Some(ex) = self.ex.as_mut() {
            ex.found(key, v);
        }
    }
    fn report_not_found(&mut self, key: &str) {
        if let Some(ex) = self.ex.as_mut() {
            ex.not_found(key);
        }
    }
    /// Explain only: the object behind `v`, the value the lookup in progress just produced.
    fn object_for(&mut self, v: &Value) -> Option<Rv> {
        self.ex.as_mut().map(|ex| ex.object_for(v))
    }
    /// Explain only: marks the object a step produced (see [`object_for`](Self::object_for)).
    fn produced(&mut self, rv: Option<Rv>) {
        if let (Some(ex), Some(rv)) = (self.ex.as_mut(), rv) {
            ex.produced(rv);
        }
    }

    // ---- the public entry point ------------------------------------------------------

    /// `Puppet::Pops::Lookup.lookup`: the first of `keys` that is found wins.
    pub fn lookup(&mut self, keys: &[String], merge: Option<&MergeStrategy>) -> Result<Outcome> {
        if self.lookup_depth == 0 {
            // A new top-level lookup: the scope is the same, but an embedder may have
            // registered backends or the files may have changed between two of them.
            self.memo.clear();
            self.nested_lookups = 0;
        }
        for key in keys {
            if let Some(v) = self.adapter_lookup(key, merge)? {
                return Ok(Outcome::Found(v));
            }
        }
        Ok(Outcome::NotFound)
    }

    /// Every key this node can see in the data_hash levels of its layers (global,
    /// environment, and every module's own keys), in first-seen order, without
    /// `lookup_options`. Files that fail to load are skipped here; looking their keys up
    /// reports the error.
    pub fn all_keys(&mut self) -> Result<Vec<String>> {
        let mut ids = vec![ProviderId::Global, ProviderId::Environment];
        ids.extend(
            self.layers
                .modules
                .iter()
                .map(|(n, _)| ProviderId::Module(n.clone())),
        );
        let mut seen: indexmap::IndexSet<String> = indexmap::IndexSet::new();
        for id in ids {
            let Some(path) = self.provider_path(&id)? else {
                continue;
            };
            let Ok(cfg) = self.config_at(&id, &path) else {
                continue;
            };
            let mut lists = vec![self.entries_of(&id, &cfg, false)];
            if cfg.default_hierarchy.is_some() {
                lists.push(self.entries_of(&id, &cfg, true));
            }
            for entries in lists.into_iter().flatten() {
                for e in entries.iter() {
                    if e.entry.kind != FunctionKind::DataHash {
                        continue;
                    }
                    for loc in e.locations.iter().flatten().filter(|l| l.exists && !l.uri) {
                        let mut w = Vec::new();
                        let Ok(hash) = self.files.data_hash(
                            &e.entry.function,
                            &loc.location,
                            self.settings.strict,
                            &mut w,
                        ) else {
                            continue;
                        };
                        for k in hash.keys() {
                            if k == LOOKUP_OPTIONS {
                                continue;
                            }
                            if let ProviderId::Module(m) = &id {
                                if !k.starts_with(&format!("{m}::")) {
                                    continue;
                                }
                            }
                            if !seen.contains(k) {
                                seen.insert(k.to_string());
                            }
                        }
                    }
                }
            }
        }
        Ok(seen.into_iter().collect())
    }

    /// Puppet's message for a failed lookup of `keys`.
    pub fn not_found_message(keys: &[String]) -> String {
        if keys.len() == 1 {
            format!(
                "Function lookup() did not find a value for the name '{}'",
                keys[0]
            )
        } else {
            let names: Vec<String> = keys.iter().map(|k| format!("'{k}'")).collect();
            format!(
                "Function lookup() did not find a value for any of the names [{}]",
                names.join(", ")
            )
        }
    }

    /// `LookupAdapter#lookup`.
    fn adapter_lookup(
        &mut self,
        key: &str,
        merge: Option<&MergeStrategy>,
    ) -> Result<Option<Value>> {
        if key == LOOKUP_OPTIONS || key.starts_with("lookup_options.") {
            self.with(|| Kind::InvalidKey(LOOKUP_OPTIONS.into()), |_| ());
            return Ok(None);
        }
        let lk = LookupKey::parse(key)?;
        self.top_keys.push(lk.key.clone());
        let saved = std::mem::replace(&mut self.invocation_module, lk.module_name.clone());
        let r = self.adapter_lookup_key(&lk, merge);
        self.invocation_module = saved;
        self.top_keys.pop();
        r
    }

    fn adapter_lookup_key(
        &mut self,
        lk: &LookupKey,
        merge: Option<&MergeStrategy>,
    ) -> Result<Option<Value>> {
        if self.settings.explain_options_only {
            let lo = LookupKey::parse(LOOKUP_OPTIONS)?;
            let strategy = MergeStrategy::Hash;
            self.do_lookup(&lo, &strategy)?;
            return Ok(Some(Value::Null));
        }
        let opts = self.lookup_lookup_options(lk)?;
        let strategy = match merge {
            Some(m) => m.clone(),
            None => match opts.as_ref().and_then(|o| hash_get(o, "merge")) {
                Some(m) => {
                    if let Some(ex) = self.ex.as_mut() {
                        ex.merge_source(LOOKUP_OPTIONS);
                    }
                    MergeStrategy::from_value(&m).map_err(merge_error)?
                }
                None => MergeStrategy::First,
            },
        };
        let key_s = lk.key.clone();
        let value = self.with(
            || Kind::Top { key: key_s },
            |s| -> Result<Option<Value>> {
                if let Some(v) = s.do_lookup(lk, &strategy)? {
                    return Ok(Some(v));
                }
                if s.global_only {
                    return Ok(None);
                }
                match s.lookup_default_in_module(lk)? {
                    Some(v) => s.dig(lk, v),
                    None => Ok(None),
                }
            },
        )?;
        match (value, opts.as_ref().and_then(|o| hash_get(o, "convert_to"))) {
            (Some(v), Some(convert_to)) => {
                let v = self.convert_to(&lk.key, v, &convert_to)?;
                // A new object, which an `alias` of this key returns.
                let o = self.ex.is_some().then(|| self.alloc_object(&v));
                self.produced(o);
                Ok(Some(v))
            }
            (v, _) => Ok(v),
        }
    }

    /// `convert_to`: the conversions that do not need Puppet's type system.
    /// `convert_to`: Puppet's `new` of the option's type, after merging and digging.
    fn convert_to(&mut self, key: &str, value: Value, convert_to: &Value) -> Result<Value> {
        let result = crate::types::convert(value, convert_to)
            .map_err(|e| Error::lookup(e.lookup_message(key)))?;
        if let Some(ex) = self.ex.as_mut() {
            ex.root_text(format!(
                "Applying convert_to lookup_option with arguments {}",
                crate::types::convert_args_string(convert_to)
            ));
        }
        Ok(result)
    }

    fn do_lookup(&mut self, lk: &LookupKey, strategy: &MergeStrategy) -> Result<Option<Value>> {
        let found = if self.global_only {
            self.lookup_global(lk, strategy)?
        } else {
            // The module layer's provider is named by the key, so a placeholder stands in.
            let layers = [
                ProviderId::Global,
                ProviderId::Environment,
                ProviderId::Module(String::new()),
            ];
            self.merge_lookup(strategy, &layers, |s, layer| match layer {
                ProviderId::Global => s.lookup_global(lk, strategy),
                ProviderId::Environment => s.lookup_in_environment(lk, strategy),
                ProviderId::Module(_) => s.lookup_in_module(lk, strategy),
            })?
        };
        match found {
            Some(v) => self.dig(lk, v),
            None => Ok(None),
        }
    }

    /// `SubLookup#sub_lookup` for the segments of a key, after merging.
    fn dig(&mut self, lk: &LookupKey, value: Value) -> Result<Option<Value>> {
        if lk.segments.is_empty() {
            return Ok(Some(value));
        }
        let segs = lk.segments.clone();
        self.sub_lookup(&lk.key, &segs, value)
    }

    fn sub_lookup(
        &mut self,
        key: &str,
        segments: &[Segment],
        value: Value,
    ) -> Result<Option<Value>> {
        let joined: Vec<String> = segments.iter().map(|s| s.to_string()).collect();
        let joined = joined.join(".");
        self.with(
            || Kind::SubLookup(joined),
            |s| -> Result<Option<Value>> {
                let mut value = value;
                // Explain only: each segment's value is an object inside the one before.
                let mut obj = s.object_for(&value);
                for seg in segments {
                    let r = s.with(
                        || Kind::Segment,
                        |s| -> Result<Option<Value>> {
                            let seg_s = seg.to_string();
                            let (next, child_key) = match (&value, seg) {
                                (Value::Null, _) => (None, Value::Null),
                                (Value::Array(a), Segment::Index(i)) => {
                                    let next = if *i >= 0 && (*i as usize) < a.len() {
                                        Some(a[*i as usize].clone())
                                    } else {
                                        None
                                    };
                                    (next, Value::Int(*i))
                                }
                                (Value::Hash(h), seg) => {
                                    let k = seg.to_value();
                                    (h.get(&k).cloned(), k)
                                }
                                // Integer#[] exists (a bit reference), so Puppet goes on to
                                // `include?`, which Integer lacks: a raw NoMethodError.
                                (Value::Int(_) | Value::BigInt(_), _) => {
                                    return Err(Error::run(
                                        "undefined method `include?' for an instance of Integer",
                                    ))
                                }
                                (other, _) => {
                                    return Err(Error::lookup(format!(
                                        "Data Provider type mismatch: Got {} when a hash-like object was expected to access value using '{seg_s}' from key '{key}'",
                                        other.ruby_class()
                                    )))
                                }
                            };
                            match next {
                                Some(v) => {
                                    if let Some(ex) = s.ex.as_mut() {
                                        let child = obj
                                            .take()
                                            .and_then(|o| ex.heap().child(&o, &child_key))
                                            .unwrap_or_else(|| ex.heap_mut().alloc(&v));
                                        obj = Some(child.clone());
                                        ex.found_object(&seg_s, child);
                                    }
                                    Ok(Some(v))
                                }
                                None => {
                                    s.report_not_found(&seg_s);
                                    Ok(None)
                                }
                            }
                        },
                    )?;
                    match r {
                        Some(v) => value = v,
                        None => return Ok(None),
                    }
                }
                Ok(Some(value))
            },
        )
    }

    // ---- the merge driver ------------------------------------------------------------

    /// `MergeStrategy#lookup`: search `variants` in order and merge what is found.
    fn merge_lookup<T: Clone>(
        &mut self,
        strategy: &MergeStrategy,
        variants: &[T],
        mut f: impl FnMut(&mut Self, &T) -> Result<Option<Value>>,
    ) -> Result<Option<Value>> {
        if strategy.is_first() {
            for v in variants {
                if let Some(x) = f(self, v)? {
                    return Ok(Some(x));
                }
            }
            return Ok(None);
        }
        match variants.len() {
            0 => Ok(None),
            1 => match f(self, &variants[0])? {
                Some(x) => {
                    let xo = self.object_for(&x);
                    let r = strategy.merge_single(x).map_err(merge_error)?;
                    if let (Some(ex), Some(xo)) = (self.ex.as_mut(), xo) {
                        let ro = ex.heap_mut().merge_single(strategy, xo);
                        ex.produced(ro);
                    }
                    Ok(Some(r))
                }
                None => Ok(None),
            },
            _ => {
                let st = strategy.clone();
                self.with(
                    || Kind::Merge {
                        strategy: st.name(),
                        options: st.options(),
                    },
                    |s| -> Result<Option<Value>> {
                        let mut memo: Option<Value> = None;
                        // Explain only: the same merge replayed on the found objects, which
                        // Ruby's merges share and edit in place.
                        let mut memo_o: Option<Rv> = None;
                        for v in variants {
                            if let Some(x) = f(s, v)? {
                                let xo = s.object_for(&x);
                                memo = Some(match memo {
                                    None => strategy.convert_value(x).map_err(merge_error)?,
                                    Some(m) => strategy.merge(m, x).map_err(merge_error)?,
                                });
                                if let (Some(ex), Some(xo)) = (s.ex.as_mut(), xo) {
                                    let heap = ex.heap_mut();
                                    memo_o = Some(match memo_o.take() {
                                        None => heap.convert_value(strategy, xo),
                                        Some(m) => match heap.merge(strategy, m, xo) {
                                            Ok(o) => o,
                                            // Not reached: the value merge above succeeded.
                                            Err(_) => {
                                                heap.alloc(memo.as_ref().unwrap_or(&Value::Null))
                                            }
                                        },
                                    });
                                }
                            }
                        }
                        if let (Some(r), Some(ex)) = (&memo, s.ex.as_mut()) {
                            let ro = memo_o.unwrap_or_else(|| ex.heap_mut().alloc(r));
                            ex.result_object(ro);
                        }
                        Ok(memo)
                    },
                )
            }
        }
    }

    // ---- layers ----------------------------------------------------------------------

    fn lookup_global(&mut self, lk: &LookupKey, strategy: &MergeStrategy) -> Result<Option<Value>> {
        if self.layers.global.is_none() {
            self.report_not_found(&lk.key);
            return Ok(None);
        }
        let r = self.global_provider_lookup(lk, strategy);
        r.map_err(|e| match e {
            Error::Lookup {
                message,
                issue: false,
            } => {
                let top = self.top_keys.last().cloned().unwrap_or_default();
                Error::Puppet(format!("Lookup of key '{top}' failed: {message}"))
            }
            other => other,
        })
    }

    /// `GlobalDataProvider#unchecked_key_lookup`: a Hiera 3 configuration runs in Hiera 3's
    /// scope and, unless the environment has a version 5 configuration, confines nested
    /// lookups to the global layer.
    fn global_provider_lookup(
        &mut self,
        lk: &LookupKey,
        strategy: &MergeStrategy,
    ) -> Result<Option<Value>> {
        let v3 = !self.v3_scope
            && match self.provider_path(&ProviderId::Global)? {
                Some(p) => self
                    .config_at(&ProviderId::Global, &p)
                    .is_ok_and(|c| c.version == 3),
                None => false,
            };
        if !v3 {
            return self.provider_key_lookup(&ProviderId::Global, lk, strategy, false);
        }
        let saved = (self.v3_scope, self.global_only);
        self.v3_scope = true;
        if !self.global_only && !self.has_environment_v5()? {
            self.global_only = true;
        }
        let r = self.provider_key_lookup(&ProviderId::Global, lk, strategy, false);
        (self.v3_scope, self.global_only) = saved;
        r
    }

    /// `LookupAdapter#has_environment_data_provider?`: an environment layer of version 5.
    fn has_environment_v5(&mut self) -> Result<bool> {
        match self.provider_path(&ProviderId::Environment)? {
            Some(p) => Ok(self.config_at(&ProviderId::Environment, &p)?.version >= 5),
            None => Ok(false),
        }
    }

    fn lookup_in_environment(
        &mut self,
        lk: &LookupKey,
        strategy: &MergeStrategy,
    ) -> Result<Option<Value>> {
        if self.provider_path(&ProviderId::Environment)?.is_none() {
            return Ok(None);
        }
        self.provider_key_lookup(&ProviderId::Environment, lk, strategy, false)
    }

    fn lookup_in_module(
        &mut self,
        lk: &LookupKey,
        strategy: &MergeStrategy,
    ) -> Result<Option<Value>> {
        let Some(module) = self.current_module_name(lk) else {
            return Ok(None);
        };
        let id = ProviderId::Module(module.clone());
        if self.provider_path(&id)?.is_none() {
            let exists = self.layers.modules.iter().any(|(n, _)| *n == module);
            if let Some(ex) = self.ex.as_mut() {
                ex.module_not_found(&module, exists);
            }
            return Ok(None);
        }
        self.provider_key_lookup(&id, lk, strategy, false)
    }

    /// The hiera.yaml of a provider, or `None` when the provider does not exist (no
    /// environment hiera.yaml, unknown module, module without hiera.yaml, or Puppet 7
    /// ignoring a version 3 file).
    fn provider_path(&mut self, id: &ProviderId) -> Result<Option<PathBuf>> {
        if let Some(p) = self.provider_paths.get(id) {
            return Ok(p.clone());
        }
        let (path, what) = match id {
            ProviderId::Global => (self.layers.global.clone(), ""),
            ProviderId::Environment => (
                self.layers
                    .environment_dir
                    .as_ref()
                    .map(|d| d.join("hiera.yaml"))
                    .filter(|p| p.exists()),
                "an environment",
            ),
            ProviderId::Module(name) => (
                self.layers
                    .modules
                    .iter()
                    .find(|(n, _)| n == name)
                    .map(|(_, d)| d.join("hiera.yaml"))
                    .filter(|p| p.exists()),
                "a module",
            ),
        };
        let path = match path {
            Some(p) if *id != ProviderId::Global => {
                let cfg = self.config_at(id, &p)?;
                if cfg.version == 3 {
                    if self.settings.strict == Strict::Error {
                        return Err(Error::issue(format!(
                            "hiera.yaml version 3 cannot be used in {what} (file: {})",
                            p.display()
                        )));
                    }
                    let root = if *id == ProviderId::Environment {
                        "the environment root"
                    } else {
                        "module root"
                    };
                    self.warnings
                        .push(format!("hiera.yaml version 3 found at {root} was ignored"));
                    None
                } else {
                    Some(p)
                }
            }
            other => other,
        };
        self.provider_paths.insert(id.clone(), path.clone());
        Ok(path)
    }

    /// The module an invocation belongs to: the key's, or for lookup_options the module of
    /// the key whose options are being searched.
    fn current_module_name(&self, lk: &LookupKey) -> Option<String> {
        if lk.key == LOOKUP_OPTIONS {
            return self.invocation_module.clone();
        }
        lk.module_name.clone()
    }

    fn lookup_default_in_module(&mut self, lk: &LookupKey) -> Result<Option<Value>> {
        let Some(module) = lk.module_name.clone() else {
            return Ok(None);
        };
        let id = ProviderId::Module(module.clone());
        let Some(path) = self.provider_path(&id)? else {
            return Ok(None);
        };
        if self.config_at(&id, &path)?.default_hierarchy.is_none() {
            return Ok(None);
        }
        let label = format!("Searching default_hierarchy of module \"{module}\"");
        self.with(
            || Kind::Scope(label),
            |s| -> Result<Option<Value>> {
                if !s.module_default_options.contains_key(&module) {
                    let lo = LookupKey::parse(LOOKUP_OPTIONS)?;
                    let opts = s.with(
                        || Kind::Scope(format!("Searching for \"{LOOKUP_OPTIONS}\"")),
                        |s| -> Result<Option<CompiledOptions>> {
                            match s.provider_key_lookup(&id, &lo, &MergeStrategy::Hash, true)? {
                                Some(v) => match validate_lookup_options(v, Some(&module))? {
                                    Some(m) => Ok(Some(compile_patterns(m)?)),
                                    None => Ok(None),
                                },
                                None => Ok(None),
                            }
                        },
                    )?;
                    s.module_default_options.insert(module.clone(), opts);
                }
                let strategy = match s.module_default_options.get(&module).cloned().flatten() {
                    Some(o) => {
                        match extract_options(&o, &lk.root).and_then(|v| hash_get(&v, "merge")) {
                            Some(m) => MergeStrategy::from_value(&m).map_err(merge_error)?,
                            None => MergeStrategy::First,
                        }
                    }
                    None => MergeStrategy::First,
                };
                let k = lk.key.clone();
                s.with(
                    || Kind::Scope(format!("Searching for \"{k}\"")),
                    |s| s.provider_key_lookup(&id, lk, &strategy, true),
                )
            },
        )
    }

    // ---- providers -------------------------------------------------------------------

    fn config_at(&mut self, id: &ProviderId, path: &PathBuf) -> Result<Rc<HieraConfig>> {
        if let Some(c) = self.configs.get(path) {
            return c.clone();
        }
        let layer = match id {
            ProviderId::Global => Layer::Global,
            ProviderId::Environment => Layer::Environment,
            ProviderId::Module(_) => Layer::Module,
        };
        let ctx = LoadContext {
            layer,
            codedir: self.layers.codedir.clone(),
            strict_off: self.settings.strict == Strict::Off,
        };
        let r = HieraConfig::load(path, &ctx, &mut self.warnings).map(Rc::new);
        self.configs.insert(path.clone(), r.clone());
        r
    }

    fn provider_name(id: &ProviderId, cfg: Option<&HieraConfig>) -> String {
        let mut n = match id {
            ProviderId::Global => "Global ".to_string(),
            ProviderId::Environment => "Environment ".to_string(),
            ProviderId::Module(m) => format!("Module \"{m}\" "),
        };
        n.push_str("Data Provider");
        if let Some(c) = cfg {
            n.push_str(&format!(" ({})", c.name()));
        }
        n
    }

    /// `DataProvider#key_lookup`: recursion check, then the configured entries.
    fn provider_key_lookup(
        &mut self,
        id: &ProviderId,
        lk: &LookupKey,
        strategy: &MergeStrategy,
        default_hierarchy: bool,
    ) -> Result<Option<Value>> {
        self.check(&lk.key, |s| {
            let r = s.unchecked_provider_lookup(id, lk, strategy, default_hierarchy);
            match r {
                Err(Error::Puppet(m)) => Err(Error::lookup(m)),
                other => other,
            }
        })
    }

    /// `Invocation#check`: detect recursion on `name` while `f` runs.
    fn check<T>(&mut self, name: &str, f: impl FnOnce(&mut Self) -> Result<T>) -> Result<T> {
        if self.name_stack.iter().any(|n| n == name) {
            return Err(Error::lookup(format!(
                "Recursive lookup detected in [{}]",
                self.name_stack.join(", ")
            )));
        }
        self.name_stack.push(name.to_string());
        let r = f(self);
        self.name_stack.pop();
        r
    }

    /// The resolved entries of a provider, built once.
    fn entries_of(
        &mut self,
        id: &ProviderId,
        cfg: &HieraConfig,
        default_hierarchy: bool,
    ) -> Result<Rc<Vec<ResolvedEntry>>> {
        let k = (id.clone(), default_hierarchy);
        if let Some(e) = self.entries.get(&k) {
            return e.clone();
        }
        let list = if default_hierarchy {
            cfg.default_hierarchy.clone().unwrap_or_default()
        } else {
            cfg.hierarchy.clone()
        };
        let r = self.build_entries(cfg, &list).map(Rc::new);
        self.entries.insert(k, r.clone());
        r
    }

    fn unchecked_provider_lookup(
        &mut self,
        id: &ProviderId,
        lk: &LookupKey,
        strategy: &MergeStrategy,
        default_hierarchy: bool,
    ) -> Result<Option<Value>> {
        let path = match self.provider_path(id)? {
            Some(p) => p,
            None => return Ok(None),
        };
        if default_hierarchy {
            let cfg = self.config_at(id, &path)?;
            if self.entries_of(id, &cfg, true)?.is_empty() {
                self.report_not_found(&lk.key);
                return Ok(None);
            }
        }
        // The configuration is read before the provider's explain node opens (Puppet's
        // global provider reads it first; the others when the provider is created).
        let cfg = self.config_at(id, &path)?;
        let name = Self::provider_name(id, Some(&cfg));
        let config_path = cfg.path.as_ref().map(|x| x.display().to_string());
        let module = match id {
            ProviderId::Module(m) => Some(m.clone()),
            _ => None,
        };
        self.with(
            || Kind::DataProvider {
                name,
                config_path,
                module,
            },
            |s| -> Result<Option<Value>> {
                let entries = s.entries_of(id, &cfg, default_hierarchy)?;
                if entries.is_empty() {
                    s.report_not_found(&lk.key);
                    return Ok(None);
                }
                s.entries_lookup(&entries, lk, strategy)
            },
        )
    }

    fn entries_lookup(
        &mut self,
        entries: &[ResolvedEntry],
        lk: &LookupKey,
        strategy: &MergeStrategy,
    ) -> Result<Option<Value>> {
        self.merge_lookup(strategy, entries, |s, e| s.entry_lookup(e, lk, strategy))
    }

    /// `HieraConfigV5#create_configured_data_providers`: interpolate datadirs, locations
    /// and options against the scope.
    fn build_entries(
        &mut self,
        cfg: &HieraConfig,
        entries: &[Entry],
    ) -> Result<Vec<ResolvedEntry>> {
        if let Some(e) = &cfg.deferred_error {
            return Err(e.clone());
        }
        let saved_ex = self.ex.take();
        let r = self.build_entries_inner(cfg, entries);
        self.ex = saved_ex;
        let file = cfg
            .path
            .as_ref()
            .map(|p| p.display().to_string())
            .unwrap_or_default();
        r.map_err(|e| match &e {
            // Interpolation issues are reported against the configuration file.
            Error::Lookup {
                message,
                issue: true,
            } if !message.contains("(file: ") => Error::issue(format!("{message} (file: {file})")),
            Error::Run(m) if m.starts_with("Undefined variable '") => {
                let var = m["Undefined variable '".len()..]
                    .split('\'')
                    .next()
                    .unwrap_or("")
                    .to_string();
                let line = cfg.path.as_ref().and_then(|p| {
                    let text = crate::limits::read_text(p).ok()?;
                    let re = regex::Regex::new(&format!(r#"%\{{['"]?{var}['"]?\}}"#)).ok()?;
                    crate::config::find_line_matching(&text, &re, 1)
                });
                let file = cfg
                    .path
                    .as_ref()
                    .map(|p| p.display().to_string())
                    .unwrap_or_default();
                let loc = match line {
                    Some(l) => format!(" (file: {file}, line: {l})"),
                    None => format!(" (file: {file})"),
                };
                Error::issue(format!("Undefined variable '{var}'{loc}"))
            }
            _ => e,
        })
    }

    fn build_entries_inner(
        &mut self,
        cfg: &HieraConfig,
        entries: &[Entry],
    ) -> Result<Vec<ResolvedEntry>> {
        let mut out = Vec::new();
        let is_default = cfg.path.is_none();
        let v3 = cfg.version == 3;
        for e in entries {
            let datadir = self.interpolate_str(&e.datadir, false)?;
            // v3 locations are not covered by Puppet 8's lenient location interpolation.
            self.in_location = !v3 && self.settings.strict == Strict::Error;
            let locs = self.resolve_locations(e, &datadir, is_default);
            self.in_location = false;
            let locs = locs?;
            if is_default && matches!(&locs, Some(l) if l.is_empty()) {
                continue;
            }
            let options = match &e.options {
                Some(o) => match self.interpolate(&Value::Hash(o.clone()), false)? {
                    Value::Hash(h) => h,
                    _ => Map::default(),
                },
                None => Map::default(),
            };
            if e.kind == FunctionKind::Hiera3Backend {
                // create_hiera3_backend_provider: Puppet 8 ships without Hiera 3.
                return Err(Error::lookup("Hiera 3 is not installed"));
            }
            let config_file = cfg
                .path
                .as_ref()
                .map(|p| p.display().to_string())
                .unwrap_or_default();
            out.push(ResolvedEntry {
                entry: e.clone(),
                locations: locs,
                options,
                config_file,
            });
        }
        Ok(out)
    }

    fn resolve_locations(
        &mut self,
        e: &Entry,
        datadir: &str,
        is_default: bool,
    ) -> Result<Option<Vec<ResolvedLocation>>> {
        let path_loc = |original: &str, p: String| {
            // File.exist?: true for directories and devices too.
            let exists = std::path::Path::new(&p).exists();
            ResolvedLocation {
                original: original.to_string(),
                location: p,
                exists,
                uri: false,
            }
        };
        Ok(Some(match &e.locations {
            Locations::None => return Ok(None),
            Locations::Paths(paths) => {
                let mut out = Vec::new();
                for declared in paths {
                    let mut p = self.interpolate_str(declared, false)?;
                    if let Some(ext) = &e.extension {
                        if !p.ends_with(ext.as_str()) {
                            p.push_str(ext);
                        }
                    }
                    let full = crate::config::path_plus(datadir, &p);
                    let loc = path_loc(declared, full);
                    if !is_default || loc.exists {
                        out.push(loc);
                    }
                }
                out
            }
            Locations::Globs(globs) => {
                let mut out = Vec::new();
                for declared in globs {
                    let g = self.interpolate_str(declared, false)?;
                    let pattern = crate::config::path_plus(datadir, &g);
                    for f in crate::location::glob(&pattern).map_err(Error::run)? {
                        out.push(ResolvedLocation {
                            original: pattern.clone(),
                            location: f,
                            exists: true,
                            uri: false,
                        });
                    }
                }
                out
            }
            Locations::Uris(uris) => {
                let mut out = Vec::new();
                for declared in uris {
                    let u = self.interpolate_str(declared, false)?;
                    out.push(ResolvedLocation {
                        original: declared.clone(),
                        location: u,
                        exists: true,
                        uri: true,
                    });
                }
                out
            }
            Locations::Mapped(var, key, template) => {
                let vars = self.scope_lookup(var, "mapped_path[0]")?;
                let vars: Vec<Value> = match vars {
                    None | Some(Value::Null) => return Ok(Some(Vec::new())),
                    Some(Value::String(s)) if s.is_empty() => return Ok(Some(Vec::new())),
                    Some(Value::Array(a)) if a.is_empty() => return Ok(Some(Vec::new())),
                    Some(Value::Hash(h)) if h.is_empty() => return Ok(Some(Vec::new())),
                    // `mapped.empty?` on a value without that method (Ruby 3.3 wording).
                    Some(
                        v @ (Value::Int(_) | Value::BigInt(_) | Value::Float(_) | Value::Bool(_)),
                    ) => {
                        let recv = match v {
                            Value::Bool(b) => b.to_string(),
                            other => format!("an instance of {}", other.ruby_class()),
                        };
                        return Err(Error::run(format!("undefined method `empty?' for {recv}")));
                    }
                    Some(Value::String(s)) => vec![Value::String(s)],
                    Some(Value::Array(a)) => a,
                    Some(Value::Hash(h)) => h
                        .into_iter()
                        .map(|(k, v)| Value::Array(vec![k, v]))
                        .collect(),
                    Some(other) => vec![other],
                };
                let mut out = Vec::new();
                for v in vars {
                    let saved = self.local_var.replace((key.clone(), v));
                    let p = self.interpolate_str(template, false);
                    self.local_var = saved;
                    let full = crate::config::path_plus(datadir, &p?);
                    out.push(path_loc(template, full));
                }
                out
            }
        }))
    }

    /// One hierarchy entry (`DataHashFunctionProvider#unchecked_key_lookup`).
    fn entry_lookup(
        &mut self,
        e: &ResolvedEntry,
        lk: &LookupKey,
        strategy: &MergeStrategy,
    ) -> Result<Option<Value>> {
        let name = format!("Hierarchy entry \"{}\"", e.entry.name);
        self.with(
            || Kind::DataProvider {
                name,
                config_path: None,
                module: None,
            },
            |s| -> Result<Option<Value>> {
                match &e.locations {
                    None => {
                        let r = s.call_function(e, None, lk)?;
                        Ok(r)
                    }
                    Some(locs) => {
                        let locs = locs.clone();
                        s.merge_lookup(strategy, &locs, |s, loc| {
                            let l = loc.clone();
                            s.with(
                                || Kind::Location {
                                    original: l.original.clone(),
                                    location: l.location.clone(),
                                    uri: l.uri,
                                },
                                |s| {
                                    if loc.exists {
                                        s.call_function(e, Some(loc), lk)
                                    } else {
                                        if let Some(ex) = s.ex.as_mut() {
                                            ex.location_not_found();
                                        }
                                        Ok(None)
                                    }
                                },
                            )
                        })
                    }
                }
            },
        )
    }

    /// The options a backend function receives: the entry's, plus `path` or `uri`.
    fn function_options(e: &ResolvedEntry, loc: Option<&ResolvedLocation>) -> Map {
        let mut o = e.options.clone();
        if let Some(l) = loc {
            let k = if l.uri { "uri" } else { "path" };
            o.insert(Value::str(k), Value::str(l.location.as_str()));
        }
        o
    }

    /// The parsed hash of a data file (once per session; once per process behind that).
    fn load_data(&mut self, function: &str, path: &str) -> Result<Arc<DataHash>> {
        if let Some(r) = self.local_files.get(path) {
            return r.clone();
        }
        let r = self
            .files
            .data_hash(function, path, self.settings.strict, &mut self.warnings);
        self.local_files.insert(path.to_string(), r.clone());
        r
    }

    /// One hierarchy entry's backend function at one location (`None`: not found).
    fn call_function(
        &mut self,
        e: &ResolvedEntry,
        loc: Option<&ResolvedLocation>,
        lk: &LookupKey,
    ) -> Result<Option<Value>> {
        let f = e.entry.function.as_str();
        let root = lk.root.as_str();
        let path = loc.filter(|l| !l.uri).map(|l| l.location.as_str());
        // Puppet's function dispatcher raises an ArgumentError (not wrapped) without a path.
        let missing_path = |kind: &str, sep: &str| {
            Error::run(format!(
                "'{f}'{sep} one of 'path', 'paths' 'glob', 'globs' or 'mapped_paths' must be declared in hiera.yaml when using this {kind} function"
            ))
        };
        let not_found = || {
            Error::issue(format!(
                "Unable to find '{}' function named '{f}' (file: {})",
                e.entry.kind.tag(),
                e.config_file
            ))
        };
        let location_name = loc.map_or("", |l| l.location.as_str());
        // Explain only: the object interpolation made of the value.
        let mut found_obj = None;
        let value = match e.entry.kind {
            FunctionKind::DataHash => {
                let hash = if matches!(f, "yaml_data" | "json_data" | "hocon_data") {
                    // Their signature takes `Struct[{path => String[1]}]`: any other option
                    // falls through to the same ArgumentError as a missing path.
                    let Some(path) = path.filter(|_| e.options.is_empty()) else {
                        return Err(missing_path("data_hash", ""));
                    };
                    self.load_data(f, path)?
                } else if let Some(b) = self.backends.data_hash(f).cloned() {
                    let cache_key = format!("{f}\0{location_name}");
                    match self.local_files.get(&cache_key) {
                        Some(r) => r.clone()?,
                        None => {
                            let r = b
                                .data_hash(&Self::function_options(e, loc))
                                .map(|map| {
                                    Arc::new(DataHash::Parsed {
                                        map,
                                        invalid: Vec::new(),
                                    })
                                })
                                .map_err(Error::lookup);
                            self.local_files.insert(cache_key, r.clone());
                            r?
                        }
                    }
                } else {
                    return Err(not_found());
                };
                let Some(value) = hash.get(root) else {
                    self.report_not_found(root);
                    return Ok(None);
                };
                validate_data_value(
                    &hash,
                    root,
                    &value,
                    &format!("data_hash function '{f}'"),
                    location_name,
                )?;
                self.interpolate_found(value, &mut found_obj)?
            }
            FunctionKind::LookupKey => {
                let found = match f {
                    "eyaml_lookup_key" => {
                        let Some(path) = path else {
                            return Err(missing_path("lookup_key", ":"));
                        };
                        let hash = self.load_data("yaml_data", path)?;
                        match hash.get(root) {
                            None => None,
                            Some(v) => {
                                validate_data_value(
                                    &hash,
                                    root,
                                    &v,
                                    &format!("lookup_key function '{f}'"),
                                    path,
                                )?;
                                let v = if self.settings.redact {
                                    // --redact: secrets never leave the file, in values or traces.
                                    crate::backend::eyaml::redact_encrypted(&v)
                                } else if crate::backend::eyaml::contains_encrypted(&v) {
                                    let keys = crate::backend::eyaml::load_keys(&e.options);
                                    crate::backend::eyaml::decrypt_value(&v, &keys, root, path)?
                                } else {
                                    v
                                };
                                Some(self.interpolate_found(v, &mut found_obj)?)
                            }
                        }
                    }
                    "command" => {
                        let scope = self.scope.to_value();
                        let dir = std::path::Path::new(&e.config_file)
                            .parent()
                            .map(std::path::Path::to_path_buf)
                            .unwrap_or_default();
                        crate::backend::command::command_lookup(
                            root,
                            &Self::function_options(e, loc),
                            loc.map(|l| l.location.as_str()),
                            &scope,
                            &dir,
                            crate::backend::command::DEFAULT_TIMEOUT,
                        )
                        .map_err(Error::lookup)?
                    }
                    _ => match self.backends.lookup_key(f).cloned() {
                        Some(b) => b
                            .lookup_key(root, &Self::function_options(e, loc))
                            .map_err(Error::lookup)?,
                        None => return Err(not_found()),
                    },
                };
                match found {
                    Some(v) => v,
                    None => {
                        self.report_not_found(root);
                        return Ok(None);
                    }
                }
            }
            FunctionKind::DataDig => {
                let Some(b) = self.backends.data_dig(f).cloned() else {
                    return Err(not_found());
                };
                let segments: Vec<Value> = std::iter::once(Value::str(root))
                    .chain(lk.segments.iter().map(Segment::to_value))
                    .collect();
                match b
                    .data_dig(&segments, &Self::function_options(e, loc))
                    .map_err(Error::lookup)?
                {
                    Some(v) => v,
                    None => {
                        self.report_not_found(root);
                        return Ok(None);
                    }
                }
            }
            FunctionKind::Hiera3Backend => {
                return Err(Error::issue(format!(
                    "Hiera 3 backend '{f}' is not supported by hiera-lookup (file: {})",
                    e.config_file
                )))
            }
        };
        self.record_found(e, loc, lk, &value);
        match (self.ex.as_mut(), found_obj) {
            (Some(ex), Some(o)) => ex.found_object(root, o),
            _ => self.report_found(root, &value),
        }
        Ok(Some(value))
    }

    // ---- lookup_options --------------------------------------------------------------

    fn lookup_lookup_options(&mut self, lk: &LookupKey) -> Result<Option<Value>> {
        let module = lk.module_name.clone();
        if !self.lookup_options.contains_key(&module) {
            let opts = self.retrieve_lookup_options(module.clone())?;
            self.lookup_options.insert(module.clone(), opts);
        }
        Ok(self
            .lookup_options
            .get(&module)
            .and_then(|o| o.as_ref())
            .and_then(|o| extract_options(o, &lk.root)))
    }

    fn retrieve_lookup_options(
        &mut self,
        module: Option<String>,
    ) -> Result<Option<CompiledOptions>> {
        self.top_keys.push(LOOKUP_OPTIONS.to_string());
        let saved_module = std::mem::replace(&mut self.invocation_module, module.clone());
        let r = self.with(
            || Kind::Top {
                key: LOOKUP_OPTIONS.into(),
            },
            |s| -> Result<Option<CompiledOptions>> {
                let strategy = MergeStrategy::Hash;
                if s.global_only {
                    let g = s.global_lookup_options(&strategy)?;
                    return g.map(compile_patterns).transpose();
                }
                let mut opts = s.env_lookup_options(&strategy)?;
                if let Some(m) = &module {
                    if let std::collections::hash_map::Entry::Vacant(slot) =
                        s.lookup_options.entry(None)
                    {
                        slot.insert(opts.clone().map(compile_patterns).transpose()?);
                    }
                    let lo = LookupKey::parse(LOOKUP_OPTIONS)?;
                    let found = s.lookup_in_module(&lo, &strategy)?;
                    let mo_o = found.as_ref().and_then(|v| s.object_for(v));
                    if let Some(module_opts) = found
                        .map(|v| validate_lookup_options(v, Some(m)))
                        .transpose()?
                        .flatten()
                    {
                        opts = match opts {
                            None => Some(module_opts),
                            Some(ge) => {
                                let variants =
                                    ["Global and Environment".to_string(), format!("Module {m}")];
                                let ge_v = Value::Hash(ge);
                                let mo_v = Value::Hash(module_opts);
                                let ge_o = s.env_lookup_options_obj.clone();
                                let merged = s.merge_lookup(&strategy, &variants, |s, n| {
                                    let (v, o) = if n == "Global and Environment" {
                                        (&ge_v, &ge_o)
                                    } else {
                                        (&mo_v, &mo_o)
                                    };
                                    s.with(
                                        || Kind::Scope(n.clone()),
                                        |s| {
                                            if let Some(ex) = s.ex.as_mut() {
                                                let o = match o {
                                                    Some(o) => o.clone(),
                                                    None => ex.heap_mut().alloc(v),
                                                };
                                                ex.found_object(LOOKUP_OPTIONS, o);
                                            }
                                            Ok(Some(v.clone()))
                                        },
                                    )
                                })?;
                                match merged {
                                    Some(Value::Hash(h)) => Some(h),
                                    _ => None,
                                }
                            }
                        };
                    }
                }
                opts.map(compile_patterns).transpose()
            },
        );
        self.invocation_module = saved_module;
        self.top_keys.pop();
        r
    }

    fn global_lookup_options(&mut self, strategy: &MergeStrategy) -> Result<Option<Map>> {
        if let Some(g) = &self.global_lookup_options {
            return Ok(g.clone());
        }
        let lo = LookupKey::parse(LOOKUP_OPTIONS)?;
        let g = match self.lookup_global(&lo, strategy)? {
            Some(v) => {
                self.global_lookup_options_obj = self.object_for(&v);
                validate_lookup_options(v, None)?
            }
            None => None,
        };
        self.global_lookup_options = Some(g.clone());
        Ok(g)
    }

    fn env_lookup_options(&mut self, strategy: &MergeStrategy) -> Result<Option<Map>> {
        if let Some(e) = &self.env_lookup_options {
            return Ok(e.clone());
        }
        let global = self.global_lookup_options(strategy)?;
        let lo = LookupKey::parse(LOOKUP_OPTIONS)?;
        let (env_only, env_o) = match self.lookup_in_environment(&lo, strategy)? {
            Some(v) => {
                let o = self.object_for(&v);
                (validate_lookup_options(v, None)?, o)
            }
            None => (None, None),
        };
        let global_o = self.global_lookup_options_obj.clone();
        let (merged, merged_o) = match (global, env_only) {
            (None, e) => (e, env_o),
            (g, None) => (g, global_o),
            (Some(g), Some(e)) => {
                let m = match strategy
                    .merge(Value::Hash(g), Value::Hash(e))
                    .map_err(merge_error)?
                {
                    Value::Hash(h) => Some(h),
                    _ => None,
                };
                let o = match (self.ex.as_mut(), global_o, env_o) {
                    (Some(ex), Some(go), Some(eo)) => ex.heap_mut().merge(strategy, go, eo).ok(),
                    _ => None,
                };
                (m, o)
            }
        };
        self.env_lookup_options_obj = merged_o;
        self.env_lookup_options = Some(merged.clone());
        Ok(merged)
    }

    // ---- interpolation ---------------------------------------------------------------

    /// Interpolates a value (strings, array elements, hash keys and values).
    /// [`interpolate`](Self::interpolate) of a value we own: returned as is (no copy) when
    /// nothing in it holds `%{`, the usual case for big hashes.
    fn interpolate_owned(&mut self, value: Value, allow_methods: bool) -> Result<Value> {
        fn has_expr(v: &Value) -> bool {
            match v {
                Value::String(s) => s.contains("%{"),
                Value::Array(a) => a.iter().any(has_expr),
                Value::Hash(h) => h.iter().any(|(k, v)| has_expr(k) || has_expr(v)),
                _ => false,
            }
        }
        if has_expr(&value) {
            let v = self.interpolate(&value, allow_methods)?;
            check_depth(&v)?;
            Ok(v)
        } else {
            Ok(value)
        }
    }

    /// Interpolation of a found value; with `--explain`, also the objects Ruby makes of it
    /// (in `obj`).
    fn interpolate_found(&mut self, value: Value, obj: &mut Option<Rv>) -> Result<Value> {
        if self.ex.is_none() {
            return self.interpolate_owned(value, true);
        }
        let o = self.interpolate_object(&value)?;
        let v = match self.ex.as_ref() {
            Some(ex) => ex.heap().value(&o),
            None => value,
        };
        check_depth(&v)?;
        *obj = Some(o);
        Ok(v)
    }

    /// Explain only: [`interpolate`](Self::interpolate) building Ruby's objects: new hashes
    /// and arrays throughout, and for `%{alias('k')}` the very object the lookup of `k` made.
    fn interpolate_object(&mut self, value: &Value) -> Result<Rv> {
        let o = match value {
            Value::String(s) if s.contains("%{") => {
                // Only this string's own alias counts (a key's alias may have left one).
                self.alias_object = None;
                let v = self.interpolate_string(s, true)?;
                match self.alias_object.take() {
                    Some(o) => o,
                    None => self.alloc_object(&v),
                }
            }
            Value::Array(a) => {
                let mut items = Vec::with_capacity(a.len());
                for e in a {
                    items.push(self.interpolate_object(e)?);
                }
                self.heap_mut().map_or(Rv::nil(), |h| h.new_array(items))
            }
            Value::Hash(h) => {
                let mut entries = Vec::with_capacity(h.len());
                for (k, e) in h {
                    let k = self.interpolate(k, true)?;
                    entries.push((k, self.interpolate_object(e)?));
                }
                self.heap_mut().map_or(Rv::nil(), |h| h.new_hash(entries))
            }
            other => self.alloc_object(other),
        };
        Ok(o)
    }

    /// Explain only: the explainer's objects.
    fn heap_mut(&mut self) -> Option<&mut Heap> {
        self.ex.as_mut().map(Explainer::heap_mut)
    }

    fn alloc_object(&mut self, v: &Value) -> Rv {
        self.heap_mut().map_or(Rv::nil(), |h| h.alloc(v))
    }

    pub fn interpolate(&mut self, value: &Value, allow_methods: bool) -> Result<Value> {
        match value {
            Value::String(s) => {
                if !s.contains("%{") {
                    return Ok(value.clone());
                }
                self.interpolate_string(s, allow_methods)
            }
            Value::Array(a) => {
                let mut out = Vec::with_capacity(a.len());
                for v in a {
                    out.push(self.interpolate(v, allow_methods)?);
                }
                Ok(Value::Array(out))
            }
            Value::Hash(h) => {
                let mut out = Map::with_capacity_and_hasher(h.len(), Default::default());
                for (k, v) in h {
                    let k = self.interpolate(k, allow_methods)?;
                    let v = self.interpolate(v, allow_methods)?;
                    out.insert(k, v);
                }
                Ok(Value::Hash(out))
            }
            other => Ok(other.clone()),
        }
    }

    fn interpolate_str(&mut self, s: &str, allow_methods: bool) -> Result<String> {
        if !s.contains("%{") {
            return Ok(s.to_string());
        }
        match self.interpolate_string(s, allow_methods)? {
            Value::String(s) => Ok(s),
            other => Ok(crate::render::to_s(&other)),
        }
    }

    fn interpolate_string(&mut self, subject: &str, allow_methods: bool) -> Result<Value> {
        let subj = subject.to_string();
        self.with(
            || Kind::Interpolate(subj),
            |s| -> Result<Value> {
                let mut out = String::new();
                for tok in interpolation::tokenize(subject) {
                    match tok {
                        interpolation::Token::Text(t) => out.push_str(t),
                        interpolation::Token::Empty => {}
                        interpolation::Token::Expr { whole, expr } => {
                            let (method, key, call) = interpolation::parse_expr(expr);
                            if call && !allow_methods {
                                return Err(Error::issue("Interpolation using method syntax is not allowed in this context"));
                            }
                            let method = match method {
                                Method::Unknown(name) => {
                                    return Err(Error::issue(format!("Unknown interpolation method '{name}'")))
                                }
                                m => m,
                            };
                            if method == Method::Alias && subject != whole {
                                return Err(Error::issue(
                                    "'alias' interpolation is only permitted if the expression is equal to the entire string",
                                ));
                            }
                            let value = match method {
                                Method::Scope => s.scope_lookup(key, subject)?,
                                Method::Literal => Some(Value::str(key)),
                                _ => Some(s.global_lookup(key)?),
                            };
                            if method == Method::Alias {
                                let v = value.unwrap_or(Value::Null);
                                s.alias_object = s.object_for(&v);
                                return Ok(v);
                            }
                            let value = match value {
                                Some(v) => {
                                    let name = if method == Method::Scope { format!("scope:{key}") } else { key.to_string() };
                                    s.check(&name, |s| s.interpolate(&v, allow_methods))?
                                }
                                None => Value::Null,
                            };
                            out.push_str(&crate::render::to_s(&value));
                            if out.len() > crate::limits::MAX_INTERPOLATED_STRING {
                                return Err(Error::run(format!(
                                    "interpolation result too large (more than {} MiB)",
                                    crate::limits::MAX_INTERPOLATED_STRING >> 20
                                )));
                            }
                        }
                    }
                }
                Ok(Value::String(out))
            },
        )
    }

    /// `%{lookup('k')}`, `%{hiera('k')}`, `%{alias('k')}`: a full lookup with default ''.
    fn global_lookup(&mut self, key: &str) -> Result<Value> {
        if self.lookup_depth >= crate::limits::MAX_LOOKUP_DEPTH {
            let first = self.name_stack.first().map_or(key, String::as_str);
            return Err(Error::run(format!(
                "stack level too deep: interpolation lookups nest more than {} deep, starting at key '{first}'",
                crate::limits::MAX_LOOKUP_DEPTH
            )));
        }
        self.nested_lookups += 1;
        if self.nested_lookups > crate::limits::MAX_LOOKUPS_PER_KEY {
            let first = self.name_stack.first().map_or(key, String::as_str);
            return Err(Error::run(format!(
                "interpolation of key '{first}' makes more than {} lookups",
                crate::limits::MAX_LOOKUPS_PER_KEY
            )));
        }
        let keys = [key.to_string()];
        // Answers depend on the key and on these flags only (the scope is fixed); recursion
        // errors depend on the lookups in progress, so only answers are kept.
        let memo_key = (
            key.to_string(),
            self.global_only,
            self.v3_scope,
            self.in_location,
        );
        let memoise = self.ex.is_none() && self.local_var.is_none();
        if memoise {
            if let Some(v) = self.memo.get(&memo_key) {
                return Ok(v.clone());
            }
        }
        // A nested lookup that may leave the global layer leaves Hiera 3's scope too.
        let saved = self.v3_scope;
        if !self.global_only {
            self.v3_scope = false;
        }
        self.lookup_depth += 1;
        let r = self.lookup(&keys, None);
        self.lookup_depth -= 1;
        self.v3_scope = saved;
        let v = match r? {
            Outcome::Found(v) => v,
            Outcome::NotFound => Value::str(""),
        };
        if memoise {
            self.memo.insert(memo_key, v.clone());
        }
        Ok(v)
    }

    /// `%{var}` / `%{scope('var')}`: a scope variable with optional dotted sub-keys.
    fn scope_lookup(&mut self, key: &str, subject: &str) -> Result<Option<Value>> {
        let mut segments = split_key(key)
            .map_err(|_| Error::lookup(format!("Syntax error in string: {subject}")))?;
        let root = segments.remove(0).to_string();
        let value = self.with(
            || Kind::Scope("Global Scope".into()),
            |s| -> Result<Option<Value>> {
                let local = match &s.local_var {
                    Some((k, v)) if *k == root => Some(v.clone()),
                    _ => None,
                };
                let found = local.or_else(|| s.scope.get(&root).cloned());
                // Hiera 3's scope (`Hiera::Scope`): the calling_* variables exist (empty for
                // `puppet lookup`), and empty strings read as nil.
                let found = match found {
                    _ if s.v3_scope
                        && matches!(
                            root.as_str(),
                            "calling_module" | "calling_class" | "calling_class_path"
                        ) =>
                    {
                        Some(Value::Null)
                    }
                    Some(Value::String(e)) if s.v3_scope && e.is_empty() => Some(Value::Null),
                    other => other,
                };
                match found {
                    Some(v) => {
                        if let Some(o) = s.scope_object(&root, &v) {
                            if let Some(ex) = s.ex.as_mut() {
                                ex.found_object(&root, o);
                            }
                        }
                        Ok(Some(v))
                    }
                    None => {
                        s.variable_not_found(&root)?;
                        Ok(None)
                    }
                }
            },
        )?;
        match value {
            Some(v) if !v.is_null() && !segments.is_empty() => self.sub_lookup(key, &segments, v),
            other => Ok(other),
        }
    }

    /// Explain only: the object a scope variable holds. Variables keep their objects, and a
    /// top-scope variable set from a fact holds that fact's object (`$os` is `$facts['os']`).
    fn scope_object(&mut self, name: &str, v: &Value) -> Option<Rv> {
        let ex = self.ex.as_mut()?;
        if let Some(o) = self.scope_objects.get(name) {
            if ex.heap().value(o) == *v {
                return Some(o.clone());
            }
        }
        let from_fact = match self.scope.get("facts") {
            Some(facts @ Value::Hash(_)) if name != "facts" && facts.get(name) == Some(v) => {
                Some(facts.clone())
            }
            _ => None,
        };
        let o = match from_fact {
            Some(facts) => {
                let fo = self.scope_object("facts", &facts)?;
                let ex = self.ex.as_mut()?;
                match ex.heap().child(&fo, &Value::str(name)) {
                    Some(c) => c,
                    None => ex.heap_mut().alloc(v),
                }
            }
            None => self.ex.as_mut()?.heap_mut().alloc(v),
        };
        self.scope_objects.insert(name.to_string(), o.clone());
        Some(o)
    }

    /// `Scope#variable_not_found` under the `strict` setting.
    fn variable_not_found(&mut self, name: &str) -> Result<()> {
        if matches!(name, "module_name" | "caller_module_name")
            || name.bytes().all(|b| b.is_ascii_digit())
        {
            return Ok(());
        }
        match self.settings.strict {
            Strict::Off => Ok(()),
            Strict::Warning => {
                self.warnings.push(format!(
                    "Undefined variable '{name}'; \n   (file & line not available)"
                ));
                Ok(())
            }
            Strict::Error if self.in_location => {
                self.warnings.push(format!(
                    "Interpolation failed with '{name}', but compilation continuing; "
                ));
                Ok(())
            }
            Strict::Error => Err(Error::run(format!("Undefined variable '{name}'; "))),
        }
    }
}

/// Interpolation can nest a deep value (`alias`) inside another: the result must still fit the
/// depth every recursion over values is bounded by.
fn check_depth(v: &Value) -> Result<()> {
    if v.deeper_than(crate::limits::MAX_VALUE_DEPTH) {
        return Err(Error::run(format!(
            "stack level too deep: interpolation built a value nested more than {} deep",
            crate::limits::MAX_VALUE_DEPTH
        )));
    }
    Ok(())
}

fn merge_error(e: MergeError) -> Error {
    if e.raw {
        Error::run(e.message)
    } else {
        Error::lookup(e.message)
    }
}

fn hash_get(v: &Value, key: &str) -> Option<Value> {
    match v {
        Value::Hash(h) => h.get(&Value::str(key)).cloned(),
        _ => None,
    }
}

/// `validate_data_value`: what a backend returned must be Puppet's RichData.
fn validate_data_value(
    hash: &DataHash,
    root: &str,
    value: &Value,
    function: &str,
    location: &str,
) -> Result<()> {
    let got = if !rich_data(value) {
        crate::types::infer_reduced(value).to_string()
    } else if let Some(class) = hash.invalid_class(root) {
        symbol_value_type(root, location)
            .filter(|_| class == "Symbol")
            .unwrap_or_else(|| format!("Runtime[ruby, '{class}']"))
    } else {
        return Ok(());
    };
    let returned = if function.starts_with("lookup_key") {
        "returned from"
    } else {
        "in hash returned from"
    };
    Err(Error::Puppet(format!(
        "Value for key '{root}', {returned} {function}, when using location '{location}', has wrong type, expects Puppet::LookupValue, got {got}"
    )))
}

/// The inferred type of a value holding symbols, read again from its YAML file with the
/// symbols kept (this error path is the only one that needs them).
fn symbol_value_type(root: &str, path: &str) -> Option<String> {
    let bytes = crate::limits::read_file(path).ok()?;
    let doc = crate::yaml::load_document_marking_symbols(&bytes).ok()?;
    let v = doc.value.get(root)?;
    Some(crate::types::infer_reduced(v).to_string())
}

/// Puppet's `RichData`: hash keys must be strings or numbers, all the way down.
fn rich_data(v: &Value) -> bool {
    match v {
        Value::Array(a) => a.iter().all(rich_data),
        Value::Hash(h) => h.iter().all(|(k, v)| {
            matches!(
                k,
                Value::String(_) | Value::Int(_) | Value::BigInt(_) | Value::Float(_)
            ) && rich_data(v)
        }),
        _ => true,
    }
}

/// `validate_lookup_options`: nil means no options; anything else must be a hash.
fn validate_lookup_options(v: Value, module: Option<&str>) -> Result<Option<Map>> {
    if v.is_null() {
        return Ok(None);
    }
    let Value::Hash(h) = v else {
        return Err(Error::lookup("value of lookup_options must be a hash"));
    };
    if let Some(m) = module {
        let pfx = format!("{m}::");
        for k in h.keys() {
            let k = k.as_str().unwrap_or("");
            if let Some(rest) = k.strip_prefix('^') {
                if !rest.starts_with(&pfx) {
                    return Err(Error::lookup(format!(
                        "all lookup_options patterns must match a key starting with module name '{m}'"
                    )));
                }
            } else if !k.starts_with(&pfx) {
                return Err(Error::lookup(format!(
                    "all lookup_options keys must start with module name '{m}'"
                )));
            }
        }
    }
    Ok(Some(h))
}

fn compile_patterns(options: Map) -> Result<CompiledOptions> {
    let mut c = CompiledOptions::default();
    for (k, v) in options {
        match &k {
            Value::String(s) if s.starts_with('^') => {
                let re = KeyPattern::new(s)?;
                c.patterns.push((re, v));
            }
            _ => {
                c.exact.insert(k, v);
            }
        }
    }
    Ok(c)
}

fn extract_options(o: &CompiledOptions, root: &str) -> Option<Value> {
    if let Some(v) = o.exact.get(&Value::str(root)) {
        if !v.is_null() {
            return Some(v.clone());
        }
    }
    o.patterns
        .iter()
        .find(|(re, _)| re.is_match(root))
        .map(|(_, v)| v.clone())
}
