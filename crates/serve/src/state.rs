//! What the server holds between requests: one [`Workspace`] over the control repo (parsed
//! data files shared by every node and every request, revalidated by stamp before each
//! request), the fleet's nodes (read again when a facts file changes, or on an interval for
//! PuppetDB), and the options the command line gave.

use hiera_engine::batch::Node;
use hiera_engine::engine::{Exec, Session, Settings};
use hiera_engine::environment::EnvOptions;
use hiera_engine::error::Error;
use hiera_engine::scope::{Scope, Strict};
use hiera_engine::slim::FactPaths;
use hiera_engine::workspace::{Stamp, Workspace};
use hiera_value::value::{Map, Value};
use serde_json::Value as Json;
use std::borrow::Cow;
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
}

/// A node as the server keeps it between requests.
#[derive(Debug, Clone)]
pub enum Held {
    /// Whole: its scope (every fact) stays in memory.
    Node(Arc<Node>),
    /// Its facts packed ([`PackedFacts`]), the node made again from them when a request needs
    /// it ([`Frontend::revive`]): a parsed scope is many times the size of its facts' text, and
    /// a fleet of thousands of real fact sets would hold hundreds of MB of them.
    Packed(Packed),
}

/// A node kept as its packed facts (see [`Held::Packed`]).
#[derive(Debug, Clone)]
pub struct Packed {
    /// [`Node::name`].
    pub name: String,
    /// [`Node::source`].
    pub source: Option<(String, String)>,
    /// The facts (before the front end's scope is made of them): [`pack_facts`].
    pub facts: PackedFacts,
}

impl Held {
    /// The node's name (certname, `clientcert` fact or file name).
    pub fn name(&self) -> &str {
        match self {
            Held::Node(n) => &n.name,
            Held::Packed(p) => &p.name,
        }
    }

    /// Where the node's facts came from.
    pub fn source(&self) -> Option<&(String, String)> {
        match self {
            Held::Node(n) => n.source.as_ref(),
            Held::Packed(p) => p.source.as_ref(),
        }
    }

    /// Why the node's facts could not be read (a packed node's could; one whose packed facts
    /// cannot be unpacked has the error once [revived](Frontend::revive)).
    pub fn facts_error(&self) -> Option<&Error> {
        match self {
            Held::Node(n) => n.facts_error.as_ref(),
            Held::Packed(_) => None,
        }
    }
}

/// A fact set as a packed node keeps it: its compact JSON text ([`pack_facts`]), compressed
/// with zstd when the fleet is read ([`State`] compresses every packed node its front end
/// gives it), with a dictionary trained on the first fact sets of that reading of the fleet
/// and shared by all of its nodes. Real Facter output is mostly the same keys and values from
/// node to node: the dictionary holds them once, and a node's frame little more than what is
/// its own.
#[derive(Clone)]
pub struct PackedFacts {
    /// The text's length in bytes: what unpacking must give, and the most it may produce.
    len: u32,
    /// How the text is held.
    codec: Codec,
}

#[derive(Clone)]
enum Codec {
    /// The text itself (as [`pack_facts`] gives it, until it is compressed).
    Text(Box<[u8]>),
    /// A zstd frame, `size` bytes at `at` in `frames`, made with `dictionary` or none.
    Zstd {
        frames: Arc<Frames>,
        at: u32,
        size: u32,
        dictionary: Option<Arc<FactsDictionary>>,
    },
}

/// The frames of a reading of the fleet, one after the other in one allocation (of about
/// [`FRAMES_BYTES`]), set once full. A node's frame (under 1 KB) allocated alone would be
/// made amid the transient allocations of reading its facts (a PuppetDB answer's parse, the
/// facts' maps), and would keep heap pages from going back once they are freed (2-3 MB of
/// the heap of 3,000 PuppetDB nodes, 1 MB of facts files').
#[derive(Default)]
struct Frames(std::sync::OnceLock<Box<[u8]>>);

/// How many bytes of frames [`Frames`] are filled with before the next ones start.
const FRAMES_BYTES: usize = 1 << 20;

/// The dictionary the packed facts of one reading of the fleet are compressed with, ready for
/// decompression (shared by every node of that reading).
pub struct FactsDictionary {
    decoder: zstd::dict::DecoderDictionary<'static>,
    /// The dictionary's size in bytes.
    size: usize,
}

impl FactsDictionary {
    /// The dictionary's size in bytes.
    pub fn size(&self) -> usize {
        self.size
    }
}

impl std::fmt::Debug for FactsDictionary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FactsDictionary")
            .field("size", &self.size)
            .finish_non_exhaustive()
    }
}

impl std::fmt::Debug for PackedFacts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let codec = match &self.codec {
            Codec::Text(_) => "text",
            Codec::Zstd {
                dictionary: None, ..
            } => "zstd",
            Codec::Zstd { .. } => "zstd with the fleet's dictionary",
        };
        f.debug_struct("PackedFacts")
            .field("codec", &codec)
            .field("len", &self.len)
            .field("held", &self.held_len())
            .finish()
    }
}

