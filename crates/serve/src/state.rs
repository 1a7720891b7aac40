//! What the server holds between requests: one [`Workspace`] over the control repo (parsed
//! data files shared by every node and every request, revalidated by stamp before each
//! request), the fleet's nodes (read again when a facts file changes, or on an interval for
//! PuppetDB), and the options the command line gave.

use crate::pack::{pack_facts, Held, Packed, Packer};
use hiera_engine::batch::Node;
use hiera_engine::engine::{Exec, Session, Settings};
use hiera_engine::error::Error;
use hiera_engine::query::{Flags, Request};
use hiera_engine::scope::{Scope, Strict};
use hiera_engine::slim::FactPaths;
use hiera_engine::workspace::{Stamp, Workspace};
use hiera_facts::context::NodeContext;
use serde_json::Value as Json;
use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// What the refusal to run a `lookup_key: command` level adds to its error.
pub const HOW_TO_ALLOW: &str =
    "serve runs no program a hierarchy of the served tree names unless given --allow-exec";

/// How the server was asked to run.
#[derive(Debug, Clone)]
pub struct Options {
    /// The control repo: `/files/` serves the files under it (and nothing else), file names
    /// are shown relative to it, `lint` lints it and `diff` reads its git history.
    pub root: PathBuf,
    /// `--strict`: undefined variables in data.
    pub strict: Strict,
    /// `--show-secrets`: show what eyaml decrypts. Off (the default), every decrypted
    /// plaintext is `[redacted]` in every page and every API answer.
    pub show_secrets: bool,
    /// `--allow-exec`: run the programs `lookup_key: command` levels name. Off (the
    /// default), a lookup reaching one fails with one line saying so.
    pub allow_exec: bool,
    /// Worker threads for the questions about the whole fleet (at least 1).
    pub threads: usize,
    /// How `lint` runs (its root is [`root`](Self::root)); `allow_exec` is taken from above.
    pub lint: hiera_lint::Options,
    /// Read the nodes again at least this often, whatever changed: PuppetDB's node set, which
    /// no file tells of (facts files are read again as soon as they change).
    pub reload_every: Option<Duration>,
    /// Gives memory the allocator holds free back to the system: called after the nodes are
    /// read and after each question about the whole fleet, whose transient allocations would
    /// otherwise stay mapped between the long-lived ones. The allocator is the program's: by
    /// default nothing is done.
    pub release_memory: fn(),
    /// The host names the server answers to besides IP addresses and `localhost`
    /// (`--allow-host`): a reverse proxy's public name; a leading dot names a domain and its
    /// subdomains. Any other `Host` is refused ([`guard`](crate::guard)).
    pub allowed_hosts: Vec<String>,
}

impl Options {
    /// Serving `root` with the defaults: `--strict error` (Puppet 8's), secrets hidden, no
    /// program run, one worker per CPU, nodes read again only when their files change.
    pub fn new(root: PathBuf) -> Options {
        Options {
            lint: hiera_lint::Options {
                root: root.clone(),
                ..Default::default()
            },
            root,
            strict: Strict::default(),
            show_secrets: false,
            allow_exec: false,
            threads: std::thread::available_parallelism().map_or(1, |n| n.get()),
            reload_every: None,
            release_memory: || {},
            allowed_hosts: Vec::new(),
        }
    }
}

/// The fleet as a front end reads it.
#[derive(Debug, Clone, Default)]
pub struct Loaded {
    /// The nodes, in the order they are listed.
    pub nodes: Vec<Held>,
    /// What reading them warned about (duplicate names, partial host names).
    pub warnings: Vec<String>,
}

/// The fleet at one moment.
#[derive(Debug, Default, Clone)]
pub struct Fleet {
    /// The nodes, in order.
    pub nodes: Vec<Held>,
    /// Each node's name as pages and URLs name it: its name, or with its facts source when
    /// two nodes share a name ([`hiera_engine::batch::distinct_names`]).
    pub names: Vec<String>,
    index: HashMap<String, usize>,
    /// What reading the nodes warned about.
    pub warnings: Vec<String>,
    /// Why the last reading failed (the nodes are then those read before).
    pub error: Option<String>,
    /// Which reading of the nodes this is (each reading gets a new number).
    pub generation: u64,
    /// Each packed node's [slim](hiera_engine::slim) form, made the first time a question
    /// about the whole fleet meets it ([`State::on_slim`]).
    slims: Arc<[Mutex<Option<Arc<crate::slim::Slim>>>]>,
}

