//! Type expression parser: the subset of the Puppet language that type strings use
//! (`TypeParser#parse` = Puppet parser + type interpretation), with Puppet's error texts.

use super::calc::{make_enum, variant_maybe};
use super::{FRange, Range, Regex, StructElem, Type};

/// A failure to turn a string into a type.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TypeError {
    /// Syntax or type specification error, with Puppet's message.
    Invalid(String),
    /// A type name Puppet would have to load from modules (`Foo`, `Stdlib::Port`) or a built-in
    /// alias resolved through a loader. Puppet 8's `puppet lookup --type` fails on these with
    /// "private method `load' called for #<Puppet::Parser::Scope:0x00007f...>" (Ruby 3.3
    /// inspects the scope with its address; we print `0x…`, as the recordings do).
    Unknown(String),
}

impl TypeError {
    /// The message `puppet lookup --type` prints.
    pub fn message(&self) -> String {
        match self {
            TypeError::Invalid(m) => m.clone(),
            TypeError::Unknown(_) => {
                "private method `load' called for #<Puppet::Parser::Scope:0x…>".to_string()
            }
        }
    }
}

impl std::fmt::Display for TypeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message())
    }
}

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    QRef(String),
    Name(String),
    Int(i64),
    Float(f64),
    Str(String),
    Regex(String),
    Var,
    Punct(&'static str),
    Op,
    Other(String),
}

#[derive(Clone, Debug)]
struct Token {
    tok: Tok,
    start: usize, // byte offsets into the source
    end: usize,
}

fn invalid(m: impl Into<String>) -> TypeError {
    TypeError::Invalid(m.into())
}

fn column(src: &str, byte: usize) -> usize {
    src.get(..byte).map_or(1, |s| s.chars().count() + 1)
}

fn lex(src: &str) -> Result<Vec<Token>, TypeError> {
    let b = src.as_bytes();
    let mut i = 0;
    let mut out: Vec<Token> = Vec::new();
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        if c == b'#' {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
            continue;
        }
        if c == b'/' && b.get(i + 1) == Some(&b'*') {
            match src.get(i + 2..).and_then(|r| r.find("*/")) {
                Some(p) => {
                    i = i + 2 + p + 2;
                    continue;
                }
                None => return Err(invalid("Unclosed multiline comment")),
            }
        }
        let start = i;
        let regex_ok = match out.last().map(|t| &t.tok) {
            None => true,
            Some(Tok::Punct(p)) => matches!(*p, "[" | "," | "{" | "=>" | "(" | "-"),
            _ => false,
        };
        let tok =
            if c.is_ascii_alphabetic() || c == b'_' || (c == b':' && b.get(i + 1) == Some(&b':')) {
                if c == b':' {
                    i += 2;
                }
                loop {
                    while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                        i += 1;
                    }
                    if i + 2 < b.len() + 1
                        && b.get(i) == Some(&b':')
                        && b.get(i + 1) == Some(&b':')
                        && b.get(i + 2)
                            .is_some_and(|x| x.is_ascii_alphabetic() || *x == b'_')
                    {
                        i += 2;
                        continue;
                    }
                    break;
                }
                let word = &src[start..i];
                let bare = word.trim_start_matches("::");
                if bare.starts_with(|ch: char| ch.is_ascii_uppercase()) {
                    Tok::QRef(word.to_string())
                } else {
                    Tok::Name(word.to_string())
                }
            } else if c.is_ascii_digit() {
                while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'.' || b[i] == b'_')
                    || (i > start
                        && (b[i - 1] == b'e' || b[i - 1] == b'E')
                        && i < b.len()
                        && (b[i] == b'-' || b[i] == b'+')
                        && !src[start..i].starts_with("0x"))
                {
                    i += 1;
                }
                let text = &src[start..i];
                parse_number(text).ok_or_else(|| invalid(format!("Illegal number '{}'", text)))?
            } else if c == b'\'' || c == b'"' {
                let (s, next) = slurp_string(src, i)?;
                i = next;
                Tok::Str(s)
            } else if c == b'/' && regex_ok {
                let mut j = i + 1;
                let mut found = None;
                while j < b.len() && b[j] != b'\n' {
                    if b[j] == b'\\' {
                        j += 2;
                        continue;
                    }
                    if b[j] == b'/' {
                        found = Some(j);
                        break;
                    }
                    j += 1;
                }
                match found {
                    Some(e) => {
                        i = e + 1;
                        Tok::Regex(src[start + 1..e].replace("\\/", "/"))
                    }
                    None => {
                        i += 1;
                        Tok::Punct("/")
                    }
                }
            } else if c == b'$' {
                i += 1;
                while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_' || b[i] == b':')
                {
                    i += 1;
                }
                Tok::Var
            } else if src[i..].starts_with("=>") {
                i += 2;
                Tok::Punct("=>")
            } else if b"=+*%<>!.|&?".contains(&c) {
                i += 1;
                while i < b.len() && b"=<>~".contains(&b[i]) {
                    i += 1;
                }
                Tok::Op
            } else {
                let p: Option<&'static str> = match c {
                    b'[' => Some("["),
                    b']' => Some("]"),
                    b'{' => Some("{"),
                    b'}' => Some("}"),
                    b',' => Some(","),
                    b'-' => Some("-"),
                    b'(' => Some("("),
                    b')' => Some(")"),
                    b'/' => Some("/"),
                    _ => None,
                };
                match p {
                    Some(p) => {
                        i += 1;
                        Tok::Punct(p)
                    }
                    None => {
                        let ch = src[i..].chars().next().unwrap_or(' ');
                        i += ch.len_utf8();
                        Tok::Other(ch.to_string())
                    }
                }
            };
        out.push(Token { tok, start, end: i });
    }
    Ok(out)
}

fn parse_number(text: &str) -> Option<Tok> {
    if let Some(h) = text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")) {
        return i64::from_str_radix(h, 16).ok().map(Tok::Int);
    }
    if text.contains(['.', 'e', 'E']) {
        if !text.bytes().next().is_some_and(|c| c.is_ascii_digit()) {
            return None;
        }
        return text.parse::<f64>().ok().map(Tok::Float);
    }
    if text.len() > 1 && text.starts_with('0') {
        return i64::from_str_radix(&text[1..], 8).ok().map(Tok::Int);
    }
    text.parse::<i64>().ok().map(Tok::Int)
}

