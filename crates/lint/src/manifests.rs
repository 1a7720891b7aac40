//! One Puppet file read with the tree-sitter Puppet grammar into its contribution to the
//! [`Schema`](super::schema::Schema): every `class NAME ( $params )` with each parameter's
//! type and default as written, every key looked up explicitly (`lookup('x')`, `hiera('x')`,
//! …), and every `type Name = …` alias. The tree is walked with an explicit stack, so a
//! hostile manifest's nesting costs memory in proportion to its size, never the call stack.

use crate::position::{Position, Span};
use hiera_types::{Type, TypeError};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// A class parameter.
#[derive(Debug, Clone, PartialEq)]
pub struct Param {
    /// The name, without `$`.
    pub name: String,
    /// The type as written (`Optional[Array[Stdlib::Host]]`); `None` when untyped.
    pub type_text: Option<String>,
    /// The type, parsed by [`hiera_types`] with the modulepath's type aliases resolved (`Any`
    /// when untyped); `Err` says why it could not be (an unknown type name, a type the
    /// parser does not know, a recursive alias): such a parameter's values are not judged.
    pub ty: Result<Type, String>,
    /// The default expression as written (`undef`, `[]`, `$ntp::params::servers`); `None`
    /// when the parameter has no default (Puppet then requires a value).
    pub default: Option<String>,
    /// The `$name` variable of the declaration.
    pub span: Span,
}

impl Param {
    /// Whether the parameter has a default expression.
    pub fn has_default(&self) -> bool {
        self.default.is_some()
    }

    /// `Boolean $iburst = true`, on one line (runs of whitespace, newlines included, made
    /// one space), for a hover or a completion's detail.
    pub fn signature(&self) -> String {
        let mut s = String::new();
        if let Some(t) = &self.type_text {
            s.push_str(t);
            s.push(' ');
        }
        s.push('$');
        s.push_str(&self.name);
        if let Some(d) = &self.default {
            s.push_str(" = ");
            s.push_str(d);
        }
        s.split_whitespace().collect::<Vec<_>>().join(" ")
    }
}

/// A class definition (`class NAME (PARAMS) inherits PARENT { … }`).
#[derive(Debug, Clone, PartialEq)]
pub struct Class {
    /// The name in lower case, without leading `::` (`ntp::config`).
    pub name: String,
    /// The parameters in declaration order.
    pub params: Vec<Param>,
    /// `inherits PARENT`, in lower case.
    pub inherits: Option<String>,
    /// The manifest.
    pub file: PathBuf,
    /// The name after `class`.
    pub name_span: Span,
    /// The whole definition.
    pub span: Span,
}

impl Class {
    /// The parameter named `name`.
    pub fn param(&self, name: &str) -> Option<&Param> {
        self.params.iter().find(|p| p.name == name)
    }

    /// `Class[Ntp::Config]`, as Puppet names the class in its errors.
    pub fn reference(&self) -> String {
        let cap: Vec<String> = self
            .name
            .split("::")
            .map(|s| {
                let mut c = s.chars();
                match c.next() {
                    Some(f) => f.to_uppercase().chain(c).collect(),
                    None => String::new(),
                }
            })
            .collect();
        format!("Class[{}]", cap.join("::"))
    }
}

/// A call that looks a literal key up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LookupCall {
    /// The key as written (`ntp::servers`, `profile::x.sub.0`).
    pub key: String,
    /// The data key it reads: the key's first segment (`profile::x`), leading `::` removed.
    pub root: String,
    /// `lookup`, `hiera`, `hiera_array`, `hiera_hash` or `hiera_include`.
    pub function: String,
    /// The manifest or template.
    pub file: PathBuf,
    /// The key's string literal, quotes included.
    pub span: Span,
}

/// A lookup whose key is built at run time (`lookup("ntp::${x}")`, `lookup($key)`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DynamicLookup {
    /// The literal text before the first interpolation (`ntp::`; empty for `lookup($key)`).
    pub prefix: String,
    /// The manifest.
    pub file: PathBuf,
    /// The key expression.
    pub span: Span,
}

