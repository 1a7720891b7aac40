//! Ruby object identity, for `--explain`.
//!
//! Puppet's explanation holds the very Ruby objects a lookup found and merged: a merge result
//! shares hashes and arrays with the values it came from, and `deep_merge!` edits its source in
//! place after the trace has recorded it. `--explain` prints those objects at the end (so it
//! shows the edits), and `--render-as yaml` anchors (`&1`/`*1`) each hash or array that appears
//! twice. Plain [`Value`]s have no identity, so the explainer keeps its values on this heap,
//! where every hash and array is an object, and replays the merge strategies on it as Ruby runs
//! them (`Hash#merge`, `Array#|`, `flatten`, `uniq` and deep_merge 1.1.1's `deep_merge!`, ported
//! line by line). Lookups without `--explain` never touch it, except that a deep merge with
//! `merge_debug` replays its merges here for deep_merge's trace (`Heap::merge_traced`), whose
//! lines show the objects as the in-place edits leave them at each step.
//!
//! Found strings are objects too, though Psych never anchors them: deep_merge! clears one in
//! place when a knockout marker clears a lower-priority string (`String#clear`), and the found
//! value shows it.

use super::{keep_first, ruby_eq, sort_order, unpack, DeepOptions, MergeStrategy, R};
use hiera_formats::render::Tree;
use hiera_value::value::{Map, Value};
use indexmap::IndexMap;
use std::collections::{HashMap, HashSet};

/// A Ruby value: an immediate (nil, booleans, numbers, Puppet objects, strings made by a merge)
/// or an object (hash, array, found string) on the [`Heap`].
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Rv {
    Imm(Value),
    Obj(ObjId),
}

/// The identity of an object (Ruby's `object_id`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct ObjId(u32);

type Entries = IndexMap<Value, Rv, rustc_hash::FxBuildHasher>;

#[derive(Debug, Clone)]
enum Obj {
    Array(Vec<Rv>),
    Hash(Entries),
    Str(String),
}

/// Every object the explanation holds.
#[derive(Debug, Default, Clone)]
pub(crate) struct Heap {
    objs: Vec<Obj>,
}

impl Rv {
    pub(crate) fn nil() -> Rv {
        Rv::Imm(Value::Null)
    }
    fn truthy(&self) -> bool {
        match self {
            Rv::Imm(v) => v.truthy(),
            Rv::Obj(_) => true,
        }
    }
}

impl Heap {
    pub(crate) fn new() -> Heap {
        Heap::default()
    }

    fn add(&mut self, o: Obj) -> Rv {
        let id = ObjId(self.objs.len() as u32);
        self.objs.push(o);
        Rv::Obj(id)
    }

    /// A fresh object graph for `v` (what interpolation hands the lookup: new hashes and
    /// arrays all the way down).
    pub(crate) fn alloc(&mut self, v: &Value) -> Rv {
        match v {
            Value::Array(a) => {
                let items = a.iter().map(|e| self.alloc(e)).collect();
                self.add(Obj::Array(items))
            }
            Value::Hash(h) => {
                let mut m = Entries::with_capacity_and_hasher(h.len(), Default::default());
                for (k, e) in h {
                    let e = self.alloc(e);
                    m.insert(k.clone(), e);
                }
                self.add(Obj::Hash(m))
            }
            Value::String(s) => self.add(Obj::Str(s.clone())),
            other => Rv::Imm(other.clone()),
        }
    }

    pub(crate) fn new_array(&mut self, items: Vec<Rv>) -> Rv {
        self.add(Obj::Array(items))
    }

    pub(crate) fn new_hash(&mut self, entries: Vec<(Value, Rv)>) -> Rv {
        self.add(Obj::Hash(entries.into_iter().collect()))
    }

    /// Every string, hash key and number of every object as `--redact` prints it.
    pub(crate) fn redact(&mut self, r: &crate::redact::Redactor) {
        let imm = |rv: &mut Rv| {
            if let Rv::Imm(v) = rv {
                *v = r.value(v);
            }
        };
        for o in &mut self.objs {
            match o {
                Obj::Str(s) => {
                    if let std::borrow::Cow::Owned(t) = r.text(s) {
                        *s = t;
                    }
                }
                Obj::Array(a) => a.iter_mut().for_each(imm),
                Obj::Hash(h) => {
                    let mut m = Entries::with_capacity_and_hasher(h.len(), Default::default());
                    for (k, mut e) in std::mem::take(h) {
                        imm(&mut e);
                        m.entry(r.value(&k)).or_insert(e);
                    }
                    *h = m;
                }
            }
        }
    }

    /// The value `rv` holds now. An object that contains itself reads as nil there.
    pub(crate) fn value(&self, rv: &Rv) -> Value {
        self.value_guarded(rv, &mut Vec::new())
    }

