//! `hocon_data`: HOCON read as Puppet reads it, `Hocon.parse(content)` of ruby-hocon 1.3.1
//! (parse the text, resolve substitutions, unwrap to Ruby values).
//!
//! No HOCON crate fits: the maintained-looking one (`hocon` 0.9) is unmaintained since 2022,
//! drops key order (Puppet hashes are ordered) and words errors its own way. This is a
//! parser for the HOCON that Hiera data uses, with ruby-hocon's results:
//! objects with or without root braces, `:`/`=`/`{` separators, commas or newlines between
//! fields (trailing commas allowed), `#` and `//` comments, quoted ("JSON") strings,
//! `"""` multi-line strings, unquoted strings and value concatenation (`10 seconds`),
//! path keys (`a.b.c = 1`, quoted segments kept whole), duplicate keys (objects merge, the
//! later object's keys first as ruby-hocon orders them; anything else replaces), array and
//! object concatenation, `+=`, substitutions `${a.b}` / `${?a.b}` against the whole
//! document with the environment as fallback, self-references (`a = ${a} [2]`), cycle
//! detection. Numbers as ruby-hocon makes them: integral floats are Integers (`1.0` → 1,
//! `1e3` → 1000), a leading zero is octal (`010` → 8, `08` is a string).
//!
//! Includes as ruby-hocon 1.3 runs them when Puppet parses a string: `include "x"` is never
//! found (ignored), `include file("x")` reads x relative to the working directory (ignored when
//! missing; its errors name it), `url(...)` and `classpath(...)` fail as they do in Ruby.
//! Not supported: duration/size units (strings anyway when unwrapped), substitutions
//! inside a concatenation that must merge with an earlier object (`a = ${b} { c = 1 }` is
//! resolved, but not delayed-merged with an earlier `a`). Errors carry ruby-hocon's
//! `String: <line>: ` origin and its wording, lexical mistakes included: like ruby-hocon's
//! tokenizer, an unescaped control character or unclosed quote or `${` becomes a problem
//! token that the parser names in the words of the place it meets it (`Problem`).

use hiera_value::value::{Map, Value};
use indexmap::IndexMap;
use std::collections::HashMap;

/// Reads what `include file(...)` names: `None` when the path is not a regular file (the
/// include is then ignored, as ruby-hocon ignores one it cannot find), else the bytes, within
/// the file size limit. [`disk`] reads the disk; a revision of a control repo reads its own
/// files.
pub type Includes<'a> = &'a dyn Fn(&std::path::Path) -> Option<std::io::Result<Vec<u8>>>;

/// [`Includes`] from the disk: regular files, read within
/// [`MAX_FILE_SIZE`](hiera_value::limits::MAX_FILE_SIZE).
pub fn disk(path: &std::path::Path) -> Option<std::io::Result<Vec<u8>>> {
    path.is_file().then(|| hiera_value::limits::read_file(path))
}

/// The parsed document, sized before anything is built: `x2 = ${x1} ${x1}` doubling is
/// rejected in time linear in the document, not after the copies have taken a gigabyte.
fn parse_sized(text: &str, includes: Includes) -> Result<IndexMap<String, Node>, String> {
    let mut p = Parser::new(text, includes);
    let root = p.parse_root()?;
    Sizer {
        root: &root,
        memo: HashMap::new(),
        visiting: Vec::new(),
        depth: 0,
    }
    .check()?;
    Ok(root)
}

/// The unwrapped document, or ruby-hocon's message (the caller wraps it as
/// `Unable to parse (<path>): <message>`). Includes are read from the disk.
pub fn parse_hocon(text: &str) -> Result<Value, String> {
    parse_hocon_with(text, &disk)
}

/// [`parse_hocon`], reading includes with `includes`.
pub fn parse_hocon_with(text: &str, includes: Includes) -> Result<Value, String> {
    let root = parse_sized(text, includes)?;
    let mut r = Resolver {
        root: &root,
        visiting: Vec::new(),
        work: 0,
        depth: 0,
    };
    match r.resolve(&Node::Obj(root.clone()))? {
        Some(v) => Ok(v),
        None => Ok(Value::Hash(Map::default())),
    }
}

/// Where each key of a HOCON document is written (keys of included files are not), or
/// ruby-hocon's message for a document Puppet refuses. Includes are read from the disk.
pub fn positions(text: &str) -> Result<crate::position::tree::PosNode, String> {
    positions_with(text, &disk)
}

/// [`positions`], reading includes with `includes`.
pub fn positions_with(
    text: &str,
    includes: Includes,
) -> Result<crate::position::tree::PosNode, String> {
    parse_hocon_with(text, includes)?;
    let mut p = Parser {
        fields: Some(Vec::new()),
        ..Parser::new(text, includes)
    };
    p.parse_root()?;
    let fields = p.fields.take().unwrap_or_default();
    // The parser counts characters; the line index, bytes.
    let lines = crate::lines::LineIndex::new(text);
    let byte_of: Vec<usize> = text.char_indices().map(|(b, _)| b).collect();
    Ok(crate::position::tree::PosNode::from_paths(
        fields.into_iter().map(|(path, start)| {
            let path = path.into_iter().map(Value::String).collect();
            let byte = byte_of.get(start).copied().unwrap_or(text.len());
            (path, lines.pos(byte))
        }),
    ))
}

/// Marks a message that is not a parse error but an exception escaping ruby-hocon (the caller
/// reports it without `Unable to parse`).
pub const RAW: &str = "\u{0}raw:";

/// How deep `include file(...)` may nest (a file including itself stops here).
const MAX_INCLUDE_DEPTH: usize = hiera_value::limits::MAX_HOCON_INCLUDE_DEPTH;

impl<'a> Parser<'a> {
    /// A parser at the start of a document.
    fn new(text: &str, includes: Includes<'a>) -> Parser<'a> {
        Parser {
            includes_read: includes,
            s: text.chars().collect(),
            i: 0,
            line: 1,
            depth: 0,
            includes: 0,
            after_separator: false,
            fields: None,
            key_starts: Vec::new(),
            problem: None,
            pending: None,
        }
    }

    /// `include file("name")`: the file, relative to the working directory as Ruby's File
    /// opens it (without an extension: `name.conf`, then `name.json`), parsed on its own; a
    /// missing file is ignored, as ruby-hocon ignores includes it cannot find. Its errors name
    /// the included file.
    fn include_file(&mut self, name: &str) -> Result<IndexMap<String, Node>, String> {
        let cwd = std::env::current_dir().unwrap_or_default();
        let base = cwd.join(name);
        let candidates = if std::path::Path::new(name).extension().is_some() {
            vec![base]
        } else {
            vec![base.with_extension("conf"), base.with_extension("json")]
        };
        let Some((path, read)) = candidates
            .into_iter()
            .find_map(|p| (self.includes_read)(&p).map(|r| (p, r)))
        else {
            return Ok(IndexMap::default());
        };
        if self.includes >= MAX_INCLUDE_DEPTH {
            return err(self.line, "include nesting too deep");
        }
        let text = read.map_err(|e| format!("{}: {e}", path.display()))?;
        let mut p = Parser {
            includes_read: self.includes_read,
            s: String::from_utf8_lossy(&text).chars().collect(),
            i: 0,
            line: 1,
            depth: self.depth,
            includes: self.includes + 1,
            after_separator: false,
            fields: None,
            key_starts: Vec::new(),
            problem: None,
            pending: None,
        };
        p.parse_root()
            .map_err(|e| match e.strip_prefix("String: ") {
                Some(rest) => format!("{}: {rest}", path.display()),
                None => e,
            })
    }
}

/// A parsed, unresolved value.
#[derive(Debug, Clone)]
enum Node {
    Obj(IndexMap<String, Node>),
    Arr(Vec<Node>),
    /// A scalar and the text it was written as (used when it is concatenated).
    Scalar(Value, String),
    /// Whitespace between two pieces of a concatenation.
    Space(String),
    Subst {
        path: Vec<String>,
        optional: bool,
        line: usize,
    },
    Concat(Vec<Node>, usize),
    /// An optional self-reference with nothing before it: no value.
    Missing,
    /// `${?x}` assigned over an earlier value: the substitution if it resolves, else the
    /// earlier value (an unset optional substitution does not override).
    OrElse(Box<Node>, Box<Node>),
}

struct Parser<'a> {
    /// Where `include file(...)` reads.
    includes_read: Includes<'a>,
    s: Vec<char>,
    i: usize,
    line: usize,
    /// Nesting of objects and arrays, bounded so that no input can exhaust the stack.
    depth: usize,
    /// Nesting of `include file(...)`.
    includes: usize,
    /// A field's separator (comma or newline) was just read: the end of the text is then a
    /// missing field, not a missing separator.
    after_separator: bool,
    /// Positions only (see [`positions`]): every field's path, with where each of its
    /// segments starts (char indexes), in document order.
    fields: Option<Vec<(Vec<String>, usize)>>,
    /// Where each segment of the key just parsed starts.
    key_starts: Vec<usize>,
    /// The tokenizer problem behind the error being returned (see `Problem`): the
    /// context that receives the error words it its own way.
    problem: Option<Problem>,
    /// A tokenizer problem met after a value's first piece: the concatenation ends before
    /// it, and whatever reads the next token reports it.
    pending: Option<Problem>,
}

