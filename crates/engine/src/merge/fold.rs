//! The `N >= 2` branch of the merge driver (see the contract in [`super`]) in linear time.
//!
//! Folding pairwise, `memo = merge(memo, v)`, walks the whole accumulated memo at every
//! level: `unique` re-flattens and re-deduplicates it, and `deep_merge!(memo, v)` moves every
//! key of the memo into `v` and merges each one the new level lacks into itself. Over 20,000
//! levels that is quadratic (seconds, then minutes). [`Fold`] gives the same result as the
//! pairwise fold, step for step, with work proportional to what each level brings:
//!
//! * `unique`: the memo stays deduplicated, with an index of what it holds.
//! * `deep` and `unconstrained_deep` with options under which merging a value into itself is
//!   idempotent and no merge can fail (no knockout, no array options, no sorting): hashes and
//!   arrays are kept lazily. A key's place in the result is a rank (each level's keys go in
//!   front of what is already there, as `deep_merge!` leaves them in the destination), and the
//!   self-merges a level applies to every key it lacks are counted by a clock instead of done:
//!   a value owes one self-merge when it was last set before the clock's last tick.
//! * `hash`: key → (value, rank), the first value of a key kept.
//! * Anything else (`reverse_deep`, other deep options) folds pairwise.
//!
//! `tests::fold_matches_pairwise` and the property tests in tests/merge_laws.rs check the
//! equivalence.

use super::{
    checks, deep_hash, self_merged_plain, uniq, unique_convert, DeepOptions, MergeStrategy, R,
};
use hiera_value::value::{Map, Value};
use rustc_hash::FxHashMap;

/// Accumulates the values found for a key, in priority order, as `memo = merge(memo, v)`.
pub(crate) struct Fold<'a> {
    strategy: &'a MergeStrategy,
    state: State,
    /// Levels folded pairwise before a deep fold turns lazy.
    pairwise: usize,
}

/// Levels folded pairwise before a lazy deep fold takes over: a lazy hash costs more memory
/// per entry than a plain one, which pays off only when many levels merge into it.
const PAIRWISE_LEVELS: usize = 16;

enum State {
    Empty,
    Pairwise(Value),
    /// A deep fold that turns lazy after [`PAIRWISE_LEVELS`] levels.
    DeepPairwise(Value, usize),
    /// The first value, converted but not yet deduplicated (its raw form is what the first
    /// merge type-checks).
    UniqueFirst(Vec<Value>),
    Unique(UniqueSet),
    /// `hash`: the first value, not yet type-checked by a merge.
    HashFirst(Value),
    /// `hash` after a merge: key → (value, rank); the first value given for a key wins, the
    /// last level that has it places it.
    Hash(FxHashMap<Dk, (Value, i64)>, i64),
    Deep(Lz, bool),
}

impl MergeStrategy {
    /// A fold of this strategy over the values found at two or more variants.
    pub(crate) fn fold(&self) -> Fold<'_> {
        Fold {
            strategy: self,
            state: State::Empty,
            pairwise: PAIRWISE_LEVELS,
        }
    }

    /// Options under which the lazy deep fold gives the pairwise result.
    fn lazy_deep(&self) -> Option<&DeepOptions> {
        match self {
            MergeStrategy::Deep(o) | MergeStrategy::UnconstrainedDeep(o)
                if o.plain() && !o.sort_merged_arrays =>
            {
                Some(o)
            }
            _ => None,
        }
    }
}

