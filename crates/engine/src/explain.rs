//! The `--explain` trace: Puppet's explanation tree (`explainer.rb`), built only when asked
//! for, and printed as text or as the hash `--render-as json|yaml` shows.

use crate::merge::objects::{Dumper, Heap, Rv};
use hiera_formats::render::Tree;
use hiera_value::value::Value;

/// What a node stands for; each prints its own header line(s).
#[derive(Debug, Clone)]
pub(crate) enum Kind {
    /// The explainer itself.
    Root,
    /// `Searching for "key"` (the lookup_options search too).
    Top {
        key: String,
    },
    InvalidKey(String),
    MergeSource(String),
    Module(String),
    Interpolate(String),
    Merge {
        strategy: &'static str,
        options: Option<Value>,
    },
    DataProvider {
        name: String,
        config_path: Option<String>,
        module: Option<String>,
    },
    Location {
        original: String,
        location: String,
        uri: bool,
    },
    SubLookup(String),
    Segment,
    Scope(String),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Event {
    None,
    Found,
    Result,
    NotFound,
    LocationNotFound,
    ModuleNotFound,
    ModuleProviderNotFound,
}

#[derive(Debug, Clone)]
struct Node {
    kind: Kind,
    parent: usize,
    children: Vec<usize>,
    key: Option<String>,
    value: Option<Rv>,
    event: Event,
    texts: Vec<String>,
}

/// A tree under construction: `push` enters a node, `pop` leaves it, the `found`/`not_found`
/// family records the outcome of the current node.
#[derive(Debug, Clone)]
pub struct Explainer {
    nodes: Vec<Node>,
    current: usize,
    /// The objects the values are made of (printed in their final state, as Ruby prints them).
    heap: Heap,
    /// The value most recently found or merged: what the lookup in progress returns.
    last: Option<Rv>,
}

impl Default for Explainer {
    fn default() -> Explainer {
        Explainer::new()
    }
}

impl Explainer {
    pub(crate) fn new() -> Explainer {
        Explainer {
            nodes: vec![Node {
                kind: Kind::Root,
                parent: 0,
                children: Vec::new(),
                key: None,
                value: None,
                event: Event::None,
                texts: Vec::new(),
            }],
            current: 0,
            heap: Heap::new(),
            last: None,
        }
    }

    pub(crate) fn push(&mut self, kind: Kind) {
        let id = self.nodes.len();
        self.nodes.push(Node {
            kind,
            parent: self.current,
            children: Vec::new(),
            key: None,
            value: None,
            event: Event::None,
            texts: Vec::new(),
        });
        self.nodes[self.current].children.push(id);
        self.current = id;
    }

    pub(crate) fn pop(&mut self) {
        self.current = self.nodes[self.current].parent;
    }

    pub(crate) fn heap(&self) -> &Heap {
        &self.heap
    }

    pub(crate) fn heap_mut(&mut self) -> &mut Heap {
        &mut self.heap
    }

    /// The object behind `value`, the value the lookup in progress just produced: the one
    /// last found or merged when it holds `value`, else a new object.
    pub(crate) fn object_for(&mut self, value: &Value) -> Rv {
        match self.last.take() {
            Some(rv) if self.heap.holds(&rv, value) => rv,
            _ => self.heap.alloc(value),
        }
    }

    /// Marks `rv` as the value the lookup in progress produced.
    pub(crate) fn produced(&mut self, rv: Rv) {
        self.last = Some(rv);
    }

    fn cur(&mut self) -> &mut Node {
        &mut self.nodes[self.current]
    }

