//! Puppet's YAML reader: what `Puppet::Util::Yaml.safe_load(text, [Symbol], path)` returns.
//!
//! That is Psych 4 `safe_load(permitted_classes: [Symbol], aliases: true)` on libyaml 0.2.5:
//! libyaml events (from `unsafe-libyaml-norway`, the same C code transpiled, so syntax errors
//! and marks are identical), then Psych's `ToRuby` visitor and `ScalarScanner#tokenize`
//! (YAML 1.1 resolution with Psych's own quirks), then Puppet's `symkeys_to_string`.
//!
//! Ruby objects that a Puppet value cannot hold are handled like this:
//! * Symbol keys become strings (Puppet stringifies them right after loading).
//! * Symbol values (`key: :foo`) load, but Puppet rejects the *top-level key* holding one when
//!   that key is looked up. `load_document` returns them as strings and lists the tainted
//!   top-level keys; [`load`] fails with [`YamlError::SymbolValue`] on the first one.
//! * Integers beyond i64 (Ruby Bignum; Puppet accepts and prints them) become
//!   `Value::BigInt`, their decimal digits.
//! * `!!binary` data that is not UTF-8 becomes a lossy UTF-8 string.

use hiera_value::value::{Map, Value};
use indexmap::IndexMap;
use std::collections::HashMap;

pub mod index;
pub(crate) mod positions;
pub(crate) mod write;

/// A load failure. `Display` gives Psych's message; see `YamlError::puppet_message` for the
/// exact text of Puppet's `YamlLoadError` (which only sometimes names the file).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum YamlError {
    /// libyaml syntax error; `message` is Psych's text after `"(<path>): "`, e.g.
    /// "did not find expected ',' or ']' while parsing a flow sequence at line 1 column 4".
    /// `line`/`column` are Psych's (libyaml's context mark, 1-based).
    #[error("{message}")]
    Syntax {
        /// Psych's message.
        message: String,
        /// 1-based line of the mark.
        line: usize,
        /// 1-based column of the mark.
        column: usize,
    },
    /// "Tried to load unspecified class: Date" etc., with the 1-based position of the node.
    #[error("{message}")]
    DisallowedClass {
        /// Psych's message.
        message: String,
        /// 1-based line of the mark.
        line: usize,
        /// 1-based column of the mark.
        column: usize,
    },
    /// A Symbol (or other Ruby-only object) used as a value, under top-level key `key`
    /// (only from [`load`]; Puppet reports it per key at lookup time, see `Document`).
    #[error("Value for key '{key}' holds a Ruby {class}")]
    SymbolValue {
        /// The top-level key whose value holds it.
        key: String,
        /// The Ruby class (`Symbol` …).
        class: &'static str,
        /// 1-based line of the mark.
        line: usize,
        /// 1-based column of the mark.
        column: usize,
    },
    /// Psych 5 `AnchorNotDefined`: "An alias referenced an unknown anchor: x". Puppet's message has no file name for this one.
    #[error("{message}")]
    BadAlias {
        /// Psych's message.
        message: String,
        /// 1-based line of the mark.
        line: usize,
        /// 1-based column of the mark.
        column: usize,
    },
    /// A Ruby ArgumentError/TypeError raised while converting a scalar, e.g.
    /// `invalid value for Float(): "foo"` (`!!float foo`) or `invalid value for Integer(): "0x"`
    /// (plain `0x_`). Puppet's message has no file name for these.
    #[error("{message}")]
    Conversion {
        /// Psych's message.
        message: String,
        /// 1-based line of the mark.
        line: usize,
        /// 1-based column of the mark.
        column: usize,
    },
    /// An alias inside the node it refers to. Psych builds a cyclic object and Puppet then dies
    /// with `Error: Could not run: stack level too deep` (not "Unable to parse") on any lookup.
    #[error("stack level too deep")]
    Recursive {
        /// The anchor aliased inside itself.
        anchor: String,
        /// 1-based line of the mark.
        line: usize,
        /// 1-based column of the mark.
        column: usize,
    },
    /// Nesting deeper than Ruby's stack allows (Puppet's Psych dies with "stack level too deep"
    /// somewhere between 1000 and 2000 levels; we stop at `MAX_DEPTH`).
    #[error("stack level too deep")]
    TooDeep {
        /// 1-based line of the mark.
        line: usize,
        /// 1-based column of the mark.
        column: usize,
    },
    /// Aliases that would expand to more than `MAX_ALIAS_EXPANSION` values. Ruby shares the
    /// aliased objects so Psych loads such "billion laughs" files; we copy them, so we refuse.
    #[error("alias expansion too large")]
    AliasExpansion {
        /// 1-based line of the mark.
        line: usize,
        /// 1-based column of the mark.
        column: usize,
    },
}

/// Deepest nesting of collections accepted (Ruby's own limit is a little above 1000).
pub const MAX_DEPTH: usize = hiera_value::limits::MAX_VALUE_DEPTH;
/// Most values that alias copies may add to one document (a string counts one value per
/// 32 bytes): about 100 MB of copies at most.
pub const MAX_ALIAS_EXPANSION: usize = hiera_value::limits::MAX_ALIAS_EXPANSION;

impl YamlError {
    /// The message of Puppet's `YamlLoadError` for a file at `path` (yaml_data prefixes it with
    /// "Unable to parse "). Syntax and disallowed-class errors carry `"(<path>): "`, others do not.
    pub fn puppet_message(&self, path: &str) -> String {
        match self {
            YamlError::Syntax { message, .. } | YamlError::DisallowedClass { message, .. } => {
                format!("({path}): {message}")
            }
            other => other.to_string(),
        }
    }

    /// 1-based (line, column) of the error.
    pub fn position(&self) -> (usize, usize) {
        match self {
            YamlError::Syntax { line, column, .. }
            | YamlError::DisallowedClass { line, column, .. }
            | YamlError::SymbolValue { line, column, .. }
            | YamlError::BadAlias { line, column, .. }
            | YamlError::Conversion { line, column, .. }
            | YamlError::Recursive { line, column, .. }
            | YamlError::TooDeep { line, column }
            | YamlError::AliasExpansion { line, column } => (*line, *column),
        }
    }
}

/// A loaded document plus what Puppet would reject later, per top-level key.
#[derive(Debug, Clone, PartialEq)]
pub struct Document {
    /// The value; Ruby-only objects (symbols as values, `!ruby/encoding`) appear as strings.
    pub value: Value,
    /// Top-level keys (of a hash root) whose value still holds a Ruby-only object. Puppet fails
    /// a lookup of such a key with "Value for key 'KEY', in hash returned from data_hash
    /// function 'yaml_data', when using location 'PATH', has wrong type, expects
    /// Puppet::LookupValue, got TYPE"; other keys of the file are unaffected.
    pub ruby_values: Vec<RubyValue>,
}

/// A top-level key whose value holds a Ruby object a Puppet value cannot represent.
#[derive(Debug, Clone, PartialEq)]
pub struct RubyValue {
    /// The key whose value is the Ruby object.
    pub key: Value,
    /// Ruby class of the (first) offending object: "Symbol" or "Encoding".
    pub class: &'static str,
    /// 1-based position of that object.
    pub line: usize,
    /// The 1-based column of the value's tag.
    pub column: usize,
}

/// Load like Puppet, failing on Ruby-only values (see `load_document` for the lenient form).
/// An empty stream gives `Value::Null` (Puppet then uses `false`: an empty file).
pub fn load(text: &str) -> Result<Value, YamlError> {
    load_bytes(text.as_bytes())
}

/// Like [`load`] for raw file bytes (invalid UTF-8 gives libyaml's own error, as in Puppet).
pub fn load_bytes(bytes: &[u8]) -> Result<Value, YamlError> {
    let doc = load_document(bytes)?;
    match doc.ruby_values.first() {
        Some(rv) => Err(YamlError::SymbolValue {
            key: ruby_to_s(&rv.key),
            class: rv.class,
            line: rv.line,
            column: rv.column,
        }),
        None => Ok(doc.value),
    }
}

/// Load the first document of `bytes`, keeping Ruby-only values as strings and reporting them
/// per top-level key. Pass the file's bytes untouched: Puppet reads data files and hiera.yaml as
/// plain 'utf-8' (a BOM is kept and skipped by libyaml, shifting line-1 columns by one).
pub fn load_document(bytes: &[u8]) -> Result<Document, YamlError> {
    load_with_budget(bytes, MAX_ALIAS_EXPANSION)
}

fn load_with_budget(bytes: &[u8], alias_budget: usize) -> Result<Document, YamlError> {
    check_flow_depth(bytes)?;
    let mut parser = ffi::Parser::new(bytes);
    Builder {
        alias_budget,
        ..Builder::default()
    }
    .run(&mut parser)
}

/// A facts document as Puppet's fact cache reads it (`safe_load_file(file,
/// [Puppet::Node::Facts, Symbol])`): like [`load_document`], and a mapping tagged
/// `!ruby/object:Puppet::Node::Facts` loads as a plain hash (its `name`, `values`, ...).
pub fn load_facts_document(bytes: &[u8]) -> Result<Document, YamlError> {
    check_flow_depth(bytes)?;
    let mut parser = ffi::Parser::new(bytes);
    Builder {
        alias_budget: MAX_ALIAS_EXPANSION,
        permit_node_facts: true,
        ..Builder::default()
    }
    .run(&mut parser)
}

/// [`load_document`] with each Symbol value as a `Value::Object` of type `Symbol`, so that
/// Puppet's type inference can name where they are (`Runtime[ruby, 'Symbol']`).
pub fn load_document_marking_symbols(bytes: &[u8]) -> Result<Document, YamlError> {
    check_flow_depth(bytes)?;
    let mut parser = ffi::Parser::new(bytes);
    Builder {
        alias_budget: MAX_ALIAS_EXPANSION,
        mark_symbols: true,
        ..Builder::default()
    }
    .run(&mut parser)
}