/// `type Name = TYPE` (a module's `types/*.pp`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TypeAlias {
    /// The name as written (`Stdlib::Port`).
    pub name: String,
    /// The aliased type as written.
    pub text: String,
    /// The file.
    pub file: PathBuf,
    /// The name.
    pub span: Span,
}

/// What one manifest or template contributes.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Manifest {
    /// The file.
    pub file: PathBuf,
    /// The module whose directory holds it (`None`: the environment's `manifests/`, or a
    /// file outside every root).
    pub module: Option<String>,
    /// Its classes, in file order (parameter types not yet resolved against the schema's
    /// aliases: [`Schema`](crate::schema::Schema) does that).
    pub classes: Vec<Class>,
    /// Its lookups of literal keys.
    pub lookups: Vec<LookupCall>,
    /// Its lookups of keys built at run time.
    pub dynamic_lookups: Vec<DynamicLookup>,
    /// Its type aliases.
    pub type_aliases: Vec<TypeAlias>,
    /// Whether the parser met a syntax error (what it found is still given).
    pub has_errors: bool,
    /// A `.pp` file on disk that is not UTF-8: where its first invalid byte is, and the byte.
    /// Puppet refuses to parse it; what it holds is read with the bytes replaced (U+FFFD).
    pub invalid_utf8: Option<(Position, u8)>,
}

/// The data key a lookup of `key` reads: its first segment (`a::b.c.0` → `a::b`; a quoted
/// first segment keeps its dots), leading `::` removed.
pub fn root_key(key: &str) -> String {
    let root = match hiera_engine::key::split_key(key) {
        Ok(segs) if !segs.is_empty() => segs[0].to_string(),
        _ => key.to_string(),
    };
    root.trim_start_matches("::").to_string()
}

/// How many alias names one type may expand, and how long the expanded text may grow.
const MAX_ALIAS_EXPANSIONS: usize = 256;
const MAX_EXPANDED_TYPE: usize = 64 << 10;

/// Parses a parameter's type text with the aliases (lower-case name → text) expanded.
pub(crate) fn resolve_type(
    text: Option<&str>,
    aliases: &HashMap<String, String>,
) -> Result<Type, String> {
    let Some(text) = text else {
        return Ok(Type::Any);
    };
    let expanded = expand_aliases(text, aliases)?;
    hiera_types::parse(&expanded).map_err(|e| match e {
        TypeError::Unknown(name) => format!(
            "the type '{name}' is neither built in nor a type alias of the modulepath's types/*.pp"
        ),
        TypeError::Invalid(m) => format!("the type does not parse: {m}"),
    })
}

/// `text` with every name of a type alias replaced by the aliased type, recursively (names
/// in strings and regexps left alone).
pub(crate) fn expand_aliases(
    text: &str,
    aliases: &HashMap<String, String>,
) -> Result<String, String> {
    if aliases.is_empty() {
        return Ok(text.to_string());
    }
    let mut cur = text.to_string();
    let mut expansions = 0;
    loop {
        let (next, n) = expand_once(&cur, aliases);
        if n == 0 {
            return Ok(cur);
        }
        expansions += n;
        if expansions > MAX_ALIAS_EXPANSIONS || next.len() > MAX_EXPANDED_TYPE {
            return Err(format!(
                "the type '{text}' expands through its aliases beyond {MAX_ALIAS_EXPANSIONS} names or {MAX_EXPANDED_TYPE} bytes (a recursive alias?)"
            ));
        }
        cur = next;
    }
}

