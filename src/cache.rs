//! An on-disk cache of parsed YAML data files, so that a lookup costs what reading the few
//! values it needs costs, not what parsing a 5,000-key common.yaml costs.
//!
//! A cache file holds one data file's top-level hash in a compact binary form with a sorted
//! key index; a lookup decodes only the values it asks for. It is used only while the data
//! file's path, size, modification time and inode are unchanged (Puppet caches file data on
//! the same terms), and only for files of at least [`MIN_SIZE`] bytes. Any problem reading or
//! writing the cache silently falls back to parsing.

use crate::value::{Map, Value};
use std::path::{Path, PathBuf};

/// Smaller files parse faster than a cache file is read.
pub const MIN_SIZE: u64 = 32 * 1024;
const MAGIC: &[u8; 4] = b"HLC1";
/// Bumped whenever the encoding or the YAML reader's results change.
const FORMAT: u32 = 2;

/// The cache directory: `$HIERA_LOOKUP_CACHE_DIR`, else `$XDG_CACHE_HOME/hiera-lookup`, else
/// `~/.cache/hiera-lookup`; `None` when `HIERA_LOOKUP_CACHE=off`.
pub fn default_dir() -> Option<PathBuf> {
    if std::env::var("HIERA_LOOKUP_CACHE").is_ok_and(|v| v == "off" || v == "0") {
        return None;
    }
    if let Some(d) = std::env::var_os("HIERA_LOOKUP_CACHE_DIR") {
        return Some(PathBuf::from(d));
    }
    if let Some(d) = std::env::var_os("XDG_CACHE_HOME").filter(|d| !d.is_empty()) {
        return Some(PathBuf::from(d).join("hiera-lookup"));
    }
    std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache").join("hiera-lookup"))
}

/// Identity of a source file: a cache entry is valid only for the same one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stamp {
    size: u64,
    mtime_ns: u128,
    inode: u64,
}

impl Stamp {
    pub fn of(meta: &std::fs::Metadata) -> Stamp {
        #[cfg(unix)]
        let inode = std::os::unix::fs::MetadataExt::ino(meta);
        #[cfg(not(unix))]
        let inode = 0;
        let mtime_ns = meta
            .modified()
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map_or(0, |d| d.as_nanos());
        Stamp {
            size: meta.len(),
            mtime_ns,
            inode,
        }
    }
    pub fn size(&self) -> u64 {
        self.size
    }
}

/// A cached top-level hash: keys in file order, values decoded on demand.
#[derive(Debug)]
pub struct Table {
    bytes: Vec<u8>,
    /// (key offset, key length, value offset, value length) in file order.
    entries: Vec<[u32; 4]>,
    /// Indexes into `entries`, sorted by key bytes.
    sorted: Vec<u32>,
    /// Top-level keys holding values Puppet rejects, with the Ruby class to name.
    pub invalid: Vec<(String, &'static str)>,
}

impl Table {
    pub fn len(&self) -> usize {
        self.entries.len()
    }
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    fn key_at(&self, i: usize) -> &[u8] {
        let [ko, kl, _, _] = self.entries[i];
        &self.bytes[ko as usize..(ko + kl) as usize]
    }

    /// The value of a top-level string key.
    pub fn get(&self, key: &str) -> Option<Value> {
        let k = key.as_bytes();
        let pos = self
            .sorted
            .binary_search_by(|&i| self.key_at(i as usize).cmp(k))
            .ok()?;
        let [_, _, vo, vl] = self.entries[self.sorted[pos] as usize];
        let mut d = Decoder {
            b: &self.bytes[vo as usize..(vo + vl) as usize],
            pos: 0,
        };
        d.value()
    }

    /// The keys in file order.
    pub fn keys(&self) -> impl Iterator<Item = &str> {
        (0..self.entries.len()).filter_map(|i| std::str::from_utf8(self.key_at(i)).ok())
    }
}

fn cache_file(dir: &Path, source: &str) -> PathBuf {
    // FNV-1a of the path: stable across runs and builds.
    let mut h: u64 = 0xcbf29ce484222325;
    for b in source.as_bytes() {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x100000001b3);
    }
    dir.join(format!("{h:016x}.hlc"))
}

fn header(source: &str, stamp: &Stamp) -> Vec<u8> {
    let mut out = Vec::new();
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&FORMAT.to_le_bytes());
    out.extend_from_slice(env!("CARGO_PKG_VERSION").len().to_le_bytes().as_slice());
    out.extend_from_slice(env!("CARGO_PKG_VERSION").as_bytes());
    out.extend_from_slice(&stamp.size.to_le_bytes());
    out.extend_from_slice(&stamp.mtime_ns.to_le_bytes());
    out.extend_from_slice(&stamp.inode.to_le_bytes());
    out.extend_from_slice(&(source.len() as u64).to_le_bytes());
    out.extend_from_slice(source.as_bytes());
    out
}