/// The longest facts text a node is packed with (64 MiB): what decompressing a packed node
/// may produce at most. A node whose facts are longer (no real fact set is) is kept whole.
pub const MAX_PACKED_TEXT: usize = 64 << 20;

impl PackedFacts {
    /// The facts' text, decompressed: exactly the [recorded length](Self::text_len) or an error
    /// (a frame that is damaged, too long or not UTF-8), never more than that length produced.
    pub fn text(&self) -> Result<Cow<'_, str>, Error> {
        let damaged = |why: String| Error::run(format!("packed facts cannot be unpacked: {why}"));
        let len = self.text_len();
        let bytes = match &self.codec {
            Codec::Text(text) => Cow::Borrowed(&**text),
            Codec::Zstd {
                frames,
                at,
                size,
                dictionary,
            } => {
                let frame = frames
                    .0
                    .get()
                    .and_then(|f| f.get(*at as usize..*at as usize + *size as usize))
                    .ok_or_else(|| damaged("its frame is not there".into()))?;
                // Decompressed into exactly the recorded length: a frame that would give more
                // fails (the buffer is too small) instead of growing it.
                let mut out = Vec::with_capacity(len);
                decompress(frame, dictionary.as_deref(), &mut out).map_err(damaged)?;
                Cow::Owned(out)
            }
        };
        if bytes.len() != len {
            return Err(damaged(format!(
                "{} bytes where {len} were packed",
                bytes.len()
            )));
        }
        match bytes {
            Cow::Borrowed(b) => std::str::from_utf8(b)
                .map(Cow::Borrowed)
                .map_err(|e| damaged(e.to_string())),
            Cow::Owned(v) => String::from_utf8(v)
                .map(Cow::Owned)
                .map_err(|e| damaged(e.to_string())),
        }
    }

    /// The length of the facts' text, in bytes.
    pub fn text_len(&self) -> usize {
        self.len as usize
    }

    /// The bytes held for the facts (the compressed frame, or the text).
    pub fn held_len(&self) -> usize {
        match &self.codec {
            Codec::Text(text) => text.len(),
            Codec::Zstd { size, .. } => *size as usize,
        }
    }

    /// Whether the facts are held compressed.
    pub fn is_compressed(&self) -> bool {
        matches!(self.codec, Codec::Zstd { .. })
    }

    /// The dictionary the facts are compressed with (that of their reading of the fleet).
    pub fn dictionary(&self) -> Option<&Arc<FactsDictionary>> {
        match &self.codec {
            Codec::Zstd { dictionary, .. } => dictionary.as_ref(),
            Codec::Text(_) => None,
        }
    }
}

/// Decompression contexts kept for the next packed node, at most this many (one per thread
/// unpacking at once, 94 KiB each): making one (13 µs) costs three times what decompressing
/// a node's facts does (4 µs for 10 KB of real facts).
const CONTEXTS_KEPT: usize = 4;

static CONTEXTS: Mutex<Vec<zstd::zstd_safe::DCtx<'static>>> = Mutex::new(Vec::new());

/// `frame` decompressed into `out`, at most its capacity (a frame giving more is an error).
fn decompress(
    frame: &[u8],
    dictionary: Option<&FactsDictionary>,
    out: &mut Vec<u8>,
) -> Result<(), String> {
    let kept = CONTEXTS.lock().unwrap_or_else(|e| e.into_inner()).pop();
    let mut context = kept
        .or_else(zstd::zstd_safe::DCtx::try_create)
        .ok_or("zstd could not make a decompression context")?;
    let done = match dictionary {
        Some(d) => context.decompress_using_ddict(out, frame, d.decoder.as_ddict()),
        None => context.decompress(out, frame),
    };
    match done {
        Ok(_) => {
            let mut kept = CONTEXTS.lock().unwrap_or_else(|e| e.into_inner());
            if kept.len() < CONTEXTS_KEPT {
                kept.push(context);
            }
            Ok(())
        }
        Err(code) => Err(zstd::zstd_safe::get_error_name(code).to_string()),
    }
}

/// `facts` packed (their compact JSON text, not compressed yet: [`State`] compresses the
/// packed nodes of a fleet as it reads them), when reading that text gives back exactly
/// `facts` (every value, type and order): real facts always do; a fact set holding what JSON
/// cannot say (a YAML timestamp, a binary), or longer than [`MAX_PACKED_TEXT`], is `None`,
/// and its node is kept whole.
pub fn pack_facts(facts: &Map) -> Option<PackedFacts> {
    let text = hiera_formats::json::write::to_json(&Value::Hash(facts.clone())).ok()?;
    if text.len() > MAX_PACKED_TEXT {
        return None;
    }
    let again = parse_facts(&text).ok()?;
    identical_maps(facts, &again).then(|| PackedFacts {
        len: text.len() as u32,
        codec: Codec::Text(text.into_bytes().into_boxed_slice()),
    })
}