    fn value_guarded(&self, rv: &Rv, path: &mut Vec<ObjId>) -> Value {
        let id = match rv {
            Rv::Imm(v) => return v.clone(),
            Rv::Obj(id) => *id,
        };
        if path.contains(&id) {
            return Value::Null;
        }
        path.push(id);
        let v = match self.objs.get(id.0 as usize) {
            Some(Obj::Array(a)) => {
                Value::Array(a.iter().map(|e| self.value_guarded(e, path)).collect())
            }
            Some(Obj::Hash(h)) => {
                let mut m = Map::with_capacity_and_hasher(h.len(), Default::default());
                for (k, e) in h {
                    m.insert(k.clone(), self.value_guarded(e, path));
                }
                Value::Hash(m)
            }
            Some(Obj::Str(s)) => Value::String(s.clone()),
            None => Value::Null,
        };
        path.pop();
        v
    }

    /// How many objects the heap holds.
    pub fn len(&self) -> usize {
        self.objs.len()
    }

    /// Whether `rv` holds `v` now (as `value(rv) == *v`, without building that copy: the
    /// check runs on every value a lookup produces, which may be a 15 MB hash).
    pub fn holds(&self, rv: &Rv, v: &Value) -> bool {
        self.holds_guarded(rv, v, &mut Vec::new())
    }

    fn holds_guarded(&self, rv: &Rv, v: &Value, path: &mut Vec<ObjId>) -> bool {
        let id = match rv {
            Rv::Imm(i) => return i == v,
            Rv::Obj(id) => *id,
        };
        if path.contains(&id) {
            return *v == Value::Null;
        }
        path.push(id);
        let same = match (self.objs.get(id.0 as usize), v) {
            (Some(Obj::Array(a)), Value::Array(b)) => {
                a.len() == b.len() && a.iter().zip(b).all(|(x, y)| self.holds_guarded(x, y, path))
            }
            // Value's hash equality ignores order: so does this.
            (Some(Obj::Hash(h)), Value::Hash(m)) => {
                h.len() == m.len()
                    && h.iter()
                        .all(|(k, x)| m.get(k).is_some_and(|y| self.holds_guarded(x, y, path)))
            }
            (Some(Obj::Str(s)), Value::String(t)) => s == t,
            (None, Value::Null) => true,
            _ => false,
        };
        path.pop();
        same
    }

    /// `value[key]` for a hash, `value[index]` for an array (the object itself, not a copy).
    pub(crate) fn child(&self, rv: &Rv, key: &Value) -> Option<Rv> {
        let Rv::Obj(id) = rv else { return None };
        match (self.objs.get(id.0 as usize)?, key) {
            (Obj::Hash(h), k) => h.get(k).cloned(),
            (Obj::Array(a), Value::Int(i)) => {
                usize::try_from(*i).ok().and_then(|i| a.get(i)).cloned()
            }
            _ => None,
        }
    }

    fn array(&self, rv: &Rv) -> Option<&Vec<Rv>> {
        match rv {
            Rv::Obj(id) => match self.objs.get(id.0 as usize) {
                Some(Obj::Array(a)) => Some(a),
                _ => None,
            },
            Rv::Imm(_) => None,
        }
    }

    fn array_mut(&mut self, rv: &Rv) -> Option<&mut Vec<Rv>> {
        match rv {
            Rv::Obj(id) => match self.objs.get_mut(id.0 as usize) {
                Some(Obj::Array(a)) => Some(a),
                _ => None,
            },
            Rv::Imm(_) => None,
        }
    }

    fn hash(&self, rv: &Rv) -> Option<&Entries> {
        match rv {
            Rv::Obj(id) => match self.objs.get(id.0 as usize) {
                Some(Obj::Hash(h)) => Some(h),
                _ => None,
            },
            Rv::Imm(_) => None,
        }
    }

    fn hash_mut(&mut self, rv: &Rv) -> Option<&mut Entries> {
        match rv {
            Rv::Obj(id) => match self.objs.get_mut(id.0 as usize) {
                Some(Obj::Hash(h)) => Some(h),
                _ => None,
            },
            Rv::Imm(_) => None,
        }
    }

    fn str<'a>(&'a self, rv: &'a Rv) -> Option<&'a str> {
        match rv {
            Rv::Imm(Value::String(s)) => Some(s),
            Rv::Imm(_) => None,
            Rv::Obj(id) => match self.objs.get(id.0 as usize) {
                Some(Obj::Str(s)) => Some(s),
                _ => None,
            },
        }
    }

