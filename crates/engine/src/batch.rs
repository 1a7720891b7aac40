//! Batch mode: many nodes × many keys in one process. Data files are parsed once and
//! shared; nodes are answered in parallel; results come out in node order.

use crate::answer::{Answer, Finish};
use crate::error::Error;
use crate::format::Format;
use crate::merge::MergeStrategy;
use crate::scope::Scope;
use crate::workspace::Workspace;
use hiera_value::value::{Map, Value};

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
    /// The workspace of the node's own environment, when a classifier puts it in another
    /// environment than the run's (`None`: the batch's workspace).
    pub workspace: Option<std::sync::Arc<Workspace>>,
}

/// Each node's name as a report lists it: its name, or, when another node has the same name
/// (two facts files of one certname), the name and where its facts came from
/// (`web01 (facts/a.yaml)`), so that counts of nodes and lists of names agree.
pub fn distinct_names(nodes: &[Node]) -> Vec<String> {
    distinct_names_of(
        nodes
            .iter()
            .map(|n| (n.name.as_str(), n.source.as_ref().map(|(_, s)| s.as_str()))),
    )
}

/// [`distinct_names`] of nodes given as their names and sources (the source's value).
pub fn distinct_names_of<'a>(
    nodes: impl IntoIterator<Item = (&'a str, Option<&'a str>)>,
) -> Vec<String> {
    let nodes: Vec<_> = nodes.into_iter().collect();
    let mut count: std::collections::HashMap<&str, usize> = Default::default();
    for (name, _) in &nodes {
        *count.entry(name).or_default() += 1;
    }
    nodes
        .iter()
        .enumerate()
        .map(|(i, (name, source))| match count[name] {
            1 => name.to_string(),
            _ => shared_name_label(name, *source, i),
        })
        .collect()
}

/// The label of the node at place `i` (0-based) of a fleet whose name another node has
/// too: `NAME (SOURCE)`, or `NAME (#N)` without a source.
pub fn shared_name_label(name: &str, source: Option<&str>, i: usize) -> String {
    match source {
        Some(source) => format!("{name} ({source})"),
        None => format!("{name} (#{})", i + 1),
    }
}

/// Names a warning about names given twice lists at most, and sources per name.
const DUPLICATES_SHOWN: usize = 3;

/// The warning about node names that several sources give (`nodes`: each node's name and
/// facts source, in order), or none: one line however many there are — how many, the first
/// few with their first sources, and where to see them all (every answer line names its
/// facts source).
pub fn duplicate_warnings<'a>(nodes: impl IntoIterator<Item = (&'a str, &'a str)>) -> Vec<String> {
    let mut by_name: indexmap::IndexMap<&str, Vec<&str>> = indexmap::IndexMap::new();
    for (name, source) in nodes {
        by_name.entry(name).or_default().push(source);
    }
    let shared: Vec<(&str, Vec<&str>)> = by_name.into_iter().filter(|(_, s)| s.len() > 1).collect();
    let listed = |items: &[&str]| {
        let shown = items[..items.len().min(DUPLICATES_SHOWN)].join(", ");
        match items.len().saturating_sub(DUPLICATES_SHOWN) {
            0 => shown,
            more => format!("{shown} and {more} more"),
        }
    };
    let how = "each answer line names its facts source";
    match shared.as_slice() {
        [] => Vec::new(),
        [(name, sources)] => vec![format!(
            "node {name} is given {} times (by {}): {how}",
            sources.len(),
            listed(sources)
        )],
        many => {
            let names: Vec<String> = many
                .iter()
                .take(DUPLICATES_SHOWN)
                .map(|(name, sources)| format!("{name} {} times", sources.len()))
                .collect();
            let more = match many.len().saturating_sub(DUPLICATES_SHOWN) {
                0 => String::new(),
                n => format!("; and {n} more"),
            };
            vec![format!(
                "{} node names are each given more than once ({}{more}): {how}",
                many.len(),
                names.join("; ")
            )]
        }
    }
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
        let value_json = self.outcome.as_ref().ok().and_then(Answer::value).map(|v| {
            let mut s = String::new();
            hiera_formats::json::write::write_json_at(&mut s, v, 1).map(|()| s)
        });
        let mut line = String::new();
        let error = write_line(
            &mut line,
            self.head_fields(),
            &self.outcome,
            self.rendered.as_deref(),
            value_json.as_ref().map(|r| r.as_deref()),
        );
        (line, error)
    }

    fn head_fields(&self) -> Head<'_> {
        Head {
            node: &self.node,
            source: self.source.as_ref().map(|(k, v)| (k.as_str(), v.as_str())),
            key: &self.key,
        }
    }

    /// The answer with its rendering checked: a value that JSON Lines (or `--render-as`)
    /// cannot print becomes the error a single lookup would report.
    fn new(
        node: &str,
        source: &Option<(String, String)>,
        key: String,
        outcome: Result<Answer, Error>,
        format: Option<Format>,
    ) -> Self {
        let checked = Checked::new(outcome, format);
        Record {
            node: node.to_string(),
            source: source.clone(),
            key,
            outcome: checked.outcome,
            rendered: checked.rendered,
        }
    }
}

