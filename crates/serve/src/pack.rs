//! How the server keeps its nodes between requests: whole ([`Held::Node`]), or as their facts
//! packed ([`Held::Packed`]): the compact JSON text of the facts, compressed with zstd and a
//! dictionary trained on the fleet's first fact sets (`Packer`), made a node again when a
//! request needs it ([`revive`]).

use hiera_engine::batch::Node;
use hiera_engine::error::Error;
use hiera_engine::scope::Scope;
use hiera_value::value::{Map, Value};
use std::borrow::Cow;
use std::sync::{Arc, Mutex};

/// A node as the server keeps it between requests.
#[derive(Debug, Clone)]
pub enum Held {
    /// Whole: its scope (every fact) stays in memory.
    Node(Arc<Node>),
    /// Its facts packed ([`PackedFacts`]), the node made again from them when a request needs
    /// it ([`revive`]): a parsed scope is many times the size of its facts' text, and
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
    /// cannot be unpacked has the error once [revived](revive)).
    pub fn facts_error(&self) -> Option<&Error> {
        match self {
            Held::Node(n) => n.facts_error.as_ref(),
            Held::Packed(_) => None,
        }
    }
}

/// A fact set as a packed node keeps it: its compact JSON text ([`pack_facts`]), compressed
/// with zstd when the fleet is read ([`State`](crate::State) compresses every packed node its front end
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

/// `facts` packed (their compact JSON text, not compressed yet: [`State`](crate::State) compresses the
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

/// The facts [`pack_facts`] packed (and [`State`](crate::State) may have compressed since), or why they
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
pub(crate) struct Packer {
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
    pub(crate) fn keep(&mut self, mut node: Held, nodes: &mut Vec<Held>) {
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
    pub(crate) fn finish(&mut self, nodes: &mut [Held]) {
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

/// The node `packed` was made from, made again: its facts given to `scope` (the node
/// context's, as every node's scope is made); a damaged frame is the node's facts error.
pub fn revive(packed: &Packed, scope: impl FnOnce(Map) -> Scope) -> Node {
    let (scope, facts_error) = match unpack_facts(&packed.facts) {
        Ok(facts) => (scope(facts), None),
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

#[cfg(test)]
mod tests {
    use super::*;

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
        let revive = |p: &Packed| revive(p, |facts| Scope::from_facts(facts, "production"));
        assert!(revive(good).facts_error.is_none());
        for (i, p) in bad.iter().enumerate() {
            assert!(unpack_facts(&p.facts).is_err(), "{i}: {p:?}");
            let node = revive(p);
            let e = node.facts_error.expect("the node's error").to_string();
            assert!(e.contains("packed facts"), "{i}: {e}");
            assert_eq!(node.name, good.name);
        }
    }
}