/// The number of the next reading of the nodes.
static GENERATION: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

impl Fleet {
    fn new(loaded: Loaded) -> Fleet {
        let names = hiera_engine::batch::distinct_names_of(
            loaded
                .nodes
                .iter()
                .map(|n| (n.name(), n.source().map(|(_, s)| s.as_str()))),
        );
        let index = names
            .iter()
            .enumerate()
            .map(|(i, n)| (n.clone(), i))
            .collect();
        Fleet {
            slims: loaded.nodes.iter().map(|_| Mutex::new(None)).collect(),
            nodes: loaded.nodes,
            names,
            index,
            warnings: loaded.warnings,
            error: None,
            generation: GENERATION.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
        }
    }

    /// The place in the fleet of the node a page names, by its [distinct name](Self::names).
    pub fn position(&self, name: &str) -> Option<usize> {
        self.index.get(name).copied()
    }
}

/// The fleet as last read, and what its watched files were then.
struct NodeCache {
    fleet: Arc<Fleet>,
    fingerprint: u64,
    loaded: Instant,
}

/// Everything a request needs: see the [module](self).
pub struct State {
    workspace: Workspace,
    /// Where the nodes come from, and how each is built.
    context: NodeContext,
    options: Options,
    /// The root, canonical (symbolic links resolved), for telling what is inside it.
    canonical_root: PathBuf,
    nodes: Arc<Mutex<NodeCache>>,
    /// Held while a request reads the nodes again ([`refresh`](Self::refresh)).
    reading: Mutex<()>,
    /// Whether the nodes are being read again in the background (their interval passed).
    reading_behind: Arc<std::sync::atomic::AtomicBool>,
    /// The latest key views (`/keys/{key}`), each with the state of its inputs, newest first.
    key_views: Mutex<Recent<(String, u64), Arc<Json>>>,
    /// The nodes made again from their packed facts for the latest requests about one node,
    /// by reading and place, newest first (at most [`NODES_REVIVED_KEPT`]).
    revived: Mutex<Recent<NodeAt, Arc<Node>>>,
    /// The overview's fleet index, and the state of its inputs it was computed for.
    fleet_index: Mutex<Option<(u64, Arc<crate::index::FleetIndex>)>>,
    /// Held while the fleet index is computed.
    fleet_index_computing: Mutex<()>,
    /// The fact paths the lookups were seen to read: what a node's slim form keeps.
    keep: Mutex<Arc<FactPaths>>,
    /// Nodes [`on_slim`](Self::on_slim) answered from their slim form, and asked whole.
    slim_counts: [std::sync::atomic::AtomicU64; 2],
    /// The last reading of the nodes a warm-up was started for ([`to_warm`](Self::to_warm)).
    warmed: std::sync::atomic::AtomicU64,
    /// Questions about the whole fleet (a key across every node, the overview, lint, diff)
    /// run at most this many at once; others wait their turn.
    pub(crate) heavy: tokio::sync::Semaphore,
    /// Posted documents (`POST /api/v1/lookup`) read and answered at once
    /// ([`POSTS_AT_ONCE`](crate::POSTS_AT_ONCE)).
    pub(crate) posts: tokio::sync::Semaphore,
}

/// Key views kept for the next request asking for them unchanged.
pub const KEY_VIEWS_KEPT: usize = 32;

/// A node by the reading of the fleet it belongs to and its place in it.
type NodeAt = (u64, usize);

/// Packed nodes kept made again for the next requests about them (a node's page, then its
/// keys' pages).
pub const NODES_REVIVED_KEPT: usize = 16;

/// Fleet-wide questions answered at once (each also spreads over the worker threads).
const HEAVY_AT_ONCE: usize = 2;

