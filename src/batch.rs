//! Batch mode: many nodes × many keys in one process. Data files are parsed once and
//! shared; nodes are answered in parallel; results come out in node order.

use crate::answer::{Answer, Finish, Format};
use crate::backend::DataFiles;
use crate::engine::{Layers, Session, Settings};
use crate::error::Error;
use crate::merge::MergeStrategy;
use crate::scope::Scope;
use crate::value::{Map, Value};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// One node of a batch.
#[derive(Debug, Clone)]
pub struct Node {
    /// The node's name: its certname, else its `clientcert` fact, else the facts file's name.
    pub name: String,
    /// Where the node's facts came from, as a JSON Lines field: `("facts", file)`,
    /// `("puppetdb", certname)`; every answer line of the node carries it.
    pub source: Option<(String, String)>,
    /// The node's variables (facts, `$trusted`, server facts).
    pub scope: Scope,
    /// Why the node's facts could not be read: every answer of the node is this error (the
    /// batch goes on with the other nodes).
    pub facts_error: Option<Error>,
}

/// Which keys to answer for every node.
#[derive(Debug, Clone)]
pub enum Keys {
    /// These keys, each looked up on its own.
    List(Vec<String>),
    /// Every key the node can see in its data (`--all`).
    All,
}

/// The answer for one node and key.
#[derive(Debug, Clone)]
pub struct Record {
    /// The node's name ([`Node::name`]).
    pub node: String,
    /// The node's facts source (see [`Node::source`]).
    pub source: Option<(String, String)>,
    /// The key looked up.
    pub key: String,
    /// The answer after `--default` and `--type`, or the error a single lookup would give
    /// (a value that cannot be rendered is an error too).
    pub outcome: Result<Answer, Error>,
    /// With `--render-as`: the exact text a single lookup prints.
    pub rendered: Option<String>,
}

impl Record {
    /// The JSON Lines form: `{"node":…,"key":…,"found":true,"value":…}`,
    /// `{"node":…,"key":…,"found":false}`, `{"node":…,"key":…,"found":false,"default":true,
    /// "value":…}` (answered by `--default`) or `{"node":…,"key":…,"error":"…"}`; with
    /// `--render-as`, answers also carry `"rendered"`, the text a single lookup prints. And
    /// whether the line is an error: the outcome's, or a value JSON cannot render (nested too
    /// deep, not UTF-8 …).
    pub fn json_line(&self) -> (String, bool) {
        let mut m = self.head();
        match &self.outcome {
            Ok(Answer::Found(v)) => {
                m.insert(Value::str("found"), Value::Bool(true));
                m.insert(Value::str("value"), v.clone());
            }
            Ok(Answer::Default(v)) => {
                m.insert(Value::str("found"), Value::Bool(false));
                m.insert(Value::str("default"), Value::Bool(true));
                m.insert(Value::str("value"), v.clone());
            }
            Ok(Answer::NotFound) => {
                m.insert(Value::str("found"), Value::Bool(false));
            }
            Err(e) => {
                m.insert(Value::str("error"), Value::str(e.to_string()));
            }
        }
        if let (Some(r), Ok(_)) = (&self.rendered, &self.outcome) {
            m.insert(Value::str("rendered"), Value::str(r.as_str()));
        }
        let v = Value::Hash(m);
        match crate::render::to_json(&v) {
            Ok(line) => (line, self.outcome.is_err()),
            Err(e) => {
                let mut m = self.head();
                m.insert(Value::str("error"), Value::str(e.to_string()));
                (
                    crate::render::to_json(&Value::Hash(m)).unwrap_or_default(),
                    true,
                )
            }
        }
    }

    /// `node`, the facts source and `key`: what every line starts with.
    fn head(&self) -> Map {
        let mut m = Map::default();
        m.insert(Value::str("node"), Value::str(self.node.as_str()));
        if let Some((k, v)) = &self.source {
            m.insert(Value::str(k.as_str()), Value::str(v.as_str()));
        }
        m.insert(Value::str("key"), Value::str(self.key.as_str()));
        m
    }