fn expand_once(text: &str, aliases: &HashMap<String, String>) -> (String, usize) {
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut n = 0;
    let mut i = 0;
    let mut last_sig: Option<u8> = None;
    while i < b.len() {
        let c = b[i];
        // Strings and regexps (`Pattern[/x/]`) are copied as they are.
        if let Some((end, open)) = crate::manifests::skip_literal(b, i, last_sig.unwrap_or(b'[')) {
            out.push_str(&text[i..end]);
            i = end;
            last_sig = Some(open);
            continue;
        }
        if c.is_ascii_alphabetic() || (c == b':' && b.get(i + 1) == Some(&b':')) {
            let start = i;
            loop {
                if b.get(i) == Some(&b':') && b.get(i + 1) == Some(&b':') {
                    i += 2;
                }
                let seg = i;
                while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                    i += 1;
                }
                if i == seg
                    || !(b.get(i) == Some(&b':')
                        && b.get(i + 1) == Some(&b':')
                        && b.get(i + 2).is_some_and(|x| x.is_ascii_alphabetic()))
                {
                    break;
                }
            }
            let word = &text[start..i];
            let name = word.trim_start_matches("::");
            // A type's name is capitalized: a bare word (a Struct's key, an Enum's value)
            // is never an alias.
            let alias = name
                .starts_with(|c: char| c.is_ascii_uppercase())
                .then(|| aliases.get(&name.to_ascii_lowercase()))
                .flatten();
            match alias {
                Some(t) => {
                    out.push_str(t);
                    n += 1;
                }
                None => out.push_str(word),
            }
            last_sig = Some(b'a');
            continue;
        }
        // A multi-byte character is copied whole.
        let ch_len = text[i..].chars().next().map_or(1, char::len_utf8);
        out.push_str(&text[i..i + ch_len]);
        if !c.is_ascii_whitespace() {
            last_sig = Some(c);
        }
        i += ch_len;
    }
    (out, n)
}
use tree_sitter::{Node, Parser};

const LOOKUP_FUNCTIONS: &[&str] = &[
    "lookup",
    "hiera",
    "hiera_array",
    "hiera_hash",
    "hiera_include",
];

/// A parser for the Puppet grammar (`None` if the grammar does not load: nothing is read).
pub(crate) fn parser() -> Option<Parser> {
    let mut parser = Parser::new();
    parser
        .set_language(&tree_sitter_puppet::LANGUAGE.into())
        .ok()?;
    Some(parser)
}

/// What `text` (the file `file`) defines and looks up.
pub(crate) fn parse(file: &Path, text: &str) -> Manifest {
    match parser() {
        Some(mut p) => parse_with(&mut p, file, text),
        None => Manifest {
            file: file.to_path_buf(),
            ..Default::default()
        },
    }
}

/// [`parse`] with a parser the caller keeps.
pub(crate) fn parse_with(parser: &mut Parser, file: &Path, text: &str) -> Manifest {
    let mut m = Manifest {
        file: file.to_path_buf(),
        ..Default::default()
    };
    let Some(tree) = parser.parse(text, None) else {
        return m;
    };
    let root = tree.root_node();
    m.has_errors = root.has_error();
    let cx = Cx {
        src: text,
        lines: hiera_formats::lines::LineIndex::new(text),
        masked: mask_comments(text),
        file,
    };
    let no_aliases = HashMap::new();
    let mut stack = vec![root];
    while let Some(node) = stack.pop() {
        match node.kind() {
            "class_definition" => {
                if let Some(mut class) = cx.class_of(node) {
                    for p in &mut class.params {
                        p.ty = resolve_type(p.type_text.as_deref(), &no_aliases);
                    }
                    m.classes.push(class);
                }
            }
            "function_call" => cx.lookups_of_call(node, &mut m),
            "field_expression" => cx.lookup_of_method(node, &mut m),
            "type_declaration" => {
                if let Some(a) = cx.type_alias(node) {
                    m.type_aliases.push(a);
                }
            }
            _ => {}
        }
        let mut cursor = node.walk();
        let children: Vec<Node> = node.children(&mut cursor).collect();
        // Reversed: the stack then pops them in file order.
        stack.extend(children.into_iter().rev());
    }
    m
}

struct Cx<'a> {
    src: &'a str,
    /// `src`'s lines, for the positions of its many places.
    lines: hiera_formats::lines::LineIndex<&'a str>,
    /// `src` with its comments blanked out (same offsets).
    masked: String,
    file: &'a Path,
}