impl State {
    /// Opens the control repo of `context` and reads its nodes once (an error here is the
    /// server's start-up error).
    pub fn open(context: NodeContext, options: Options) -> Result<State, Error> {
        let settings = Settings {
            strict: options.strict,
            // What eyaml decrypts is recorded so that it can be hidden (`--show-secrets` off).
            redact: !options.show_secrets,
            ..Default::default()
        };
        let workspace = Workspace::open(context.env.clone(), settings)?;
        // Taken before the read: a change while reading shows as a change next time.
        let fingerprint = fingerprint(&context.watched());
        let loaded = load(&context)?;
        (options.release_memory)();
        let canonical_root =
            std::fs::canonicalize(&options.root).unwrap_or_else(|_| options.root.clone());
        Ok(State {
            workspace,
            context,
            canonical_root,
            options,
            reading: Mutex::new(()),
            reading_behind: Default::default(),
            nodes: Arc::new(Mutex::new(NodeCache {
                fleet: Arc::new(Fleet::new(loaded)),
                fingerprint,
                loaded: Instant::now(),
            })),
            revived: Mutex::new(Recent::new(NODES_REVIVED_KEPT)),
            fleet_index: Mutex::new(None),
            fleet_index_computing: Mutex::new(()),
            keep: Mutex::new(Arc::new(crate::slim::first_kept())),
            slim_counts: Default::default(),
            warmed: Default::default(),
            key_views: Mutex::new(Recent::new(KEY_VIEWS_KEPT)),
            heavy: tokio::sync::Semaphore::new(HEAVY_AT_ONCE),
            posts: tokio::sync::Semaphore::new(crate::POSTS_AT_ONCE),
        })
    }

    /// The workspace every lookup goes through.
    pub fn workspace(&self) -> &Workspace {
        &self.workspace
    }

    /// How the server was asked to run.
    pub fn options(&self) -> &Options {
        &self.options
    }

    /// Where the nodes come from, and how each is built.
    pub fn context(&self) -> &NodeContext {
        &self.context
    }

    /// Gives the memory the allocator holds free back to the system
    /// ([`Options::release_memory`]).
    pub fn release_memory(&self) {
        (self.options.release_memory)();
    }

    /// The node `packed` was made from, made again as the fleet was read: its facts made a
    /// node's scope by the node context (a damaged frame is the node's facts error).
    pub fn revive(&self, packed: &Packed) -> Node {
        crate::pack::revive(packed, |facts| self.context.scope(facts))
    }

    /// What changed since the last request, dropped: data files and hiera.yaml files by
    /// stamp (the workspace), the nodes when a watched facts file or directory changed. Run
    /// once at the start of every request; the fleet it returns is the one the request
    /// answers for.
    ///
    /// Changed facts files are read again by the request that sees the change, outside the
    /// lock the other requests take: they answer for the nodes read before meanwhile. A
    /// source read on an interval (PuppetDB: [`Options::reload_every`]) is read again in the
    /// background once the interval has passed, never inside a request (a slow PuppetDB
    /// would hold every page up): requests answer for the last complete node set until the
    /// new one is read whole.
    pub fn refresh(&self) -> Arc<Fleet> {
        self.workspace.refresh();
        let now = fingerprint(&self.context.watched());
        let (current, changed, due) = {
            let cache = self.nodes.lock().unwrap_or_else(|e| e.into_inner());
            let due =
                (self.options.reload_every).is_some_and(|every| cache.loaded.elapsed() >= every);
            (cache.fleet.clone(), now != cache.fingerprint, due)
        };
        if !changed {
            if due {
                self.read_behind();
            }
            return current;
        }
        let Ok(_reading) = self.reading.try_lock() else {
            return current;
        };
        // Another request may have read them while this one waited for its turn.
        let old = {
            let cache = self.nodes.lock().unwrap_or_else(|e| e.into_inner());
            if now == cache.fingerprint {
                return cache.fleet.clone();
            }
            cache.fleet.clone()
        };
        let fleet = Arc::new(read_again(&self.context, &old, self.options.release_memory));
        // Taken before the read: a change while reading shows as a change next time.
        store(&self.nodes, fleet.clone(), now);
        fleet
    }