    /// A value found (a new object: what interpolation returns).
    pub(crate) fn found(&mut self, key: &str, value: &Value) {
        let rv = self.heap.alloc(value);
        self.found_object(key, rv);
    }
    pub(crate) fn found_object(&mut self, key: &str, rv: Rv) {
        self.last = Some(rv.clone());
        let n = self.cur();
        n.key = Some(key.to_string());
        n.value = Some(rv);
        n.event = Event::Found;
    }
    pub(crate) fn result_object(&mut self, rv: Rv) {
        self.last = Some(rv.clone());
        let n = self.cur();
        n.value = Some(rv);
        n.event = Event::Result;
    }
    pub(crate) fn not_found(&mut self, key: &str) {
        let n = self.cur();
        n.key = Some(key.to_string());
        n.event = Event::NotFound;
    }
    pub(crate) fn location_not_found(&mut self) {
        self.cur().event = Event::LocationNotFound;
    }
    pub(crate) fn module_not_found(&mut self, module: &str, provider_only: bool) {
        self.push(Kind::Module(module.to_string()));
        self.cur().event = if provider_only {
            Event::ModuleProviderNotFound
        } else {
            Event::ModuleNotFound
        };
        self.pop();
    }
    pub(crate) fn merge_source(&mut self, source: &str) {
        self.push(Kind::MergeSource(source.to_string()));
        self.pop();
    }
    /// A text line at the root, whatever node is current.
    pub fn root_text(&mut self, text: String) {
        self.nodes[0].texts.push(text);
    }

    /// Rewrites every value and line as `--redact` prints it (before printing).
    pub fn redact(&mut self, r: &crate::redact::Redactor) {
        if r.is_empty() {
            return;
        }
        self.heap.redact(r);
        let t = |s: &mut String| {
            if let std::borrow::Cow::Owned(x) = r.text(s) {
                *s = x;
            }
        };
        for n in &mut self.nodes {
            n.key.iter_mut().for_each(t);
            n.texts.iter_mut().for_each(t);
            if let Some(Rv::Imm(v)) = &mut n.value {
                *v = r.value(v);
            }
            match &mut n.kind {
                Kind::Root | Kind::Segment => {}
                Kind::Top { key: s }
                | Kind::InvalidKey(s)
                | Kind::MergeSource(s)
                | Kind::Module(s)
                | Kind::Interpolate(s)
                | Kind::SubLookup(s)
                | Kind::Scope(s) => t(s),
                Kind::Merge { options, .. } => {
                    if let Some(o) = options {
                        *o = r.value(o);
                    }
                }
                Kind::DataProvider {
                    name,
                    config_path,
                    module,
                } => {
                    t(name);
                    config_path.iter_mut().for_each(t);
                    module.iter_mut().for_each(t);
                }
                Kind::Location {
                    original, location, ..
                } => {
                    t(original);
                    t(location);
                }
            }
        }
    }

    /// The text form (`--explain`), or Puppet's "stack level too deep" when it would be
    /// larger than [`MAX_EXPLAIN_BYTES`](hiera_value::limits::MAX_EXPLAIN_BYTES).
    pub fn explain(&self) -> crate::Result<String> {
        let mut out = String::new();
        self.dump(0, &mut out, "", "");
        if out.len() > hiera_value::limits::MAX_EXPLAIN_BYTES {
            return Err(crate::Error::run(format!(
                "stack level too deep: the explanation is larger than {} MiB",
                hiera_value::limits::MAX_EXPLAIN_BYTES >> 20
            )));
        }
        Ok(out)
    }