fn slurp_string(src: &str, start: usize) -> Result<(String, usize), TypeError> {
    let q = src.as_bytes()[start];
    let rest = &src[start + 1..];
    let mut out = String::new();
    let mut chars = rest.char_indices();
    while let Some((off, c)) = chars.next() {
        if c as u32 == u32::from(q) {
            return Ok((out, start + 1 + off + 1));
        }
        if c == '\\' {
            match chars.next() {
                Some((_, n)) => {
                    if q == b'\'' {
                        if n == '\'' || n == '\\' {
                            out.push(n)
                        } else {
                            out.push('\\');
                            out.push(n)
                        }
                    } else {
                        match n {
                            'n' => out.push('\n'),
                            't' => out.push('\t'),
                            'r' => out.push('\r'),
                            's' => out.push(' '),
                            '"' | '\\' | '$' | '\'' => out.push(n),
                            _ => {
                                out.push('\\');
                                out.push(n)
                            }
                        }
                    }
                }
                None => break,
            }
            continue;
        }
        out.push(c);
    }
    let after = if q == b'\'' {
        "\"'\"".to_string()
    } else {
        "'\"'".to_string()
    };
    let followed: String = rest.chars().take(5).collect();
    let followed = if rest.is_empty() {
        "<eof>".to_string()
    } else {
        format!("{}...", followed)
            .replace('\t', "\\t")
            .replace('\n', "\\n")
            .replace('\r', "\\r")
    };
    Err(invalid(format!(
        "Unclosed quote after {} followed by '{}' (line: 1, column: {})",
        after,
        followed,
        column(src, start + 1)
    )))
}

/// Syntax tree (only what type strings need) with source spans for error messages.
#[derive(Clone, Debug)]
enum Ast {
    QRef(String),
    Name(String),
    Int(i64),
    Float(f64),
    Str(String),
    Regex(String),
    True,
    False,
    Default,
    Undef,
    List(Vec<Node>),
    Hash(Vec<(Node, Node)>),
    Access(Box<Node>, Vec<Node>),
    Neg(Box<Node>),
    /// Anything else the Puppet grammar accepts that is never a type ($x, several statements...).
    Opaque,
}

#[derive(Clone, Debug)]
struct Node {
    ast: Ast,
    start: usize,
    end: usize,
}

struct P<'a> {
    src: &'a str,
    toks: Vec<Token>,
    pos: usize,
}

impl P<'_> {
    fn peek(&self) -> Option<&Token> {
        self.toks.get(self.pos)
    }
    fn err_at(&self) -> TypeError {
        match self.peek() {
            None => invalid("Syntax error at end of input"),
            Some(t) => {
                let text = &self.src[t.start..t.end];
                let text = match &t.tok {
                    Tok::Str(_) | Tok::Regex(_) => text.to_string(),
                    _ => text.to_string(),
                };
                invalid(format!(
                    "Syntax error at '{}' (line: 1, column: {})",
                    text,
                    column(self.src, t.start)
                ))
            }
        }
    }
    fn is_punct(&self, p: &str) -> bool {
        matches!(self.peek(), Some(Token { tok: Tok::Punct(q), .. }) if *q == p)
    }
    fn expect(&mut self, p: &str) -> Result<usize, TypeError> {
        if self.is_punct(p) {
            let end = self.toks[self.pos].end;
            self.pos += 1;
            Ok(end)
        } else {
            Err(self.err_at())
        }
    }

    fn expr(&mut self, depth: u32) -> Result<Node, TypeError> {
        if depth > 200 {
            return Err(invalid("Syntax error: expression nested too deeply"));
        }
        let mut node = self.primary(depth)?;
        // Access only binds to a directly following '[' (Puppet: LBRACK without whitespace).
        while self.is_punct("[") {
            let lb = &self.toks[self.pos];
            if lb.start != node.end {
                break;
            }
            self.pos += 1;
            let args = self.list_items("]", depth)?;
            if args.is_empty() {
                // `Integer[]` is a syntax error at the ']'.
                return Err(self.err_at());
            }
            let end = self.expect("]")?;
            node = Node {
                start: node.start,
                end,
                ast: Ast::Access(Box::new(node), args),
            };
        }
        // Binary operators (`Integer + 1`, `Integer=1`, `a.b`) make valid expressions that are never types.
        if matches!(self.peek(), Some(Token { tok: Tok::Op, .. })) {
            self.pos += 1;
            let rhs = self.expr(depth + 1)?;
            node = Node {
                start: node.start,
                end: rhs.end,
                ast: Ast::Opaque,
            };
        }
        Ok(node)
    }

    fn list_items(&mut self, close: &str, depth: u32) -> Result<Vec<Node>, TypeError> {
        let mut items = Vec::new();
        loop {
            if self.is_punct(close) {
                return Ok(items);
            }
            items.push(self.expr(depth + 1)?);
            if self.is_punct(",") {
                self.pos += 1;
                continue;
            }
            if self.is_punct(close) {
                return Ok(items);
            }
            return Err(self.err_at());
        }
    }

    fn primary(&mut self, depth: u32) -> Result<Node, TypeError> {
        let Some(t) = self.peek().cloned() else {
            return Err(self.err_at());
        };
        self.pos += 1;
        let mk = |ast| Node {
            ast,
            start: t.start,
            end: t.end,
        };
        Ok(match t.tok {
            Tok::QRef(n) => mk(Ast::QRef(n)),
            Tok::Name(n) => match n.as_str() {
                "true" => mk(Ast::True),
                "false" => mk(Ast::False),
                "default" => mk(Ast::Default),
                "undef" => mk(Ast::Undef),
                _ => mk(Ast::Name(n)),
            },
            Tok::Int(i) => mk(Ast::Int(i)),
            Tok::Float(f) => mk(Ast::Float(f)),
            Tok::Str(s) => mk(Ast::Str(s)),
            Tok::Regex(r) => mk(Ast::Regex(r)),
            Tok::Var => mk(Ast::Opaque),
            Tok::Punct("-") => {
                let inner = self.expr(depth + 1)?;
                Node {
                    start: t.start,
                    end: inner.end,
                    ast: Ast::Neg(Box::new(inner)),
                }
            }
            Tok::Punct("[") => {
                let items = self.list_items("]", depth)?;
                let end = self.expect("]")?;
                Node {
                    ast: Ast::List(items),
                    start: t.start,
                    end,
                }
            }
            Tok::Punct("{") => {
                let mut entries = Vec::new();
                loop {
                    if self.is_punct("}") {
                        break;
                    }
                    let k = self.expr(depth + 1)?;
                    self.expect("=>")?;
                    let v = self.expr(depth + 1)?;
                    entries.push((k, v));
                    if self.is_punct(",") {
                        self.pos += 1;
                        continue;
                    }
                    if !self.is_punct("}") {
                        return Err(self.err_at());
                    }
                }
                let end = self.expect("}")?;
                Node {
                    ast: Ast::Hash(entries),
                    start: t.start,
                    end,
                }
            }
            Tok::Other(_) => {
                // Puppet's lexer gives up on characters it does not know at the end of input.
                self.pos = self.toks.len();
                return Err(invalid("Syntax error at end of input"));
            }
            _ => {
                self.pos -= 1;
                return Err(self.err_at());
            }
        })
    }
}