    /// Reads the nodes again on a thread of its own, unless one already does: the cache gets
    /// the new node set once it is read whole.
    fn read_behind(&self) {
        use std::sync::atomic::Ordering;
        if self.reading_behind.swap(true, Ordering::SeqCst) {
            return;
        }
        let (context, nodes, flag) = (
            self.context.clone(),
            self.nodes.clone(),
            self.reading_behind.clone(),
        );
        let release = self.options.release_memory;
        let spawned = std::thread::Builder::new()
            .name("hiera-serve-nodes".into())
            .stack_size(hiera_value::limits::LOOKUP_STACK_SIZE)
            .spawn(move || {
                let now = fingerprint(&context.watched());
                let old = nodes
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .fleet
                    .clone();
                let fleet = read_again(&context, &old, release);
                store(&nodes, Arc::new(fleet), now);
                flag.store(false, Ordering::SeqCst);
            });
        if spawned.is_err() {
            self.reading_behind.store(false, Ordering::SeqCst);
        }
    }

    /// The node at `i` of `fleet`, whole: a packed node is made again, and kept for the next
    /// requests (the latest [`NODES_REVIVED_KEPT`]).
    pub fn node(&self, fleet: &Fleet, i: usize) -> Arc<Node> {
        let packed = match &fleet.nodes[i] {
            Held::Node(n) => return n.clone(),
            Held::Packed(p) => p,
        };
        let at = (fleet.generation, i);
        let hit = self
            .revived
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&at);
        if let Some(node) = hit {
            return node;
        }
        let node = Arc::new(self.revive(packed));
        let mut kept = self.revived.lock().unwrap_or_else(|e| e.into_inner());
        // Nodes of an earlier reading are not asked for again.
        kept.put(at, node.clone(), |a| a.0 != fleet.generation);
        node
    }

    /// The node at `i` of `fleet`, for a question about the whole fleet: a packed node is
    /// made again and dropped after (one node's scope at a time on each worker).
    pub fn node_passing(&self, fleet: &Fleet, i: usize) -> Arc<Node> {
        match &fleet.nodes[i] {
            Held::Node(n) => n.clone(),
            Held::Packed(p) => {
                let at = (fleet.generation, i);
                let kept = self
                    .revived
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .peek(&at);
                kept.unwrap_or_else(|| Arc::new(self.revive(p)))
            }
        }
    }

    /// `work`'s answer for the node at `i` of `fleet` and a session of the server for it,
    /// for a question about the whole fleet: asked of the node's slim form (its facts cut
    /// down to the paths lookups were seen to read, a fraction of their size), and asked
    /// again of the whole node when that session read beyond them
    /// ([`Session::missed_facts`]): the answer is always the whole node's. The whole node's
    /// reads are learnt, and its slim form made again from what is learnt. A node kept
    /// whole is asked as it is.
    pub fn on_slim<R>(
        &self,
        fleet: &Fleet,
        i: usize,
        mut work: impl FnMut(&Node, &mut Session) -> R,
    ) -> R {
        if let Held::Node(n) = &fleet.nodes[i] {
            let mut session = self.session(n.scope.clone());
            return work(n, &mut session);
        }
        let slot = &fleet.slims[i];
        let slim = slot.lock().unwrap_or_else(|e| e.into_inner()).clone();
        if let Some(slim) = slim.and_then(|s| s.node(&fleet.nodes[i], &self.context)) {
            let mut session = self.session(slim.scope.clone());
            let answer = work(&slim, &mut session);
            if !session.missed_facts() {
                self.slim_counts[0].fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                return answer;
            }
        }
        self.slim_counts[1].fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let node = self.node_passing(fleet, i);
        let mut session = self.session(node.scope.clone());
        session.record_fact_reads();
        let answer = work(&node, &mut session);
        if node.facts_error.is_none() {
            let keep = self.learn(session.take_fact_reads().unwrap_or_default());
            let slim = crate::slim::Slim::of(&node, keep);
            *slot.lock().unwrap_or_else(|e| e.into_inner()) = Some(Arc::new(slim));
        }
        answer
    }

    /// How many times [`on_slim`](Self::on_slim) answered from a node's slim form, and how
    /// many times it asked the whole node (its first time, or a read beyond the slim form).
    pub fn slim_counts(&self) -> (u64, u64) {
        let n = |i: usize| self.slim_counts[i].load(std::sync::atomic::Ordering::Relaxed);
        (n(0), n(1))
    }

    /// Whether `fleet` is a reading of the nodes no warm-up was started for (true once per
    /// reading): the overview's index and the nodes' slim forms are then made before a page
    /// asks for them.
    pub fn to_warm(&self, fleet: &Fleet) -> bool {
        self.warmed
            .swap(fleet.generation, std::sync::atomic::Ordering::Relaxed)
            != fleet.generation
    }

    /// What slim nodes keep from now on: what was kept, and `read`.
    pub(crate) fn learn(&self, read: FactPaths) -> Arc<FactPaths> {
        let mut keep = self.keep.lock().unwrap_or_else(|e| e.into_inner());
        // Replaced only when it grows: every slim form made since shares the one copy (a
        // copy per learning would be a copy per node).
        let mut grown = (**keep).clone();
        if grown.merge(&read) {
            *keep = Arc::new(grown);
        }
        keep.clone()
    }

    /// Every node of `fleet`, whole, for what takes the fleet as one list (lint's fleet
    /// rules, diff): those requests hold every scope while they run, as the command line's.
    pub fn all_nodes(&self, fleet: &Fleet) -> Vec<Node> {
        (0..fleet.nodes.len())
            .map(|i| (*self.node_passing(fleet, i)).clone())
            .collect()
    }

    /// A session for `scope` sharing the workspace's parses (refreshed by
    /// [`refresh`](Self::refresh)), running no `command` level unless `--allow-exec`.
    pub fn session(&self, scope: Scope) -> Session {
        let mut session = self.workspace.session_unrefreshed(scope);
        self.guard(&mut session);
        session
    }

    fn guard(&self, session: &mut Session) {
        if !self.options.allow_exec {
            session.set_exec(Exec::Refused {
                how_to_allow: HOW_TO_ALLOW,
            });
        }
    }

    /// Puppet's `--explain` text for `key` on the node `scope`, as the command line prints it
    /// (what eyaml decrypted `[redacted]` unless `--show-secrets`).
    pub fn explain(&self, scope: Scope, key: &str, merge: Option<&str>) -> Result<String, Error> {
        let settings = Settings {
            explain: true,
            ..self.workspace.settings().clone()
        };
        let mut session = Session::with_files(
            scope,
            self.workspace.layers(),
            settings,
            self.workspace.files(),
        );
        self.guard(&mut session);
        let text = Request::new(&Flags {
            keys: vec![key.to_string()],
            merge: merge.map(str::to_string),
            strict: self.options.strict.name().to_string(),
            explain: true,
            redact: !self.options.show_secrets,
            ..Flags::default()
        })
        .and_then(|request| request.answer(&mut session, &mut Vec::new()))
        .map(|rendered| rendered.text);
        // Whatever the answer hid already, nothing this session decrypted goes out.
        match session.redactor().filter(|r| !r.is_empty()) {
            Some(r) => text
                .map(|t| r.text(&t).into_owned())
                .map_err(|e| r.error(&e)),
            None => text,
        }
    }

    /// The overview's index of what every node reaches and sees: the one computed for
    /// `inputs` (a fingerprint of the nodes, the data files and the hiera.yaml files) when
    /// there is one, else `compute`'s, kept for the next request. `None`: the inputs cannot be
    /// fingerprinted, always computed.
    pub(crate) fn fleet_index(
        &self,
        inputs: Option<u64>,
        compute: impl FnOnce() -> crate::index::FleetIndex,
    ) -> Arc<crate::index::FleetIndex> {
        let hit = || {
            let cached = self.fleet_index.lock().unwrap_or_else(|e| e.into_inner());
            match (inputs, cached.as_ref()) {
                (Some(i), Some((at, index))) if *at == i => Some(index.clone()),
                _ => None,
            }
        };
        if let Some(index) = hit() {
            return index;
        }
        // One computation at a time (the start's warm-up and the first overview asked for
        // meet here): whoever waited takes the index just made.
        let _computing = self
            .fleet_index_computing
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        if let Some(index) = hit() {
            return index;
        }
        let index = Arc::new(compute());
        if let Some(i) = inputs {
            *self.fleet_index.lock().unwrap_or_else(|e| e.into_inner()) = Some((i, index.clone()));
        }
        index
    }

    /// The view of `key` across the fleet: the one computed for `inputs` when kept, else
    /// `compute`'s, kept (the latest [`KEY_VIEWS_KEPT`]) when `inputs` is known.
    pub(crate) fn key_view(
        &self,
        key: &str,
        inputs: Option<u64>,
        compute: impl FnOnce() -> Result<Json, crate::error::ViewError>,
    ) -> Result<Json, crate::error::ViewError> {
        let Some(inputs) = inputs else {
            return compute();
        };
        let at = (key.to_string(), inputs);
        let hit = self
            .key_views
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&at);
        if let Some(doc) = hit {
            return Ok((*doc).clone());
        }
        let doc = compute()?;
        let mut kept = self.key_views.lock().unwrap_or_else(|e| e.into_inner());
        // The key's view for other inputs is out of date.
        kept.put(at, Arc::new(doc.clone()), |(k, _)| k == key);
        Ok(doc)
    }

    /// `file` relative to the root, when it is inside it (the `/files/` path that shows it).
    pub fn relative(&self, file: &str) -> Option<String> {
        let p = Path::new(file);
        [&self.options.root, &self.canonical_root]
            .iter()
            .find_map(|root| p.strip_prefix(root).ok())
            .filter(|rel| !rel.as_os_str().is_empty())
            .map(|rel| rel.to_string_lossy().into_owned())
    }

    /// The root, with symbolic links resolved.
    pub fn canonical_root(&self) -> &Path {
        &self.canonical_root
    }
}