    fn dump(&self, id: usize, io: &mut String, indent: &str, first_indent: &str) {
        // Past the limit: nothing more is written (`explain` reports it).
        if io.len() > hiera_value::limits::MAX_EXPLAIN_BYTES {
            return;
        }
        let n = &self.nodes[id];
        let inner = format!("{indent}  ");
        match &n.kind {
            Kind::Root => {
                for &c in &n.children {
                    self.dump(c, io, indent, first_indent);
                }
                dump_texts(io, indent, &n.texts);
            }
            Kind::Top { key, .. } => {
                io.push_str(&format!("{first_indent}Searching for \"{key}\"\n"));
                for &c in &n.children {
                    self.dump(c, io, &inner, &inner);
                }
            }
            Kind::InvalidKey(key) => io.push_str(&format!("{first_indent}Invalid key \"{key}\"\n")),
            Kind::MergeSource(src) => io.push_str(&format!(
                "{first_indent}Using merge options from \"{src}\" hash\n"
            )),
            Kind::Module(m) => match n.event {
                Event::ModuleNotFound => {
                    io.push_str(&format!("{indent}Module \"{m}\" not found\n"))
                }
                Event::ModuleProviderNotFound => io.push_str(&format!(
                    "{indent}Module data provider for module \"{m}\" not found\n"
                )),
                _ => {}
            },
            Kind::Interpolate(expr) => {
                io.push_str(&format!("{first_indent}Interpolation on \"{expr}\"\n"));
                for &c in &n.children {
                    self.dump(c, io, &inner, &inner);
                }
            }
            Kind::Merge { strategy, options } => {
                match n.children.len() {
                    0 => return,
                    1 => return self.dump(n.children[0], io, indent, first_indent),
                    _ => {}
                }
                io.push_str(&format!("{first_indent}Merge strategy {strategy}\n"));
                if let Some(o) = options {
                    io.push_str(&format!("{inner}Options: "));
                    dump_value(io, &inner, o);
                    io.push('\n');
                }
                for &c in &n.children {
                    self.dump(c, io, &inner, &inner);
                }
                if n.event == Event::Result {
                    io.push_str(&format!("{inner}Merged result: "));
                    if let Some(v) = &n.value {
                        dump_value(io, &inner, &self.heap.value(v));
                    }
                    io.push('\n');
                }
            }
            Kind::DataProvider {
                name, config_path, ..
            } => {
                io.push_str(&format!("{first_indent}{name}\n"));
                if let Some(p) = config_path {
                    io.push_str(&format!("{inner}Using configuration \"{p}\"\n"));
                }
                for &c in &n.children {
                    self.dump(c, io, &inner, &inner);
                }
                self.dump_outcome(n, io, &inner);
            }
            Kind::Location {
                original,
                location,
                uri,
            } => {
                let t = if *uri { "URI" } else { "Path" };
                io.push_str(&format!("{indent}{t} \"{location}\"\n"));
                io.push_str(&format!(
                    "{inner}Original {} \"{original}\"\n",
                    if *uri { "uri:" } else { "path:" }
                ));
                for &c in &n.children {
                    self.dump(c, io, &inner, &inner);
                }
                if n.event == Event::LocationNotFound {
                    io.push_str(&format!("{inner}{t} not found\n"));
                }
                self.dump_outcome(n, io, &inner);
            }
            Kind::SubLookup(sub) => {
                io.push_str(&format!("{indent}Sub key: \"{sub}\"\n"));
                for &c in &n.children {
                    self.dump(c, io, &inner, &inner);
                }
                self.dump_outcome(n, io, &inner);
            }
            Kind::Segment => self.dump_outcome(n, io, indent),
            Kind::Scope(name) => {
                io.push_str(&format!("{indent}{name}\n"));
                for &c in &n.children {
                    self.dump(c, io, &inner, &inner);
                }
                self.dump_outcome(n, io, &inner);
            }
        }
    }

    fn dump_outcome(&self, n: &Node, io: &mut String, indent: &str) {
        match n.event {
            Event::NotFound => {
                io.push_str(&format!(
                    "{indent}No such key: \"{}\"\n",
                    n.key.as_deref().unwrap_or("")
                ));
            }
            Event::Found => {
                io.push_str(&format!(
                    "{indent}Found key: \"{}\" value: ",
                    n.key.as_deref().unwrap_or("")
                ));
                if let Some(v) = &n.value {
                    dump_value(io, indent, &self.heap.value(v));
                }
                io.push('\n');
            }
            _ => {}
        }
        dump_texts(io, indent, &n.texts);
    }

    /// The hash form (`Explainer#to_hash`) that `--render-as json` prints.
    pub fn to_hash(&self) -> Value {
        self.to_tree().to_value()
    }