/// Parse a Puppet type expression as `lookup_options` `convert_to` does (`TypeParser#parse`
/// with the environment's loaders: `Data` and `RichData` resolve).
pub fn parse(s: &str) -> Result<Type, TypeError> {
    parse_in(s, false)
}

/// Parse a `puppet lookup --type` argument. Puppet 7.23 parses it with the scope as loader
/// context, so every name needing a loader (`Data`, `RichData`, `Foo`, `Stdlib::Port`) fails
/// with [`TypeError::Unknown`].
pub fn parse_cli(s: &str) -> Result<Type, TypeError> {
    parse_in(s, true)
}

fn parse_in(s: &str, cli: bool) -> Result<Type, TypeError> {
    // TypeParser's peephole map: 'Array[1]' is accepted only in this exact spelling.
    if s == "Array[1]" {
        return Ok(Type::Array(
            Box::new(Type::Any),
            Some(Range::new(Some(1), None)),
        ));
    }
    let toks = lex(s)?;
    let mut p = P {
        src: s,
        toks,
        pos: 0,
    };
    if p.toks.is_empty() {
        return Err(invalid(
            "The expression <> is not a valid type specification.",
        ));
    }
    let mut nodes = vec![p.expr(0)?];
    while p.pos < p.toks.len() {
        // A following expression makes a block (never a type); a stray token is a syntax error.
        match p.peek().map(|t| &t.tok) {
            Some(Tok::Punct(",")) => {
                p.pos += 1;
                if p.pos >= p.toks.len() {
                    return Err(invalid("Syntax error at end of input"));
                }
                p.pos -= 1;
                return Err(p.err_at());
            }
            Some(Tok::Punct("]" | "}" | ")" | "=>" | "/")) => return Err(p.err_at()),
            _ => nodes.push(p.expr(0)?),
        }
    }
    let text = s.trim();
    if nodes.len() > 1 {
        return Err(not_a_type(text));
    }
    let node = &nodes[0];
    let text = &s[node.start..node.end];
    let v = interpret(cli, s, node)?;
    match v {
        Val::Type(t) => Ok(t),
        _ => Err(not_a_type(text)),
    }
}

fn not_a_type(text: &str) -> TypeError {
    invalid(format!(
        "The expression <{}> is not a valid type specification.",
        text
    ))
}

/// Interpreted parameter values.
#[derive(Clone, Debug)]
enum Val {
    Type(Type),
    Int(i64),
    Float(f64),
    Str(String),
    Regex(String),
    Bool(bool),
    Default,
    Undef,
    List(()),
    Hash(Vec<(Val, Val)>),
}

fn interpret(cli: bool, src: &str, node: &Node) -> Result<Val, TypeError> {
    Ok(match &node.ast {
        Ast::QRef(name) => Val::Type(named_type(name, cli)?),
        Ast::Name(n) => Val::Str(n.clone()),
        Ast::Int(i) => Val::Int(*i),
        Ast::Float(f) => Val::Float(*f),
        Ast::Str(s) => Val::Str(s.clone()),
        Ast::Regex(r) => Val::Regex(r.clone()),
        Ast::True => Val::Bool(true),
        Ast::False => Val::Bool(false),
        Ast::Default => Val::Default,
        Ast::Undef => Val::Undef,
        Ast::List(items) => {
            for n in items {
                interpret(cli, src, n)?;
            }
            Val::List(())
        }
        Ast::Hash(es) => Val::Hash(
            es.iter()
                .map(|(k, v)| Ok((interpret(cli, src, k)?, interpret(cli, src, v)?)))
                .collect::<Result<_, TypeError>>()?,
        ),
        Ast::Neg(inner) => match interpret(cli, src, inner)? {
            Val::Int(i) => Val::Int(i.checked_neg().unwrap_or(i)),
            Val::Float(f) => Val::Float(-f),
            _ => return Err(not_a_type(&src[node.start..node.end])),
        },
        Ast::Access(left, args) => {
            let text = &src[node.start..node.end];
            let Ast::QRef(name) = &left.ast else {
                return Err(not_a_type(text));
            };
            let params = args
                .iter()
                .map(|n| interpret(cli, src, n))
                .collect::<Result<Vec<_>, _>>()?;
            access(cli, name, &src[left.start..left.end], text, params)?
        }
        Ast::Opaque => return Err(not_a_type(&src[node.start..node.end])),
    })
}