/// ruby-hocon's tokenizer does not raise on a lexical mistake (an unescaped control
/// character in a quoted string, an unclosed quote or `${`): it queues a *problem token* in
/// its place, and the parser fails where that token does not fit, naming it
/// `'what' (message)` in the wording of the place (a value, a field name, a list element,
/// after a value).
#[derive(Debug, Clone)]
struct Problem {
    what: String,
    message: String,
    line: usize,
}

impl Problem {
    /// The token as ruby-hocon prints it.
    fn token(&self) -> String {
        format!("'{}' ({})", self.what, self.message)
    }
}

/// ruby-hocon's `add_quote_suggestion` without a previous field: `message` with the hint to
/// quote `token`, except at the end of the file.
fn quote_suggestion(token: &str, message: String) -> String {
    if token == "end of file" {
        return message;
    }
    format!("{message} (if you intended {token} to be part of a key or string value, try enclosing the key or value in double quotes")
}

const MAX_DEPTH: usize = hiera_value::limits::MAX_HOCON_DEPTH;

fn err<T>(line: usize, msg: impl AsRef<str>) -> Result<T, String> {
    Err(format!("String: {line}: {}", msg.as_ref()))
}

/// Characters that end an unquoted string (HOCON's forbidden characters).
fn forbidden(c: char) -> bool {
    matches!(
        c,
        '$' | '"'
            | '{'
            | '}'
            | '['
            | ']'
            | ':'
            | '='
            | ','
            | '+'
            | '#'
            | '`'
            | '^'
            | '?'
            | '!'
            | '@'
            | '*'
            | '&'
            | '\\'
    )
}

fn inline_space(c: char) -> bool {
    c != '\n' && c.is_whitespace() || c == '\u{feff}'
}

