//! The structural pass over a YAML data file: where each top-level entry starts and ends,
//! found without building any value, so that a lookup builds only the entries it asks for.
//!
//! [`index`] accepts a subset of YAML that it checks completely: a top-level block mapping
//! at column 0 with plain or quoted keys, whose values are block mappings and sequences,
//! plain, quoted and block scalars, flow collections and anchors, with comments, a leading
//! `---` and blank lines anywhere. For such a file it answers only when libyaml would parse
//! the whole file without an error and Psych would build it without raising: every
//! character is one libyaml accepts, every token is where libyaml's scanner and parser
//! accept it, every plain scalar is one Psych resolves without an error (no Date, Time or
//! malformed number). Then each entry's bytes, parsed on their own by [`crate::yaml`], give
//! exactly the pair the whole file gives (a value never depends on other entries when no
//! alias is used). A key written twice gets two entries: its value is the whole file's (see
//! [`Found::Duplicated`]), the other entries are unaffected.
//!
//! Anything else returns `None` and the caller parses the whole file, which gives the exact
//! value or error: aliases (they may reach into other entries, and their expansion budget is
//! the whole file's), tags, directives, several documents, explicit `?` keys, keys that are
//! not strings (or `<<`), a byte order mark, carriage returns, tabs outside
//! quoted and block scalars and comments, multi-line plain scalars, keys over 1,000 bytes,
//! nesting over `MAX_NESTING`, and any construct this pass is not sure of. `None` never
//! means "invalid": it means "ask the full parser".

/// Deepest nesting of collections this pass follows (far below the reader's own limit).
pub(crate) const MAX_NESTING: usize = 100;

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::OnceLock;

/// Longest key (from its first byte to its `:`) accepted: libyaml refuses a simple key longer
/// than 1,024 bytes, and this pass does not get near that edge.
const MAX_KEY_LEN: usize = 1000;

/// A top-level entry: where its key's text is (the key is exactly that text) and the bytes
/// from its key line to the next entry's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Entry {
    /// The key's byte range in the file (start, end).
    pub key: (u32, u32),
    /// Where the entry's value starts (a byte offset).
    pub start: u32,
    /// Where the entry's value ends (a byte offset, exclusive).
    pub end: u32,
}

/// The top-level entries of a file, in file order (a key written twice has two entries).
///
/// Finding a key scans the entries until the `LINEAR_FINDS`th find, which builds a hash
/// table of them: a single lookup asks for two or three keys of a file, and scanning 5,000
/// entries for each costs less than hashing them all (and touches no new memory).
#[derive(Debug, Default)]
pub struct Index {
    /// The top-level entries, in the file's order.
    pub entries: Vec<Entry>,
    table: OnceLock<Table>,
    finds: AtomicU32,
}

/// The entries hashed by key.
#[derive(Debug)]
struct Table {
    /// The first entry of each key, with [`DUPLICATED`] set when the key has more entries.
    slots: hashbrown::HashTable<u32>,
    /// Whether some key has more than one entry.
    duplicates: bool,
}

/// Finds before [`Index`] builds its hash table.
const LINEAR_FINDS: u32 = 8;

/// The bit of a table slot saying that its key has more than one entry.
const DUPLICATED: u32 = 1 << 31;

/// The entry a table slot names.
fn entry_of(slot: u32) -> usize {
    (slot & !DUPLICATED) as usize
}

/// Where a key is among a file's entries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Found {
    /// The file has no such top-level key.
    Absent,
    /// In this entry only.
    At(usize),
    /// First in this entry, and again later: the value is the last one's, as in the whole
    /// file's hash.
    Duplicated(usize),
}

fn hash_key(k: &[u8]) -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = rustc_hash::FxBuildHasher.build_hasher();
    h.write(k);
    h.finish()
}

impl Index {
    /// Where `key` is, given the file's bytes.
    pub fn find(&self, bytes: &[u8], key: &str) -> Found {
        if self.table.get().is_none() && self.finds.fetch_add(1, Ordering::Relaxed) < LINEAR_FINDS {
            self.scan(bytes, key)
        } else {
            self.hashed(bytes, key)
        }
    }

    /// [`Self::find`] by scanning the entries.
    pub fn scan(&self, bytes: &[u8], key: &str) -> Found {
        let k = key.as_bytes();
        let mut first = None;
        for (i, e) in self.entries.iter().enumerate() {
            if e.key.1 - e.key.0 == k.len() as u32 && key_of(bytes, e) == k {
                match first {
                    None => first = Some(i),
                    Some(f) => return Found::Duplicated(f),
                }
            }
        }
        first.map_or(Found::Absent, Found::At)
    }

    /// [`Self::find`] in the hash table (built on the first call).
    pub fn hashed(&self, bytes: &[u8], key: &str) -> Found {
        let k = key.as_bytes();
        match self.table(bytes).slots.find(hash_key(k), |&i| {
            key_of(bytes, &self.entries[entry_of(i)]) == k
        }) {
            None => Found::Absent,
            Some(&i) if i & DUPLICATED != 0 => Found::Duplicated(entry_of(i)),
            Some(&i) => Found::At(i as usize),
        }
    }

    /// Whether every key has one entry.
    pub fn distinct(&self, bytes: &[u8]) -> bool {
        !self.table(bytes).duplicates
    }

