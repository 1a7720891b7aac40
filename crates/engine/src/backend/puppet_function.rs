//! Puppet 8's legacy `data_provider: function` (`V4DataHashFunctionProvider`): the hash a
//! module's `MODULE::data()` function (metadata.json `"data_provider": "function"`) or an
//! environment's `environment::data()` (environment.conf `environment_data_provider =
//! function`) returns, evaluated here when the function's body is data.
//!
//! Such functions are data in practice: one hash literal of strings, numbers, booleans,
//! `undef`, arrays and hashes, with `$facts`, `$trusted` and top-scope variables (also
//! interpolated in double-quoted strings, `"${facts['os']['family']}"`). That subset is parsed
//! and evaluated exactly as Puppet 8.10's parser and evaluator do it (literals, escapes,
//! `[]` access, string conversion of interpolated values, "Unknown variable" and "Operator '[]'
//! is not applicable to an Undef Value" errors with their file, line and column). Anything
//! beyond it (assignments, conditionals, operators, function and method calls, parameters,
//! return types, type references, heredocs …) is refused with one line naming the function and
//! the construct: hiera-lookup cannot run Puppet code, and a silent miss would be a wrong
//! answer.
//!
//! Why a small parser here rather than tree-sitter-puppet (which `hiera-lint` uses): the engine
//! depends on no grammar or C code (see ARCHITECTURE.md), the data subset is a few dozen lines of
//! grammar, and evaluating it exactly needs Puppet's own lexical rules (its escapes, number
//! forms, `$name` in strings), positions in Puppet's terms (line and column of the expression)
//! and a clear refusal of everything else, which a full grammar would have to be cut down to
//! anyway.
//!
//! Where Puppet's loaders look for the function: `<module>/functions/data.pp` for `MODULE::data`
//! (the module's name is not repeated under `functions/`), and
//! `<environment>/functions/environment/data.pp` for `environment::data` (the environment's
//! loader keeps the whole name). A Ruby function (`lib/puppet/functions/…/data.rb`) is refused.

use crate::error::{Error, Result};
use hiera_value::value::{Map, Value};
use std::path::{Path, PathBuf};

/// Where Puppet's loader finds function `name` (`MODULE::data`, `environment::data`) of the
/// module or environment at `root`: its Puppet source and its Ruby source.
pub(crate) fn function_sources(root: &Path, name: &str) -> (PathBuf, PathBuf) {
    let parts: Vec<&str> = name.split("::").collect();
    let (qualifier, rest) = parts.split_first().map_or(("", &[][..]), |(q, r)| (*q, r));
    let pp = if qualifier == "environment" {
        // The environment's loader starts at the first name part.
        parts.iter().fold(root.join("functions"), |p, s| p.join(s))
    } else {
        rest.iter().fold(root.join("functions"), |p, s| p.join(s))
    };
    let rb = parts
        .iter()
        .fold(root.join("lib/puppet/functions"), |p, s| p.join(s));
    (pp.with_extension("pp"), rb.with_extension("rb"))
}

/// Parses the Puppet source `text` of `file`, which must define function `name` and nothing
/// else, and evaluates its body; `var` answers a top-scope variable (`None`: there is no such
/// variable). The value is the function's return value, whatever its type.
pub(crate) fn evaluate(
    text: &str,
    name: &str,
    file: &str,
    var: &dyn Fn(&str) -> Option<Value>,
) -> Result<Value> {
    let mut p = Parser {
        src: text,
        pos: 0,
        file,
        function: name,
        depth: 0,
    };
    let (defined, body) = p.file()?;
    if defined != name {
        return Err(Error::run(format!(
            "The code loaded from {file} produced function with the wrong name, expected {name}, actual {defined}"
        )));
    }
    let ev = Evaluator {
        src: text,
        file,
        var,
    };
    ev.eval(&body)
}

/// The message of a value the function returned that is not a hash (`TypeAsserter`).
pub(crate) fn not_a_hash(name: &str, v: &Value) -> Error {
    Error::issue(format!(
        "Value returned from deprecated API function '{name}' has wrong type, expects a Hash value, got {}",
        hiera_types::simple_name(v)
    ))
}

#[derive(Debug, Clone)]
enum Expr {
    Lit(Value),
    /// A double-quoted string with interpolations.
    Str(Vec<Part>),
    /// `$name` (the byte offset of the `$`, or of the name inside `${…}`).
    Var(String, usize),
    Array(Vec<Expr>),
    Hash(Vec<(Expr, Expr)>),
    /// `target[index]` (the offset of the target's start).
    Access(Box<Expr>, Box<Expr>, usize),
}

#[derive(Debug, Clone)]
enum Part {
    Lit(String),
    Expr(Expr),
}

struct Parser<'a> {
    src: &'a str,
    pos: usize,
    file: &'a str,
    function: &'a str,
    /// Expressions now being parsed, nested.
    depth: usize,
}