/// The facts [`pack_facts`] packed (and [`State`] may have compressed since), or why they
/// cannot be given back.
pub fn unpack_facts(packed: &PackedFacts) -> Result<Map, Error> {
    parse_facts(&packed.text()?)
}

fn parse_facts(text: &str) -> Result<Map, Error> {
    match hiera_formats::json::parse(text) {
        Ok(Value::Hash(m)) => Ok(m),
        Ok(_) => Err(Error::run("packed facts are not a hash")),
        Err(e) => Err(Error::run(format!("packed facts cannot be read: {e}"))),
    }
}

/// How many packed nodes' texts, the first of a reading of the fleet, the dictionary is
/// trained on (held uncompressed until then: about 2.5 MB of real fact sets).
pub const TRAINING_NODES: usize = 256;

/// Fewer packed nodes than this in a whole reading: no dictionary (zstd alone).
const TRAINING_MIN_NODES: usize = 8;

/// The dictionary's largest size (zstd's default, 110 KiB): on benches/serve.sh's fleet the
/// texts compress 12x with it, 8x with 64 KiB.
const DICTIONARY_BYTES: usize = 112_640;

/// zstd's level for packed facts: its default, fast enough that compressing is a small part
/// of reading the fleet (level 9 would save another fifth).
const LEVEL: i32 = 3;

/// Compresses the packed nodes of one reading of the fleet as they come ([`load`]): the first
/// [`TRAINING_NODES`] wait, uncompressed, for the dictionary trained on them.
#[derive(Default)]
struct Packer {
    /// The places (in the nodes read) of the packed nodes not compressed yet.
    waiting: Vec<usize>,
    /// Once the dictionary is trained (or known not to be).
    ready: Option<Compressing>,
}

/// The compressor of a reading of the fleet, and where its frames go.
struct Compressing {
    compressor: zstd::bulk::Compressor<'static>,
    dictionary: Option<Arc<FactsDictionary>>,
    /// The frames being filled: `buffer[..used]` are taken, and set in `frames` once full.
    frames: Arc<Frames>,
    buffer: Vec<u8>,
    used: usize,
}

impl Compressing {
    /// `facts`' text compressed, when that makes it smaller (else, or when compression fails,
    /// it stays as it is: the text of tiny facts compressed without a dictionary can grow by
    /// a frame's few bytes).
    fn compress(&mut self, facts: &mut PackedFacts) {
        let Codec::Text(text) = &facts.codec else {
            return;
        };
        let bound = zstd::zstd_safe::compress_bound(text.len());
        if self.buffer.len() - self.used < bound {
            self.seal();
            self.buffer = vec![0; bound.max(FRAMES_BYTES)];
        }
        let Ok(size) = self
            .compressor
            .compress_to_buffer(text, &mut self.buffer[self.used..])
        else {
            return;
        };
        if size >= text.len() {
            return;
        }
        facts.codec = Codec::Zstd {
            frames: self.frames.clone(),
            at: self.used as u32,
            size: size as u32,
            dictionary: self.dictionary.clone(),
        };
        self.used += size;
    }

    /// The frames made so far set (exactly their size), the next ones in new [`Frames`].
    fn seal(&mut self) {
        let mut buffer = std::mem::take(&mut self.buffer);
        buffer.truncate(self.used);
        let _ = self.frames.0.set(buffer.into_boxed_slice());
        self.frames = Arc::default();
        self.used = 0;
    }
}

impl Packer {
    /// `node`, added to `nodes`: a packed one compressed, or waiting for the dictionary.
    fn keep(&mut self, mut node: Held, nodes: &mut Vec<Held>) {
        let Held::Packed(p) = &mut node else {
            nodes.push(node);
            return;
        };
        match &mut self.ready {
            Some(compressing) => {
                compressing.compress(&mut p.facts);
                nodes.push(node);
            }
            None => {
                self.waiting.push(nodes.len());
                nodes.push(node);
                if self.waiting.len() >= TRAINING_NODES {
                    self.start(nodes);
                }
            }
        }
    }

    /// Every node read: those still waiting compressed, the last frames set.
    fn finish(&mut self, nodes: &mut [Held]) {
        if self.ready.is_none() {
            self.start(nodes);
        }
        if let Some(compressing) = &mut self.ready {
            compressing.seal();
        }
    }