impl Fold<'_> {
    /// The next found value (lower priority than all before it).
    pub(crate) fn push(&mut self, v: Value) -> R<()> {
        let s = self.strategy;
        self.state = match std::mem::replace(&mut self.state, State::Empty) {
            State::Empty => match s {
                MergeStrategy::Unique => match unique_convert(v) {
                    Value::Array(a) => State::UniqueFirst(a),
                    other => State::Pairwise(other),
                },
                MergeStrategy::Hash => State::HashFirst(v),
                _ if s.lazy_deep().is_some() => State::DeepPairwise(v, 1),
                _ => State::Pairwise(s.convert_value(v)?),
            },
            State::Pairwise(m) => State::Pairwise(s.merge(m, v)?),
            State::DeepPairwise(m, n) if n < self.pairwise => {
                State::DeepPairwise(s.merge(m, v)?, n + 1)
            }
            State::DeepPairwise(m, _) => {
                let o = s.lazy_deep().expect("a lazy deep fold");
                let (lz, p) = dm(o, Lz::V(m), false, v);
                State::Deep(lz, p)
            }
            State::UniqueFirst(first) => {
                let first = Value::Array(first);
                checks::unique_element("The first element of the merge", &first)?;
                checks::unique_element("The second element of the merge", &v)?;
                let Value::Array(first) = first else {
                    unreachable!("built as an array")
                };
                let mut set = UniqueSet::default();
                set.extend(first);
                push_unique(&mut set, v);
                State::Unique(set)
            }
            State::HashFirst(first) => {
                checks::hash_element("The first element of the merge", &first)?;
                checks::hash_element("The second element of the merge", &v)?;
                let mut map = FxHashMap::default();
                let mut front = 0;
                if let Value::Hash(h) = first {
                    for (i, (k, x)) in h.into_iter().enumerate() {
                        map.insert(Dk(k), (x, i as i64));
                    }
                }
                hash_level(&mut map, &mut front, v);
                State::Hash(map, front)
            }
            State::Hash(mut map, mut front) => {
                // The memo is a union of hashes that passed the check: it passes too.
                checks::hash_element("The second element of the merge", &v)?;
                hash_level(&mut map, &mut front, v);
                State::Hash(map, front)
            }
            State::Unique(mut set) => {
                // The memo is the union of values that passed the check: it passes too.
                checks::unique_element("The second element of the merge", &v)?;
                push_unique(&mut set, v);
                State::Unique(set)
            }
            State::Deep(lz, p) => {
                let o = s.lazy_deep().expect("a lazy deep fold");
                let (lz, p) = dm(o, lz, p, v);
                State::Deep(lz, p)
            }
        };
        Ok(())
    }

    /// The merged value; `None` when nothing was pushed.
    pub(crate) fn finish(self) -> R<Option<Value>> {
        Ok(match self.state {
            State::Empty => None,
            State::Pairwise(v) | State::DeepPairwise(v, _) => Some(v),
            State::UniqueFirst(a) => Some(Value::Array(a)),
            State::Unique(set) => Some(Value::Array(set.items)),
            State::HashFirst(v) => Some(v),
            State::Hash(map, _) => {
                let mut items: Vec<(Dk, (Value, i64))> = map.into_iter().collect();
                items.sort_unstable_by_key(|(_, (_, r))| *r);
                let mut out = Map::with_capacity_and_hasher(items.len(), Default::default());
                for (k, (v, _)) in items {
                    out.insert(k.0, v);
                }
                Some(Value::Hash(out))
            }
            State::Deep(lz, p) => Some(finish(lz, p)?),
        })
    }
}

/// `lower.merge(memo)`: lower's keys go first; values already there stay.
fn hash_level(map: &mut FxHashMap<Dk, (Value, i64)>, front: &mut i64, lower: Value) {
    let Value::Hash(h) = lower else { return };
    let base = *front - h.len() as i64;
    for (i, (k, v)) in h.into_iter().enumerate() {
        let rank = base + i as i64;
        map.entry(Dk(k))
            .and_modify(|e| e.1 = rank)
            .or_insert((v, rank));
    }
    *front = base;
}

fn push_unique(set: &mut UniqueSet, v: Value) {
    match unique_convert(v) {
        Value::Array(a) => set.extend(a),
        other => set.extend([other]),
    }
}

/// An array without duplicates (`eql?`), with an index of its elements.
#[derive(Default)]
struct UniqueSet {
    items: Vec<Value>,
    index: FxHashMap<u64, Vec<usize>>,
}

impl UniqueSet {
    fn extend(&mut self, vals: impl IntoIterator<Item = Value>) {
        for v in vals {
            let slot = self.index.entry(deep_hash(&v)).or_default();
            if slot.iter().any(|&i| self.items[i] == v) {
                continue;
            }
            slot.push(self.items.len());
            self.items.push(v);
        }
    }
}