/// libyaml's scanner looks ahead over every open flow collection for a possible simple key,
/// which is quadratic in the nesting: 100,000 `[` take seconds before the first event
/// arrives. So flow brackets are counted first (outside comments and quoted scalars), and
/// nesting deeper than [`MAX_DEPTH`] is refused as the builder would refuse it. A plain or
/// block scalar holding more than MAX_DEPTH unbalanced brackets is refused too.
fn check_flow_depth(bytes: &[u8]) -> Result<(), YamlError> {
    if bytes.len() < MAX_DEPTH {
        return Ok(());
    }
    let (mut depth, mut line, mut col) = (0usize, 1usize, 0usize);
    let mut i = 0;
    let mut prev = b'\n';
    while i < bytes.len() {
        let b = bytes[i];
        col += 1;
        match b {
            b'\n' => {
                line += 1;
                col = 0;
            }
            b'#' if prev.is_ascii_whitespace() => {
                while i + 1 < bytes.len() && bytes[i + 1] != b'\n' {
                    i += 1;
                }
            }
            b'\'' | b'"' if matches!(prev, b' ' | b'\t' | b'\n' | b'[' | b'{' | b',' | b':') => {
                // A quoted scalar: skip to its closing quote ('' and \" escape).
                i += 1;
                while i < bytes.len() {
                    match bytes[i] {
                        b'\\' if b == b'"' => i += 1,
                        b'\'' if b == b'\'' && bytes.get(i + 1) == Some(&b'\'') => i += 1,
                        c if c == b => break,
                        b'\n' => {
                            line += 1;
                            col = 0;
                        }
                        _ => {}
                    }
                    i += 1;
                }
            }
            b'[' | b'{' => {
                depth += 1;
                if depth > MAX_DEPTH {
                    return Err(YamlError::TooDeep { line, column: col });
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
        prev = b;
        i += 1;
    }
    Ok(())
}

fn symbol_object(name: &Value) -> Value {
    let name = name.as_str().unwrap_or_default().to_string();
    Value::Object(Box::new(hiera_value::value::RubyObject {
        type_name: "Symbol",
        class: "Symbol",
        fields: Vec::new(),
        to_s: name,
        scalar: None,
    }))
}

// ---------------------------------------------------------------------------------------------
// libyaml event stream (all unsafe code lives here)

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Mark {
    line: usize,
    column: usize,
}

enum Event {
    StreamStart,
    StreamEnd,
    DocStart,
    DocEnd,
    Alias {
        anchor: String,
        mark: Mark,
    },
    Scalar {
        anchor: Option<String>,
        tag: Option<String>,
        value: String,
        quoted_implicit: bool,
        mark: Mark,
        /// Just after the scalar's text (after a quoted one's closing quote).
        end: Mark,
    },
    SeqStart {
        anchor: Option<String>,
        tag: Option<String>,
        mark: Mark,
    },
    SeqEnd,
    MapStart {
        anchor: Option<String>,
        tag: Option<String>,
        mark: Mark,
    },
    MapEnd,
}

mod ffi {
    use super::{Event, Mark, YamlError};
    use std::ffi::CStr;
    use std::marker::PhantomData;
    use std::mem::MaybeUninit;
    use unsafe_libyaml_norway as unsafe_yaml;

    /// An initialised libyaml parser reading from a borrowed byte slice.
    pub(super) struct Parser<'a> {
        raw: Box<MaybeUninit<unsafe_yaml::yaml_parser_t>>,
        ok: bool,
        _input: PhantomData<&'a [u8]>,
    }

    impl<'a> Parser<'a> {
        pub(super) fn new(input: &'a [u8]) -> Parser<'a> {
            let mut raw = Box::new(MaybeUninit::<unsafe_yaml::yaml_parser_t>::uninit());
            let p = raw.as_mut_ptr();
            // SAFETY: `p` points to writable memory for a parser; initialize zeroes it first.
            // The input slice outlives the parser (lifetime 'a) and is never written.
            let ok = unsafe {
                let ok = unsafe_yaml::yaml_parser_initialize(p).ok;
                if ok {
                    // Psych passes Ruby UTF-8 strings with the encoding set explicitly.
                    unsafe_yaml::yaml_parser_set_encoding(p, unsafe_yaml::YAML_UTF8_ENCODING);
                    unsafe_yaml::yaml_parser_set_input_string(p, input.as_ptr(), input.len() as _);
                }
                ok
            };
            Parser {
                raw,
                ok,
                _input: PhantomData,
            }
        }

        /// Next event, or the syntax error exactly as Psych words it.
        pub(super) fn next(&mut self) -> Result<Event, YamlError> {
            if !self.ok {
                return Err(YamlError::Syntax {
                    message: "out of memory".into(),
                    line: 1,
                    column: 1,
                });
            }
            let p = self.raw.as_mut_ptr();
            let mut ev = MaybeUninit::<unsafe_yaml::yaml_event_t>::uninit();
            // SAFETY: the parser is initialised; on success the event is initialised and is
            // deleted below after its data has been copied out.
            unsafe {
                if unsafe_yaml::yaml_parser_parse(p, ev.as_mut_ptr()).fail {
                    return Err(syntax_error(&*p));
                }
                let ev = ev.as_mut_ptr();
                let out = convert(&*ev);
                unsafe_yaml::yaml_event_delete(ev);
                Ok(out)
            }
        }
    }

    impl Drop for Parser<'_> {
        fn drop(&mut self) {
            if self.ok {
                // SAFETY: initialised in `new`, deleted exactly once.
                unsafe { unsafe_yaml::yaml_parser_delete(self.raw.as_mut_ptr()) }
            }
        }
    }

    /// Psych's `make_exception`: "<problem> <context> at line L column C" where L/C come from
    /// the *context* mark (zero, hence "line 1 column 1", when libyaml set none).
    fn syntax_error(p: &unsafe_yaml::yaml_parser_t) -> YamlError {
        // SAFETY: problem/context are null or static NUL-terminated strings.
        // libyaml's strings are `*const i8` on every target; `c_char` is `u8` on aarch64.
        let text = |s: *const i8| -> Option<String> {
            if s.is_null() {
                None
            } else {
                Some(
                    unsafe { CStr::from_ptr(s.cast()) }
                        .to_string_lossy()
                        .into_owned(),
                )
            }
        };
        let parts: Vec<String> = [text(p.problem), text(p.context)]
            .into_iter()
            .flatten()
            .collect();
        let line = p.context_mark.line as usize + 1;
        let column = p.context_mark.column as usize + 1;
        YamlError::Syntax {
            message: format!("{} at line {} column {}", parts.join(" "), line, column),
            line,
            column,
        }
    }

    unsafe fn cstr(s: *const u8) -> Option<String> {
        if s.is_null() {
            None
        } else {
            Some(CStr::from_ptr(s.cast()).to_string_lossy().into_owned())
        }
    }

    unsafe fn convert(ev: &unsafe_yaml::yaml_event_t) -> Event {
        let mark = Mark {
            line: ev.start_mark.line as usize + 1,
            column: ev.start_mark.column as usize + 1,
        };
        match ev.type_ {
            unsafe_yaml::YAML_STREAM_END_EVENT => Event::StreamEnd,
            unsafe_yaml::YAML_DOCUMENT_START_EVENT => Event::DocStart,
            unsafe_yaml::YAML_DOCUMENT_END_EVENT => Event::DocEnd,
            unsafe_yaml::YAML_ALIAS_EVENT => Event::Alias {
                anchor: cstr(ev.data.alias.anchor).unwrap_or_default(),
                mark,
            },
            unsafe_yaml::YAML_SCALAR_EVENT => {
                let s = ev.data.scalar;
                let bytes: &[u8] = if s.value.is_null() || s.length == 0 {
                    &[]
                } else {
                    std::slice::from_raw_parts(s.value, s.length as usize)
                };
                let value = match std::str::from_utf8(bytes) {
                    Ok(v) => v.to_owned(),
                    Err(_) => String::from_utf8_lossy(bytes).into_owned(),
                };
                Event::Scalar {
                    anchor: cstr(s.anchor),
                    tag: cstr(s.tag),
                    value,
                    quoted_implicit: s.quoted_implicit,
                    mark,
                    end: Mark {
                        line: ev.end_mark.line as usize + 1,
                        column: ev.end_mark.column as usize + 1,
                    },
                }
            }
            unsafe_yaml::YAML_SEQUENCE_START_EVENT => Event::SeqStart {
                anchor: cstr(ev.data.sequence_start.anchor),
                tag: cstr(ev.data.sequence_start.tag),
                mark,
            },
            unsafe_yaml::YAML_SEQUENCE_END_EVENT => Event::SeqEnd,
            unsafe_yaml::YAML_MAPPING_START_EVENT => Event::MapStart {
                anchor: cstr(ev.data.mapping_start.anchor),
                tag: cstr(ev.data.mapping_start.tag),
                mark,
            },
            unsafe_yaml::YAML_MAPPING_END_EVENT => Event::MapEnd,
            // STREAM_START (and the never-returned NO_EVENT) carry nothing we use.
            _ => Event::StreamStart,
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Psych's ToRuby visitor, driven by events with an explicit stack (no recursion limit).

const STR_TAG: &str = "tag:yaml.org,2002:str";

/// Position of a Ruby-only object (Symbol, Encoding) inside a value.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Taint {
    class: &'static str,
    mark: Mark,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Kind {
    Scalar,
    Seq,
    Map,
    Alias,
}

/// A finished node with what the parent needs to know about it.
#[derive(Clone, Debug)]
struct Node {
    value: Value,
    kind: Kind,
    /// First Ruby-only object inside (nothing for a symbol used as a key).
    taint: Option<Taint>,
    /// Hash values: taint per key (usually empty, then it costs nothing).
    entries: IndexMap<Value, Taint>,
    /// Inline sequences: entry taints of tainted hash items, by index (for `<<: [..]`).
    items: Vec<(usize, IndexMap<Value, Taint>)>,
    /// Scalar resolved to a Symbol (a key then becomes its name, untainted, never a merge key).
    symbol: bool,
    /// Scalar tagged `!!str` (such a `<<` key is not a merge key).
    str_tag: bool,
    /// Number of values in the tree (bounds alias copying).
    size: usize,
}

impl Node {
    fn plain(value: Value, kind: Kind) -> Node {
        // A long string counts as the values its bytes would fill, so that aliases of one
        // cannot multiply memory unseen by the alias budget.
        let size = match &value {
            Value::String(s) => 1 + s.len() / 32,
            _ => 1,
        };
        Node {
            value,
            kind,
            taint: None,
            entries: IndexMap::default(),
            items: Vec::new(),
            symbol: false,
            str_tag: false,
            size,
        }
    }
}

enum Slot {
    /// Anchor of a collection still being built (an alias to it would be a cycle).
    Building(u64),
    Done(Box<Node>),
}

struct Anchor {
    name: String,
    id: u64,
}

enum FrameKind {
    Seq {
        items: Vec<Value>,
        taint: Option<Taint>,
        item_taints: Vec<(usize, IndexMap<Value, Taint>)>,
    },
    /// `!!omap` sequence: a hash from each item's first key to its last value.
    Omap {
        map: Map,
        taints: IndexMap<Value, Taint>,
    },
    Map {
        map: Map,
        taints: IndexMap<Value, Taint>,
        key: Option<Box<Node>>,
        special: MapTag,
    },
}

/// Mapping tags that Psych turns into something other than the mapping itself.
#[derive(Clone, Copy, PartialEq)]
enum MapTag {
    None,
    /// `!str`: the value of its `str` key.
    Str,
    /// `!ruby/hash-with-ivars`: the hash under its `elements` key.
    Ivars,
}

struct Frame {
    kind: FrameKind,
    anchor: Option<Anchor>,
    size: usize,
    mark: Mark,
}

#[derive(Default)]
struct Builder {
    stack: Vec<Frame>,
    anchors: HashMap<String, Slot>,
    next_id: u64,
    root: Option<Node>,
    expanded: usize,
    alias_budget: usize,
    /// Symbol values become `Value::Object`s of type `Symbol` (for error messages).
    mark_symbols: bool,
    /// `!ruby/object:Puppet::Node::Facts` mappings load as hashes (the fact cache).
    permit_node_facts: bool,
}

impl Builder {
    fn run(mut self, parser: &mut ffi::Parser) -> Result<Document, YamlError> {
        // Psych parses the whole first document before converting it, so a syntax error
        // anywhere in it wins over a conversion error found earlier: remember the first
        // conversion error and keep parsing to the end of the document.
        let mut failed: Option<YamlError> = None;
        loop {
            let ev = parser.next()?;
            if let Some(err) = &failed {
                match ev {
                    Event::DocEnd | Event::StreamEnd => return Err(err.clone()),
                    _ => continue,
                }
            }
            let step = match ev {
                Event::StreamStart | Event::DocStart => Ok(()),
                // Psych.parse returns at the first document end: later documents (even broken
                // ones) are never looked at.
                Event::DocEnd | Event::StreamEnd => break,
                Event::Alias { anchor, mark } => self.alias(anchor, mark),
                Event::Scalar {
                    anchor,
                    tag,
                    value,
                    quoted_implicit,
                    mark,
                    ..
                } => match scalar_node(value, tag.as_deref(), quoted_implicit, mark) {
                    Ok(mut node) => {
                        if node.symbol && self.mark_symbols {
                            node.value = symbol_object(&node.value);
                        }
                        if let Some(a) = anchor {
                            self.anchors.insert(a, Slot::Done(Box::new(node.clone())));
                        }
                        self.complete(node)
                    }
                    Err(e) => Err(e),
                },
                Event::SeqStart { anchor, tag, mark } => self.start_seq(anchor, tag, mark),
                Event::MapStart { anchor, tag, mark } => self.start_map(anchor, tag, mark),
                Event::SeqEnd | Event::MapEnd => self.end(),
            };
            if let Err(e) = step {
                failed = Some(e);
                self.stack.clear();
            }
        }
        let Some(root) = self.root else {
            return Ok(Document {
                value: Value::Null,
                ruby_values: Vec::new(),
            });
        };
        let mut ruby_values = Vec::new();
        match &root.value {
            Value::Hash(h) if !root.entries.is_empty() => {
                for k in h.keys() {
                    if let Some(t) = root.entries.get(k) {
                        ruby_values.push(RubyValue {
                            key: k.clone(),
                            class: t.class,
                            line: t.mark.line,
                            column: t.mark.column,
                        });
                    }
                }
            }
            _ => {}
        }
        Ok(Document {
            value: root.value,
            ruby_values,
        })
    }

    fn new_anchor(&mut self, anchor: Option<String>) -> Option<Anchor> {
        let name = anchor?;
        self.next_id += 1;
        let id = self.next_id;
        self.anchors.insert(name.clone(), Slot::Building(id));
        Some(Anchor { name, id })
    }

    fn check_depth(&self, mark: Mark) -> Result<(), YamlError> {
        if self.stack.len() >= MAX_DEPTH {
            return Err(YamlError::TooDeep {
                line: mark.line,
                column: mark.column,
            });
        }
        Ok(())
    }

    fn alias(&mut self, anchor: String, mark: Mark) -> Result<(), YamlError> {
        let node = match self.anchors.get(&anchor) {
            Some(Slot::Done(n)) => {
                self.expanded = self.expanded.saturating_add(n.size);
                if self.expanded > self.alias_budget {
                    return Err(YamlError::AliasExpansion {
                        line: mark.line,
                        column: mark.column,
                    });
                }
                let mut n = (**n).clone();
                n.kind = Kind::Alias;
                n.str_tag = false;
                n
            }
            Some(Slot::Building(_)) => {
                return Err(YamlError::Recursive {
                    anchor,
                    line: mark.line,
                    column: mark.column,
                })
            }
            None => {
                return Err(YamlError::BadAlias {
                    message: format!("An alias referenced an unknown anchor: {anchor}"),
                    line: mark.line,
                    column: mark.column,
                })
            }
        };
        self.complete(node)
    }

    fn start_seq(
        &mut self,
        anchor: Option<String>,
        tag: Option<String>,
        mark: Mark,
    ) -> Result<(), YamlError> {
        self.check_depth(mark)?;
        let mut omap = false;
        if let Some(tag) = tag.as_deref() {
            if tag == "!omap" || tag == "tag:yaml.org,2002:omap" {
                omap = true;
            } else if let Some(class) = tag
                .strip_prefix("!seq:")
                .or_else(|| tag.strip_prefix("!ruby/array:"))
            {
                return Err(disallowed(class, mark));
            }
        }
        let anchor = self.new_anchor(anchor);
        let kind = if omap {
            FrameKind::Omap {
                map: Map::default(),
                taints: IndexMap::default(),
            }
        } else {
            FrameKind::Seq {
                items: Vec::new(),
                taint: None,
                item_taints: Vec::new(),
            }
        };
        self.stack.push(Frame {
            kind,
            anchor,
            size: 1,
            mark,
        });
        Ok(())
    }

    fn start_map(
        &mut self,
        anchor: Option<String>,
        tag: Option<String>,
        mark: Mark,
    ) -> Result<(), YamlError> {
        self.check_depth(mark)?;
        let mut special = MapTag::None;
        if let Some(tag) = tag.as_deref() {
            if let Some(class) = mapping_tag_class(tag) {
                let permitted = self.permit_node_facts && class == "Puppet::Node::Facts";
                if !class.is_empty() && !permitted {
                    return Err(disallowed(class, mark));
                }
            }
            if tag == STR_TAG || str_tag_class(tag).is_some() {
                special = MapTag::Str;
            } else if tag == "!ruby/hash-with-ivars" {
                special = MapTag::Ivars;
            }
            if let Some(Some(class)) = str_tag_class(tag) {
                return Err(disallowed(class, mark));
            }
        }
        let anchor = self.new_anchor(anchor);
        let kind = FrameKind::Map {
            map: Map::default(),
            taints: IndexMap::default(),
            key: None,
            special,
        };
        self.stack.push(Frame {
            kind,
            anchor,
            size: 1,
            mark,
        });
        Ok(())
    }

    fn end(&mut self) -> Result<(), YamlError> {
        let Some(frame) = self.stack.pop() else {
            return Ok(());
        };
        let mut node = match frame.kind {
            FrameKind::Seq {
                items,
                taint,
                item_taints,
            } => Node {
                taint,
                items: item_taints,
                ..Node::plain(Value::Array(items), Kind::Seq)
            },
            FrameKind::Omap { map, taints } => Node {
                taint: taints.values().next().copied(),
                entries: taints,
                ..Node::plain(Value::Hash(map), Kind::Seq)
            },
            FrameKind::Map {
                map,
                taints,
                special,
                ..
            } => {
                if special != MapTag::None {
                    let name = if special == MapTag::Str {
                        "str"
                    } else {
                        "elements"
                    };
                    let mut v = map.get(&Value::str(name)).cloned().unwrap_or(Value::Null);
                    if special == MapTag::Str {
                        str_members(&map, &v, frame.mark)?;
                    }
                    if special == MapTag::Ivars && !matches!(v, Value::Hash(_)) {
                        v = Value::Hash(Map::default());
                    }
                    let taint = taints.get(&Value::str(name)).copied();
                    Node {
                        taint,
                        ..Node::plain(v, Kind::Map)
                    }
                } else {
                    Node {
                        taint: taints.values().next().copied(),
                        entries: taints,
                        ..Node::plain(Value::Hash(map), Kind::Map)
                    }
                }
            }
        };
        node.size = frame.size;
        if let Some(a) = frame.anchor {
            // A nested node may have re-used the anchor name meanwhile; Psych keeps the latest
            // registration, which for a collection is the one made when it *started*.
            if matches!(self.anchors.get(&a.name), Some(Slot::Building(id)) if *id == a.id) {
                self.anchors
                    .insert(a.name, Slot::Done(Box::new(node.clone())));
            }
        }
        self.complete(node)
    }

    /// Hand a finished node to its parent.
    fn complete(&mut self, node: Node) -> Result<(), YamlError> {
        let Some(frame) = self.stack.last_mut() else {
            self.root = Some(node);
            return Ok(());
        };
        frame.size = frame.size.saturating_add(node.size);
        match &mut frame.kind {
            FrameKind::Seq {
                items,
                taint,
                item_taints,
            } => {
                if taint.is_none() {
                    *taint = node.taint;
                }
                if !node.entries.is_empty() {
                    item_taints.push((items.len(), node.entries));
                }
                items.push(node.value);
            }
            FrameKind::Omap { map, taints } => {
                // Psych::Omap: map[first key of the item] = last value of the item.
                if let Value::Hash(h) = node.value {
                    if let (Some(k), Some(v)) = (h.keys().next(), h.values().last()) {
                        let t = h.keys().last().and_then(|lk| node.entries.get(lk)).copied();
                        put(map, taints, k.clone(), v.clone(), t);
                    }
                }
            }
            FrameKind::Map {
                map, taints, key, ..
            } => match key.take() {
                None => *key = Some(Box::new(node)),
                Some(k) => insert_pair(map, taints, *k, node),
            },
        }
        Ok(())
    }
}

/// Psych sets the other keys of a `!str` mapping as instance variables of the string, which
/// fails for names that are not identifiers and for immutable values.
fn str_members(map: &Map, string: &Value, mark: Mark) -> Result<(), YamlError> {
    for k in map.keys() {
        if k.as_str() == Some("str") {
            continue;
        }
        let name = ruby_to_s(k);
        let name = name.strip_prefix('@').unwrap_or(&name);
        let mut chars = name.chars();
        let valid = chars
            .next()
            .is_some_and(|c| c == '_' || c.is_alphabetic() || !c.is_ascii())
            && chars.all(|c| c == '_' || c.is_alphanumeric() || !c.is_ascii());
        let message = if !valid {
            format!("`@{name}' is not allowed as an instance variable name")
        } else {
            match string {
                Value::Null => "can't modify frozen NilClass: nil".to_string(),
                Value::Bool(b) => format!(
                    "can't modify frozen {}Class: {b}",
                    if *b { "True" } else { "False" }
                ),
                Value::Int(i) => format!("can't modify frozen Integer: {i}"),
                Value::Float(f) => format!(
                    "can't modify frozen Float: {}",
                    ruby_to_s(&Value::Float(*f))
                ),
                _ => continue,
            }
        };
        return Err(YamlError::Conversion {
            message,
            line: mark.line,
            column: mark.column,
        });
    }
    Ok(())
}

fn put(map: &mut Map, taints: &mut IndexMap<Value, Taint>, k: Value, v: Value, t: Option<Taint>) {
    match t {
        Some(t) => {
            taints.insert(k.clone(), t);
        }
        None if !taints.is_empty() => {
            taints.shift_remove(&k);
        }
        None => {}
    }
    map.insert(k, v);
}

/// Psych's `revive_hash` step for one pair, including its `<<` merge-key rules.
fn insert_pair(map: &mut Map, taints: &mut IndexMap<Value, Taint>, mut key: Node, val: Node) {
    // A symbol key is its name (Puppet's symkeys_to_string), even where symbols are marked.
    if let (true, Value::Object(o)) = (key.symbol, &key.value) {
        key.value = Value::String(o.to_s.clone());
    }
    let merge = !key.symbol && !key.str_tag && key.value.as_str() == Some("<<");
    if merge {
        match val.kind {
            // hash.merge!(val); a non-hash raises TypeError and is stored under "<<".
            Kind::Alias | Kind::Map => {
                if let Value::Hash(h) = val.value {
                    for (k, v) in h {
                        let t = val.entries.get(&k).copied();
                        put(map, taints, k, v, t);
                    }
                    return;
                }
                put(map, taints, key.value, val.value, val.taint);
                return;
            }
            // Later hashes first, so earlier ones win; keys keep their first-seen order.
            Kind::Seq => {
                if let Value::Array(items) = &val.value {
                    if items.iter().all(|i| matches!(i, Value::Hash(_))) {
                        let mut merged: IndexMap<Value, (Value, Option<Taint>)> =
                            IndexMap::default();
                        for (idx, item) in items.iter().enumerate().rev() {
                            let et = val.items.iter().find(|(i, _)| *i == idx).map(|(_, e)| e);
                            if let Value::Hash(h) = item {
                                for (k, v) in h {
                                    let t = et.and_then(|e| e.get(k)).copied();
                                    merged.insert(k.clone(), (v.clone(), t));
                                }
                            }
                        }
                        for (k, (v, t)) in merged {
                            put(map, taints, k, v, t);
                        }
                        return;
                    }
                }
                put(map, taints, key.value, val.value, val.taint);
                return;
            }
            Kind::Scalar => {}
        }
    }
    // Symbol keys were already turned into their names (Puppet's symkeys_to_string).
    put(map, taints, key.value, val.value, val.taint);
}

fn disallowed(class: &str, mark: Mark) -> YamlError {
    YamlError::DisallowedClass {
        message: format!("Tried to load unspecified class: {class}"),
        line: mark.line,
        column: mark.column,
    }
}

/// `!str` / `!ruby/string` / `!str:Class` tags: Some(None) for no class, Some(Some(class)).
fn str_tag_class(tag: &str) -> Option<Option<&str>> {
    let rest = tag
        .strip_prefix("!str")
        .or_else(|| tag.strip_prefix("!ruby/string"))?;
    if rest.is_empty() {
        return Some(None);
    }
    let class = rest.strip_prefix(':')?;
    Some(if class.is_empty() { None } else { Some(class) })
}

/// Class a tagged mapping would need (Psych's `visit_Psych_Nodes_Mapping`); Some("") for tags
/// that load as a plain hash despite naming a class, None for ordinary tags.
fn mapping_tag_class(tag: &str) -> Option<&str> {
    if let Some(rest) = tag.strip_prefix("!ruby/struct") {
        let name = rest.strip_prefix(':').unwrap_or(rest);
        return Some(if name.is_empty() { "Struct" } else { name });
    }
    if let Some(rest) = tag.strip_prefix("!ruby/object") {
        let name = rest.strip_prefix(':').unwrap_or(rest);
        return Some(match name {
            "" => "Object",
            "Hash" => "",
            n => n,
        });
    }
    if tag == "!ruby/range" {
        return Some("Range");
    }
    if let Some(rest) = tag.strip_prefix("!ruby/exception") {
        let name = rest.strip_prefix(':').unwrap_or(rest);
        return Some(if name.is_empty() { "Exception" } else { name });
    }
    if tag == "!set" || tag == "tag:yaml.org,2002:set" {
        return Some("Psych::Set");
    }
    if tag == "!omap" || tag == "tag:yaml.org,2002:omap" {
        return Some("Psych::Omap");
    }
    for prefix in [
        "!ruby/hash-with-ivars:",
        "!map:",
        "!ruby/hash:",
        "!ruby/marshalable:",
        "!ruby/array:",
    ] {
        if let Some(name) = tag.strip_prefix(prefix) {
            return Some(name);
        }
    }
    None
}

/// Ruby 3.3's `Encoding.name_list` (names and aliases, which `Encoding.find` compares ignoring
/// ASCII case), each with the name of the encoding it finds (`Encoding#to_s`; `internal` is nil,
/// and `external`, `locale` and `filesystem` are UTF-8 under Puppet's UTF-8 locale).
const RUBY_ENCODING_NAMES: &[(&str, &str)] = &[
    ("646", "US-ASCII"),
    ("ANSI_X3.4-1968", "US-ASCII"),
    ("ASCII", "US-ASCII"),
    ("ASCII-8BIT", "ASCII-8BIT"),
    ("BINARY", "ASCII-8BIT"),
    ("Big5", "Big5"),
    ("Big5-HKSCS", "Big5-HKSCS"),
    ("Big5-HKSCS:2008", "Big5-HKSCS"),
    ("Big5-UAO", "Big5-UAO"),
    ("CESU-8", "CESU-8"),
    ("CP1250", "Windows-1250"),
    ("CP1251", "Windows-1251"),
    ("CP1252", "Windows-1252"),
    ("CP1253", "Windows-1253"),
    ("CP1254", "Windows-1254"),
    ("CP1255", "Windows-1255"),
    ("CP1256", "Windows-1256"),
    ("CP1257", "Windows-1257"),
    ("CP1258", "Windows-1258"),
    ("CP437", "IBM437"),
    ("CP50220", "CP50220"),
    ("CP50221", "CP50221"),
    ("CP51932", "CP51932"),
    ("CP65000", "UTF-7"),
    ("CP65001", "UTF-8"),
    ("CP720", "IBM720"),
    ("CP737", "IBM737"),
    ("CP775", "IBM775"),
    ("CP850", "CP850"),
    ("CP852", "CP852"),
    ("CP855", "CP855"),
    ("CP857", "IBM857"),
    ("CP860", "IBM860"),
    ("CP861", "IBM861"),
    ("CP862", "IBM862"),
    ("CP863", "IBM863"),
    ("CP864", "IBM864"),
    ("CP865", "IBM865"),
    ("CP866", "IBM866"),
    ("CP869", "IBM869"),
    ("CP874", "Windows-874"),
    ("CP878", "KOI8-R"),
    ("CP932", "Windows-31J"),
    ("CP936", "GBK"),
    ("CP949", "CP949"),
    ("CP950", "CP950"),
    ("CP951", "CP951"),
    ("EUC-CN", "GB2312"),
    ("EUC-JIS-2004", "EUC-JIS-2004"),
    ("EUC-JISX0213", "EUC-JIS-2004"),
    ("EUC-JP", "EUC-JP"),
    ("EUC-KR", "EUC-KR"),
    ("EUC-TW", "EUC-TW"),
    ("Emacs-Mule", "Emacs-Mule"),
    ("GB12345", "GB12345"),
    ("GB18030", "GB18030"),
    ("GB1988", "GB1988"),
    ("GB2312", "GB2312"),
    ("GBK", "GBK"),
    ("IBM037", "IBM037"),
    ("IBM437", "IBM437"),
    ("IBM720", "IBM720"),
    ("IBM737", "IBM737"),
    ("IBM775", "IBM775"),
    ("IBM850", "CP850"),
    ("IBM852", "IBM852"),
    ("IBM855", "IBM855"),
    ("IBM857", "IBM857"),
    ("IBM860", "IBM860"),
    ("IBM861", "IBM861"),
    ("IBM862", "IBM862"),
    ("IBM863", "IBM863"),
    ("IBM864", "IBM864"),
    ("IBM865", "IBM865"),
    ("IBM866", "IBM866"),
    ("IBM869", "IBM869"),
    ("ISO-2022-JP", "ISO-2022-JP"),
    ("ISO-2022-JP-2", "ISO-2022-JP-2"),
    ("ISO-2022-JP-KDDI", "ISO-2022-JP-KDDI"),
    ("ISO-8859-1", "ISO-8859-1"),
    ("ISO-8859-10", "ISO-8859-10"),
    ("ISO-8859-11", "ISO-8859-11"),
    ("ISO-8859-13", "ISO-8859-13"),
    ("ISO-8859-14", "ISO-8859-14"),
    ("ISO-8859-15", "ISO-8859-15"),
    ("ISO-8859-16", "ISO-8859-16"),
    ("ISO-8859-2", "ISO-8859-2"),
    ("ISO-8859-3", "ISO-8859-3"),
    ("ISO-8859-4", "ISO-8859-4"),
    ("ISO-8859-5", "ISO-8859-5"),
    ("ISO-8859-6", "ISO-8859-6"),
    ("ISO-8859-7", "ISO-8859-7"),
    ("ISO-8859-8", "ISO-8859-8"),
    ("ISO-8859-9", "ISO-8859-9"),
    ("ISO2022-JP", "ISO-2022-JP"),
    ("ISO2022-JP2", "ISO-2022-JP-2"),
    ("ISO8859-1", "ISO-8859-1"),
    ("ISO8859-10", "ISO-8859-10"),
    ("ISO8859-11", "ISO-8859-11"),
    ("ISO8859-13", "ISO-8859-13"),
    ("ISO8859-14", "ISO-8859-14"),
    ("ISO8859-15", "ISO-8859-15"),
    ("ISO8859-16", "ISO-8859-16"),
    ("ISO8859-2", "ISO-8859-2"),
    ("ISO8859-3", "ISO-8859-3"),
    ("ISO8859-4", "ISO-8859-4"),
    ("ISO8859-5", "ISO-8859-5"),
    ("ISO8859-6", "ISO-8859-6"),
    ("ISO8859-7", "ISO-8859-7"),
    ("ISO8859-8", "ISO-8859-8"),
    ("ISO8859-9", "ISO-8859-9"),
    ("KOI8-R", "KOI8-R"),
    ("KOI8-U", "KOI8-U"),
    ("MacJapan", "MacJapanese"),
    ("MacJapanese", "MacJapanese"),
    ("PCK", "Windows-31J"),
    ("SJIS", "Windows-31J"),
    ("SJIS-DoCoMo", "SJIS-DoCoMo"),
    ("SJIS-KDDI", "SJIS-KDDI"),
    ("SJIS-SoftBank", "SJIS-SoftBank"),
    ("Shift_JIS", "Shift_JIS"),
    ("TIS-620", "TIS-620"),
    ("UCS-2BE", "UTF-16BE"),
    ("UCS-4BE", "UTF-32BE"),
    ("UCS-4LE", "UTF-32LE"),
    ("US-ASCII", "US-ASCII"),
    ("UTF-16", "UTF-16"),
    ("UTF-16BE", "UTF-16BE"),
    ("UTF-16LE", "UTF-16LE"),
    ("UTF-32", "UTF-32"),
    ("UTF-32BE", "UTF-32BE"),
    ("UTF-32LE", "UTF-32LE"),
    ("UTF-7", "UTF-7"),
    ("UTF-8", "UTF-8"),
    ("UTF-8-HFS", "UTF8-MAC"),
    ("UTF-8-MAC", "UTF8-MAC"),
    ("UTF8-DoCoMo", "UTF8-DoCoMo"),
    ("UTF8-KDDI", "UTF8-KDDI"),
    ("UTF8-MAC", "UTF8-MAC"),
    ("UTF8-SoftBank", "UTF8-SoftBank"),
    ("Windows-1250", "Windows-1250"),
    ("Windows-1251", "Windows-1251"),
    ("Windows-1252", "Windows-1252"),
    ("Windows-1253", "Windows-1253"),
    ("Windows-1254", "Windows-1254"),
    ("Windows-1255", "Windows-1255"),
    ("Windows-1256", "Windows-1256"),
    ("Windows-1257", "Windows-1257"),
    ("Windows-1258", "Windows-1258"),
    ("Windows-31J", "Windows-31J"),
    ("Windows-874", "Windows-874"),
    ("csWindows31J", "Windows-31J"),
    ("ebcdic-cp-us", "IBM037"),
    ("euc-jp-ms", "eucJP-ms"),
    ("eucCN", "GB2312"),
    ("eucJP", "EUC-JP"),
    ("eucJP-ms", "eucJP-ms"),
    ("eucKR", "EUC-KR"),
    ("eucTW", "EUC-TW"),
    ("external", "UTF-8"),
    ("filesystem", "UTF-8"),
    ("internal", ""),
    ("locale", "UTF-8"),
    ("macCentEuro", "macCentEuro"),
    ("macCroatian", "macCroatian"),
    ("macCyrillic", "macCyrillic"),
    ("macGreek", "macGreek"),
    ("macIceland", "macIceland"),
    ("macRoman", "macRoman"),
    ("macRomania", "macRomania"),
    ("macThai", "macThai"),
    ("macTurkish", "macTurkish"),
    ("macUkraine", "macUkraine"),
    ("stateless-ISO-2022-JP", "stateless-ISO-2022-JP"),
    ("stateless-ISO-2022-JP-KDDI", "stateless-ISO-2022-JP-KDDI"),
];

/// Psych's `deserialize` for a scalar node.
fn scalar_node(
    value: String,
    tag: Option<&str>,
    quoted_implicit: bool,
    mark: Mark,
) -> Result<Node, YamlError> {
    let conv = |message: String| YamlError::Conversion {
        message,
        line: mark.line,
        column: mark.column,
    };
    let sym = |name: String| Node {
        symbol: true,
        taint: Some(Taint {
            class: "Symbol",
            mark,
        }),
        ..Node::plain(Value::String(name), Kind::Scalar)
    };
    let from_scan = |s: Scalar, original: String| -> Result<Node, YamlError> {
        Ok(match s {
            Scalar::Value(v) => Node::plain(v, Kind::Scalar),
            Scalar::Str => Node::plain(Value::String(original), Kind::Scalar),
            Scalar::BigInt(d) => Node::plain(Value::BigInt(d), Kind::Scalar),
            Scalar::Symbol(name) => sym(name),
            Scalar::Date => return Err(disallowed("Date", mark)),
            Scalar::Time => return Err(disallowed("Time", mark)),
            Scalar::Invalid(m) => return Err(conv(m)),
        })
    };
    let Some(tag) = tag else {
        if quoted_implicit {
            return Ok(Node::plain(Value::String(value), Kind::Scalar));
        }
        let s = scan_plain_scalar(&value);
        return from_scan(s, value);
    };
    match tag {
        // `unpack('m')`: an ASCII-8BIT String.
        "!binary" | "tag:yaml.org,2002:binary" => {
            let bytes = hiera_value::ruby::decode64(&value);
            Ok(Node::plain(
                hiera_value::value::binary_string(&bytes),
                Kind::Scalar,
            ))
        }
        STR_TAG => Ok(Node {
            str_tag: true,
            ..Node::plain(Value::String(value), Kind::Scalar)
        }),
        "!ruby/object:BigDecimal" => Err(disallowed("BigDecimal", mark)),
        "!ruby/object:DateTime" => Err(disallowed("DateTime", mark)),
        "!ruby/object:Complex" => Err(disallowed("Complex", mark)),
        "!ruby/object:Rational" => Err(disallowed("Rational", mark)),
        "!ruby/regexp" => Err(disallowed("Regexp", mark)),
        "!ruby/range" => Err(disallowed("Range", mark)),
        // `Encoding.find(value)`: `internal` is the default internal encoding, nil; an
        // unknown name is an ArgumentError that fails the whole file.
        "!ruby/encoding" => {
            if value.eq_ignore_ascii_case("internal") {
                Ok(Node::plain(Value::Null, Kind::Scalar))
            } else if let Some((_, name)) = RUBY_ENCODING_NAMES
                .iter()
                .find(|(n, _)| n.eq_ignore_ascii_case(&value))
            {
                // The Encoding object, which data files reject; its `to_s` is its name.
                Ok(Node {
                    taint: Some(Taint {
                        class: "Encoding",
                        mark,
                    }),
                    ..Node::plain(Value::str(*name), Kind::Scalar)
                })
            } else {
                Err(conv(format!("unknown encoding name - {value}")))
            }
        }
        "!ruby/class" | "!ruby/module" => {
            if value.is_empty() {
                Ok(Node::plain(Value::Null, Kind::Scalar))
            } else {
                Err(disallowed(&value, mark))
            }
        }
        "tag:yaml.org,2002:float" | "!float" => match scan_plain_scalar(&value) {
            Scalar::Value(Value::Float(f)) => Ok(Node::plain(Value::Float(f), Kind::Scalar)),
            Scalar::Value(Value::Int(i)) => Ok(Node::plain(Value::Float(i as f64), Kind::Scalar)),
            Scalar::BigInt(d) => Ok(Node::plain(
                Value::Float(d.parse().unwrap_or(0.0)),
                Kind::Scalar,
            )),
            Scalar::Value(Value::Null) => Err(conv("can't convert nil into Float".into())),
            Scalar::Value(Value::Bool(b)) => Err(conv(format!("can't convert {b} into Float"))),
            Scalar::Symbol(_) => Err(conv("can't convert Symbol into Float".into())),
            Scalar::Str | Scalar::Value(_) => match hiera_value::ruby::float(&value) {
                Ok(f) => Ok(Node::plain(Value::Float(f), Kind::Scalar)),
                Err(m) => Err(conv(m)),
            },
            other => from_scan(other, value),
        },
        _ => {
            if let Some(class) = str_tag_class(tag) {
                return match class {
                    Some(c) => Err(disallowed(c, mark)),
                    None => Ok(Node::plain(Value::String(value), Kind::Scalar)),
                };
            }
            if tag.starts_with("!ruby/sym") {
                return Ok(sym(value));
            }
            let s = scan_plain_scalar(&value);
            from_scan(s, value)
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Psych::ScalarScanner#tokenize

/// What Psych's `ScalarScanner#tokenize` makes of a plain scalar.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Scalar {
    /// nil, true/false, an Integer within i64, a Float.
    Value(Value),
    /// Stays the string itself.
    Str,
    /// An Integer beyond i64 (Ruby Bignum), as decimal digits with an optional '-'.
    BigInt(String),
    /// A Symbol with this name (`:foo`, `:"foo"`).
    Symbol(String),
    /// Matches Psych's date pattern (safe_load: "Tried to load unspecified class: Date").
    /// Psych's dumper only quotes it if it is a real calendar date.
    Date,
    /// Matches Psych's timestamp pattern ("... class: Time").
    Time,
    /// Ruby raises ArgumentError with this message (e.g. `0x_`, `.e+3`).
    Invalid(String),
}

/// `resolve_plain_scalar` for callers that only want a `Value`: symbols, dates, times, big
/// integers and invalid numbers come back as the original string.
pub fn resolve_plain_scalar(s: &str) -> Value {
    match scan_plain_scalar(s) {
        Scalar::Value(v) => v,
        _ => Value::str(s),
    }
}

fn in_string_set(c: char) -> bool {
    c.is_alphabetic()
        || matches!(
            c,
            '_' | ' '
                | '\t'
                | '\n'
                | '\x0b'
                | '\x0c'
                | '\r'
                | '!'
                | '@'
                | '#'
                | '$'
                | '%'
                | '^'
                | '&'
                | '*'
                | '('
                | ')'
                | '{'
                | '}'
                | '<'
                | '>'
                | '|'
                | '/'
                | '\\'
                | '~'
                | ';'
                | '='
        )
}

/// Psych's `ScalarScanner#tokenize` (4.0.3), rule for rule.
pub(crate) fn scan_plain_scalar(s: &str) -> Scalar {
    let b = s.as_bytes();
    let Some(&c0) = b.first() else {
        return Scalar::Value(Value::Null);
    };
    // Quick path: everything that is not a word/null/bool starts with one of these.
    let numeric_start = matches!(c0, b'0'..=b'9' | b'-' | b'+' | b'.' | b':');
    // /^[^\d.:-]?[[:alpha:]_\s!@#$%\^&*(){}<>|\/\\~;=]+/ || /\n/
    let word = {
        let mut it = s.chars();
        let first = it.next().unwrap_or('0');
        in_string_set(first)
            || (!matches!(first, '0'..='9' | '.' | ':' | '-')
                && it.next().is_some_and(in_string_set))
    };
    if word || s.contains('\n') {
        return short_word(s);
    }
    if !numeric_start {
        return Scalar::Str;
    }
    if is_time(b) {
        return Scalar::Time;
    }
    if is_date(b) {
        return Scalar::Date;
    }
    let lower_is = |t: &str| s.eq_ignore_ascii_case(t);
    if lower_is(".inf") || lower_is("+.inf") {
        return Scalar::Value(Value::Float(f64::INFINITY));
    }
    if lower_is("-.inf") {
        return Scalar::Value(Value::Float(f64::NEG_INFINITY));
    }
    if lower_is(".nan") {
        return Scalar::Value(Value::Float(f64::NAN));
    }
    if c0 == b':' {
        if s.len() < 2 {
            return Scalar::Str;
        }
        return Scalar::Symbol(symbol_name(s));
    }
    if let Some(r) = sexagesimal(s) {
        return r;
    }
    if is_float(b) {
        if matches!(s, "." | "+." | "-.") {
            return Scalar::Str;
        }
        // Float(string.gsub(/[,_]|\.([Ee]|$)/, '\1'))
        let mut t = String::with_capacity(s.len());
        let mut chars = s.chars().peekable();
        while let Some(c) = chars.next() {
            match c {
                ',' | '_' => {}
                '.' if matches!(chars.peek(), None | Some('e') | Some('E')) => {}
                c => t.push(c),
            }
        }
        return match hiera_value::ruby::float(&t) {
            Ok(f) => Scalar::Value(Value::Float(f)),
            Err(m) => Scalar::Invalid(m),
        };
    }
    if is_integer(b) {
        let t: String = s.chars().filter(|&c| c != ',' && c != '_').collect();
        return ruby_integer(&t);
    }
    Scalar::Str
}

/// The branch for strings that look like words (or contain a newline). Ruby's ^ and $ match
/// at every line, which is why `"on\n\nno"` (a folded plain scalar) is `true`.
fn short_word(s: &str) -> Scalar {
    if s.chars().count() > 5 {
        return Scalar::Str;
    }
    let lines: Vec<&str> = s.split('\n').collect();
    let n = lines.len();
    // /^[^ytonf~]/i: a line start followed by any other char (a '\n' too).
    let other_start = lines
        .iter()
        .enumerate()
        .any(|(i, l)| match l.chars().next() {
            Some(c) => !matches!(c.to_ascii_lowercase(), 'y' | 't' | 'o' | 'n' | 'f' | '~'),
            None => i + 1 < n,
        });
    if other_start {
        return Scalar::Str;
    }
    let any = |words: &[&str]| {
        lines
            .iter()
            .any(|l| words.iter().any(|w| l.eq_ignore_ascii_case(w)))
    };
    if s == "~" || any(&["null"]) {
        Scalar::Value(Value::Null)
    } else if any(&["yes", "true", "on"]) {
        Scalar::Value(Value::Bool(true))
    } else if any(&["no", "false", "off"]) {
        Scalar::Value(Value::Bool(false))
    } else {
        Scalar::Str
    }
}

fn digits(b: &[u8], i: usize, min: usize, max: usize) -> Option<usize> {
    let n = b
        .iter()
        .skip(i)
        .take(max)
        .take_while(|c| c.is_ascii_digit())
        .count();
    (n >= min).then_some(i + n)
}

fn is_space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r')
}

/// TIME = /^-?\d{4}-\d{1,2}-\d{1,2}(?:[Tt]|\s+)\d{1,2}:\d\d:\d\d(?:\.\d*)?
///         (?:\s*(?:Z|[-+]\d{1,2}:?(?:\d\d)?))?$/
fn is_time(b: &[u8]) -> bool {
    let mut i = usize::from(b.first() == Some(&b'-'));
    let step = |i: usize, c: u8| (b.get(i) == Some(&c)).then_some(i + 1);
    let Some(mut i2) = (|| {
        i = digits(b, i, 4, 4)?;
        i = step(i, b'-')?;
        i = digits(b, i, 1, 2)?;
        i = step(i, b'-')?;
        i = digits(b, i, 1, 2)?;
        match b.get(i) {
            Some(b'T' | b't') => i += 1,
            Some(&c) if is_space(c) => {
                while b.get(i).is_some_and(|&c| is_space(c)) {
                    i += 1;
                }
            }
            _ => return None,
        }
        i = digits(b, i, 1, 2)?;
        i = step(i, b':')?;
        i = digits(b, i, 2, 2)?;
        i = step(i, b':')?;
        digits(b, i, 2, 2)
    })() else {
        return false;
    };
    if b.get(i2) == Some(&b'.') {
        i2 = digits(b, i2 + 1, 0, usize::MAX).unwrap_or(i2 + 1);
    }
    let mut j = i2;
    while b.get(j).is_some_and(|&c| is_space(c)) {
        j += 1;
    }
    let rest = &b[j.min(b.len())..];
    if i2 == b.len() || rest == b"Z" {
        return true;
    }
    // [-+]\d{1,2}:?(?:\d\d)?$ with backtracking over the \d{1,2}
    match rest.split_first() {
        Some((b'-' | b'+', tz)) => (1..=2).any(|n| {
            if tz.len() < n || !tz[..n].iter().all(u8::is_ascii_digit) {
                return false;
            }
            let mut t = &tz[n..];
            if t.first() == Some(&b':') {
                t = &t[1..];
            }
            t.is_empty() || (t.len() == 2 && t.iter().all(u8::is_ascii_digit))
        }),
        _ => false,
    }
}

/// /^\d{4}-(?:1[012]|0\d|\d)-(?:[12]\d|3[01]|0\d|\d)$/
fn is_date(b: &[u8]) -> bool {
    if b.len() < 8 || !b[..4].iter().all(u8::is_ascii_digit) || b[4] != b'-' {
        return false;
    }
    let rest = &b[5..];
    let Some(dash) = rest.iter().position(|&c| c == b'-') else {
        return false;
    };
    let (m, d) = (&rest[..dash], &rest[dash + 1..]);
    let month_ok = match m {
        [a] => a.is_ascii_digit(),
        [b'0', a] => a.is_ascii_digit(),
        [b'1', a] => matches!(a, b'0'..=b'2'),
        _ => false,
    };
    let day_ok = match d {
        [a] => a.is_ascii_digit(),
        [b'0' | b'1' | b'2', a] => a.is_ascii_digit(),
        [b'3', a] => matches!(a, b'0' | b'1'),
        _ => false,
    };
    month_ok && day_ok
}

/// Symbol name per Psych: `:"x"`/`:'x'` take the text up to the last matching quote, then one
/// leading ':' is dropped; otherwise the text after the first ':'.
fn symbol_name(s: &str) -> String {
    let rest = &s[1..];
    if let Some(q @ ('"' | '\'')) = rest.chars().next() {
        let inner = &rest[1..];
        if let Some(end) = inner.rfind(q) {
            let name = &inner[..end];
            return name.strip_prefix(':').unwrap_or(name).to_string();
        }
    }
    rest.to_string()
}

/// The two sexagesimal rules (`1:20:30`, `12:30` = 45000, `1:30.5`).
fn sexagesimal(s: &str) -> Option<Scalar> {
    let b = s.as_bytes();
    let mut i = usize::from(matches!(b.first(), Some(b'-' | b'+')));
    if !b.get(i)?.is_ascii_digit() {
        return None;
    }
    while b.get(i).is_some_and(|c| c.is_ascii_digit() || *c == b'_') {
        i += 1;
    }
    let mut groups = 0;
    while b.get(i) == Some(&b':') && groups < 2 {
        let j = i + 1;
        let n = b.iter().skip(j).take_while(|c| c.is_ascii_digit()).count();
        let ok = match n {
            1 => true,
            2 => b[j] <= b'5',
            _ => false,
        };
        if !ok {
            return None;
        }
        i = j + n;
        groups += 1;
    }
    if groups == 0 {
        return None;
    }
    let parts: Vec<&str> = s.split(':').collect();
    let weight = |e: usize| 60f64.powi((e as i32 - 2).abs());
    if i == b.len() {
        // Integer: sum of part.to_i * 60 ** (e - 2).abs, so "12:30" is 12*3600 + 30*60.
        let mut total: i128 = 0;
        for (e, p) in parts.iter().enumerate() {
            let w = 60i128.pow((e as i32 - 2).unsigned_abs());
            let v = hiera_value::ruby::str_to_i(p)?.checked_mul(w)?;
            total = total.checked_add(v)?;
        }
        return Some(match i64::try_from(total) {
            Ok(v) => Scalar::Value(Value::Int(v)),
            Err(_) => Scalar::BigInt(total.to_string()),
        });
    }
    if b.get(i) == Some(&b'.') && b[i + 1..].iter().all(|c| c.is_ascii_digit() || *c == b'_') {
        let mut total = 0f64;
        for (e, p) in parts.iter().enumerate() {
            total += ruby_to_f(p) * weight(e);
        }
        return Some(Scalar::Value(Value::Float(total)));
    }
    None
}

/// Ruby String#to_f for the sexagesimal parts (digits, single '_' between digits, one '.').
fn ruby_to_f(p: &str) -> f64 {
    let mut out = String::new();
    let b = p.as_bytes();
    let mut seen_dot = false;
    for (i, &c) in b.iter().enumerate() {
        match c {
            b'-' | b'+' if i == 0 => out.push(c as char),
            b'0'..=b'9' => out.push(c as char),
            b'_' if i > 0
                && b[i - 1].is_ascii_digit()
                && b.get(i + 1).is_some_and(u8::is_ascii_digit) => {}
            b'.' if !seen_dot && b.get(i + 1).is_some_and(u8::is_ascii_digit) => {
                seen_dot = true;
                out.push('.');
            }
            _ => break,
        }
    }
    out.parse().unwrap_or(0.0)
}

/// FLOAT = /^(?:[-+]?([0-9][0-9_,]*)?\.[0-9]*([eE][-+][0-9]+)?)$/
fn is_float(b: &[u8]) -> bool {
    let mut i = usize::from(matches!(b.first(), Some(b'-' | b'+')));
    if b.get(i).is_some_and(u8::is_ascii_digit) {
        while b
            .get(i)
            .is_some_and(|c| c.is_ascii_digit() || *c == b'_' || *c == b',')
        {
            i += 1;
        }
    }
    if b.get(i) != Some(&b'.') {
        return false;
    }
    i += 1;
    while b.get(i).is_some_and(u8::is_ascii_digit) {
        i += 1;
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        if !matches!(b.get(i + 1), Some(b'-' | b'+')) {
            return false;
        }
        let n = b
            .iter()
            .skip(i + 2)
            .take_while(|c| c.is_ascii_digit())
            .count();
        if n == 0 {
            return false;
        }
        i += 2 + n;
    }
    i == b.len()
}

/// INTEGER: binary, octal (leading 0), decimal (single ','/'_' between digits) or hex.
fn is_integer(b: &[u8]) -> bool {
    let body = match b.first() {
        Some(b'-' | b'+') => &b[1..],
        _ => b,
    };
    let all = |s: &[u8], f: fn(&u8) -> bool| {
        !s.is_empty() && s.iter().all(|c| f(c) || *c == b'_' || *c == b',')
    };
    if let Some(r) = body.strip_prefix(b"0b") {
        if all(r, |c| matches!(c, b'0' | b'1')) {
            return true;
        }
    }
    if let Some(r) = body.strip_prefix(b"0x") {
        if all(r, u8::is_ascii_hexdigit) {
            return true;
        }
    }
    if let Some(r) = body.strip_prefix(b"0") {
        if r.is_empty() || all(r, |c| matches!(c, b'0'..=b'7')) {
            return true;
        }
    }
    // [1-9](?:[0-9]|,[0-9]|_[0-9])*
    match body.split_first() {
        Some((b'1'..=b'9', rest)) => {
            let mut i = 0;
            while i < rest.len() {
                match rest[i] {
                    b'0'..=b'9' => i += 1,
                    b',' | b'_' if rest.get(i + 1).is_some_and(u8::is_ascii_digit) => i += 2,
                    _ => return false,
                }
            }
            true
        }
        _ => false,
    }
}

/// Ruby `Integer(str)` for the strings the INTEGER rule lets through (separators removed).
fn ruby_integer(t: &str) -> Scalar {
    match hiera_value::ruby::integer(t, None) {
        Some(Value::BigInt(d)) => Scalar::BigInt(d),
        Some(v) => Scalar::Value(v),
        None => Scalar::Invalid(format!("invalid value for Integer(): {}", ruby_inspect(t))),
    }
}

/// Ruby `String#inspect`, for values named in messages.
fn ruby_inspect(s: &str) -> String {
    hiera_value::ruby::inspect(&Value::str(s))
}

/// Ruby `to_s` of a hash key, for naming it in messages.
fn ruby_to_s(v: &Value) -> String {
    hiera_value::ruby::to_s(v)
}

#[cfg(test)]
mod tests {
    //! Expected values come from Ruby 3.1 / Psych 4.0.3 / libyaml 0.2.5 with
    //! `Puppet::Util::Yaml.safe_load(text, [Symbol], path)` (and `puppet lookup` for symbols).
    use super::*;

    fn s(x: &str) -> Value {
        Value::str(x)
    }
    fn h(pairs: Vec<(Value, Value)>) -> Value {
        Value::Hash(pairs.into_iter().collect())
    }
    /// The value of key "a".
    fn one(text: &str) -> Value {
        match load(text) {
            Ok(Value::Hash(m)) => m.get(&s("a")).cloned().unwrap_or_else(|| s("<missing>")),
            other => panic!("{text:?} => {other:?}"),
        }
    }
    fn err(text: &str) -> String {
        match load(text) {
            Err(e) => e.puppet_message("/x.yaml"),
            Ok(v) => panic!("{text:?} loaded as {v:?}"),
        }
    }

    #[test]
    fn scalar_table() {
        use Value::{Bool, Float, Int, Null};
        let table: Vec<(&str, Value)> = vec![
            ("yes", Bool(true)),
            ("Yes", Bool(true)),
            ("yEs", Bool(true)),
            ("ON", Bool(true)),
            ("tRuE", Bool(true)),
            ("no", Bool(false)),
            ("OFF", Bool(false)),
            ("FaLsE", Bool(false)),
            ("y", s("y")),
            ("Y", s("Y")),
            ("n", s("n")),
            ("~", Null),
            ("null", Null),
            ("nUlL", Null),
            ("", Null),
            ("0x1F", Int(31)),
            ("+0x1f", Int(31)),
            ("-0x1f", Int(-31)),
            ("0b101", Int(5)),
            ("-0b101", Int(-5)),
            ("012", Int(10)),
            ("-012", Int(-10)),
            ("0o17", s("0o17")),
            ("019", s("019")),
            ("08", s("08")),
            ("0", Int(0)),
            ("-0", Int(0)),
            ("00", Int(0)),
            ("0_", Int(0)),
            ("1_000", Int(1000)),
            ("1,000", Int(1000)),
            ("1__0", s("1__0")),
            ("1_", s("1_")),
            ("1:20:30", Int(4830)),
            ("12:30", Int(45000)),
            ("-1:30", Int(-1800)),
            ("+1:30", Int(5400)),
            ("1_0:30", Int(37800)),
            ("12:60", s("12:60")),
            ("1:2:3:4", s("1:2:3:4")),
            ("1:30.5", Float(5430.0)),
            ("1:30:00.5", Float(5400.5)),
            ("1.5E+3", Float(1500.0)),
            ("1.5e3", s("1.5e3")),
            ("1e3", s("1e3")),
            ("12e3", s("12e3")),
            ("3.", Float(3.0)),
            (".5", Float(0.5)),
            ("-.5", Float(-0.5)),
            ("+.5", Float(0.5)),
            (".", s(".")),
            ("-.", s("-.")),
            ("1.e+3", Float(1000.0)),
            ("1,000.5", Float(1000.5)),
            ("1_2.5", Float(12.5)),
            ("1.5_5", s("1.5_5")),
            (".5e+3", Float(500.0)),
            ("1.0e+400", Float(f64::INFINITY)),
            (".inf", Float(f64::INFINITY)),
            ("+.Inf", Float(f64::INFINITY)),
            ("-.INF", Float(f64::NEG_INFINITY)),
            (".NaN", Float(f64::NAN)),
            ("inf", s("inf")),
            ("nan", s("nan")),
            (":", s(":")),
            ("0x1.5", s("0x1.5")),
            ("_1", s("_1")),
            ("+ 1", s("+ 1")),
            ("2024-13-01", s("2024-13-01")),
            ("9223372036854775807", Int(i64::MAX)),
            ("-9223372036854775808", Int(i64::MIN)),
            ("on\nno", Bool(true)),
            ("n\non", Bool(true)),
            ("y\nn", s("y\nn")),
            ("y\n\nn", s("y\n\nn")),
            ("yes\nx", s("yes\nx")),
            ("é", s("é")),
        ];
        for (input, want) in table {
            assert_eq!(resolve_plain_scalar(input), want, "{input:?}");
        }
    }

    #[test]
    fn scalar_scan_special_kinds() {
        assert_eq!(scan_plain_scalar(":foo"), Scalar::Symbol("foo".into()));
        assert_eq!(scan_plain_scalar("::foo"), Scalar::Symbol(":foo".into()));
        assert_eq!(
            scan_plain_scalar(":\"quoted\""),
            Scalar::Symbol("quoted".into())
        );
        assert_eq!(scan_plain_scalar(":'q'"), Scalar::Symbol("q".into()));
        assert_eq!(scan_plain_scalar(":\"a\"b"), Scalar::Symbol("a".into()));
        assert_eq!(scan_plain_scalar(":\":x\""), Scalar::Symbol("x".into()));
        assert_eq!(scan_plain_scalar(":\"\""), Scalar::Symbol("".into()));
        for d in ["2024-01-01", "2024-1-1", "2024-02-30"] {
            assert_eq!(scan_plain_scalar(d), Scalar::Date, "{d}");
        }
        for t in [
            "2024-01-01 12:00:00",
            "2024-01-01T12:00:00Z",
            "2024-01-01 12:00:00.5 +01:00",
            "2001-12-14t21:59:43.10-05:00",
            "2024-01-01 1:00:00 +100",
        ] {
            assert_eq!(scan_plain_scalar(t), Scalar::Time, "{t}");
        }
        assert_eq!(
            scan_plain_scalar("99999999999999999999"),
            Scalar::BigInt("99999999999999999999".into())
        );
        assert_eq!(
            scan_plain_scalar("-99999999999999999999"),
            Scalar::BigInt("-99999999999999999999".into())
        );
        assert_eq!(
            scan_plain_scalar("0xFFFFFFFFFFFFFFFFFFFF"),
            Scalar::BigInt("1208925819614629174706175".into())
        );
        assert_eq!(
            scan_plain_scalar("0xFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF"),
            Scalar::BigInt("22300745198530623141535718272648361505980415".into())
        );
        assert_eq!(
            scan_plain_scalar("9223372036854775808"),
            Scalar::BigInt("9223372036854775808".into())
        );
        assert_eq!(
            scan_plain_scalar("0x_"),
            Scalar::Invalid("invalid value for Integer(): \"0x\"".into())
        );
        assert_eq!(
            scan_plain_scalar("0b_"),
            Scalar::Invalid("invalid value for Integer(): \"0b\"".into())
        );
        assert_eq!(
            scan_plain_scalar(".e+3"),
            Scalar::Invalid("invalid value for Float(): \"e+3\"".into())
        );
        assert_eq!(
            scan_plain_scalar("+.e+3"),
            Scalar::Invalid("invalid value for Float(): \"+e+3\"".into())
        );
        assert_eq!(scan_plain_scalar("profile::x"), Scalar::Str);
    }

    #[test]
    fn plain_multiline_scalars_resolve_per_line() {
        // A folded plain scalar with a blank line keeps a "\n"; Ruby's ^/$ match per line.
        assert_eq!(one("a: on\n\n  no\n"), Value::Bool(true));
        assert_eq!(one("a: yes\n  x\n"), s("yes x"));
    }

    #[test]
    fn quoted_and_block_scalars_are_strings() {
        assert_eq!(one("a: 'yes'\n"), s("yes"));
        assert_eq!(one("a: \"2024-01-01\"\n"), s("2024-01-01"));
        assert_eq!(one("a: |\n  12\n"), s("12\n"));
        assert_eq!(one("a: >\n  yes\n"), s("yes\n"));
        assert_eq!(one("a: 'it''s'\n"), s("it's"));
        assert_eq!(one("a: \"\\x41\\u263A\"\n"), s("A☺"));
    }

    #[test]
    fn tags() {
        use Value::{Bool, Float, Int, Null};
        assert_eq!(one("a: !!float 1e3\n"), Float(1000.0));
        assert_eq!(one("a: !!float 12\n"), Float(12.0));
        assert_eq!(one("a: !!float 019\n"), Float(19.0));
        assert_eq!(one("a: !!float \"  1.5 \"\n"), Float(1.5));
        assert_eq!(one("a: !!float 0x1p3\n"), Float(8.0));
        assert_eq!(one("a: !!float 99999999999999999999\n"), Float(1e20));
        assert_eq!(one("a: !float 12\n"), Float(12.0));
        assert_eq!(one("a: !!int \"12\"\n"), Int(12));
        assert_eq!(one("a: !!int foo\n"), s("foo"));
        assert_eq!(one("a: !!str 12\n"), s("12"));
        assert_eq!(one("a: !!str yes\n"), s("yes"));
        assert_eq!(one("a: !!str\n"), s(""));
        assert_eq!(one("a: !!null foo\n"), s("foo"));
        assert_eq!(one("a: !!bool yes\n"), Bool(true));
        assert_eq!(one("a: ! 12\n"), Int(12));
        assert_eq!(one("a: ! \"12\"\n"), Int(12));
        assert_eq!(one("a: !foo bar\n"), s("bar"));
        assert_eq!(one("a: !foo 12\n"), Int(12));
        assert_eq!(one("a: !ruby/object:Foo bar\n"), s("bar"));
        assert_eq!(
            one("a: !ruby/object:Hash {x: 1}\n"),
            h(vec![(s("x"), Int(1))])
        );
        assert_eq!(one("a: !ruby/string bar\n"), s("bar"));
        assert_eq!(one("a: !str: bar\n"), s("bar"));
        assert_eq!(one("a: !ruby/class ''\n"), Null);
        assert_eq!(one("a: !!binary aGVsbG8=\n"), s("hello"));
        assert_eq!(one("a: !binary aGVsbG8\n"), s("hello"));
        assert_eq!(one("a: !!binary \"aGV sbG8 =\"\n"), s("hello"));
        assert_eq!(one("a: !!binary |\n  aGVs\n  bG8=\n"), s("hello"));
        assert_eq!(one("a: !!timestamp foo\n"), s("foo"));
        assert_eq!(one("a: !!seq [1]\n"), Value::Array(vec![Int(1)]));
        assert_eq!(one("a: !foo [1]\n"), Value::Array(vec![Int(1)]));
        assert_eq!(one("a: !!map {x: 1}\n"), h(vec![(s("x"), Int(1))]));
        assert_eq!(
            one("a: !!omap [{x: 1}, {y: 2}]\n"),
            h(vec![(s("x"), Int(1)), (s("y"), Int(2))])
        );
        assert_eq!(one("a: !!str {str: x}\n"), s("x"));
        assert_eq!(
            one("a: !ruby/hash-with-ivars {elements: {a: 1}}\n"),
            h(vec![(s("a"), Int(1))])
        );
        assert_eq!(one("a: !<tag:yaml.org,2002:str> 12\n"), s("12"));
        assert_eq!(
            one("%TAG !e! tag:yaml.org,2002:\n---\na: !e!str 12\n"),
            s("12")
        );
    }

    #[test]
    fn tag_errors() {
        let cases = [
            ("a: !!float foo\n", "invalid value for Float(): \"foo\""),
            ("a: !!float 1__0\n", "invalid value for Float(): \"1__0\""),
            ("a: !!float 0o17\n", "invalid value for Float(): \"0o17\""),
            ("a: !!float ~\n", "can't convert nil into Float"),
            ("a: !!float \"\"\n", "can't convert nil into Float"),
            ("a: !!float true\n", "can't convert true into Float"),
            ("a: !!float :sym\n", "can't convert Symbol into Float"),
            ("a: 0x_\n", "invalid value for Integer(): \"0x\""),
            ("a: !!str {x: 1}\n", "can't modify frozen NilClass: nil"),
            (
                "a: !!str {str: 1, x: 1}\n",
                "can't modify frozen Integer: 1",
            ),
            (
                "a: !!str {str: s, \"x y\": 1}\n",
                "`@x y' is not allowed as an instance variable name",
            ),
            (
                "a: !ruby/object:Foo {}\n",
                "(/x.yaml): Tried to load unspecified class: Foo",
            ),
            (
                "a: !ruby/object {}\n",
                "(/x.yaml): Tried to load unspecified class: Object",
            ),
            (
                "a: !ruby/objectfoo {}\n",
                "(/x.yaml): Tried to load unspecified class: foo",
            ),
            (
                "a: !ruby/struct:Foo {}\n",
                "(/x.yaml): Tried to load unspecified class: Foo",
            ),
            (
                "a: !ruby/struct {}\n",
                "(/x.yaml): Tried to load unspecified class: Struct",
            ),
            (
                "a: !!set {x: 1}\n",
                "(/x.yaml): Tried to load unspecified class: Psych::Set",
            ),
            (
                "a: !!omap {x: 1}\n",
                "(/x.yaml): Tried to load unspecified class: Psych::Omap",
            ),
            (
                "a: !str:Foo bar\n",
                "(/x.yaml): Tried to load unspecified class: Foo",
            ),
            (
                "a: !ruby/string:Foo bar\n",
                "(/x.yaml): Tried to load unspecified class: Foo",
            ),
            (
                "a: !ruby/class Foo\n",
                "(/x.yaml): Tried to load unspecified class: Foo",
            ),
            (
                "a: !ruby/regexp /a/\n",
                "(/x.yaml): Tried to load unspecified class: Regexp",
            ),
            (
                "a: !ruby/range 1..2\n",
                "(/x.yaml): Tried to load unspecified class: Range",
            ),
            (
                "a: !ruby/range {begin: 1}\n",
                "(/x.yaml): Tried to load unspecified class: Range",
            ),
            (
                "a: !ruby/object:BigDecimal 1.5\n",
                "(/x.yaml): Tried to load unspecified class: BigDecimal",
            ),
            (
                "a: !ruby/object:DateTime 2020-01-01\n",
                "(/x.yaml): Tried to load unspecified class: DateTime",
            ),
            (
                "a: !ruby/object:Complex 1\n",
                "(/x.yaml): Tried to load unspecified class: Complex",
            ),
            (
                "a: !!timestamp 2020-01-01\n",
                "(/x.yaml): Tried to load unspecified class: Date",
            ),
            (
                "a: !seq:Foo []\n",
                "(/x.yaml): Tried to load unspecified class: Foo",
            ),
            (
                "a: !ruby/array:Foo []\n",
                "(/x.yaml): Tried to load unspecified class: Foo",
            ),
            (
                "a: !map:Foo {}\n",
                "(/x.yaml): Tried to load unspecified class: Foo",
            ),
            (
                "a: !ruby/hash:Foo {}\n",
                "(/x.yaml): Tried to load unspecified class: Foo",
            ),
            (
                "a: !ruby/exception {}\n",
                "(/x.yaml): Tried to load unspecified class: Exception",
            ),
            (
                "a: !ruby/marshalable:Foo {}\n",
                "(/x.yaml): Tried to load unspecified class: Foo",
            ),
        ];
        for (text, want) in cases {
            assert_eq!(err(text), want, "{text:?}");
        }
    }

    #[test]
    fn dates_and_times_are_disallowed_with_positions() {
        assert_eq!(
            load("x:\n  y: 2024-01-01\n"),
            Err(YamlError::DisallowedClass {
                message: "Tried to load unspecified class: Date".into(),
                line: 2,
                column: 6
            })
        );
        assert_eq!(
            err("d: 2024-01-01 12:00:00\n"),
            "(/x.yaml): Tried to load unspecified class: Time"
        );
        assert_eq!(
            err("--- 2024-01-01\n"),
            "(/x.yaml): Tried to load unspecified class: Date"
        );
        assert_eq!(
            load("x: !ruby/object:Foo\n  a: 1\n")
                .unwrap_err()
                .position(),
            (1, 4),
            "mapping tag errors point at the node"
        );
    }

    #[test]
    fn syntax_errors_match_psych() {
        let cases = [
            ("a: [1, 2\n", "did not find expected ',' or ']' while parsing a flow sequence at line 1 column 4"),
            ("a: 1\n b: 2\n", "mapping values are not allowed in this context at line 2 column 3"),
            (
                "a:\n\t- 1\n",
                "found character that cannot start any token while scanning for the next token at line 2 column 1",
            ),
            ("a: \"abc\n", "found unexpected end of stream while scanning a quoted scalar at line 1 column 4"),
            ("a: 1\n- b\n", "did not find expected key while parsing a block mapping at line 1 column 1"),
            (
                "- a\nb: 1\n",
                "did not find expected '-' indicator while parsing a block collection at line 1 column 1",
            ),
            ("{a: 1\n", "did not find expected ',' or '}' while parsing a flow mapping at line 1 column 1"),
            ("]\n", "did not find expected node content while parsing a block node at line 1 column 1"),
            ("[1,\n", "did not find expected node content while parsing a flow node at line 2 column 1"),
            (
                "a: *\n",
                "did not find expected alphabetic or numeric character while scanning an alias at line 1 column 4",
            ),
            ("%YAML 1.1\n%YAML 1.1\n---\na\n", "found duplicate %YAML directive at line 1 column 1"),
            ("!<\n", "did not find expected tag URI while parsing a tag at line 1 column 1"),
            (
                "a: @b\n",
                "found character that cannot start any token while scanning for the next token at line 1 column 4",
            ),
            ("key: \"\\q\"\n", "found unknown escape character while parsing a quoted scalar at line 1 column 6"),
            ("a: b: c\n", "mapping values are not allowed in this context at line 1 column 5"),
            ("a: :\n", "mapping values are not allowed in this context at line 1 column 4"),
            // A symbol-looking scalar in a flow sequence is a syntax error in libyaml.
            ("n:\n  arr: [1, :baz]\n", "did not find expected node content while parsing a flow node at line 2 column 12"),
        ];
        for (text, want) in cases {
            assert_eq!(err(text), format!("(/x.yaml): {want}"), "{text:?}");
        }
        match load("a: [1, 2\n") {
            Err(YamlError::Syntax { line, column, .. }) => assert_eq!((line, column), (1, 4)),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn invalid_utf8_and_bom() {
        let e = load_bytes(b"a: \xff\n").unwrap_err();
        assert_eq!(
            e.to_string(),
            "invalid leading UTF-8 octet at line 1 column 1"
        );
        let e = load_bytes(b"ab\xc3\n").unwrap_err();
        assert_eq!(
            e.to_string(),
            "invalid trailing UTF-8 octet at line 1 column 1"
        );
        // Puppet keeps the BOM (it reads with 'utf-8'); libyaml skips it but counts a column.
        let e = load_bytes(b"\xef\xbb\xbfa: [1, 2\n").unwrap_err();
        assert_eq!(e.position(), (1, 5));
        assert_eq!(
            load_bytes(b"\xef\xbb\xbfa: 1\n"),
            Ok(h(vec![(s("a"), Value::Int(1))]))
        );
    }

    #[test]
    fn syntax_error_beats_earlier_conversion_error() {
        assert_eq!(
            err("x: 2024-01-01\ny: [1,\n"),
            "(/x.yaml): did not find expected node content while parsing a flow node at line 3 column 1"
        );
        assert_eq!(
            err("x: *nope\ny: 2024-01-01\n"),
            "An alias referenced an unknown anchor: nope"
        );
        assert_eq!(
            err("x: 2024-01-01\ny: *nope\n"),
            "(/x.yaml): Tried to load unspecified class: Date"
        );
    }

    #[test]
    fn documents() {
        assert_eq!(load(""), Ok(Value::Null));
        assert_eq!(load("\n"), Ok(Value::Null));
        assert_eq!(load("# only comment\n"), Ok(Value::Null));
        assert_eq!(load("---\n"), Ok(Value::Null));
        assert_eq!(load("--- !!str\n"), Ok(s("")));
        assert_eq!(load("--- 1\n--- 2\n"), Ok(Value::Int(1)));
        // Later documents are never parsed, so their errors do not count.
        assert_eq!(load("a: 1\n---\n]\n"), Ok(h(vec![(s("a"), Value::Int(1))])));
        assert_eq!(load("  x: 1\ny: 2\n"), Ok(h(vec![(s("x"), Value::Int(1))])));
        assert_eq!(load("a: b\n...\nc: d\n"), Ok(h(vec![(s("a"), s("b"))])));
        assert_eq!(load("42\n"), Ok(Value::Int(42)));
        assert_eq!(load("OFF\n"), Ok(Value::Bool(false)));
    }

    #[test]
    fn anchors_and_aliases() {
        use Value::Int;
        assert_eq!(
            load("a: &x 1\nb: *x\nc: &x 2\nd: *x\n"),
            Ok(h(vec![
                (s("a"), Int(1)),
                (s("b"), Int(1)),
                (s("c"), Int(2)),
                (s("d"), Int(2))
            ]))
        );
        // A nested re-definition made while the outer node was open stays the latest one.
        assert_eq!(
            load("a: &x [1, &x 2]\nb: *x\n"),
            Ok(h(vec![
                (s("a"), Value::Array(vec![Int(1), Int(2)])),
                (s("b"), Int(2))
            ]))
        );
        assert_eq!(
            load("a: [&x 1, *x]\n"),
            Ok(h(vec![(s("a"), Value::Array(vec![Int(1), Int(1)]))]))
        );
        assert_eq!(
            load("a: *unknown\n"),
            Err(YamlError::BadAlias {
                message: "An alias referenced an unknown anchor: unknown".into(),
                line: 1,
                column: 4
            })
        );
        assert_eq!(
            err("c: {<<: [{a: 1}, *u]}\n"),
            "An alias referenced an unknown anchor: u"
        );
        assert!(matches!(
            load("a: &x [1, *x]\n"),
            Err(YamlError::Recursive { .. })
        ));
        assert!(matches!(
            load("a: &x {k: *x}\n"),
            Err(YamlError::Recursive { .. })
        ));
        assert_eq!(
            load("a: &x {k: *x}\n").unwrap_err().to_string(),
            "stack level too deep"
        );
    }

    #[test]
    fn merge_keys() {
        use Value::Int;
        let v =
            load("a: &a {x: 1, y: 2}\nb: &b {y: 3, z: 4}\nc:\n  w: 0\n  <<: [*a, *b]\n  x: 9\n")
                .unwrap();
        assert_eq!(
            v.get("c"),
            Some(&h(vec![
                (s("w"), Int(0)),
                (s("y"), Int(2)),
                (s("z"), Int(4)),
                (s("x"), Int(9))
            ]))
        );
        // Merged keys override earlier explicit ones (Psych's merge!), in place.
        let v = load("a: &a {x: 1, y: 2}\nc: {x: 0, <<: *a, q: 1}\n").unwrap();
        assert_eq!(
            v.get("c"),
            Some(&h(vec![
                (s("x"), Int(1)),
                (s("y"), Int(2)),
                (s("q"), Int(1))
            ]))
        );
        let c = |text: &str| load(text).unwrap().get("c").cloned().unwrap();
        assert_eq!(c("c: {x: 0, \"<<\": {x: 5}}\n"), h(vec![(s("x"), Int(5))]));
        assert_eq!(c("c: {x: 0, '<<': {x: 5}}\n"), h(vec![(s("x"), Int(5))]));
        assert_eq!(c("c: {x: 0, ! <<: {x: 5}}\n"), h(vec![(s("x"), Int(5))]));
        assert_eq!(
            c("c: {x: 0, !!str <<: {x: 5}}\n"),
            h(vec![(s("x"), Int(0)), (s("<<"), h(vec![(s("x"), Int(5))]))])
        );
        assert_eq!(c("c: {<<: 1}\n"), h(vec![(s("<<"), Int(1))]));
        assert_eq!(c("c: {<<: ~}\n"), h(vec![(s("<<"), Value::Null)]));
        assert_eq!(
            c("c: {<<: [1, {a: 1}]}\n"),
            h(vec![(
                s("<<"),
                Value::Array(vec![Int(1), h(vec![(s("a"), Int(1))])])
            )])
        );
        assert_eq!(
            c("c: {<<: [{a: 1}, {a: 2, b: 3}]}\n"),
            h(vec![(s("a"), Int(1)), (s("b"), Int(3))])
        );
        assert_eq!(
            c("a: &a [1]\nc: {<<: *a}\n"),
            h(vec![(s("<<"), Value::Array(vec![Int(1)]))])
        );
        assert_eq!(
            c("c: {<<: {a: 1}, <<: {b: 2}}\n"),
            h(vec![(s("a"), Int(1)), (s("b"), Int(2))])
        );
        assert_eq!(
            c("a: &x {k: 1}\nc: {<<: [*x, 5]}\n"),
            h(vec![(
                s("<<"),
                Value::Array(vec![h(vec![(s("k"), Int(1))]), Int(5)])
            )])
        );
        assert_eq!(c("a: &b x\nc: {<<: *b}\n"), h(vec![(s("<<"), s("x"))]));
    }

    #[test]
    fn duplicate_keys_keep_first_position_last_value() {
        use Value::Int;
        assert_eq!(
            load("b: 1\na: 2\nb: 3\n"),
            Ok(h(vec![(s("b"), Int(3)), (s("a"), Int(2))]))
        );
        assert_eq!(
            load("a:\n  x: 1\na:\n  y: 2\n"),
            Ok(h(vec![(s("a"), h(vec![(s("y"), Int(2))]))]))
        );
        // Symbol keys are stringified and then collide like Puppet's symkeys_to_string does.
        assert_eq!(load(":a: 1\na: 2\n"), Ok(h(vec![(s("a"), Int(2))])));
        assert_eq!(load("a: 1\n:a: 2\n"), Ok(h(vec![(s("a"), Int(2))])));
    }

    #[test]
    fn typed_keys() {
        use Value::{Bool, Float, Int, Null};
        let v = load("1: one\n~: nul\n1.5: f\ntrue: t\n[1, 2]: arr\n{a: 1}: h\n").unwrap();
        assert_eq!(
            v,
            h(vec![
                (Int(1), s("one")),
                (Null, s("nul")),
                (Float(1.5), s("f")),
                (Bool(true), s("t")),
                (Value::Array(vec![Int(1), Int(2)]), s("arr")),
                (h(vec![(s("a"), Int(1))]), s("h")),
            ])
        );
        assert_eq!(
            load("? a\n? b\n"),
            Ok(h(vec![(s("a"), Null), (s("b"), Null)]))
        );
    }

    #[test]
    fn symbols() {
        // Keys: Puppet stringifies them.
        assert_eq!(load(":sym: 1\n"), Ok(h(vec![(s("sym"), Value::Int(1))])));
        assert_eq!(
            load("x:\n  :a: 1\n"),
            Ok(h(vec![(s("x"), h(vec![(s("a"), Value::Int(1))]))]))
        );
        // In flow context `:a` is not a plain scalar for libyaml.
        assert!(matches!(
            load("x: {:a: 1}\n"),
            Err(YamlError::Syntax { .. })
        ));
        // Values: loadable, but a lookup of the top-level key holding one fails in Puppet
        // ("Value for key 'sym', in hash returned from data_hash function 'yaml_data', ...").
        let doc = load_document(
            b"a: 1\nsym: :foo\nn:\n  inner:\n  - :bar\nm:\n  <<:\n    k: :q\n  k: 1\n",
        )
        .unwrap();
        assert_eq!(doc.value.get("sym"), Some(&s("foo")));
        let keys: Vec<_> = doc
            .ruby_values
            .iter()
            .map(|r| (r.key.clone(), r.class, r.line, r.column))
            .collect();
        assert_eq!(
            keys,
            vec![(s("sym"), "Symbol", 2, 6), (s("n"), "Symbol", 5, 5)]
        );
        assert_eq!(
            load("a: 1\nsym: :foo\n"),
            Err(YamlError::SymbolValue {
                key: "sym".into(),
                class: "Symbol",
                line: 2,
                column: 6
            })
        );
        let doc = load_document(b"k: ::a\nl: :'b'\nm: :\"c\"d\"\nn: !ruby/sym :x\n").unwrap();
        assert_eq!(
            doc.value,
            h(vec![
                (s("k"), s(":a")),
                (s("l"), s("b")),
                (s("m"), s("c\"d")),
                (s("n"), s(":x"))
            ])
        );
        assert_eq!(doc.ruby_values.len(), 4);
        // Merged symbol values taint the receiving key; an override clears it.
        let doc = load_document(b"a: &x\n  k: :s\nb: {<<: *x}\nc: {<<: *x, k: 1}\n").unwrap();
        let keys: Vec<_> = doc.ruby_values.iter().map(|r| r.key.clone()).collect();
        assert_eq!(keys, vec![s("a"), s("b")]);
        let doc = load_document(b"x: !ruby/encoding UTF-8\n").unwrap();
        assert_eq!(doc.ruby_values[0].class, "Encoding");
    }

    #[test]
    fn deep_nesting_and_alias_bombs_do_not_crash() {
        let deep = format!("{}1{}", "[".repeat(5000), "]".repeat(5000));
        assert!(matches!(load(&deep), Err(YamlError::TooDeep { .. })));
        let ok = format!("{}1{}", "[".repeat(1000), "]".repeat(1000));
        assert!(load(&ok).is_ok());
        // Unclosed: Psych reports libyaml's syntax error at the end, after a scan quadratic in
        // the depth; the depth is refused first here (a known difference).
        assert!(matches!(
            load(&"[".repeat(5000)),
            Err(YamlError::TooDeep { .. })
        ));
        // Brackets in comments and quoted scalars are not nesting.
        let quoted = format!(
            "a: '{}'\nb: \"{}\" # {}\n",
            "[".repeat(2000),
            "{".repeat(2000),
            "[".repeat(2000)
        );
        assert!(load(&quoted).is_ok());
        let mut bomb = String::from("a: &a [x, x, x, x, x, x, x, x, x, x]\n");
        for i in 0..9 {
            let prev = (b'a' + i) as char;
            let next = (b'a' + i + 1) as char;
            bomb.push_str(&format!("{next}: &{next} [*{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}]\n"));
        }
        assert!(matches!(
            load_with_budget(bomb.as_bytes(), 100_000),
            Err(YamlError::AliasExpansion { .. })
        ));
        bomb.truncate(bomb.find("\nd:").unwrap_or(0));
        assert!(load_with_budget(bomb.as_bytes(), 100_000).is_ok());
    }
}