fn named_type(name: &str, cli: bool) -> Result<Type, TypeError> {
    // `::Integer` is not in the built-in map: it needs a loader, which the CLI lacks.
    if name.starts_with("::") && cli {
        return Err(TypeError::Unknown(name.to_string()));
    }
    let name = name.trim_start_matches("::");
    Ok(match name.to_ascii_lowercase().as_str() {
        // Data and RichData are aliases that need a loader, which `puppet lookup --type` lacks.
        "data" | "richdata" if cli => return Err(TypeError::Unknown(name.to_string())),
        "any" => Type::Any,
        "undef" => Type::Undef,
        "default" => Type::Default,
        "scalar" => Type::Scalar,
        "scalardata" => Type::ScalarData,
        "numeric" => Type::Numeric,
        "integer" => Type::integer(),
        "float" => Type::Float(FRange {
            from: None,
            to: None,
        }),
        "string" => Type::string(),
        "boolean" => Type::Boolean(None),
        "enum" => Type::Enum(vec![], false),
        "pattern" => Type::Pattern(vec![]),
        "regexp" => Type::Regexp(None),
        "array" => Type::Array(Box::new(Type::Any), None),
        "hash" => Type::Hash(Box::new(Type::Any), Box::new(Type::Any), None),
        "tuple" => Type::Tuple(vec![], None),
        "struct" => Type::Struct(vec![]),
        "collection" => Type::Collection(None),
        "iterable" => Type::Iterable(None),
        "notundef" => Type::NotUndef(None),
        "optional" => Type::Optional(None),
        "variant" => Type::Variant(vec![]),
        "sensitive" => Type::Sensitive(Box::new(Type::Any)),
        "timestamp" => Type::Timestamp(None, None),
        "timespan" => Type::Timespan(None, None),
        "semver" => Type::SemVer(vec![]),
        "semverrange" => Type::SemVerRange,
        "type" => Type::Type(None),
        "binary" => Type::Other("Binary".into()),
        "callable" => Type::Other("Callable".into()),
        "catalogentry" => Type::Other("CatalogEntry".into()),
        "class" => Type::Other("Class".into()),
        "resource" => Type::Other("Resource".into()),
        "uri" => Type::Uri(None),
        "iterator" => Type::Other("Iterator".into()),
        "init" => Type::Other("Init".into()),
        "runtime" => Type::Other("Runtime".into()),
        "object" => Type::Other("Object".into()),
        "typeset" => Type::Other("TypeSet".into()),
        "typealias" => Type::Other("TypeAlias".into()),
        "typereference" => Type::Other("TypeReference".into()),
        "data" => Type::Data,
        "richdata" => Type::RichData,
        _ => return Err(TypeError::Unknown(name.to_string())),
    })
}

fn params_error(ty: &str, req: &str, n: usize) -> TypeError {
    invalid(format!(
        "Invalid number of type parameters specified: {ty} requires {req}, {n} provided"
    ))
}

fn range_param(v: &Val) -> Option<Option<i64>> {
    match v {
        Val::Int(i) => Some(Some(*i)),
        Val::Default => Some(None),
        Val::Str(s) if s == "default" => Some(None),
        _ => None,
    }
}

fn make_range(from: Option<i64>, to: Option<i64>) -> Result<Range, TypeError> {
    if let (Some(f), Some(t)) = (from, to) {
        if f > t {
            return Err(invalid(format!(
                "'from' must be less or equal to 'to'. Got ({f}, {t}"
            )));
        }
    }
    Ok(Range {
        from,
        to,
        float: false,
    })
}

fn as_type(v: &Val, text: &str) -> Result<Type, TypeError> {
    match v {
        Val::Type(t) => Ok(t.clone()),
        _ => Err(not_a_type(text)),
    }
}

fn as_range(v: &Val, text: &str) -> Result<Option<i64>, TypeError> {
    range_param(v).ok_or_else(|| not_a_type(text))
}