/// An answer checked for printing, as [`Record::new`] checks it, with the value's JSON as it
/// sits in its line (written once: the line reuses it).
struct Checked {
    outcome: Result<Answer, Error>,
    rendered: Option<String>,
    /// The value's JSON one level inside the line's hash, or why it cannot be written there
    /// (a value exactly at the nesting limit renders alone but not inside the line).
    value_json: Option<Result<String, hiera_formats::render::RenderError>>,
}

impl Checked {
    fn new(outcome: Result<Answer, Error>, format: Option<Format>) -> Checked {
        let mut rendered = None;
        let mut value_json = None;
        let outcome = outcome.and_then(|a| {
            if let Some(v) = a.value() {
                let mut s = String::new();
                match hiera_formats::json::write::write_json_at(&mut s, v, 1) {
                    Ok(()) => value_json = Some(Ok(s)),
                    Err(inside) => {
                        // Whether it renders on its own decides between an error answer
                        // and an error line.
                        hiera_formats::render::to_json(v).map_err(|e| Error::run(e.to_string()))?;
                        value_json = Some(Err(inside));
                    }
                }
                if let Some(f) = format {
                    rendered = Some(f.render(v)?);
                }
            }
            Ok(a)
        });
        Checked {
            outcome,
            rendered,
            value_json,
        }
    }
}

/// What every line starts with: `node`, the facts source and `key`.
struct Head<'a> {
    node: &'a str,
    source: Option<(&'a str, &'a str)>,
    key: &'a str,
}

/// Appends one JSON Lines answer (without its newline) to `out`, written field by field as
/// the json gem writes the hash `{node, source, key, found/default/value or error,
/// rendered}`; returns whether it is an error line. `value_json`: the value's JSON inside the
/// line, or why it cannot be written there.
fn write_line(
    out: &mut String,
    head: Head,
    outcome: &Result<Answer, Error>,
    rendered: Option<&str>,
    value_json: Option<Result<&str, &hiera_formats::render::RenderError>>,
) -> bool {
    use hiera_formats::json::write::json_str;
    const FIELDS: [&str; 7] = [
        "node", "key", "found", "default", "value", "error", "rendered",
    ];
    if head.source.is_some_and(|(k, _)| FIELDS.contains(&k)) {
        // A source named like another field replaces it, as a hash insert does.
        return map_line(out, head, outcome, rendered);
    }
    let write_head = |out: &mut String| {
        out.push_str("{\"node\":");
        json_str(out, head.node);
        if let Some((k, v)) = head.source {
            out.push(',');
            json_str(out, k);
            out.push(':');
            json_str(out, v);
        }
        out.push_str(",\"key\":");
        json_str(out, head.key);
    };
    write_head(out);
    let mut error = false;
    match (outcome, value_json) {
        (Ok(_), Some(Err(e))) => {
            out.push_str(",\"error\":");
            json_str(out, &e.to_string());
            out.push('}');
            return true;
        }
        (Ok(Answer::Found(_)), Some(Ok(json))) => {
            out.push_str(",\"found\":true,\"value\":");
            out.push_str(json);
        }
        (Ok(Answer::Default(_)), Some(Ok(json))) => {
            out.push_str(",\"found\":false,\"default\":true,\"value\":");
            out.push_str(json);
        }
        (Ok(Answer::NotFound), _) => out.push_str(",\"found\":false"),
        (Ok(_), None) => return map_line(out, head, outcome, rendered),
        (Err(e), _) => {
            out.push_str(",\"error\":");
            json_str(out, &e.to_string());
            error = true;
        }
    }
    if let (Some(r), Ok(_)) = (rendered, outcome) {
        out.push_str(",\"rendered\":");
        json_str(out, r);
    }
    out.push('}');
    error
}