impl Parser<'_> {
    fn peek(&self) -> Option<char> {
        self.s.get(self.i).copied()
    }
    fn at(&self, text: &str) -> bool {
        (self.i..)
            .zip(text.chars())
            .all(|(j, c)| self.s.get(j) == Some(&c))
    }
    fn bump(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.i += 1;
        if c == '\n' {
            self.line += 1;
        }
        Some(c)
    }
    fn at_comment(&self) -> bool {
        self.peek() == Some('#') || self.at("//")
    }
    fn skip_comment(&mut self) {
        while let Some(c) = self.peek() {
            if c == '\n' {
                break;
            }
            self.i += 1;
        }
    }
    /// Spaces and comments on this line; returns the spaces' text.
    fn skip_inline(&mut self) -> String {
        let mut ws = String::new();
        loop {
            match self.peek() {
                Some(c) if inline_space(c) => {
                    ws.push(c);
                    self.i += 1;
                }
                _ if self.at_comment() => self.skip_comment(),
                _ => return ws,
            }
        }
    }
    /// Spaces, comments and newlines; true if a newline was crossed.
    fn skip_all(&mut self) -> bool {
        let mut nl = false;
        loop {
            self.skip_inline();
            if self.peek() == Some('\n') {
                self.bump();
                nl = true;
            } else {
                return nl;
            }
        }
    }

    /// A description of the next token, in ruby-hocon's words.
    fn token_name(&self) -> String {
        match self.peek() {
            None => "end of file".into(),
            Some('\n') => "newline".into(),
            Some(c) => format!("'{c}'"),
        }
    }

    /// Queues a tokenizer problem and fails with its wording where a value was expected
    /// (the contexts that word it otherwise take it back from `self.problem`).
    fn problem<T>(&mut self, what: &str, message: &str, line: usize) -> Result<T, String> {
        let p = Problem {
            what: what.to_string(),
            message: message.to_string(),
            line,
        };
        let t = p.token();
        self.problem = Some(p);
        err(
            line,
            quote_suggestion(&t, format!("Expecting a value but got wrong token: {t}")),
        )
    }

    /// A pending problem (met after a value) where a separator or the end was expected.
    fn pending_after_value(&mut self, in_list: bool) -> Result<(), String> {
        let Some(p) = self.pending.take() else {
            return Ok(());
        };
        let t = p.token();
        if in_list {
            return err(
                p.line,
                format!("List should have ended with ] or had a comma, instead had token: {t} (if you want {t} to be part of a string value, then double-quote it)"),
            );
        }
        err(
            p.line,
            quote_suggestion(&t, format!("Expecting close brace }} or a comma, got {t}")),
        )
    }

    fn parse_root(&mut self) -> Result<IndexMap<String, Node>, String> {
        self.skip_all();
        match self.peek() {
            None => Ok(IndexMap::default()),
            Some('[') => err(self.line, " has type LIST rather than object at file root"),
            Some('{') => {
                self.bump();
                let obj = self.parse_fields(true, &[])?;
                self.skip_all();
                if self.peek().is_some() {
                    return err(
                        self.line,
                        format!(
                            "Document has trailing tokens after first object or array: {}",
                            self.token_name()
                        ),
                    );
                }
                Ok(obj)
            }
            Some(_) => self.parse_fields(false, &[]),
        }
    }

    /// Fields up to the closing brace (consumed) or the end of the text.
    fn parse_fields(
        &mut self,
        braces: bool,
        prefix: &[String],
    ) -> Result<IndexMap<String, Node>, String> {
        let mut obj = IndexMap::default();
        loop {
            self.skip_all();
            match self.peek() {
                None if braces && self.after_separator => {
                    return err(
                        self.line,
                        "expecting a close brace or a field name here, got end of file",
                    )
                }
                None if braces => return err(self.line, "Expecting close brace } or a comma, got end of file"),
                None => return Ok(obj),
                Some('}') if braces => {
                    self.bump();
                    return Ok(obj);
                }
                Some('}') => return err(
                    self.line,
                    "unbalanced close brace '}' with no open brace (if you intended '}' to be part of a key or string value, try enclosing the key or value in double quotes",
                ),
                _ => {}
            }
            // `include` as a whole token opens an include (`include.x` is a key path).
            let include_kw = self.at("include")
                && self
                    .s
                    .get(self.i + "include".len())
                    .is_none_or(|&c| c.is_whitespace() || forbidden(c));
            if include_kw {
                self.i += "include".len();
                self.skip_all();
                let not_quoted = |what: String| {
                    format!("include keyword is not followed by a quoted string, but by: {what}")
                };
                match self.peek() {
                    None => return err(self.line, not_quoted("end of file".into())),
                    Some('"') => {
                        // Never found when Puppet parses a string (see the module comment).
                        self.parse_value(prefix)?;
                        self.end_of_field(braces)?;
                        continue;
                    }
                    Some(c) if forbidden(c) => return err(self.line, not_quoted(format!("'{c}'"))),
                    Some(_) => {}
                }
                let word: String = self.s[self.i..]
                    .iter()
                    .take_while(|&&c| !c.is_whitespace() && !forbidden(c))
                    .collect();
                if matches!(word.as_str(), "file(" | "classpath(" | "url(") {
                    self.i += word.chars().count();
                    if self.peek() == Some('"') {
                        let mut name = String::new();
                        self.bump();
                        while let Some(c) = self.bump() {
                            match c {
                                '\\' => {
                                    if let Some(e) = self.bump() {
                                        name.push(e);
                                    }
                                }
                                '"' => break,
                                c => name.push(c),
                            }
                        }
                        if self.peek() == Some(')') {
                            self.bump();
                            match word.as_str() {
                                    "file(" => {
                                        for (k, v) in self.include_file(&name)? {
                                            let path = [k];
                                            insert_path(&mut obj, &path, v, &path);
                                        }
                                    }
                                    // ruby-hocon 1.3 cannot include URLs: http(s) ones reach
                                    // a method SimpleIncluder lacks, others are refused.
                                    "url(" if name.starts_with("http:") || name.starts_with("https:") => {
                                        return Err(format!("{RAW}undefined method `include_url' for an instance of Hocon::Impl::SimpleIncluder"))
                                    }
                                    "url(" => {
                                        return err(
                                            self.line,
                                            format!("include url() specifies an invalid URL: {name}"),
                                        )
                                    }
                                    // ruby-hocon's SimpleIncluder lacks include_resources: Ruby's
                                    // NoMethodError escapes the parser.
                                    _ => return Err(format!("{RAW}undefined method `include_resources' for an instance of Hocon::Impl::SimpleIncluder")),
                                }
                            self.end_of_field(braces)?;
                            continue;
                        }
                    }
                    return err(self.line, "expecting a close parentheses ')' here, not: ");
                }
                if word.ends_with('(') {
                    return err(
                            self.line,
                            format!("expecting include parameter to be quoted filename, file(), classpath(), or url(). No spaces are allowed before the open paren. Not expecting: '{word}'"),
                        );
                }
                let what = match word.as_str() {
                    "true" | "false" => Some(format!("'{word}' (BOOLEAN)")),
                    "null" => Some("'' (NULL)".to_string()),
                    w if number(w).is_some() => Some(format!("'{word}' (NUMBER)")),
                    _ => None,
                };
                return match what {
                    Some(w) => err(self.line, not_quoted(w)),
                    None => err(
                        self.line,
                        format!("expecting include parameter to be quoted filename, file(), classpath(), or url(). No spaces are allowed before the open paren. Not expecting: '{word}'"),
                    ),
                };
            }
            let line = self.line;
            let key = self.parse_key()?;
            self.skip_inline();
            let mut path = prefix.to_vec();
            path.extend(key.iter().cloned());
            if let Some(fields) = self.fields.as_mut() {
                for (n, &start) in self.key_starts.iter().enumerate() {
                    fields.push((path[..prefix.len() + n + 1].to_vec(), start));
                }
            }
            // Each segment of a path key is one more object level.
            if path.len() > MAX_DEPTH {
                return err(line, "Objects and arrays nest too deeply");
            }
            let value = match self.peek() {
                Some(':') | Some('=') => {
                    self.bump();
                    self.skip_all_before_value();
                    self.parse_value(&path)?
                }
                Some('+') if self.at("+=") => {
                    self.i += 2;
                    self.skip_all_before_value();
                    let v = self.parse_value(&path)?;
                    Node::Concat(
                        vec![
                            Node::Subst {
                                path: path.clone(),
                                optional: true,
                                line,
                            },
                            Node::Arr(vec![v]),
                        ],
                        line,
                    )
                }
                Some('{') => self.parse_value(&path)?,
                _ => {
                    // ruby-hocon reads the next token past spaces, newlines and comments.
                    self.skip_all();
                    let t = self.token_name();
                    let message =
                        format!("Key '{}' may not be followed by token: {t}", key.join("."));
                    return err(self.line, quote_suggestion(&t, message));
                }
            };
            insert_path(&mut obj, &key, value, &path);
            self.end_of_field(braces)?;
        }
    }

    /// After a `:`/`=`, the value may start on a later line (ruby-hocon skips newlines).
    fn skip_all_before_value(&mut self) {
        self.skip_all();
    }

    /// A field ends at a comma, a newline, the closing brace or the end.
    fn end_of_field(&mut self, braces: bool) -> Result<(), String> {
        self.pending_after_value(false)?;
        let nl = self.skip_all();
        self.after_separator = nl;
        match self.peek() {
            Some(',') => {
                self.bump();
                self.after_separator = true;
                Ok(())
            }
            Some('}') if braces => Ok(()),
            None => Ok(()),
            _ if nl => Ok(()),
            Some('}') => err(
                self.line,
                "unbalanced close brace '}' with no open brace (if you intended '}' to be part of a key or string value, try enclosing the key or value in double quotes",
            ),
            Some(_) => err(
                self.line,
                format!(
                    "Expecting close brace }} or a comma, got {} (if you intended {} to be part of a key or string value, try enclosing the key or value in double quotes",
                    self.token_name(),
                    self.token_name()
                ),
            ),
        }
    }

    /// A path expression: unquoted segments split at dots, quoted segments whole.
    fn parse_key(&mut self) -> Result<Vec<String>, String> {
        let mut segs: Vec<String> = vec![String::new()];
        self.key_starts.clear();
        self.key_starts.push(self.i);
        let mut any = false;
        loop {
            match self.peek() {
                Some('"') => {
                    let first = !any && segs.len() == 1;
                    let s = match self.parse_quoted() {
                        Ok(s) => s,
                        Err(e) => {
                            return match self.problem.take() {
                                Some(p) if first => err(
                                    p.line,
                                    format!(
                                        "expecting a close brace or a field name here, got {}",
                                        p.token()
                                    ),
                                ),
                                _ => Err(e),
                            }
                        }
                    };
                    if let Some(last) = segs.last_mut() {
                        last.push_str(&s);
                    }
                    any = true;
                }
                Some('.') => {
                    self.bump();
                    segs.push(String::new());
                    self.key_starts.push(self.i);
                }
                Some(c) if inline_space(c) => {
                    // Spaces inside a key belong to it; trailing ones do not.
                    let save = (self.i, self.line);
                    let ws = self.skip_inline();
                    match self.peek() {
                        Some(':') | Some('=') | Some('{') | Some('\n') | None => break,
                        Some('+') if self.at("+=") => break,
                        _ => {
                            (self.i, self.line) = save;
                            self.i += ws.chars().count();
                            if let Some(last) = segs.last_mut() {
                                last.push_str(&ws);
                            }
                        }
                    }
                }
                Some(c) if !forbidden(c) && c != '\n' && !self.at_comment() => {
                    if let Some(last) = segs.last_mut() {
                        last.push(c);
                    }
                    self.bump();
                    any = true;
                }
                _ => break,
            }
        }
        if !any {
            let t = self.token_name();
            return err(
                self.line,
                quote_suggestion(&t, format!("Expecting a value but got wrong token: {t}")),
            );
        }
        Ok(segs)
    }

    fn parse_quoted(&mut self) -> Result<String, String> {
        if self.at("\"\"\"") {
            self.i += 3;
            let mut s = String::new();
            loop {
                if self.at("\"\"\"") {
                    // Extra quotes before the closing three belong to the string.
                    while self.at("\"\"\"\"") {
                        s.push('"');
                        self.i += 1;
                    }
                    self.i += 3;
                    return Ok(s);
                }
                match self.bump() {
                    Some(c) => s.push(c),
                    None => {
                        let line = self.line;
                        return self.problem(
                            "-1",
                            "End of input but triple-quoted string was still open",
                            line,
                        );
                    }
                }
            }
        }
        self.bump();
        let mut s = String::new();
        loop {
            match self.bump() {
                Some('"') => return Ok(s),
                Some('\\') => {
                    let c = self.bump();
                    match c {
                        Some('"') => s.push('"'),
                        Some('\\') => s.push('\\'),
                        Some('/') => s.push('/'),
                        Some('b') => s.push('\u{8}'),
                        Some('f') => s.push('\u{c}'),
                        Some('n') => s.push('\n'),
                        Some('r') => s.push('\r'),
                        Some('t') => s.push('\t'),
                        Some('u') => {
                            let hex: String = (0..4).filter_map(|_| self.bump()).collect();
                            match u32::from_str_radix(&hex, 16).ok().and_then(char::from_u32) {
                                Some(ch) => s.push(ch),
                                None => {
                                    return err(
                                        self.line,
                                        format!("Malformed hex value after \\u: '{hex}'"),
                                    )
                                }
                            }
                        }
                        other => {
                            return err(
                                self.line,
                                format!(
                                    "backslash followed by '{}', this is not a valid escape sequence (quoted strings use JSON escaping, so use double-backslash \\\\ for literal backslash)",
                                    other.map(String::from).unwrap_or_default()
                                ),
                            )
                        }
                    }
                }
                // Ruby's /[[:cntrl:]]/: the Cc characters (the newline's line is the string's).
                Some(c) if c.is_control() => {
                    let line = if c == '\n' { self.line - 1 } else { self.line };
                    let message = format!(
                        "JSON does not allow unescaped {c} in quoted strings, use a backslash escape"
                    );
                    return self.problem(&c.to_string(), &message, line);
                }
                Some(c) => s.push(c),
                None => {
                    let line = self.line;
                    return self.problem(
                        "-1",
                        "End of input but string quote was still open",
                        line,
                    );
                }
            }
        }
    }

    /// A value: one piece, or a concatenation of pieces on one line.
    fn parse_value(&mut self, path: &[String]) -> Result<Node, String> {
        let line = self.line;
        let mut pieces: Vec<Node> = Vec::new();
        // Whether the last piece was unquoted text (a lone one is typed: 1, true, null).
        let mut unquoted_last = false;
        let mut pending_space = String::new();
        loop {
            let mut unquoted = false;
            if matches!(self.peek(), Some('{' | '[')) {
                if self.depth >= MAX_DEPTH {
                    return err(self.line, "Objects and arrays nest too deeply");
                }
                self.depth += 1;
            }
            let piece = match self.peek() {
                Some('{') => {
                    self.bump();
                    let o = self.parse_fields(true, path)?;
                    self.depth -= 1;
                    Node::Obj(o)
                }
                Some('[') => {
                    self.bump();
                    let a = self.parse_array(path)?;
                    self.depth -= 1;
                    a
                }
                Some('"') => self.quoted_piece(pieces.is_empty())?,
                Some('$') if self.at("${") => self.subst_piece(pieces.is_empty())?,
                Some(c) if !forbidden(c) && c != '\n' && !inline_space(c) && !self.at_comment() => {
                    let mut t = String::new();
                    while let Some(c) = self.peek() {
                        if forbidden(c) || c == '\n' || inline_space(c) || self.at("//") {
                            break;
                        }
                        t.push(c);
                        self.i += 1;
                    }
                    if let Some(e) = infinite_number(&t) {
                        return Err(e);
                    }
                    unquoted = true;
                    Node::Scalar(Value::String(t.clone()), t)
                }
                _ => break,
            };
            if self.pending.is_some() {
                break;
            }
            unquoted_last = unquoted;
            if !pieces.is_empty() && !pending_space.is_empty() {
                pieces.push(Node::Space(std::mem::take(&mut pending_space)));
            }
            pieces.push(piece);
            pending_space = self.skip_inline();
        }
        // Spaces after the last piece are not part of the value.
        match pieces.len() {
            0 => {
                let t = self.token_name();
                err(
                    self.line,
                    quote_suggestion(&t, format!("Expecting a value but got wrong token: {t}")),
                )
            }
            1 => Ok(match pieces.pop() {
                Some(Node::Scalar(Value::String(_), t)) if unquoted_last => typed(t),
                Some(p) => p,
                None => Node::Scalar(Value::Null, String::new()),
            }),
            _ => Ok(Node::Concat(pieces, line)),
        }
    }

    /// A quoted string in a value (its own frame: `parse_value` recurses through arrays and
    /// objects, so its frame stays small).
    fn quoted_piece(&mut self, first: bool) -> Result<Node, String> {
        match self.parse_quoted() {
            Ok(s) => Ok(Node::Scalar(Value::String(s.clone()), s)),
            Err(e) => self.piece_failed(e, first),
        }
    }

    /// A substitution in a value.
    fn subst_piece(&mut self, first: bool) -> Result<Node, String> {
        match self.parse_subst() {
            Ok(n) => Ok(n),
            Err(e) => self.piece_failed(e, first),
        }
    }

    /// A piece of a value failed: a tokenizer problem after the first piece ends the value
    /// (it is reported by whatever reads on, see `pending`); any other error stands. On a
    /// pending problem the returned node is a placeholder the caller drops.
    fn piece_failed(&mut self, e: String, first: bool) -> Result<Node, String> {
        match self.problem.take() {
            Some(p) if !first => {
                self.pending = Some(p);
                Ok(Node::Missing)
            }
            p => {
                self.problem = p;
                Err(e)
            }
        }
    }

    /// A list element failed to start on a tokenizer problem: ruby-hocon's wording for it
    /// (`after_comma`: the element follows a comma, else it is the first).
    fn element_failed(&mut self, e: String, after_comma: bool) -> String {
        let Some(p) = self.problem.take() else {
            return e;
        };
        let t = p.token();
        let m = if after_comma {
            format!("List should have had new element after a comma, instead had token: {t} (if you want the comma or {t} to be part of a string value, then double-quote it)")
        } else {
            format!("List should have ] or a first element after the open [, instead had token: {t} (if you want {t} to be part of a string value, then double-quote it)")
        };
        format!("String: {}: {m}", p.line)
    }

    fn parse_array(&mut self, path: &[String]) -> Result<Node, String> {
        let mut items = Vec::new();
        let mut after_comma = false;
        loop {
            self.skip_all();
            if self.peek() == Some(']') {
                self.bump();
                return Ok(Node::Arr(items));
            }
            if self.peek().is_none() {
                return err(
                    self.line,
                    "List should have ended with ] or had a comma, instead had token: end of file (if you want end of file to be part of a string value, then double-quote it)",
                );
            }
            match self.parse_value(path) {
                Ok(v) => items.push(v),
                Err(e) => return Err(self.element_failed(e, after_comma)),
            }
            self.pending_after_value(true)?;
            let nl = self.skip_all();
            after_comma = true;
            match self.peek() {
                Some(',') => {
                    self.bump();
                    self.skip_all();
                    if self.peek().is_none() {
                        return err(
                            self.line,
                            "List should have had new element after a comma, instead had token: end of file (if you want the comma or end of file to be part of a string value, then double-quote it)",
                        );
                    }
                }
                Some(']') => {}
                // A newline separates like a comma: the end of the file after it is a missing
                // element.
                None if nl => {
                    return err(
                        self.line,
                        "List should have had new element after a comma, instead had token: end of file (if you want the comma or end of file to be part of a string value, then double-quote it)",
                    );
                }
                _ if nl => {}
                _ => {
                    let t = self.token_name();
                    return err(
                        self.line,
                        format!("List should have ended with ] or had a comma, instead had token: {t} (if you want {t} to be part of a string value, then double-quote it)"),
                    );
                }
            }
        }
    }

    fn parse_subst(&mut self) -> Result<Node, String> {
        let line = self.line;
        self.i += 2;
        let optional = self.peek() == Some('?');
        if optional {
            self.i += 1;
        }
        let mut inner = String::new();
        let mut quoted_parts: Vec<(String, bool)> = Vec::new();
        loop {
            match self.peek() {
                Some('}') => {
                    self.i += 1;
                    break;
                }
                Some('"') => {
                    if !inner.is_empty() {
                        quoted_parts.push((std::mem::take(&mut inner), false));
                    }
                    let q = self.parse_quoted()?;
                    quoted_parts.push((q, true));
                }
                // The tokenizer reads on across lines: an unclosed `${` is a problem token at
                // the end of the file, a newline inside a closed one a bad path token.
                Some('\n') | None => {
                    while let Some(c) = self.bump() {
                        if c == '}' {
                            return err(self.line, "Token not allowed in path expression: NEWLINE (you can double-quote this token if you really want it here)");
                        }
                    }
                    let line = self.line;
                    return self.problem(
                        "end of file",
                        "Substitution ${ was not closed with a }",
                        line,
                    );
                }
                Some(c) => {
                    inner.push(c);
                    self.i += 1;
                }
            }
        }
        if !inner.is_empty() {
            quoted_parts.push((inner, false));
        }
        let mut path: Vec<String> = vec![String::new()];
        for (text, quoted) in quoted_parts {
            if quoted {
                if let Some(l) = path.last_mut() {
                    l.push_str(&text);
                }
                continue;
            }
            for (n, seg) in text.trim().split('.').enumerate() {
                if n > 0 {
                    path.push(String::new());
                }
                if let Some(l) = path.last_mut() {
                    l.push_str(seg);
                }
            }
        }
        if path.iter().all(|s| s.is_empty()) {
            return err(line, "Substitution ${} is empty");
        }
        Ok(Node::Subst {
            path,
            optional,
            line,
        })
    }
}

