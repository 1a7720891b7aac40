//! `%{...}` interpolation: the tokenizer, the expression parser and the evaluation.
//!
//! Evaluation needs the scope and full lookups, which the engine owns: it reaches them
//! through the small `Context` trait, which [`Session`](crate::engine::Session) implements.

use crate::error::{Error, Result};
use crate::explain::Kind;
use crate::key::{split_key, Segment};
use hiera_value::value::{Map, Value};

/// What evaluating an interpolation needs from the engine.
pub(crate) trait Context {
    /// `%{lookup('k')}`, `%{hiera('k')}`, `%{alias('k')}`: a full lookup, `''` when not found.
    fn lookup(&mut self, key: &str) -> Result<Value>;
    /// A scope variable (a mapped_paths local first), after `strict` has handled an
    /// undefined one: `None` when it is undefined.
    fn variable(&mut self, name: &str) -> Result<Option<Value>>;
    /// `%{root.seg…}` read in place when nothing is recorded (no `--explain`): the variable
    /// found as [`variable`](Self::variable) finds it, dug into as [`dig`](Self::dig) digs,
    /// and only the value found copied (`$facts` is the node's whole facts hash). `None`: the
    /// caller reads and digs a copy.
    fn scope_dig(
        &mut self,
        _root: &str,
        _key: &str,
        _segments: &[Segment],
    ) -> Option<Result<Option<Value>>> {
        None
    }
    /// Digs the dotted `segments` of `key` into a variable's value.
    fn dig(&mut self, key: &str, segments: &[Segment], value: Value) -> Result<Option<Value>>;
    /// Runs `f` with `name` on the recursion guard (`Invocation#check`).
    fn guarded<T>(&mut self, name: &str, f: impl FnOnce(&mut Self) -> Result<T>) -> Result<T>;
    /// Runs `f` inside an explain node (just runs it without `--explain`).
    fn explained<T>(&mut self, kind: impl FnOnce() -> Kind, f: impl FnOnce(&mut Self) -> T) -> T;
    /// Explain only: an `alias` interpolation returned `v`.
    fn aliased(&mut self, v: &Value);
    /// Runs `f` with the local variable `name` set (mapped_paths templates).
    fn with_local<T>(&mut self, name: &str, value: Value, f: impl FnOnce(&mut Self) -> T) -> T;
}

/// Interpolates a value (strings, array elements, hash keys and values).
pub(crate) fn interpolate<C: Context>(
    cx: &mut C,
    value: &Value,
    allow_methods: bool,
) -> Result<Value> {
    match value {
        Value::String(s) => {
            if !s.contains("%{") {
                return Ok(value.clone());
            }
            interpolate_string(cx, s, allow_methods)
        }
        Value::Array(a) => {
            let mut out = Vec::with_capacity(a.len());
            for v in a {
                out.push(interpolate(cx, v, allow_methods)?);
            }
            Ok(Value::Array(out))
        }
        Value::Hash(h) => {
            let mut out = Map::with_capacity_and_hasher(h.len(), Default::default());
            for (k, v) in h {
                let k = interpolate(cx, k, allow_methods)?;
                let v = interpolate(cx, v, allow_methods)?;
                out.insert(k, v);
            }
            Ok(Value::Hash(out))
        }
        other => Ok(other.clone()),
    }
}

/// [`interpolate`] of a value we own: returned as is (no copy) when nothing in it holds
/// `%{`, the usual case for big hashes.
pub(crate) fn interpolate_owned<C: Context>(
    cx: &mut C,
    value: Value,
    allow_methods: bool,
) -> Result<Value> {
    fn has_expr(v: &Value) -> bool {
        match v {
            Value::String(s) => s.contains("%{"),
            Value::Array(a) => a.iter().any(has_expr),
            Value::Hash(h) => h.iter().any(|(k, v)| has_expr(k) || has_expr(v)),
            _ => false,
        }
    }
    if has_expr(&value) {
        let v = interpolate(cx, &value, allow_methods)?;
        check_depth(&v)?;
        Ok(v)
    } else {
        Ok(value)
    }
}

/// Interpolates a string into a string (a non-string `alias` result is converted by `to_s`).
pub(crate) fn interpolate_str<C: Context>(
    cx: &mut C,
    s: &str,
    allow_methods: bool,
) -> Result<String> {
    if !s.contains("%{") {
        return Ok(s.to_string());
    }
    match interpolate_string(cx, s, allow_methods)? {
        Value::String(s) => Ok(s),
        other => Ok(hiera_value::ruby::to_s(&other)),
    }
}