/// The cached table for `source`, if a valid one exists.
pub fn read(dir: &Path, source: &str, stamp: &Stamp) -> Option<Table> {
    let bytes = std::fs::read(cache_file(dir, source)).ok()?;
    let head = header(source, stamp);
    if bytes.len() < head.len() + 8 || bytes[..head.len()] != head[..] {
        return None;
    }
    let mut d = Decoder {
        b: &bytes,
        pos: head.len(),
    };
    let n = d.u32()? as usize;
    let ninvalid = d.u32()? as usize;
    let mut entries = Vec::with_capacity(n);
    for _ in 0..n {
        entries.push([d.u32()?, d.u32()?, d.u32()?, d.u32()?]);
    }
    let mut sorted = Vec::with_capacity(n);
    for _ in 0..n {
        sorted.push(d.u32()?);
    }
    let mut invalid = Vec::with_capacity(ninvalid);
    for _ in 0..ninvalid {
        let key = d.str()?;
        let class = match d.u8()? {
            0 => "Symbol",
            _ => "Encoding",
        };
        invalid.push((key, class));
    }
    let blob_start = d.pos as u32;
    for e in &mut entries {
        e[0] += blob_start;
        e[2] += blob_start;
    }
    let table = Table {
        bytes,
        entries,
        sorted,
        invalid,
    };
    // Reject a truncated or foreign file rather than panic on it later.
    let end = table.bytes.len() as u64;
    let fits = table.entries.iter().all(|&[ko, kl, vo, vl]| {
        u64::from(ko) + u64::from(kl) <= end && u64::from(vo) + u64::from(vl) <= end
    }) && table
        .sorted
        .iter()
        .all(|&i| (i as usize) < table.entries.len());
    fits.then_some(table)
}