// ---- the lazy deep fold ---------------------------------------------------------------------

/// A value as hash key or array element, hashed deeply (as `uniq` hashes), compared `eql?`.
#[derive(PartialEq, Eq)]
struct Dk(Value);

impl std::hash::Hash for Dk {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        state.write_u64(deep_hash(&self.0));
    }
}

/// A value in the making. Alongside it, the caller keeps whether it owes one self-merge
/// (`deep_merge!(v, v.dup)`: arrays deduplicated, at every depth of hashes); under the lazy
/// options that is idempotent, so owing it twice is owing it once.
enum Lz {
    V(Value),
    H(Box<LazyHash>),
    A(LazyArray),
}

/// A hash being merged into. `t` ticks at every step applied to the whole hash (a merge with a
/// destination hash, or a self-merge); an entry set at an earlier tick owes a self-merge.
struct LazyHash {
    entries: FxHashMap<Dk, Entry>,
    t: u64,
    /// The lowest rank given so far: the next level's keys go before it.
    front: i64,
    /// The key of lowest rank (the hash's first key).
    first: Option<Value>,
}

struct Entry {
    v: Lz,
    last: u64,
    rank: i64,
}

/// An array without duplicates being merged into: element → rank.
struct LazyArray {
    ranks: FxHashMap<Dk, i64>,
    front: i64,
}

impl LazyHash {
    fn new(h: Map) -> LazyHash {
        let first = h.first().map(|(k, _)| k.clone());
        let mut entries = FxHashMap::with_capacity_and_hasher(h.len(), Default::default());
        for (i, (k, v)) in h.into_iter().enumerate() {
            entries.insert(
                Dk(k),
                Entry {
                    v: Lz::V(v),
                    last: 0,
                    rank: i as i64,
                },
            );
        }
        LazyHash {
            entries,
            t: 0,
            front: 0,
            first,
        }
    }

    /// `deep_merge!(self, dest)` with `dest` a hash: dest's keys come first, in dest's order;
    /// keys only here owe a self-merge.
    fn merge_with(&mut self, o: &DeepOptions, dest: Map) {
        let t0 = self.t;
        let t1 = t0 + 1;
        let base = self.front - dest.len() as i64;
        if let Some((k, _)) = dest.first() {
            self.first = Some(k.clone());
        }
        for (i, (k, dv)) in dest.into_iter().enumerate() {
            let rank = base + i as i64;
            let k = Dk(k);
            match self.entries.get_mut(&k) {
                Some(e) => {
                    let owes = e.last < t0;
                    let c = std::mem::replace(&mut e.v, Lz::V(Value::Null));
                    let (nv, np) = if dv.truthy() {
                        dm(o, c, owes, dv)
                    } else {
                        // dest[k] = deep_merge!(src[k], src[k].dup)
                        (c, true)
                    };
                    e.v = nv;
                    e.last = if np { t0 } else { t1 };
                    e.rank = rank;
                }
                None => {
                    self.entries.insert(
                        k,
                        Entry {
                            v: Lz::V(dv),
                            last: t1,
                            rank,
                        },
                    );
                }
            }
        }
        self.front = base;
        self.t = t1;
    }
}

impl LazyArray {
    fn new(a: Vec<Value>) -> LazyArray {
        let mut ranks = FxHashMap::with_capacity_and_hasher(a.len(), Default::default());
        for (i, v) in a.into_iter().enumerate() {
            ranks.entry(Dk(v)).or_insert(i as i64);
        }
        LazyArray { ranks, front: 0 }
    }

    /// `dest | self`: dest's elements first, then the rest in their order.
    fn merge_with(&mut self, dest: Vec<Value>) {
        let d = uniq(dest);
        let base = self.front - d.len() as i64;
        for (i, v) in d.into_iter().enumerate() {
            self.ranks.insert(Dk(v), base + i as i64);
        }
        self.front = base;
    }
}