    /// Trains the dictionary on the waiting texts (none if they are too few or training
    /// fails) and compresses them.
    fn start(&mut self, nodes: &mut [Held]) {
        let waiting = std::mem::take(&mut self.waiting);
        let samples: Vec<&[u8]> = waiting
            .iter()
            .filter_map(|&i| match &nodes[i] {
                Held::Packed(p) => match &p.facts.codec {
                    Codec::Text(text) => Some(&**text),
                    Codec::Zstd { .. } => None,
                },
                Held::Node(_) => None,
            })
            .collect();
        let dictionary = (samples.len() >= TRAINING_MIN_NODES)
            .then(|| zstd::dict::from_samples(&samples, DICTIONARY_BYTES).ok())
            .flatten();
        let with_dictionary = dictionary.and_then(|d| {
            let compressor = zstd::bulk::Compressor::with_dictionary(LEVEL, &d).ok()?;
            let dictionary = FactsDictionary {
                decoder: zstd::dict::DecoderDictionary::copy(&d),
                size: d.len(),
            };
            Some((compressor, Some(Arc::new(dictionary))))
        });
        let ready =
            with_dictionary.or_else(|| zstd::bulk::Compressor::new(LEVEL).ok().map(|c| (c, None)));
        let Some((compressor, dictionary)) = ready else {
            // No compressor at all (zstd could not allocate one): the texts stay as they are.
            return;
        };
        let mut compressing = Compressing {
            compressor,
            dictionary,
            frames: Arc::default(),
            buffer: Vec::new(),
            used: 0,
        };
        for i in waiting {
            if let Held::Packed(p) = &mut nodes[i] {
                compressing.compress(&mut p.facts);
            }
        }
        self.ready = Some(compressing);
    }
}

/// Whether two maps hold the same entries in the same order, every value of the same type
/// (Ruby's `==` would take 1 for 1.0 and ignore the order).
fn identical_maps(a: &Map, b: &Map) -> bool {
    a.len() == b.len()
        && a.iter()
            .zip(b.iter())
            .all(|((ka, va), (kb, vb))| identical(ka, kb) && identical(va, vb))
}

fn identical(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Null, Value::Null) => true,
        (Value::Bool(x), Value::Bool(y)) => x == y,
        (Value::Int(x), Value::Int(y)) => x == y,
        (Value::BigInt(x), Value::BigInt(y)) => x == y,
        (Value::Float(x), Value::Float(y)) => x.to_bits() == y.to_bits(),
        (Value::String(x), Value::String(y)) => x == y,
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| identical(x, y))
        }
        (Value::Hash(x), Value::Hash(y)) => identical_maps(x, y),
        _ => false,
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