/// Writes the cache for `source` (atomically: a reader never sees half a file).
pub fn write(
    dir: &Path,
    source: &str,
    stamp: &Stamp,
    map: &Map,
    invalid: &[(Value, &'static str)],
) {
    let _ = try_write(dir, source, stamp, map, invalid);
}

fn try_write(
    dir: &Path,
    source: &str,
    stamp: &Stamp,
    map: &Map,
    invalid: &[(Value, &'static str)],
) -> std::io::Result<()> {
    let mut blob = Vec::new();
    let mut entries: Vec<[u32; 4]> = Vec::with_capacity(map.len());
    let mut keys: Vec<Vec<u8>> = Vec::with_capacity(map.len());
    for (k, v) in map {
        // Only string keys can be looked up; others never match a root key.
        let Value::String(k) = k else { continue };
        let ko = blob.len() as u32;
        blob.extend_from_slice(k.as_bytes());
        let vo = blob.len() as u32;
        encode(v, &mut blob);
        entries.push([ko, k.len() as u32, vo, blob.len() as u32 - vo]);
        keys.push(k.as_bytes().to_vec());
    }
    if blob.len() > u32::MAX as usize / 2 {
        return Ok(());
    }
    let mut sorted: Vec<u32> = (0..entries.len() as u32).collect();
    sorted.sort_by(|&a, &b| keys[a as usize].cmp(&keys[b as usize]));
    // Duplicate string keys cannot occur in a Map, so binary search finds the one entry.
    let mut out = header(source, stamp);
    out.extend_from_slice(&(entries.len() as u32).to_le_bytes());
    let inv: Vec<(&str, u8)> = invalid
        .iter()
        .filter_map(|(k, c)| k.as_str().map(|k| (k, u8::from(*c != "Symbol"))))
        .collect();
    out.extend_from_slice(&(inv.len() as u32).to_le_bytes());
    for e in &entries {
        for x in e {
            out.extend_from_slice(&x.to_le_bytes());
        }
    }
    for i in &sorted {
        out.extend_from_slice(&i.to_le_bytes());
    }
    for (k, c) in inv {
        out.extend_from_slice(&(k.len() as u32).to_le_bytes());
        out.extend_from_slice(k.as_bytes());
        out.push(c);
    }
    out.extend_from_slice(&blob);
    std::fs::create_dir_all(dir)?;
    let target = cache_file(dir, source);
    let tmp = target.with_extension(format!("tmp{}", std::process::id()));
    std::fs::write(&tmp, &out)?;
    std::fs::rename(&tmp, &target)
}

const T_NULL: u8 = 0;
const T_FALSE: u8 = 1;
const T_TRUE: u8 = 2;
const T_INT: u8 = 3;
const T_FLOAT: u8 = 4;
const T_STRING: u8 = 5;
const T_ARRAY: u8 = 6;
const T_HASH: u8 = 7;
const T_SENSITIVE: u8 = 8;
const T_BIGINT: u8 = 9;

fn encode(v: &Value, out: &mut Vec<u8>) {
    match v {
        Value::Null => out.push(T_NULL),
        Value::Bool(false) => out.push(T_FALSE),
        Value::Bool(true) => out.push(T_TRUE),
        Value::Int(i) => {
            out.push(T_INT);
            out.extend_from_slice(&i.to_le_bytes());
        }
        Value::Float(f) => {
            out.push(T_FLOAT);
            out.extend_from_slice(&f.to_bits().to_le_bytes());
        }
        Value::BigInt(d) => {
            out.push(T_BIGINT);
            out.extend_from_slice(&(d.len() as u32).to_le_bytes());
            out.extend_from_slice(d.as_bytes());
        }
        Value::String(s) => {
            out.push(T_STRING);
            out.extend_from_slice(&(s.len() as u32).to_le_bytes());
            out.extend_from_slice(s.as_bytes());
        }
        Value::Array(a) => {
            out.push(T_ARRAY);
            out.extend_from_slice(&(a.len() as u32).to_le_bytes());
            for x in a {
                encode(x, out);
            }
        }
        Value::Hash(h) => {
            out.push(T_HASH);
            out.extend_from_slice(&(h.len() as u32).to_le_bytes());
            for (k, x) in h {
                encode(k, out);
                encode(x, out);
            }
        }
        Value::Sensitive(x) => {
            out.push(T_SENSITIVE);
            encode(x, out);
        }
        // Data files never hold runtime objects; keep the cache total all the same.
        Value::Object(o) => encode(&Value::String(o.to_s.clone()), out),
    }
}

struct Decoder<'a> {
    b: &'a [u8],
    pos: usize,
}

impl Decoder<'_> {
    fn take(&mut self, n: usize) -> Option<&[u8]> {
        let s = self.b.get(self.pos..self.pos.checked_add(n)?)?;
        self.pos += n;
        Some(s)
    }
    fn u8(&mut self) -> Option<u8> {
        self.take(1).map(|s| s[0])
    }
    fn u32(&mut self) -> Option<u32> {
        self.take(4)
            .map(|s| u32::from_le_bytes([s[0], s[1], s[2], s[3]]))
    }
    fn u64(&mut self) -> Option<u64> {
        let s = self.take(8)?;
        let mut a = [0u8; 8];
        a.copy_from_slice(s);
        Some(u64::from_le_bytes(a))
    }
    fn str(&mut self) -> Option<String> {
        let n = self.u32()? as usize;
        String::from_utf8(self.take(n)?.to_vec()).ok()
    }
    fn value(&mut self) -> Option<Value> {
        Some(match self.u8()? {
            T_NULL => Value::Null,
            T_FALSE => Value::Bool(false),
            T_TRUE => Value::Bool(true),
            T_INT => Value::Int(self.u64()? as i64),
            T_FLOAT => Value::Float(f64::from_bits(self.u64()?)),
            T_STRING => Value::String(self.str()?),
            T_BIGINT => Value::BigInt(self.str()?),
            T_ARRAY => {
                let n = self.u32()? as usize;
                let mut a = Vec::with_capacity(n.min(self.b.len()));
                for _ in 0..n {
                    a.push(self.value()?);
                }
                Value::Array(a)
            }
            T_HASH => {
                let n = self.u32()? as usize;
                let mut h = Map::with_capacity_and_hasher(n.min(self.b.len()), Default::default());
                for _ in 0..n {
                    let k = self.value()?;
                    let v = self.value()?;
                    h.insert(k, v);
                }
                Value::Hash(h)
            }
            T_SENSITIVE => Value::Sensitive(Box::new(self.value()?)),
            _ => return None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_staleness() {
        let dir = std::env::temp_dir().join(format!("hl-cache-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let src = dir.join("common.yaml");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(&src, "x").unwrap();
        let stamp = Stamp::of(&std::fs::metadata(&src).unwrap());
        let mut inner = Map::default();
        inner.insert(
            Value::Int(1),
            Value::Array(vec![
                Value::Null,
                Value::Bool(true),
                Value::Float(1.5),
                Value::BigInt("-98765432109876543210".into()),
            ]),
        );
        let mut m = Map::default();
        m.insert(Value::str("b"), Value::str("é"));
        m.insert(Value::str("a"), Value::Hash(inner.clone()));
        m.insert(Value::Int(7), Value::str("not a string key"));
        let path = src.display().to_string();
        write(&dir, &path, &stamp, &m, &[(Value::str("s"), "Symbol")]);
        let t = read(&dir, &path, &stamp).expect("cached");
        assert_eq!(t.get("a"), Some(Value::Hash(inner)));
        assert_eq!(t.get("b"), Some(Value::str("é")));
        assert_eq!(t.get("c"), None);
        assert_eq!(t.keys().collect::<Vec<_>>(), ["b", "a"]);
        assert_eq!(t.invalid, vec![("s".to_string(), "Symbol")]);
        // Another size or mtime: not used.
        let other = Stamp {
            size: stamp.size + 1,
            ..stamp.clone()
        };
        assert!(read(&dir, &path, &other).is_none());
        // A damaged file is ignored, not trusted.
        let f = cache_file(&dir, &path);
        let mut bytes = std::fs::read(&f).unwrap();
        bytes.truncate(bytes.len() - 3);
        std::fs::write(&f, bytes).unwrap();
        assert!(read(&dir, &path, &stamp).is_none());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
