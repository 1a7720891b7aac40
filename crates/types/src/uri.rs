//! Ruby 3.3's `URI.parse` and the URI objects it makes, as Puppet's `URI` type and
//! `new(URI, string)` (`convert_to: URI`) use them: `URI::RFC3986_Parser#split`, `URI.for`
//! (the class by scheme) and `URI::Generic#initialize` / `#to_s`, ported.
//!
//! Our own code: Ruby's parser is a pair of Onigmo regexps (possessive quantifiers,
//! subroutine calls, look-behind) that no Rust regex engine runs, and Puppet's answers depend
//! on its exact split, on the component rules (scheme lower-cased, userinfo split at the
//! first `:`, an empty port is the default one, the query percent-encoded) and on the
//! instance variables Psych dumps (`--render-as yaml` prints the parser object too).
//! Schemes whose classes parse more (ftp, ldap, ldaps, mailto) are refused with a clear
//! error rather than answered differently.

use hiera_value::value::{RubyObject, TaggedScalar, Value};

/// A URI as Ruby's `URI::Generic` holds it.
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct Uri {
    /// The Ruby class: `URI::Generic`, `URI::HTTP`, ...
    pub class: &'static str,
    pub scheme: Option<String>,
    pub user: Option<String>,
    pub password: Option<String>,
    pub host: Option<String>,
    pub port: Option<i64>,
    pub path: Option<String>,
    pub query: Option<String>,
    pub opaque: Option<String>,
    pub fragment: Option<String>,
}

/// The class `URI.for` picks for a scheme, with its default port.
fn class_for(scheme: Option<&str>) -> Result<(&'static str, Option<i64>), String> {
    let up = scheme.map(str::to_ascii_uppercase);
    Ok(match up.as_deref() {
        Some("HTTP") => ("URI::HTTP", Some(80)),
        Some("HTTPS") => ("URI::HTTPS", Some(443)),
        Some("WS") => ("URI::WS", Some(80)),
        Some("WSS") => ("URI::WSS", Some(443)),
        Some("FILE") => ("URI::File", None),
        Some(s @ ("FTP" | "LDAP" | "LDAPS" | "MAILTO")) => {
            return Err(format!(
                "hiera-lookup cannot make {} URIs (Ruby's URI::{} parses its parts further)",
                s.to_ascii_lowercase(),
                match s {
                    "FTP" => "FTP",
                    "LDAP" => "LDAP",
                    "LDAPS" => "LDAPS",
                    _ => "MailTo",
                }
            ))
        }
        _ => ("URI::Generic", None),
    })
}

/// What `RFC3986_Parser#split` returns (registry is always nil).
#[derive(Debug, Default, PartialEq)]
struct Split<'a> {
    scheme: Option<&'a str>,
    userinfo: Option<&'a str>,
    host: Option<&'a str>,
    port: Option<&'a str>,
    path: Option<&'a str>,
    opaque: Option<String>,
    query: Option<&'a str>,
    fragment: Option<&'a str>,
}

fn hex(c: u8) -> bool {
    c.is_ascii_hexdigit()
}

/// A scanner over the URI's bytes.
struct Sc<'a> {
    s: &'a [u8],
    i: usize,
}

impl<'a> Sc<'a> {
    fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }
    fn text(&self, from: usize) -> &'a str {
        std::str::from_utf8(&self.s[from..self.i]).unwrap_or_default()
    }
    /// `(?:%\h\h|[set])*+`: as many as there are.
    fn run(&mut self, set: fn(u8) -> bool) -> usize {
        let start = self.i;
        loop {
            match self.peek() {
                Some(b'%')
                    if self.s.get(self.i + 1).copied().is_some_and(hex)
                        && self.s.get(self.i + 2).copied().is_some_and(hex) =>
                {
                    self.i += 3
                }
                Some(c) if c != b'%' && set(c) => self.i += 1,
                _ => return self.i - start,
            }
        }
    }
    fn eat(&mut self, c: u8) -> bool {
        if self.peek() == Some(c) {
            self.i += 1;
            true
        } else {
            false
        }
    }
}

