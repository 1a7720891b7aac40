//! `hiera-lookup where KEY`: every definition of a key a node can reach, with its file, line
//! and column, its value and its role in the answer; the definitions it cannot reach; and the
//! lookup_options that apply.
//!
//! Roles come from the engine itself: the places searched are the engine's own resolved
//! hierarchy, the values that make the answer are those the real lookup found on its way,
//! so the definition `where` says wins is the one `hiera-lookup KEY` answers with. Positions
//! come from the parsers ([`hiera_formats::position`]).
//!
//! [`Reporter::report`] builds the [`Report`] of one node; [`fleet`] adds up the reports of many
//! nodes; [`render`] prints either as aligned text or JSON.

pub mod fleet;
pub mod render;
mod scan;

use crate::backend::DataHash;
use crate::config::FunctionKind;
use crate::engine::reach::{option_applies, Reached};
pub use crate::engine::reach::{LayerName, MergeSource};
use crate::error::{Error, Result};
use crate::key::{LookupKey, Segment};
use crate::merge::MergeStrategy;
use crate::scope::Strict;
use crate::store::DataFiles;
use crate::{Outcome, Session};
use hiera_formats::position::{positions_of, DataFormat, Pos, PosNode};
use hiera_value::value::Value;
use std::collections::HashMap;
use std::sync::Arc;

/// What one definition does in the lookup.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Role {
    /// First found: the answer comes from here.
    Wins,
    /// A merge: this value is merged into the answer.
    Contributes,
    /// Searched (or searchable) by the lookup, but a higher-priority definition decides.
    Shadowed,
    /// A merge with a knockout prefix: a higher-priority definition removed this one.
    KnockedOut,
    /// In a data file this node's hierarchy never reaches.
    NotReached,
}

impl Role {
    /// The role as the text and JSON reports name it.
    pub fn name(self) -> &'static str {
        match self {
            Role::Wins => "wins",
            Role::Contributes => "contributes",
            Role::Shadowed => "shadowed",
            Role::KnockedOut => "knocked out",
            Role::NotReached => "not reached",
        }
    }
}

/// One place a key (or, for a dotted key, its root or sub-key) is defined.
#[derive(Debug, Clone, PartialEq)]
pub struct Definition {
    /// What the definition does for this node.
    pub role: Role,
    /// The layer whose data holds it.
    pub layer: LayerName,
    /// The hierarchy entry (level) searched, for reached definitions.
    pub level: Option<String>,
    /// From a module's default_hierarchy.
    pub default_hierarchy: bool,
    /// 1-based place in the lookup order of the node's locations.
    pub order: Option<usize>,
    /// The data file (absolute), or the location/function of a backend without files.
    pub file: String,
    /// Where the definition is written: the deepest part of the key the file holds; for a
    /// path through a YAML alias, the alias site.
    pub pos: Option<Pos>,
    /// For an alias or merge key: where the aliased text is.
    pub anchor: Option<Pos>,
    /// The part of the key defined here (`root`, or `root.sub` for a dotted key).
    pub path: String,
    /// The whole key (every segment of a dotted key) is defined here.
    pub complete: bool,
    /// The value at `path`: the engine's (interpolated) where the lookup found it, else as
    /// the backend reads it from the file.
    pub value: Value,
    /// More about the role (what a knockout removed, why nothing is found, …).
    pub note: Option<String>,
    /// The value as the file writes it, when that is an interpolation the engine resolved
    /// (`%{alias('x')}`, `%{facts.x}`): `value` is the resolved one.
    pub written: Option<String>,
}

impl Definition {
    /// The definition of `lk` in a file whose value at the key's root is `root_value`: the
    /// deepest part of the key it holds, and the value there (no position, level or order).
    fn of(
        lk: &LookupKey,
        root_value: &Value,
        role: Role,
        layer: LayerName,
        file: String,
    ) -> Definition {
        let (len, value) = deepest(root_value, &lk.segments);
        Definition {
            role,
            layer,
            level: None,
            default_hierarchy: false,
            order: None,
            file,
            pos: None,
            anchor: None,
            path: key_path(lk, len),
            complete: len == lk.segments.len(),
            value,
            note: None,
            written: None,
        }
    }

    /// How many segments of the key `path` has.
    fn path_len(&self, lk: &LookupKey) -> usize {
        (0..=lk.segments.len())
            .find(|&n| key_path(lk, n) == self.path)
            .unwrap_or(0)
    }
}