fn access(
    cli: bool,
    name: &str,
    qref_text: &str,
    text: &str,
    params: Vec<Val>,
) -> Result<Val, TypeError> {
    let n = params.len();
    if name.starts_with("::") && cli {
        return Err(TypeError::Unknown(name.to_string()));
    }
    let lname = name.trim_start_matches("::").to_ascii_lowercase();
    let t = match lname.as_str() {
        "array" => match n {
            1 => Type::Array(Box::new(as_type(&params[0], text)?), None),
            2 => {
                if let Val::Type(t) = &params[0] {
                    // A size given as an Integer type is taken as it is.
                    if let Some(r) = size_type(&params[1]) {
                        return Ok(Val::Type(array_of(t.clone(), r)));
                    }
                    let from = as_range(&params[1], text)?;
                    array_of(t.clone(), make_range(from, None)?)
                } else {
                    let from = as_range(&params[0], text)?;
                    let to = as_range(&params[1], text)?;
                    array_of(Type::Default, make_range(from, to)?)
                }
            }
            3 => {
                let t = as_type(&params[0], text)?;
                let from = as_range(&params[1], text)?;
                let to = as_range(&params[2], text)?;
                array_of(t, make_range(from, to)?)
            }
            _ => return Err(params_error("Array", "1 to 3", n)),
        },
        "hash" => match n {
            2 => {
                if let (Val::Type(k), Val::Type(v)) = (&params[0], &params[1]) {
                    Type::Hash(Box::new(k.clone()), Box::new(v.clone()), None)
                } else {
                    let from = as_range(&params[0], text)?;
                    let to = as_range(&params[1], text)?;
                    hash_of(Type::Default, Type::Default, make_range(from, to)?)
                }
            }
            3 => {
                let size = match size_type(&params[2]) {
                    Some(r) => r,
                    None => make_range(as_range(&params[2], text)?, None)?,
                };
                let k = as_type(&params[0], text)?;
                let v = as_type(&params[1], text)?;
                hash_of(k, v, size)
            }
            4 => {
                let from = as_range(&params[2], text)?;
                let to = as_range(&params[3], text)?;
                let k = as_type(&params[0], text)?;
                let v = as_type(&params[1], text)?;
                hash_of(k, v, make_range(from, to)?)
            }
            _ => return Err(params_error("Hash", "2 to 4", n)),
        },
        "collection" => match n {
            1 => match size_type(&params[0]) {
                Some(r) => Type::Collection(Some(r.to_size())),
                None => Type::Collection(Some(
                    make_range(as_range(&params[0], text)?, None)?.to_size(),
                )),
            },
            2 => {
                let from = as_range(&params[0], text)?;
                let to = as_range(&params[1], text)?;
                Type::Collection(Some(make_range(from, to)?.to_size()))
            }
            _ => return Err(params_error("Collection", "1 to 2", n)),
        },
        "regexp" => {
            if n != 1 {
                return Err(params_error("Regexp", "1", n));
            }
            match &params[0] {
                Val::Str(s) | Val::Regex(s) => Type::Regexp(Some(s.clone())),
                // Regexp.new(param) in Ruby.
                p => {
                    return Err(invalid(format!(
                        "no implicit conversion of {} into String",
                        ruby_conversion_name(p)
                    )))
                }
            }
        }
        "enum" => {
            let mut ps = params;
            let mut ci = false;
            if let Some(Val::Bool(b)) = ps.last() {
                ci = *b;
                ps.pop();
            }
            if ps.is_empty() {
                return Err(params_error("Enum", "1 or more", 0));
            }
            let mut vals = Vec::new();
            for p in ps {
                match p {
                    Val::Str(s) => vals.push(s),
                    _ => return Err(invalid("Enum parameters must be identifiers or strings")),
                }
            }
            make_enum(vals, ci)
        }
        "pattern" => {
            let mut pats = Vec::new();
            for p in params {
                match p {
                    Val::Str(s) | Val::Regex(s) => {
                        // Ruby compiles the regexp here: its syntax errors stop the parse.
                        hiera_value::ruby::pattern_source(&s).map_err(TypeError::Invalid)?;
                        pats.push(sized_regex(&s)?)
                    }
                    Val::Type(Type::Regexp(Some(s))) => pats.push(sized_regex(&s)?),
                    Val::Type(Type::Pattern(ps)) => pats.extend(ps),
                    other => {
                        return Err(invalid(format!(
                        "Only String, Regexp, Pattern-Type, and Regexp-Type are allowed: got '{}",
                        val_class(&other)
                    )))
                    }
                }
            }
            Type::Pattern(pats)
        }
        "variant" => {
            let ts = params
                .iter()
                .map(|p| as_type(p, text))
                .collect::<Result<Vec<_>, _>>()?;
            variant_maybe(ts)
        }
        "tuple" => {
            let mut ps = params;
            let len = ps.len();
            let mut size = None;
            let is_rp = |v: &Val| {
                matches!(v, Val::Int(_) | Val::Default)
                    || matches!(v, Val::Str(s) if s == "default")
            };
            if len >= 2 && is_rp(&ps[len - 2]) {
                let min = range_param(&ps[len - 2]).flatten().unwrap_or(0);
                let max = as_range(&ps[len - 1], text)?;
                size = Some(make_range(Some(min), max)?.to_size());
                ps.truncate(len - 2);
            } else if len >= 1 && is_rp(&ps[len - 1]) {
                let min = range_param(&ps[len - 1]).flatten().unwrap_or(0);
                size = Some(make_range(Some(min), None)?.to_size());
                ps.truncate(len - 1);
            }
            // TypeFactory.type_of: a string (or bare word) is a Runtime[ruby, 'name'] type.
            let ts = ps
                .iter()
                .map(|p| match p {
                    Val::Str(s) => Ok(Type::Other(format!("Runtime[ruby, '{s}']"))),
                    // type_of(nil): the inferred type of undef.
                    Val::Undef => Ok(Type::Undef),
                    _ => as_type(p, text),
                })
                .collect::<Result<Vec<_>, _>>()?;
            Type::Tuple(ts, size)
        }
        "struct" => {
            if n != 1 {
                return Err(params_error("Struct", "1", n));
            }
            let Val::Hash(entries) = &params[0] else {
                return Err(not_a_type(text));
            };
            let mut elems = Vec::new();
            for (k, v) in entries {
                let value = match v {
                    Val::Type(t) => t.clone(),
                    // TypeFactory.type_of: a literal stands for its (generalized) inferred type.
                    Val::Int(_) => Type::integer(),
                    Val::Float(_) => Type::Float(FRange {
                        from: None,
                        to: None,
                    }),
                    Val::Str(_) => Type::string(),
                    Val::Bool(_) => Type::Boolean(None),
                    Val::Undef => Type::Undef,
                    _ => return Err(invalid("Struct element value_type must be a Type")),
                };
                let (name, optional_key) = match k {
                    Val::Str(s) => {
                        if s.is_empty() {
                            return Err(invalid("Struct element key cannot be an empty String"));
                        }
                        (s.clone(), super::calc::assignable(&value, &Type::Undef))
                    }
                    Val::Type(Type::NotUndef(Some(inner))) => match &**inner {
                        Type::String { value: Some(s), .. } => (s.clone(), false),
                        other => return Err(struct_key_err(other)),
                    },
                    Val::Type(Type::Optional(Some(inner))) => match &**inner {
                        Type::String { value: Some(s), .. } => (s.clone(), true),
                        other => return Err(struct_key_err(other)),
                    },
                    Val::Type(Type::String { value: Some(s), .. }) => (s.clone(), false),
                    // Puppet's TypeFactory.struct fails on these with a Ruby NoMethodError.
                    Val::Type(Type::Enum(..)) => {
                        return Err(invalid(
                            "undefined method `value' for an instance of Puppet::Pops::Types::PEnumType",
                        ))
                    }
                    Val::Type(Type::String { value: None, .. }) => {
                        return Err(invalid(
                            "undefined method `string' for an instance of Puppet::Pops::Types::TypeCalculator",
                        ))
                    }
                    other => {
                        return Err(invalid(format!(
                            "Illegal Struct member key type. Expected NotUndef, Optional, String, or Enum. Got: {}",
                            val_class(other)
                        )))
                    }
                };
                elems.push(StructElem {
                    name,
                    optional_key,
                    value,
                });
            }
            Type::Struct(elems)
        }
        "boolean" => {
            if n != 1 {
                return Err(params_error("Boolean", "1", n));
            }
            match params[0] {
                Val::Bool(b) => Type::Boolean(Some(b)),
                _ => return Err(invalid("Boolean parameter must be true or false")),
            }
        }
        "integer" => match n {
            1 => match params[0] {
                Val::Int(i) => Type::Integer(Range::new(Some(i), None)),
                Val::Default => Type::integer(),
                // No type (nil): whatever holds it reports its own text, as Puppet does.
                _ => return Ok(Val::Undef),
            },
            2 => {
                // PNumericType#initialize compares `from > to` (Ruby 3.3's wording: the
                // right-hand side is inspected when it is a special constant or an Integer).
                let is_str = |v: &Val| matches!(v, Val::Str(s) if s != "default");
                match (&params[0], &params[1]) {
                    (a, Val::Int(i)) if is_str(a) => {
                        return Err(invalid(format!("comparison of String with {i} failed")))
                    }
                    (Val::Int(_), b) if is_str(b) => {
                        return Err(invalid("comparison of Integer with String failed"))
                    }
                    (Val::Int(_), Val::Bool(b)) => {
                        return Err(invalid(format!("comparison of Integer with {b} failed")))
                    }
                    (Val::Bool(b), _) => {
                        return Err(invalid(format!("undefined method `>' for {b}")))
                    }
                    _ => {}
                }
                // TypeFactory.range: `from = :default == from if from == 'default'` makes a
                // 'default' string lower bound `false`, which PNumericType cannot compare.
                if matches!(&params[0], Val::Str(s) if s == "default") {
                    return Err(invalid("undefined method `>' for false"));
                }
                if matches!(params[0], Val::Float(_)) || matches!(params[1], Val::Float(_)) {
                    // Puppet 8 keeps Float bounds on an Integer type.
                    let f = num_bound(&params[0], text)?;
                    let t = num_bound(&params[1], text)?;
                    if let (Some(a), Some(b)) = (f, t) {
                        if a.as_f64() > b.as_f64() {
                            return Err(invalid(format!(
                                "'from' must be less or equal to 'to'. Got ({}, {}",
                                a.to_ruby(),
                                b.to_ruby()
                            )));
                        }
                    }
                    return Ok(Val::Type(Type::IntegerF(f, t)));
                }
                let f = int_bound(&params[0], text)?;
                let t = int_bound(&params[1], text)?;
                Type::Integer(make_range(f, t)?)
            }
            _ => return Err(params_error("Integer", "1 or 2", n)),
        },
        "float" => match n {
            1 => match params[0] {
                Val::Int(i) => Type::Float(FRange {
                    from: Some(i as f64),
                    to: None,
                }),
                Val::Float(f) => Type::Float(FRange {
                    from: Some(f),
                    to: None,
                }),
                Val::Default => Type::Float(FRange {
                    from: None,
                    to: None,
                }),
                _ => return Ok(Val::Undef),
            },
            2 => {
                let f = float_bound(&params[0], text)?;
                let t = float_bound(&params[1], text)?;
                if let (Some(a), Some(b)) = (f, t) {
                    if a > b {
                        return Err(invalid(format!(
                            "'from' must be less or equal to 'to'. Got ({}, {}",
                            super::ruby_float(a),
                            super::ruby_float(b)
                        )));
                    }
                }
                Type::Float(FRange { from: f, to: t })
            }
            _ => return Err(params_error("Float", "1 or 2", n)),
        },
        "string" => {
            let size = match n {
                1 => match size_type(&params[0]) {
                    Some(r) => r,
                    None => make_range(as_range(&params[0], text)?, None)?,
                },
                2 => {
                    let from = as_range(&params[0], text)?;
                    let to = as_range(&params[1], text)?;
                    make_range(from, to)?
                }
                _ => return Err(params_error("String", "1 to 2", n)),
            };
            Type::String {
                size: Some(size.to_size()),
                value: None,
            }
        }
        "sensitive" => match n {
            1 => Type::Sensitive(Box::new(super::calc::generalize(&as_type(
                &params[0], text,
            )?))),
            _ => return Err(params_error("Sensitive", "0 to 1", n)),
        },
        "optional" | "notundef" => {
            let (label, req) = if lname == "optional" {
                ("Optional", "1")
            } else {
                ("NotUndef", "0 to 1")
            };
            if n != 1 {
                return Err(params_error(label, req, n));
            }
            let inner = match &params[0] {
                Val::Str(s) => Type::String {
                    size: None,
                    value: Some(s.clone()),
                },
                p => as_type(p, text)?,
            };
            if lname == "optional" {
                Type::Optional(Some(Box::new(inner)))
            } else if inner == Type::Any {
                Type::NotUndef(None)
            } else {
                Type::NotUndef(Some(Box::new(inner)))
            }
        }
        "any" | "data" | "catalogentry" | "scalar" | "undef" | "numeric" | "default"
        | "semverrange" => {
            return Err(invalid(format!(
                "Not a parameterized type <{}>",
                qref_text.trim_start_matches("::")
            )))
        }
        "iterable" => {
            if n != 1 {
                return Err(params_error("Iterable", "1", n));
            }
            Type::Iterable(Some(Box::new(as_type(&params[0], text)?)))
        }
        "type" => {
            if n != 1 {
                return Err(params_error("Type", "1", n));
            }
            Type::Type(Some(Box::new(as_type(&params[0], text)?)))
        }
        "timespan" | "timestamp" => {
            let label = if lname == "timespan" {
                "Timespan"
            } else {
                "Timestamp"
            };
            if n > 2 {
                return Err(params_error(label, "0 to 2", n));
            }
            let mut bounds = Vec::new();
            for p in &params {
                bounds.push(match p {
                    Val::Default | Val::Undef => None,
                    Val::Str(s) if s == "default" => None,
                    // PAbstractTimeDataType#convert_arg accepts only these (and a Hash).
                    Val::Bool(_) | Val::Regex(_) | Val::List(_) | Val::Type(_) => {
                        return Err(invalid(format!(
                            "Unable to create a Puppet::Pops::Time::{label} from a {}",
                            val_class(p)
                        )))
                    }
                    other => Some(format!(
                        "'{}'",
                        super::convert::time_param_to_s(
                            lname == "timespan",
                            other_to_value(other)
                        )?
                    )),
                });
            }
            let a = bounds.first().cloned().flatten();
            let b = bounds.get(1).cloned().flatten();
            if lname == "timespan" {
                Type::Timespan(a, b)
            } else {
                Type::Timestamp(a, b)
            }
        }
        "semver" => {
            // PSemVerType.new: each range parsed by VersionRange.parse, then merged.
            let ranges = params
                .iter()
                .map(|p| match p {
                    Val::Str(s) => super::semver::VersionRange::parse(s).map_err(invalid),
                    _ => Err(not_a_type(text)),
                })
                .collect::<Result<Vec<_>, _>>()?;
            Type::SemVer(super::semver::VersionRange::merge_all(ranges).map_err(invalid)?)
        }
        // Not in Puppet's type map with parameters: resolved through the loader, which the
        // lookup's scope cannot give (Puppet's own error).
        "richdata" | "binary" | "scalardata" => return Err(TypeError::Unknown(text.to_string())),
        "class" => {
            if n != 1 {
                return Err(params_error("Class", "1", n));
            }
            if let Val::Int(_) | Val::Float(_) = &params[0] {
                // TypeFactory.host_class calls `sub` on the name.
                return Err(invalid(format!(
                    "undefined method `sub' for an instance of {}",
                    val_class(&params[0])
                )));
            }
            Type::Other(text.to_string())
        }
        "resource" => {
            if n > 2 {
                return Err(params_error("Resource", "1 or 2", n));
            }
            if let Val::Int(_) | Val::Float(_) | Val::Bool(_) | Val::Regex(_) = &params[0] {
                return Err(invalid(format!(
                    "The type name cannot be a {}",
                    val_class(&params[0])
                )));
            }
            Type::Other(text.to_string())
        }
        "runtime" => {
            if n != 2 {
                return Err(params_error("Runtime", "2", n));
            }
            Type::Other(text.to_string())
        }
        "init" | "iterator" => {
            // The first parameter must be a type (assert_type).
            as_type(&params[0], text)?;
            if lname == "iterator" && n != 1 {
                return Err(params_error("Iterator", "1", n));
            }
            Type::Other(text.to_string())
        }
        "object" => match &params[..] {
            // A named Object type is known by its name.
            [Val::Hash(entries)] => match entries
                .iter()
                .find(|(k, _)| matches!(k, Val::Str(k) if k == "name"))
            {
                Some((_, Val::Str(name))) => Type::Other(name.clone()),
                _ => Type::Other(text.to_string()),
            },
            _ => Type::Other(text.to_string()),
        },
        "uri" => {
            if n != 1 {
                return Err(params_error("URI", "1", n));
            }
            uri_type(&params[0])?
        }
        "callable" | "typeset" => Type::Other(text.to_string()),
        _ => return Err(TypeError::Unknown(text.to_string())),
    };
    Ok(Val::Type(t))
}