/// Line and column (1-based, in characters) of byte offset `at`.
fn line_col(src: &str, at: usize) -> (usize, usize) {
    let before = &src[..at.min(src.len())];
    let line = before.matches('\n').count() + 1;
    let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, col)
}

impl Parser<'_> {
    fn rest(&self) -> &str {
        &self.src[self.pos..]
    }

    fn peek(&self) -> Option<char> {
        self.rest().chars().next()
    }

    fn peek_at(&self, n: usize) -> Option<char> {
        self.rest().chars().nth(n)
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.pos += c.len_utf8();
        Some(c)
    }

    /// Puppet's issue position: `(file: F, line: L, column: C)`.
    fn at(&self, at: usize) -> String {
        let (line, col) = line_col(self.src, at);
        format!("(file: {}, line: {line}, column: {col})", self.file)
    }

    /// Puppet's own syntax error.
    fn syntax_error(&self, at: usize) -> Error {
        let token = match self.src[at..].chars().next() {
            None => return Error::issue(format!("Syntax error at end of input {}", self.at(at))),
            Some(c) if c.is_alphanumeric() || c == '_' => self.src[at..]
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect::<String>(),
            Some(c) => c.to_string(),
        };
        Error::issue(format!("Syntax error at '{token}' {}", self.at(at)))
    }

    /// Valid Puppet that is not data: refused, naming the construct.
    fn beyond(&self, at: usize, construct: &str) -> Error {
        let (line, col) = line_col(self.src, at);
        Error::run(format!(
            "{}:{line}:{col}: {}() has {construct}: hiera-lookup evaluates a data provider function only when its body is data (one hash of strings, numbers, booleans, undef, arrays and hashes, with $facts, $trusted and top-scope variables, also inside double-quoted strings); turn its data into a hiera.yaml and data files (Puppet deprecates data provider functions)",
            self.file, self.function
        ))
    }

    fn too_deep(&self) -> Error {
        let (line, col) = line_col(self.src, self.pos);
        Error::run(format!(
            "{}:{line}:{col}: {}() nests values deeper than {} levels",
            self.file,
            self.function,
            hiera_value::limits::MAX_VALUE_DEPTH
        ))
    }

    /// Whitespace and comments.
    fn skip(&mut self) {
        loop {
            let r = self.rest();
            if let Some(c) = r.chars().next().filter(|c| c.is_whitespace()) {
                self.pos += c.len_utf8();
            } else if r.starts_with('#') {
                self.pos += r.find('\n').unwrap_or(r.len());
            } else if let Some(comment) = r.strip_prefix("/*") {
                self.pos += comment.find("*/").map_or(r.len(), |i| i + 4);
            } else {
                return;
            }
        }
    }

    fn word(&mut self) -> String {
        let start = self.pos;
        while self
            .peek()
            .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
        {
            self.pos += 1;
        }
        self.src[start..self.pos].to_string()
    }

    /// A qualified name (`a::b`, `::a`).
    fn name(&mut self) -> String {
        let start = self.pos;
        if self.rest().starts_with("::") {
            self.pos += 2;
        }
        loop {
            self.word();
            let r = self.rest();
            if r.starts_with("::")
                && r[2..]
                    .chars()
                    .next()
                    .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
            {
                self.pos += 2;
            } else {
                break;
            }
        }
        self.src[start..self.pos].to_string()
    }

    fn expect(&mut self, c: char) -> Result<()> {
        self.skip();
        if self.peek() == Some(c) {
            self.pos += 1;
            Ok(())
        } else {
            Err(self.unexpected())
        }
    }

    /// The error for what is at the current position when something else was expected.
    fn unexpected(&mut self) -> Error {
        self.skip();
        let at = self.pos;
        let r = self.rest();
        let two: String = r.chars().take(2).collect();
        let construct = match r.chars().next() {
            None | Some('}' | ']' | ')' | ',' | ';') => return self.syntax_error(at),
            Some(_) if two == "=>" => return self.syntax_error(at),
            Some(_) if two == ">>" => "a return type".to_string(),
            Some(_) if two == "@(" => "a heredoc".to_string(),
            Some(_)
                if ["==", "!=", "=~", "!~", "<=", ">=", "<<", "+=", "-="]
                    .contains(&two.as_str()) =>
            {
                format!("the operator '{two}'")
            }
            Some('=') => "an assignment".to_string(),
            Some('.') => "a method call".to_string(),
            Some('?') => "a selector".to_string(),
            Some('|') => "a lambda".to_string(),
            Some('/') => "a regular expression or a division".to_string(),
            Some('(') => "parentheses".to_string(),
            Some(c @ ('+' | '-' | '*' | '%' | '<' | '>' | '!')) => format!("the operator '{c}'"),
            Some(c) if c.is_ascii_uppercase() => {
                let mut q = Parser { ..*self };
                format!("the type reference '{}'", q.name())
            }
            Some(c) if c.is_ascii_lowercase() || c == '_' => {
                let mut q = Parser { ..*self };
                let w = q.name();
                match w.as_str() {
                    "and" | "or" | "in" => format!("the operator '{w}'"),
                    _ => format!("'{w}'"),
                }
            }
            Some('$') => "a second expression".to_string(),
            Some(_) => return self.syntax_error(at),
        };
        self.beyond(at, &construct)
    }

    /// The file: one `function NAME() { BODY }`.
    fn file(&mut self) -> Result<(String, Expr)> {
        self.skip();
        let start = self.pos;
        if self.rest().is_empty() {
            return Err(Error::run(format!(
                "The code loaded from {} does not define the function '{}' - no value produced",
                self.file, self.function
            )));
        }
        if self.word() != "function" {
            self.pos = start;
            return Err(self.beyond(start, "code that is not a function definition"));
        }
        self.skip();
        let name_at = self.pos;
        let name = self.name();
        if name.is_empty() {
            return Err(self.syntax_error(name_at));
        }
        self.expect('(')?;
        self.skip();
        if self.peek() != Some(')') {
            return Err(self.beyond(self.pos, "parameters"));
        }
        self.pos += 1;
        self.skip();
        if self.rest().starts_with(">>") {
            return Err(self.beyond(self.pos, "a return type"));
        }
        self.expect('{')?;
        self.skip();
        let body = if self.peek() == Some('}') {
            Expr::Lit(Value::Null)
        } else {
            self.expr()?
        };
        self.skip();
        if self.peek() == Some(';') {
            self.pos += 1;
            self.skip();
        }
        if self.peek() != Some('}') {
            return Err(self.unexpected());
        }
        self.pos += 1;
        self.skip();
        if !self.rest().is_empty() {
            let at = self.pos;
            if self.word() == "function" {
                return Err(Error::run(format!(
                    "The code loaded from {} must contain only the function '{}' - it has additional definitions.",
                    self.file, self.function
                )));
            }
            return Err(self.beyond(at, "more code after the function"));
        }
        Ok((name, body))
    }

    /// A primary expression followed by `[…]` accesses.
    fn expr(&mut self) -> Result<Expr> {
        if self.depth >= hiera_value::limits::MAX_VALUE_DEPTH {
            return Err(self.too_deep());
        }
        self.depth += 1;
        let r = self.access_expr();
        self.depth -= 1;
        r
    }

    fn access_expr(&mut self) -> Result<Expr> {
        self.skip();
        let start = self.pos;
        let mut e = self.primary()?;
        let mut accesses = 0usize;
        loop {
            // `$a[1]` is an access, `$a [1]` an expression followed by an array (Puppet's
            // lexer tells LBRACK from LISTSTART by the whitespace before it).
            if self.peek() != Some('[') {
                return Ok(e);
            }
            // A chain of accesses nests as deep as values do.
            accesses += 1;
            if self.depth + accesses >= hiera_value::limits::MAX_VALUE_DEPTH {
                return Err(self.too_deep());
            }
            self.pos += 1;
            let index = self.expr()?;
            self.skip();
            if self.peek() == Some(',') {
                return Err(self.beyond(self.pos, "an access with several keys"));
            }
            self.expect(']')?;
            e = Expr::Access(Box::new(e), Box::new(index), start);
        }
    }

    fn primary(&mut self) -> Result<Expr> {
        self.skip();
        let at = self.pos;
        let Some(c) = self.peek() else {
            return Err(self.syntax_error(at));
        };
        match c {
            '{' => {
                self.pos += 1;
                self.hash()
            }
            '[' => {
                self.pos += 1;
                let mut items = Vec::new();
                loop {
                    self.skip();
                    if self.peek() == Some(']') {
                        self.pos += 1;
                        return Ok(Expr::Array(items));
                    }
                    items.push(self.expr()?);
                    self.skip();
                    match self.peek() {
                        Some(',') => self.pos += 1,
                        Some(']') => {}
                        _ => return Err(self.unexpected()),
                    }
                }
            }
            '\'' => {
                self.pos += 1;
                self.single_quoted().map(|s| Expr::Lit(Value::String(s)))
            }
            '"' => {
                self.pos += 1;
                self.double_quoted()
            }
            '$' => {
                self.pos += 1;
                let name = self.name();
                if name.is_empty() || name == "::" {
                    return Err(self.syntax_error(at));
                }
                Ok(Expr::Var(name, at))
            }
            '-' if self
                .peek_at(1)
                .is_some_and(|c| c.is_ascii_digit() || c.is_whitespace()) =>
            {
                self.pos += 1;
                self.skip();
                if !self.peek().is_some_and(|c| c.is_ascii_digit()) {
                    return Err(self.beyond(at, "the operator '-'"));
                }
                match self.number()? {
                    Value::Int(i) => Ok(Expr::Lit(Value::Int(-i))),
                    Value::Float(f) => Ok(Expr::Lit(Value::Float(-f))),
                    _ => Err(self.beyond(at, "the operator '-'")),
                }
            }
            c if c.is_ascii_digit() => self.number().map(Expr::Lit),
            c if c.is_ascii_alphabetic()
                || c == '_'
                || (c == ':' && self.peek_at(1) == Some(':')) =>
            {
                let mut q = Parser { ..*self };
                let w = q.name();
                let after_name = q.pos;
                q.skip();
                if c.is_ascii_uppercase() {
                    return Err(self.beyond(at, &format!("the type reference '{w}'")));
                }
                if q.peek() == Some('(') {
                    return Err(self.beyond(at, &format!("a call of the function '{w}'")));
                }
                let construct = match w.as_str() {
                    "true" => Some(Ok(Value::Bool(true))),
                    "false" => Some(Ok(Value::Bool(false))),
                    "undef" => Some(Ok(Value::Null)),
                    "default" => Some(Err("the 'default' keyword")),
                    "if" | "unless" | "case" => Some(Err("a conditional expression")),
                    "function" | "class" | "define" | "node" | "type" | "plan" => {
                        Some(Err("a definition"))
                    }
                    "and" | "or" | "in" | "not" => Some(Err("a boolean or 'in' operator")),
                    _ => None,
                };
                match construct {
                    Some(Err(what)) => Err(self.beyond(at, what)),
                    Some(Ok(v)) => {
                        self.pos = after_name;
                        Ok(Expr::Lit(v))
                    }
                    // A bare word is a string (`present`, `mymod::key`).
                    None => {
                        self.pos = after_name;
                        Ok(Expr::Lit(Value::String(w)))
                    }
                }
            }
            '(' => {
                self.pos += 1;
                let e = self.expr()?;
                self.expect(')')?;
                Ok(e)
            }
            _ => Err(self.unexpected()),
        }
    }

    fn hash(&mut self) -> Result<Expr> {
        let mut entries: Vec<(Expr, Expr)> = Vec::new();
        let mut seen: Vec<Value> = Vec::new();
        loop {
            self.skip();
            if self.peek() == Some('}') {
                self.pos += 1;
                return Ok(Expr::Hash(entries));
            }
            let key_at = self.pos;
            let key = self.expr()?;
            // The validator's check: a literal key given twice.
            let literal = match &key {
                Expr::Lit(v) => Some(v.clone()),
                Expr::Str(parts) if parts.iter().all(|p| matches!(p, Part::Lit(_))) => {
                    Some(Value::String(
                        parts
                            .iter()
                            .map(|p| match p {
                                Part::Lit(s) => s.as_str(),
                                Part::Expr(_) => "",
                            })
                            .collect(),
                    ))
                }
                _ => None,
            };
            if let Some(k) = literal {
                if seen.contains(&k) {
                    return Err(Error::issue(format!(
                        "The key '{}' is declared more than once {}",
                        hiera_value::text::to_s(&k),
                        self.at(key_at)
                    )));
                }
                seen.push(k);
            }
            self.skip();
            if !self.rest().starts_with("=>") {
                return Err(self.unexpected());
            }
            self.pos += 2;
            let value = self.expr()?;
            entries.push((key, value));
            self.skip();
            match self.peek() {
                Some(',') => self.pos += 1,
                Some('}') => {}
                _ => return Err(self.unexpected()),
            }
        }
    }

    /// After the opening `'`: `\\` and `\'` are escapes, any other backslash stays.
    fn single_quoted(&mut self) -> Result<String> {
        let start = self.pos - 1;
        let mut out = String::new();
        loop {
            match self.bump() {
                None => return Err(self.unclosed(start)),
                Some('\'') => return Ok(out),
                Some('\\') => match self.peek() {
                    Some(c @ ('\\' | '\'')) => {
                        self.pos += 1;
                        out.push(c);
                    }
                    _ => out.push('\\'),
                },
                Some(c) => out.push(c),
            }
        }
    }

    fn unclosed(&self, start: usize) -> Error {
        Error::issue(format!(
            "Unclosed quote after \"'\" followed by '...' {}",
            self.at(start)
        ))
    }

    /// After the opening `"`: Puppet's escapes and `$`/`${…}` interpolation.
    fn double_quoted(&mut self) -> Result<Expr> {
        let start = self.pos - 1;
        let mut parts = Vec::new();
        let mut lit = String::new();
        loop {
            match self.bump() {
                None => return Err(self.unclosed(start)),
                Some('"') => break,
                Some('\\') => self.escape(&mut lit),
                Some('$') => {
                    let at = self.pos - 1;
                    if self.peek() == Some('{') {
                        self.pos += 1;
                        if !lit.is_empty() {
                            parts.push(Part::Lit(std::mem::take(&mut lit)));
                        }
                        parts.push(Part::Expr(self.interpolation()?));
                    } else if self
                        .peek()
                        .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
                        || (self.rest().starts_with("::")
                            && self
                                .peek_at(2)
                                .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_'))
                    {
                        // `$name`: a name only, never an access (`"$a['b']"` is `$a` then text).
                        if !lit.is_empty() {
                            parts.push(Part::Lit(std::mem::take(&mut lit)));
                        }
                        let name = self.name();
                        parts.push(Part::Expr(Expr::Var(name, at)));
                    } else {
                        lit.push('$');
                    }
                }
                Some(c) => lit.push(c),
            }
        }
        if !lit.is_empty() || parts.is_empty() {
            parts.push(Part::Lit(lit));
        }
        match parts.as_slice() {
            [Part::Lit(s)] => Ok(Expr::Lit(Value::String(s.clone()))),
            _ => Ok(Expr::Str(parts)),
        }
    }

    /// After `\` in a double-quoted string.
    fn escape(&mut self, out: &mut String) {
        match self.peek() {
            Some('n') => out.push('\n'),
            Some('r') => out.push('\r'),
            Some('t') => out.push('\t'),
            Some('s') => out.push(' '),
            Some(c @ ('\\' | '"' | '\'' | '$')) => out.push(c),
            Some('u') => {
                if let Some(c) = self.unicode_escape() {
                    out.push(c);
                    return;
                }
                out.push('\\');
                return;
            }
            // Unrecognized: the backslash stays (Puppet warns).
            _ => {
                out.push('\\');
                return;
            }
        }
        self.pos += 1;
    }

    /// `\u{1F600}` or `\u00e9` (at the `u`); `None` leaves the position.
    fn unicode_escape(&mut self) -> Option<char> {
        let r = &self.rest()[1..];
        let (hex, len) = if let Some(inner) = r.strip_prefix('{') {
            let end = inner.find('}')?;
            let h = &inner[..end];
            if h.is_empty() || h.len() > 6 {
                return None;
            }
            (h, end + 2)
        } else {
            let h = r.get(..4)?;
            (h, 4)
        };
        if !hex.chars().all(|c| c.is_ascii_hexdigit()) {
            return None;
        }
        let c = char::from_u32(u32::from_str_radix(hex, 16).ok()?)?;
        self.pos += 1 + len;
        Some(c)
    }

    /// After `${`: a variable named by a bare word, or an expression, then `}`.
    fn interpolation(&mut self) -> Result<Expr> {
        self.skip();
        let at = self.pos;
        let c = self.peek();
        let e = if c.is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            || self.rest().starts_with("::")
        {
            let name = self.name();
            if self.peek() == Some('(') {
                return Err(self.beyond(at, &format!("a call of the function '{name}'")));
            }
            let mut e = Expr::Var(name, at);
            let mut accesses = 0usize;
            loop {
                if self.peek() != Some('[') {
                    break;
                }
                accesses += 1;
                if self.depth + accesses >= hiera_value::limits::MAX_VALUE_DEPTH {
                    return Err(self.too_deep());
                }
                self.pos += 1;
                let index = self.expr()?;
                self.expect(']')?;
                e = Expr::Access(Box::new(e), Box::new(index), at);
            }
            e
        } else if c.is_some_and(|c| c.is_ascii_digit()) {
            return Err(self.beyond(at, "a numeric variable"));
        } else {
            self.expr()?
        };
        self.skip();
        if self.peek() != Some('}') {
            return Err(self.unexpected());
        }
        self.pos += 1;
        Ok(e)
    }

    /// A number, as Puppet's lexer reads it: hexadecimal `0x1F`, octal `0777`, decimal `12`,
    /// `1.5`, `1e3`, `1.5e-2`.
    fn number(&mut self) -> Result<Value> {
        let start = self.pos;
        let src = self.src;
        let r = &src[start..];
        let bytes = r.as_bytes();
        let mut n = 0;
        let hex = r.starts_with("0x") || r.starts_with("0X");
        let mut float = false;
        if hex {
            n = 2;
            while n < bytes.len() && bytes[n].is_ascii_hexdigit() {
                n += 1;
            }
        } else {
            while n < bytes.len() && bytes[n].is_ascii_digit() {
                n += 1;
            }
            if n + 1 < bytes.len() && bytes[n] == b'.' && bytes[n + 1].is_ascii_digit() {
                float = true;
                n += 1;
                while n < bytes.len() && bytes[n].is_ascii_digit() {
                    n += 1;
                }
            }
            if n < bytes.len() && (bytes[n] == b'e' || bytes[n] == b'E') {
                let mut m = n + 1;
                if m < bytes.len() && bytes[m] == b'-' {
                    m += 1;
                }
                if m < bytes.len() && bytes[m].is_ascii_digit() {
                    float = true;
                    while m < bytes.len() && bytes[m].is_ascii_digit() {
                        m += 1;
                    }
                    n = m;
                }
            }
        }
        let text = &r[..n];
        let mut end = n;
        while end < bytes.len() && (bytes[end].is_ascii_alphanumeric() || bytes[end] == b'_') {
            end += 1;
        }
        if end > n || (hex && n == 2) {
            return Err(Error::issue(format!(
                "Illegal number '{}' {}",
                &r[..end],
                self.at(start)
            )));
        }
        self.pos += n;
        let out_of_range = || Error::issue(format!("Illegal number '{text}' {}", self.at(start)));
        if hex {
            return i64::from_str_radix(&text[2..], 16)
                .map(Value::Int)
                .map_err(|_| out_of_range());
        }
        if float {
            return text
                .parse::<f64>()
                .map(Value::Float)
                .map_err(|_| out_of_range());
        }
        if text.len() > 1 && text.starts_with('0') {
            if !text.bytes().all(|b| (b'0'..=b'7').contains(&b)) {
                return Err(Error::issue(format!(
                    "Not a valid octal number {text} {}",
                    self.at(start)
                )));
            }
            return i64::from_str_radix(&text[1..], 8)
                .map(Value::Int)
                .map_err(|_| out_of_range());
        }
        text.parse::<i64>()
            .map(Value::Int)
            .map_err(|_| out_of_range())
    }
}