    fn table(&self, bytes: &[u8]) -> &Table {
        self.table.get_or_init(|| {
            let entries = &self.entries;
            let mut slots = hashbrown::HashTable::with_capacity(entries.len());
            let mut duplicates = false;
            for (i, e) in entries.iter().enumerate() {
                let k = key_of(bytes, e);
                match slots.entry(
                    hash_key(k),
                    |&j: &u32| key_of(bytes, &entries[entry_of(j)]) == k,
                    |&j: &u32| hash_key(key_of(bytes, &entries[entry_of(j)])),
                ) {
                    hashbrown::hash_table::Entry::Occupied(mut o) => {
                        *o.get_mut() |= DUPLICATED;
                        duplicates = true;
                    }
                    hashbrown::hash_table::Entry::Vacant(v) => {
                        v.insert(i as u32);
                    }
                }
            }
            Table { slots, duplicates }
        })
    }

    /// The key of entry `i`.
    pub fn key<'b>(&self, bytes: &'b [u8], i: usize) -> &'b str {
        // The scanner checked the file is UTF-8.
        std::str::from_utf8(key_of(bytes, &self.entries[i])).unwrap_or_default()
    }

    /// The bytes of entry `i`.
    pub fn text<'b>(&self, bytes: &'b [u8], i: usize) -> &'b [u8] {
        let e = &self.entries[i];
        &bytes[e.start as usize..e.end as usize]
    }

    /// Adds an entry whose key is `bytes[key.0..key.1]`.
    pub(crate) fn add(&mut self, key: (usize, usize), start: usize, end: usize) {
        self.entries.push(Entry {
            key: (key.0 as u32, key.1 as u32),
            start: start as u32,
            end: end as u32,
        });
    }

    /// Room for about `n` entries.
    pub(crate) fn reserve(&mut self, n: usize) {
        self.entries.reserve(n);
    }

    /// The number of entries.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether the file has no top-level entry.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

fn key_of<'b>(bytes: &'b [u8], e: &Entry) -> &'b [u8] {
    &bytes[e.key.0 as usize..e.key.1 as usize]
}

/// The entries of a file, or `None` when only the full parse can tell.
pub fn index(bytes: &[u8]) -> Option<Index> {
    index_with(bytes, true)
}

/// [`index`] without `Scanner::simple_key_line`: what its shortcut must agree with.
pub fn index_general(bytes: &[u8]) -> Option<Index> {
    index_with(bytes, false)
}

fn index_with(bytes: &[u8], fast: bool) -> Option<Index> {
    if bytes.len() >= u32::MAX as usize || !chars_ok(bytes) {
        return None;
    }
    let mut index = Index::default();
    // Room for one entry per 32 bytes (a typical common.yaml has one per 47): no copy as the
    // list grows, and the room never used is never touched.
    index.reserve(bytes.len() / 32);
    let mut s = Scanner {
        b: bytes,
        pos: 0,
        stack: Vec::new(),
        pending: None,
        index,
        fast,
    };
    s.document()?;
    let mut index = s.index;
    let n = index.entries.len();
    if n == 0 {
        return None;
    }
    for i in 0..n {
        index.entries[i].end = if i + 1 < n {
            index.entries[i + 1].start
        } else {
            bytes.len() as u32
        };
    }
    Some(index)
}

/// Every character is one libyaml reads without complaint and none is a line break other
/// than `\n` (no `\r`, NEL, LS, PS) or a byte order mark.
fn chars_ok(b: &[u8]) -> bool {
    // Without early exits, so that the compiler can use vector instructions.
    let (mut bad, mut high) = (false, false);
    for chunk in b.chunks(256) {
        for &c in chunk {
            bad |= (c < 0x20 && c != b'\n' && c != b'\t') | (c == 0x7f);
            high |= c >= 0x80;
        }
        if bad {
            return false;
        }
    }
    if !high {
        return true;
    }
    let Ok(s) = std::str::from_utf8(b) else {
        return false;
    };
    s.chars().all(|c| {
        !matches!(
            c,
            '\u{80}'..='\u{9f}' | '\u{2028}' | '\u{2029}' | '\u{feff}' | '\u{fffe}' | '\u{ffff}'
        )
    })
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Kind {
    Map,
    Seq,
    /// A sequence at its parent mapping's column (`key:\n- a`).
    IndentlessSeq,
}

#[derive(Clone, Copy, Debug)]
struct Frame {
    col: usize,
    kind: Kind,
}

/// A `key:` or `-` with nothing after it on its line: a nested node may follow.
#[derive(Clone, Copy, Debug)]
struct Pending {
    col: usize,
    in_map: bool,
}

/// Where a node written on the same line as its `key:` or `-` stands.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Ctx {
    MapValue,
    SeqItem,
}

/// How a plain scalar on one line ended.
enum PlainEnd {
    /// At the end of the line or at a comment.
    Line,
    /// At `:` followed by a blank: it was a key; the position after the `:`.
    Colon(usize),
}

type R<T> = Option<T>;

struct Scanner<'a> {
    b: &'a [u8],
    pos: usize,
    stack: Vec<Frame>,
    pending: Option<Pending>,
    index: Index,
    /// Whether [`Scanner::simple_key_line`] may take the common lines (off only to test it
    /// against the general scan).
    fast: bool,
}

/// The bytes a plain scalar in block context must look at; others are its text.
static PLAIN_STOP: [bool; 256] = stop_table(b" \t\n:");
/// The same in a flow collection.
static FLOW_STOP: [bool; 256] = stop_table(b" \t\n:,[]{}");

