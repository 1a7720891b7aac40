//! The lookup engine: Puppet's `LookupAdapter` and the merge driver.
//!
//! One [`Session`] answers any number of lookups for one node; data files, configurations
//! and lookup_options are loaded once per session. Explain nodes are only recorded when
//! the session was created with an explainer.
//!
//! - this module: the public API ([`Session`], [`Layers`], [`Settings`], [`Outcome`]), the
//!   lookup of one key (`LookupAdapter#lookup`), digging into it and the merge driver;
//! - `providers`: the layers (global, environment, modules), their hiera.yaml, their
//!   hierarchy entries and the backend calls at each location;
//! - `lookup_options`: finding, merging and matching `lookup_options`;
//! - `context`: what [`interpolation`](crate::interpolation) needs from a session
//!   (variables, nested lookups, explain objects).

mod blame;
mod context;
mod lookup_options;
pub use lookup_options::KeyPattern;
mod providers;
pub mod reach;

pub use crate::backend::custom::Secrets;
use crate::config::{FunctionKind, HieraConfig};
use crate::error::{Error, Result};
use crate::explain::{Explainer, Kind};
use crate::key::{LookupKey, Segment};
use crate::merge::objects::Rv;
use crate::merge::{MergeError, MergeStrategy};
use crate::scope::{Scope, Strict};
use crate::store::DataFiles;
use hiera_value::value::{Map, Value};
use lookup_options::CompiledOptions;
use providers::{EntriesResult, ProviderId};
use rustc_hash::FxHashMap;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

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
    /// The environment's `environment_data_provider` (its environment.conf's, else puppet.conf's):
    /// `hiera`, `function` or `none` make the environment layer as Puppet 8's
    /// `LookupAdapter#initialize_env_provider` does.
    pub environment_data_provider: Option<String>,
}

/// Session-wide settings.
#[derive(Debug, Clone, Default)]
pub struct Settings {
    /// Undefined variables in data: Puppet's `strict` setting.
    pub strict: Strict,
    /// Record the lookup's explanation (`--explain`): see [`Session::explainer`].
    pub explain: bool,
    /// Record only the lookup_options search (`--explain-options` alone).
    pub explain_options_only: bool,
    /// Record what backends decrypt (`ENC[...]` tokens), so that printing can show
    /// `[redacted]` instead ([`Session::redactor`]); the lookup itself is unchanged.
    pub redact: bool,
    /// What an eyaml `ENC[...]` value is without its private key, or always: Puppet's error,
    /// or an opaque secret ([`Secrets`]).
    pub secrets: Secrets,
}

/// Whether a `lookup_key: command` level runs the program it names. A lookup in the user's
/// own environment runs it; a command that analyses a tree it was handed (`diff` of a branch,
/// `lint`, `where` over a fleet) must not run code from that tree unless the user says so.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Exec {
    /// Run it.
    #[default]
    Allowed,
    /// Do not: the lookup fails with one line naming the level, its hiera.yaml and
    /// `how_to_allow` (the caller's words: "diff runs them only with --allow-exec").
    Refused {
        /// How the user allows it, appended to the error.
        how_to_allow: &'static str,
    },
}

/// The outcome of one lookup.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// The value found (merged, interpolated, converted).
    Found(Value),
    /// No layer has the key.
    NotFound,
}

/// One node's lookups.
pub struct Session {
    scope: Scope,
    settings: Settings,
    layers: Layers,
    cache: Caches,
    inv: Invocation,
    interp: Interpolation,
    /// `Some` with `--explain` or `--explain-options`.
    explain: Option<ExplainState>,
    warnings: Vec<String>,
    /// deep_merge's `merge_debug` trace: what Puppet prints on stdout while it merges.
    merge_trace: String,
    /// Backends registered by an embedding program.
    backends: crate::backend::custom::Backends,
    /// `where` only: what the lookup found (see [`reach`]).
    found_log: Option<reach::FoundLog>,
    /// With `--redact`: the plaintexts backends decrypted.
    secrets: crate::redact::Redactor,
    /// Whether `lookup_key: command` levels run ([`Session::set_exec`]).
    exec: Exec,
    /// Where the current top-level lookup's first error came from ([`blame`]).
    blame: Option<blame::Blame>,
    /// The first refusal to run a command level, if any ([`Session::refused_exec`]).
    refused: Option<String>,
    /// What this session read of the node's facts ([`Session::missed_facts`],
    /// [`Session::record_fact_reads`]).
    fact_reads: FactReads,
}