/// [`write_line`] through a hash of the fields, for the lines whose fields collide.
fn map_line(
    out: &mut String,
    head: Head,
    outcome: &Result<Answer, Error>,
    rendered: Option<&str>,
) -> bool {
    let head_map = || {
        let mut m = Map::default();
        m.insert(Value::str("node"), Value::str(head.node));
        if let Some((k, v)) = head.source {
            m.insert(Value::str(k), Value::str(v));
        }
        m.insert(Value::str("key"), Value::str(head.key));
        m
    };
    let mut m = head_map();
    match outcome {
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
    if let (Some(r), Ok(_)) = (rendered, outcome) {
        m.insert(Value::str("rendered"), Value::str(r));
    }
    match hiera_formats::render::to_json(&Value::Hash(m)) {
        Ok(line) => {
            out.push_str(&line);
            outcome.is_err()
        }
        Err(e) => {
            let mut m = head_map();
            m.insert(Value::str("error"), Value::str(e.to_string()));
            out.push_str(&hiera_formats::render::to_json(&Value::Hash(m)).unwrap_or_default());
            true
        }
    }
}

/// The answers of one unit of nodes ([`NodeUnit`]: a facts file, a PuppetDB chunk) as JSON
/// Lines, for a writer that prints them as they come.
#[derive(Debug, Clone, Default)]
pub struct NodeLines {
    /// The lines, each ending in a newline.
    pub text: String,
    /// Whether any line is an error.
    pub errors: bool,
    /// Whether any key was not found (and no `--default` answered it).
    pub missed: bool,
    /// How many answers held an opaque eyaml secret (no private key;
    /// [`Secrets`](crate::Secrets)).
    pub opaque: usize,
    /// The unit's nodes: each one's name and where its facts came from (the source's
    /// value, `""` for none), in order.
    pub nodes: Vec<(String, String)>,
    /// What reading the unit's nodes warned of (printed before its lines).
    pub warnings: Vec<String>,
}

/// What reading one unit of a batch's nodes gives: its nodes, in order, and warnings.
#[derive(Debug, Default)]
pub struct ReadNodes {
    /// The nodes.
    pub nodes: Vec<Node>,
    /// Warnings to print (a facts file that sets some of the names Puppet wants together …).
    pub warnings: Vec<String>,
}

/// One unit of a batch's nodes (a facts file, a chunk of PuppetDB's), read by the worker
/// that answers it: a fleet is never all in memory.
pub type NodeUnit<'a> = Box<dyn FnOnce() -> ReadNodes + Send + 'a>;

/// A batch's nodes, read as they are answered: units in order, each read on a worker.
pub struct NodeSource<'a> {
    units: Box<dyn Iterator<Item = NodeUnit<'a>> + Send + 'a>,
    /// How many nodes are expected (a facts file usually holds one node), for progress.
    pub expected: usize,
}