/// An unquoted piece on its own: true/false/null, a number, or a string.
fn typed(t: String) -> Node {
    let v = match t.as_str() {
        "true" => Value::Bool(true),
        "false" => Value::Bool(false),
        "null" => Value::Null,
        _ => number(&t).unwrap_or_else(|| Value::String(t.clone())),
    };
    Node::Scalar(v, t)
}

/// ruby-hocon's numbers (its tokenizer's `pull_number`): a token that starts with `-` or a
/// digit and holds only number characters is Ruby's `Float()` when it has a `.`, `e` or `E`,
/// and `Integer()` (a leading zero means octal) otherwise; text neither reads is a string.
/// `ConfigNumber.new_number` makes an integral value an Integer, of any size.
fn number(t: &str) -> Option<Value> {
    if !t.starts_with(|c: char| c == '-' || c.is_ascii_digit()) || !t.chars().all(number_char) {
        return None;
    }
    if !t.contains(['.', 'e', 'E']) {
        return hiera_value::ruby::integer(t, None);
    }
    let f = hiera_value::ruby::float(t).ok().filter(|f| f.is_finite())?;
    Some(if f.fract() == 0.0 {
        hiera_value::value::integer_from_f64(f)
    } else {
        Value::Float(f)
    })
}

/// ruby-hocon's NUMBER_CHARS.
fn number_char(c: char) -> bool {
    matches!(c, '0'..='9' | 'e' | 'E' | '+' | '-' | '.')
}