impl Cx<'_> {
    fn text(&self, node: Node) -> &str {
        self.src.get(node.byte_range()).unwrap_or("")
    }

    fn pos(&self, byte: usize) -> Position {
        Position::in_lines(&self.lines, byte)
    }

    fn span(&self, node: Node) -> Span {
        Span {
            start: self.pos(node.start_byte()),
            end: self.pos(node.end_byte()),
        }
    }

    fn class_of(&self, node: Node) -> Option<Class> {
        let mut cursor = node.walk();
        let children: Vec<Node> = node.named_children(&mut cursor).collect();
        let name_node = children
            .iter()
            .find(|c| matches!(c.kind(), "class_identifier" | "identifier"))?;
        let name = self
            .text(*name_node)
            .trim_start_matches("::")
            .to_ascii_lowercase();
        // The grammar loses its way in some regexps (`Pattern[/\A.../]`): the parameter
        // list is read from the text after the name with a scanner of its own.
        let params = self.params_after(name_node.end_byte());
        let inherits = children
            .iter()
            .find(|c| c.kind() == "class_inherits")
            .and_then(|i| i.named_child(0))
            .map(|n| self.text(n).trim_start_matches("::").to_ascii_lowercase());
        Some(Class {
            name,
            params,
            inherits,
            file: self.file.to_path_buf(),
            name_span: self.span(*name_node),
            span: self.span(node),
        })
    }

    /// The parameters of the list starting at the first `(` after byte `from` (comments and
    /// blanks before it skipped): `TYPE $name = DEFAULT`, split at the top-level commas.
    fn params_after(&self, from: usize) -> Vec<Param> {
        let masked = self.masked.as_str();
        let b = masked.as_bytes();
        let mut i = from;
        while i < b.len() && b[i].is_ascii_whitespace() {
            i += 1;
        }
        if b.get(i) != Some(&b'(') {
            return Vec::new();
        }
        let mut params = Vec::new();
        for (start, end) in split_top_level(b, i + 1, b')') {
            if let Some(p) = self.param_in(masked, start, end) {
                params.push(p);
            }
        }
        params
    }

    /// One parameter in `masked[start..end]`: the first `$name` outside brackets, strings
    /// and regexps; the type before it, the default after its `=`.
    fn param_in(&self, masked: &str, start: usize, end: usize) -> Option<Param> {
        let b = masked.as_bytes();
        let var = find_variable(b, start, end)?;
        let mut name_end = var + 1;
        while name_end < end && (b[name_end].is_ascii_alphanumeric() || b[name_end] == b'_') {
            name_end += 1;
        }
        let name = masked.get(var + 1..name_end)?.to_string();
        if name.is_empty() {
            return None;
        }
        let type_text = masked
            .get(start..var)
            .map(|t| t.trim().trim_end_matches('*').trim())
            .filter(|t| !t.is_empty())
            .map(|t| t.to_string());
        let rest = masked.get(name_end..end).unwrap_or("").trim_start();
        let default = rest
            .strip_prefix('=')
            .map(|d| d.trim().to_string())
            .filter(|d| !d.is_empty());
        Some(Param {
            name,
            type_text,
            ty: Ok(hiera_types::Type::Any),
            default,
            span: Span {
                start: self.pos(var),
                end: self.pos(name_end),
            },
        })
    }

    /// `lookup('k', …)`, `lookup(['a', 'b'])`, `lookup({'name' => 'k'})`, `hiera('k')`, …
    fn lookups_of_call(&self, node: Node, m: &mut Manifest) {
        let mut cursor = node.walk();
        let mut children = node.named_children(&mut cursor);
        let Some(f) = children.next() else { return };
        let function = self.text(f);
        if f.kind() != "identifier" || !LOOKUP_FUNCTIONS.contains(&function) {
            return;
        }
        let Some(arg) = children.next() else { return };
        self.key_argument(function, arg, m);
    }

    /// `'k'.lookup` and `'k'.lookup(…)`: the receiver is the key.
    fn lookup_of_method(&self, node: Node, m: &mut Manifest) {
        let Some(receiver) = node.named_child(0) else {
            return;
        };
        let mut cursor = node.walk();
        let method = node
            .named_children(&mut cursor)
            .skip(1)
            .find(|n| n.kind() == "identifier");
        let Some(method) = method else { return };
        let function = self.text(method);
        if !LOOKUP_FUNCTIONS.contains(&function) {
            return;
        }
        if matches!(receiver.kind(), "string" | "array" | "hash") {
            self.key_argument(function, receiver, m);
        }
    }

    fn key_argument(&self, function: &str, arg: Node, m: &mut Manifest) {
        match arg.kind() {
            "string" => self.key_string(function, arg, m),
            "array" => {
                let mut c = arg.walk();
                for e in arg.named_children(&mut c) {
                    if e.kind() == "string" {
                        self.key_string(function, e, m);
                    }
                }
            }
            "hash" => {
                let mut c = arg.walk();
                for attr in arg.named_children(&mut c) {
                    let (Some(n), Some(v)) = (
                        attr.child_by_field_name("name"),
                        attr.child_by_field_name("value"),
                    ) else {
                        continue;
                    };
                    if n.kind() == "string" && string_value(n, self.src).as_deref() == Some("name")
                    {
                        self.key_argument(function, v, m);
                    }
                }
            }
            _ => m.dynamic_lookups.push(DynamicLookup {
                prefix: String::new(),
                file: self.file.to_path_buf(),
                span: self.span(arg),
            }),
        }
    }

    fn key_string(&self, function: &str, s: Node, m: &mut Manifest) {
        match string_value(s, self.src) {
            Some(key) if !key.is_empty() => m.lookups.push(LookupCall {
                root: root_key(&key),
                key,
                function: function.to_string(),
                file: self.file.to_path_buf(),
                span: self.span(s),
            }),
            Some(_) => {}
            None => m.dynamic_lookups.push(DynamicLookup {
                prefix: literal_prefix(s, self.src),
                file: self.file.to_path_buf(),
                span: self.span(s),
            }),
        }
    }

    /// `type Name = TYPE`: the type is read from the text after `=` (a name and its
    /// bracketed parameters), whatever the grammar made of it.
    fn type_alias(&self, node: Node) -> Option<TypeAlias> {
        let name = node.named_child(0)?;
        let masked = self.masked.as_str();
        let b = masked.as_bytes();
        let mut i = name.end_byte();
        while i < b.len() && b[i].is_ascii_whitespace() {
            i += 1;
        }
        if b.get(i) != Some(&b'=') {
            return None;
        }
        i += 1;
        while i < b.len() && b[i].is_ascii_whitespace() {
            i += 1;
        }
        let start = i;
        while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_' || b[i] == b':') {
            i += 1;
        }
        let mut j = i;
        while j < b.len() && (b[j] == b' ' || b[j] == b'\t') {
            j += 1;
        }
        if b.get(j) == Some(&b'[') {
            let parts = split_top_level(b, j + 1, b']');
            i = parts.last().map_or(b.len(), |(_, e)| (*e + 1).min(b.len()));
        }
        let text = masked.get(start..i)?.trim().to_string();
        if text.is_empty() {
            return None;
        }
        Some(TypeAlias {
            name: self.text(name).trim_start_matches("::").to_string(),
            text,
            file: self.file.to_path_buf(),
            span: self.span(name),
        })
    }
}