/// A lookup_options entry that applies to the key.
#[derive(Debug, Clone, PartialEq)]
pub struct OptionEntry {
    /// The layer whose data holds it.
    pub layer: LayerName,
    /// The data file (absolute).
    pub file: String,
    /// Where the entry's name is written.
    pub pos: Option<Pos>,
    /// The lookup_options key: the key's root or a `^pattern`.
    pub name: String,
    /// The entry's options (`merge`, `convert_to` …).
    pub value: Value,
    /// The node reaches the file, and no higher-priority file sets the same name.
    pub applies: bool,
    /// The node's hierarchy names the file.
    pub reached: bool,
}

/// The answer the lookup gives.
#[derive(Debug, Clone, PartialEq)]
pub enum Answer {
    /// The value the lookup answers.
    Found(Value),
    /// Nothing found.
    NotFound,
    /// The lookup's error message.
    Error(String),
}

/// Everything `where` knows about one key for one node.
#[derive(Debug, Clone, PartialEq)]
pub struct Report {
    /// The key asked for.
    pub key: String,
    /// The node (its clientcert, else the name given).
    pub node: Option<String>,
    /// What the lookup answers.
    pub answer: Answer,
    /// The merge the lookup used.
    pub merge: MergeStrategy,
    /// The merge's name (`first`, `unique`, `hash`, `deep` …).
    pub strategy: String,
    /// Deep-merge options, as `--explain` shows them.
    pub strategy_options: Option<Value>,
    /// Where the merge came from.
    pub source: MergeSource,
    /// The lookup_options the engine applies to the key (merged across layers).
    pub options: Option<Value>,
    /// The lookup_options entries that apply to the key, with the one the engine applies.
    pub option_entries: Vec<OptionEntry>,
    /// Every definition: those the node reaches in lookup order, then those it does not.
    pub definitions: Vec<Definition>,
    /// Locations searched, in lookup order.
    pub locations: usize,
    /// Files that could not be read for positions or unreached definitions.
    pub warnings: Vec<String>,
}

impl Report {
    /// Whether the key digs into its value (a dotted key such as `a.b.0`): definitions may
    /// then hold only part of it.
    pub fn dotted(&self) -> bool {
        LookupKey::parse(&self.key).is_ok_and(|k| !k.segments.is_empty())
    }
}

/// What to report.
#[derive(Debug, Clone, Default)]
pub struct Request {
    /// The key (dotted keys dig into the value).
    pub key: String,
    /// `--merge`.
    pub merge: Option<MergeStrategy>,
    /// Leave out definitions the node does not reach.
    pub reachable_only: bool,
}

/// Builds reports, keeping the data files, positions and datadir listings it reads for the
/// next report (of another key or another node): one reporter per question (a file added
/// to a datadir while it lives is not listed).
pub struct Reporter {
    files: DataFiles,
    strict: Strict,
    positions: HashMap<String, Option<Arc<PosNode>>>,
    listings: scan::Listings,
}

impl Reporter {
    /// `files` should be the sessions' data file store, so that each file is parsed once;
    /// `strict` their `--strict`.
    pub fn new(files: DataFiles, strict: Strict) -> Reporter {
        Reporter {
            files,
            strict,
            positions: HashMap::new(),
            listings: Default::default(),
        }
    }

    /// The report of `request.key` for the session's node.
    pub fn report(
        &mut self,
        session: &mut Session,
        request: &Request,
        node: Option<String>,
    ) -> Result<Report> {
        let mut ctx = Context {
            files: &self.files,
            strict: self.strict,
            positions: &mut self.positions,
            listings: &mut self.listings,
            warnings: Vec::new(),
        };
        report(&mut ctx, session, request, node).map_err(|e| session.located(e))
    }
}