struct Evaluator<'a> {
    src: &'a str,
    file: &'a str,
    var: &'a dyn Fn(&str) -> Option<Value>,
}

impl Evaluator<'_> {
    fn at(&self, at: usize) -> String {
        let (line, col) = line_col(self.src, at);
        format!("(file: {}, line: {line}, column: {col})", self.file)
    }

    fn eval(&self, e: &Expr) -> Result<Value> {
        Ok(match e {
            Expr::Lit(v) => v.clone(),
            Expr::Str(parts) => {
                let mut s = String::new();
                for p in parts {
                    match p {
                        Part::Lit(l) => s.push_str(l),
                        Part::Expr(e) => s.push_str(&interpolated(&self.eval(e)?)),
                    }
                }
                Value::String(s)
            }
            Expr::Var(name, at) => match (self.var)(name) {
                Some(v) => v,
                None => {
                    return Err(Error::issue(format!(
                        "Evaluation Error: Unknown variable: '{name}'. {}",
                        self.at(*at)
                    )))
                }
            },
            Expr::Array(items) => Value::Array(
                items
                    .iter()
                    .map(|i| self.eval(i))
                    .collect::<Result<Vec<_>>>()?,
            ),
            Expr::Hash(entries) => {
                let mut m = Map::default();
                for (k, v) in entries {
                    let k = self.eval(k)?;
                    let v = self.eval(v)?;
                    m.insert(k, v);
                }
                Value::Hash(m)
            }
            Expr::Access(target, index, at) => {
                let t = self.eval(target)?;
                let i = self.eval(index)?;
                match (&t, &i) {
                    (Value::Hash(h), _) => h.get(&i).cloned().unwrap_or(Value::Null),
                    (Value::Array(a), Value::Int(n)) => {
                        let len = a.len() as i64;
                        let n = if *n < 0 { len + n } else { *n };
                        usize::try_from(n)
                            .ok()
                            .and_then(|n| a.get(n))
                            .cloned()
                            .unwrap_or(Value::Null)
                    }
                    (Value::Null, _) => {
                        return Err(Error::issue(format!(
                        "Evaluation Error: Operator '[]' is not applicable to an Undef Value. {}",
                        self.at(*at)
                    )))
                    }
                    _ => {
                        let (line, col) = line_col(self.src, *at);
                        return Err(Error::run(format!(
                            "{}:{line}:{col}: an access into {} with {}: hiera-lookup evaluates a data provider function's [] only on hashes, and on arrays with an integer",
                            self.file,
                            hiera_types::simple_name(&t),
                            hiera_types::simple_name(&i)
                        )));
                    }
                }
            }
        })
    }
}