/// A size parameter given as an Integer type (`String[Integer[1, 5]]`).
fn size_type(v: &Val) -> Option<Range> {
    match v {
        Val::Type(Type::Integer(r)) => Some(*r),
        // An Integer type with Float bounds is a size too, kept as written.
        Val::Type(Type::IntegerF(from, to)) => Some(Range {
            from: from.map(|n| n.as_f64().ceil() as i64),
            to: to.map(|n| n.as_f64().floor() as i64),
            float: true,
        }),
        _ => None,
    }
}

/// How Ruby's `no implicit conversion of X into String` names a value.
fn ruby_conversion_name(v: &Val) -> &'static str {
    match v {
        Val::Bool(true) => "true",
        Val::Bool(false) => "false",
        Val::Undef => "nil",
        other => val_class(other),
    }
}

fn other_to_value(v: &Val) -> hiera_value::value::Value {
    use hiera_value::value::Value;
    match v {
        Val::Int(i) => Value::Int(*i),
        Val::Float(f) => Value::Float(*f),
        Val::Str(s) => Value::String(s.clone()),
        _ => Value::Null,
    }
}

fn struct_key_err(t: &Type) -> TypeError {
    invalid(format!(
        "Unable to extract a non-empty literal string from Struct member key type {}",
        t
    ))
}

