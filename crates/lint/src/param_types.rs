//! Rule group 3, `parameter-type-mismatch`: a value for `CLASS::PARAM` that the parameter's
//! declared type does not take, judged by the project's exact type system
//! ([`hiera_types`]) as automatic parameter lookup would bind it.
//!
//! - **Written values**, in every data file, with or without a fleet: a definition whose
//!   value is known from the text alone (no `%{…}` anywhere in it, not an eyaml ciphertext,
//!   the key not merged by `lookup_options`) is checked, after the key's `convert_to` when
//!   every `lookup_options` naming the key agrees on it.
//! - **With a fleet**: the value each node gets (the engine's lookup: merges, interpolation,
//!   `convert_to`), for the keys whose written values could not all be judged and for those a
//!   written value already fails (to name the nodes that get it). A finding points at the
//!   highest-priority file the node reads that defines the key, and names the nodes.
//!
//! `undef` as Puppet 8.10 binds it: a Hiera `~` for a parameter with a default is as if not
//! found (the default is used); without a default, `undef` is checked against the type.
//! A parameter whose type cannot be resolved ([`Param::ty`](super::schema::Param::ty) is an
//! error: an unknown type name, a recursive alias) is not judged.

use super::repo::{DataFile, Repo};
use super::schema::{strings_with_interpolations, Class, Param, Schema};
use super::Sink;
use hiera_engine::engine::{KeyPattern, Outcome};
use hiera_types::Type;
use hiera_value::value::Value;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::Path;

/// How many nodes a finding names (the rest are counted).
const NODES_NAMED: usize = 5;

const RULE: &str = "parameter-type-mismatch";

/// The `convert_to` of a key, as far as the data can tell without a node.
#[derive(Debug, Clone, PartialEq)]
enum Conversion {
    None,
    One(Value),
    /// `lookup_options` in different files disagree: only the engine can say.
    Unknown,
}

/// Every `lookup_options` entry of the repo: exact names and patterns, with their
/// `convert_to` (`Value::Null` when an entry has none).
struct Options {
    exact: HashMap<String, Vec<Value>>,
    patterns: Vec<(KeyPattern, Value)>,
}

impl Options {
    fn of(repo: &Repo) -> Options {
        let mut exact: HashMap<String, Vec<Value>> = HashMap::new();
        let mut patterns = Vec::new();
        for f in &repo.files {
            let Some(Value::Hash(lo)) = f.data.get(&Value::str("lookup_options")) else {
                continue;
            };
            for (name, opts) in lo {
                let Some(name) = name.as_str() else { continue };
                let convert = opts
                    .as_hash()
                    .and_then(|h| h.get(&Value::str("convert_to")))
                    .cloned()
                    .unwrap_or(Value::Null);
                if name.starts_with('^') {
                    if let Ok(re) = KeyPattern::new(name) {
                        patterns.push((re, convert));
                    }
                } else {
                    exact.entry(name.to_string()).or_default().push(convert);
                }
            }
        }
        Options { exact, patterns }
    }

    /// An exact entry wins over patterns, and Puppet takes the first pattern that matches
    /// in its layer's order, but which files a node reads decides which entries are there:
    /// the conversion is known only when every entry that can apply agrees.
    fn conversion(&self, key: &str) -> Conversion {
        let candidates = self.exact.get(key).into_iter().flatten().chain(
            self.patterns
                .iter()
                .filter(|(re, _)| re.is_match(key))
                .map(|(_, c)| c),
        );
        let mut distinct: Vec<&Value> = Vec::new();
        for c in candidates {
            if !distinct.contains(&c) {
                distinct.push(c);
            }
        }
        match distinct.as_slice() {
            [] => Conversion::None,
            [Value::Null] => Conversion::None,
            [one] => Conversion::One((*one).clone()),
            _ => Conversion::Unknown,
        }
    }
}

/// What a value does against a parameter: nothing (taken, or the default used), or
/// Puppet's mismatch lines.
fn judge(class: &Class, param: &Param, ty: &Type, value: &Value) -> Option<Vec<String>> {
    // A Hiera `~` is as if not found when there is a default (verified with Puppet 8.10).
    if value.is_null() && param.has_default() {
        return None;
    }
    hiera_types::take_regex_limit_error();
    let ok = ty.is_instance(value);
    // A Pattern that met the backtracking limit has no answer: not judged.
    if hiera_types::take_regex_limit_error().is_some() || ok {
        return None;
    }
    let subject = format!("{}: parameter '{}'", class.reference(), param.name);
    let lines = hiera_types::describe_parameter_mismatch(&subject, ty, value);
    (!lines.is_empty()).then_some(lines)
}