/// The bytes of the words [`Scanner::simple_key_line`] takes: letters, digits, `_ - . /`.
static WORD: [bool; 256] =
    stop_table(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-./");

/// The end of the run of word bytes (see [`WORD`]), and of `:` too when `colon`, that starts
/// at `from`. Eight bytes at a time: a data file is mostly such runs.
fn word_run(b: &[u8], from: usize, colon: bool) -> usize {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    // Lanes of `x` (each below 0x80) from `lo` to `hi` (below 0x7b): their high bit set.
    // Neither subtraction borrows across lanes.
    fn within(x: u64, lo: u8, hi: u8) -> u64 {
        ((x | HIGH) - ONES * u64::from(lo)) & (ONES * u64::from(0x80 + hi) - x) & HIGH
    }
    // `-./0-9` and `:` are one range, 0x2d to 0x3a.
    let digits_end = if colon { b':' } else { b'9' };
    let mut i = from;
    while let Some(chunk) = b.get(i..i + 8) {
        let x = u64::from_le_bytes(chunk.try_into().unwrap_or([0; 8]));
        let ascii = !x & HIGH;
        let low = x & !HIGH;
        let word = within(low, b'-', digits_end)
            | within(low | (ONES * 0x20), b'a', b'z')
            | within(low, b'_', b'_');
        let stop = !(word & ascii) & HIGH;
        if stop != 0 {
            return i + (stop.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    while b
        .get(i)
        .is_some_and(|&c| WORD[usize::from(c)] || (colon && c == b':'))
    {
        i += 1;
    }
    i
}

const fn stop_table(bytes: &[u8]) -> [bool; 256] {
    let mut t = [false; 256];
    let mut i = 0;
    while i < bytes.len() {
        t[bytes[i] as usize] = true;
        i += 1;
    }
    t
}

fn blankz(b: &[u8], i: usize) -> bool {
    matches!(b.get(i), None | Some(b' ' | b'\n' | b'\t'))
}

impl<'a> Scanner<'a> {
    fn at(&self, i: usize) -> Option<u8> {
        self.b.get(i).copied()
    }

    /// A line starting with `---` or `...` and a blank: a document marker.
    fn doc_marker(&self, i: usize) -> bool {
        let b = self.b;
        i + 3 <= b.len() && (&b[i..i + 3] == b"---" || &b[i..i + 3] == b"...") && blankz(b, i + 3)
    }

    /// Skips to the end of the line (a comment's text) and past its `\n`.
    fn skip_line(&mut self, mut i: usize) {
        i = match memchr::memchr(b'\n', &self.b[i..]) {
            Some(n) => i + n + 1,
            None => self.b.len(),
        };
        self.pos = i;
    }

    /// After a node on a line: spaces, an optional comment, the end of the line.
    fn trailer(&mut self, mut i: usize) -> R<()> {
        let start = i;
        while self.at(i) == Some(b' ') {
            i += 1;
        }
        match self.at(i) {
            None => {
                self.pos = i;
                Some(())
            }
            Some(b'\n') => {
                self.pos = i + 1;
                Some(())
            }
            Some(b'#') if i > start => {
                self.skip_line(i);
                Some(())
            }
            _ => None,
        }
    }

    /// From the start of a line at `self.pos`: past its indentation to its first character
    /// (`Some`), or past the whole line when it is blank or a comment, or to the end of the
    /// file (`None`, with `pos` moved).
    fn content_start(&mut self) -> Option<usize> {
        let mut i = self.pos;
        while self.at(i) == Some(b' ') {
            i += 1;
        }
        match self.at(i) {
            None => self.pos = i,
            Some(b'\n') => self.pos = i + 1,
            Some(b'#') => self.skip_line(i),
            _ => return Some(i),
        }
        None
    }

    fn document(&mut self) -> R<()> {
        // Before the mapping: blank and comment lines and one `---` alone on its line.
        let mut started = false;
        while self.pos < self.b.len() {
            let line = self.pos;
            let Some(i) = self.content_start() else {
                continue;
            };
            if i == line && !started && self.doc_marker(i) && self.b[i] == b'-' {
                started = true;
                self.trailer(i + 3)?;
                continue;
            }
            return self.lines();
        }
        Some(())
    }

    /// The block structure, line by line.
    fn lines(&mut self) -> R<()> {
        let len = self.b.len();
        while self.pos < len {
            let line = self.pos;
            let Some(i) = self.content_start() else {
                continue;
            };
            match self.b[i] {
                b'\t' => return None,
                b'%' if i == line => return None,
                _ => {}
            }
            if i == line && self.doc_marker(i) {
                return None;
            }
            self.content_line(line, i - line, i)?;
        }
        Some(())
    }

    fn dash_line(&self, i: usize) -> bool {
        self.b[i] == b'-' && blankz(self.b, i + 1)
    }

    fn content_line(&mut self, line: usize, col: usize, i: usize) -> R<()> {
        if self.stack.is_empty() {
            // The first node: the top-level mapping, at column 0.
            if col != 0 || self.dash_line(i) {
                return None;
            }
            self.stack.push(Frame {
                col: 0,
                kind: Kind::Map,
            });
            return self.key_line(line, i);
        }
        if let Some(p) = self.pending.take() {
            if col > p.col {
                self.push(
                    col,
                    if self.dash_line(i) {
                        Kind::Seq
                    } else {
                        Kind::Map
                    },
                )?;
            } else if col == p.col && p.in_map && self.dash_line(i) {
                self.push(col, Kind::IndentlessSeq)?;
            }
        }
        while self.stack.last().is_some_and(|f| f.col > col) {
            self.stack.pop();
        }
        let dash = self.dash_line(i);
        if let Some(f) = self.stack.last() {
            if f.kind == Kind::IndentlessSeq && f.col == col && !dash {
                self.stack.pop();
            }
        }
        let top = *self.stack.last()?;
        if top.col != col {
            return None;
        }
        match (top.kind, dash) {
            (Kind::Map, false) => self.key_line(line, i),
            (Kind::Seq | Kind::IndentlessSeq, true) => self.node_inline(i + 1, Ctx::SeqItem),
            _ => None,
        }
    }

    fn push(&mut self, col: usize, kind: Kind) -> R<()> {
        if self.stack.len() >= MAX_NESTING {
            return None;
        }
        self.stack.push(Frame { col, kind });
        Some(())
    }

    /// `KEY: ...` at the mapping's column.
    fn key_line(&mut self, line: usize, i: usize) -> R<()> {
        if self.fast {
            if let Some(done) = self.simple_key_line(line, i) {
                return done;
            }
        }
        let top_level = self.stack.len() == 1;
        let (key, after) = match self.b[i] {
            b'\'' | b'"' => {
                let end = self.quoted(i, false)?;
                let mut j = end;
                while self.at(j) == Some(b' ') {
                    j += 1;
                }
                if self.at(j) != Some(b':') || !blankz(self.b, j + 1) || j - i > MAX_KEY_LEN {
                    return None;
                }
                (KeyText::Quoted(i, end), j + 1)
            }
            c => {
                if !self.plain_start(i, c, false) {
                    return None;
                }
                let (text_end, how) = self.plain(i, false)?;
                let PlainEnd::Colon(after) = how else {
                    return None;
                };
                if after - i > MAX_KEY_LEN + 1 {
                    return None;
                }
                (KeyText::Plain(i, text_end), after)
            }
        };
        if top_level {
            self.add_entry(line, key)?;
        } else if let KeyText::Plain(s, e) = key {
            self.check_plain(s, e)?;
        }
        self.node_inline(after, Ctx::MapValue)
    }

    /// The lines most data files are made of, `key: value`, `key: [a, b]` and `key:`, where
    /// the key and every scalar are words (letters, digits, `_ - . /`; `:` inside the key and
    /// the value, single spaces inside the value): exactly what [`Self::key_line`] does with
    /// them, in one pass over their bytes. `None` when the line is not one of these; then
    /// nothing has changed and the general scan reads it.
    fn simple_key_line(&mut self, line: usize, i: usize) -> Option<R<()>> {
        let b = self.b;
        let word = |j: usize| b.get(j).is_some_and(|&c| WORD[usize::from(c)]);
        let word_start = |j: usize| {
            b.get(j)
                .is_some_and(|&c| c.is_ascii_alphanumeric() || c == b'_' || c == b'/')
        };
        if !b[i].is_ascii_alphabetic() {
            return None;
        }
        // The key: words joined by `:`s that a blank does not follow; then `:` and a blank.
        // Inside the run every `:` is followed by a word byte or another `:`.
        let end = word_run(b, i, true);
        if b[end - 1] != b':' || !matches!(b.get(end), None | Some(b' ' | b'\n')) {
            return None;
        }
        let colon = end - 1;
        if colon + 1 - i > MAX_KEY_LEN + 1 {
            return None;
        }
        let mut k = colon + 1;
        while b.get(k) == Some(&b' ') {
            k += 1;
        }
        // The value, checked before anything changes.
        enum Rest {
            Empty,
            Word(usize),
            Flow(usize),
        }
        let value = match b.get(k) {
            None | Some(b'\n') => Rest::Empty,
            Some(b'[') => {
                if self.stack.len() + 1 > MAX_NESTING {
                    return None;
                }
                // Words (no `:`, no space), each followed by `, ` or the closing `]`.
                let mut m = k + 1;
                if b.get(m) != Some(&b']') {
                    loop {
                        if !word_start(m) {
                            return None;
                        }
                        m = word_run(b, m, false);
                        match b.get(m) {
                            Some(b']') => break,
                            Some(b',') if b.get(m + 1) == Some(&b' ') => m += 2,
                            _ => return None,
                        }
                    }
                }
                Rest::Flow(m + 1)
            }
            Some(_) if word_start(k) => {
                // Words joined by single spaces or `:`s that a blank does not follow (inside
                // a run of words and `:`s, every `:` is followed by one of them).
                let mut m = k;
                loop {
                    m = word_run(b, m, true);
                    if b[m - 1] == b':' {
                        return None;
                    }
                    match b.get(m) {
                        None | Some(b'\n') => break,
                        Some(b' ') if word(m + 1) => m += 1,
                        _ => return None,
                    }
                }
                Rest::Word(m)
            }
            Some(_) => return None,
        };
        if let Rest::Flow(end) = value {
            if !matches!(b.get(end), None | Some(b'\n')) {
                return None;
            }
        }
        // What key_line, node_inline and flow_collection do with such a line.
        let done = (|| {
            if self.stack.len() == 1 {
                self.add_entry(line, KeyText::Plain(i, colon))?;
            } else {
                self.check_plain(i, colon)?;
            }
            let end = match value {
                Rest::Empty => {
                    self.pos = if k < b.len() { k + 1 } else { k };
                    return self.set_pending(Ctx::MapValue);
                }
                Rest::Word(end) => {
                    self.check_plain(k, end)?;
                    end
                }
                Rest::Flow(end) => {
                    let mut m = k + 1;
                    while m + 1 < end {
                        let s = m;
                        while b[m] != b',' && b[m] != b']' {
                            m += 1;
                        }
                        self.check_plain(s, m)?;
                        m += 2;
                    }
                    end
                }
            };
            self.pos = if end < b.len() { end + 1 } else { end };
            Some(())
        })();
        Some(done)
    }

    /// A new top-level entry, if its key is a plain string key not seen before.
    fn add_entry(&mut self, line: usize, key: KeyText) -> R<()> {
        let (s, e) = match key {
            KeyText::Plain(s, e) => {
                let t = &self.b[s..e];
                // More than five ASCII characters from a letter on: Psych's "word" rule keeps
                // it a string (the usual `profile::ntp::servers`).
                let word = t.len() > 5 && t[0].is_ascii_alphabetic() && t.is_ascii();
                if !word {
                    let t = std::str::from_utf8(t).ok()?;
                    if t == "<<" || crate::yaml::scan_plain_scalar(t) != crate::yaml::Scalar::Str {
                        return None;
                    }
                }
                (s, e)
            }
            KeyText::Quoted(s, e) => {
                // The text between the quotes, when it is the key itself.
                let inner = &self.b[s + 1..e - 1];
                let escaped = if self.b[s] == b'"' { b'\\' } else { b'\'' };
                if inner.contains(&escaped) {
                    return None;
                }
                (s + 1, e - 1)
            }
        };
        self.index.add((s, e), line, 0);
        Some(())
    }

    /// Psych resolves a plain scalar without raising (not a Date, a Time or a bad number).
    fn check_plain(&self, s: usize, e: usize) -> R<()> {
        let t = &self.b[s..e];
        if !matches!(t.first(), Some(b'0'..=b'9' | b'+' | b'-' | b'.' | b':')) {
            return Some(());
        }
        // Plain decimal integers: the common case, never an error.
        if t.len() <= 18 && t[0] != b'0' && t.iter().all(u8::is_ascii_digit) {
            return Some(());
        }
        let t = std::str::from_utf8(t).ok()?;
        match crate::yaml::scan_plain_scalar(t) {
            crate::yaml::Scalar::Date
            | crate::yaml::Scalar::Time
            | crate::yaml::Scalar::Invalid(_) => None,
            _ => Some(()),
        }
    }

    /// Can a plain scalar start with `c` at `i` (libyaml's rule)?
    fn plain_start(&self, i: usize, c: u8, flow: bool) -> bool {
        match c {
            b'-' => {
                // `-x`; `- ` is a sequence entry.
                matches!(self.at(i + 1), Some(n) if n.is_ascii_alphanumeric() || n == b'.')
            }
            b'?' | b':' if !flow => !blankz(self.b, i + 1) && self.at(i + 1) != Some(b'\t'),
            b'?' | b':' | b',' | b'[' | b']' | b'{' | b'}' | b'#' | b'&' | b'*' | b'!' | b'|'
            | b'>' | b'\'' | b'"' | b'%' | b'@' | b'`' | b' ' | b'\t' | b'\n' => false,
            _ => true,
        }
    }

    /// A plain scalar on one line in block context, from its first character at `i`: where
    /// its text ends and how it ended. A tab anywhere is not followed.
    fn plain(&self, i: usize, _flow: bool) -> R<(usize, PlainEnd)> {
        let b = self.b;
        let mut j = i;
        loop {
            while j < b.len() && !PLAIN_STOP[usize::from(b[j])] {
                j += 1;
            }
            match b.get(j) {
                None | Some(b'\n') => return Some((j, PlainEnd::Line)),
                Some(b'\t') => return None,
                Some(b' ') => {
                    let end = j;
                    while b.get(j) == Some(&b' ') {
                        j += 1;
                    }
                    match b.get(j) {
                        None | Some(b'\n' | b'#') => return Some((end, PlainEnd::Line)),
                        Some(b'\t') => return None,
                        Some(b':') if blankz(b, j + 1) => {
                            // `key : value`
                            if b.get(j + 1) == Some(&b'\t') {
                                return None;
                            }
                            return Some((end, PlainEnd::Colon(j + 1)));
                        }
                        _ => {}
                    }
                }
                Some(b':') if blankz(b, j + 1) => {
                    if b.get(j + 1) == Some(&b'\t') {
                        return None;
                    }
                    return Some((j, PlainEnd::Colon(j + 1)));
                }
                _ => j += 1,
            }
        }
    }

    /// A node after `key:` or `-` on the same line, from `i` (just after the indicator).
    fn node_inline(&mut self, mut i: usize, ctx: Ctx) -> R<()> {
        let mut anchored = false;
        loop {
            while self.at(i) == Some(b' ') {
                i += 1;
            }
            let Some(c) = self.at(i) else {
                self.pos = i;
                return self.set_pending(ctx);
            };
            match c {
                b'\n' => {
                    self.pos = i + 1;
                    return self.set_pending(ctx);
                }
                b'#' => {
                    self.skip_line(i);
                    return self.set_pending(ctx);
                }
                b'&' if !anchored => {
                    i = self.anchor(i)?;
                    anchored = true;
                    if !matches!(self.at(i), None | Some(b' ' | b'\n')) {
                        return None;
                    }
                }
                b'|' | b'>' => return self.block_scalar(i),
                b'[' | b'{' => {
                    let end = self.flow_collection(i, 1)?;
                    return self.trailer(end);
                }
                b'\'' | b'"' => {
                    let end = self.quoted(i, true)?;
                    let mut j = end;
                    while self.at(j) == Some(b' ') {
                        j += 1;
                    }
                    if self.at(j) == Some(b':') && blankz(self.b, j + 1) {
                        // `- "key": value`: a mapping in the sequence entry.
                        let single_line = !self.b[i..end].contains(&b'\n');
                        if ctx != Ctx::SeqItem || anchored || !single_line || j - i > MAX_KEY_LEN {
                            return None;
                        }
                        if self.at(j + 1) == Some(b'\t') {
                            return None;
                        }
                        self.compact_map(i)?;
                        i = j + 1;
                        return self.node_inline(i, Ctx::MapValue);
                    }
                    return self.trailer(end);
                }
                c if self.plain_start(i, c, false) => {
                    let (end, how) = self.plain(i, false)?;
                    match how {
                        PlainEnd::Line => {
                            self.check_plain(i, end)?;
                            return self.trailer(end);
                        }
                        PlainEnd::Colon(after) => {
                            if ctx != Ctx::SeqItem || anchored || after - i > MAX_KEY_LEN + 1 {
                                return None;
                            }
                            self.check_plain(i, end)?;
                            self.compact_map(i)?;
                            return self.node_inline(after, Ctx::MapValue);
                        }
                    }
                }
                _ => return None,
            }
        }
    }

    /// A block mapping that starts inside a sequence entry, at the column of byte `i`.
    fn compact_map(&mut self, i: usize) -> R<()> {
        let line = self.b[..i]
            .iter()
            .rposition(|&c| c == b'\n')
            .map_or(0, |p| p + 1);
        self.push(i - line, Kind::Map)
    }

    fn set_pending(&mut self, ctx: Ctx) -> R<()> {
        let top = self.stack.last()?;
        self.pending = Some(Pending {
            col: top.col,
            in_map: ctx == Ctx::MapValue && top.kind == Kind::Map,
        });
        Some(())
    }

    /// `&name`, followed by a blank; the position after the name.
    fn anchor(&self, i: usize) -> R<usize> {
        let mut j = i + 1;
        while self
            .at(j)
            .is_some_and(|c| c.is_ascii_alphanumeric() || c == b'-' || c == b'_')
        {
            j += 1;
        }
        (j > i + 1 && matches!(self.at(j), None | Some(b' ' | b'\n'))).then_some(j)
    }

    /// A quoted scalar from its opening quote at `i`: the position after the closing quote.
    /// Without `multi_line`, one that does not close on its line is not followed.
    fn quoted(&self, i: usize, multi_line: bool) -> R<usize> {
        let b = self.b;
        let q = b[i];
        let mut j = i + 1;
        loop {
            let n = if q == b'\'' {
                memchr::memchr2(b'\'', b'\n', &b[j..])?
            } else {
                memchr::memchr3(b'"', b'\\', b'\n', &b[j..])?
            };
            j += n;
            match b[j] {
                b'\n' => {
                    if !multi_line {
                        return None;
                    }
                    j += 1;
                    if self.doc_marker(j) {
                        return None;
                    }
                }
                b'\\' => {
                    let len = match b.get(j + 1)? {
                        b'0' | b'a' | b'b' | b't' | b'\t' | b'n' | b'v' | b'f' | b'r' | b'e'
                        | b' ' | b'"' | b'/' | b'\\' | b'N' | b'_' | b'L' | b'P' => 0,
                        b'x' => 2,
                        b'u' => 4,
                        b'U' => 8,
                        b'\n' if multi_line => {
                            j += 2;
                            if self.doc_marker(j) {
                                return None;
                            }
                            continue;
                        }
                        _ => return None,
                    };
                    let hex = b.get(j + 2..j + 2 + len)?;
                    let mut v: u32 = 0;
                    for &h in hex {
                        v = (v << 4) | (h as char).to_digit(16)?;
                    }
                    if (0xd800..=0xdfff).contains(&v) || v > 0x10ffff {
                        return None;
                    }
                    j += 2 + len;
                }
                _ if q == b'\'' && b.get(j + 1) == Some(&b'\'') => j += 2,
                _ => return Some(j + 1),
            }
        }
    }

    /// `|` or `>` at `i`, its header and its lines; leaves `pos` at the start of the first
    /// line after it.
    fn block_scalar(&mut self, i: usize) -> R<()> {
        let b = self.b;
        let mut j = i + 1;
        let mut increment = 0usize;
        match self.at(j) {
            Some(b'+' | b'-') => {
                j += 1;
                if let Some(d @ b'1'..=b'9') = self.at(j) {
                    increment = usize::from(d - b'0');
                    j += 1;
                }
            }
            Some(d @ b'1'..=b'9') => {
                increment = usize::from(d - b'0');
                j += 1;
                if matches!(self.at(j), Some(b'+' | b'-')) {
                    j += 1;
                }
            }
            _ => {}
        }
        // Spaces, a comment after a space, the end of the line.
        self.trailer(j)?;
        // The header's line ends the file without a line break: nothing follows.
        if self.pos == b.len() && b.last() != Some(&b'\n') {
            return Some(());
        }
        let parent = self.stack.last()?.col;
        // libyaml's yaml_parser_scan_block_scalar_breaks, then one content line at a time.
        let mut line = self.pos;
        let indent = if increment > 0 {
            parent + increment
        } else {
            let mut max = 0;
            loop {
                let mut k = line;
                while self.at(k) == Some(b' ') {
                    k += 1;
                }
                max = max.max(k - line);
                match self.at(k) {
                    Some(b'\t') => return None,
                    Some(b'\n') => line = k + 1,
                    _ => break,
                }
            }
            let indent = max.max(parent + 1);
            // The first line with text, if indented less than a leading blank line, would
            // end the scalar and be read as something else.
            let mut k = line;
            while self.at(k) == Some(b' ') {
                k += 1;
            }
            if k < b.len() && k - line < indent && k - line > parent {
                return None;
            }
            indent
        };
        loop {
            // One line: its indentation, then content or the end of the scalar.
            let mut k = line;
            while k - line < indent && self.at(k) == Some(b' ') {
                k += 1;
            }
            match self.at(k) {
                None => {
                    self.pos = b.len();
                    return Some(());
                }
                Some(b'\t') if k - line < indent => return None,
                Some(b'\n') => line = k + 1,
                _ if k - line < indent => {
                    // Less indented text: the scalar has ended before this line.
                    self.pos = line;
                    return Some(());
                }
                _ => {
                    line = match memchr::memchr(b'\n', &b[k..]) {
                        Some(n) => k + n + 1,
                        None => {
                            self.pos = b.len();
                            return Some(());
                        }
                    };
                }
            }
        }
    }

    /// Whitespace, line breaks and comments inside a flow collection, from `i`.
    fn flow_space(&self, mut i: usize) -> R<usize> {
        let b = self.b;
        let mut after_blank = i > 0 && matches!(b[i - 1], b' ' | b'\t' | b'\n');
        loop {
            match b.get(i) {
                Some(b' ' | b'\t') => {
                    i += 1;
                    after_blank = true;
                }
                Some(b'\n') => {
                    i += 1;
                    // A new line: not a document marker nor a directive.
                    if self.doc_marker(i) || b.get(i) == Some(&b'%') {
                        return None;
                    }
                    after_blank = true;
                }
                Some(b'#') if after_blank => {
                    i += memchr::memchr(b'\n', &b[i..])?;
                }
                _ => return Some(i),
            }
        }
    }

    /// A flow collection from its bracket at `i`: the position after its closing bracket.
    fn flow_collection(&self, i: usize, depth: usize) -> R<usize> {
        if depth > MAX_NESTING || self.stack.len() + depth > MAX_NESTING {
            return None;
        }
        let b = self.b;
        let map = b[i] == b'{';
        let close = if map { b'}' } else { b']' };
        let mut j = self.flow_space(i + 1)?;
        if b.get(j) == Some(&close) {
            return Some(j + 1);
        }
        loop {
            if map {
                // key: value, with the key on one line.
                let key_end = match b.get(j)? {
                    b'\'' | b'"' => self.quoted(j, false)?,
                    &c if self.plain_start(j, c, true) => {
                        let (end, next) = self.flow_plain(j)?;
                        if b.get(next) != Some(&b':') {
                            return None;
                        }
                        self.check_plain(j, end)?;
                        end
                    }
                    _ => return None,
                };
                let mut k = key_end;
                while matches!(b.get(k), Some(b' ' | b'\t')) {
                    k += 1;
                }
                if b.get(k) != Some(&b':') || k - j > MAX_KEY_LEN {
                    return None;
                }
                j = self.flow_space(k + 1)?;
                if matches!(b.get(j), None | Some(b',' | b'}' | b']' | b':')) {
                    return None;
                }
                j = self.flow_node(j, depth)?;
            } else {
                j = self.flow_node(j, depth)?;
            }
            j = self.flow_space(j)?;
            match b.get(j)? {
                b',' => {
                    j = self.flow_space(j + 1)?;
                    if matches!(b.get(j), Some(b',' | b']' | b'}')) {
                        return None;
                    }
                }
                &c if c == close => return Some(j + 1),
                _ => return None,
            }
        }
    }

    /// A node inside a flow collection: the position after it.
    fn flow_node(&self, i: usize, depth: usize) -> R<usize> {
        let b = self.b;
        match *b.get(i)? {
            b'[' | b'{' => self.flow_collection(i, depth + 1),
            b'\'' | b'"' => self.quoted(i, true),
            c if self.plain_start(i, c, true) => {
                let (end, _) = self.flow_plain(i)?;
                self.check_plain(i, end)?;
                Some(end)
            }
            _ => None,
        }
    }

    /// A plain scalar in a flow collection: where its text ends and where scanning resumes.
    /// One that continues on the next line is not followed.
    fn flow_plain(&self, i: usize) -> R<(usize, usize)> {
        let b = self.b;
        let mut j = i;
        loop {
            while j < b.len() && !FLOW_STOP[usize::from(b[j])] {
                j += 1;
            }
            match b.get(j) {
                None => return None,
                Some(b',' | b'[' | b']' | b'{' | b'}') => return Some((j, j)),
                Some(b':') => match b.get(j + 1) {
                    None | Some(b' ' | b'\t' | b'\n') => return Some((j, j)),
                    Some(b',' | b'?' | b'[' | b']' | b'{' | b'}') => return None,
                    _ => j += 1,
                },
                Some(b' ' | b'\t' | b'\n') => {
                    let end = j;
                    let mut k = j;
                    let mut newline = false;
                    while let Some(&c) = b.get(k) {
                        match c {
                            // libyaml refuses a tab in the indentation of a continuation.
                            b'\t' if newline => return None,
                            b' ' | b'\t' => k += 1,
                            b'\n' => {
                                newline = true;
                                k += 1;
                            }
                            _ => break,
                        }
                    }
                    match b.get(k) {
                        None => return None,
                        Some(b',' | b'[' | b']' | b'{' | b'}' | b'#') => return Some((end, k)),
                        Some(b':') if blankz(b, k + 1) => return Some((end, k)),
                        Some(b':') => {
                            if matches!(b.get(k + 1), Some(b',' | b'?' | b'[' | b']' | b'{' | b'}'))
                            {
                                return None;
                            }
                            if newline {
                                return None;
                            }
                            j = k;
                        }
                        Some(_) if newline => return None,
                        Some(_) => j = k,
                    }
                }
                Some(_) => j += 1,
            }
        }
    }
}

#[derive(Clone, Copy)]
enum KeyText {
    Plain(usize, usize),
    /// From the opening quote to just after the closing one.
    Quoted(usize, usize),
}

#[cfg(test)]
mod tests {
    use super::{index, Found, Index, LINEAR_FINDS};

    fn keys(text: &str) -> Option<Vec<String>> {
        let b = text.as_bytes();
        let ix = index(b)?;
        Some((0..ix.len()).map(|i| ix.key(b, i).to_string()).collect())
    }

    #[test]
    fn entries_and_their_bytes() {
        let text = "---\n# c\na: 1\nb:\n  c: [x, {y: z}]\n  d: |\n    text\n\n'e': \"f\"\n";
        let ix = index(text.as_bytes()).unwrap();
        let b = text.as_bytes();
        let got: Vec<(&str, &str)> = (0..ix.len())
            .map(|i| (ix.key(b, i), std::str::from_utf8(ix.text(b, i)).unwrap()))
            .collect();
        assert_eq!(
            got,
            [
                ("a", "a: 1\n"),
                ("b", "b:\n  c: [x, {y: z}]\n  d: |\n    text\n\n"),
                ("e", "'e': \"f\"\n"),
            ]
        );
        for _ in 0..2 * LINEAR_FINDS {
            assert_eq!(ix.find(b, "b"), Found::At(1));
            assert_eq!(ix.find(b, "x"), Found::Absent);
        }
        assert!(
            ix.table.get().is_some(),
            "the table is built after a few finds"
        );
        assert!(ix.distinct(b));
    }

    #[test]
    fn word_runs_end_at_the_first_other_byte() {
        use super::{word_run, WORD};
        let scalar = |b: &[u8], colon: bool| {
            b.iter()
                .position(|&c| !(WORD[usize::from(c)] || (colon && c == b':')))
                .unwrap_or(b.len())
        };
        // Every byte value at every place of runs shorter and longer than a word of 8.
        for len in [0, 1, 7, 8, 9, 15, 16, 17, 30] {
            for at in 0..=len {
                for c in 0..=255u8 {
                    let mut b = b"aZ09_-./:mq".repeat(3)[..len].to_vec();
                    if at < len {
                        b[at] = c;
                    }
                    for colon in [false, true] {
                        assert_eq!(word_run(&b, 0, colon), scalar(&b, colon), "{b:?} {colon}");
                        if len > 3 {
                            assert_eq!(word_run(&b, 3, colon), 3 + scalar(&b[3..], colon));
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn keys_written_twice() {
        let text = "a: 1
b: 2
'a': 3
c: 4
b: 5
b: 6
";
        let b = text.as_bytes();
        let ix = index(b).unwrap();
        assert_eq!(ix.len(), 6);
        for find in [Index::scan, Index::hashed] {
            assert_eq!(find(&ix, b, "a"), Found::Duplicated(0));
            assert_eq!(find(&ix, b, "b"), Found::Duplicated(1));
            assert_eq!(find(&ix, b, "c"), Found::At(3));
            assert_eq!(find(&ix, b, "d"), Found::Absent);
        }
        assert!(!ix.distinct(b));
    }

    #[test]
    fn what_the_pass_follows() {
        for text in [
            "a: b",
            "a:\n- 1\n- k: v\n  l: w\nb: 2\n",
            "a: &x\n  b: c\n",
            "a: \"multi\n  line\"\nb: 'it''s'\n",
            "a: [b,\n  c] # c\nb: {x: 1, 'y': [2]}\n",
            "a: >-\n  folded\n\n  more\nb: |2\n    kept\n",
            "a: |\nb: 1\n",
            "a: :sym\nb: 0x1F\nc: 1_000\nd: .inf\n",
            "a: b#c\nk#h: v\n\"q\": 1\n",
            "é: ü\n",
            "a:\n  - - x\n", /* nested sequences are not followed */
        ] {
            let nested_seq = text.contains("- - ");
            assert_eq!(index(text.as_bytes()).is_some(), !nested_seq, "{text:?}");
            assert!(
                crate::yaml::load_document(text.as_bytes()).is_ok(),
                "{text:?}"
            );
        }
    }

    #[test]
    fn what_the_pass_leaves_to_the_full_parse() {
        for text in [
            "",
            "# only a comment\n",
            "- a\n",
            "scalar\n",
            "<<: {b: 1}\n",
            "1: x\n",
            "yes: x\n",
            "a: *x\n",
            "a: !!str 1\n",
            "%YAML 1.1\n---\na: 1\n",
            "a: 1\n---\nb: 2\n",
            "a: 1\n...\n",
            "\u{feff}a: 1\n",
            "a: 1\r\n",
            "a:\tb\n",
            "a: b\n  c\n",
            "a: 2024-01-01\n",
            "a: [2001-02-03]\n",
            "b: 0x_\n",
            "a: 'x\n---\n'\n",
            "a: \"\\q\"\n",
            "a: [b, ]\n",
            "a: {b}\n",
            "a: [b: c]\n",
            "? a\n: b\n",
            "a: b: c\n",
            "a: \"b\" c\n",
            "a: %x\n",
            "a:\n  b: 1\n   c: 2\n",
            "a: |\n    x\n  y\n",
            "a: |\n\t x\n",
            "  a: 1\n",
        ] {
            assert!(index(text.as_bytes()).is_none(), "{text:?}");
        }
        let long_key = format!("{}: 1\n", "k".repeat(1001));
        assert!(index(long_key.as_bytes()).is_none());
        let deep = format!("a: {}{}\n", "[".repeat(200), "]".repeat(200));
        assert!(index(deep.as_bytes()).is_none());
    }

    #[test]
    fn keys_are_the_strings_psych_makes() {
        assert_eq!(
            keys("'a b': 1\n\"c\": 2\nd e: 3\nprofile::x: 4\n").unwrap(),
            ["a b", "c", "d e", "profile::x"]
        );
    }
}