fn report(
    ctx: &mut Context,
    session: &mut Session,
    request: &Request,
    node: Option<String>,
) -> Result<Report> {
    let lk = LookupKey::parse(&request.key)?;
    // The node's name: its clientcert, else the caller's.
    let node = match session.scope_variable("clientcert") {
        Some(Value::String(c)) => Some(c.clone()),
        _ => node,
    };
    let reachable = match session.reachable(&request.key) {
        Ok(r) => r,
        // A configuration the lookup refuses: its error, as the lookup words it.
        Err(e) => {
            let trace = session.trace_lookup(&request.key, request.merge.as_ref(), &[])?;
            return Err(trace.outcome.err().unwrap_or(e));
        }
    };
    let trace = session.trace_lookup(&request.key, request.merge.as_ref(), &reachable)?;
    let answer = match &trace.outcome {
        Ok(Outcome::Found(v)) => Answer::Found(v.clone()),
        Ok(Outcome::NotFound) => Answer::NotFound,
        Err(e) => Answer::Error(e.to_string()),
    };
    let mut definitions = Vec::new();
    // Notes for files read twice: (definition, note).
    let mut again: Vec<(usize, String)> = Vec::new();
    let found_at: HashMap<usize, &Value> = trace
        .found
        .iter()
        .filter_map(|f| f.reached.map(|i| (i, &f.value)))
        .collect();
    for (i, r) in reachable.iter().enumerate() {
        let found = found_at.get(&i).copied();
        let file = match &r.location {
            Some(l) => l.location.clone(),
            None => format!("{} '{}'", r.kind.tag(), r.function),
        };
        // The value at the root: the engine's where it found one, else the file's.
        let (root_value, file_backed) = match found {
            Some(v) => (Some(v.clone()), data_format(r).is_some()),
            None => match (&r.location, data_format(r)) {
                (Some(l), Some(_)) if l.exists && !l.uri => {
                    (ctx.raw_root(r, &l.location, &lk.root), true)
                }
                _ => (None, false),
            },
        };
        let Some(root_value) = root_value else {
            continue;
        };
        let role = match found {
            Some(_) if trace.strategy.is_first() => Role::Wins,
            Some(_) => Role::Contributes,
            None => Role::Shadowed,
        };
        let mut d = Definition::of(&lk, &root_value, role, r.layer.clone(), file);
        // A file the hierarchy names twice (`os/%{os.name}` and `os/%{os.family}` on a node
        // where both are Debian) is one definition: the later place is a note on it.
        // Only a location is read again: two levels without one (a lookup_key function
        // named the same, with other options) are two sources.
        let read_again = r
            .location
            .is_some()
            .then(|| {
                definitions
                    .iter()
                    .position(|p: &Definition| p.file == d.file && p.path == d.path)
            })
            .flatten();
        if let Some(first) = read_again {
            again.push((
                first,
                format!("read again as location #{} (level '{}')", i + 1, r.entry),
            ));
            continue;
        }
        if file_backed {
            let len = d.path_len(&lk);
            (d.pos, d.anchor) = ctx.locate(r, &d.file, &lk, len);
            if found.is_some() {
                // What the file writes, where the engine interpolated it.
                if let Some(raw) = ctx.raw_root(r, &d.file, &lk.root) {
                    let (_, raw) = deepest(&raw, &lk.segments[..len]);
                    if let Value::String(s) = raw {
                        if s.contains("%{") && Value::str(s.as_str()) != d.value {
                            d.written = Some(s);
                        }
                    }
                }
            }
        }
        definitions.push(Definition {
            level: Some(r.entry.clone()),
            default_hierarchy: r.default_hierarchy,
            order: Some(i + 1),
            ..d
        });
    }
    // Values the engine found where no listed location is (none expected): still shown.
    for f in trace.found.iter().filter(|f| f.reached.is_none()) {
        let role = if trace.strategy.is_first() {
            Role::Wins
        } else {
            Role::Contributes
        };
        let file = f.location.clone().unwrap_or_default();
        definitions.push(Definition::of(
            &lk,
            &f.value,
            role,
            LayerName::Environment,
            file,
        ));
    }
    explain_roles(&mut definitions, &trace.strategy, &lk, &answer);
    for (i, note) in again {
        let d = &mut definitions[i];
        d.note = Some(match d.note.take() {
            Some(n) => format!("{n}; {note}"),
            None => note,
        });
    }
    let mut option_entries = ctx.option_entries(&reachable, &lk.root)?;
    mark_applying(&mut option_entries, trace.options.as_ref());
    if !request.reachable_only {
        let reached: std::collections::HashSet<&str> = reachable
            .iter()
            .filter_map(|r| r.location.as_ref().map(|l| l.location.as_str()))
            .collect();
        for (r, path) in
            scan::unreached_files(&reachable, &reached, ctx.listings, &mut ctx.warnings)
        {
            let Some(root_value) = ctx.raw_root(r, &path, &lk.root) else {
                continue;
            };
            let mut d = Definition::of(
                &lk,
                &root_value,
                Role::NotReached,
                r.layer.clone(),
                path.to_string(),
            );
            let len = d.path_len(&lk);
            (d.pos, d.anchor) = ctx.locate(r, &d.file, &lk, len);
            d.default_hierarchy = r.default_hierarchy;
            definitions.push(d);
        }
    }
    Ok(Report {
        key: request.key.clone(),
        node,
        answer,
        merge: trace.strategy.clone(),
        strategy: trace.strategy.name().to_string(),
        strategy_options: trace.strategy.options(),
        source: trace.source,
        options: trace.options,
        option_entries,
        definitions,
        locations: reachable.len(),
        warnings: std::mem::take(&mut ctx.warnings),
    })
}