/// The source with every comment (`# …`, `/* … */`) blanked out (newlines kept), so that
/// byte offsets stay those of the source.
fn mask_comments(src: &str) -> String {
    let b = src.as_bytes();
    let mut out = b.to_vec();
    let mut i = 0;
    let mut last = b'(';
    while i < b.len() {
        let c = b[i];
        if c == b'/' && b.get(i + 1) == Some(&b'*') {
            let end = src[i + 2..].find("*/").map_or(b.len(), |p| i + 2 + p + 2);
            blank(&mut out, i, end);
            i = end;
            continue;
        }
        if let Some((next, literal)) = skip_literal(b, i, last) {
            (i, last) = (next, literal);
            continue;
        }
        if c == b'#' {
            let end = src[i..].find('\n').map_or(b.len(), |p| i + p);
            blank(&mut out, i, end);
            i = end;
            continue;
        }
        if !c.is_ascii_whitespace() {
            last = c;
        }
        i += 1;
    }
    // Only ASCII bytes outside strings were replaced by spaces: still UTF-8.
    String::from_utf8(out).unwrap_or_else(|_| src.to_string())
}

fn blank(out: &mut [u8], from: usize, to: usize) {
    let to = to.min(out.len());
    for x in &mut out[from..to] {
        if *x != b'\n' {
            *x = b' ';
        }
    }
}