/// The error ruby-hocon raises for an unquoted piece that starts with a number too large for
/// a Float: its tokenizer reads the number characters first, and `new_number`'s `to_i` of
/// Infinity raises FloatDomainError.
fn infinite_number(piece: &str) -> Option<String> {
    if !piece.starts_with(|c: char| c == '-' || c.is_ascii_digit()) {
        return None;
    }
    let end = piece.find(|c: char| !number_char(c)).unwrap_or(piece.len());
    let token = &piece[..end];
    let f = hiera_value::ruby::float(token).ok()?;
    (token.contains(['.', 'e', 'E']) && f.is_infinite())
        .then(|| format!("{RAW}{}", if f < 0.0 { "-Infinity" } else { "Infinity" }))
}

/// Sets `key` (a path) in `obj` as ruby-hocon does for a field: a self-reference in the new
/// value sees the old value; objects merge with the new keys first; others replace.
fn insert_path(obj: &mut IndexMap<String, Node>, key: &[String], value: Node, full: &[String]) {
    let Some((first, rest)) = key.split_first() else {
        return;
    };
    let value = if rest.is_empty() {
        value
    } else {
        let mut inner = IndexMap::default();
        insert_path(&mut inner, rest, value, full);
        Node::Obj(inner)
    };
    let old = obj.get(first).cloned();
    let value = if rest.is_empty() {
        replace_self_refs(value, full, old.as_ref())
    } else {
        value
    };
    let merged = match (value, old) {
        (Node::Obj(new), Some(Node::Obj(old))) => Node::Obj(merge(new, old)),
        (new @ Node::Subst { optional: true, .. }, Some(old)) if rest.is_empty() => {
            Node::OrElse(Box::new(new), Box::new(old))
        }
        (new, _) => new,
    };
    obj.insert(first.clone(), merged);
}

/// `new` over `old`: the new object's keys first, then the old ones it does not have;
/// objects under the same key merge the same way.
fn merge(new: IndexMap<String, Node>, mut old: IndexMap<String, Node>) -> IndexMap<String, Node> {
    let mut out = IndexMap::with_capacity_and_hasher(new.len() + old.len(), Default::default());
    for (k, v) in new {
        let v = match (v, old.shift_remove(&k)) {
            (Node::Obj(n), Some(Node::Obj(o))) => Node::Obj(merge(n, o)),
            (n, _) => n,
        };
        out.insert(k, v);
    }
    for (k, v) in old {
        out.insert(k, v);
    }
    out
}

/// Substitutions of the field's own path take the previous value (or vanish when optional
/// and there is none).
fn replace_self_refs(node: Node, path: &[String], old: Option<&Node>) -> Node {
    match node {
        Node::Subst {
            path: p,
            optional,
            line,
        } if p == path => match old {
            Some(o) => o.clone(),
            None if optional => Node::Missing,
            None => Node::Subst {
                path: p,
                optional,
                line,
            },
        },
        Node::Concat(pieces, line) => Node::Concat(
            pieces
                .into_iter()
                .map(|n| replace_self_refs(n, path, old))
                .collect(),
            line,
        ),
        other => other,
    }
}

struct Resolver<'a> {
    root: &'a IndexMap<String, Node>,
    /// Substitutions being resolved, with the line each was written on.
    visiting: Vec<(Vec<String>, usize)>,
    /// Values resolved so far (a string counts one per 32 bytes), against [`MAX_RESOLVED`].
    work: usize,
    /// Objects and arrays the value being built nests in, substitutions followed (`x1 =
    /// {a: ${x0}}`, `x2 = {a: ${x1}}` …): bounded like the file's own nesting, so that no
    /// chain of substitutions can exhaust the stack.
    depth: usize,
}

/// Most values that resolving one document may produce: substitutions are copies, and
/// `x2 = ${x1} ${x1}` doubling forty times would be a terabyte.
const MAX_RESOLVED: usize = hiera_value::limits::MAX_HOCON_VALUES;

/// How much resolving the document would build, each substitution's target sized once:
/// values, and string bytes (a string counts one value per 32 bytes, as in [`Resolver`]).
/// An overestimate (every scalar's text counts as string bytes), never an under-estimate
/// for documents without cycles (those are reported by the resolver).
struct Sizer<'a> {
    root: &'a IndexMap<String, Node>,
    memo: HashMap<&'a [String], (usize, usize)>,
    visiting: Vec<&'a [String]>,
    /// Objects and arrays the value being sized nests in (substitutions followed): past
    /// [`MAX_DEPTH`] the resolver stops with an error, so sizing stops there too.
    depth: usize,
}

impl<'a> Sizer<'a> {
    fn check(&mut self) -> Result<(), String> {
        let mut total = 0usize;
        for node in self.root.values() {
            let (values, bytes) = self.size(node);
            total = total.saturating_add(values).saturating_add(bytes / 32);
            if total > MAX_RESOLVED {
                return err(
                    node_line(node),
                    format!(
                        "Substitutions make the document too large (more than {MAX_RESOLVED} values)"
                    ),
                );
            }
        }
        Ok(())
    }