/// `[!$&-.0-9;=A-Z_a-z~]` and friends: the character sets of RFC3986_Parser.
fn unreserved_sub(c: u8) -> bool {
    matches!(c, b'!' | b'$' | b'&'..=b'.' | b'0'..=b'9' | b';' | b'=' | b'A'..=b'Z' | b'_' | b'a'..=b'z' | b'~')
}
fn userinfo_char(c: u8) -> bool {
    unreserved_sub(c) || c == b':'
}
fn seg_char(c: u8) -> bool {
    unreserved_sub(c) || matches!(c, b':' | b'@' | b'/')
}
fn seg_nc_char(c: u8) -> bool {
    unreserved_sub(c) || c == b'@'
}
fn fragment_char(c: u8) -> bool {
    seg_char(c) || c == b'?'
}

/// `authority` then `path-abempty`: userinfo@, host (IP literal or reg-name), :port.
fn authority<'a>(sc: &mut Sc<'a>, sp: &mut Split<'a>) -> Option<()> {
    let start = sc.i;
    sc.run(userinfo_char);
    if sc.peek() == Some(b'@') {
        sp.userinfo = Some(sc.text(start));
        sc.i += 1;
    } else {
        sc.i = start;
    }
    let h = sc.i;
    if sc.peek() == Some(b'[') {
        let end = sc.s[h..].iter().position(|&c| c == b']')? + h;
        let inner = std::str::from_utf8(&sc.s[h + 1..end]).ok()?;
        if !ip_literal(inner) {
            return None;
        }
        sc.i = end + 1;
    } else {
        sc.run(unreserved_sub);
    }
    sp.host = Some(sc.text(h));
    if sc.eat(b':') {
        let p = sc.i;
        while sc.peek().is_some_and(|c| c.is_ascii_digit()) {
            sc.i += 1;
        }
        sp.port = Some(sc.text(p));
    }
    let p = sc.i;
    if sc.peek() == Some(b'/') {
        sc.run(seg_char);
    }
    sp.path = Some(sc.text(p));
    Some(())
}

/// The inside of `[...]`: an IPv6 address (RFC 3986's forms) or `vX.rest`.
fn ip_literal(s: &str) -> bool {
    if let Some(rest) = s.strip_prefix(['v', 'V']) {
        let Some((h, tail)) = rest.split_once('.') else {
            return false;
        };
        return !h.is_empty()
            && h.bytes().all(hex)
            && !tail.is_empty()
            && tail.bytes().all(userinfo_char);
    }
    s.parse::<std::net::Ipv6Addr>().is_ok() && !s.contains('%')
}

/// `[?query][#fragment]` and the end.
fn query_fragment<'a>(sc: &mut Sc<'a>, sp: &mut Split<'a>) -> Option<()> {
    if sc.eat(b'?') {
        let q = sc.i;
        while sc.peek().is_some_and(|c| c != b'#') {
            sc.i += 1;
        }
        sp.query = Some(sc.text(q));
    }
    if sc.eat(b'#') {
        let f = sc.i;
        sc.run(fragment_char);
        sp.fragment = Some(sc.text(f));
    }
    (sc.i == sc.s.len()).then_some(())
}

/// `RFC3986_URI`: scheme ":" hier-part.
fn absolute(s: &str) -> Option<Split<'_>> {
    let mut sc = Sc {
        s: s.as_bytes(),
        i: 0,
    };
    let mut sp = Split::default();
    if !sc.peek()?.is_ascii_alphabetic() {
        return None;
    }
    while sc
        .peek()
        .is_some_and(|c| c.is_ascii_alphanumeric() || matches!(c, b'+' | b'-' | b'.'))
    {
        sc.i += 1;
    }
    sp.scheme = Some(sc.text(0));
    if !sc.eat(b':') {
        return None;
    }
    let rest = &sc.s[sc.i..];
    if rest.starts_with(b"//") {
        sc.i += 2;
        authority(&mut sc, &mut sp)?;
    } else if rest.first() == Some(&b'/') {
        let p = sc.i;
        sc.i += 1;
        if sc.peek() != Some(b'/') {
            sc.run(seg_char);
        }
        sp.path = Some(sc.text(p));
    } else {
        let p = sc.i;
        if sc.run(seg_char) > 0 {
            // path-rootless is the opaque part (with the query glued back on).
            let mut opaque = sc.text(p).to_string();
            query_fragment(&mut sc, &mut sp)?;
            if let Some(q) = sp.query.take() {
                opaque.push('?');
                opaque.push_str(q);
            }
            sp.opaque = Some(opaque);
            return Some(sp);
        }
        sp.path = Some("");
    }
    query_fragment(&mut sc, &mut sp)?;
    Some(sp)
}