    /// The answer with its rendering checked: a value that JSON Lines (or `--render-as`)
    /// cannot print becomes the error a single lookup would report.
    fn new(
        node: &Node,
        key: String,
        outcome: Result<Answer, Error>,
        format: Option<Format>,
    ) -> Self {
        let mut rendered = None;
        let outcome = outcome.and_then(|a| {
            if let Some(v) = a.value() {
                crate::render::to_json(v).map_err(|e| Error::run(e.to_string()))?;
                if let Some(f) = format {
                    rendered = Some(f.render(v)?);
                }
            }
            Ok(a)
        });
        Record {
            node: node.name.clone(),
            source: node.source.clone(),
            key,
            outcome,
            rendered,
        }
    }
}

/// What a batch needs besides the nodes.
#[derive(Debug, Clone)]
pub struct Batch {
    /// The layers every node is looked up in.
    pub layers: Layers,
    /// The session settings of every node's lookups.
    pub settings: Settings,
    /// `--merge` (`None`: lookup_options or `first` decide).
    pub merge: Option<MergeStrategy>,
    /// The keys to answer for every node.
    pub keys: Keys,
    /// Worker threads (at least 1).
    pub threads: usize,
    /// `--default` and `--type`, applied to every answer as in a single lookup.
    pub finish: Finish,
    /// `--render-as`: each answer also carries the text a single lookup prints.
    pub format: Option<Format>,
}

impl Batch {
    /// Answers every node; `emit` receives each node's records, in node order.
    pub fn run(
        &self,
        nodes: Vec<Node>,
        files: DataFiles,
        mut emit: impl FnMut(usize, Vec<Record>) + Send,
    ) {
        let next = AtomicUsize::new(0);
        let total = nodes.len();
        // Finished nodes wait here until every earlier node has been emitted.
        let done: Mutex<(usize, Vec<Option<Vec<Record>>>)> = Mutex::new((0, vec![None; total]));
        let emit = Mutex::new(&mut emit);
        let threads = self.threads.max(1).min(total.max(1));
        std::thread::scope(|s| {
            for _ in 0..threads {
                let worker = std::thread::Builder::new()
                    .stack_size(crate::limits::LOOKUP_STACK_SIZE)
                    .spawn_scoped(s, || loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        if i >= total {
                            break;
                        }
                        let records = self.node_records(&nodes[i], files.clone());
                        let mut d = done.lock().unwrap_or_else(|e| e.into_inner());
                        d.1[i] = Some(records);
                        while d.0 < total {
                            let idx = d.0;
                            let Some(r) = d.1[idx].take() else { break };
                            d.0 += 1;
                            let mut e = emit.lock().unwrap_or_else(|e| e.into_inner());
                            (*e)(idx, r);
                        }
                    });
                if worker.is_err() {
                    // No thread to be had: the other workers (or none) carry on.
                    break;
                }
            }
        });
    }

    fn node_records(&self, node: &Node, files: DataFiles) -> Vec<Record> {
        if let Some(e) = &node.facts_error {
            let keys = match &self.keys {
                Keys::List(k) => k.clone(),
                Keys::All => vec![String::new()],
            };
            return keys
                .into_iter()
                .map(|key| Record::new(node, key, Err(e.clone()), None))
                .collect();
        }
        let mut session = Session::with_files(
            node.scope.clone(),
            self.layers.clone(),
            self.settings.clone(),
            files,
        );
        let keys = match &self.keys {
            Keys::List(k) => k.clone(),
            Keys::All => match session.all_keys() {
                Ok(k) => k,
                Err(e) => {
                    return vec![Record::new(node, String::new(), Err(e), None)];
                }
            },
        };
        keys.into_iter()
            .map(|key| {
                let outcome = session
                    .lookup(std::slice::from_ref(&key), self.merge.as_ref())
                    .and_then(|o| self.finish.apply(o));
                // --redact: the answer was checked on the real value; the line hides it.
                let outcome = match session.redactor().filter(|r| !r.is_empty()) {
                    Some(r) => outcome
                        .map(|a| a.map_value(|v| r.value(v)))
                        .map_err(|e| r.error(&e)),
                    None => outcome,
                };
                Record::new(node, key, outcome, self.format)
            })
            .collect()
    }
}