/// Whether a `/` after the significant byte `last` starts a regexp (not a division).
fn regex_may_start(last: u8) -> bool {
    matches!(last, b'[' | b',' | b'(' | b'{' | b'>' | b'=')
}

/// A string or regexp starting at `b[i]` (`last`: the byte before it that is not white
/// space): the index after it and its opening byte; `None` when `b[i]` starts neither.
pub(crate) fn skip_literal(b: &[u8], i: usize, last: u8) -> Option<(usize, u8)> {
    match b[i] {
        q @ (b'\'' | b'"') => Some((skip_quoted(b, i, q), q)),
        b'/' if regex_may_start(last) => Some((skip_quoted(b, i, b'/'), b'/')),
        _ => None,
    }
}

/// The index after the closing `q` of the quoted text starting at `i` (backslash escapes
/// skipped), or the end.
fn skip_quoted(b: &[u8], i: usize, q: u8) -> usize {
    let mut j = i + 1;
    while j < b.len() && b[j] != q {
        if b[j] == b'\\' {
            j += 1;
        }
        j += 1;
    }
    (j + 1).min(b.len())
}

/// Calls `f` with each byte of `b[start..end]` outside strings and regexps, and its index,
/// until `f` returns `true`; the index it stopped at.
fn scan_code(
    b: &[u8],
    start: usize,
    end: usize,
    mut f: impl FnMut(usize, u8) -> bool,
) -> Option<usize> {
    let mut i = start;
    let mut last = b'(';
    while i < end {
        if let Some((next, literal)) = skip_literal(b, i, last) {
            (i, last) = (next, literal);
            continue;
        }
        let c = b[i];
        if f(i, c) {
            return Some(i);
        }
        if !c.is_ascii_whitespace() {
            last = c;
        }
        i += 1;
    }
    None
}

/// The items of a bracketed list whose content starts at `start`, split at the commas
/// outside nested brackets, strings and regexps, up to the `close` byte that ends it (or the
/// end of the text). Empty items are left out.
fn split_top_level(b: &[u8], start: usize, close: u8) -> Vec<(usize, usize)> {
    let mut items = Vec::new();
    let mut depth = 0usize;
    let mut item = start;
    let push = |from: usize, to: usize, items: &mut Vec<(usize, usize)>| {
        if b[from..to].iter().any(|c| !c.is_ascii_whitespace()) {
            items.push((from, to));
        }
    };
    let closed = scan_code(b, start, b.len(), |i, c| {
        match c {
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' if depth == 0 && c == close => return true,
            // A stray closing bracket of another kind.
            b')' | b']' | b'}' if depth == 0 => {}
            b')' | b']' | b'}' => depth -= 1,
            b',' if depth == 0 => {
                push(item, i, &mut items);
                item = i + 1;
            }
            _ => {}
        }
        false
    });
    push(item, closed.unwrap_or(b.len()), &mut items);
    items
}

/// The first `$` followed by a name in `b[start..end]` outside brackets, strings and
/// regexps.
fn find_variable(b: &[u8], start: usize, end: usize) -> Option<usize> {
    let mut depth = 0usize;
    scan_code(b, start, end, |i, c| {
        match c {
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => depth = depth.saturating_sub(1),
            b'$' if depth == 0 => {
                return b
                    .get(i + 1)
                    .is_some_and(|x| x.is_ascii_lowercase() || *x == b'_')
            }
            _ => {}
        }
        false
    })
}

/// A string literal without interpolation or escapes.
fn string_value(node: Node, src: &str) -> Option<String> {
    if node.kind() != "string" {
        return None;
    }
    let mut c = node.walk();
    let mut out = String::new();
    for part in node.named_children(&mut c) {
        match part.kind() {
            "string_content" => out.push_str(src.get(part.byte_range()).unwrap_or("")),
            _ => return None,
        }
    }
    Some(out)
}