/// What a session read of the node's facts: whether its [slim](crate::slim) scope could not
/// answer a read, and, when asked, the paths it read. Cells: the reads that only peek at the
/// scope (the memo of resolved levels) take `&self`.
#[derive(Default)]
struct FactReads {
    missed: std::cell::Cell<bool>,
    recorded: std::cell::RefCell<Option<crate::slim::FactPaths>>,
}

/// What a session loads once: configurations, entries, data files and lookup_options. Every
/// lookup reads these maps several times: Fx hashing (their keys are paths and key names
/// from the control repo, not hostile input a hash flood could come from).
#[derive(Default)]
struct Caches {
    /// Where the configuration of each provider that exists comes from (resolved on first
    /// use).
    provider_sources: FxHashMap<ProviderId, Option<providers::ProviderSource>>,
    /// What each module's metadata.json says, read when the module is first asked for.
    module_metadata: FxHashMap<String, providers::ModuleMetadata>,
    configs: FxHashMap<PathBuf, std::result::Result<Arc<HieraConfig>, Error>>,
    entries: FxHashMap<(ProviderId, bool), EntriesResult>,
    files: DataFiles,
    /// This session's view of `files`, so that the hot path takes no lock.
    local_files: FxHashMap<String, LoadedHash>,
    /// What each data_hash function returned at each location: function → location →
    /// hash (two levels, so that the lookup of every entry allocates no key).
    data_hashes: FxHashMap<String, FxHashMap<String, LoadedHash>>,
    lookup_options: FxHashMap<Option<std::sync::Arc<str>>, Option<CompiledOptions>>,
    global_lookup_options: Option<Option<Map>>,
    env_lookup_options: Option<Option<Map>>,
    module_default_options: FxHashMap<String, Option<CompiledOptions>>,
}

type LoadedHash = std::result::Result<Arc<crate::backend::DataHash>, Error>;

/// The lookup in progress (Puppet's `Invocation`).
#[derive(Default)]
struct Invocation {
    /// The names being looked up, for recursion detection.
    name_stack: Vec<String>,
    top_keys: Vec<std::sync::Arc<str>>,
    /// Hiera 3 data confines nested lookups to the global layer.
    global_only: bool,
    /// Variables are read through Hiera 3's scope (a version 3 global layer is searching).
    v3_scope: bool,
    /// The module of the current invocation: the key's, which the search for its
    /// lookup_options also uses.
    invocation_module: Option<std::sync::Arc<str>>,
    /// The data files `lookup_options` values were found in (and how each is read): the one
    /// blamed for an error in the merged options, when it is the only one ([`blame`]).
    options_files: Vec<(String, Option<hiera_formats::DataFormat>)>,
}

/// Interpolation in progress.
#[derive(Default)]
struct Interpolation {
    /// Interpolation lookups (`%{lookup('k')}`, `hiera`, `alias`) now in progress, nested.
    lookup_depth: usize,
    /// Interpolation lookups made for the current top-level key, and their answers (without
    /// `--explain`, whose trace shows every one): `b: "%{lookup('c')}%{lookup('c')}"` forty
    /// levels deep is 2^40 lookups unless answers are kept.
    nested_lookups: usize,
    memo: FxHashMap<(String, bool, bool, bool), Value>,
    /// A local variable set while a mapped_paths template is interpolated.
    local_var: Option<(String, Value)>,
    /// Interpolating hierarchy locations: undefined variables warn (Puppet 8, PUP-11751).
    in_location: bool,
    /// While a hierarchy level is resolved: every read of the node's scope and what it
    /// found (the memo of resolved levels keys on them).
    reads: Option<Vec<(crate::store::ScopeRead, crate::store::Peek)>>,
}