/// `RFC3986_relative_ref`.
fn relative(s: &str) -> Option<Split<'_>> {
    let mut sc = Sc {
        s: s.as_bytes(),
        i: 0,
    };
    let mut sp = Split::default();
    if s.starts_with("//") {
        sc.i = 2;
        authority(&mut sc, &mut sp)?;
        if sp.host == Some("") {
            sp.host = None;
        }
    } else if s.starts_with('/') {
        sc.i = 1;
        sc.run(seg_char);
        sp.path = Some(sc.text(0));
    } else {
        if sc.run(seg_nc_char) > 0 && sc.peek() == Some(b'/') {
            sc.run(seg_char);
        }
        sp.path = Some(sc.text(0));
    }
    query_fragment(&mut sc, &mut sp)?;
    Some(sp)
}

/// Ruby's `String#dump`: `inspect` with every non-ASCII character escaped (`\u00E9`), as
/// `inspect` escapes them outside a UTF-8 locale.
fn dump(s: &str) -> String {
    hiera_value::text::inspect_with(&Value::str(s), false)
}

/// `URI::Generic#query=`: tabs and line breaks dropped, a `%` escape must be one, and what
/// the set does not allow is percent-encoded.
fn set_query(q: &str) -> Result<String, String> {
    let b: Vec<u8> = q
        .bytes()
        .filter(|c| !matches!(c, b'\t' | b'\r' | b'\n'))
        .collect();
    for w in b.windows(3) {
        if w[0] == b'%' && !hex(w[1]) && !hex(w[2]) {
            return Err(format!(
                "invalid percent escape: {}",
                String::from_utf8_lossy(w)
            ));
        }
    }
    let mut out = String::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        let escape = c == b'%'
            && b.get(i + 1).copied().is_some_and(hex)
            && b.get(i + 2).copied().is_some_and(hex);
        let allowed =
            matches!(c, b'!' | b'$'..=b'&' | b'('..=b';' | b'=' | b'?'..=b'_' | b'a'..=b'~');
        if escape || (allowed && c != b'%') {
            out.push(c as char);
        } else {
            out.push_str(&format!("%{c:02X}"));
        }
        i += 1;
    }
    Ok(out)
}

impl Uri {
    /// `URI.parse(s)`, with Ruby's messages.
    pub fn parse(s: &str) -> Result<Uri, String> {
        if !s.is_ascii() {
            return Err(format!("URI must be ascii only {}", dump(s)));
        }
        let sp = absolute(s).or_else(|| relative(s)).ok_or_else(|| {
            format!(
                "bad URI(is not URI?): {}",
                hiera_value::ruby::inspect(&Value::str(s))
            )
        })?;
        let (class, default_port) = class_for(sp.scheme)?;
        let file = class == "URI::File";
        let (user, password) = match sp.userinfo {
            Some(ui) if !file => match ui.split_once(':') {
                Some((u, p)) => (Some(u.to_string()), Some(p.to_string())),
                None => (Some(ui.to_string()), None),
            },
            _ => (None, None),
        };
        let host = match (sp.host, file) {
            (None | Some("localhost"), true) => Some(String::new()),
            (h, _) => h.map(str::to_string),
        };
        let port = match sp.port {
            _ if file => None,
            Some("") | None => None,
            Some(p) => Some(
                p.trim_start_matches('0')
                    .parse::<i64>()
                    .or_else(|e| {
                        if p.bytes().all(|c| c == b'0') {
                            Ok(0)
                        } else {
                            Err(e)
                        }
                    })
                    .map_err(|_| {
                        format!(
                            "bad URI(is not URI?): {}",
                            hiera_value::ruby::inspect(&Value::str(s))
                        )
                    })?,
            ),
        };
        let mut u = Uri {
            class,
            scheme: sp.scheme.map(str::to_ascii_lowercase),
            user,
            password,
            host,
            port,
            path: sp.path.map(str::to_string),
            query: sp.query.map(set_query).transpose()?,
            opaque: sp.opaque,
            fragment: sp.fragment.map(str::to_string),
        };
        if u.path.is_none() && u.opaque.is_none() {
            u.path = Some(String::new());
        }
        if u.port.is_none() {
            u.port = default_port;
        }
        Ok(u)
    }