impl std::fmt::Debug for NodeSource<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NodeSource")
            .field("expected", &self.expected)
            .finish_non_exhaustive()
    }
}

impl<'a> NodeSource<'a> {
    /// Nodes read unit by unit; `expected`: how many nodes are expected.
    pub fn new(
        units: impl Iterator<Item = NodeUnit<'a>> + Send + 'a,
        expected: usize,
    ) -> NodeSource<'a> {
        NodeSource {
            units: Box::new(units),
            expected,
        }
    }

    /// Nodes already read: each its own unit.
    pub fn from_nodes(nodes: Vec<Node>) -> NodeSource<'a> {
        let expected = nodes.len();
        NodeSource::new(
            nodes.into_iter().map(|n| -> NodeUnit<'a> {
                Box::new(move || ReadNodes {
                    nodes: vec![n],
                    warnings: Vec::new(),
                })
            }),
            expected,
        )
    }

    /// Nodes the caller holds: each its own unit, cloned when read (a scope is shared, not
    /// copied).
    pub fn from_refs<I>(nodes: I) -> NodeSource<'a>
    where
        I: IntoIterator<Item = &'a Node>,
        I::IntoIter: ExactSizeIterator + Send + 'a,
    {
        let nodes = nodes.into_iter();
        let expected = nodes.len();
        NodeSource::new(
            nodes.map(|n| -> NodeUnit<'a> {
                Box::new(move || ReadNodes {
                    nodes: vec![n.clone()],
                    warnings: Vec::new(),
                })
            }),
            expected,
        )
    }

    /// The same nodes, for a shorter borrow (a source named `'a` where an inner scope's
    /// nodes are expected too).
    pub fn shorten<'b>(self) -> NodeSource<'b>
    where
        'a: 'b,
    {
        let expected = self.expected;
        NodeSource::new(self.units.map(|u| -> NodeUnit<'b> { u }), expected)
    }

    /// The units, in order.
    pub fn into_units(self) -> Box<dyn Iterator<Item = NodeUnit<'a>> + Send + 'a> {
        self.units
    }

    /// Every node, read now, in order, and the warnings reading them gave.
    pub fn read_all(self) -> ReadNodes {
        let mut all = ReadNodes::default();
        for unit in self.units {
            let r = unit();
            all.nodes.extend(r.nodes);
            all.warnings.extend(r.warnings);
        }
        all
    }
}

/// What a batch asks of a [`Workspace`] for every node.
#[derive(Debug, Clone)]
pub struct Batch {
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
        workspace: &Workspace,
        nodes: Vec<Node>,
        mut emit: impl FnMut(usize, Vec<Record>) + Send,
    ) {
        workspace.refresh();
        crate::workers::in_order(
            nodes,
            self.threads,
            |node| {
                let mut records = Vec::new();
                let (name, source) = (node.name.clone(), node.source.clone());
                self.answer_node(workspace, node, |key, outcome| {
                    records.push(Record::new(&name, &source, key, outcome, self.format))
                });
                records
            },
            |i, records| {
                emit(i, records);
                std::ops::ControlFlow::Continue(())
            },
        );
    }

    /// Answers every node as JSON Lines ([`Record::json_line`], byte for byte); `emit`
    /// receives each unit's lines, in order (its index, counting units), and may stop the
    /// batch (`Break`: stdout's reader left). The nodes are read and the lines written by
    /// the workers, so that the one writer only copies them out, and each node is dropped
    /// once answered.
    pub fn run_lines(
        &self,
        workspace: &Workspace,
        nodes: NodeSource<'_>,
        emit: impl FnMut(usize, NodeLines) -> std::ops::ControlFlow<()> + Send,
    ) {
        workspace.refresh();
        crate::workers::in_order(
            nodes.into_units(),
            self.threads,
            |unit| {
                let read = unit();
                let mut lines = NodeLines {
                    warnings: read.warnings,
                    ..NodeLines::default()
                };
                for node in read.nodes {
                    let name = node.name.clone();
                    let source = node.source.clone();
                    let listed = self.answer_node(workspace, node, |key, outcome| {
                        let checked = Checked::new(outcome, self.format);
                        let head = Head {
                            node: &name,
                            source: source.as_ref().map(|(k, v)| (k.as_str(), v.as_str())),
                            key: &key,
                        };
                        let error = write_line(
                            &mut lines.text,
                            head,
                            &checked.outcome,
                            checked.rendered.as_deref(),
                            checked.value_json.as_ref().map(|r| r.as_deref()),
                        );
                        lines.text.push('\n');
                        lines.errors |= error;
                        lines.missed |= !error && matches!(checked.outcome, Ok(Answer::NotFound));
                        if let Ok(a) = &checked.outcome {
                            lines.opaque += a
                                .value()
                                .is_some_and(crate::backend::eyaml::contains_opaque)
                                as usize;
                        }
                    });
                    // What listing the keys warned of (a level that cannot list them), once.
                    for w in listed {
                        if !lines.warnings.contains(&w) {
                            lines.warnings.push(w);
                        }
                    }
                    lines
                        .nodes
                        .push((name, source.map(|(_, v)| v).unwrap_or_default()));
                }
                lines
            },
            emit,
        );
    }

    /// Looks every key of the node up, handing each key and its answer (after `--default`,
    /// `--type` and `--redact`) to `answer`, in key order; returns what listing the node's
    /// keys (`--all`) warned of.
    fn answer_node(
        &self,
        workspace: &Workspace,
        node: Node,
        mut answer: impl FnMut(String, Result<Answer, Error>),
    ) -> Vec<String> {
        if let Some(e) = &node.facts_error {
            match &self.keys {
                Keys::List(k) => k.iter().for_each(|key| answer(key.clone(), Err(e.clone()))),
                Keys::All => answer(String::new(), Err(e.clone())),
            }
            return Vec::new();
        }
        // A node a classifier puts in another environment reads that environment's data.
        let own = node.workspace;
        let workspace = own.as_deref().unwrap_or(workspace);
        let mut session = workspace.session_unrefreshed(node.scope);
        let keys = match &self.keys {
            Keys::List(k) => k.clone(),
            Keys::All => match session.all_keys() {
                Ok(k) => k,
                Err(e) => {
                    answer(String::new(), Err(e));
                    return Vec::new();
                }
            },
        };
        let listed = session.take_warnings();
        for key in keys {
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
            answer(key, outcome);
        }
        listed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One line however many names are shared and however many times: the count, the first
    /// few, and where to see them all.
    #[test]
    fn names_given_twice_are_one_bounded_line() {
        assert!(duplicate_warnings([("a", "a.yaml"), ("b", "b.yaml")]).is_empty());
        assert_eq!(
            duplicate_warnings([("a", "x/a.yaml"), ("b", "b.yaml"), ("a", "y/a.json")]),
            ["node a is given 2 times (by x/a.yaml, y/a.json): each answer line names its facts source"]
        );
        let many: Vec<(String, String)> = (0..3000)
            .map(|i| {
                (
                    format!("n{}", i % 1000),
                    format!("/very/long/absolute/path/{i}.yaml"),
                )
            })
            .collect();
        let w = duplicate_warnings(many.iter().map(|(n, s)| (n.as_str(), s.as_str())));
        assert_eq!(w.len(), 1);
        assert!(w[0].len() < 200, "{}", w[0]);
        assert!(
            w[0].starts_with("1000 node names are each given more than once (n0 3 times; n1 3 times; n2 3 times; and 997 more)"),
            "{}",
            w[0]
        );
        assert!(
            w[0].ends_with("; and 997 more): each answer line names its facts source"),
            "{}",
            w[0]
        );
        let one: Vec<(&str, String)> = (0..50).map(|i| ("web", format!("{i}.yaml"))).collect();
        assert_eq!(
            duplicate_warnings(one.iter().map(|(n, s)| (*n, s.as_str()))),
            ["node web is given 50 times (by 0.yaml, 1.yaml, 2.yaml and 47 more): each answer line names its facts source"]
        );
    }

    /// How batch mode wrote a line before lines were written field by field: the answer
    /// checked by rendering its value alone (at json's top level), then the whole line
    /// rendered through a hash.
    fn reference_line(
        source: Option<(&str, &str)>,
        outcome: Result<Answer, Error>,
        format: Option<Format>,
    ) -> (String, bool) {
        let mut rendered = None;
        let outcome = outcome.and_then(|a| {
            if let Some(v) = a.value() {
                hiera_formats::render::to_json(v).map_err(|e| Error::run(e.to_string()))?;
                if let Some(f) = format {
                    rendered = Some(f.render(v)?);
                }
            }
            Ok(a)
        });
        // The line through a hash: `map_line` is how every line was written then.
        let mut line = String::new();
        let head = Head {
            node: "n1",
            source,
            key: "a::b",
        };
        let error = map_line(&mut line, head, &outcome, rendered.as_deref());
        (line, error)
    }

    fn nested(depth: usize) -> Value {
        (0..depth).fold(Value::Int(1), |v, _| Value::Array(vec![v]))
    }

    #[test]
    fn lines_are_written_as_the_hash_would_render() {
        let mut hash = Map::default();
        hash.insert(Value::Int(1), Value::str("one"));
        hash.insert(Value::str("k\"\n"), Value::Float(1.5));
        let values = [
            Value::str("plain"),
            Value::str("quote \" backslash \\ newline \n tab \t \u{1} é"),
            Value::Null,
            Value::Bool(false),
            Value::Float(f64::NAN),
            Value::Float(f64::INFINITY),
            Value::Float(0.1),
            Value::Hash(hash),
            Value::Sensitive(Box::new(Value::str("secret"))),
            // Nesting around json's limit of 100: alone, and one level inside the line.
            nested(98),
            nested(99),
            nested(100),
            nested(101),
        ];
        let mut outcomes: Vec<Result<Answer, Error>> = vec![
            Ok(Answer::NotFound),
            Err(Error::run("broken \"data\"\nsecond line")),
        ];
        for v in &values {
            outcomes.push(Ok(Answer::Found(v.clone())));
            outcomes.push(Ok(Answer::Default(v.clone())));
        }
        let formats = [
            None,
            Some(Format::Json),
            Some(Format::Yaml),
            Some(Format::S),
            Some(Format::Binary),
        ];
        let sources = [
            None,
            Some(("facts", "web01.yaml")),
            // Named like fields of the line: the hash's insert order and replacement.
            Some(("key", "x")),
            Some(("node", "y")),
            Some(("value", "z")),
        ];
        let node = |source: Option<(&str, &str)>| Node {
            name: "n1".into(),
            source: source.map(|(k, v)| (k.to_string(), v.to_string())),
            scope: Scope::from_facts(Map::default(), "production"),
            facts_error: None,
            workspace: None,
        };
        for source in sources {
            for outcome in &outcomes {
                for format in formats {
                    let expected = reference_line(source, outcome.clone(), format);
                    let n = node(source);
                    let record =
                        Record::new(&n.name, &n.source, "a::b".into(), outcome.clone(), format);
                    assert_eq!(
                        record.json_line(),
                        expected,
                        "{source:?} {outcome:?} {format:?}"
                    );
                    let checked = Checked::new(outcome.clone(), format);
                    let mut line = String::new();
                    let n = node(source);
                    let head = Head {
                        node: &n.name,
                        source,
                        key: "a::b",
                    };
                    let error = write_line(
                        &mut line,
                        head,
                        &checked.outcome,
                        checked.rendered.as_deref(),
                        checked.value_json.as_ref().map(|r| r.as_deref()),
                    );
                    assert_eq!((line, error), expected, "{source:?} {outcome:?} {format:?}");
                }
            }
        }
    }
}
