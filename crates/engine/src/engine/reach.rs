//! What the engine tells `where` (and any tool that explains data): the hierarchy locations a
//! node reaches for a key, in lookup order, and the values the lookup itself found there.
//!
//! Nothing here re-implements a rule of the lookup: locations are the engine's own resolved
//! hierarchy (interpolated paths, globs, mapped_paths, module default_hierarchy), and
//! `Session::trace_lookup` runs the real lookup while the engine records each value its
//! backends return for the key at the top level.

use super::lookup_options::{extract_options, KeyPattern};
use super::providers::ProviderId;
use super::{hash_get, Session, LOOKUP_OPTIONS};
use crate::config::FunctionKind;
use crate::config::ResolvedLocation;
use crate::error::{Error, Result};
use crate::key::LookupKey;
use crate::merge::MergeStrategy;
use crate::store::ResolvedEntry;
use crate::Outcome;
use hiera_value::value::Value;

/// A layer of the lookup.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum LayerName {
    /// The global layer (`--hiera_config`, `$codedir/hiera.yaml` …).
    Global,
    /// The environment's hiera.yaml.
    Environment,
    /// A module's own hiera.yaml, by module name.
    Module(String),
}

impl std::fmt::Display for LayerName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LayerName::Global => f.write_str("global"),
            LayerName::Environment => f.write_str("environment"),
            LayerName::Module(m) => write!(f, "module {m}"),
        }
    }
}

/// One place the lookup of a key searches, in lookup order.
#[derive(Debug, Clone)]
pub(crate) struct Reached {
    /// The layer whose hierarchy names the location.
    pub layer: LayerName,
    /// Searched only when nothing else was found (a module's `default_hierarchy`).
    pub default_hierarchy: bool,
    /// The hierarchy entry's name.
    pub entry: String,
    pub kind: FunctionKind,
    /// The backend function (`yaml_data`, `eyaml_lookup_key`, …).
    pub function: String,
    /// The entry's datadir, absolute, as declared (not interpolated).
    pub datadir: String,
    /// The interpolated location; `None` for an entry that declares none.
    pub location: Option<ResolvedLocation>,
    /// Which entry this is, to match what [`Session::trace_lookup`] found.
    entry_id: usize,
}

/// Where the merge strategy of a lookup came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MergeSource {
    /// `--merge` (the caller's strategy).
    Given,
    /// The key's `merge` in lookup_options.
    LookupOptions,
    /// Neither: first found.
    Default,
}

/// A value a backend returned for the looked-up key during the lookup.
#[derive(Debug, Clone)]
pub(crate) struct FoundValue {
    /// Index into the [`Session::reachable`] list of the same key.
    pub reached: Option<usize>,
    /// The location (path or URI) the backend read, if any.
    pub location: Option<String>,
    /// The value, interpolated, before merging and digging.
    pub value: Value,
}

/// The lookup of one key, with what the engine found on the way.
#[derive(Debug, Clone)]
pub(crate) struct Trace {
    pub outcome: std::result::Result<Outcome, Error>,
    pub strategy: MergeStrategy,
    pub source: MergeSource,
    /// The lookup_options that apply to the key, merged across layers as the engine merges
    /// them.
    pub options: Option<Value>,
    /// In the order the engine found them (the priority order of the merge).
    pub found: Vec<FoundValue>,
}

/// What [`Session::trace_lookup`] records while the lookup runs.
#[derive(Debug, Default)]
pub(super) struct FoundLog {
    records: Vec<(usize, Option<String>, Value)>,
}

impl Session {
    /// Every hierarchy location the lookup of `key` searches for this node, in lookup order:
    /// global, environment and the key's module, then the module's default_hierarchy.
    pub(crate) fn reachable(&mut self, key: &str) -> Result<Vec<Reached>> {
        let lk = LookupKey::parse(key)?;
        let mut ids: Vec<(ProviderId, bool)> = Vec::new();
        if self.layers.global.is_some() {
            ids.push((ProviderId::Global, false));
        }
        // A Hiera 3 global layer without an environment of version 5 is searched alone.
        let global_v3 = match self.provider_source(&ProviderId::Global)? {
            Some(p) if self.layers.global.is_some() => self
                .config_of(&ProviderId::Global, &p)
                .is_ok_and(|c| c.version == 3),
            _ => false,
        };
        if !global_v3 || self.has_environment_v5()? {
            ids.push((ProviderId::Environment, false));
            if let Some(m) = &lk.module_name {
                ids.push((ProviderId::Module(m.to_string()), false));
                ids.push((ProviderId::Module(m.to_string()), true));
            }
        }
        let mut out = Vec::new();
        for (id, default_hierarchy) in ids {
            let Some(source) = self.provider_source(&id)? else {
                continue;
            };
            let cfg = self.config_of(&id, &source)?;
            if default_hierarchy && cfg.default_hierarchy.is_none() {
                continue;
            }
            let entries = self.entries_of(&id, &cfg, default_hierarchy)?;
            let layer = match &id {
                ProviderId::Global => LayerName::Global,
                ProviderId::Environment => LayerName::Environment,
                ProviderId::Module(m) => LayerName::Module(m.clone()),
            };
            for e in entries.iter() {
                let base = Reached {
                    layer: layer.clone(),
                    default_hierarchy,
                    entry: e.entry.name.clone(),
                    kind: e.entry.kind,
                    function: e.entry.function.clone(),
                    datadir: e.entry.datadir.clone(),
                    location: None,
                    entry_id: entry_id(e),
                };
                match &e.locations {
                    None => out.push(base),
                    Some(locs) => out.extend(locs.iter().map(|l| Reached {
                        location: Some(l.clone()),
                        ..base.clone()
                    })),
                }
            }
        }
        Ok(out)
    }