/// `PURIType.new(parameters)`: a URI string (its members), a hash of member matches checked
/// against `TYPE_URI_PARAM_TYPE`, anything else no parameters.
fn uri_type(p: &Val) -> Result<Type, TypeError> {
    use super::uri::{Uri, TYPE_URI_TEXT};
    use super::UriParam;
    use hiera_value::value::Value;
    let params: Vec<(String, UriParam)> = match p {
        Val::Str(s) => {
            let u = Uri::parse(s).map_err(|_| {
                invalid(format!(
                    "URI-Type parameter has wrong type, expects a match for {TYPE_URI_TEXT}, got {}",
                    super::puppet_quote(s)
                ))
            })?;
            u.to_params()
                .into_iter()
                .map(|(k, v)| (k, UriParam::Value(v)))
                .collect()
        }
        Val::Hash(entries) => {
            let fail = |what: String| {
                invalid(format!(
                    " URI-Type parameter has wrong type, variant 0 expects a String value, got Struct\n  URI-Type parameter has wrong type, variant 1 {what}"
                ))
            };
            let mut out = Vec::new();
            for (k, v) in entries {
                let Val::Str(k) = k else {
                    return Err(fail(format!(
                        "expects a String value, got {}",
                        val_class(k)
                    )));
                };
                let member = matches!(
                    k.as_str(),
                    "scheme"
                        | "userinfo"
                        | "host"
                        | "port"
                        | "path"
                        | "query"
                        | "fragment"
                        | "opaque"
                );
                if !member {
                    return Err(fail(format!("unrecognized key '{k}'")));
                }
                let param = match (k.as_str(), v) {
                    (_, Val::Undef) => UriParam::Value(Value::Null),
                    (_, Val::Type(t @ (Type::NotUndef(_) | Type::Undef))) => UriParam::Type(t.clone()),
                    ("port", Val::Int(i)) if *i >= 0 => UriParam::Value(Value::Int(*i)),
                    ("port", other) => {
                        return Err(fail(format!(
                            "entry 'port' expects a value of type Undef, Integer[0, default], Type[NotUndef], or Type[Undef], got {}",
                            val_class(other)
                        )))
                    }
                    (_, Val::Str(s)) if !s.is_empty() => UriParam::Value(Value::String(s.clone())),
                    (_, Val::Regex(r)) => UriParam::Value(super::convert::regexp_value(r)),
                    (_, Val::Type(t @ (Type::Pattern(_) | Type::Enum(..)))) => UriParam::Type(t.clone()),
                    (_, other) => {
                        return Err(fail(format!(
                            "entry '{k}' expects a value of type Undef, String, Regexp, Type[Pattern], Type[Enum], Type[NotUndef], or Type[Undef], got {}",
                            val_class(other)
                        )))
                    }
                };
                out.push((k.clone(), param));
            }
            out
        }
        _ => Vec::new(),
    };
    Ok(Type::Uri((!params.is_empty()).then_some(params)))
}