/// Notes on the roles: why a winner gives no answer, and what a knockout removed.
fn explain_roles(
    defs: &mut [Definition],
    strategy: &MergeStrategy,
    lk: &LookupKey,
    answer: &Answer,
) {
    let subkey = lk
        .segments
        .iter()
        .map(|s| s.to_string())
        .collect::<Vec<_>>()
        .join(".");
    for d in defs.iter_mut() {
        if matches!(d.role, Role::Wins) && !d.complete {
            d.note = Some(format!(
                "has no '{subkey}' here, so the lookup finds nothing"
            ));
        }
        if matches!(d.role, Role::Contributes) && !d.complete {
            d.note = Some(format!("no '{subkey}' here"));
        }
    }
    let knockout = match strategy {
        MergeStrategy::Deep(o)
        | MergeStrategy::ReverseDeep(o)
        | MergeStrategy::UnconstrainedDeep(o) => o.knockout_prefix.is_some(),
        _ => false,
    };
    let Answer::Found(result) = answer else {
        return;
    };
    if !knockout {
        return;
    }
    // Deep merges only ever remove entries through a knockout: what a contributor holds at
    // the key and the answer lacks was knocked out by a higher-priority definition.
    let contributors: Vec<usize> = (0..defs.len())
        .filter(|&i| defs[i].role == Role::Contributes && defs[i].complete)
        .collect();
    for &i in contributors.iter().skip(1) {
        let d = &mut defs[i];
        let (gone, total) = missing_parts(&d.value, result);
        if total > 0 && gone.len() == total {
            d.role = Role::KnockedOut;
        } else if !gone.is_empty() {
            d.note = Some(format!("knocked out: {}", gone.join(", ")));
        }
    }
}

/// The parts of `v` (hash keys, array items; the value itself for a scalar) that `result`
/// does not hold, as text, and how many parts there are.
fn missing_parts(v: &Value, result: &Value) -> (Vec<String>, usize) {
    match (v, result) {
        (Value::Hash(h), Value::Hash(r)) => (
            h.keys()
                .filter(|k| !r.contains_key(*k))
                .map(hiera_value::text::inspect)
                .collect(),
            h.len(),
        ),
        (Value::Array(a), Value::Array(r)) => {
            let items: Vec<&Value> = a.iter().filter(|x| !matches!(x, Value::Hash(_))).collect();
            (
                items
                    .iter()
                    .filter(|x| !r.contains(x))
                    .map(|x| hiera_value::text::inspect(x))
                    .collect(),
                items.len(),
            )
        }
        (Value::Array(_) | Value::Hash(_), _) => (vec![hiera_value::text::inspect(v)], 1),
        _ => (Vec::new(), 0),
    }
}

/// Of the entries that are the first to set their name, the one the engine applies: its
/// value is the key's effective options, an exact name before a pattern.
fn mark_applying(entries: &mut [OptionEntry], effective: Option<&Value>) {
    let candidates: Vec<usize> = (0..entries.len())
        .filter(|&i| entries[i].applies && Some(&entries[i].value) == effective)
        .collect();
    let chosen = candidates
        .iter()
        .copied()
        .find(|&i| !entries[i].name.starts_with('^'))
        .or_else(|| candidates.first().copied());
    for (i, e) in entries.iter_mut().enumerate() {
        e.applies = Some(i) == chosen;
    }
}

/// How many segments of `segments` `value` holds, and the value there.
fn deepest(value: &Value, segments: &[Segment]) -> (usize, Value) {
    let mut v = value;
    for (n, seg) in segments.iter().enumerate() {
        let next = match (v, seg) {
            (Value::Array(a), Segment::Index(i)) => usize::try_from(*i).ok().and_then(|i| a.get(i)),
            (Value::Hash(h), seg) => h.get(&seg.to_value()),
            _ => None,
        };
        match next {
            Some(x) => v = x,
            None => return (n, v.clone()),
        }
    }
    (segments.len(), v.clone())
}