/// Interpolates a string holding `%{`: a string, or whatever an `alias` returned.
pub(crate) fn interpolate_string<C: Context>(
    cx: &mut C,
    subject: &str,
    allow_methods: bool,
) -> Result<Value> {
    let subj = subject.to_string();
    cx.explained(
        || Kind::Interpolate(subj),
        |s| -> Result<Value> {
            let mut out = Gsub::default();
            for tok in tokenize(subject) {
                match tok {
                    Token::Text(t) => out.push_utf8(t)?,
                    Token::Empty => {}
                    Token::Expr { whole, expr } => {
                        let (method, key, call) = parse_expr(expr);
                        if call && !allow_methods {
                            return Err(Error::issue("Interpolation using method syntax is not allowed in this context"));
                        }
                        let method = match method {
                            Method::Unknown(name) => {
                                return Err(Error::issue(format!("Unknown interpolation method '{name}'")))
                            }
                            m => m,
                        };
                        if method == Method::Alias && subject != whole {
                            return Err(Error::issue(
                                "'alias' interpolation is only permitted if the expression is equal to the entire string",
                            ));
                        }
                        let value = match method {
                            Method::Scope => scope_lookup(s, key, subject)?,
                            Method::Literal => Some(Value::str(key)),
                            _ => Some(s.lookup(key)?),
                        };
                        if method == Method::Alias {
                            let v = value.unwrap_or(Value::Null);
                            s.aliased(&v);
                            return Ok(v);
                        }
                        let value = match value {
                            Some(v) => {
                                let name = if method == Method::Scope { format!("scope:{key}") } else { key.to_string() };
                                s.guarded(&name, |s| interpolate(s, &v, allow_methods))?
                            }
                            None => Value::Null,
                        };
                        match value.binary_bytes() {
                            Some(bytes) => out.push_binary(&bytes)?,
                            None => out.push_utf8(&hiera_value::ruby::to_s(&value))?,
                        }
                        if out.bytes.len() > hiera_value::limits::MAX_INTERPOLATED_STRING {
                            return Err(Error::run(format!(
                                "interpolation result too large (more than {} MiB)",
                                hiera_value::limits::MAX_INTERPOLATED_STRING >> 20
                            )));
                        }
                    }
                }
            }
            Ok(out.finish())
        },
    )
}

/// The string `gsub` builds: UTF-8 (the subject's encoding) until a binary (ASCII-8BIT) piece
/// that is not ASCII joins an ASCII-only result, which then becomes binary; mixing non-ASCII
/// text of both encodings is Ruby's Encoding::CompatibilityError.
#[derive(Default)]
struct Gsub {
    bytes: Vec<u8>,
    binary: bool,
}

impl Gsub {
    fn push(&mut self, piece: &[u8], binary: bool) -> Result<()> {
        if binary != self.binary && !piece.is_ascii() {
            if !self.bytes.is_ascii() {
                let name = |b: bool| if b { "ASCII-8BIT" } else { "UTF-8" };
                return Err(Error::run(format!(
                    "incompatible character encodings: {} and {}",
                    name(self.binary),
                    name(binary)
                )));
            }
            self.binary = binary;
        }
        self.bytes.extend_from_slice(piece);
        Ok(())
    }
    fn push_utf8(&mut self, s: &str) -> Result<()> {
        self.push(s.as_bytes(), false)
    }
    fn push_binary(&mut self, b: &[u8]) -> Result<()> {
        self.push(b, true)
    }
    fn finish(self) -> Value {
        if self.binary {
            hiera_value::value::binary_string(&self.bytes)
        } else {
            // Only UTF-8 text was appended.
            Value::String(String::from_utf8(self.bytes).unwrap_or_default())
        }
    }
}

/// `%{var}` / `%{scope('var')}`: a scope variable with optional dotted sub-keys.
pub(crate) fn scope_lookup<C: Context>(
    cx: &mut C,
    key: &str,
    subject: &str,
) -> Result<Option<Value>> {
    let mut segments =
        split_key(key).map_err(|_| Error::lookup(format!("Syntax error in string: {subject}")))?;
    let root = match segments.remove(0) {
        Segment::Key(k) => k,
        // `scope[root_key]` with the Integer split_key made: Scope#lookupvar's ParseError.
        n => {
            return Err(Error::Puppet(format!(
                "Scope variable name {n} is a Integer, not a string"
            )))
        }
    };
    if let Some(found) = cx.scope_dig(&root, key, &segments) {
        return found;
    }
    let value = cx.explained(
        || Kind::Scope("Global Scope".into()),
        |cx| cx.variable(&root),
    )?;
    match value {
        Some(v) if !v.is_null() && !segments.is_empty() => cx.dig(key, &segments, v),
        other => Ok(other),
    }
}