    fn default_port(&self) -> Option<i64> {
        class_for(self.scheme.as_deref()).ok().and_then(|(_, p)| p)
    }

    /// `URI::Generic#userinfo`.
    pub(crate) fn userinfo(&self) -> Option<String> {
        match (&self.user, &self.password) {
            (None, _) => None,
            (Some(u), None) => Some(u.clone()),
            (Some(u), Some(p)) => Some(format!("{u}:{p}")),
        }
    }

    /// `URI::Generic#to_s`.
    pub(crate) fn to_s(&self) -> String {
        let mut s = String::new();
        if let Some(sc) = &self.scheme {
            s.push_str(sc);
            s.push(':');
        }
        if let Some(o) = &self.opaque {
            s.push_str(o);
        } else {
            if self.host.is_some() || matches!(self.scheme.as_deref(), Some("file" | "postgres")) {
                s.push_str("//");
            }
            if let Some(ui) = self.userinfo() {
                s.push_str(&ui);
                s.push('@');
            }
            if let Some(h) = &self.host {
                s.push_str(h);
            }
            if let Some(p) = self.port.filter(|p| Some(*p) != self.default_port()) {
                s.push(':');
                s.push_str(&p.to_string());
            }
            let path = self.path.as_deref().unwrap_or_default();
            if (self.host.is_some() || self.port.is_some())
                && !path.is_empty()
                && !path.starts_with('/')
            {
                s.push('/');
            }
            s.push_str(path);
            if let Some(q) = &self.query {
                s.push('?');
                s.push_str(q);
            }
        }
        if let Some(f) = &self.fragment {
            s.push('#');
            s.push_str(f);
        }
        s
    }

    /// The Ruby object: its `to_s`, and its instance variables as Psych dumps them (the
    /// parser `URI.parse` used included).
    pub(crate) fn to_value(&self) -> Value {
        let opt = |v: &Option<String>| v.clone().map_or(Value::Null, Value::String);
        let fields = vec![
            ("scheme".to_string(), opt(&self.scheme)),
            ("user".to_string(), opt(&self.user)),
            ("password".to_string(), opt(&self.password)),
            ("host".to_string(), opt(&self.host)),
            (
                "port".to_string(),
                self.port.map_or(Value::Null, Value::Int),
            ),
            ("path".to_string(), opt(&self.path)),
            ("query".to_string(), opt(&self.query)),
            ("opaque".to_string(), opt(&self.opaque)),
            ("fragment".to_string(), opt(&self.fragment)),
            ("parser".to_string(), parser_value()),
        ];
        Value::Object(Box::new(RubyObject {
            type_name: "URI",
            class: self.class,
            fields,
            to_s: self.to_s(),
            scalar: None,
        }))
    }

    /// The URI a `URI` value holds (None for other values).
    pub(crate) fn of(v: &Value) -> Option<Uri> {
        let Value::Object(o) = v else { return None };
        if o.type_name != "URI" {
            return None;
        }
        let get = |k: &str| o.fields.iter().find(|(n, _)| n == k).map(|(_, v)| v);
        let s = |k: &str| get(k).and_then(Value::as_str).map(str::to_string);
        Some(Uri {
            class: o.class,
            scheme: s("scheme"),
            user: s("user"),
            password: s("password"),
            host: s("host"),
            port: match get("port") {
                Some(Value::Int(p)) => Some(*p),
                _ => None,
            },
            path: s("path"),
            query: s("query"),
            opaque: s("opaque"),
            fragment: s("fragment"),
        })
    }