/// The latest answers by what they answer, newest first, at most a number of them.
struct Recent<K, V> {
    items: std::collections::VecDeque<(K, V)>,
    most: usize,
}

impl<K: PartialEq, V: Clone> Recent<K, V> {
    fn new(most: usize) -> Recent<K, V> {
        Recent {
            items: Default::default(),
            most,
        }
    }

    /// The answer kept for `k`, made the newest.
    fn get(&mut self, k: &K) -> Option<V> {
        let i = self.items.iter().position(|(x, _)| x == k)?;
        let hit = self.items.remove(i)?;
        let v = hit.1.clone();
        self.items.push_front(hit);
        Some(v)
    }

    /// The answer kept for `k`, the order left as it is.
    fn peek(&self, k: &K) -> Option<V> {
        self.items
            .iter()
            .find(|(x, _)| x == k)
            .map(|(_, v)| v.clone())
    }

    /// Keeps `v` for `k` as the newest, without the answers `stale` names (nor another for
    /// `k`), and drops the oldest past the most kept.
    fn put(&mut self, k: K, v: V, stale: impl Fn(&K) -> bool) {
        self.items.retain(|(x, _)| *x != k && !stale(x));
        self.items.push_front((k, v));
        self.items.truncate(self.most);
    }
}

/// The nodes of `context` read again; when that fails, `old`'s with the reason.
fn read_again(context: &NodeContext, old: &Fleet, release_memory: fn()) -> Fleet {
    let fleet = match load(context) {
        Ok(loaded) => Fleet::new(loaded),
        // Keep answering for the nodes read before, and say why.
        Err(e) => Fleet {
            error: Some(e.to_string()),
            ..old.clone()
        },
    };
    release_memory();
    fleet
}