/// Interpolation can nest a deep value (`alias`) inside another: the result must still fit the
/// depth every recursion over values is bounded by.
pub(crate) fn check_depth(v: &Value) -> Result<()> {
    if v.deeper_than(hiera_value::limits::MAX_VALUE_DEPTH) {
        return Err(Error::run(format!(
            "stack level too deep: interpolation built a value nested more than {} deep",
            hiera_value::limits::MAX_VALUE_DEPTH
        )));
    }
    Ok(())
}

/// A piece of a string being interpolated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Token<'a> {
    /// Literal text.
    Text(&'a str),
    /// `%{}`, `%{::}`, `%{""}` …: replaced by nothing.
    Empty,
    /// `%{expr}`; `whole` is the token including `%{` and `}`, `expr` is stripped.
    Expr {
        /// The token, `%{` and `}` included.
        whole: &'a str,
        /// What is inside the braces, stripped.
        expr: &'a str,
    },
}

/// An interpolation method.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Method {
    /// `%{var}` or `%{scope('var')}`: a variable of the node's scope.
    Scope,
    /// `%{lookup('key')}`: another key's value.
    Lookup,
    /// `%{hiera('key')}`: another key's value (Hiera 3's name).
    Hiera,
    /// `%{alias('key')}`: another key's value, not made a string.
    Alias,
    /// `%{literal('text')}`: the text as it is.
    Literal,
    /// A function Hiera does not know: an error when used.
    Unknown(String),
}

/// Splits `s` as Ruby's `gsub(/%\{([^\}]*)\}/)` sees it.
pub fn tokenize(s: &str) -> Vec<Token<'_>> {
    tokens_at(s).map(|(_, t)| t).collect()
}