    /// `uri.send(name)` for the members Puppet's URI type reads.
    pub(crate) fn member(&self, name: &str) -> Value {
        let opt = |v: Option<String>| v.map_or(Value::Null, Value::String);
        match name {
            "scheme" => opt(self.scheme.clone()),
            "userinfo" => opt(self.userinfo()),
            "host" => opt(self.host.clone()),
            "port" => self.port.map_or(Value::Null, Value::Int),
            "path" => opt(self.path.clone()),
            "query" => opt(self.query.clone()),
            "fragment" => opt(self.fragment.clone()),
            "opaque" => opt(self.opaque.clone()),
            _ => Value::Null,
        }
    }

    /// PURIType's `uri_to_hash`: the parameters of the type a URI infers (and of
    /// `URI['string']`): lower-cased scheme and host, the port as a string unless it is
    /// http's 80 or https' 443, empty parts left out.
    pub(crate) fn to_params(&self) -> Vec<(String, Value)> {
        let mut out = Vec::new();
        let scheme = self.scheme.as_ref().map(|s| s.to_ascii_lowercase());
        if let Some(s) = &scheme {
            out.push(("scheme".to_string(), Value::str(s.as_str())));
        }
        if let Some(ui) = self.userinfo() {
            out.push(("userinfo".to_string(), Value::String(ui)));
        }
        if let Some(h) = self.host.as_ref().filter(|h| !h.is_empty()) {
            out.push(("host".to_string(), Value::String(h.to_ascii_lowercase())));
        }
        if let Some(p) = self.port {
            let default = (p == 80 && scheme.as_deref() == Some("http"))
                || (p == 443 && scheme.as_deref() == Some("https"));
            if !default {
                out.push(("port".to_string(), Value::String(p.to_string())));
            }
        }
        if let Some(p) = self.path.as_ref().filter(|p| !p.is_empty()) {
            out.push(("path".to_string(), Value::str(p.as_str())));
        }
        for (k, v) in [
            ("query", &self.query),
            ("fragment", &self.fragment),
            ("opaque", &self.opaque),
        ] {
            if let Some(v) = v {
                out.push((k.to_string(), Value::str(v.as_str())));
            }
        }
        out
    }
}

/// `URI::RFC3986_PARSER` as Psych dumps it: its `@regexp` hash of symbols to regexps.
fn parser_value() -> Value {
    let mut regexps = hiera_value::value::Map::default();
    for (name, inspect) in PARSER_REGEXPS {
        let scalar = |tag: Option<&'static str>, text: String| {
            Value::Object(Box::new(RubyObject {
                type_name: if tag.is_some() { "Regexp" } else { "Symbol" },
                class: if tag.is_some() { "Regexp" } else { "Symbol" },
                fields: Vec::new(),
                to_s: text.clone(),
                scalar: Some(TaggedScalar {
                    tag,
                    text,
                    literal: false,
                }),
            }))
        };
        regexps.insert(
            scalar(None, format!(":{name}")),
            scalar(Some("!ruby/regexp"), inspect.to_string()),
        );
    }
    Value::Object(Box::new(RubyObject {
        type_name: "URI::RFC3986_Parser",
        class: "URI::RFC3986_Parser",
        fields: vec![("regexp".to_string(), Value::Hash(regexps))],
        to_s: "#<URI::RFC3986_Parser>".to_string(),
        scalar: None,
    }))
}