    /// The explanation as `puppet lookup --explain --render-as FORMAT` prints it: the text
    /// trace for `s`, Psych's dump of the hash for `yaml` (symbols, and anchors for objects
    /// that appear more than once), the hash for `json`.
    pub fn render(&self, format: crate::format::Format) -> crate::Result<String> {
        use crate::format::Format;
        match format {
            Format::S => self.explain(),
            Format::Yaml => hiera_formats::render::tree_to_yaml(&self.to_tree())
                .map_err(|e| crate::Error::run(e.to_string())),
            // The hash's keys are Symbols, so `console` never makes it a table.
            Format::Console => match self.to_hash() {
                Value::Hash(h) if h.is_empty() => Ok("\n".into()),
                h => hiera_formats::json::write::to_json_pretty(&h)
                    .map(|s| s + "\n")
                    .map_err(|e| crate::Error::run(e.to_string())),
            },
            _ => format.render(&self.to_hash()),
        }
    }

    /// [`to_hash`](Self::to_hash) as Psych dumps it (`--render-as yaml`): symbols, and anchors
    /// for the objects that appear more than once.
    pub(crate) fn to_tree(&self) -> Tree {
        let mut b = Dumper::new(&self.heap);
        let root = &self.nodes[0];
        let mut t = if root.children.len() == 1 {
            self.node_tree(root.children[0], &mut b)
        } else {
            let mut m = Vec::new();
            if !root.children.is_empty() {
                let items = root
                    .children
                    .iter()
                    .map(|&c| self.node_tree(c, &mut b))
                    .collect();
                m.push((
                    Tree::Symbol("branches"),
                    Tree::Seq {
                        anchor: None,
                        items,
                    },
                ));
            }
            Tree::Map {
                anchor: None,
                entries: m,
            }
        };
        b.finish(&mut t);
        t
    }