/// What the program embedding the server provides: how the nodes are read (the command line's
/// facts sources, resolved as every command resolves them) and how a lookup is explained
/// (exactly as the command line's `--explain` prints it). The server never parses flags.
pub trait Frontend: Send + Sync {
    /// Reads every node again (facts files, a facts directory, PuppetDB), giving each to
    /// `keep` as soon as it is read: [packed](Held::Packed) ([`pack_facts`]) when the front
    /// end can [revive](Self::revive) it from its facts, so that the fleet's scopes are never
    /// all in memory (`keep` compresses the packed facts). Returns what reading them warned
    /// about.
    fn load_nodes(&self, keep: &mut dyn FnMut(Held)) -> Result<Vec<String>, Error>;
    /// The node `packed` was made from, made again as [`load_nodes`](Self::load_nodes) made
    /// it. By default: its facts given to [`scope`](Self::scope).
    fn revive(&self, packed: &Packed) -> Node {
        let (scope, facts_error) = match unpack_facts(&packed.facts) {
            Ok(facts) => (self.scope(facts), None),
            Err(e) => (Scope::default(), Some(e)),
        };
        Node {
            name: packed.name.clone(),
            source: packed.source.clone(),
            scope,
            facts_error,
            workspace: None,
        }
    }
    /// Gives memory the allocator holds free back to the system: called after the nodes are
    /// read and after each question about the whole fleet, whose transient allocations would
    /// otherwise stay mapped between the long-lived ones. The allocator is the program's: by
    /// default nothing is done.
    fn release_memory(&self) {}
    /// Files and directories whose change (a file edited, added or removed) means the nodes
    /// must be read again.
    fn watched(&self) -> Vec<PathBuf>;
    /// Read the nodes again at least this often (PuppetDB's node set), whatever changed.
    fn reload_every(&self) -> Option<Duration> {
        None
    }
    /// The scope of a node known only by its `facts` (`POST /api/v1/lookup`), as the
    /// command line makes a node's scope (its `$settings::` variables and `--var`s).
    fn scope(&self, facts: Map) -> Scope;
    /// Puppet's `--explain` text for `key` on `session` (made with explain settings by
    /// [`State::explain`]; `merge`: a `--merge` strategy name), byte for byte what
    /// `hiera-lookup --explain` prints.
    fn explain(
        &self,
        session: &mut Session,
        key: &str,
        merge: Option<&str>,
    ) -> Result<String, Error>;
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
    frontend: Box<dyn Frontend>,
    options: Options,
    /// The root, canonical (symbolic links resolved), for telling what is inside it.
    canonical_root: PathBuf,
    nodes: Mutex<NodeCache>,
    /// Held while the nodes are read again ([`refresh`](Self::refresh)).
    reading: Mutex<()>,
    /// The latest key views (`/keys/{key}`), each with the state of its inputs, newest first.
    key_views: Mutex<Recent<(String, u64), Arc<Json>>>,
    /// The nodes made again from their packed facts for the latest requests about one node,
    /// by reading and place, newest first (at most [`NODES_REVIVED_KEPT`]).
    revived: Mutex<Recent<NodeAt, Arc<Node>>>,
    /// The overview's fleet index, and the state of its inputs it was computed for.
    fleet_index: Mutex<Option<(u64, Arc<crate::views::FleetIndex>)>>,
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
    /// Opens the control repo `env` and reads the nodes once (an error here is the server's
    /// start-up error).
    pub fn open(
        env: EnvOptions,
        options: Options,
        frontend: Box<dyn Frontend>,
    ) -> Result<State, Error> {
        let settings = Settings {
            strict: options.strict,
            // What eyaml decrypts is recorded so that it can be hidden (`--show-secrets` off).
            redact: !options.show_secrets,
            ..Default::default()
        };
        let workspace = Workspace::open(env, settings)?;
        // Taken before the read: a change while reading shows as a change next time.
        let fingerprint = fingerprint(&frontend.watched());
        let loaded = load(&*frontend)?;
        frontend.release_memory();
        let canonical_root =
            std::fs::canonicalize(&options.root).unwrap_or_else(|_| options.root.clone());
        Ok(State {
            workspace,
            frontend,
            canonical_root,
            options,
            reading: Mutex::new(()),
            nodes: Mutex::new(NodeCache {
                fleet: Arc::new(Fleet::new(loaded)),
                fingerprint,
                loaded: Instant::now(),
            }),
            revived: Mutex::new(Recent::new(NODES_REVIVED_KEPT)),
            fleet_index: Mutex::new(None),
            fleet_index_computing: Mutex::new(()),
            keep: Mutex::new(Arc::new(crate::slim::first_kept())),
            slim_counts: Default::default(),
            warmed: Default::default(),
            key_views: Mutex::new(Recent::new(KEY_VIEWS_KEPT)),
            heavy: tokio::sync::Semaphore::new(HEAVY_AT_ONCE),
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

    /// The front end (for the explanation of a lookup).
    pub fn frontend(&self) -> &dyn Frontend {
        &*self.frontend
    }

    /// What changed since the last request, dropped: data files and hiera.yaml files by
    /// stamp (the workspace), the nodes when a watched facts file or directory changed (or
    /// their interval passed). Run once at the start of every request; the fleet it returns
    /// is the one the request answers for.
    ///
    /// The nodes are read again outside the lock the requests take: while one request reads
    /// them, the others answer for the nodes read before.
    pub fn refresh(&self) -> Arc<Fleet> {
        self.workspace.refresh();
        let now = fingerprint(&self.frontend.watched());
        let stale = |cache: &NodeCache| {
            now != cache.fingerprint
                || self
                    .frontend
                    .reload_every()
                    .is_some_and(|every| cache.loaded.elapsed() >= every)
        };
        let current = {
            let cache = self.nodes.lock().unwrap_or_else(|e| e.into_inner());
            if !stale(&cache) {
                return cache.fleet.clone();
            }
            cache.fleet.clone()
        };
        let Ok(_reading) = self.reading.try_lock() else {
            return current;
        };
        // Another request may have read them while this one waited for its turn.
        let old = {
            let cache = self.nodes.lock().unwrap_or_else(|e| e.into_inner());
            if !stale(&cache) {
                return cache.fleet.clone();
            }
            cache.fleet.clone()
        };
        let fleet = match load(&*self.frontend) {
            Ok(loaded) => Fleet::new(loaded),
            // Keep answering for the nodes read before, and say why.
            Err(e) => Fleet {
                error: Some(e.to_string()),
                ..(*old).clone()
            },
        };
        self.frontend.release_memory();
        let fleet = Arc::new(fleet);
        let mut cache = self.nodes.lock().unwrap_or_else(|e| e.into_inner());
        // Taken before the read: a change while reading shows as a change next time.
        cache.fingerprint = now;
        cache.loaded = Instant::now();
        cache.fleet = fleet.clone();
        fleet
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
        let node = Arc::new(self.frontend.revive(packed));
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
                kept.unwrap_or_else(|| Arc::new(self.frontend.revive(p)))
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
        work: impl Fn(&Node, &mut Session) -> R,
    ) -> R {
        if let Held::Node(n) = &fleet.nodes[i] {
            let mut session = self.session(n.scope.clone());
            return work(n, &mut session);
        }
        let slot = &fleet.slims[i];
        let slim = slot.lock().unwrap_or_else(|e| e.into_inner()).clone();
        if let Some(slim) = slim.and_then(|s| s.node(&fleet.nodes[i], &*self.frontend)) {
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
        let text = self.frontend.explain(&mut session, key, merge);
        // Whatever the front end hid already, nothing this session decrypted goes out.
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
        compute: impl FnOnce() -> crate::views::FleetIndex,
    ) -> Arc<crate::views::FleetIndex> {
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
        compute: impl FnOnce() -> Result<Json, crate::views::ViewError>,
    ) -> Result<Json, crate::views::ViewError> {
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

/// Reads the nodes through `frontend`, the packed ones compressed as they come (the first
/// [`TRAINING_NODES`] once the dictionary is trained on them).
fn load(frontend: &dyn Frontend) -> Result<Loaded, Error> {
    let mut nodes = Vec::new();
    let mut packer = Packer::default();
    let warnings = frontend.load_nodes(&mut |n| packer.keep(n, &mut nodes))?;
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
        struct NoNodes;
        impl Frontend for NoNodes {
            fn load_nodes(&self, _: &mut dyn FnMut(Held)) -> Result<Vec<String>, Error> {
                Ok(vec![])
            }
            fn watched(&self) -> Vec<PathBuf> {
                vec![]
            }
            fn scope(&self, facts: Map) -> Scope {
                Scope::from_facts(facts, "production")
            }
            fn explain(&self, _: &mut Session, _: &str, _: Option<&str>) -> Result<String, Error> {
                Ok(String::new())
            }
        }
        let dir = std::env::temp_dir().join(format!("hl-serve-learn-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("hiera.yaml"), "version: 5\n").unwrap();
        let env = EnvOptions {
            cwd: dir.clone(),
            ..Default::default()
        };
        let options = Options {
            root: dir.clone(),
            strict: Strict::Error,
            show_secrets: false,
            allow_exec: false,
            threads: 1,
            lint: hiera_lint::Options::default(),
        };
        let state = State::open(env, options, Box::new(NoNodes)).unwrap();
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

    fn map(pairs: Vec<(&str, Value)>) -> Map {
        let mut m = Map::default();
        for (k, v) in pairs {
            m.insert(Value::str(k), v);
        }
        m
    }

    /// A fact set like Facter's, node `i`'s: the same keys as every node's, some values its own.
    fn fact_set(i: usize) -> Map {
        let mut interfaces = Map::default();
        for n in 0..(i % 4 + 1) {
            interfaces.insert(
                Value::str(format!("eth{n}")),
                Value::Hash(map(vec![
                    ("ip", Value::str(format!("10.{}.{n}.{}", i / 250, i % 250))),
                    ("mtu", Value::Int(1500)),
                    (
                        "mac",
                        Value::str(format!("52:54:00:{:02x}:{n:02x}:01", i % 256)),
                    ),
                ])),
            );
        }
        let mut packages = Vec::new();
        for p in 0..(40 + i % 7) {
            packages.push(Value::str(format!("package-{p}-{}", p * 7 % 13)));
        }
        map(vec![
            ("clientcert", Value::str(format!("node{i:05}.example.com"))),
            (
                "os",
                Value::Hash(map(vec![
                    ("family", Value::str(["Debian", "RedHat"][i % 2])),
                    ("name", Value::str(["Debian", "Rocky"][i % 2])),
                    (
                        "release",
                        Value::Hash(map(vec![
                            ("full", Value::str(["12.5", "9.3"][i % 2])),
                            ("major", Value::str(["12", "9"][i % 2])),
                        ])),
                    ),
                ])),
            ),
            ("processors", Value::Int(1 + (i % 16) as i64)),
            ("load_average", Value::Float(i as f64 / 8.0)),
            ("uptime_seconds", Value::Int(86_400 * i as i64 + 17)),
            ("is_virtual", Value::Bool(i.is_multiple_of(3))),
            ("interfaces", Value::Hash(interfaces)),
            ("packages", Value::Array(packages)),
            ("dmi", Value::Null),
        ])
    }

    fn held(facts: &Map) -> Held {
        Held::Packed(Packed {
            name: "n".into(),
            source: None,
            facts: pack_facts(facts).expect("packable"),
        })
    }

    /// `nodes`, in order, as [`load`] keeps them.
    fn packed_fleet(nodes: Vec<Held>) -> Vec<Held> {
        let mut packer = Packer::default();
        let mut kept = Vec::new();
        for n in nodes {
            packer.keep(n, &mut kept);
        }
        packer.finish(&mut kept);
        kept
    }

    #[test]
    fn facts_pack_exactly_or_not_at_all() {
        let facts = map(vec![
            ("zeta", Value::Int(1)),
            ("alpha", Value::Float(1.0)),
            (
                "big",
                Value::BigInt("123456789012345678901234567890".into()),
            ),
            ("neg0", Value::Float(-0.0)),
            ("none", Value::Null),
            (
                "os",
                Value::Hash(map(vec![
                    ("name", Value::str("Debian")),
                    (
                        "list",
                        Value::Array(vec![Value::Bool(true), Value::str("é\u{1}")]),
                    ),
                ])),
            ),
        ]);
        let packed = pack_facts(&facts).expect("JSON holds these");
        assert!(!packed.is_compressed());
        let back = unpack_facts(&packed).unwrap();
        assert!(identical_maps(&facts, &back));
        // Compressed (as a fleet's nodes are when read), they unpack exactly the same.
        for with_dictionary in [false, true] {
            let mut nodes = vec![held(&facts)];
            if with_dictionary {
                nodes.extend((0..TRAINING_NODES).map(|i| held(&fact_set(i))));
            }
            let nodes = packed_fleet(nodes);
            let Held::Packed(p) = &nodes[0] else {
                panic!("packed")
            };
            assert!(p.facts.is_compressed(), "{p:?}");
            assert_eq!(p.facts.dictionary().is_some(), with_dictionary, "{p:?}");
            let back = unpack_facts(&p.facts).unwrap();
            assert!(identical_maps(&facts, &back));
            let keys: Vec<&Value> = back.keys().take(2).collect();
            assert_eq!(keys, [&Value::str("zeta"), &Value::str("alpha")]);
        }
        // The order and the types are kept: 1 is not 1.0, and a reordered map differs.
        let keys: Vec<&Value> = back.keys().take(2).collect();
        assert_eq!(keys, [&Value::str("zeta"), &Value::str("alpha")]);
        assert!(!identical(&Value::Int(1), &Value::Float(1.0)));
        let reordered = map(vec![("alpha", Value::Float(1.0)), ("zeta", Value::Int(1))]);
        let first_two = map(vec![("zeta", Value::Int(1)), ("alpha", Value::Float(1.0))]);
        assert!(!identical_maps(&reordered, &first_two));
        // What JSON cannot say is not packed: the node stays whole.
        assert!(pack_facts(&map(vec![("nan", Value::Float(f64::NAN))])).is_none());
        assert!(pack_facts(&map(vec![(
            "s",
            Value::Sensitive(Box::new(Value::str("x")))
        )]))
        .is_none());
    }

    /// A fleet's packed nodes are compressed, the first [`TRAINING_NODES`] and every later one
    /// with one dictionary trained on the first, and each unpacks to exactly its facts; a fleet
    /// too small for a dictionary is compressed without one; whole nodes stay as they are, in
    /// their places.
    #[test]
    fn a_fleet_is_compressed_with_its_own_dictionary() {
        let count = TRAINING_NODES + 100;
        let whole = Arc::new(Node {
            name: "whole".into(),
            source: None,
            scope: Scope::default(),
            facts_error: Some(Error::run("unreadable")),
            workspace: None,
        });
        let mut nodes: Vec<Held> = (0..count).map(|i| held(&fact_set(i))).collect();
        nodes.insert(3, Held::Node(whole.clone()));
        nodes.insert(TRAINING_NODES + 50, Held::Node(whole.clone()));
        let kept = packed_fleet(nodes);
        assert_eq!(kept.len(), count + 2);
        let (mut text, mut held_bytes, mut dictionary) = (0, 0, None::<Arc<FactsDictionary>>);
        let mut i = 0;
        for (at, n) in kept.iter().enumerate() {
            let p = match n {
                Held::Node(n) => {
                    assert!(Arc::ptr_eq(n, &whole) && (at == 3 || at == TRAINING_NODES + 50));
                    continue;
                }
                Held::Packed(p) => p,
            };
            assert!(p.facts.is_compressed(), "node {i}: {p:?}");
            let dict = p.facts.dictionary().expect("a dictionary");
            match &dictionary {
                Some(d) => assert!(Arc::ptr_eq(d, dict), "node {i}: one dictionary for all"),
                None => dictionary = Some(dict.clone()),
            }
            let back = unpack_facts(&p.facts).unwrap();
            assert!(identical_maps(&fact_set(i), &back), "node {i}");
            text += p.facts.text_len();
            held_bytes += p.facts.held_len();
            i += 1;
        }
        assert_eq!(i, count);
        assert!(
            held_bytes * 4 < text,
            "{held_bytes} bytes held for {text} of text"
        );
        // Frames that do not fit what is left of the frames being filled start new ones, one
        // larger than the rest in frames of its size.
        let mut seed = 1u64;
        let mut noise = |bytes: usize| {
            let mut s = String::with_capacity(bytes);
            while s.len() < bytes {
                seed = seed
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                s.push_str(&format!("{:016x}", seed));
            }
            Value::str(s)
        };
        let mut big: Vec<Map> = [700_000, 700_000, 1_500_000]
            .iter()
            .map(|&b| map(vec![("noise", noise(b)), ("os", Value::str("Debian"))]))
            .collect();
        big.push(fact_set(7));
        let mut nodes: Vec<Held> = (0..TRAINING_NODES).map(|i| held(&fact_set(i))).collect();
        nodes.extend(big.iter().map(held));
        let kept = packed_fleet(nodes);
        let mut all_frames = Vec::new();
        for (i, facts) in big.iter().enumerate() {
            let Held::Packed(p) = &kept[TRAINING_NODES + i] else {
                panic!()
            };
            assert!(p.facts.is_compressed(), "{p:?}");
            assert!(identical_maps(facts, &unpack_facts(&p.facts).unwrap()));
            if let Codec::Zstd { frames, .. } = &p.facts.codec {
                all_frames.push(frames.clone());
            }
        }
        assert!(!Arc::ptr_eq(&all_frames[0], &all_frames[1]));
        assert!(!Arc::ptr_eq(&all_frames[1], &all_frames[2]));
        // The hex digits compress to about half: what is left after the third fits the last.
        assert!(Arc::ptr_eq(&all_frames[2], &all_frames[3]));
        // Too few nodes to train on: zstd alone, the same facts back.
        let few = packed_fleet((0..3).map(|i| held(&fact_set(i))).collect());
        for (i, n) in few.iter().enumerate() {
            let Held::Packed(p) = n else { panic!() };
            assert!(p.facts.dictionary().is_none(), "{p:?}");
            assert!(identical_maps(
                &fact_set(i),
                &unpack_facts(&p.facts).unwrap()
            ));
        }
    }

    /// Packed facts that cannot be unpacked (a damaged frame, one that would give more than
    /// the text packed, the wrong dictionary) are an error, never a panic, and the node made
    /// again from them has it as its facts' error.
    #[test]
    fn damaged_packed_facts_are_the_nodes_error() {
        let kept = packed_fleet((0..TRAINING_NODES).map(|i| held(&fact_set(i))).collect());
        let Held::Packed(good) = &kept[7] else {
            panic!()
        };
        let damage = |f: &dyn Fn(&mut PackedFacts)| {
            let mut p = good.clone();
            f(&mut p.facts);
            p
        };
        // The frame, changed by `f`, in frames of its own.
        let reframe = |p: &mut PackedFacts, f: &dyn Fn(&mut Vec<u8>)| {
            let Codec::Zstd {
                frames, at, size, ..
            } = &mut p.codec
            else {
                panic!("compressed")
            };
            let whole = frames.0.get().unwrap();
            let mut frame = whole[*at as usize..(*at + *size) as usize].to_vec();
            f(&mut frame);
            *size = frame.len() as u32;
            *at = 0;
            *frames = Arc::new(Frames(frame.into_boxed_slice().into()));
        };
        let text = |f: &dyn Fn(&mut Box<[u8]>)| {
            let mut p = good.clone();
            p.facts = pack_facts(&fact_set(1)).unwrap();
            let Codec::Text(t) = &mut p.facts.codec else {
                panic!("text")
            };
            f(t);
            p
        };
        let bad = [
            // Bytes flipped in the middle of the frame.
            damage(&|p| {
                reframe(p, &|f| {
                    let mid = f.len() / 2;
                    for b in &mut f[mid..mid + 4] {
                        *b ^= 0x5a;
                    }
                })
            }),
            // Cut short.
            damage(&|p| reframe(p, &|f| f.truncate(f.len() / 2))),
            // Not zstd at all.
            damage(&|p| reframe(p, &|f| *f = b"not a frame".to_vec())),
            // Recorded shorter than the frame gives: decompression stops at the recorded length.
            damage(&|p| p.len -= 1),
            // Recorded longer than the frame gives.
            damage(&|p| p.len += 1),
            // Without its dictionary.
            damage(&|p| {
                if let Codec::Zstd { dictionary, .. } = &mut p.codec {
                    *dictionary = None;
                }
            }),
            // Not where its frames are, or its frames never set.
            damage(&|p| {
                if let Codec::Zstd { at, .. } = &mut p.codec {
                    *at = u32::MAX - 8;
                }
            }),
            damage(&|p| {
                if let Codec::Zstd { frames, .. } = &mut p.codec {
                    *frames = Arc::default();
                }
            }),
            // Text that is not UTF-8, or not JSON.
            text(&|t| t[0] = 0xff),
            text(&|t| t[0] = b'['),
        ];
        struct Plain;
        impl Frontend for Plain {
            fn load_nodes(&self, _: &mut dyn FnMut(Held)) -> Result<Vec<String>, Error> {
                Ok(Vec::new())
            }
            fn watched(&self) -> Vec<PathBuf> {
                Vec::new()
            }
            fn scope(&self, facts: Map) -> Scope {
                Scope::from_facts(facts, "production")
            }
            fn explain(&self, _: &mut Session, _: &str, _: Option<&str>) -> Result<String, Error> {
                Err(Error::run("not here"))
            }
        }
        assert!(Plain.revive(good).facts_error.is_none());
        for (i, p) in bad.iter().enumerate() {
            assert!(unpack_facts(&p.facts).is_err(), "{i}: {p:?}");
            let node = Plain.revive(p);
            let e = node.facts_error.expect("the node's error").to_string();
            assert!(e.contains("packed facts"), "{i}: {e}");
            assert_eq!(node.name, good.name);
        }
    }
}
