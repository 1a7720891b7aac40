//! One Puppet file read with the tree-sitter Puppet grammar into its contribution to the
//! [`Schema`](super::schema::Schema): every `class NAME ( $params )` with each parameter's
//! type and default as written, every key looked up explicitly (`lookup('x')`, `hiera('x')`,
//! …), and every `type Name = …` alias. The tree is walked with an explicit stack, so a
//! hostile manifest's nesting costs memory in proportion to its size, never the call stack.

use super::schema::{
    resolve_type, root_key, Class, DynamicLookup, LookupCall, Manifest, Param, Position, Span,
    TypeAlias,
};
use std::collections::HashMap;
use std::path::Path;
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