/// A short description of a written value: `'yes' (a String)`, `a Hash`, `~ (undef)`.
fn written(value: &Value) -> String {
    let class = match value {
        Value::Null => return "~ (undef)".to_string(),
        Value::Bool(_) => "a Boolean",
        Value::Int(_) | Value::BigInt(_) => "an Integer",
        Value::Float(_) => "a Float",
        Value::String(_) => "a String",
        Value::Array(_) => "an Array",
        Value::Hash(_) => "a Hash",
        Value::Sensitive(_) => return "a Sensitive value".to_string(),
        Value::Object(o) => return format!("a {}", o.type_name),
    };
    let text = match value {
        Value::String(s) => Some(format!("'{s}'")),
        Value::Bool(b) => Some(b.to_string()),
        Value::Int(i) => Some(i.to_string()),
        Value::Float(f) => Some(hiera_value::ruby::float_to_s(*f)),
        _ => None,
    };
    match text {
        Some(t) if t.chars().count() <= 40 => format!("{t} ({class})"),
        _ => class.to_string(),
    }
}

/// How many characters of a declaration a message quotes.
const DECLARATION_QUOTED: usize = 100;

fn declared(sink: &Sink, class: &Class, param: &Param) -> String {
    let mut signature = param.signature();
    if signature.chars().count() > DECLARATION_QUOTED {
        signature = signature
            .chars()
            .take(DECLARATION_QUOTED)
            .collect::<String>()
            + "…";
    }
    format!(
        "'{signature}' ({}:{}:{})",
        sink.display(&class.file),
        param.span.start.line,
        param.span.start.column
    )
}

/// The parameter a data key of `f` feeds, if automatic parameter lookup reads it there.
fn param_for<'s>(
    repo: &Repo,
    schema: &'s Schema,
    f: &DataFile,
    key: &str,
) -> Option<(&'s Class, &'s Param, &'s Type)> {
    if key == "lookup_options" || key.starts_with(':') {
        return None;
    }
    // A module's data outside its namespace is ignored by Puppet.
    if let Some(m) = f.module(repo) {
        if !key.starts_with(&format!("{m}::")) {
            return None;
        }
    }
    let (class, param) = schema.param(key)?;
    let ty = param.ty.as_ref().ok()?;
    Some((class, param, ty))
}

/// Whether a written value is known without a node: no interpolation, no ciphertext.
fn literal(f: &DataFile, v: &Value) -> bool {
    let mut strings = Vec::new();
    strings_with_interpolations(v, &mut strings, 0);
    if !strings.is_empty() {
        return false;
    }
    f.eyaml.is_none() || !has_ciphertext(v, 0)
}

fn has_ciphertext(v: &Value, depth: usize) -> bool {
    if depth > hiera_value::limits::MAX_VALUE_DEPTH {
        return true;
    }
    match v {
        Value::String(s) => s.contains("ENC["),
        Value::Array(a) => a.iter().any(|e| has_ciphertext(e, depth + 1)),
        Value::Hash(h) => h.values().any(|e| has_ciphertext(e, depth + 1)),
        _ => false,
    }
}

/// The findings in the making: of written values by (file, key), and of the values nodes
/// get by (file, key, Puppet's lines).
#[derive(Default)]
struct Mismatches {
    written: BTreeMap<(usize, String), Mismatch>,
    by_node: BTreeMap<(usize, String, String), Mismatch>,
}

/// A finding in the making: where, what, and the fleet's nodes that get it.
struct Mismatch {
    message: String,
    nodes: Vec<String>,
    count: usize,
}

/// The rule between the written values and the fleet: what was found in the data files,
/// and the keys whose values each node of the fleet is to be judged on (its pass runs
/// inside the fleet rules' pass, so that the fleet is read once, one unit at a time).
pub(crate) struct Pending<'s> {
    found: Mismatches,
    /// Each key to look up for every node, with its parameter and the parameter's type.
    params: Vec<(String, &'s Class, &'s Param, &'s Type)>,
    /// A node's lookup reached a `command` level without --allow-exec: the nodes from
    /// there on are not judged.
    stopped: bool,
    /// Whether some node was judged (the fleet has nodes).
    with_fleet: bool,
    /// The keys lookup_options merge ([`Repo::merged_keys`]), which the fleet's checks read
    /// too.
    pub(crate) merged: HashSet<String>,
    /// Values of the nodes not judged: they hold an opaque eyaml secret (no private key).
    pub(crate) opaque: usize,
}

