//! The data providers: the global layer, the environment layer and each module, their
//! hiera.yaml, their resolved hierarchy entries and the backend call at each location.

use super::lookup_options::{
    compile_patterns, extract_options, validate_lookup_options, CompiledOptions,
};
use super::{merge_error, option_get, Session, LOOKUP_OPTIONS};
use crate::backend::custom::{Call, Found, Host};
use crate::backend::{validate_data_value, Builtin, DataHash};
use crate::config::ResolvedLocation;
use crate::config::{Entry, FunctionKind, HieraConfig, Layer, LoadContext};
use crate::error::{Error, Result};
use crate::explain::Kind;
use crate::interpolation::{interpolate, interpolate_str};
use crate::key::{LookupKey, Segment};
use crate::merge::MergeStrategy;
use crate::scope::Strict;
use crate::store::{LevelResolution, ResolvedEntry};
use hiera_formats::DataFormat;
use hiera_value::value::{Map, Value};
use std::path::{Path, PathBuf};
use std::sync::Arc;

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(super) enum ProviderId {
    Global,
    Environment,
    Module(String),
}

/// Where a data provider's configuration comes from.
#[derive(Debug, Clone)]
pub(super) enum ProviderSource {
    /// A hiera.yaml; Puppet's default configuration when the file does not exist (the global
    /// layer's, a `hiera` data provider's without one).
    File(Arc<Path>),
    /// Puppet 8's legacy `data_provider: function` ([`HieraConfig::v4_function`]).
    Function(Arc<HieraConfig>),
}

/// What `Puppet::Module` takes from a module's metadata.json.
#[derive(Debug, Clone)]
pub(crate) enum ModuleMetadata {
    /// A metadata.json Puppet refuses (`MissingMetadata`, or `FaultyMetadata` under strict
    /// `error`): the environment does not have the module (Puppet logs the error and drops it).
    Refused,
    /// Usable; its `data_provider`, if any.
    Usable(Option<Value>),
}

pub(super) type EntriesResult = std::result::Result<Arc<Vec<ResolvedEntry>>, Error>;

impl Session {
    /// Every layer's data provider, in lookup order: global, environment, then each module's.
    pub(super) fn layer_providers(&self) -> Vec<ProviderId> {
        let mut ids = vec![ProviderId::Global, ProviderId::Environment];
        ids.extend(
            self.layers
                .modules
                .iter()
                .map(|(n, _)| ProviderId::Module(n.clone())),
        );
        ids
    }

    // ---- layers ----------------------------------------------------------------------