/// Keeps `fleet` as the nodes read now, when the watched files were `fingerprint` (taken
/// before the read: a change while reading shows as a change next time).
fn store(nodes: &Mutex<NodeCache>, fleet: Arc<Fleet>, fingerprint: u64) {
    let mut cache = nodes.lock().unwrap_or_else(|e| e.into_inner());
    cache.fingerprint = fingerprint;
    cache.loaded = Instant::now();
    cache.fleet = fleet;
}

/// Reads the nodes of `context`, unit by unit (a facts file, a chunk of PuppetDB's nodes) as
/// batch mode reads them, each unit's nodes kept before the next is read: the fleet's scopes
/// are never all in memory at once. Each node is packed (its facts, made a scope again by
/// [`NodeContext::scope`] when a request needs it: what [`NodeContext::node`] makes of a
/// node no classifier is asked about), unless a classifier is asked (asking again would run
/// it again), a `--fact` sets server facts, or its facts cannot be packed: then it is kept
/// whole, as [`NodeContext::node`] makes it. The packed ones are compressed as they come (the
/// first [`TRAINING_NODES`](crate::pack::TRAINING_NODES) once the dictionary is trained on them).
fn load(context: &NodeContext) -> Result<Loaded, Error> {
    let mut nodes = Vec::new();
    let mut packer = Packer::default();
    let mut warnings = Vec::new();
    let packable = context.enc.is_none()
        && !context
            .fact_overrides
            .iter()
            .any(|(name, _)| name.split('.').next() == Some("server_facts"));
    let mut named: Vec<(String, String)> = Vec::new();
    let (units, _) = context.units()?;
    for unit in units {
        let (read, w) = unit();
        warnings.extend(w);
        for n in read {
            named.push((n.name.clone(), n.source.clone()));
            let packed = match &n.facts {
                Ok(facts) if packable && Scope::check_facts(facts).is_ok() => pack_facts(facts),
                _ => None,
            };
            let held = match packed {
                Some(facts) => Held::Packed(Packed {
                    name: n.name,
                    source: Some((n.kind.into(), n.source)),
                    facts,
                }),
                None => Held::Node(Arc::new(context.node(n))),
            };
            packer.keep(held, &mut nodes);
        }
    }
    warnings.extend(hiera_engine::batch::duplicate_warnings(
        named.iter().map(|(n, s)| (n.as_str(), s.as_str())),
    ));
    packer.finish(&mut nodes);
    nodes.shrink_to_fit();
    Ok(Loaded { nodes, warnings })
}