/// `URI::RFC3986_PARSER.regexp`: name → `Regexp#inspect` (Ruby 3.3).
const PARSER_REGEXPS: [(&str, &str); 9] = [
    ("SCHEME", "/\\A[A-Za-z][+\\-.0-9A-Za-z]*+\\z/"),
    ("USERINFO", "/\\A(?-mix:(?:%\\h\\h|[!$&-.0-9:;=A-Z_a-z~])*+)\\z/"),
    ("HOST", "/\\A(?x-mi:\n      (?<IP-literal>\\[(?:\n          (?<IPv6address>\n            (?:\\h{1,4}:){6}\n            (?<ls32>\\h{1,4}:\\h{1,4}\n            | (?<IPv4address>(?<dec-octet>[1-9]\\d|1\\d{2}|2[0-4]\\d|25[0-5]|\\d)\n                \\.\\g<dec-octet>\\.\\g<dec-octet>\\.\\g<dec-octet>)\n            )\n          | ::(?:\\h{1,4}:){5}\\g<ls32>\n          | \\h{1,4}?::(?:\\h{1,4}:){4}\\g<ls32>\n          | (?:(?:\\h{1,4}:)?\\h{1,4})?::(?:\\h{1,4}:){3}\\g<ls32>\n          | (?:(?:\\h{1,4}:){,2}\\h{1,4})?::(?:\\h{1,4}:){2}\\g<ls32>\n          | (?:(?:\\h{1,4}:){,3}\\h{1,4})?::\\h{1,4}:\\g<ls32>\n          | (?:(?:\\h{1,4}:){,4}\\h{1,4})?::\\g<ls32>\n          | (?:(?:\\h{1,4}:){,5}\\h{1,4})?::\\h{1,4}\n          | (?:(?:\\h{1,4}:){,6}\\h{1,4})?::\n          )\n        | (?<IPvFuture>v\\h++\\.[!$&-.0-9:;=A-Z_a-z~]++)\n        )\\])\n    | \\g<IPv4address>\n    | (?<reg-name>(?:%\\h\\h|[!$&-.0-9;=A-Z_a-z~])*+)\n    )\\z/"),
    ("ABS_PATH", "/\\A\\/(?:%\\h\\h|[!$&-.0-9:;=@A-Z_a-z~\\/])*+\\z/"),
    ("REL_PATH", "/\\A(?!\\/)(?:%\\h\\h|[!$&-.0-9:;=@A-Z_a-z~\\/])++\\z/"),
    ("QUERY", "/\\A(?:%\\h\\h|[!$&-.0-9:;=@A-Z_a-z~\\/?])*+\\z/"),
    ("FRAGMENT", "/\\A(?:%\\h\\h|[!$&-.0-9:;=@A-Z_a-z~\\/?])*+\\z/"),
    ("OPAQUE", "/\\A(?:[^\\/].*)?\\z/"),
    ("PORT", "/\\A[\\x09\\x0a\\x0c\\x0d ]*+\\d*[\\x09\\x0a\\x0c\\x0d ]*\\z/"),
];

/// `Pcore::TYPE_URI` as Puppet prints it: the pattern a `URI['string']` parameter must match.
pub(crate) const TYPE_URI_TEXT: &str = "Pattern[/(?x-mi:\n        ([a-zA-Z][\\-+.a-zA-Z\\d]*):                           (?# 1: scheme)\n        (?:\n           ((?:[\\-_.!~*'()a-zA-Z\\d;?:@&=+$,]|%[a-fA-F\\d]{2})(?:[\\-_.!~*'()a-zA-Z\\d;\\/?:@&=+$,\\[\\]]|%[a-fA-F\\d]{2})*)                    (?# 2: opaque)\n        |\n           (?:(?:\n             \\/\\/(?:\n                 (?:(?:((?:[\\-_.!~*'()a-zA-Z\\d;:&=+$,]|%[a-fA-F\\d]{2})*)@)?        (?# 3: userinfo)\n                   (?:((?:(?:[a-zA-Z0-9\\-.]|%\\h\\h)+|\\d{1,3}\\.\\d{1,3}\\.\\d{1,3}\\.\\d{1,3}|\\[(?:(?:[a-fA-F\\d]{1,4}:)*(?:[a-fA-F\\d]{1,4}|\\d{1,3}\\.\\d{1,3}\\.\\d{1,3}\\.\\d{1,3})|(?:(?:[a-fA-F\\d]{1,4}:)*[a-fA-F\\d]{1,4})?::(?:(?:[a-fA-F\\d]{1,4}:)*(?:[a-fA-F\\d]{1,4}|\\d{1,3}\\.\\d{1,3}\\.\\d{1,3}\\.\\d{1,3}))?)\\]))(?::(\\d*))?))? (?# 4: host, 5: port)\n               |\n                 ((?:[\\-_.!~*'()a-zA-Z\\d$,;:@&=+]|%[a-fA-F\\d]{2})+)                 (?# 6: registry)\n               )\n             |\n             (?!\\/\\/))                           (?# XXX: '\\/\\/' is the mark for hostport)\n             (\\/(?:[\\-_.!~*'()a-zA-Z\\d:@&=+$,]|%[a-fA-F\\d]{2})*(?:;(?:[\\-_.!~*'()a-zA-Z\\d:@&=+$,]|%[a-fA-F\\d]{2})*)*(?:\\/(?:[\\-_.!~*'()a-zA-Z\\d:@&=+$,]|%[a-fA-F\\d]{2})*(?:;(?:[\\-_.!~*'()a-zA-Z\\d:@&=+$,]|%[a-fA-F\\d]{2})*)*)*)?                    (?# 7: path)\n           )(?:\\?((?:[\\-_.!~*'()a-zA-Z\\d;\\/?:@&=+$,\\[\\]]|%[a-fA-F\\d]{2})*))?                 (?# 8: query)\n        )\n        (?:\\#((?:[\\-_.!~*'()a-zA-Z\\d;\\/?:@&=+$,\\[\\]]|%[a-fA-F\\d]{2})*))?                  (?# 9: fragment)\n      )/]";