/// A value interpolated in a double-quoted string (`EvaluatorImpl#string`): `undef` is empty,
/// arrays `[a, b]` and hashes `{k => v}` with their elements converted the same way.
fn interpolated(v: &Value) -> String {
    match v {
        Value::Null => String::new(),
        Value::Bool(b) => b.to_string(),
        Value::Int(i) => i.to_string(),
        Value::BigInt(d) => d.clone(),
        Value::Float(f) => hiera_value::text::float_to_s(*f),
        Value::String(s) => s.clone(),
        Value::Array(a) => format!(
            "[{}]",
            a.iter().map(interpolated).collect::<Vec<_>>().join(", ")
        ),
        Value::Hash(h) => format!(
            "{{{}}}",
            h.iter()
                .map(|(k, x)| format!("{} => {}", interpolated(k), interpolated(x)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        Value::Sensitive(_) => "Sensitive [value redacted]".into(),
        Value::Object(o) => o.to_s.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts() -> Value {
        hiera_formats::yaml::load("os:\n  family: Debian\n  release:\n    major: '12'\nrole: web\n")
            .unwrap()
    }

    fn var(name: &str) -> Option<Value> {
        let facts = facts();
        match name.strip_prefix("::").unwrap_or(name) {
            "facts" => Some(facts),
            "trusted" => Some(
                hiera_formats::yaml::load("certname: n1.example.com\nextensions: {}\n").unwrap(),
            ),
            "role" => Some(Value::str("web")),
            _ => None,
        }
    }

    fn eval(body: &str) -> Result<Value> {
        let text = format!("function m::data() {{\n{body}\n}}\n");
        evaluate(&text, "m::data", "/m/functions/data.pp", &var)
    }

    fn json(body: &str) -> String {
        hiera_formats::render::to_json(&eval(body).unwrap()).unwrap()
    }

    /// The answers of Puppet 8.10 for these bodies (`puppet lookup --render-as json`).
    #[test]
    fn data_as_puppet_evaluates_it() {
        assert_eq!(
            json(r#"{ 'a' => "${facts['os']['family']}-${trusted['certname']}" }"#),
            r#"{"a":"Debian-n1.example.com"}"#
        );
        assert_eq!(
            json(r#"{ 'a' => "$::role/$role/${::role}x" }"#),
            r#"{"a":"web/web/webx"}"#
        );
        assert_eq!(
            json("{ 'a' => [0x1F, 010, 1e3, - 5, 1.5e-2, 0, -0x1F, 0X1f, 0777] }"),
            r#"{"a":[31,8,1000.0,-5,0.015,0,-31,31,511]}"#
        );
        assert_eq!(
            json(r#"{ 'a' => "t\ta\nb\s\$x\u{1F600}\u00e9\\q\"\'", b => 'x\'y\\z\n\q' }"#),
            "{\"a\":\"t\\ta\\nb $x😀é\\\\q\\\"'\",\"b\":\"x'y\\\\z\\\\n\\\\q\"}"
        );
        assert_eq!(json(r#"{ 'a' => "a\qb\%c" }"#), r#"{"a":"a\\qb\\%c"}"#);
        assert_eq!(
            json(r#"{ 'a' => "<${facts['os']}|${facts['nosuch']}|$facts['os']>" }"#),
            r#"{"a":"<{family => Debian, release => {major => 12}}||{os => {family => Debian, release => {major => 12}}, role => web}['os']>"}"#
        );
        assert_eq!(
            json(
                r#"{ 'a' => "${facts[os][family]}", m::b => present, 'c' => [1,2][-1], 'd' => [1][5], 'e' => $facts['nosuch'] }"#
            ),
            r#"{"a":"Debian","m::b":"present","c":2,"d":null,"e":null}"#
        );
        // Comments, trailing commas, an empty body.
        assert_eq!(
            json("# c\n{ /* x */ 'a' => { 'b' => [], }, }"),
            r#"{"a":{"b":[]}}"#
        );
        assert_eq!(eval("").unwrap(), Value::Null);
        assert_eq!(
            json(r#"{ 'a' => "$", 'b' => "$ x" }"#),
            r#"{"a":"$","b":"$ x"}"#
        );
    }

    /// Puppet 8.10's messages, positions included.
    #[test]
    fn puppets_errors() {
        let err = |b: &str| eval(b).unwrap_err().to_string();
        assert_eq!(
            err("{ 'a' => $nosuch }"),
            "Evaluation Error: Unknown variable: 'nosuch'. (file: /m/functions/data.pp, line: 2, column: 10)"
        );
        assert_eq!(
            err("{ 'a' => \"<$::role::x>\" }"),
            "Evaluation Error: Unknown variable: '::role::x'. (file: /m/functions/data.pp, line: 2, column: 12)"
        );
        assert_eq!(
            err("{ 'a' => $facts['os']['nosuch']['x'] }"),
            "Evaluation Error: Operator '[]' is not applicable to an Undef Value. (file: /m/functions/data.pp, line: 2, column: 10)"
        );
        assert_eq!(
            err("{ 'a' => \"${facts[os][nosuch][x]}\" }"),
            "Evaluation Error: Operator '[]' is not applicable to an Undef Value. (file: /m/functions/data.pp, line: 2, column: 13)"
        );
        assert_eq!(
            err("{ 'a' => 1, 'a' => 2 }"),
            "The key 'a' is declared more than once (file: /m/functions/data.pp, line: 2, column: 13)"
        );
        assert_eq!(
            err("{ 'a' => 089 }"),
            "Not a valid octal number 089 (file: /m/functions/data.pp, line: 2, column: 10)"
        );
        assert_eq!(
            err("{ 'a' => 1_000 }"),
            "Illegal number '1_000' (file: /m/functions/data.pp, line: 2, column: 10)"
        );
        let text = "function m::other() { {} }\n";
        assert_eq!(
            evaluate(text, "m::data", "/f.pp", &var).unwrap_err().to_string(),
            "The code loaded from /f.pp produced function with the wrong name, expected m::data, actual m::other"
        );
        let text = "function m::data() { {} }\nfunction m::x() { 1 }\n";
        assert_eq!(
            evaluate(text, "m::data", "/f.pp", &var).unwrap_err().to_string(),
            "The code loaded from /f.pp must contain only the function 'm::data' - it has additional definitions."
        );
        assert_eq!(
            not_a_hash("m::data", &Value::Array(vec![Value::Int(1)])).to_string(),
            "Value returned from deprecated API function 'm::data' has wrong type, expects a Hash value, got Tuple"
        );
    }

    /// Anything that is not data is one line naming the function, the construct and where.
    #[test]
    fn code_is_refused_by_name() {
        for (body, construct) in [
            ("$x = { 'a' => 1 }\n$x", "an assignment"),
            (
                "case $facts['os']['family'] { default: { {} } }",
                "a conditional expression",
            ),
            (
                "{ 'a' => $facts['os']['family'] ? { 'Debian' => 1 } }",
                "a selector",
            ),
            ("{ 'a' => lookup('x') }", "a call of the function 'lookup'"),
            (
                "{ 'a' => $facts['os']['family'].downcase }",
                "a method call",
            ),
            ("{ 'a' => 1 + 2 }", "the operator '+'"),
            ("{ 'a' => String }", "the type reference 'String'"),
            (
                "{ 'a' => \"${upcase($x)}\" }",
                "a call of the function 'upcase'",
            ),
            ("{ 'a' => @(END) }", "a heredoc"),
            ("{ 'a' => default }", "the 'default' keyword"),
            ("{ 'a' => 1 } + { 'b' => 2 }", "the operator '+'"),
        ] {
            let e = eval(body).unwrap_err();
            let m = e.to_string();
            assert!(!e.is_lookup_error(), "{m}");
            assert!(m.starts_with("/m/functions/data.pp:2:"), "{m}");
            assert!(
                m.contains(&format!("m::data() has {construct}:")),
                "{body}: {m}"
            );
        }
        let with_params = "function m::data(String $x = 'a') { {} }";
        let m = evaluate(with_params, "m::data", "/f.pp", &var)
            .unwrap_err()
            .to_string();
        assert!(m.contains("m::data() has parameters"), "{m}");
        let typed = "function m::data() >> Hash { {} }";
        let m = evaluate(typed, "m::data", "/f.pp", &var)
            .unwrap_err()
            .to_string();
        assert!(m.contains("m::data() has a return type"), "{m}");
    }

    /// Hostile sources: deep nesting and long access chains are bounded, and no input makes
    /// the parser panic or loop.
    #[test]
    fn hostile_sources_are_one_error() {
        // On the lookup stack, as every command runs (the depth limits were measured on it).
        std::thread::Builder::new()
            .stack_size(hiera_value::limits::LOOKUP_STACK_SIZE)
            .spawn(hostile_sources)
            .unwrap()
            .join()
            .unwrap();
    }

    fn hostile_sources() {
        let n = hiera_value::limits::MAX_VALUE_DEPTH - 10;
        let deep_ok = format!("{}{}", "[".repeat(n), "]".repeat(n));
        assert!(eval(&deep_ok).is_ok());
        let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
        let m = eval(&deep).unwrap_err().to_string();
        assert!(m.contains("nests values deeper than"), "{m}");
        let chain = format!("$facts{}", "['os']".repeat(100_000));
        let m = eval(&chain).unwrap_err().to_string();
        assert!(m.contains("nests values deeper than"), "{m}");
        let chain = format!("\"${{facts{}}}\"", "[os]".repeat(100_000));
        assert!(eval(&chain).is_err());
        // Random text over the language's characters (a fixed LCG: reproducible).
        let alphabet: Vec<char> = "{}[]()'\"$\\=>,:;-+.?|@/*#\n 0x1e9aZé😀ntrufl"
            .chars()
            .collect();
        let mut x: u64 = 0x2545_f491_4f6c_dd1d;
        for _ in 0..20_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let len = (x % 40) as usize;
            let body: String = (0..len)
                .map(|i| alphabet[((x >> (i % 50)) as usize + i * 7) % alphabet.len()])
                .collect();
            let _ = eval(&body);
            let _ = evaluate(&body, "m::data", "/f.pp", &var);
        }
    }

    #[test]
    fn where_puppet_looks() {
        let (pp, rb) = function_sources(Path::new("/env"), "environment::data");
        assert_eq!(pp, Path::new("/env/functions/environment/data.pp"));
        assert_eq!(
            rb,
            Path::new("/env/lib/puppet/functions/environment/data.rb")
        );
        let (pp, rb) = function_sources(Path::new("/mods/ntp"), "ntp::data");
        assert_eq!(pp, Path::new("/mods/ntp/functions/data.pp"));
        assert_eq!(rb, Path::new("/mods/ntp/lib/puppet/functions/ntp/data.rb"));
    }
}