    /// Every location the node's hierarchies name, in every layer (global, environment and
    /// every module, default_hierarchy included), resolved for this node from its facts
    /// alone: no key is looked up. `None` when some entry names no location (a `lookup_key`
    /// or `data_dig` function that reads what it likes), so that the node could read any
    /// file. Whether a file can matter to a node's answers at all (`diff` skips the nodes no
    /// changed file can matter to).
    pub fn reached_locations(&mut self) -> Result<Option<Vec<String>>> {
        let ids = self.layer_providers();
        let mut out = Vec::new();
        for id in ids {
            let Some(source) = self.provider_source(&id)? else {
                continue;
            };
            let cfg = self.config_of(&id, &source)?;
            let mut lists = vec![self.entries_of(&id, &cfg, false)?];
            if cfg.default_hierarchy.is_some() {
                lists.push(self.entries_of(&id, &cfg, true)?);
            }
            for e in lists.iter().flat_map(|l| l.iter()) {
                match &e.locations {
                    None => return Ok(None),
                    Some(locs) => out.extend(locs.iter().map(|l| l.location.clone())),
                }
            }
        }
        Ok(Some(out))
    }

    /// Looks `key` up as [`lookup`](Session::lookup) does, recording each value a backend
    /// returns for it at the top level (not for lookup_options or interpolation lookups),
    /// matched to the [`reachable`](Session::reachable) list of the same key.
    pub(crate) fn trace_lookup(
        &mut self,
        key: &str,
        merge: Option<&MergeStrategy>,
        reachable: &[Reached],
    ) -> Result<Trace> {
        let lk = LookupKey::parse(key)?;
        let options = if key == LOOKUP_OPTIONS || key.starts_with("lookup_options.") {
            None
        } else {
            let saved = std::mem::replace(&mut self.inv.invocation_module, lk.module_name.clone());
            let r = self.lookup_lookup_options(&lk);
            self.inv.invocation_module = saved;
            // An error here is the lookup's own error, which the outcome below reports.
            r.ok().flatten()
        };
        let (strategy, source) = match (merge, options.as_ref().and_then(|o| hash_get(o, "merge")))
        {
            (Some(m), _) => (m.clone(), MergeSource::Given),
            // An invalid strategy fails the lookup below with the engine's message.
            (None, Some(m)) => (
                MergeStrategy::from_value(&m).unwrap_or(MergeStrategy::First),
                MergeSource::LookupOptions,
            ),
            (None, None) => (MergeStrategy::First, MergeSource::Default),
        };
        self.found_log = Some(FoundLog::default());
        let outcome = self.lookup(&[key.to_string()], merge);
        let log = self.found_log.take().unwrap_or_default();
        // The n-th record of an entry and location is its n-th place in the list.
        let mut used = vec![false; reachable.len()];
        let found = log
            .records
            .into_iter()
            .map(|(id, location, value)| {
                let reached = reachable.iter().enumerate().position(|(i, r)| {
                    !used[i]
                        && r.entry_id == id
                        && r.location.as_ref().map(|l| &l.location) == location.as_ref()
                });
                if let Some(i) = reached {
                    used[i] = true;
                }
                FoundValue {
                    reached,
                    location,
                    value,
                }
            })
            .collect::<Vec<FoundValue>>();
        // Found only in a module's default_hierarchy: that search merges by the
        // default_hierarchy's own lookup_options, whatever `--merge` or the regular
        // lookup_options say (as Puppet does).
        let in_default = found
            .iter()
            .any(|f| f.reached.is_some_and(|i| reachable[i].default_hierarchy));
        let (strategy, source, options) = match (in_default, &lk.module_name) {
            (true, Some(module)) => {
                let options = self
                    .cache
                    .module_default_options
                    .get(&**module)
                    .cloned()
                    .flatten()
                    .and_then(|o| extract_options(&o, &lk.root));
                match options.as_ref().and_then(|o| hash_get(o, "merge")) {
                    Some(m) => (
                        MergeStrategy::from_value(&m).unwrap_or(MergeStrategy::First),
                        MergeSource::LookupOptions,
                        options,
                    ),
                    None => (MergeStrategy::First, MergeSource::Default, options),
                }
            }
            _ => (strategy, source, options),
        };
        Ok(Trace {
            outcome,
            strategy,
            source,
            options,
            found,
        })
    }

    /// The engine's hook for [`trace_lookup`](Session::trace_lookup): called with each
    /// value a backend returns.
    pub(super) fn record_found(
        &mut self,
        e: &ResolvedEntry,
        loc: Option<&ResolvedLocation>,
        lk: &LookupKey,
        value: &Value,
    ) {
        if self.interp.lookup_depth != 0 || &*lk.key == LOOKUP_OPTIONS {
            return;
        }
        if let Some(log) = self.found_log.as_mut() {
            log.records
                .push((entry_id(e), loc.map(|l| l.location.clone()), value.clone()));
        }
    }
}

/// An entry's identity within a session: entries are built once per provider and kept.
fn entry_id(e: &ResolvedEntry) -> usize {
    e as *const ResolvedEntry as usize
}

/// Whether a lookup_options key (`name` or `^pattern`) applies to a key whose root is `root`,
/// as the engine decides it.
pub(crate) fn option_applies(option_key: &str, root: &str) -> Result<bool> {
    if option_key.starts_with('^') {
        Ok(KeyPattern::cached(option_key)?.is_match(root))
    } else {
        Ok(option_key == root)
    }
}