/// [`tokenize`] with where each token is: its byte range in `s` (an editor points at a
/// `%{…}` with it).
pub fn tokens_at(s: &str) -> impl Iterator<Item = (std::ops::Range<usize>, Token<'_>)> {
    let mut offset = 0;
    // The token after a text: a `%{…}` found with the text before it.
    let mut next: Option<(std::ops::Range<usize>, Token<'_>)> = None;
    std::iter::from_fn(move || {
        if let Some(t) = next.take() {
            return Some(t);
        }
        if offset >= s.len() {
            return None;
        }
        let rest = &s[offset..];
        let found = rest.find("%{").and_then(|i| {
            let close = rest[i + 2..].find('}')?;
            Some((i, i + 2 + close + 1))
        });
        let Some((i, end)) = found else {
            // No `%{…}` closes: the rest is text.
            let range = offset..s.len();
            offset = s.len();
            return Some((range, Token::Text(rest)));
        };
        let whole = &rest[i..end];
        // Ruby's strip: ASCII whitespace and NUL.
        let expr =
            whole[2..whole.len() - 1].trim_matches(|c: char| c.is_ascii_whitespace() || c == '\0');
        let token = if matches!(expr, "" | "::" | "\"\"" | "''" | "\"::\"" | "'::'") {
            Token::Empty
        } else {
            Token::Expr { whole, expr }
        };
        let at = (offset + i..offset + end, token);
        let text = (i > 0).then(|| (offset..offset + i, Token::Text(&rest[..i])));
        offset += end;
        match text {
            Some(t) => {
                next = Some(at);
                Some(t)
            }
            None => Some(at),
        }
    })
}

/// Where a `%{` that nothing closes yet starts in `s` (the last one): the interpolation an
/// editor's user is typing when `s` is the text before the cursor. What the tokenizer leaves
/// as text after the last `%{…}` it closes.
pub fn unclosed(s: &str) -> Option<usize> {
    match tokens_at(s).last()? {
        // No `}` follows a `%{` of the trailing text: the tokenizer would have closed it.
        (range, Token::Text(t)) => t.rfind("%{").map(|i| range.start + i),
        _ => None,
    }
}

/// `/^(\w+)\((?:["]([^"]+)["]|[']([^']+)['])\)$/`: a method call, else a scope key.
/// The flag tells whether method-call syntax was used (`scope('x')` included).
pub fn parse_expr(expr: &str) -> (Method, &str, bool) {
    if let Some(open) = expr.find('(') {
        let name = &expr[..open];
        let args = &expr[open + 1..];
        let word = !name.is_empty() && name.chars().all(|c| c.is_alphanumeric() || c == '_');
        if word && args.len() >= 3 && args.ends_with(')') {
            let inner = &args[..args.len() - 1];
            let q = inner.as_bytes()[0];
            if (q == b'"' || q == b'\'')
                && inner.len() >= 3
                && inner.as_bytes()[inner.len() - 1] == q
            {
                let arg = &inner[1..inner.len() - 1];
                if !arg.is_empty() && !arg.contains(q as char) {
                    let m = match name {
                        "scope" => Method::Scope,
                        "lookup" => Method::Lookup,
                        "hiera" => Method::Hiera,
                        "alias" => Method::Alias,
                        "literal" => Method::Literal,
                        other => Method::Unknown(other.to_string()),
                    };
                    return (m, arg, true);
                }
            }
        }
    }
    (Method::Scope, expr, false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens() {
        assert_eq!(tokenize("plain"), vec![Token::Text("plain")]);
        assert_eq!(
            tokenize("a%{ x }b"),
            vec![
                Token::Text("a"),
                Token::Expr {
                    whole: "%{ x }",
                    expr: "x"
                },
                Token::Text("b")
            ]
        );
        assert_eq!(
            tokenize("clown%{}shoe"),
            vec![Token::Text("clown"), Token::Empty, Token::Text("shoe")]
        );
        assert_eq!(tokenize("%{::}"), vec![Token::Empty]);
        assert_eq!(tokenize("%{'::'}"), vec![Token::Empty]);
        // The escape idiom: %%{}{x} stays %{x} after substitution.
        assert_eq!(
            tokenize("%%{}{x}"),
            vec![Token::Text("%"), Token::Empty, Token::Text("{x}")]
        );
        // Unterminated: left as text.
        assert_eq!(tokenize("a%{b"), vec![Token::Text("a%{b")]);
        assert_eq!(
            tokenize("%{a}%{b}"),
            vec![
                Token::Expr {
                    whole: "%{a}",
                    expr: "a"
                },
                Token::Expr {
                    whole: "%{b}",
                    expr: "b"
                }
            ]
        );
    }

    #[test]
    fn token_ranges() {
        let s = "a%{ x }b%{}%%{}{y}%{open";
        let spans: Vec<_> = tokens_at(s).map(|(r, _)| &s[r]).collect();
        assert_eq!(spans, ["a", "%{ x }", "b", "%{}", "%", "%{}", "{y}%{open"]);
        let tokens: Vec<_> = tokens_at(s).map(|(_, t)| t).collect();
        assert_eq!(tokens, tokenize(s));
        assert_eq!(tokens_at("").count(), 0);
        assert_eq!(unclosed("x: %{facts.os"), Some(3));
        assert_eq!(unclosed("%{a} %{lookup('b"), Some(5));
        assert_eq!(unclosed("%{a} b"), None);
        assert_eq!(unclosed("%{a}"), None);
        assert_eq!(unclosed("%{a} %{b %{c"), Some(9));
        assert_eq!(unclosed("plain"), None);
    }

    #[test]
    fn methods() {
        assert_eq!(parse_expr("lookup('a.b')"), (Method::Lookup, "a.b", true));
        assert_eq!(parse_expr("hiera(\"k\")"), (Method::Hiera, "k", true));
        assert_eq!(parse_expr("alias('k')"), (Method::Alias, "k", true));
        assert_eq!(parse_expr("literal('%')"), (Method::Literal, "%", true));
        assert_eq!(parse_expr("scope('x')"), (Method::Scope, "x", true));
        assert_eq!(
            parse_expr("foo('x')"),
            (Method::Unknown("foo".into()), "x", true)
        );
        // Mismatched quotes fall through to a scope key of the whole text.
        assert_eq!(
            parse_expr("lookup('a\")"),
            (Method::Scope, "lookup('a\")", false)
        );
        assert_eq!(
            parse_expr("lookup('')"),
            (Method::Scope, "lookup('')", false)
        );
        assert_eq!(
            parse_expr("facts.os.family"),
            (Method::Scope, "facts.os.family", false)
        );
    }
}