    fn size(&mut self, node: &'a Node) -> (usize, usize) {
        let add = |a: (usize, usize), b: (usize, usize)| {
            (a.0.saturating_add(b.0), a.1.saturating_add(b.1))
        };
        match node {
            Node::Scalar(_, text) => (1, text.len()),
            Node::Space(s) => (1, s.len()),
            Node::Missing => (0, 0),
            Node::Obj(_) | Node::Arr(_) if self.depth >= MAX_DEPTH => (1, 0),
            Node::Obj(o) => {
                self.depth += 1;
                let s = o.values().fold((1, 0), |acc, v| add(acc, self.size(v)));
                self.depth -= 1;
                s
            }
            Node::Arr(a) => {
                self.depth += 1;
                let s = a.iter().fold((1, 0), |acc, v| add(acc, self.size(v)));
                self.depth -= 1;
                s
            }
            Node::Concat(pieces, _) => pieces.iter().fold((1, 0), |acc, v| add(acc, self.size(v))),
            Node::OrElse(first, earlier) => {
                let (a, b) = (self.size(first), self.size(earlier));
                (a.0.max(b.0), a.1.max(b.1))
            }
            Node::Subst { path, .. } => {
                let path = path.as_slice();
                if let Some(&s) = self.memo.get(path) {
                    return s;
                }
                // A cycle, or nesting the resolver refuses: it reports them.
                if self.visiting.contains(&path) || self.visiting.len() >= MAX_DEPTH {
                    return (1, 0);
                }
                let s = match subst_target(self.root, path) {
                    Some(t) => {
                        self.visiting.push(path);
                        let s = self.size(t);
                        self.visiting.pop();
                        s
                    }
                    None => (1, std::env::var(path.join(".")).map_or(0, |v| v.len())),
                };
                self.memo.insert(path, s);
                s
            }
        }
    }
}

/// The node a substitution's path names in the document, if any.
fn subst_target<'a>(root: &'a IndexMap<String, Node>, path: &[String]) -> Option<&'a Node> {
    let mut cur = root;
    for (n, seg) in path.iter().enumerate() {
        match cur.get(seg) {
            Some(Node::Obj(o)) if n + 1 < path.len() => cur = o,
            Some(v) if n + 1 == path.len() => return Some(v),
            _ => return None,
        }
    }
    None
}

impl Resolver<'_> {
    /// The value of `node`; `None` for an optional substitution that found nothing.
    fn resolve(&mut self, node: &Node) -> Result<Option<Value>, String> {
        self.spend(node_line(node), 1)?;
        if matches!(node, Node::Obj(_) | Node::Arr(_)) {
            if self.depth >= MAX_DEPTH {
                let line = self.visiting.last().map_or(1, |(_, l)| *l);
                return err(line, "Objects and arrays nest too deeply");
            }
            self.depth += 1;
            let v = self.resolve_inner(node);
            self.depth -= 1;
            return v;
        }
        self.resolve_inner(node)
    }

    fn resolve_inner(&mut self, node: &Node) -> Result<Option<Value>, String> {
        Ok(Some(match node {
            Node::Scalar(v, _) => v.clone(),
            Node::Space(s) => Value::String(s.clone()),
            Node::Obj(o) => {
                let mut m = Map::with_capacity_and_hasher(o.len(), Default::default());
                for (k, v) in o {
                    if let Some(v) = self.resolve(v)? {
                        m.insert(Value::String(k.clone()), v);
                    }
                }
                Value::Hash(m)
            }
            Node::Arr(a) => {
                let mut out = Vec::with_capacity(a.len());
                for v in a {
                    if let Some(v) = self.resolve(v)? {
                        out.push(v);
                    }
                }
                Value::Array(out)
            }
            Node::Subst {
                path,
                optional,
                line,
            } => return self.substitute(path, *optional, *line),
            Node::Concat(pieces, line) => return self.concat(pieces, *line),
            Node::Missing => return Ok(None),
            Node::OrElse(first, earlier) => {
                return match self.resolve(first)? {
                    Some(v) => Ok(Some(v)),
                    None => self.resolve(earlier),
                }
            }
        }))
    }

    fn substitute(
        &mut self,
        path: &[String],
        optional: bool,
        line: usize,
    ) -> Result<Option<Value>, String> {
        let shown = format!("${{{}{}}}", if optional { "?" } else { "" }, path.join("."));
        if self.visiting.iter().any(|(p, _)| p == path) {
            // ruby-hocon names the substitution that led back into the cycle, at its line.
            let (shown, line) = match self.visiting.last() {
                Some((p, l)) => (format!("${{{}}}", p.join(".")), *l),
                None => (shown, line),
            };
            let mut cycle: Vec<String> = self
                .visiting
                .iter()
                .map(|(p, _)| format!("${{{}}}", p.join(".")))
                .collect();
            cycle.push(format!("${{{}}}", path.join(".")));
            return err(
                line,
                format!(
                    "Could not resolve substitution to a value: {shown} was part of a cycle of substitutions involving {}",
                    cycle.join(", ")
                ),
            );
        }
        if self.visiting.len() >= MAX_DEPTH {
            return err(line, format!("Substitutions nest too deeply at {shown}"));
        }
        match subst_target(self.root, path) {
            Some(t) => {
                self.visiting.push((path.to_vec(), line));
                let r = self.resolve(t);
                self.visiting.pop();
                match r? {
                    None if !optional => err(
                        line,
                        format!("Could not resolve substitution to a value: {shown}"),
                    ),
                    other => Ok(other),
                }
            }
            None => match std::env::var(path.join(".")) {
                Ok(v) => Ok(Some(Value::String(v))),
                Err(_) if optional => Ok(None),
                Err(_) => err(
                    line,
                    format!("Could not resolve substitution to a value: {shown}"),
                ),
            },
        }
    }

    fn concat(&mut self, pieces: &[Node], line: usize) -> Result<Option<Value>, String> {
        let mut vals: Vec<(Option<Value>, &Node)> = Vec::with_capacity(pieces.len());
        for p in pieces {
            vals.push((self.resolve(p)?, p));
        }
        let solid = || {
            vals.iter()
                .filter(|(_, n)| !matches!(n, Node::Space(_)))
                .filter_map(|(v, _)| v.as_ref())
        };
        let any_array = solid().any(|v| matches!(v, Value::Array(_)));
        let any_hash = solid().any(|v| matches!(v, Value::Hash(_)));
        if any_array || any_hash {
            let mut acc: Option<Value> = None;
            for v in solid() {
                acc = Some(match (acc, v) {
                    (None, v) => v.clone(),
                    (Some(Value::Array(mut a)), Value::Array(b)) => {
                        a.extend(b.iter().cloned());
                        Value::Array(a)
                    }
                    (Some(Value::Hash(a)), Value::Hash(b)) => Value::Hash(merge_values(b, a)),
                    (Some(a), b) => {
                        return err(
                            line,
                            format!(
                                "Cannot concatenate object or list with a non-object-or-list, {} and {} are not compatible",
                                describe(&a),
                                describe(b)
                            ),
                        )
                    }
                });
            }
            return Ok(acc);
        }
        let mut s = String::new();
        for (v, n) in &vals {
            match (v, n) {
                (_, Node::Scalar(_, text)) => s.push_str(text),
                // A substituted number keeps its original text (ConfigNumber).
                (Some(Value::Int(_) | Value::BigInt(_) | Value::Float(_)), n)
                    if number_text(self.root, n, 0).is_some() =>
                {
                    s.push_str(number_text(self.root, n, 0).unwrap_or_default())
                }
                (Some(v), _) => s.push_str(&scalar_text(v)),
                (None, _) => {}
            }
        }
        self.spend(line, s.len() / 32)?;
        Ok(Some(Value::String(s)))
    }

    fn spend(&mut self, line: usize, n: usize) -> Result<(), String> {
        self.work = self.work.saturating_add(n);
        if self.work > MAX_RESOLVED {
            return err(
                line,
                format!(
                    "Substitutions make the document too large (more than {MAX_RESOLVED} values)"
                ),
            );
        }
        Ok(())
    }
}

/// The line of a node, where it has one (for the resolution-size error).
fn node_line(node: &Node) -> usize {
    match node {
        Node::Subst { line, .. } | Node::Concat(_, line) => *line,
        _ => 1,
    }
}

