//! The caches a workspace shares between its sessions and threads: [`DataFiles`], each data
//! file and hiera.yaml parsed once, and the memo of hierarchy levels resolved for the fleet's
//! nodes (`LevelMemo`), with the types they keep. Below the engine (whose sessions read
//! through them) and above the backends (whose parses they keep): the sessions' code and the
//! parsers import this file, never the other way round.

use crate::backend::{load, DataHash};
use crate::config::{Entry, ResolvedLocation};
use crate::error::{Error, Result};
use crate::fs::Fs;
use crate::key::Segment;
use crate::scope::Strict;
use hiera_formats::format::DataFormat;
use hiera_value::value::{Map, Value};
use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex, OnceLock};

// ---- parsed files ---------------------------------------------------------------------------

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
    shared: Arc<Mutex<ParseMap>>,
    fs: Arc<dyn Fs>,
    /// Another store's parses, used for the paths listed: files whose bytes are the same in
    /// both stores' file systems (the two sides of a `diff`), parsed once for both.
    twin: Option<(Arc<Mutex<ParseMap>>, Arc<PathSet>)>,
    /// Parsed hiera.yaml files: every node's session reads the same few.
    configs: Arc<Mutex<ConfigMap>>,
    /// Resolved hierarchy levels (see `LevelMemo`).
    levels: Arc<LevelMemo>,
}

/// Parsed files by `function\0path` (the data_hash function reading the file's format).
type ParseMap = HashMap<String, Arc<OnceLock<Loaded>>>;

/// Parsed hiera.yaml files by `layer\0strict_off\0codedir\0path` (what loading one depends
/// on besides its bytes).
type ConfigMap = HashMap<String, Arc<OnceLock<LoadedConfig>>>;

/// A hiera.yaml as [`HieraConfig::load_in`](crate::config::HieraConfig::load_in) gave it,
/// and the warnings it gave then (repeated to every session that uses it, as each session
/// used to load it).
#[derive(Debug)]
struct LoadedConfig {
    result: std::result::Result<Arc<crate::config::HieraConfig>, Error>,
    warnings: Vec<String>,
}

/// Paths, as lookups name them.
type PathSet = std::collections::HashSet<String>;

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
            twin: None,
            configs: Arc::default(),
            levels: Arc::default(),
        }
    }

    /// This store, taking its parse of each of `same` (paths, as lookups name them, whose
    /// bytes are identical in both stores' file systems) from `other`, so that a file both
    /// read is parsed once. Errors and warnings name the path, which is the same for both.
    pub fn sharing_with(
        self,
        other: &DataFiles,
        same: std::collections::HashSet<String>,
    ) -> DataFiles {
        DataFiles {
            twin: Some((other.shared.clone(), Arc::new(same))),
            ..self
        }
    }

    /// Forgets the parses of the file at `path` (as lookups name it), by every function:
    /// the next lookup reads it again. The twin store, another tree's, is not touched.
    pub fn invalidate(&self, path: &str) {
        let mut map = self.shared.lock().unwrap_or_else(|e| e.into_inner());
        map.retain(|k, _| k.split_once('\0').is_none_or(|(_, p)| p != path));
        let mut configs = self.configs.lock().unwrap_or_else(|e| e.into_inner());
        configs.retain(|k, _| k.rsplit_once('\0').is_none_or(|(_, p)| p != path));
        self.levels.clear();
    }

    /// Forgets every resolved hierarchy level: what they found of the file system (which
    /// locations exist, what a glob lists) may have changed.
    pub fn forget_resolved_levels(&self) {
        self.levels.clear();
    }

    /// The resolved hierarchy levels every session of this store shares.
    pub(crate) fn levels(&self) -> &Arc<LevelMemo> {
        &self.levels
    }

    /// The hiera.yaml at `path`, loaded once for every session of this store (until
    /// [`invalidate`](Self::invalidate)d). Its warnings are appended to `warnings` every time.
    pub(crate) fn config(
        &self,
        path: &Path,
        ctx: &crate::config::LoadContext,
        warnings: &mut Vec<String>,
    ) -> Result<Arc<crate::config::HieraConfig>> {
        let key = format!(
            "{:?}\0{}\0{}\0{}",
            ctx.layer,
            u8::from(ctx.strict_off),
            ctx.codedir.display(),
            path.display()
        );
        let cell = {
            let mut map = self.configs.lock().unwrap_or_else(|e| e.into_inner());
            map.entry(key).or_default().clone()
        };
        let loaded = cell.get_or_init(|| {
            let mut w = Vec::new();
            let result =
                crate::config::HieraConfig::load_in(&*self.fs, path, ctx, &mut w).map(Arc::new);
            LoadedConfig {
                result,
                warnings: w,
            }
        });
        warnings.extend(loaded.warnings.iter().cloned());
        loaded.result.clone()
    }

    /// The file system every lookup of these sessions reads.
    pub(crate) fn fs(&self) -> &Arc<dyn Fs> {
        &self.fs
    }

    /// The hash the data_hash function of `format` returns for `path`. Warnings (Puppet 7's
    /// non-hash files) are appended to `warnings` every time the file is used.
    pub(crate) fn data_hash(
        &self,
        format: DataFormat,
        path: &str,
        strict: Strict,
        warnings: &mut Vec<String>,
    ) -> Result<Arc<DataHash>> {
        let store = match &self.twin {
            Some((map, same)) if same.contains(path) => map,
            _ => &self.shared,
        };
        let cell = {
            let mut map = store.lock().unwrap_or_else(|e| e.into_inner());
            map.entry(format!("{}\0{path}", format.data_hash_function()))
                .or_default()
                .clone()
        };
        let loaded = cell.get_or_init(|| {
            let mut w = Vec::new();
            let result = load(&*self.fs, format, path, strict, &mut w).map(Arc::new);
            Loaded {
                result,
                warnings: w,
            }
        });
        warnings.extend(loaded.warnings.iter().cloned());
        loaded.result.clone()
    }
}