/// What the watched files and directories are now: each file's size, modification time and
/// inode, and each directory's entries with theirs (a file added, removed or edited in a
/// facts directory changes it).
fn fingerprint(paths: &[PathBuf]) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    for p in paths {
        p.hash(&mut h);
        Stamp::of(p).hash(&mut h);
        if let Ok(rd) = std::fs::read_dir(p) {
            let mut entries: Vec<PathBuf> = rd.filter_map(|e| e.ok().map(|e| e.path())).collect();
            entries.sort();
            for e in entries {
                e.hash(&mut h);
                Stamp::of(&e).hash(&mut h);
            }
        }
    }
    h.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Slim forms hold the learnt paths they were made with: a learning that adds nothing
    /// must leave them shared (a copy each was 12 MB over 3,000 nodes).
    #[test]
    fn what_adds_nothing_shares_the_learnt_paths() {
        let dir = std::env::temp_dir().join(format!("hl-serve-learn-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("hiera.yaml"), "version: 5\n").unwrap();
        let context = hiera_facts::context::NodeSources::default()
            .resolve_in(&dir)
            .unwrap();
        let state = State::open(context, Options::new(dir.clone())).unwrap();
        let first = state.learn(FactPaths::default());
        let mut known = FactPaths::default();
        known.keep(&["clientcert"]);
        assert!(Arc::ptr_eq(&first, &state.learn(known)));
        let mut new = FactPaths::default();
        new.keep(&["os", "family"]);
        let grown = state.learn(new);
        assert!(!Arc::ptr_eq(&first, &grown));
        assert!(Arc::ptr_eq(&grown, &state.learn(FactPaths::default())));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn recent_answers_are_kept_newest_first() {
        let mut r: Recent<(u64, usize), &str> = Recent::new(2);
        r.put((1, 0), "a", |_| false);
        r.put((1, 1), "b", |_| false);
        assert_eq!(r.peek(&(1, 0)), Some("a"));
        // Asked for, `a` is the newest: `b` goes first past the most kept.
        assert_eq!(r.get(&(1, 0)), Some("a"));
        r.put((1, 2), "c", |_| false);
        assert_eq!((r.peek(&(1, 1)), r.peek(&(1, 0))), (None, Some("a")));
        // What `stale` names goes, and a new answer for the same question replaces the old.
        r.put((2, 0), "d", |k| k.0 != 2);
        assert_eq!((r.peek(&(1, 0)), r.peek(&(1, 2))), (None, None));
        r.put((2, 0), "e", |_| false);
        assert_eq!(r.get(&(2, 0)), Some("e"));
        assert_eq!(r.items.len(), 1);
    }
}