/// What one node's values gave: each mismatch, by where it comes from.
#[derive(Debug, Default)]
pub(crate) struct NodeNotes {
    notes: Vec<Note>,
    /// Its lookups reached a `command` level and did not run it.
    refused: bool,
    /// Values not judged: they hold an opaque eyaml secret, whose type only its plaintext
    /// tells.
    opaque: usize,
}

impl NodeNotes {
    /// Whether counting it changes anything (a mismatch, a refusal, a value not judged).
    pub(crate) fn matters(&self) -> bool {
        !self.notes.is_empty() || self.refused || self.opaque > 0
    }
}

/// One mismatch of a node's value: a written value's (file, key), or a value only the node
/// gets (file, key, Puppet's lines, and which parameter).
#[derive(Debug)]
enum Note {
    Written(usize, String),
    ByNode(usize, String, String, usize),
}

/// The written values: every data file's definitions the text alone can judge, and which
/// keys the fleet's nodes are to be judged on.
pub(crate) fn written_values<'s>(repo: &Repo, schema: &'s Schema, sink: &Sink) -> Pending<'s> {
    let merged: HashSet<String> = repo.merged_keys().into_iter().collect();
    let options = Options::of(repo);
    // (file, key) -> the written value's mismatch.
    let mut found = Mismatches::default();
    // Keys some definition of which only a node can judge.
    let mut needs_nodes: HashSet<String> = HashSet::new();
    for (fi, f) in repo.files.iter().enumerate() {
        for (k, v) in &f.data {
            let Some(key) = k.as_str() else { continue };
            let Some((class, param, ty)) = param_for(repo, schema, f, key) else {
                continue;
            };
            if merged.contains(key) || !literal(f, v) {
                needs_nodes.insert(key.to_string());
                continue;
            }
            let (value, converted) = match options.conversion(key) {
                Conversion::None => (v.clone(), None),
                Conversion::One(to) => match hiera_types::convert(v.clone(), &to) {
                    Ok(c) => (c, Some(to)),
                    // The lookup itself fails; that is not this rule's to say.
                    Err(_) => continue,
                },
                Conversion::Unknown => {
                    needs_nodes.insert(key.to_string());
                    continue;
                }
            };
            let Some(lines) = judge(class, param, ty, &value) else {
                continue;
            };
            let after = match &converted {
                Some(to) => format!(" after convert_to {}", hiera_types::convert_args_string(to)),
                None => String::new(),
            };
            let is_undef = value.is_null();
            let message = if is_undef {
                format!(
                    "'{key}' is ~ (undef), and {} has no default to use instead: Puppet fails every node that gets it: {}",
                    declared(sink, class, param),
                    lines.join("; ")
                )
            } else {
                format!(
                    "'{key}' is {}{after}, which {} does not take: Puppet fails every node that gets it: {}",
                    written(v),
                    declared(sink, class, param),
                    lines.join("; ")
                )
            };
            found.written.insert(
                (fi, key.to_string()),
                Mismatch {
                    message,
                    nodes: Vec::new(),
                    count: 0,
                },
            );
        }
    }
    let mut keys: Vec<String> = needs_nodes.into_iter().collect();
    keys.extend(found.written.keys().map(|(_, k)| k.clone()));
    keys.sort();
    keys.dedup();
    let params = keys
        .into_iter()
        .filter_map(|k| {
            let (c, p) = schema.param(&k)?;
            let ty = p.ty.as_ref().ok()?;
            Some((k, c, p, ty))
        })
        .collect();
    Pending {
        found,
        params,
        stopped: false,
        with_fleet: false,
        merged,
        opaque: 0,
    }
}