    /// Ruby's `obj.class.inspect`, for the merge_debug trace.
    fn class(&self, rv: &Rv) -> &'static str {
        match rv {
            Rv::Imm(v) => v.ruby_class(),
            Rv::Obj(_) if self.is_hash(rv) => "Hash",
            Rv::Obj(_) if self.array(rv).is_some() => "Array",
            Rv::Obj(_) => "String",
        }
    }

    /// Ruby's `inspect` of the object as it is now, for the merge_debug trace.
    fn inspect(&self, rv: &Rv) -> String {
        hiera_value::ruby::inspect(&self.value(rv))
    }

    fn is_hash(&self, rv: &Rv) -> bool {
        self.hash(rv).is_some()
    }

    /// `dup`: a shallow copy of a hash or array; immediates are themselves.
    fn dup(&mut self, rv: &Rv) -> Rv {
        let Rv::Obj(id) = rv else { return rv.clone() };
        match self.objs.get(id.0 as usize).cloned() {
            Some(o) => self.add(o),
            None => rv.clone(),
        }
    }

    /// Puppet's `DeepMergeStrategy#deep_clone`: new hashes and arrays, same leaves.
    fn deep_clone(&mut self, rv: &Rv) -> Rv {
        if let Some(a) = self.array(rv).cloned() {
            let items = a.iter().map(|e| self.deep_clone(e)).collect();
            return self.add(Obj::Array(items));
        }
        if let Some(h) = self.hash(rv).cloned() {
            let mut m = Entries::with_capacity_and_hasher(h.len(), Default::default());
            for (k, e) in &h {
                let e = self.deep_clone(e);
                m.insert(k.clone(), e);
            }
            return self.add(Obj::Hash(m));
        }
        rv.clone()
    }

    fn values(&self, items: &[Rv]) -> Vec<Value> {
        items.iter().map(|e| self.value(e)).collect()
    }

    /// `Array#uniq` / the dedupe of `Array#|`: the first of each eql? group, same objects.
    fn uniq(&self, items: Vec<Rv>) -> Vec<Rv> {
        let keep = keep_first(&self.values(&items));
        items
            .into_iter()
            .zip(keep)
            .filter_map(|(e, k)| k.then_some(e))
            .collect()
    }

    /// `Array#sort!` of the array object `rv`.
    fn sort_in_place(&mut self, rv: &Rv) -> R<()> {
        let Some(items) = self.array(rv).cloned() else {
            return Ok(());
        };
        let order = sort_order(&self.values(&items))?;
        if let Some(a) = self.array_mut(rv) {
            *a = order
                .into_iter()
                .filter_map(|i| items.get(i).cloned())
                .collect();
        }
        Ok(())
    }

    /// `Array#flatten` (a new array; the elements are the same objects).
    fn flatten_into(&self, rv: &Rv, out: &mut Vec<Rv>, depth: usize) {
        match self.array(rv) {
            Some(a) if depth < 10_000 => {
                for e in a {
                    if self.array(e).is_some() {
                        self.flatten_into(e, out, depth + 1);
                    } else {
                        out.push(e.clone());
                    }
                }
            }
            _ => out.push(rv.clone()),
        }
    }

    // ---- the strategies ----------------------------------------------------------------

    /// `convert_value`, as the merge driver applies it to the first value found.
    pub(crate) fn convert_value(&mut self, s: &MergeStrategy, v: Rv) -> Rv {
        match s {
            MergeStrategy::Unique => self.unique_convert(&v),
            _ => v,
        }
    }

    /// `merge_single`, for the one value of a single-variant merge.
    pub(crate) fn merge_single(&mut self, s: &MergeStrategy, v: Rv) -> Rv {
        match (s, self.array(&v).cloned()) {
            (MergeStrategy::Unique, Some(a)) => {
                let items = self.uniq(a);
                self.new_array(items)
            }
            _ => v,
        }
    }

    /// `checked_merge(e1, e2)`. The value-level merge ([`MergeStrategy::merge`]) runs first and
    /// reports the type and option errors; this one only fails where it does.
    pub(crate) fn merge(&mut self, s: &MergeStrategy, e1: Rv, e2: Rv) -> R<Rv> {
        self.merge_with(s, e1, e2, None)
    }

    /// [`merge`](Self::merge) with deep_merge's `merge_debug` trace appended to `trace`:
    /// the lines deep_merge `puts` on stdout as it runs (see [`DeepMerge::say`]).
    pub(crate) fn merge_traced(
        &mut self,
        s: &MergeStrategy,
        e1: Rv,
        e2: Rv,
        trace: &mut String,
    ) -> R<Rv> {
        self.merge_with(s, e1, e2, Some(trace))
    }

    fn merge_with(
        &mut self,
        s: &MergeStrategy,
        e1: Rv,
        e2: Rv,
        trace: Option<&mut String>,
    ) -> R<Rv> {
        match s {
            MergeStrategy::First | MergeStrategy::Default => Ok(e1),
            // e2.merge(e1)
            MergeStrategy::Hash => {
                let mut out = self.hash(&e2).cloned().unwrap_or_default();
                if let Some(h1) = self.hash(&e1) {
                    out.extend(h1.iter().map(|(k, v)| (k.clone(), v.clone())));
                }
                Ok(self.add(Obj::Hash(out)))
            }
            // convert_value(e1) | convert_value(e2)
            MergeStrategy::Unique => {
                let mut all = Vec::new();
                for e in [&e1, &e2] {
                    if self.array(e).is_some() {
                        self.flatten_into(e, &mut all, 0);
                    } else {
                        all.push(e.clone());
                    }
                }
                let items = self.uniq(all);
                Ok(self.new_array(items))
            }
            MergeStrategy::Deep(o) | MergeStrategy::UnconstrainedDeep(o) => {
                let dest = self.deep_clone(&e2);
                DeepMerge::new(self, o, trace).merge(e1, dest)
            }
            MergeStrategy::ReverseDeep(o) => {
                let dest = self.deep_clone(&e1);
                DeepMerge::new(self, o, trace).merge(e2, dest)
            }
        }
    }

    fn unique_convert(&mut self, v: &Rv) -> Rv {
        let mut items = Vec::new();
        if self.array(v).is_some() {
            self.flatten_into(v, &mut items, 0);
        } else {
            items.push(v.clone());
        }
        self.new_array(items)
    }
}