    pub(super) fn lookup_global(
        &mut self,
        lk: &LookupKey,
        strategy: &MergeStrategy,
    ) -> Result<Option<Value>> {
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
                let top = self.inv.top_keys.last().cloned().unwrap_or_default();
                // Puppet blames the first key looked up (`lookup_options`) for a broken
                // global hiera.yaml: say first what failed.
                let config = message.starts_with("The Lookup Configuration at")
                    || (message.starts_with('(') && message.contains("this Hiera configuration"));
                let lead = if config {
                    "The Hiera configuration could not be loaded: "
                } else {
                    ""
                };
                Error::Puppet(format!("{lead}Lookup of key '{top}' failed: {message}"))
            }
            other => other,
        })
    }

    /// `GlobalDataProvider#unchecked_key_lookup`: a Hiera 3 configuration runs in Hiera 3's
    /// scope and, unless the environment has a version 5 configuration, confines nested
    /// lookups to the global layer.
    pub(super) fn global_provider_lookup(
        &mut self,
        lk: &LookupKey,
        strategy: &MergeStrategy,
    ) -> Result<Option<Value>> {
        let v3 = !self.inv.v3_scope
            && match self.provider_source(&ProviderId::Global)? {
                Some(p) => self
                    .config_of(&ProviderId::Global, &p)
                    .is_ok_and(|c| c.version == 3),
                None => false,
            };
        if !v3 {
            return self.provider_key_lookup(&ProviderId::Global, lk, strategy, false);
        }
        let saved = (self.inv.v3_scope, self.inv.global_only);
        self.inv.v3_scope = true;
        if !self.inv.global_only && !self.has_environment_v5()? {
            self.inv.global_only = true;
        }
        let r = self.provider_key_lookup(&ProviderId::Global, lk, strategy, false);
        (self.inv.v3_scope, self.inv.global_only) = saved;
        r
    }

    /// `LookupAdapter#has_environment_data_provider?`: an environment layer of version 5.
    pub(super) fn has_environment_v5(&mut self) -> Result<bool> {
        Ok(self
            .provider_config(&ProviderId::Environment)?
            .is_some_and(|c| c.version >= 5))
    }

    pub(super) fn lookup_in_environment(
        &mut self,
        lk: &LookupKey,
        strategy: &MergeStrategy,
    ) -> Result<Option<Value>> {
        if self.provider_source(&ProviderId::Environment)?.is_none() {
            return Ok(None);
        }
        self.provider_key_lookup(&ProviderId::Environment, lk, strategy, false)
    }

    pub(super) fn lookup_in_module(
        &mut self,
        lk: &LookupKey,
        strategy: &MergeStrategy,
    ) -> Result<Option<Value>> {
        let Some(module) = self.current_module_name(lk) else {
            return Ok(None);
        };
        // A module that is not there has no provider (provider_source's answer, without
        // building its id: most keys name a module, few repositories have them all).
        let exists = self.module_exists(&module);
        if exists {
            let id = ProviderId::Module(module.to_string());
            if self.provider_source(&id)?.is_some() {
                return self.provider_key_lookup(&id, lk, strategy, false);
            }
        }
        if let Some(ex) = self.ex_mut() {
            ex.module_not_found(&module, exists);
        }
        Ok(None)
    }

    /// Where a provider's configuration comes from, or `None` when the provider does not
    /// exist: Puppet's `LookupAdapter#global_provider`, `#initialize_env_provider` and
    /// `#initialize_module_provider` (an environment or module without hiera.yaml nor a
    /// legacy data provider, an unknown module, a `none` data provider, or Puppet 7 ignoring
    /// a version 3 file).
    pub(super) fn provider_source(&mut self, id: &ProviderId) -> Result<Option<ProviderSource>> {
        if let Some(p) = self.cache.provider_sources.get(id) {
            // Shared, not copied: every lookup asks for two or three of these.
            return Ok(p.clone());
        }
        let source = match id {
            ProviderId::Global => {
                (self.layers.global.clone()).map(|p| ProviderSource::File(p.into()))
            }
            ProviderId::Environment => self.environment_source()?,
            ProviderId::Module(name) => self.module_source(name)?,
        };
        self.cache
            .provider_sources
            .insert(id.clone(), source.clone());
        Ok(source)
    }

    /// The configuration a provider's source gives.
    pub(super) fn config_of(
        &mut self,
        id: &ProviderId,
        source: &ProviderSource,
    ) -> Result<Arc<HieraConfig>> {
        match source {
            ProviderSource::File(p) => self.config_at(id, p),
            ProviderSource::Function(cfg) => Ok(cfg.clone()),
        }
    }

    /// The configuration of a provider that exists.
    pub(super) fn provider_config(&mut self, id: &ProviderId) -> Result<Option<Arc<HieraConfig>>> {
        match self.provider_source(id)? {
            Some(source) => self.config_of(id, &source).map(Some),
            None => Ok(None),
        }
    }

    /// An environment's or a module's hiera.yaml that exists (`assert_config_version`):
    /// version 3 is Puppet 8's error, or Puppet 7's warning and no provider.
    fn hiera_yaml_source(&mut self, id: &ProviderId, p: PathBuf) -> Result<Option<ProviderSource>> {
        let cfg = self.config_at(id, &p)?;
        if cfg.version != 3 {
            return Ok(Some(ProviderSource::File(p.into())));
        }
        let (what, root) = match id {
            ProviderId::Environment => ("an environment", "the environment root"),
            _ => ("a module", "module root"),
        };
        if self.settings.strict == Strict::Error {
            return Err(Error::issue(format!(
                "hiera.yaml version 3 cannot be used in {what} (file: {})",
                p.display()
            )));
        }
        self.warnings
            .push(format!("hiera.yaml version 3 found at {root} was ignored"));
        Ok(None)
    }

    /// `LookupAdapter#initialize_env_provider`: the environment's hiera.yaml, unless its
    /// `environment_data_provider` (environment.conf's, else puppet.conf's) says otherwise
    /// and the hiera.yaml, if any, is not of version 5.
    fn environment_source(&mut self) -> Result<Option<ProviderSource>> {
        let Some(dir) = self.layers.environment_dir.clone() else {
            return Ok(None);
        };
        let config_path = dir.join("hiera.yaml");
        let conf = dir.join("environment.conf");
        let conf = conf.display();
        let warn = self.settings.strict != Strict::Off;
        let mut provider = self.layers.environment_data_provider.clone();
        let mut ep = None;
        if self.cache.files.fs().exists(&config_path) {
            ep = self.hiera_yaml_source(&ProviderId::Environment, config_path.clone())?;
            if let Some(source) = &ep {
                let cfg = self.config_of(&ProviderId::Environment, source)?;
                if cfg.version >= 5 {
                    if let Some(name) = provider.take().filter(|_| warn) {
                        self.warnings.push(format!(
                            "Defining environment_data_provider='{name}' in environment.conf is deprecated (file: {conf})"
                        ));
                        if name != "hiera" {
                            self.warnings.push(format!(
                                "The environment_data_provider='{name}' setting is ignored since '{}' version >= 5 (file: {conf})",
                                config_path.display()
                            ));
                        }
                    }
                }
            }
        }
        let Some(name) = provider else {
            return Ok(ep);
        };
        if warn {
            let instead = if ep.is_none() {
                " A 'hiera.yaml' file should be used instead"
            } else {
                ""
            };
            self.warnings.push(format!(
                "Defining environment_data_provider='{name}' in environment.conf is deprecated.{instead} (file: {conf})"
            ));
        }
        match name.as_str() {
            "none" => Ok(None),
            // The hiera.yaml, or Puppet's default configuration where it would be.
            "hiera" => Ok(ep.or(Some(ProviderSource::File(config_path.into())))),
            "function" => Ok(Some(self.legacy_function(&dir, "environment::data"))),
            other => Err(Error::run(format!(
                "Environment '{}', cannot find environment_data_provider '{other}'",
                dir.file_name().unwrap_or_default().to_string_lossy()
            ))),
        }
    }

    /// `HieraConfigV5.v4_function_config`, with its deprecation.
    fn legacy_function(&mut self, root: &Path, name: &str) -> ProviderSource {
        if self.settings.strict != Strict::Off {
            self.warnings.push(format!(
                "Using of legacy data provider function '{name}'. Please convert to a 'data_hash' function"
            ));
        }
        ProviderSource::Function(Arc::new(HieraConfig::v4_function(root, name)))
    }

    /// The directory of module `name`, if the environment has it.
    fn module_dir(&self, name: &str) -> Option<PathBuf> {
        (self.layers.modules.iter())
            .find(|(n, _)| n == name)
            .map(|(_, d)| d.clone())
    }

    /// Whether the environment has module `name` (`Environment#module`): on its modulepath,
    /// and with a metadata.json Puppet accepts.
    pub(super) fn module_exists(&mut self, name: &str) -> bool {
        self.layers.modules.iter().any(|(n, _)| n == name)
            && matches!(self.module_metadata(name), ModuleMetadata::Usable(_))
    }

    /// `Puppet::Module#load_metadata`: a metadata.json that does not parse is refused under
    /// strict `error` (a warning otherwise, and no metadata); one that parses must give
    /// `source`, `author`, `version`, `license` and an array of `dependencies`, or Puppet
    /// drops the module. Each refusal is the warning Puppet logs as an error.
    fn module_metadata(&mut self, name: &str) -> ModuleMetadata {
        if let Some(m) = self.cache.module_metadata.get(name) {
            return m.clone();
        }
        let meta = match self.module_dir(name) {
            Some(dir) => self.read_module_metadata(name, &dir.join("metadata.json")),
            None => ModuleMetadata::Usable(None),
        };
        self.cache
            .module_metadata
            .insert(name.to_string(), meta.clone());
        meta
    }

    fn read_module_metadata(&mut self, name: &str, path: &Path) -> ModuleMetadata {
        let text = match self.cache.files.fs().read_text(path) {
            Ok(t) => t,
            Err(_) => return ModuleMetadata::Usable(None),
        };
        if text.is_empty() {
            return ModuleMetadata::Usable(None);
        }
        let data = match hiera_formats::json::parse(&text) {
            Ok(v) => v,
            Err(e) => {
                self.warnings.push(format!(
                    "{name} has an invalid and unparsable metadata.json file. The parse error: {e}"
                ));
                return match self.settings.strict {
                    Strict::Error => ModuleMetadata::Refused,
                    _ => ModuleMetadata::Usable(None),
                };
            }
        };
        let Value::Hash(data) = data else {
            return ModuleMetadata::Usable(None);
        };
        if data.is_empty() {
            return ModuleMetadata::Usable(None);
        }
        for attr in ["source", "author", "version", "license", "dependencies"] {
            let refused = match data.get(&Value::str(attr)) {
                None | Some(Value::Null) => {
                    format!("No {attr} module metadata provided for {name}")
                }
                Some(
                    v @ (Value::String(_)
                    | Value::Int(_)
                    | Value::Float(_)
                    | Value::Bool(_)
                    | Value::Hash(_)),
                ) if attr == "dependencies" => {
                    format!(
                        "The value for the key dependencies in the file metadata.json of the module {name} must be an array, not: '{}'",
                        hiera_value::text::to_s(v)
                    )
                }
                Some(_) => continue,
            };
            self.warnings.push(refused);
            return ModuleMetadata::Refused;
        }
        ModuleMetadata::Usable(
            data.get(&Value::str("data_provider"))
                .filter(|v| !v.is_null())
                .cloned(),
        )
    }

    /// `LookupAdapter#initialize_module_provider`: the module's hiera.yaml, unless its
    /// metadata.json's `data_provider` says otherwise and the hiera.yaml, if any, is not of
    /// version 5.
    fn module_source(&mut self, name: &str) -> Result<Option<ProviderSource>> {
        let Some(dir) = self.module_dir(name) else {
            return Ok(None);
        };
        let ModuleMetadata::Usable(provider) = self.module_metadata(name) else {
            return Ok(None);
        };
        let mut provider = provider.map(|p| hiera_value::text::to_s(&p));
        let id = ProviderId::Module(name.to_string());
        let metadata = dir.join("metadata.json");
        let metadata = metadata.display();
        let warn = self.settings.strict != Strict::Off;
        let config_path = dir.join("hiera.yaml");
        let mut mp = None;
        if self.cache.files.fs().exists(&config_path) {
            mp = self.hiera_yaml_source(&id, config_path.clone())?;
            if let Some(source) = &mp {
                if self.config_of(&id, source)?.version >= 5 {
                    if let Some(p) = provider.take().filter(|_| warn) {
                        self.warnings.push(format!(
                            "Defining \"data_provider\": \"{p}\" in metadata.json is deprecated. It is ignored since a 'hiera.yaml' with version >= 5 is present (file: {metadata})"
                        ));
                    }
                }
            }
        }
        let Some(p) = provider else {
            return Ok(mp);
        };
        if warn {
            let instead = if mp.is_none() {
                " A 'hiera.yaml' file should be used instead"
            } else {
                ""
            };
            self.warnings.push(format!(
                "Defining \"data_provider\": \"{p}\" in metadata.json is deprecated.{instead} (file: {metadata})"
            ));
        }
        match p.as_str() {
            "none" => Ok(None),
            "hiera" => Ok(mp.or(Some(ProviderSource::File(config_path.into())))),
            "function" => Ok(Some(self.legacy_function(&dir, &format!("{name}::data")))),
            // Puppet 8's own error here (`raise Puppet::Error.new(...) % {...}` applies `%`
            // to the exception).
            other => Err(Error::run(format!(
                "undefined method `%' for an instance of Puppet::Error (Puppet 8's failure on metadata.json's unknown \"data_provider\": \"{other}\" of module {name}, {metadata}: use hiera, function or none)"
            ))),
        }
    }

    /// The module an invocation belongs to: the key's, or for lookup_options the module of
    /// the key whose options are being searched.
    pub(super) fn current_module_name(&self, lk: &LookupKey) -> Option<Arc<str>> {
        if &*lk.key == LOOKUP_OPTIONS {
            return self.inv.invocation_module.clone();
        }
        lk.module_name.clone()
    }

    pub(super) fn lookup_default_in_module(&mut self, lk: &LookupKey) -> Result<Option<Value>> {
        let Some(module) = lk.module_name.as_deref().map(String::from) else {
            return Ok(None);
        };
        let id = ProviderId::Module(module.clone());
        if !self.module_exists(&module) {
            return Ok(None);
        }
        let Some(cfg) = self.provider_config(&id)? else {
            return Ok(None);
        };
        if cfg.default_hierarchy.is_none() {
            return Ok(None);
        }
        let label = format!("Searching default_hierarchy of module \"{module}\"");
        self.with(
            || Kind::Scope(label),
            |s| -> Result<Option<Value>> {
                if !s.cache.module_default_options.contains_key(&module) {
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
                    s.cache.module_default_options.insert(module.clone(), opts);
                }
                let strategy = match s
                    .cache
                    .module_default_options
                    .get(&module)
                    .cloned()
                    .flatten()
                {
                    // `lookup_options[MERGE] unless lookup_options.nil?`
                    Some(o) => match extract_options(&o, &lk.root)
                        .map(|v| option_get(&v, "merge"))
                        .transpose()?
                        .flatten()
                        .filter(|m| !m.is_null())
                    {
                        Some(m) => MergeStrategy::from_value(&m).map_err(merge_error)?,
                        None => MergeStrategy::First,
                    },
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

    pub(super) fn config_at(&mut self, id: &ProviderId, path: &Path) -> Result<Arc<HieraConfig>> {
        if let Some(c) = self.cache.configs.get(path) {
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
        // Parsed once for every session of the store (the workspace's).
        let r = self.cache.files.config(path, &ctx, &mut self.warnings);
        self.cache.configs.insert(path.to_path_buf(), r.clone());
        r
    }

    pub(super) fn provider_name(id: &ProviderId, cfg: Option<&HieraConfig>) -> String {
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
    pub(super) fn provider_key_lookup(
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
    pub(super) fn check<T>(
        &mut self,
        name: &str,
        f: impl FnOnce(&mut Self) -> Result<T>,
    ) -> Result<T> {
        if self.inv.name_stack.iter().any(|n| n == name) {
            return Err(Error::lookup(format!(
                "Recursive lookup detected in [{}]",
                self.inv.name_stack.join(", ")
            )));
        }
        self.inv.name_stack.push(name.to_string());
        let r = f(self);
        self.inv.name_stack.pop();
        r
    }

    /// The resolved entries of a provider, built once.
    pub(super) fn entries_of(
        &mut self,
        id: &ProviderId,
        cfg: &HieraConfig,
        default_hierarchy: bool,
    ) -> Result<Arc<Vec<ResolvedEntry>>> {
        let k = (id.clone(), default_hierarchy);
        if let Some(e) = self.cache.entries.get(&k) {
            return e.clone();
        }
        let list = if default_hierarchy {
            cfg.default_hierarchy.clone().unwrap_or_default()
        } else {
            cfg.hierarchy.clone()
        };
        // Each level's place in the memo of resolved levels: what resolving it depends on
        // besides the scope (the Hiera 3 scope's rules; `strict` is the workspace's).
        let memo_key = format!(
            "{id:?}\0{}\0{default_hierarchy}\0{}\0{:?}",
            cfg.path
                .as_ref()
                .map(|p| p.display().to_string())
                .unwrap_or_default(),
            self.inv.v3_scope,
            self.settings.strict,
        );
        let r = self.build_entries(cfg, &list, &memo_key).map(Arc::new);
        self.cache.entries.insert(k, r.clone());
        r
    }

    pub(super) fn unchecked_provider_lookup(
        &mut self,
        id: &ProviderId,
        lk: &LookupKey,
        strategy: &MergeStrategy,
        default_hierarchy: bool,
    ) -> Result<Option<Value>> {
        let source = match self.provider_source(id)? {
            Some(p) => p,
            None => return Ok(None),
        };
        if default_hierarchy {
            let cfg = self.config_of(id, &source)?;
            if self.entries_of(id, &cfg, true)?.is_empty() {
                self.report_not_found(&lk.key);
                return Ok(None);
            }
        }
        // The configuration is read before the provider's explain node opens (Puppet's
        // global provider reads it first; the others when the provider is created).
        let cfg = self.config_of(id, &source)?;
        self.with(
            || Kind::DataProvider {
                name: Self::provider_name(id, Some(&cfg)),
                config_path: cfg.path.as_ref().map(|x| x.display().to_string()),
                module: match id {
                    ProviderId::Module(m) => Some(m.clone()),
                    _ => None,
                },
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

    pub(super) fn entries_lookup(
        &mut self,
        entries: &[ResolvedEntry],
        lk: &LookupKey,
        strategy: &MergeStrategy,
    ) -> Result<Option<Value>> {
        self.merge_lookup(strategy, entries, |s, e| s.entry_lookup(e, lk, strategy))
    }

    /// `HieraConfigV5#create_configured_data_providers`: interpolate datadirs, locations
    /// and options against the scope.
    pub(super) fn build_entries(
        &mut self,
        cfg: &HieraConfig,
        entries: &[Entry],
        memo_key: &str,
    ) -> Result<Vec<ResolvedEntry>> {
        if let Some(e) = &cfg.deferred_error {
            return Err(e.clone());
        }
        // Interpolation here is not part of any explanation.
        let saved_ex = self.explain.take();
        let r = self.build_entries_inner(cfg, entries, memo_key);
        self.explain = saved_ex;
        let fs = self.cache.files.fs().clone();
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
            Error::UndefinedVariable(var) => {
                let line = cfg.path.as_ref().and_then(|p| {
                    let text = fs.read_text(p).ok()?;
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

    pub(super) fn build_entries_inner(
        &mut self,
        cfg: &HieraConfig,
        entries: &[Entry],
        memo_key: &str,
    ) -> Result<Vec<ResolvedEntry>> {
        let mut out = Vec::new();
        for (i, e) in entries.iter().enumerate() {
            let key = format!("{memo_key}\0{i}");
            let memo = self.cache.files.levels().clone();
            let resolution = match memo.get(&key, |r| self.peek_read(r)) {
                Some(r) => r,
                None => {
                    let saved = self.interp.reads.replace(Vec::new());
                    let warned = self.warnings.len();
                    let result = self.resolve_level(cfg, e);
                    let reads = std::mem::replace(&mut self.interp.reads, saved);
                    let resolution = Arc::new(LevelResolution {
                        result,
                        warnings: self.warnings.split_off(warned),
                    });
                    if let Some(reads) = reads {
                        let copy = LevelResolution {
                            result: resolution.result.clone(),
                            warnings: resolution.warnings.clone(),
                        };
                        memo.put(&key, reads, copy, |r| self.peek_read(r));
                    }
                    resolution
                }
            };
            self.warnings.extend(resolution.warnings.iter().cloned());
            if let Some(entry) = resolution.result.clone()? {
                out.push(entry);
            }
        }
        Ok(out)
    }

    /// One level of a hierarchy against the scope: its datadir, locations and options
    /// interpolated (`None`: a default hierarchy's level that has no file).
    fn resolve_level(&mut self, cfg: &HieraConfig, e: &Entry) -> Result<Option<ResolvedEntry>> {
        let is_default = cfg.path.is_none();
        let v3 = cfg.version == 3;
        let datadir = interpolate_str(self, &e.datadir, false)?;
        // v3 locations are not covered by Puppet 8's lenient location interpolation.
        self.interp.in_location = !v3 && self.settings.strict == Strict::Error;
        let fs = self.cache.files.fs().clone();
        let locs = crate::location::resolve(self, &*fs, e, &datadir, is_default);
        self.interp.in_location = false;
        let locs = locs?;
        if is_default && matches!(&locs, Some(l) if l.is_empty()) {
            return Ok(None);
        }
        let options = match &e.options {
            Some(o) => match interpolate(self, &Value::Hash(o.clone()), false)? {
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
        let tag = match (v3, e.kind) {
            (true, FunctionKind::DataHash) => "v3_data_hash",
            (true, FunctionKind::LookupKey) => "v3_lookup_key",
            (_, kind) => kind.tag(),
        };
        Ok(Some(ResolvedEntry {
            entry: e.clone(),
            locations: locs,
            options,
            config_file,
            tag,
        }))
    }

    /// One hierarchy entry (`DataHashFunctionProvider#unchecked_key_lookup`).
    pub(super) fn entry_lookup(
        &mut self,
        e: &ResolvedEntry,
        lk: &LookupKey,
        strategy: &MergeStrategy,
    ) -> Result<Option<Value>> {
        // The explain nodes are built only when explaining: this runs for every entry of
        // every lookup.
        self.with(
            || Kind::DataProvider {
                name: match e.entry.kind {
                    // `V4DataHashFunctionProvider#name`.
                    FunctionKind::V4DataHash => {
                        format!("Deprecated API function \"{}\"", e.entry.function)
                    }
                    _ => format!("Hierarchy entry \"{}\"", e.entry.name),
                },
                config_path: None,
                module: None,
            },
            |s| -> Result<Option<Value>> {
                match &e.locations {
                    None => {
                        let r = s.call_function(e, None, lk)?;
                        Ok(r)
                    }
                    Some(locs) => s.merge_lookup(strategy, locs, |s, loc| {
                        s.with(
                            || Kind::Location {
                                original: loc.original.clone(),
                                location: loc.location.clone(),
                                uri: loc.uri,
                            },
                            |s| {
                                if loc.exists {
                                    s.call_function(e, Some(loc), lk)
                                } else {
                                    if let Some(ex) = s.ex_mut() {
                                        ex.location_not_found();
                                    }
                                    Ok(None)
                                }
                            },
                        )
                    }),
                }
            },
        )
    }

    /// The parsed hash of a data file (once per session; once per process behind that).
    pub(super) fn load_data(&mut self, format: DataFormat, path: &str) -> Result<Arc<DataHash>> {
        if let Some(r) = self.cache.local_files.get(path) {
            return r.clone();
        }
        let r = self
            .cache
            .files
            .data_hash(format, path, self.settings.strict, &mut self.warnings);
        self.cache.local_files.insert(path.to_string(), r.clone());
        r
    }

    /// One hierarchy entry's backend function at one location (`None`: not found): the
    /// built-in or embedder's backend that hiera.yaml names, through the same traits. A
    /// failure is noted against the location's file ([`blame`](super::blame)); where
    /// `lookup_options` are found is noted for errors in them.
    pub(super) fn call_function(
        &mut self,
        e: &ResolvedEntry,
        loc: Option<&ResolvedLocation>,
        lk: &LookupKey,
    ) -> Result<Option<Value>> {
        let r = self.call_backend(e, loc, lk);
        if let Some(l) = loc.filter(|l| !l.uri) {
            match &r {
                Err(err) => self.blame(err, &l.location, Some(&lk.root), e.entry.data_format()),
                Ok(Some(_)) if lk.root == LOOKUP_OPTIONS => {
                    if !self.inv.options_files.iter().any(|(f, _)| *f == l.location) {
                        let noted = (l.location.clone(), e.entry.data_format());
                        self.inv.options_files.push(noted);
                    }
                }
                Ok(_) => {}
            }
        }
        r
    }

    fn call_backend(
        &mut self,
        e: &ResolvedEntry,
        loc: Option<&ResolvedLocation>,
        lk: &LookupKey,
    ) -> Result<Option<Value>> {
        let r = self.call_backend_function(e, loc, lk);
        // The backends (and the data files they share between providers) name themselves as
        // a version 5 level's function does; a Hiera 3 configuration's are Puppet's
        // `V3DataHashFunctionProvider` and `V3LookupKeyFunctionProvider`.
        match e.tag {
            "v3_data_hash" | "v3_lookup_key" => r.map_err(|err| {
                let plain = &e.tag[3..];
                err.map_message(|m| {
                    m.replacen(
                        &format!(" {plain} function '"),
                        &format!(" {} function '", e.tag),
                        1,
                    )
                })
            }),
            _ => r,
        }
    }

    fn call_backend_function(
        &mut self,
        e: &ResolvedEntry,
        loc: Option<&ResolvedLocation>,
        lk: &LookupKey,
    ) -> Result<Option<Value>> {
        let f = e.entry.function.as_str();
        let root = lk.root.as_str();
        let call = Call {
            function: f,
            options: &e.options,
            location: loc,
            config_file: &e.config_file,
        };
        let not_found = || {
            // `config.fail`: a configuration Puppet made itself has no file to name.
            let file = match e.config_file.as_str() {
                "" => String::new(),
                file => format!(" (file: {file})"),
            };
            Error::issue(format!(
                "Unable to find '{}' function named '{f}'{file}",
                e.entry.kind.tag(),
            ))
        };
        let location_name = loc.map_or("", |l| l.location.as_str());
        // Explain only: the object interpolation made of the value.
        let mut found_obj = None;
        let found = match e.entry.kind {
            FunctionKind::DataHash => {
                let backend = (Builtin::resolve(e.entry.kind, f).and_then(Builtin::data_hash))
                    .or_else(|| self.backends.data_hash(f).cloned())
                    .ok_or_else(not_found)?;
                // Once per session, function and location.
                let cached = (self.cache.data_hashes.get(f))
                    .and_then(|by_location| by_location.get(location_name));
                let hash = match cached {
                    Some(r) => r.clone()?,
                    None => {
                        let r = backend.data_hash_call(&call, self);
                        (self.cache.data_hashes.entry(f.to_string()).or_default())
                            .insert(location_name.to_string(), r.clone());
                        r?
                    }
                };
                match hash.get(root)? {
                    Some(value) => {
                        validate_data_value(
                            &**self.cache.files.fs(),
                            &hash,
                            root,
                            &value,
                            format_args!("data_hash function '{f}'"),
                            location_name,
                        )?;
                        Some(Found::Interpolate(value))
                    }
                    None => None,
                }
            }
            FunctionKind::LookupKey => {
                let builtin = Builtin::resolve(e.entry.kind, f);
                if let (super::Exec::Refused { how_to_allow }, Some("command")) =
                    (self.exec, builtin.map(|b| b.name))
                {
                    let m = format!(
                        "Not running the program of hierarchy level '{}' (lookup_key: command) in {}: {how_to_allow}",
                        e.entry.name, e.config_file
                    );
                    self.refused.get_or_insert_with(|| m.clone());
                    return Err(Error::run(m));
                }
                let backend = (builtin.and_then(Builtin::lookup_key))
                    .or_else(|| self.backends.lookup_key(f).cloned())
                    .ok_or_else(not_found)?;
                backend.lookup_key_call(root, &call, self)?
            }
            FunctionKind::DataDig => {
                let b = self.backends.data_dig(f).cloned().ok_or_else(not_found)?;
                let segments: Vec<Value> = std::iter::once(Value::str(root))
                    .chain(lk.segments.iter().map(Segment::to_value))
                    .collect();
                b.data_dig(&segments, &call.options())
                    .map_err(Error::lookup)?
                    .map(Found::Raw)
            }
            FunctionKind::Hiera3Backend => {
                return Err(Error::issue(format!(
                    "Hiera 3 backend '{f}' is not supported by hiera-lookup (file: {})",
                    e.config_file
                )))
            }
            FunctionKind::V4DataHash => {
                let cached =
                    (self.cache.data_hashes.get(f)).and_then(|by_location| by_location.get(""));
                let hash = match cached {
                    Some(r) => r.clone()?,
                    None => {
                        let r = self.v4_data_hash(f).map(Arc::new);
                        (self.cache.data_hashes.entry(f.to_string()).or_default())
                            .insert(String::new(), r.clone());
                        r?
                    }
                };
                match hash.get(root)? {
                    Some(value) => {
                        validate_data_value(
                            &**self.cache.files.fs(),
                            &hash,
                            root,
                            &value,
                            format_args!("deprecated API function '{f}'"),
                            "",
                        )?;
                        Some(Found::Interpolate(value))
                    }
                    None => None,
                }
            }
        };
        let value = match found {
            None => {
                self.report_not_found(root);
                return Ok(None);
            }
            Some(Found::Raw(v)) => v,
            Some(Found::Interpolate(v)) => self.interpolate_found(v, &mut found_obj)?,
        };
        self.record_found(e, loc, lk, &value);
        match (self.ex_mut(), found_obj) {
            (Some(ex), Some(o)) => ex.found_object(root, o),
            _ => self.report_found(root, &value),
        }
        Ok(Some(value))
    }
}

impl Session {
    /// The hash the legacy data provider function `name` returns (`environment::data`, or
    /// `MODULE::data` of a module's `"data_provider": "function"`), found where Puppet's
    /// loaders look for it and evaluated when its body is data
    /// ([`puppet_function`](crate::backend::puppet_function)).
    fn v4_data_hash(&mut self, name: &str) -> Result<DataHash> {
        use crate::backend::puppet_function;
        let qualifier = name.split("::").next().unwrap_or_default();
        let root = if qualifier == "environment" {
            self.layers.environment_dir.clone()
        } else {
            self.module_dir(qualifier)
        };
        let not_found = || {
            Error::issue(format!(
                "Unable to find 'v4_data_hash' function named '{name}'"
            ))
        };
        let root = root.ok_or_else(not_found)?;
        let (pp, rb) = puppet_function::function_sources(&root, name);
        let fs = self.cache.files.fs().clone();
        if fs.is_file(&rb) {
            return Err(Error::run(format!(
                "{}: {name}() is a Ruby function, and hiera-lookup runs no Ruby: turn its data into a hiera.yaml and data files",
                rb.display()
            )));
        }
        let text = match fs.read_text(&pp) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(not_found()),
            Err(e) => {
                return Err(Error::run(format!(
                    "Could not read {}: {}",
                    pp.display(),
                    crate::error::io_reason(&e)
                )))
            }
        };
        let file = pp.display().to_string();
        let value = puppet_function::evaluate(&text, name, &file, &|var| {
            self.scope_variable(var).cloned()
        })?;
        match value {
            Value::Hash(map) => Ok(DataHash::from_map(map)),
            other => Err(puppet_function::not_a_hash(name, &other)),
        }
    }
}

/// What the built-in backends ask of the session running them.
impl Host for Session {
    fn load_data(&mut self, format: DataFormat, path: &str) -> Result<Arc<DataHash>> {
        Session::load_data(self, format, path)
    }

    fn scope(&self) -> &crate::scope::Scope {
        // The backend may read any of it.
        self.note_read("facts", &[]);
        &self.scope
    }

    fn decrypted(&mut self, plaintext: &str) {
        if self.settings.redact {
            self.secrets.add(plaintext);
        }
    }

    fn secrets(&self) -> super::Secrets {
        self.settings.secrets
    }

    fn fs(&self) -> std::sync::Arc<dyn crate::fs::Fs> {
        self.cache.files.fs().clone()
    }
}