/// The literal text of a string before its first interpolation or escape.
fn literal_prefix(node: Node, src: &str) -> String {
    let mut c = node.walk();
    let mut out = String::new();
    for part in node.named_children(&mut c) {
        match part.kind() {
            "string_content" => out.push_str(src.get(part.byte_range()).unwrap_or("")),
            _ => break,
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_and_lookups() {
        let src = r#"
class profile::base (
  Array[String] $users = [],
  $packages,
  Optional[Integer] $uid = undef,
) inherits profile::params {
  $x = lookup('profile::extra')
  $y = lookup("profile::other.sub", Array, 'unique', [])
  $z = hiera('legacy::key')
  $i = lookup("x::${name}")
  class { 'foo': bar => 1 }
}
class ntp {}
define mymod::thing($a) {}
$w = lookup({ 'name' => 'x::y' })
$v = 'meth::key'.lookup
$u = lookup(['first::a', 'first::b'])
$t = lookup($key)
"#;
        let m = parse(Path::new("a.pp"), src);
        let base = &m.classes[0];
        assert_eq!(base.name, "profile::base");
        let names: Vec<&str> = base.params.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, vec!["users", "packages", "uid"]);
        assert_eq!(base.params[0].type_text.as_deref(), Some("Array[String]"));
        assert_eq!(base.params[0].default.as_deref(), Some("[]"));
        assert_eq!(base.params[1].type_text, None);
        assert_eq!(base.params[1].default, None);
        assert_eq!(base.params[1].ty, Ok(hiera_types::Type::Any));
        assert_eq!(base.params[2].default.as_deref(), Some("undef"));
        assert_eq!(base.inherits.as_deref(), Some("profile::params"));
        assert_eq!(base.span.start.line, 2);
        // `$users` on line 3, column 17 (1-based, characters).
        assert_eq!(base.params[0].span.start.line_col(), (3, 17));
        assert_eq!(&src[base.params[0].span.start.offset..][..6], "$users");
        assert_eq!(m.classes[1].name, "ntp");
        assert!(m.classes.iter().all(|c| c.name != "mymod::thing"));
        let keys: Vec<&str> = m.lookups.iter().map(|l| l.root.as_str()).collect();
        assert_eq!(
            keys,
            vec![
                "profile::extra",
                "profile::other",
                "legacy::key",
                "x::y",
                "meth::key",
                "first::a",
                "first::b"
            ]
        );
        assert_eq!(m.lookups[1].key, "profile::other.sub");
        assert_eq!(m.lookups[2].function, "hiera");
        let prefixes: Vec<&str> = m
            .dynamic_lookups
            .iter()
            .map(|d| d.prefix.as_str())
            .collect();
        assert_eq!(prefixes, vec!["x::", ""]);
    }

    #[test]
    fn type_aliases_and_odd_parameters() {
        let src = "type Mymod::Port = Integer[0, 65535]\nclass c (\n  Struct[{a => Integer, Optional[b] => String}] $st = {},\n  String $broken = ,\n  Mymod::Port $port = 1,\n  Hash[String, Integer] $h = { 'a' => 1 },\n) {}\n";
        let m = parse(Path::new("t.pp"), src);
        assert_eq!(m.type_aliases.len(), 1);
        assert_eq!(m.type_aliases[0].name, "Mymod::Port");
        assert_eq!(m.type_aliases[0].text, "Integer[0, 65535]");
        let c = &m.classes[0];
        let st = c.param("st").unwrap();
        assert_eq!(
            st.type_text.as_deref(),
            Some("Struct[{a => Integer, Optional[b] => String}]")
        );
        assert!(st.ty.is_ok(), "{:?}", st.ty);
        // Without the schema's aliases the alias is unknown.
        assert!(c.param("port").unwrap().ty.is_err());
        assert_eq!(
            c.param("h").unwrap().default.as_deref(),
            Some("{ 'a' => 1 }")
        );
        assert!(c.param("broken").is_some());
    }

    #[test]
    fn hostile_nesting_is_bounded() {
        let deep = format!("$x = {}1{}\n", "[".repeat(50_000), "]".repeat(50_000));
        let m = parse(Path::new("deep.pp"), &deep);
        assert!(m.classes.is_empty());
        let m = parse(Path::new("junk.pp"), "class (((( lookup( 'a\u{0}");
        assert!(m.has_errors);
    }
}