/// Hash `new` over `old`, ruby-hocon's key order (new keys first).
fn merge_values(new: &Map, old: Map) -> Map {
    let mut old = old;
    let mut out = Map::with_capacity_and_hasher(new.len() + old.len(), Default::default());
    for (k, v) in new {
        let v = match (v, old.shift_remove(k)) {
            (Value::Hash(n), Some(Value::Hash(o))) => Value::Hash(merge_values(n, o)),
            (n, _) => n.clone(),
        };
        out.insert(k.clone(), v);
    }
    out.extend(old);
    out
}

fn describe(v: &Value) -> String {
    match v {
        Value::Array(_) => format!("SimpleConfigList({})", crate::json::to_serde(v)),
        Value::Hash(_) => format!("SimpleConfigObject({})", crate::json::to_serde(v)),
        Value::String(s) => format!("Quoted(\"{s}\")"),
        other => scalar_text(other),
    }
}

/// The text a substitution of a number was written with, following substitutions.
fn number_text<'a>(root: &'a IndexMap<String, Node>, n: &'a Node, depth: usize) -> Option<&'a str> {
    match n {
        Node::Scalar(Value::Int(_) | Value::BigInt(_) | Value::Float(_), t) => Some(t),
        Node::Subst { path, .. } if depth < 32 => {
            number_text(root, subst_target(root, path)?, depth + 1)
        }
        _ => None,
    }
}