fn val_class(v: &Val) -> &'static str {
    match v {
        Val::Int(_) => "Integer",
        Val::Float(_) => "Float",
        Val::Str(_) => "String",
        Val::Regex(_) => "Regexp",
        Val::Bool(true) => "TrueClass",
        Val::Bool(false) => "FalseClass",
        Val::Default => "Symbol",
        Val::Undef => "NilClass",
        Val::List(_) => "Array",
        Val::Hash(_) => "Hash",
        Val::Type(t) => ruby_type_class(t),
    }
}

/// The Ruby class of a type object (`Puppet::Pops::Types::PIntegerType`, ...).
fn ruby_type_class(t: &Type) -> &'static str {
    use Type as T;
    match t {
        T::Any => "Puppet::Pops::Types::PAnyType",
        T::Unit => "Puppet::Pops::Types::PUnitType",
        T::Undef => "Puppet::Pops::Types::PUndefType",
        T::Default => "Puppet::Pops::Types::PDefaultType",
        T::Scalar => "Puppet::Pops::Types::PScalarType",
        T::ScalarData => "Puppet::Pops::Types::PScalarDataType",
        T::Numeric => "Puppet::Pops::Types::PNumericType",
        T::Data | T::RichData => "Puppet::Pops::Types::PTypeAliasType",
        T::Boolean(_) => "Puppet::Pops::Types::PBooleanType",
        T::Integer(_) | T::IntegerF(..) | T::BigInteger(_) => "Puppet::Pops::Types::PIntegerType",
        T::Float(_) => "Puppet::Pops::Types::PFloatType",
        T::String { .. } => "Puppet::Pops::Types::PStringType",
        T::Enum(..) => "Puppet::Pops::Types::PEnumType",
        T::Pattern(_) => "Puppet::Pops::Types::PPatternType",
        T::Regexp(_) => "Puppet::Pops::Types::PRegexpType",
        T::NotUndef(_) => "Puppet::Pops::Types::PNotUndefType",
        T::Optional(_) => "Puppet::Pops::Types::POptionalType",
        T::Variant(_) => "Puppet::Pops::Types::PVariantType",
        T::Array(..) => "Puppet::Pops::Types::PArrayType",
        T::Tuple(..) => "Puppet::Pops::Types::PTupleType",
        T::Hash(..) => "Puppet::Pops::Types::PHashType",
        T::Struct(_) => "Puppet::Pops::Types::PStructType",
        T::Collection(_) => "Puppet::Pops::Types::PCollectionType",
        T::Iterable(_) => "Puppet::Pops::Types::PIterableType",
        T::Sensitive(_) => "Puppet::Pops::Types::PSensitiveType",
        T::Timestamp(..) => "Puppet::Pops::Types::PTimestampType",
        T::Timespan(..) => "Puppet::Pops::Types::PTimespanType",
        T::SemVer(_) => "Puppet::Pops::Types::PSemVerType",
        T::SemVerRange => "Puppet::Pops::Types::PSemVerRangeType",
        T::Type(_) => "Puppet::Pops::Types::PTypeType",
        T::Uri(_) => "Puppet::Pops::Types::PURIType",
        T::Other(text) => match text.split('[').next().unwrap_or(text) {
            "Binary" => "Puppet::Pops::Types::PBinaryType",
            "Callable" => "Puppet::Pops::Types::PCallableType",
            "CatalogEntry" => "Puppet::Pops::Types::PCatalogEntryType",
            "Class" => "Puppet::Pops::Types::PClassType",
            "Resource" => "Puppet::Pops::Types::PResourceType",
            "URI" => "Puppet::Pops::Types::PURIType",
            "Iterator" => "Puppet::Pops::Types::PIteratorType",
            "Init" => "Puppet::Pops::Types::PInitType",
            "Runtime" => "Puppet::Pops::Types::PRuntimeType",
            "TypeSet" => "Puppet::Pops::Types::PTypeSetType",
            "TypeAlias" => "Puppet::Pops::Types::PTypeAliasType",
            "TypeReference" => "Puppet::Pops::Types::PTypeReferenceType",
            _ => "Puppet::Pops::Types::PObjectType",
        },
    }
}

fn int_bound(v: &Val, text: &str) -> Result<Option<i64>, TypeError> {
    match v {
        Val::Int(i) => Ok(Some(*i)),
        // TypeFactory.range/float_range: nil is an open bound, like default.
        Val::Default | Val::Undef => Ok(None),
        Val::Str(s) if s == "default" => Ok(None),
        _ => Err(not_a_type(text)),
    }
}

fn num_bound(v: &Val, text: &str) -> Result<Option<super::Num>, TypeError> {
    match v {
        Val::Int(i) => Ok(Some(super::Num::Int(*i))),
        Val::Float(f) => Ok(Some(super::Num::Float(*f))),
        // TypeFactory.range/float_range: nil is an open bound, like default.
        Val::Default | Val::Undef => Ok(None),
        Val::Str(s) if s == "default" => Ok(None),
        _ => Err(not_a_type(text)),
    }
}

fn float_bound(v: &Val, text: &str) -> Result<Option<f64>, TypeError> {
    match v {
        Val::Int(i) => Ok(Some(*i as f64)),
        Val::Float(f) => Ok(Some(*f)),
        // TypeFactory.range/float_range: nil is an open bound, like default.
        Val::Default | Val::Undef => Ok(None),
        _ => Err(not_a_type(text)),
    }
}

fn array_of(t: Type, size: Range) -> Type {
    let size = size.to_size();
    if size == Range::exact(0) {
        return Type::Array(Box::new(Type::Unit), Some(size));
    }
    Type::Array(Box::new(t), Some(size))
}

fn hash_of(k: Type, v: Type, size: Range) -> Type {
    let size = size.to_size();
    if size == Range::exact(0) {
        return Type::hash_empty();
    }
    Type::Hash(Box::new(k), Box::new(v), Some(size))
}

/// A `Pattern` regexp, or the error that it is too big for the regex engine (rather than a
/// pattern that silently matches nothing).
fn sized_regex(source: &str) -> Result<Regex, TypeError> {
    let re = Regex::new(source);
    match re.limit_error() {
        Some(e) => Err(TypeError::Invalid(e)),
        None => Ok(re),
    }
}