// ---- resolved hierarchy levels ---------------------------------------------------------------

/// Resolved hierarchy levels, shared by the sessions of a workspace's query: a level's
/// datadir, locations (and whether each exists) and options depend only on the scope
/// variables its templates read, and most nodes of a fleet read the same values (os.family,
/// a role …). Each level keeps the reads its first resolution made; a node whose values for
/// them are those of a node already resolved takes that resolution (and its warnings).
/// What the file system holds is part of a resolution: the store is emptied at every
/// workspace refresh, and whenever a file is invalidated.
#[derive(Debug, Default)]
pub(crate) struct LevelMemo {
    levels: std::sync::Mutex<rustc_hash::FxHashMap<String, Level>>,
}

/// Past this many distinct values of its reads (a level per node: `nodes/%{certname}`),
/// a level is resolved for each node, unremembered: the memo stays small whatever the fleet.
const MAX_RESOLUTIONS_PER_LEVEL: usize = 64;

#[derive(Debug)]
struct Level {
    /// The scope reads of its first complete resolution, in order.
    reads: Vec<ScopeRead>,
    /// Resolutions by what those reads found.
    by_found: std::collections::HashMap<Vec<Peek>, Arc<LevelResolution>>,
}

/// A level resolved for some node: `None` when a default hierarchy skips it.
#[derive(Debug)]
pub(crate) struct LevelResolution {
    pub(crate) result: std::result::Result<Option<ResolvedEntry>, Error>,
    pub(crate) warnings: Vec<String>,
}

impl LevelMemo {
    /// Forgets every resolution.
    pub(crate) fn clear(&self) {
        self.levels
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clear();
    }

    /// The resolution of level `key` for what `peek` finds for each of its reads.
    pub(crate) fn get(
        &self,
        key: &str,
        peek: impl Fn(&ScopeRead) -> Peek,
    ) -> Option<Arc<LevelResolution>> {
        let levels = self.levels.lock().unwrap_or_else(|e| e.into_inner());
        let level = levels.get(key)?;
        let found: Vec<Peek> = level.reads.iter().map(peek).collect();
        level.by_found.get(&found).cloned()
    }

    /// Keeps a resolution of level `key` that made `reads`. Sound when `reads` are, in
    /// order, the first of the level's reads (resolution is a function of what each read
    /// finds, and which read comes next is too): kept under what the node finds for all
    /// of the level's reads. A failed first resolution does not define the level's reads.
    pub(crate) fn put(
        &self,
        key: &str,
        reads: Vec<(ScopeRead, Peek)>,
        resolution: LevelResolution,
        peek: impl Fn(&ScopeRead) -> Peek,
    ) {
        let mut levels = self.levels.lock().unwrap_or_else(|e| e.into_inner());
        let level = match levels.get_mut(key) {
            Some(level) => level,
            None if resolution.result.is_ok() => levels.entry(key.to_string()).or_insert(Level {
                reads: reads.iter().map(|(r, _)| r.clone()).collect(),
                by_found: Default::default(),
            }),
            None => return,
        };
        if level.by_found.len() >= MAX_RESOLUTIONS_PER_LEVEL
            || reads.len() > level.reads.len()
            || reads.iter().zip(&level.reads).any(|((r, _), l)| r != l)
        {
            return;
        }
        let mut found: Vec<Peek> = reads.into_iter().map(|(_, p)| p).collect();
        found.extend(level.reads[found.len()..].iter().map(peek));
        level.by_found.insert(found, Arc::new(resolution));
    }
}

/// A hierarchy level resolved for a node: its entry, its locations interpolated (and whether
/// each exists), its options.
#[derive(Debug, Clone)]
pub(crate) struct ResolvedEntry {
    pub(crate) entry: Entry,
    /// `None`: the entry declares no location.
    pub(crate) locations: Option<Vec<ResolvedLocation>>,
    /// Interpolated options, passed to lookup_key/data_dig backends.
    #[allow(dead_code)]
    pub(crate) options: Map,
    /// The hiera.yaml declaring the entry, for error messages.
    pub(crate) config_file: String,
    /// The function provider's tag in Puppet's messages (`FunctionProvider#full_name`):
    /// `data_hash`, `lookup_key`…, and `v3_data_hash`, `v3_lookup_key` for the backends of a
    /// Hiera 3 configuration.
    pub(crate) tag: &'static str,
}

/// A read of the node's scope (`%{root.segments…}`, `key` as written), as the memo of
/// resolved hierarchy levels records it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct ScopeRead {
    pub(crate) root: String,
    pub(crate) key: String,
    pub(crate) segments: Vec<Segment>,
}

/// What a [`ScopeRead`] found: an undefined variable, nothing where its segments point, a
/// value, or an error (its message).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) enum Peek {
    Undefined,
    Missing,
    Found(Value),
    Error(String),
}