/// A substituted scalar inside a string concatenation.
fn scalar_text(v: &Value) -> String {
    match v {
        Value::Null => "null".into(),
        Value::Bool(b) => b.to_string(),
        Value::Int(i) => i.to_string(),
        Value::BigInt(d) => d.clone(),
        Value::Float(f) => f.to_string(),
        Value::String(s) => s.clone(),
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Includes are read where the caller says (a git revision's files), and from the disk
    /// within the file size limit: a sparse 300 MB include is refused before it is read,
    /// not read whole (and its 300 million characters collected).
    #[test]
    fn includes_are_read_by_the_caller_within_the_size_limit() {
        let read = |p: &std::path::Path| {
            (p.file_name()? == "inc.conf").then(|| Ok(b"k = from-revision".to_vec()))
        };
        let v = parse_hocon_with("include file(\"/nowhere/inc.conf\")\nj = 1", &read).unwrap();
        assert_eq!(
            crate::render::to_json(&v).unwrap(),
            r#"{"k":"from-revision","j":1}"#
        );
        // Not a file for the reader: ignored, as a missing include.
        let v = parse_hocon_with("include file(\"/nowhere/other.conf\")\nj = 1", &read).unwrap();
        assert_eq!(crate::render::to_json(&v).unwrap(), r#"{"j":1}"#);

        let dir = std::env::temp_dir().join(format!("hl-hocon-big-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let big = dir.join("big.conf");
        let f = std::fs::File::create(&big).unwrap();
        f.set_len(300 << 20).unwrap();
        let e = parse_hocon(&format!("include file(\"{}\")", big.display())).unwrap_err();
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(e.contains("big.conf") && e.contains("256 MiB"), "{e}");
    }

    /// Only the size check, on the parsed document (nothing resolved).
    fn sized(text: &str) -> Result<(), String> {
        parse_sized(text, &disk).map(drop)
    }

    #[test]
    fn doubling_is_rejected_before_resolving() {
        let doubling = |first: &str, step: &str| {
            let mut t = format!("x0 = {first}\n");
            for i in 1..=40 {
                t.push_str(
                    &step
                        .replace("P", &format!("x{}", i - 1))
                        .replace("N", &format!("x{i}")),
                );
                t.push('\n');
            }
            t + "k = 1\n"
        };
        for (first, step) in [
            ("ab", "N = ${P} ${P}"),
            ("[1]", "N = [${P}, ${P}]"),
            ("[1]", "N = ${P} ${P}"),
            ("{a: 1}", "N = {a: ${P}, b: ${P}}"),
            ("{a: 1}", "N = ${P} {b: ${P}}"),
            ("ab", "N = [${P}, ${P}, ${P}]"),
        ] {
            let text = doubling(first, step);
            let e = sized(&text).unwrap_err();
            assert!(
                e.contains("Substitutions make the document too large (more than 10000000 values)"),
                "{step}: {e}"
            );
            assert_eq!(parse_hocon(&text).unwrap_err(), e);
        }
        // Shared substitutions within the budget resolve (and are sized once each).
        let text = doubling("ab", "N = ${P} ${P}");
        let small: String = text.lines().take(11).collect::<Vec<_>>().join("\n");
        assert_eq!(sized(&small), Ok(()));
        let v = parse_hocon(&small).unwrap();
        let x10 = v.as_hash().unwrap()[&Value::str("x10")]
            .as_str()
            .unwrap()
            .len();
        assert_eq!(x10, 3 * 1024 - 1);
    }

    #[test]
    fn substitutions_count_towards_nesting() {
        let chain = |links: usize, deep: usize| {
            let mut t = String::from("x0 = 1\n");
            for k in 1..=links {
                t.push_str(&format!(
                    "x{k} = {}${{x{}}}{}\n",
                    "{a: ".repeat(deep),
                    k - 1,
                    " }".repeat(deep)
                ));
            }
            t
        };
        let e = parse_hocon(&chain(100, 100)).unwrap_err();
        assert!(e.ends_with("Objects and arrays nest too deeply"), "{e}");
        // 50 × 10 = 500 levels: within the limit.
        let v = parse_hocon(&chain(50, 10)).unwrap();
        let mut cur = &v.as_hash().unwrap()[&Value::str("x50")];
        let mut depth = 0;
        while let Some(h) = cur.as_hash() {
            cur = &h[&Value::str("a")];
            depth += 1;
        }
        assert_eq!((depth, cur), (500, &Value::Int(1)));
    }

    fn json(text: &str) -> String {
        match parse_hocon(text) {
            Ok(v) => crate::json::to_serde(&v).to_string(),
            Err(e) => format!("ERR {e}"),
        }
    }

    // Expected values: ruby-hocon 1.3.1 `Hocon.parse(text)` rendered with JSON.generate.
    #[test]
    fn values_as_ruby_hocon_unwraps_them() {
        let text = "a = 1\nb : 2.5\nc { d = x }\nc.e = \"q\"\nf = [1, 2, three]\ng = 10 seconds\nh = ${a}\ni = ${c}\nj = \"a\"${a}\"b\"\nk = true\nl = null\nm = yes\nn = 1e3\no = -0\nq = \"\"\"multi\nline\"\"\"\nr = [1] [2]\ns { t = 1 }\ns { u = 2 }\nv = [1]\nv += 2\n\"w.x\" = 1\ny = ${?NOPE_HIERA_LOOKUP}\naa = 0x10\nbb = 1.0\ncc = .5\ndd = 01\n";
        assert_eq!(
            json(text),
            r#"{"a":1,"b":2.5,"c":{"e":"q","d":"x"},"f":[1,2,"three"],"g":"10 seconds","h":1,"i":{"e":"q","d":"x"},"j":"a1b","k":true,"l":null,"m":"yes","n":1000,"o":0,"q":"multi\nline","r":[1,2],"s":{"u":2,"t":1},"v":[1,2],"w.x":1,"aa":"0x10","bb":1,"cc":".5","dd":1}"#
        );
    }

    #[test]
    fn small_documents() {
        let cases = [
            ("{ \"a\" : 1 }", r#"{"a":1}"#),
            ("include \"foo.conf\"\na = 1", r#"{"a":1}"#),
            ("include file(\"inc/x.conf\")\na = 1", r#"{"a":1}"#),
            (
                "include url(\"http://x/y\")\na = 1",
                "ERR \u{0}raw:undefined method `include_url' for an instance of Hocon::Impl::SimpleIncluder",
            ),
            ("a = 1, b = 2,", r#"{"a":1,"b":2}"#),
            ("", "{}"),
            ("# only comment", "{}"),
            ("a = {b = 1} {c = 2}", r#"{"a":{"c":2,"b":1}}"#),
            ("a = 1 x", r#"{"a":"1 x"}"#),
            ("a = x 1", r#"{"a":"x 1"}"#),
            ("a = \"\\u00e9\\n\"", r#"{"a":"é\n"}"#),
            (
                "a.b.c = 1, a.b.d = 2, a = { e = 3 }",
                r#"{"a":{"e":3,"b":{"d":2,"c":1}}}"#,
            ),
            ("a = { x = 1 }, a = 5", r#"{"a":5}"#),
            ("a = 5, a = { x = 1 }", r#"{"a":{"x":1}}"#),
            ("a = 010", r#"{"a":8}"#),
            ("a = 08", r#"{"a":"08"}"#),
            ("a = 1.5.3", r#"{"a":"1.5.3"}"#),
            ("a = -", r#"{"a":"-"}"#),
            ("a b = 1", r#"{"a b":1}"#),
            ("a = [1, 2,]", r#"{"a":[1,2]}"#),
            ("a = [\n  1\n  2\n]", r#"{"a":[1,2]}"#),
            ("a = \"x\" ${?nope} \"y\"", r#"{"a":"x  y"}"#),
            ("a = ${?nope}", "{}"),
            ("a = [1] ${?nope}", r#"{"a":[1]}"#),
            ("a = 1\nb = ${a} ${a}", r#"{"a":1,"b":"1 1"}"#),
            ("\"a\" { b = 1 }\na.c = 2", r#"{"a":{"c":2,"b":1}}"#),
            ("a = 1 // comment\nb = 2 # c", r#"{"a":1,"b":2}"#),
            ("a = {\n  b = 1,\n}", r#"{"a":{"b":1}}"#),
            ("a = 1\na = ${a}\" more\"", r#"{"a":"1 more"}"#),
            (
                "x = { y = 1 }\nx = ${x} { z = 2 }",
                r#"{"x":{"z":2,"y":1}}"#,
            ),
            ("a = tr ue", r#"{"a":"tr ue"}"#),
            ("a = 1.50", r#"{"a":1.5}"#),
            ("a = 2.0e0", r#"{"a":2}"#),
            ("a = null x", r#"{"a":"null x"}"#),
            ("a = 12abc", r#"{"a":"12abc"}"#),
        ];
        for (text, want) in cases {
            assert_eq!(json(text), want, "{text}");
        }
    }

    #[test]
    fn errors_in_ruby_hocon_words() {
        let cases = [
            ("a = ", "String: 1: Expecting a value but got wrong token: end of file"),
            ("a = ${nope}", "String: 1: Could not resolve substitution to a value: ${nope}"),
            ("a = [1,", "String: 1: List should have had new element after a comma, instead had token: end of file (if you want the comma or end of file to be part of a string value, then double-quote it)"),
            ("a { b = 1 ", "String: 1: Expecting close brace } or a comma, got end of file"),
            ("[1, 2]", "String: 1:  has type LIST rather than object at file root"),
            ("a : b : c", "String: 1: Expecting close brace } or a comma, got ':' (if you intended ':' to be part of a key or string value, try enclosing the key or value in double quotes"),
            ("a = ${b}, b = ${a}", "String: 1: Could not resolve substitution to a value: ${a} was part of a cycle of substitutions involving ${b}, ${a}, ${b}"),
            ("a = ${b}\nb = ${a}\n", "String: 2: Could not resolve substitution to a value: ${a} was part of a cycle of substitutions involving ${b}, ${a}, ${b}"),
            ("a = [1,\n", "String: 2: List should have had new element after a comma, instead had token: end of file (if you want the comma or end of file to be part of a string value, then double-quote it)"),
            ("a = 1\n}\n", "String: 2: unbalanced close brace '}' with no open brace (if you intended '}' to be part of a key or string value, try enclosing the key or value in double quotes"),
            ("a = 1 ]", "String: 1: Expecting close brace } or a comma, got ']' (if you intended ']' to be part of a key or string value, try enclosing the key or value in double quotes"),
            ("a = {x = 1} [2]", "String: 1: Cannot concatenate object or list with a non-object-or-list, SimpleConfigObject({\"x\":1}) and SimpleConfigList([2]) are not compatible"),
            (&format!("a = {}", "[".repeat(100_000)), "String: 1: Objects and arrays nest too deeply"),
            ("a = \"x\" [1]", "String: 1: Cannot concatenate object or list with a non-object-or-list, Quoted(\"x\") and SimpleConfigList([1]) are not compatible"),
        ];
        for (text, want) in cases {
            assert_eq!(json(text), format!("ERR {want}"), "{text}");
        }
    }
    /// Lexical mistakes become ruby-hocon problem tokens, worded by where the parser meets
    /// them (each recorded from `Hocon.parse` in ruby-hocon 1.3.1).
    #[test]
    fn problem_tokens_in_ruby_hocon_words() {
        let nl =
            "'\n' (JSON does not allow unescaped \n in quoted strings, use a backslash escape)";
        let subst = "'end of file' (Substitution ${ was not closed with a })";
        let hint = |t: &str| {
            format!("(if you intended {t} to be part of a key or string value, try enclosing the key or value in double quotes")
        };
        let cases = [
            ("a = 1\njustakey\n", "String: 3: Key 'justakey' may not be followed by token: end of file".to_string()),
            ("justakey # c\n\n", "String: 3: Key 'justakey' may not be followed by token: end of file".to_string()),
            ("a b\n", "String: 2: Key 'a b' may not be followed by token: end of file".to_string()),
            ("a = ${b\n", format!("String: 2: Expecting a value but got wrong token: {subst} {}", hint(subst))),
            ("a = ${b", format!("String: 1: Expecting a value but got wrong token: {subst} {}", hint(subst))),
            ("a = x ${b\n\n", format!("String: 3: Expecting close brace }} or a comma, got {subst} {}", hint(subst))),
            ("a = [1, ${b\n", format!("String: 2: List should have had new element after a comma, instead had token: {subst} (if you want the comma or {subst} to be part of a string value, then double-quote it)")),
            ("a = [${b\n", format!("String: 2: List should have ] or a first element after the open [, instead had token: {subst} (if you want {subst} to be part of a string value, then double-quote it)")),
            ("a = ${b\n}\n", "String: 2: Token not allowed in path expression: NEWLINE (you can double-quote this token if you really want it here)".to_string()),
            ("a = 1\nb = \"unterminated\nc = 3\n", format!("String: 2: Expecting a value but got wrong token: {nl} {}", hint(nl))),
            ("\"ab\ncd\" = 1\n", format!("String: 1: expecting a close brace or a field name here, got {nl}")),
            ("a = x \"un\n", format!("String: 1: Expecting close brace }} or a comma, got {nl} {}", hint(nl))),
            ("a = [1 \"x\ny\"]\n", format!("String: 1: List should have ended with ] or had a comma, instead had token: {nl} (if you want {nl} to be part of a string value, then double-quote it)")),
            ("a = {b = \"x\ny\"}\n", format!("String: 1: Expecting a value but got wrong token: {nl} {}", hint(nl))),
            ("a = \"x\tb\"\n", { let t = "'\t' (JSON does not allow unescaped \t in quoted strings, use a backslash escape)"; format!("String: 1: Expecting a value but got wrong token: {t} {}", hint(t)) }),
            ("a = \"unterminated", { let t = "'-1' (End of input but string quote was still open)"; format!("String: 1: Expecting a value but got wrong token: {t} {}", hint(t)) }),
            ("a = \"\"\"abc", { let t = "'-1' (End of input but triple-quoted string was still open)"; format!("String: 1: Expecting a value but got wrong token: {t} {}", hint(t)) }),
            ("mod::key = unquoted colons\n", format!("String: 1: Expecting a value but got wrong token: ':' {}", hint("':'"))),
            ("a : : b\n", format!("String: 1: Expecting a value but got wrong token: ':' {}", hint("':'"))),
        ];
        for (text, want) in cases {
            assert_eq!(json(text), format!("ERR {want}"), "{text:?}");
        }
        assert_eq!(json("a = \"\"\n"), r#"{"a":""}"#);
    }
}