impl Pending<'_> {
    /// Looks the keys up for one node (`session`: the node's, on the fleet's workspace), as
    /// automatic parameter lookup does: the values the parameter does not take, by the
    /// file the value comes from. Runs on the fleet rules' workers.
    pub(crate) fn judge_node(
        &self,
        repo: &Repo,
        index: &HashMap<&Path, usize>,
        session: &mut hiera_engine::engine::Session,
    ) -> NodeNotes {
        let mut out = NodeNotes::default();
        let mut reached: Option<Vec<usize>> = None;
        for (pi, (key, class, param, ty)) in self.params.iter().enumerate() {
            let result = session.lookup(std::slice::from_ref(key), None);
            // A `command` level without --allow-exec: the values of nodes are not judged
            // (the merged keys' lookups of `lookup-fails` say so; this rule must not fail a
            // lint that passed before it existed).
            if session.refused_exec().is_some() {
                out.refused = true;
                return out;
            }
            // Not found: the default (or Puppet's "expects a value"); a failing lookup is
            // `lookup-fails`'s.
            let Ok(Outcome::Found(value)) = result else {
                continue;
            };
            // An opaque secret (no private key): its type is its plaintext's. Counted, not
            // judged (a stand-in is a String to the type system).
            if hiera_engine::backend::eyaml::contains_opaque(&value) {
                out.opaque += 1;
                continue;
            }
            let Some(lines) = judge(class, param, ty, &value) else {
                continue;
            };
            let list = reached.get_or_insert_with(|| repo.reached(index, session));
            let Some(&fi) = list
                .iter()
                .find(|&&fi| repo.files[fi].data.contains_key(&Value::str(key.as_str())))
            else {
                continue;
            };
            if self.found.written.contains_key(&(fi, key.clone())) {
                out.notes.push(Note::Written(fi, key.clone()));
            } else {
                // The value a node gets may be what eyaml decrypted: never in a finding.
                let lines = lines.join("; ");
                let lines = match session.redactor() {
                    Some(r) => r.text(&lines).into_owned(),
                    None => lines,
                };
                out.notes.push(Note::ByNode(fi, key.clone(), lines, pi));
            }
        }
        out
    }

    /// Whether any node is to be judged.
    pub(crate) fn judges_nodes(&self) -> bool {
        !self.params.is_empty()
    }

    /// Tells that the fleet has `nodes` nodes (the findings then say which of them get a
    /// value).
    pub(crate) fn fleet_of(&mut self, nodes: usize) {
        self.with_fleet = nodes > 0;
    }

    /// Counts one node's mismatches, in node order; after a node whose lookups were
    /// refused, no other.
    pub(crate) fn add_node(&mut self, name: &str, node: NodeNotes, sink: &Sink) {
        if self.stopped {
            return;
        }
        self.opaque += node.opaque;
        for n in node.notes {
            match n {
                Note::Written(fi, key) => {
                    if let Some(m) = self.found.written.get_mut(&(fi, key)) {
                        note(m, name);
                    }
                }
                Note::ByNode(fi, key, lines, pi) => {
                    let (_, class, param, _) = self.params[pi];
                    let m = self
                        .found
                        .by_node
                        .entry((fi, key, lines.clone()))
                        .or_insert_with(|| Mismatch {
                            message: format!(
                                "is one {} does not take: Puppet fails: {lines}",
                                declared(sink, class, param)
                            ),
                            nodes: Vec::new(),
                            count: 0,
                        });
                    note(m, name);
                }
            }
        }
        self.stopped = node.refused;
    }

    /// The findings: written values (with the nodes that get them, given a fleet) and the
    /// values only nodes get.
    pub(crate) fn finish(self, repo: &Repo, sink: &mut Sink) {
        sink.opaque_skipped += self.opaque;
        // After a refused node no other was counted: no count is told.
        let with_fleet = self.with_fleet && !self.stopped;
        for ((fi, key), m) in self.found.written {
            let f = &repo.files[fi];
            let nodes = match (with_fleet, m.count) {
                (false, _) => String::new(),
                (true, 0) => " (no node of the fleet gets this value)".to_string(),
                (true, n) => format!(" ({} of the fleet get{} it)", who(&m.nodes, n), s_if(n)),
            };
            sink.add(
                &f.path,
                f.key_region(&key),
                RULE,
                format!("{}{nodes}", m.message),
            );
        }
        for ((fi, key, _), m) in self.found.by_node {
            let f = &repo.files[fi];
            sink.add(
                &f.path,
                f.key_region(&key),
                RULE,
                format!(
                    "the value of '{key}' that {} of the fleet get{} from here (after merges and interpolation) {}",
                    who(&m.nodes, m.count),
                    s_if(m.count),
                    m.message
                ),
            );
        }
    }
}

/// `node web01`, `3 nodes (a, b, c)`, `12 nodes (a, b, c, d, e and 7 more)`.
fn who(nodes: &[String], count: usize) -> String {
    let mut names = nodes.join(", ");
    if count > nodes.len() {
        names.push_str(&format!(" and {} more", count - nodes.len()));
    }
    if count == 1 {
        format!("node {names}")
    } else {
        format!("{count} nodes ({names})")
    }
}

/// The verb's `s` for a subject of `n` nodes.
fn s_if(n: usize) -> &'static str {
    if n == 1 {
        "s"
    } else {
        ""
    }
}

fn note(m: &mut Mismatch, node: &str) {
    m.count += 1;
    if m.nodes.len() < NODES_NAMED {
        m.nodes.push(node.to_string());
    }
}