fn key_path(lk: &LookupKey, len: usize) -> String {
    let mut s = lk.root.clone();
    for seg in &lk.segments[..len] {
        s.push('.');
        s.push_str(&seg.to_string());
    }
    s
}

/// The position format of a reached location's backend (`None`: no data file).
fn data_format(r: &Reached) -> Option<DataFormat> {
    match r.kind {
        FunctionKind::DataHash | FunctionKind::LookupKey => DataFormat::of_function(&r.function),
        _ => None,
    }
}

struct Context<'a> {
    files: &'a DataFiles,
    strict: Strict,
    positions: &'a mut HashMap<String, Option<Arc<PosNode>>>,
    listings: &'a mut scan::Listings,
    warnings: Vec<String>,
}

impl Context<'_> {
    /// The data hash a location's backend reads, or `None` (with a warning) when it fails.
    fn hash(&mut self, r: &Reached, path: &str) -> Option<Arc<DataHash>> {
        let format = data_format(r)?;
        let mut w = Vec::new();
        match self.files.data_hash(format, path, self.strict, &mut w) {
            Ok(h) => Some(h),
            Err(e) => {
                self.warn(format!("{e}"));
                None
            }
        }
    }

    fn raw_root(&mut self, r: &Reached, path: &str, root: &str) -> Option<Value> {
        match self.hash(r, path)?.get(root) {
            Ok(v) => v,
            Err(e) => {
                self.warn(e.to_string());
                None
            }
        }
    }

    fn warn(&mut self, w: String) {
        if !self.warnings.contains(&w) {
            self.warnings.push(w);
        }
    }

    fn tree(&mut self, r: &Reached, path: &str) -> Option<Arc<PosNode>> {
        if let Some(t) = self.positions.get(path) {
            return t.clone();
        }
        let format = data_format(r)?;
        // Through the sessions' file system: a workspace's overlays (an editor's unsaved
        // buffer) are placed where the lookup read them.
        let tree = match self.files.fs().read(std::path::Path::new(path)) {
            Ok(bytes) => match positions_of(format, &bytes) {
                Ok(t) => t.map(Arc::new),
                Err(e) => {
                    self.warn(format!("{path}: {e}"));
                    None
                }
            },
            Err(e) => {
                self.warn(format!("{path}: {e}"));
                None
            }
        };
        self.positions.insert(path.to_string(), tree.clone());
        tree
    }

    /// Where the first `len` segments of the key are written in `path` (the deepest part the
    /// parser can place, at least the root).
    fn locate(
        &mut self,
        r: &Reached,
        path: &str,
        lk: &LookupKey,
        len: usize,
    ) -> (Option<Pos>, Option<Pos>) {
        let Some(tree) = self.tree(r, path) else {
            return (None, None);
        };
        let full: Vec<Value> = std::iter::once(Value::str(lk.root.as_str()))
            .chain(lk.segments[..len].iter().map(Segment::to_value))
            .collect();
        (1..=full.len())
            .rev()
            .find_map(|n| tree.locate(&full[..n]))
            .map_or((None, None), |l| (Some(l.pos), l.anchor))
    }

    /// The lookup_options entries of every reachable data file that apply to `root`, in
    /// lookup order; a name set again at lower priority does not apply.
    fn option_entries(&mut self, reachable: &[Reached], root: &str) -> Result<Vec<OptionEntry>> {
        let mut out: Vec<OptionEntry> = Vec::new();
        let mut seen: std::collections::HashSet<(String, String)> = Default::default();
        for r in reachable {
            let Some(l) = &r.location else { continue };
            if !l.exists || l.uri || data_format(r).is_none() {
                continue;
            }
            if !seen.insert((l.location.clone(), r.function.clone())) {
                continue;
            }
            let Some(hash) = self.hash(r, &l.location) else {
                continue;
            };
            let Ok(Some(Value::Hash(opts))) = hash.get("lookup_options") else {
                continue;
            };
            for (k, v) in opts.iter() {
                let Some(name) = k.as_str() else { continue };
                if !option_applies(name, root).map_err(|e| Error::run(e.to_string()))? {
                    continue;
                }
                let pos = self.tree(r, &l.location).and_then(|t| {
                    t.locate(&[Value::str("lookup_options"), k.clone()])
                        .map(|l| l.pos)
                });
                let applies = !out.iter().any(|o| o.name == name);
                out.push(OptionEntry {
                    layer: r.layer.clone(),
                    file: l.location.clone(),
                    pos,
                    name: name.to_string(),
                    value: v.clone(),
                    applies,
                    reached: true,
                });
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests;
