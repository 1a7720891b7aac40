//! The `%{...}` interpolation syntax: tokenizer and expression parser. Evaluation lives in
//! the engine, which owns the scope and the lookups the methods need.

/// A piece of a string being interpolated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Token<'a> {
    /// Literal text.
    Text(&'a str),
    /// `%{}`, `%{::}`, `%{""}` …: replaced by nothing.
    Empty,
    /// `%{expr}`; `whole` is the token including `%{` and `}`, `expr` is stripped.
    Expr { whole: &'a str, expr: &'a str },
}

/// An interpolation method.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Method {
    Scope,
    Lookup,
    Hiera,
    Alias,
    Literal,
    Unknown(String),
}

/// Splits `s` as Ruby's `gsub(/%\{([^\}]*)\}/)` sees it.
pub fn tokenize(s: &str) -> Vec<Token<'_>> {
    let mut out = Vec::new();
    let mut rest = s;
    let mut offset = 0;
    while let Some(i) = rest.find("%{") {
        let after = &rest[i + 2..];
        let Some(close) = after.find('}') else { break };
        if i > 0 {
            out.push(Token::Text(&rest[..i]));
        }
        let whole = &rest[i..i + 2 + close + 1];
        // Ruby's strip: ASCII whitespace and NUL.
        let expr = after[..close].trim_matches(|c: char| c.is_ascii_whitespace() || c == '\0');
        if matches!(expr, "" | "::" | "\"\"" | "''" | "\"::\"" | "'::'") {
            out.push(Token::Empty);
        } else {
            out.push(Token::Expr { whole, expr });
        }
        let consumed = i + 2 + close + 1;
        offset += consumed;
        rest = &s[offset..];
    }
    if !rest.is_empty() {
        out.push(Token::Text(rest));
    }
    out
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