    fn node_tree(&self, id: usize, b: &mut Dumper) -> Tree {
        let n = &self.nodes[id];
        let sym = Tree::Symbol;
        let s = |x: &str| Tree::Leaf(Value::str(x));
        if let Kind::MergeSource(src) = &n.kind {
            return Tree::Map {
                anchor: None,
                entries: vec![
                    (sym("type"), sym("merge_source")),
                    (sym("merge_source"), s(src)),
                ],
            };
        }
        if let Kind::Merge { .. } = &n.kind {
            if n.children.len() == 1 {
                return self.node_tree(n.children[0], b);
            }
        }
        let mut m = Vec::new();
        if !n.children.is_empty() {
            let items = n.children.iter().map(|&c| self.node_tree(c, b)).collect();
            m.push((
                sym("branches"),
                Tree::Seq {
                    anchor: None,
                    items,
                },
            ));
        }
        // Top and invalid-key nodes carry their key from creation: it prints before `type`.
        let key = match &n.kind {
            Kind::Top { key, .. } | Kind::InvalidKey(key) => Some(key),
            _ => n.key.as_ref(),
        };
        if let Some(k) = key {
            m.push((sym("key"), s(k)));
        }
        if matches!(n.event, Event::Found | Event::Result) {
            let v = match &n.value {
                Some(rv) => b.value(rv),
                None => Tree::Leaf(Value::Null),
            };
            m.push((sym("value"), v));
        }
        let event = match n.event {
            Event::None => None,
            Event::Found => Some("found"),
            Event::Result => Some("result"),
            Event::NotFound => Some("not_found"),
            Event::LocationNotFound => Some("location_not_found"),
            Event::ModuleNotFound => Some("module_not_found"),
            Event::ModuleProviderNotFound => Some("module_provider_not_found"),
        };
        if let Some(e) = event {
            m.push((sym("event"), sym(e)));
        }
        if !n.texts.is_empty() {
            let items = n.texts.iter().map(|t| s(t)).collect();
            m.push((
                sym("texts"),
                Tree::Seq {
                    anchor: None,
                    items,
                },
            ));
        }
        let ty = match &n.kind {
            Kind::Root | Kind::Top { .. } => "root",
            Kind::InvalidKey(_) => "invalid_key",
            Kind::MergeSource(_) => "merge_source",
            Kind::Module(_) => "module",
            Kind::Interpolate(_) => "interpolate",
            Kind::Merge { .. } => "merge",
            Kind::DataProvider { .. } => "data_provider",
            Kind::Location { uri: true, .. } => "uri",
            Kind::Location { .. } => "path",
            Kind::SubLookup(_) => "sub_key",
            Kind::Segment => "segment",
            Kind::Scope(_) => "scope",
        };
        m.push((sym("type"), sym(ty)));
        match &n.kind {
            Kind::DataProvider {
                name,
                config_path,
                module,
            } => {
                m.push((sym("name"), s(name)));
                if let Some(p) = config_path {
                    m.push((sym("configuration_path"), s(p)));
                }
                if let Some(md) = module {
                    m.push((sym("module"), s(md)));
                }
            }
            Kind::Scope(name) => m.push((sym("name"), s(name))),
            Kind::Location {
                original,
                location,
                uri,
            } => {
                let (o, l) = if *uri {
                    ("original_uri", "uri")
                } else {
                    ("original_path", "path")
                };
                m.push((sym(o), s(original)));
                m.push((sym(l), s(location)));
            }
            Kind::Interpolate(expr) => m.push((sym("expression"), s(expr))),
            Kind::Merge { strategy, options } => {
                m.push((sym("merge"), sym(strategy)));
                if let Some(o) = options {
                    m.push((sym("options"), Tree::Leaf(o.clone())));
                }
            }
            _ => {}
        }
        Tree::Map {
            anchor: None,
            entries: m,
        }
    }
}

fn dump_texts(io: &mut String, indent: &str, texts: &[String]) {
    for t in texts {
        io.push_str(indent);
        io.push_str(t);
        io.push('\n');
    }
}

/// `dump_value` at the indentation of the line holding the value.
fn dump_value(io: &mut String, indent: &str, value: &Value) {
    io.push_str(&hiera_value::text::explain_dump(value, indent.len()));
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fact path 600 segments deep dumps the rest of the value at every segment, deeper
    /// each time: about 160 MB of text, where Puppet stops with "stack level too deep".
    #[test]
    fn explain_text_is_bounded() {
        use crate::engine::{Layers, Session, Settings};
        use hiera_value::value::Map;
        let depth = 600;
        let dir = std::env::temp_dir().join(format!("hl-explain-bound-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("data")).unwrap();
        std::fs::write(
            dir.join("hiera.yaml"),
            "version: 5\nhierarchy:\n  - name: c\n    path: common.yaml\n",
        )
        .unwrap();
        let path = vec!["a"; depth].join(".");
        std::fs::write(
            dir.join("data/common.yaml"),
            format!("k: \"%{{facts.{path}}}\"\n"),
        )
        .unwrap();
        let mut v = Value::str("leaf");
        for _ in 1..depth {
            v = Value::Hash(Map::from_iter([(Value::str("a"), v)]));
        }
        let facts = Map::from_iter([(Value::str("a"), v)]);
        let layers = Layers {
            environment_dir: Some(dir.clone()),
            ..Default::default()
        };
        let settings = Settings {
            explain: true,
            ..Default::default()
        };
        let mut s = Session::new(
            crate::scope::Scope::from_facts(facts, "production"),
            layers,
            settings,
        );
        let found = s.lookup(&["k".to_string()], None);
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(
            found.unwrap(),
            crate::engine::Outcome::Found(Value::str("leaf"))
        );
        let e = s.explainer().unwrap().explain().unwrap_err();
        assert_eq!(
            e.to_string(),
            "stack level too deep: the explanation is larger than 128 MiB"
        );
    }

    #[test]
    fn single_branch_merge_collapses() {
        let mut e = Explainer::new();
        e.push(Kind::Top { key: "a".into() });
        e.push(Kind::Merge {
            strategy: "deep",
            options: None,
        });
        e.push(Kind::DataProvider {
            name: "Global Data Provider (hiera configuration version 5)".into(),
            config_path: None,
            module: None,
        });
        e.not_found("a");
        e.pop();
        e.pop();
        e.pop();
        e.root_text("Function lookup() did not find a value for the name 'a'".into());
        assert_eq!(
            e.explain().unwrap(),
            "Searching for \"a\"\n  Global Data Provider (hiera configuration version 5)\n    No such key: \"a\"\nFunction lookup() did not find a value for the name 'a'\n"
        );
    }
}