#[cfg(test)]
mod tests {
    use super::*;

    /// Recorded from Ruby 3.3 (`URI.parse(s)`: class, `to_s`; Puppet's inferred type).
    #[test]
    fn parses_as_ruby() {
        let cases = [
            ("http://example.com/x", "URI::HTTP", "http://example.com/x"),
            ("http://ex.com:8080", "URI::HTTP", "http://ex.com:8080"),
            ("http://ex.com:", "URI::HTTP", "http://ex.com"),
            ("foo:bar", "URI::Generic", "foo:bar"),
            ("/rel/path?x", "URI::Generic", "/rel/path?x"),
            ("//host", "URI::Generic", "//host"),
            ("urn:isbn:123", "URI::Generic", "urn:isbn:123"),
            ("http://[::1]:80/", "URI::HTTP", "http://[::1]/"),
            ("file:///etc/hosts", "URI::File", "file:///etc/hosts"),
            ("ws://x/y", "URI::WS", "ws://x/y"),
            ("", "URI::Generic", ""),
        ];
        for (s, class, to_s) in cases {
            let u = Uri::parse(s).unwrap();
            assert_eq!((u.class, u.to_s().as_str()), (class, to_s), "{s}");
        }
        let errors = [
            (
                "HTTPS://User:pw@Ex.COM:443/p?q=1 2#f g",
                "bad URI(is not URI?): \"HTTPS://User:pw@Ex.COM:443/p?q=1 2#f g\"",
            ),
            (
                "http://ex.com/%zz",
                "bad URI(is not URI?): \"http://ex.com/%zz\"",
            ),
            ("http://ex.com/?%zz", "invalid percent escape: %zz"),
            ("ht tp://x", "bad URI(is not URI?): \"ht tp://x\""),
            (
                "http://é.com",
                "URI must be ascii only \"http://\\u00E9.com\"",
            ),
        ];
        for (s, want) in errors {
            assert_eq!(Uri::parse(s).unwrap_err(), want, "{s}");
        }
        let params = |s: &str| {
            Uri::parse(s)
                .unwrap()
                .to_params()
                .into_iter()
                .map(|(k, v)| format!("{k}={}", hiera_value::ruby::to_s(&v)))
                .collect::<Vec<_>>()
                .join(",")
        };
        assert_eq!(
            params("http://example.com/x"),
            "scheme=http,host=example.com,path=/x"
        );
        assert_eq!(params("ws://x/y"), "scheme=ws,host=x,port=80,path=/y");
        assert_eq!(params("foo:bar"), "scheme=foo,opaque=bar");
        assert_eq!(params(""), "");
    }
}