/// Turns heap values into [`Tree`]s as Psych's YAMLTree visits them: the first occurrence of an
/// object is written out (tentatively anchored with its id), later ones become aliases.
pub(crate) struct Dumper<'h> {
    heap: &'h Heap,
    /// Objects met so far.
    seen: HashSet<u32>,
    /// Objects met again, with the anchor number Psych gives them (in order of first alias).
    aliased: HashMap<u32, u32>,
}

impl<'h> Dumper<'h> {
    pub(crate) fn new(heap: &'h Heap) -> Dumper<'h> {
        Dumper {
            heap,
            seen: HashSet::new(),
            aliased: HashMap::new(),
        }
    }

    /// The tree of `rv`, met after everything passed to earlier calls.
    pub(crate) fn value(&mut self, rv: &Rv) -> Tree {
        let id = match rv {
            Rv::Imm(v) => return Tree::Leaf(v.clone()),
            Rv::Obj(id) => *id,
        };
        let heap = self.heap;
        let obj = heap.objs.get(id.0 as usize);
        // visit_String registers nothing: strings are never anchored.
        if let Some(Obj::Str(s)) = obj {
            return Tree::Leaf(Value::String(s.clone()));
        }
        if !self.seen.insert(id.0) {
            let next = self.aliased.len() as u32 + 1;
            let n = *self.aliased.entry(id.0).or_insert(next);
            return Tree::Alias(n);
        }
        // The object's index stands in as its anchor until `finish` knows which are aliased.
        let tentative = Some(id.0);
        match obj {
            Some(Obj::Array(items)) => Tree::Seq {
                anchor: tentative,
                items: items.iter().map(|e| self.value(e)).collect(),
            },
            Some(Obj::Hash(h)) => Tree::Map {
                anchor: tentative,
                entries: h
                    .iter()
                    .map(|(k, e)| (Tree::Leaf(k.clone()), self.value(e)))
                    .collect(),
            },
            Some(Obj::Str(_)) | None => Tree::Leaf(Value::Null),
        }
    }

    /// Replaces the tentative anchors in `t` (a tree holding every value dumped): aliased
    /// objects get their number, the others none.
    pub(crate) fn finish(&self, t: &mut Tree) {
        match t {
            Tree::Seq { anchor, items } => {
                *anchor = anchor.and_then(|a| self.aliased.get(&a).copied());
                items.iter_mut().for_each(|e| self.finish(e));
            }
            Tree::Map { anchor, entries } => {
                *anchor = anchor.and_then(|a| self.aliased.get(&a).copied());
                entries.iter_mut().for_each(|(_, e)| self.finish(e));
            }
            _ => {}
        }
    }
}

/// deep_merge 1.1.1's `DeepMerge.deep_merge!` and helpers, over heap objects, with 1.2.2's
/// `keep_array_duplicates` and `merge_nil_values`, and the `merge_debug` trace.
struct DeepMerge<'a> {
    h: &'a mut Heap,
    o: &'a DeepOptions,
    /// With `merge_debug`: where the trace lines go.
    trace: Option<&'a mut String>,
    /// The trace's `debug_indent`: two spaces per nested `deep_merge!`.
    depth: usize,
}