/// `deep_merge!(src, dest)` where `src` is `lz`, after one self-merge if `owes`. Returns the
/// result and whether it still owes a self-merge.
fn dm(o: &DeepOptions, src: Lz, owes: bool, dest: Value) -> (Lz, bool) {
    if matches!(src, Lz::V(Value::Null)) && !o.merge_nil_values {
        return (Lz::V(dest), false);
    }
    if !dest.truthy() {
        return (src, owes);
    }
    match src {
        Lz::V(Value::Hash(h)) => hash_into(o, LazyHash::new(h), owes, dest),
        Lz::H(h) => hash_into(o, *h, owes, dest),
        Lz::V(Value::Array(a)) => match dest {
            Value::Array(d) => {
                let mut la = LazyArray::new(a);
                la.merge_with(d);
                (Lz::A(la), false)
            }
            _ => (Lz::V(Value::Array(a)), owes),
        },
        // Deduplicated already: a self-merge changes nothing.
        Lz::A(mut la) => {
            if let Value::Array(d) = dest {
                la.merge_with(d);
            }
            (Lz::A(la), false)
        }
        // A scalar source overwrites.
        src @ Lz::V(_) => (src, owes),
    }
}

fn hash_into(o: &DeepOptions, mut h: LazyHash, owes: bool, dest: Value) -> (Lz, bool) {
    if owes {
        h.t += 1;
    }
    match dest {
        Value::Hash(d) => {
            h.merge_with(o, d);
            (Lz::H(Box::new(h)), false)
        }
        dest => {
            if h.entries.is_empty() {
                return (Lz::V(dest), false);
            }
            // The source hash wins; its keys after the first are merged into themselves.
            let t0 = h.t;
            h.t += 1;
            if let Some(first) = h.first.clone() {
                if let Some(e) = h.entries.get_mut(&Dk(first)) {
                    if e.last == t0 {
                        e.last = h.t;
                    }
                }
            }
            (Lz::H(Box::new(h)), false)
        }
    }
}

/// The value `lz` stands for, after one self-merge if `owes`.
fn finish(lz: Lz, owes: bool) -> R<Value> {
    Ok(match lz {
        Lz::V(v) if owes => self_merged_plain(v, false)?,
        Lz::V(v) => v,
        Lz::H(mut h) => {
            if owes {
                h.t += 1;
            }
            let t = h.t;
            let mut entries: Vec<(Dk, Entry)> = h.entries.into_iter().collect();
            entries.sort_unstable_by_key(|(_, e)| e.rank);
            let mut out = Map::with_capacity_and_hasher(entries.len(), Default::default());
            for (k, e) in entries {
                let owes = e.last < t;
                out.insert(k.0, finish(e.v, owes)?);
            }
            Value::Hash(out)
        }
        Lz::A(a) => {
            let mut items: Vec<(Dk, i64)> = a.ranks.into_iter().collect();
            items.sort_unstable_by_key(|(_, r)| *r);
            Value::Array(items.into_iter().map(|(k, _)| k.0).collect())
        }
    })
}

/// The pairwise fold the driver contract describes, for comparison.
#[cfg(test)]
pub(crate) fn pairwise(s: &MergeStrategy, vals: Vec<Value>) -> R<Option<Value>> {
    let mut memo: Option<Value> = None;
    for v in vals {
        memo = Some(match memo {
            None => s.convert_value(v)?,
            Some(m) => s.merge(m, v)?,
        });
    }
    Ok(memo)
}

/// [`Fold`] over `vals`.
#[cfg(test)]
pub(crate) fn folded(s: &MergeStrategy, vals: Vec<Value>) -> R<Option<Value>> {
    folded_after(s, vals, PAIRWISE_LEVELS)
}

/// [`Fold`] over `vals`, lazy after `pairwise` levels.
#[cfg(test)]
pub(crate) fn folded_after(
    s: &MergeStrategy,
    vals: Vec<Value>,
    pairwise: usize,
) -> R<Option<Value>> {
    let mut f = s.fold();
    f.pairwise = pairwise;
    for v in vals {
        f.push(v)?;
    }
    f.finish()
}