/// `--explain` only: the explanation and the Ruby objects behind values.
struct ExplainState {
    ex: Explainer,
    /// The objects behind the cached global and environment lookup_options.
    global_lookup_options_obj: Option<Rv>,
    env_lookup_options_obj: Option<Rv>,
    /// The object an `alias` interpolation returned, until its caller takes it.
    alias_object: Option<Rv>,
    /// The object of each scope variable read (the same object every time).
    scope_objects: HashMap<String, Rv>,
}

impl Session {
    /// A session for the node `scope` over `layers`, reading data files from the disk.
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
        let explain = (settings.explain || settings.explain_options_only).then(|| ExplainState {
            ex: Explainer::new(),
            global_lookup_options_obj: None,
            env_lookup_options_obj: None,
            alias_object: None,
            scope_objects: HashMap::new(),
        });
        Session {
            scope,
            settings,
            layers,
            cache: Caches {
                files,
                ..Caches::default()
            },
            inv: Invocation::default(),
            interp: Interpolation::default(),
            explain,
            warnings: Vec::new(),
            merge_trace: String::new(),
            backends: Default::default(),
            found_log: None,
            secrets: Default::default(),
            exec: Exec::Allowed,
            blame: None,
            refused: None,
            fact_reads: FactReads::default(),
        }
    }

    /// Whether a read of the node's scope needed what its [slim](crate::slim) scope did not
    /// keep: the session's answers are then not the node's, and the question must be asked
    /// again with the node's whole scope.
    pub fn missed_facts(&self) -> bool {
        self.fact_reads.missed.get()
    }

    /// Records from now on which paths of the facts the session reads
    /// ([`take_fact_reads`](Self::take_fact_reads)).
    pub fn record_fact_reads(&mut self) {
        self.fact_reads
            .recorded
            .get_mut()
            .get_or_insert_with(Default::default);
    }

    /// The fact paths read since [`record_fact_reads`](Self::record_fact_reads): a slim
    /// scope keeping them answers this session's questions as the whole scope does.
    pub fn take_fact_reads(&mut self) -> Option<crate::slim::FactPaths> {
        self.fact_reads.recorded.get_mut().take()
    }

    /// The top-scope variable `name` (`x`, `::x`), read as a lookup reads it.
    pub(crate) fn scope_variable(&self, name: &str) -> Option<&Value> {
        self.note_read(name, &[]);
        self.scope.get(name)
    }

    /// Notes a read of the scope variable `root`, then `segments` into its value.
    pub(crate) fn note_read(&self, root: &str, segments: &[crate::key::Segment]) {
        if self.scope.misses(root, segments) {
            self.fact_reads.missed.set(true);
        }
        if let Some(paths) = self.fact_reads.recorded.borrow_mut().as_mut() {
            if let Some(path) = crate::slim::fact_path(root, segments) {
                paths.add(path);
            }
        }
    }

    /// Whether `lookup_key: command` levels run their program ([`Exec::Allowed`], the
    /// default) or fail the lookup that reaches them.
    pub fn set_exec(&mut self, exec: Exec) {
        self.exec = exec;
    }

    /// The error of the first lookup that reached a `command` level this session refused to
    /// run ([`Exec::Refused`]): a command analysing a tree reports it instead of answering
    /// as if the level had nothing.
    pub fn refused_exec(&self) -> Option<&str> {
        self.refused.as_deref()
    }

    /// Makes embedders' backends available to hierarchy entries naming them.
    pub fn set_backends(&mut self, backends: crate::backend::custom::Backends) {
        self.backends = backends;
    }

    /// The `merge_debug` trace gathered so far: deep_merge's lines, which Puppet prints on
    /// stdout before the answer (or before failing, when the lookup fails after merging).
    pub fn take_merge_trace(&mut self) -> String {
        std::mem::take(&mut self.merge_trace)
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

    /// With `--redact`, what hides the plaintexts this session's lookups decrypted: apply
    /// it to everything printed (values, traces, messages). `None` without `--redact`.
    pub fn redactor(&self) -> Option<&crate::redact::Redactor> {
        self.settings.redact.then_some(&self.secrets)
    }

    /// Drops what the session loaded (data files, configurations, lookup_options), keeping
    /// the explanation: printing a trace needs none of it, and a 15 MB data file parses into
    /// a few hundred megabytes. Later lookups load again what they need.
    pub fn release_data(&mut self) {
        let fs = self.cache.files.fs().clone();
        self.cache = Caches {
            files: DataFiles::with_fs(fs),
            ..Caches::default()
        };
        self.interp.memo.clear();
    }

    /// The explanation so far (`None` unless the settings asked for one).
    pub fn explainer(&self) -> Option<&Explainer> {
        self.ex_ref()
    }

    /// The explanation so far, to add a line at its root (`None` unless asked for).
    pub fn explainer_mut(&mut self) -> Option<&mut Explainer> {
        self.ex_mut()
    }

    fn ex_ref(&self) -> Option<&Explainer> {
        self.explain.as_ref().map(|x| &x.ex)
    }

    fn ex_mut(&mut self) -> Option<&mut Explainer> {
        self.explain.as_mut().map(|x| &mut x.ex)
    }

    // ---- explain helpers -------------------------------------------------------------

    fn with<T>(&mut self, kind: impl FnOnce() -> Kind, f: impl FnOnce(&mut Self) -> T) -> T {
        if let Some(ex) = self.ex_mut() {
            ex.push(kind());
            let r = f(self);
            if let Some(ex) = self.ex_mut() {
                ex.pop();
            }
            r
        } else {
            f(self)
        }
    }
    fn report_found(&mut self, key: &str, v: &Value) {
        if let Some(ex) = self.ex_mut() {
            ex.found(key, v);
        }
    }
    fn report_not_found(&mut self, key: &str) {
        if let Some(ex) = self.ex_mut() {
            ex.not_found(key);
        }
    }
    /// Explain only: the object behind `v`, the value the lookup in progress just produced.
    fn object_for(&mut self, v: &Value) -> Option<Rv> {
        self.ex_mut().map(|ex| ex.object_for(v))
    }
    /// Explain only: the trace's objects within [`MAX_EXPLAIN_VALUES`](hiera_value::limits::MAX_EXPLAIN_VALUES),
    /// checked after each value found or merged (one value past it at most).
    fn explain_budget(&self) -> Result<()> {
        const MAX: usize = hiera_value::limits::MAX_EXPLAIN_VALUES;
        match self.ex_ref() {
            Some(ex) if ex.heap().len() > MAX => Err(Error::run(format!(
                "--explain: the explanation would hold more than {MAX} values (hashes, arrays, strings); look the key up without --explain"
            ))),
            _ => Ok(()),
        }
    }
    /// Explain only: marks the object a step produced (see [`object_for`](Self::object_for)).
    fn produced(&mut self, rv: Option<Rv>) {
        if let (Some(ex), Some(rv)) = (self.ex_mut(), rv) {
            ex.produced(rv);
        }
    }

    // ---- the public entry point ------------------------------------------------------

    /// `Puppet::Pops::Lookup.lookup`: the first of `keys` that is found wins.
    pub fn lookup(&mut self, keys: &[String], merge: Option<&MergeStrategy>) -> Result<Outcome> {
        if self.interp.lookup_depth == 0 {
            // A new top-level lookup: the scope is the same, but an embedder may have
            // registered backends or the files may have changed between two of them.
            self.interp.memo.clear();
            self.interp.nested_lookups = 0;
            self.blame = None;
            return self.lookup_keys(keys, merge).map_err(|e| self.located(e));
        }
        self.lookup_keys(keys, merge)
    }

    fn lookup_keys(&mut self, keys: &[String], merge: Option<&MergeStrategy>) -> Result<Outcome> {
        for key in keys {
            if let Some(v) = self.adapter_lookup(key, merge)? {
                return Ok(Outcome::Found(v));
            }
        }
        Ok(Outcome::NotFound)
    }

    /// Every key this node can see in the file-backed levels of its layers (global,
    /// environment, and every module's own keys): the data_hash files, and those
    /// `eyaml_lookup_key` levels read (YAML hashes, some values encrypted); in first-seen
    /// order, without `lookup_options`. Files that fail to load are skipped here; looking
    /// their keys up reports the error. A level whose keys only its function knows (a
    /// custom `lookup_key` or `data_dig` function, `command`, a Hiera 3 backend) is named in
    /// a warning ([`take_warnings`](Self::take_warnings)): its keys are left out.
    pub fn all_keys(&mut self) -> Result<Vec<String>> {
        let mut seen: indexmap::IndexSet<String, rustc_hash::FxBuildHasher> = Default::default();
        let unlisted = self.each_data_file(true, |module_prefix, _, hash| {
            for k in hash.keys() {
                if k == LOOKUP_OPTIONS {
                    continue;
                }
                if module_prefix.is_some_and(|p| !k.starts_with(p)) {
                    continue;
                }
                if !seen.contains(k) {
                    seen.insert(k.to_string());
                }
            }
        })?;
        for (level, kind, function) in unlisted {
            let w = format!(
                "level '{level}' ({kind}: {function}) cannot list its keys: every key of the data is listed but its own"
            );
            if !self.warnings.contains(&w) {
                self.warnings.push(w);
            }
        }
        Ok(seen.into_iter().collect())
    }

    /// Calls `f` with every data file this node's levels reach that a built-in data_hash
    /// function reads (and eyaml_lookup_key's, read as yaml_data reads them, when `eyaml`),
    /// in lookup order: with the key prefix of its module (`apache::`) for a module's
    /// files, its path, and its hash. Files that fail to load are skipped. Returns the levels
    /// whose keys only their function knows (name, function kind and name), once each.
    fn each_data_file(
        &mut self,
        eyaml: bool,
        mut f: impl FnMut(Option<&str>, &str, &crate::backend::DataHash),
    ) -> Result<Vec<(String, &'static str, String)>> {
        let mut unlisted: Vec<(String, &'static str, String)> = Vec::new();
        let ids = self.layer_providers();
        for id in ids {
            let module_prefix = match &id {
                ProviderId::Module(m) => Some(format!("{m}::")),
                _ => None,
            };
            let Some(source) = self.provider_source(&id)? else {
                continue;
            };
            let Ok(cfg) = self.config_of(&id, &source) else {
                continue;
            };
            let mut lists = vec![self.entries_of(&id, &cfg, false)];
            if cfg.default_hierarchy.is_some() {
                lists.push(self.entries_of(&id, &cfg, true));
            }
            for entries in lists.into_iter().flatten() {
                for e in entries.iter() {
                    // Another function's keys are known only to it.
                    let format = match e.entry.kind {
                        FunctionKind::DataHash => e.entry.data_format(),
                        FunctionKind::LookupKey if eyaml => e.entry.data_format(),
                        _ => None,
                    };
                    let Some(format) = format else {
                        let level = (
                            e.entry.name.clone(),
                            e.entry.kind.tag(),
                            e.entry.function.clone(),
                        );
                        if e.entry.data_format().is_none() && !unlisted.contains(&level) {
                            unlisted.push(level);
                        }
                        continue;
                    };
                    for loc in e.locations.iter().flatten().filter(|l| l.exists && !l.uri) {
                        let mut w = Vec::new();
                        let Ok(hash) = self.cache.files.data_hash(
                            format,
                            &loc.location,
                            self.settings.strict,
                            &mut w,
                        ) else {
                            continue;
                        };
                        f(module_prefix.as_deref(), &loc.location, &hash);
                    }
                }
            }
        }
        Ok(unlisted)
    }

    /// Adds to `keep` the fact paths the `%{}` expressions in the data files this node
    /// reaches would read ([`slim`](crate::slim)'s prediction of what slim forms keep), each
    /// file once: `seen` holds the files probed already.
    pub fn probe_fact_reads(
        &mut self,
        keep: &mut crate::slim::FactPaths,
        seen: &mut std::collections::HashSet<String>,
    ) {
        let _ = self.each_data_file(true, |_, path, hash| {
            if !seen.insert(path.to_string()) {
                return;
            }
            for key in hash.keys() {
                crate::slim::probe_str(key, keep);
                if let Ok(Some(v)) = hash.get(key) {
                    crate::slim::probe(&v, keep);
                }
            }
        });
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
        self.inv.top_keys.push(lk.key.clone());
        let saved = std::mem::replace(&mut self.inv.invocation_module, lk.module_name.clone());
        let r = self.adapter_lookup_key(&lk, merge);
        self.inv.invocation_module = saved;
        self.inv.top_keys.pop();
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
        // `lookup_lookup_options(key, invocation) || {}`: nil and false are no options.
        let opts = self
            .lookup_lookup_options(lk)?
            .filter(|o| !matches!(o, Value::Null | Value::Bool(false)));
        let strategy = match merge {
            Some(m) => m.clone(),
            None => match opts
                .as_ref()
                .map(|o| option_get(o, "merge"))
                .transpose()?
                .flatten()
                .filter(|m| !m.is_null())
            {
                Some(m) => {
                    if let Some(ex) = self.ex_mut() {
                        ex.merge_source(LOOKUP_OPTIONS);
                    }
                    match MergeStrategy::from_value(&m).map_err(merge_error) {
                        Ok(m) => m,
                        Err(e) => {
                            self.blame_lookup_options(&e);
                            return Err(e);
                        }
                    }
                }
                None => MergeStrategy::First,
            },
        };
        let value = self.with(
            || Kind::Top {
                key: lk.key.to_string(),
            },
            |s| -> Result<Option<Value>> {
                if let Some(v) = s.do_lookup(lk, &strategy)? {
                    return Ok(Some(v));
                }
                if s.inv.global_only {
                    return Ok(None);
                }
                match s.lookup_default_in_module(lk)? {
                    Some(v) => s.dig(lk, v),
                    None => Ok(None),
                }
            },
        )?;
        // `lookup_options[CONVERT_TO]`, read once a value is found; `return result if
        // convert_to.nil?`: a null convert_to converts nothing.
        let convert_to = match (&value, &opts) {
            (Some(_), Some(o)) => option_get(o, "convert_to")?.filter(|c| !c.is_null()),
            _ => None,
        };
        match (value, convert_to) {
            (Some(v), Some(convert_to)) => {
                let v = self.convert_to(&lk.key, v, &convert_to)?;
                // A new object, which an `alias` of this key returns.
                let o = self.explain.is_some().then(|| self.alloc_object(&v));
                self.produced(o);
                Ok(Some(v))
            }
            (v, _) => Ok(v),
        }
    }

    /// `convert_to`: the conversions that do not need Puppet's type system.
    /// `convert_to`: Puppet's `new` of the option's type, after merging and digging.
    fn convert_to(&mut self, key: &str, value: Value, convert_to: &Value) -> Result<Value> {
        // An opaque secret converts only where a stand-in string does (`Sensitive`); any
        // other conversion needs the plaintext: the value stays as it is, not an error.
        let opaque = crate::backend::eyaml::contains_opaque(&value).then(|| value.clone());
        let result = match (hiera_types::convert(value, convert_to), opaque) {
            (Ok(v), _) => v,
            (Err(_), Some(v)) => return Ok(v),
            (Err(e), None) => return Err(Error::lookup(e.lookup_message(key))),
        };
        if let Some(ex) = self.ex_mut() {
            ex.root_text(format!(
                "Applying convert_to lookup_option with arguments {}",
                hiera_types::convert_args_string(convert_to)
            ));
        }
        Ok(result)
    }

    fn do_lookup(&mut self, lk: &LookupKey, strategy: &MergeStrategy) -> Result<Option<Value>> {
        let found = if self.inv.global_only {
            self.lookup_global(lk, strategy)?
        } else {
            // The module layer's provider is named by the key, so a placeholder stands in.
            let layers = [
                ProviderId::Global,
                ProviderId::Environment,
                ProviderId::Module(String::new()),
            ];
            self.merge_lookup_in(
                strategy,
                &layers,
                |s, layer| match layer {
                    ProviderId::Global => s.lookup_global(lk, strategy),
                    ProviderId::Environment => s.lookup_in_environment(lk, strategy),
                    ProviderId::Module(_) => s.lookup_in_module(lk, strategy),
                },
                true,
            )?
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
        if self.explain.is_none() {
            // Nothing to record: dig in place and copy only what is found.
            return Ok(dig_ref(&value, segments, key)?.cloned());
        }
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
                            let next = dig_step(&value, seg, key)?.cloned();
                            match next {
                                Some(v) => {
                                    if let Some(ex) = s.ex_mut() {
                                        let child = obj
                                            .take()
                                            .and_then(|o| ex.heap().child(&o, &seg.to_value()))
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
        f: impl FnMut(&mut Self, &T) -> Result<Option<Value>>,
    ) -> Result<Option<Value>> {
        self.merge_lookup_in(strategy, variants, f, false)
    }

    /// [`merge_lookup`](Self::merge_lookup); `unchecked`: the merge runs outside any
    /// `Invocation#check` (LookupAdapter#do_lookup's merge of the layers), so a merge that
    /// fails is a plain error (a TypeAssertionError), never a LookupError.
    fn merge_lookup_in<T: Clone>(
        &mut self,
        strategy: &MergeStrategy,
        variants: &[T],
        mut f: impl FnMut(&mut Self, &T) -> Result<Option<Value>>,
        unchecked: bool,
    ) -> Result<Option<Value>> {
        let merge_error = |e: crate::merge::MergeError| {
            if unchecked {
                Error::run(e.message)
            } else {
                merge_error(e)
            }
        };
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
                    self.explain_budget()?;
                    let xo = self.object_for(&x);
                    let r = strategy.merge_single(x).map_err(merge_error)?;
                    if let (Some(ex), Some(xo)) = (self.ex_mut(), xo) {
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
                        // `memo = merge(memo, x)`, in linear time.
                        let mut memo = strategy.fold();
                        // Explain only: the same merge replayed on the found objects, which
                        // Ruby's merges share and edit in place.
                        let mut memo_o: Option<Rv> = None;
                        // merge_debug only: the merge replayed on objects, printing the trace.
                        let mut traced = strategy
                            .merge_debug()
                            .then(|| (crate::merge::objects::Heap::new(), None));
                        for v in variants {
                            if let Some(x) = f(s, v)? {
                                s.explain_budget()?;
                                if let Some((heap, memo_t)) = traced.as_mut() {
                                    s.merge_trace
                                        .push_str(&trace_step(strategy, heap, memo_t, &x));
                                }
                                let xo = s.object_for(&x);
                                memo.push(x).map_err(merge_error)?;
                                if let (Some(ex), Some(xo)) = (s.ex_mut(), xo) {
                                    let heap = ex.heap_mut();
                                    memo_o = Some(match memo_o.take() {
                                        None => heap.convert_value(strategy, xo),
                                        Some(m) => match heap.merge(strategy, m, xo) {
                                            Ok(o) => o,
                                            // Not reached: the value merge above succeeded.
                                            Err(_) => heap.alloc(&Value::Null),
                                        },
                                    });
                                }
                                s.explain_budget()?;
                            }
                        }
                        let memo = memo.finish().map_err(merge_error)?;
                        if let (Some(r), Some(ex)) = (&memo, s.ex_mut()) {
                            let ro = memo_o.unwrap_or_else(|| ex.heap_mut().alloc(r));
                            ex.result_object(ro);
                        }
                        Ok(memo)
                    },
                )
            }
        }
    }
}

/// One `memo = merge(memo, x)` step replayed on `heap` for its `merge_debug` trace (a
/// failing merge stops the value merge too, with its own error).
fn trace_step(
    strategy: &MergeStrategy,
    heap: &mut crate::merge::objects::Heap,
    memo: &mut Option<Rv>,
    x: &Value,
) -> String {
    let mut trace = String::new();
    let xo = heap.alloc(x);
    *memo = Some(match memo.take() {
        None => heap.convert_value(strategy, xo),
        Some(m) => heap
            .merge_traced(strategy, m, xo, &mut trace)
            .unwrap_or_else(|_| heap.alloc(&Value::Null)),
    });
    trace
}

fn merge_error(e: MergeError) -> Error {
    if e.raw {
        Error::run(e.message)
    } else {
        Error::lookup(e.message)
    }
}

/// Ruby's `options[key]` on a key's lookup_options entry, whatever data made it: a Hash's
/// value, a String's substring (`String#[]`), else the TypeError or NoMethodError Ruby raises.
pub(super) fn option_get(v: &Value, key: &str) -> Result<Option<Value>> {
    match v {
        Value::Hash(h) => Ok(h.get(&Value::str(key)).cloned()),
        Value::String(s) => Ok(s.contains(key).then(|| Value::str(key))),
        Value::Int(_) | Value::BigInt(_) | Value::Array(_) => {
            Err(Error::run("no implicit conversion of String into Integer"))
        }
        Value::Null => Err(Error::run("undefined method `[]' for nil")),
        Value::Bool(b) => Err(Error::run(format!("undefined method `[]' for {b}"))),
        other => Err(Error::run(format!(
            "undefined method `[]' for an instance of {}",
            other.ruby_class()
        ))),
    }
}

fn hash_get(v: &Value, key: &str) -> Option<Value> {
    match v {
        Value::Hash(h) => h.get(&Value::str(key)).cloned(),
        _ => None,
    }
}

/// One step of digging into a value (`Lookup::SubLookup#sub_lookup`): the element `seg`
/// names, by reference (`None`: there is none), or Puppet's error for a value that cannot be
/// dug into.
pub(crate) fn dig_step<'a>(
    value: &'a Value,
    seg: &Segment,
    key: &str,
) -> Result<Option<&'a Value>> {
    match (value, seg) {
        (Value::Null, _) => Ok(None),
        (Value::Array(a), Segment::Index(i)) => Ok(usize::try_from(*i).ok().and_then(|i| a.get(i))),
        // An index beyond 64 bits is past the end of any array.
        (Value::Array(_), Segment::BigIndex(_)) => Ok(None),
        (Value::Hash(h), seg) => Ok(h.get(&seg.to_value())),
        // Integer#[] exists (a bit reference), so Puppet goes on to `include?`, which
        // Integer lacks: a raw NoMethodError.
        (Value::Int(_) | Value::BigInt(_), _) => Err(Error::run(
            "undefined method `include?' for an instance of Integer",
        )),
        (other, _) => Err(Error::lookup(format!(
            "Data Provider type mismatch: Got {} when a hash-like object was expected to access value using '{seg}' from key '{key}'",
            other.ruby_class()
        ))),
    }
}

/// Every step of [`dig_step`] in turn, in place: what `segments` name inside `value`.
pub(crate) fn dig_ref<'a>(
    mut value: &'a Value,
    segments: &[Segment],
    key: &str,
) -> Result<Option<&'a Value>> {
    for seg in segments {
        match dig_step(value, seg, key)? {
            Some(v) => value = v,
            None => return Ok(None),
        }
    }
    Ok(Some(value))
}