impl<'a> DeepMerge<'a> {
    fn new(h: &'a mut Heap, o: &'a DeepOptions, trace: Option<&'a mut String>) -> DeepMerge<'a> {
        let trace = trace.filter(|_| o.merge_debug);
        DeepMerge {
            h,
            o,
            trace,
            depth: 0,
        }
    }

    /// deep_merge's `puts "#{di}..."` under `merge_debug`: `line` gets the heap and the
    /// indent; it is built only when tracing.
    fn say(&mut self, line: impl FnOnce(&Heap, &str) -> String) {
        if let Some(t) = self.trace.as_deref_mut() {
            let di = "  ".repeat(self.depth);
            t.push_str(&line(self.h, &di));
            t.push('\n');
        }
    }

    /// deep_merge's `print` (no newline), for the knockout trace.
    fn print(&mut self, text: &str) {
        if let Some(t) = self.trace.as_deref_mut() {
            t.push_str(text);
        }
    }

    /// `deep_merge!(source, dest, options.merge(:debug_indent => di + '  '))`.
    fn nested(&mut self, source: Rv, dest: Rv) -> R<Rv> {
        self.depth += 1;
        let r = self.merge(source, dest);
        self.depth -= 1;
        r
    }

    fn overwrite(&self) -> bool {
        self.o.overwrite()
    }

    /// `item.gsub(/^ko/, "")` when `item` is a string and that changes it.
    fn knocked(&self, item: &Rv) -> R<Option<Value>> {
        match self.h.str(item) {
            Some(s) => Ok(self.o.knocked(s)?.map(Value::String)),
            None => Ok(None),
        }
    }

    fn is_marker(&self, v: &Rv) -> bool {
        match (&self.o.ko, v) {
            (Some(k), Rv::Imm(x)) => ruby_eq(x, &k.marker),
            (Some(k), Rv::Obj(_)) => self.h.str(v).is_some_and(|s| k.marker.as_str() == Some(s)),
            _ => false,
        }
    }

    /// `Array#delete(item)` (==) on the array object `arr`.
    fn delete(&mut self, arr: &Rv, item: &Value) {
        let Some(items) = self.h.array(arr).cloned() else {
            return;
        };
        let kept: Vec<Rv> = items
            .into_iter()
            .filter(|e| !ruby_eq(&self.h.value(e), item))
            .collect();
        if let Some(a) = self.h.array_mut(arr) {
            *a = kept;
        }
    }

    fn merge(&mut self, source: Rv, mut dest: Rv) -> R<Rv> {
        if source == Rv::nil() && !self.o.merge_nil_values {
            return Ok(dest);
        }
        if !dest.truthy() && self.overwrite() {
            return Ok(source);
        }
        self.say(|h, di| {
            format!(
                "{di}Source class: {} :: Dest class: {}",
                h.class(&source),
                h.class(&dest)
            )
        });
        if let Some(entries) = self.h.hash(&source).cloned() {
            self.say(|h, di| format!("{di}Hashes: {} :: {}", h.inspect(&source), h.inspect(&dest)));
            for (k, sv) in entries {
                if self.h.is_hash(&dest) {
                    let ki = hiera_value::ruby::inspect(&k);
                    self.say(|h, di| {
                        format!(
                            "{di} looping: {ki} => {} :: {}",
                            h.inspect(&sv),
                            h.inspect(&dest)
                        )
                    });
                    let cur = self.h.hash(&dest).and_then(|d| d.get(&k)).cloned();
                    let nv = match cur {
                        Some(dv) if dv.truthy() => {
                            self.say(|h, di| {
                                format!(
                                    "{di} ==>merging: {ki} => {} :: {}",
                                    h.inspect(&sv),
                                    h.inspect(&dv)
                                )
                            });
                            self.nested(sv, dv)?
                        }
                        _ => {
                            self.say(|h, di| {
                                format!("{di} ==>merging over: {ki} => {}", h.inspect(&sv))
                            });
                            // 1.2.2: with keep_array_duplicates an array merges into [].
                            let dup = if self.o.keep_array_duplicates && self.h.array(&sv).is_some()
                            {
                                self.h.new_array(Vec::new())
                            } else {
                                self.h.dup(&sv)
                            };
                            self.nested(sv, dup)?
                        }
                    };
                    if let Some(d) = self.h.hash_mut(&dest) {
                        d.insert(k, nv);
                    }
                } else if self.o.extend_existing_arrays && self.h.array(&dest).is_some() {
                    if let Some(d) = self.h.array_mut(&dest) {
                        d.push(source.clone());
                    }
                } else if self.overwrite() {
                    let ki = hiera_value::ruby::inspect(&k);
                    self.say(|h, di| {
                        format!(
                            "{di}  overwriting dest: {ki} => {} -over->  {}",
                            h.inspect(&sv),
                            h.inspect(&dest)
                        )
                    });
                    dest = self.overwrite_unmergeables(&source, dest)?;
                }
            }
        } else if self.h.array(&source).is_some() {
            dest = self.merge_array(source, dest)?;
        } else if self.o.extend_existing_arrays && self.h.array(&dest).is_some() {
            if let Some(d) = self.h.array_mut(&dest) {
                d.push(source);
            }
        } else {
            self.say(|h, di| format!("{di}Others: {} :: {}", h.inspect(&source), h.inspect(&dest)));
            dest = self.overwrite_unmergeables(&source, dest)?;
        }
        self.say(|h, di| format!("{di}Returning {}", h.inspect(&dest)));
        Ok(dest)
    }

    fn merge_array(&mut self, mut source: Rv, mut dest: Rv) -> R<Rv> {
        self.say(|h, di| format!("{di}Arrays: {} :: {}", h.inspect(&source), h.inspect(&dest)));
        if self.o.overwrite_arrays {
            self.say(|_, di| format!("{di} overwrite arrays"));
            return Ok(source);
        }
        if let Some(sep) = &self.o.unpack_arrays {
            self.say(|h, di| format!("{di} split/join on source: {}", h.inspect(&source)));
            let s = unpack(&self.h.value(&source), sep)?;
            source = self.h.alloc(&Value::Array(s));
            if self.h.array(&dest).is_some() {
                let d = unpack(&self.h.value(&dest), sep)?;
                dest = self.h.alloc(&Value::Array(d));
            }
        }
        if let Some(ko) = &self.o.ko {
            let marker = ko.marker.clone();
            let has = self
                .h
                .array(&source)
                .is_some_and(|a| a.iter().any(|e| self.is_marker(e)));
            if has {
                dest = self.clear_or_nil(dest);
                self.delete(&source, &marker);
            }
        }
        if self.h.array(&dest).is_none() {
            if self.overwrite() {
                self.say(|h, di| {
                    format!(
                        "{di} overwriting dest: {} -over-> {}",
                        h.inspect(&source),
                        h.inspect(&dest)
                    )
                });
                return self.overwrite_unmergeables(&source, dest);
            }
            return Ok(dest);
        }
        if self.o.ko.is_some() {
            let di = "  ".repeat(self.depth);
            self.print(&format!("{di} knocking out: "));
            self.knock_out(&source, &dest)?;
            self.print("\n");
        }
        self.say(|h, di| {
            format!(
                "{di} merging arrays: {} :: {}",
                h.inspect(&source),
                h.inspect(&dest)
            )
        });
        let all_hashes =
            |h: &Heap, rv: &Rv| h.array(rv).is_some_and(|a| a.iter().all(|e| h.is_hash(e)));
        let merged =
            if self.o.merge_hash_arrays && all_hashes(self.h, &source) && all_hashes(self.h, &dest)
            {
                let s = self.h.array(&source).cloned().unwrap_or_default();
                let d = self.h.array(&dest).cloned().unwrap_or_default();
                let mut list = Vec::with_capacity(d.len().max(s.len()));
                for (i, di) in d.iter().enumerate() {
                    let si = match s.get(i) {
                        Some(x) if x.truthy() => x.clone(),
                        _ => self.h.new_hash(Vec::new()),
                    };
                    list.push(self.nested(si, di.clone())?);
                }
                // `list += source[dest.count..-1]` makes a new array.
                if s.len() > d.len() {
                    list.extend(s[d.len()..].iter().cloned());
                }
                self.h.new_array(list)
            } else if self.o.keep_array_duplicates {
                // 1.2.2's `dest.concat(source)`, in place (dest may be source itself).
                let add = self.h.array(&source).cloned().unwrap_or_default();
                if let Some(d) = self.h.array_mut(&dest) {
                    d.extend(add);
                }
                dest
            } else {
                // dest | source
                let mut all = self.h.array(&dest).cloned().unwrap_or_default();
                all.extend(self.h.array(&source).cloned().unwrap_or_default());
                let items = self.h.uniq(all);
                self.h.new_array(items)
            };
        if self.o.sort_merged_arrays {
            self.h.sort_in_place(&merged)?;
        }
        Ok(merged)
    }

    /// `source.delete_if { |ko_item| ... dest.delete(item); dest.delete(ko_item) ... }`,
    /// where `dest` may be `source` itself (MRI's `ary_reject_bang`: a read index and a write
    /// index over the live array, and the tail kept when the block shrinks it).
    fn knock_out(&mut self, source: &Rv, dest: &Rv) -> R<()> {
        let (mut i1, mut i2) = (0usize, 0usize);
        loop {
            let Some(item) = self.h.array(source).and_then(|a| a.get(i1)).cloned() else {
                break;
            };
            let mut remove = false;
            if let Some(stripped) = self.knocked(&item)? {
                let ko_item = self.h.value(&item);
                self.print(&format!("{} - ", hiera_value::ruby::to_s(&ko_item)));
                self.delete(dest, &stripped);
                self.delete(dest, &ko_item);
                remove = true;
            }
            if !remove {
                if i1 != i2 {
                    if let Some(a) = self.h.array_mut(source) {
                        if i2 < a.len() {
                            a[i2] = item;
                        }
                    }
                }
                i2 += 1;
            }
            i1 += 1;
        }
        if let Some(a) = self.h.array_mut(source) {
            let len = a.len();
            if i2 < len && i2 < i1 {
                let tail = len.saturating_sub(i1);
                for t in 0..tail {
                    a[i2 + t] = a[i1 + t].clone();
                }
                a.truncate(i2 + tail);
            }
        }
        Ok(())
    }

    /// deep_merge's `clear_or_nil`: hashes and arrays are cleared in place.
    fn clear_or_nil(&mut self, obj: Rv) -> Rv {
        if let Some(a) = self.h.array_mut(&obj) {
            a.clear();
            return obj;
        }
        if let Some(h) = self.h.hash_mut(&obj) {
            h.clear();
            return obj;
        }
        if let Rv::Obj(id) = &obj {
            if let Some(Obj::Str(s)) = self.h.objs.get_mut(id.0 as usize) {
                s.clear();
                return obj;
            }
        }
        match obj {
            Rv::Imm(Value::String(_)) => Rv::Imm(Value::str("")),
            _ => Rv::nil(),
        }
    }

    fn overwrite_unmergeables(&mut self, source: &Rv, dest: Rv) -> R<Rv> {
        if !self.overwrite() {
            return Ok(dest);
        }
        if self.o.ko.is_none() {
            return Ok(source.clone());
        }
        // Each branch compiles `/^prefix/` only when it uses it, as Ruby does.
        if let Some(text) = self.h.str(source).map(str::to_string) {
            // gsub makes a new string either way.
            let copy = match self.knocked(source)? {
                Some(_) => String::new(),
                None => text,
            };
            let shown = hiera_value::ruby::inspect(&Value::str(copy.as_str()));
            self.say(|h, di| format!("{di}{shown} -over-> {}", h.inspect(&dest)));
            return Ok(self.h.add(Obj::Str(copy)));
        }
        let over = |me: &mut Self| {
            me.say(|h, di| format!("{di}{} -over-> {}", h.inspect(source), h.inspect(&dest)));
        };
        if let Some(items) = self.h.array(source).cloned() {
            let has_string = items.iter().any(|e| self.h.str(e).is_some());
            let Some(re) = (if has_string {
                self.o.ko_re()?.cloned()
            } else {
                None
            }) else {
                over(self);
                return Ok(source.clone());
            };
            // delete_if returns the receiver, so the comparison after it is always equal.
            let kept: Vec<Rv> = items
                .into_iter()
                .filter(|e| !self.h.str(e).is_some_and(|s| re.is_match(s)))
                .collect();
            if let Some(a) = self.h.array_mut(source) {
                *a = kept;
            }
        }
        over(self);
        Ok(source.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::merge::tests::lit;

    #[test]
    fn holds_compares_without_copying() {
        let y = |t: &str| hiera_formats::yaml::load(t).unwrap();
        let mut heap = Heap::new();
        let v = y("{a: [1, {b: x}], c: y, d: ~}");
        let rv = heap.alloc(&v);
        assert!(heap.holds(&rv, &v));
        // Hash order does not matter (as for Value), contents do.
        assert!(heap.holds(&rv, &y("{c: y, d: ~, a: [1, {b: x}]}")));
        for other in [
            "{a: [1, {b: z}], c: y, d: ~}",
            "{a: [1], c: y, d: ~}",
            "{a: [1, {b: x}], c: y}",
            "[1]",
            "x",
        ] {
            assert!(!heap.holds(&rv, &y(other)), "{other}");
            assert_eq!(heap.holds(&rv, &y(other)), heap.value(&rv) == y(other));
        }
        let s = heap.alloc(&Value::str("x"));
        assert!(heap.holds(&s, &Value::str("x")) && !heap.holds(&s, &Value::str("y")));
        assert!(heap.holds(&Rv::Imm(Value::Int(1)), &Value::Int(1)));
    }

    /// Random merge-driver runs recorded from Puppet's own strategies (tests/data/merge/gen.rb): the
    /// result and the found values after the merge, dumped by Psych, whose anchors show which
    /// objects the result shares with them and what the merge edited in place.
    #[test]
    fn identity_matches_ruby() {
        let corpus = include_str!("../../../../tests/data/merge/corpus.jsonl");
        let mut failures = Vec::new();
        for line in corpus.lines() {
            let case: serde_json::Value = serde_json::from_str(line).unwrap();
            let strategy =
                MergeStrategy::from_value(&lit(case["strategy"].as_str().unwrap())).unwrap();
            let values: Vec<Value> = case["values"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| lit(v.as_str().unwrap()))
                .collect();
            let mut heap = Heap::new();
            let objs: Vec<Rv> = values.iter().map(|v| heap.alloc(v)).collect();
            let mut memo: Option<Rv> = None;
            for o in &objs {
                memo = Some(match memo {
                    None => heap.convert_value(&strategy, o.clone()),
                    Some(m) => heap.merge(&strategy, m, o.clone()).unwrap(),
                });
            }
            let mut d = Dumper::new(&heap);
            let items = std::iter::once(memo.unwrap())
                .chain(objs)
                .map(|o| d.value(&o))
                .collect();
            let mut t = Tree::Seq {
                anchor: None,
                items,
            };
            d.finish(&mut t);
            let got = hiera_formats::render::tree_to_yaml(&t).unwrap();
            let want = case["yaml"].as_str().unwrap();
            if got != want {
                failures.push(format!("{line}\n--- got\n{got}"));
            }
        }
        assert!(
            failures.is_empty(),
            "{} of {} differ:\n{}",
            failures.len(),
            corpus.lines().count(),
            failures[..failures.len().min(3)].join("\n")
        );
    }

    /// deep_merge's merge_debug trace of `merge(higher, lower)` under `options` (a merge hash).
    fn trace(options: &str, higher: &str, lower: &str) -> String {
        let y = |t: &str| hiera_formats::yaml::load(t).unwrap();
        let s = MergeStrategy::from_value(&y(options)).unwrap();
        let mut heap = Heap::new();
        let (a, b) = (heap.alloc(&y(higher)), heap.alloc(&y(lower)));
        let mut out = String::new();
        heap.merge_traced(&s, a, b, &mut out).unwrap();
        out
    }

    /// Recorded from Puppet 8.10: core/p8-merge-debug/ko-arr (the knockout line is built with
    /// `print`, item by item, `to_s`, then ended) and mha-more (hashes merged inside arrays
    /// are one level deeper than the array; a key dest lacks is merged over, into its own
    /// dup; `Returning` ends every level that got past the nil/false shortcuts).
    #[test]
    fn merge_debug_traces_as_deep_merge_prints_them() {
        let cases = [
            (
                "{strategy: deep, knockout_prefix: '--', merge_debug: true}",
                "{l: ['--a', d, '--zz']}",
                "{l: [a, b, zz, d]}",
                r#"Source class: Hash :: Dest class: Hash
Hashes: {"l"=>["--a", "d", "--zz"]} :: {"l"=>["a", "b", "zz", "d"]}
 looping: "l" => ["--a", "d", "--zz"] :: {"l"=>["a", "b", "zz", "d"]}
 ==>merging: "l" => ["--a", "d", "--zz"] :: ["a", "b", "zz", "d"]
  Source class: Array :: Dest class: Array
  Arrays: ["--a", "d", "--zz"] :: ["a", "b", "zz", "d"]
   knocking out: --a - --zz - 
   merging arrays: ["d"] :: ["b", "d"]
  Returning ["b", "d"]
Returning {"l"=>["b", "d"]}
"#,
            ),
            (
                "{strategy: deep, merge_hash_arrays: true, merge_debug: true}",
                "{l: [{a: 1}, {b: 2}, {c: 3}]}",
                "{l: [{c: 3}]}",
                r#"Source class: Hash :: Dest class: Hash
Hashes: {"l"=>[{"a"=>1}, {"b"=>2}, {"c"=>3}]} :: {"l"=>[{"c"=>3}]}
 looping: "l" => [{"a"=>1}, {"b"=>2}, {"c"=>3}] :: {"l"=>[{"c"=>3}]}
 ==>merging: "l" => [{"a"=>1}, {"b"=>2}, {"c"=>3}] :: [{"c"=>3}]
  Source class: Array :: Dest class: Array
  Arrays: [{"a"=>1}, {"b"=>2}, {"c"=>3}] :: [{"c"=>3}]
   merging arrays: [{"a"=>1}, {"b"=>2}, {"c"=>3}] :: [{"c"=>3}]
    Source class: Hash :: Dest class: Hash
    Hashes: {"a"=>1} :: {"c"=>3}
     looping: "a" => 1 :: {"c"=>3}
     ==>merging over: "a" => 1
      Source class: Integer :: Dest class: Integer
      Others: 1 :: 1
      Returning 1
    Returning {"c"=>3, "a"=>1}
  Returning [{"c"=>3, "a"=>1}, {"b"=>2}, {"c"=>3}]
Returning {"l"=>[{"c"=>3, "a"=>1}, {"b"=>2}, {"c"=>3}]}
"#,
            ),
        ];
        for (options, higher, lower, want) in cases {
            assert_eq!(trace(options, higher, lower), want, "{options}");
        }
        // Without merge_debug, nothing is traced.
        assert_eq!(trace("{strategy: deep}", "{a: 1}", "{a: 2}"), "");
    }
}
