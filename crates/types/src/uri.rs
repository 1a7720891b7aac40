//! Ruby 3.3's `URI.parse` and the URI objects it makes, as Puppet's `URI` type and
//! `new(URI, string)` (`convert_to: URI`) use them: `URI::RFC3986_Parser#split`, `URI.for`
//! (the class by scheme) and `URI::Generic#initialize` / `#to_s`, ported.
//!
//! Our own code: Ruby's parser is a pair of Onigmo regexps (possessive quantifiers,
//! subroutine calls, look-behind) that no Rust regex engine runs, and Puppet's answers depend
//! on its exact split, on the component rules (scheme lower-cased, userinfo split at the
//! first `:`, an empty port is the default one, the query percent-encoded) and on the
//! instance variables Psych dumps (`--render-as yaml` prints the parser object too).
//! The classes that split their parts further (`URI::FTP`'s typecode, `URI::LDAP`'s dn and
//! query parts, `URI::MailTo`'s recipients and headers) are ported too, as is
//! `new(URI, hash)`: `URI::Generic.build` (and the subclasses' `build`), whose checks use
//! Ruby 3.3's `DEFAULT_PARSER` (RFC 2396) regexps.

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
    /// What a subclass adds (FTP's typecode, LDAP's dn and query parts, MailTo's to/headers).
    pub extra: Extra,
    /// Made by `URI.parse` (its parser is kept and dumped) rather than `build` (no parser).
    pub parsed: bool,
}

/// The instance variables a `URI::Generic` subclass adds.
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) enum Extra {
    #[default]
    None,
    /// `URI::FTP`: `@typecode`.
    Ftp { typecode: Option<String> },
    /// `URI::LDAP`/`URI::LDAPS`: the dn and the parts of the query.
    Ldap {
        dn: Option<String>,
        attributes: Option<String>,
        scope: Option<String>,
        filter: Option<String>,
        extensions: Option<String>,
    },
    /// `URI::MailTo`: `@to` and `@headers` (each `name=value` split at the first `=`).
    MailTo {
        to: Option<String>,
        headers: Vec<Vec<String>>,
    },
}

/// The class `URI.for` picks for a scheme (`URI.scheme_list`), with its default port.
fn class_for(scheme: Option<&str>) -> Result<(&'static str, Option<i64>), String> {
    let up = scheme.map(str::to_ascii_uppercase);
    Ok(match up.as_deref() {
        Some("HTTP") => ("URI::HTTP", Some(80)),
        Some("HTTPS") => ("URI::HTTPS", Some(443)),
        Some("WS") => ("URI::WS", Some(80)),
        Some("WSS") => ("URI::WSS", Some(443)),
        Some("FILE") => ("URI::File", None),
        Some("FTP") => ("URI::FTP", Some(21)),
        Some("LDAP") => ("URI::LDAP", Some(389)),
        Some("LDAPS") => ("URI::LDAPS", Some(636)),
        Some("MAILTO") => ("URI::MailTo", None),
        _ => ("URI::Generic", None),
    })
}

/// Ruby's `str.split(sep)`: trailing empty fields dropped.
fn ruby_split(s: &str, sep: char) -> Vec<String> {
    let mut parts: Vec<String> = s.split(sep).map(str::to_string).collect();
    while parts.last().is_some_and(String::is_empty) {
        parts.pop();
    }
    parts
}

/// `URI::LDAP#parse_query`.
fn ldap_query(q: Option<&str>) -> [Option<String>; 4] {
    let mut out: [Option<String>; 4] = Default::default();
    if let Some(q) = q {
        for (i, part) in ruby_split(q, '?').into_iter().take(4).enumerate() {
            if !part.is_empty() {
                out[i] = Some(part);
            }
        }
    }
    out
}

/// A regexp of Ruby's URI library, compiled once.
fn re(cell: &'static std::sync::OnceLock<regex::Regex>, src: &str) -> &'static regex::Regex {
    cell.get_or_init(|| regex::Regex::new(src).expect("URI regexp"))
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

const FTP_TYPECODE_PREFIX: &str = ";type=";

/// `URI::FTP#set_path`: `"/" + v.sub(/^\//, "%2F")`.
fn ftp_set_path(v: &str) -> String {
    match v.strip_prefix('/') {
        Some(rest) => format!("/%2F{rest}"),
        None => format!("/{v}"),
    }
}

/// `URI::Generic#fragment=`: tabs and line breaks dropped, anything outside `!`..`~`
/// percent-encoded.
fn set_fragment(f: &str) -> String {
    let mut out = String::new();
    for c in f.bytes().filter(|c| !matches!(c, b'\t' | b'\r' | b'\n')) {
        if (b'!'..=b'~').contains(&c) {
            out.push(c as char);
        } else {
            out.push_str(&format!("%{c:02X}"));
        }
    }
    out
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
            extra: Extra::None,
            parsed: true,
        };
        // URI::FTP#initialize: a path is required; its leading `/` is dropped and a leading
        // `%2F` decoded before the (FTP) set_path puts them back.
        if class == "URI::FTP" {
            let Some(p) = u.path.take() else {
                return Err("URI::InvalidURIError".into());
            };
            let p = p.strip_prefix('/').unwrap_or(&p).to_string();
            let p = match p.strip_prefix("%2F") {
                Some(rest) => format!("/{rest}"),
                None => p,
            };
            u.path = Some(ftp_set_path(&p));
        }
        if u.path.is_none() && u.opaque.is_none() {
            u.path = Some(String::new());
        }
        if u.port.is_none() {
            u.port = default_port;
        }
        u.subclass_init(false)?;
        Ok(u)
    }

    /// `new(URI, hash)`: `(URI.scheme_list[scheme.upcase] || URI::Generic).build(hash)`, the
    /// hash already checked against `TYPE_URI_INIT_HASH` (String parts, an Integer port).
    pub(crate) fn build(h: &hiera_value::value::Map) -> Result<Uri, String> {
        let get = |k: &str| {
            h.get(&Value::str(k))
                .and_then(Value::as_str)
                .map(str::to_string)
        };
        let given_scheme = get("scheme");
        let (class, default_port) = class_for(given_scheme.as_deref())?;
        // Util.make_components_hash: a subclass's build sets the scheme to its name.
        let scheme = match class {
            "URI::Generic" => given_scheme,
            c => Some(c.trim_start_matches("URI::").to_ascii_lowercase()),
        };
        let mut path = get("path");
        let mut query = get("query");
        let mut opaque = get("opaque");
        match class {
            "URI::FTP" => {
                // FTP.build, then FTP#initialize undoing it (set_path redoes it below).
                let Some(p) = path else {
                    return Err("undefined method `sub' for nil".into());
                };
                let built = ftp_set_path(&p);
                let p = built.strip_prefix('/').unwrap_or(&built).to_string();
                path = Some(match p.strip_prefix("%2F") {
                    Some(rest) => format!("/{rest}"),
                    None => p,
                });
            }
            // LDAP.build: the query is rebuilt from the (absent) LDAP parts.
            "URI::LDAP" | "URI::LDAPS" => query = Some(String::new()),
            // MailTo.build: the opaque part is made from the (absent) `to`.
            "URI::MailTo" => opaque = Some(String::new()),
            _ => {}
        }
        let file = class == "URI::File";
        let mut u = Uri {
            class,
            parsed: false,
            ..Uri::default()
        };
        // Generic#initialize with arg_check, setter by setter (DEFAULT_PARSER: RFC 2396).
        static SCHEME: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
        if let Some(sc) = &scheme {
            if !re(&SCHEME, r"\A[a-zA-Z][\-+.a-zA-Z\d]*\z").is_match(sc) {
                return Err(format!("bad component(expected scheme component): {sc}"));
            }
            u.scheme = Some(sc.to_ascii_lowercase());
        }
        if let Some(ui) = get("userinfo") {
            if file {
                return Err("can not set userinfo for file URI".into());
            }
            let (user, password) = match ui.split_once(':') {
                Some((a, b)) => (a.to_string(), Some(b.to_string())),
                None => (ui.clone(), None),
            };
            static USERINFO: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
            let userinfo_re = re(
                &USERINFO,
                r"\A(?:[\-_.!~*'()a-zA-Z\d;:&=+$,]|%[a-fA-F\d]{2})*\z",
            );
            if !userinfo_re.is_match(&user) {
                return Err(format!(
                    "bad component(expected userinfo component or user component): {user}"
                ));
            }
            if let Some(pw) = &password {
                if !userinfo_re.is_match(pw) {
                    return Err("bad password component".into());
                }
            }
            u.user = Some(user);
            u.password = password;
        }
        let host = get("host").map(|v| {
            if v.contains(':') && !(v.starts_with('[') && v.ends_with(']')) {
                format!("[{v}]")
            } else {
                v
            }
        });
        if let Some(hs) = &host {
            static HOST: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
            let host_re = re(
                &HOST,
                r"\A(?:(?:[a-zA-Z0-9\-.]|%[0-9a-fA-F]{2})+|\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}|\[(?:(?:[a-fA-F\d]{1,4}:)*(?:[a-fA-F\d]{1,4}|\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3})|(?:(?:[a-fA-F\d]{1,4}:)*[a-fA-F\d]{1,4})?::(?:(?:[a-fA-F\d]{1,4}:)*(?:[a-fA-F\d]{1,4}|\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}))?)\])\z",
            );
            if !host_re.is_match(hs) {
                return Err(format!("bad component(expected host component): {hs}"));
            }
        }
        u.host = match (host, file) {
            (None, true) => Some(String::new()),
            (Some(h), true) if h == "localhost" => Some(String::new()),
            (h, _) => h,
        };
        if !file {
            u.port = match h.get(&Value::str("port")) {
                Some(Value::Int(p)) => Some(*p),
                _ => None,
            };
        }
        if let Some(p) = &path {
            static ABS: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
            static REL: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
            let seg = r"(?:[\-_.!~*'()a-zA-Z\d:@&=+$,]|%[a-fA-F\d]{2})*(?:;(?:[\-_.!~*'()a-zA-Z\d:@&=+$,]|%[a-fA-F\d]{2})*)*";
            let abs = re(&ABS, &format!(r"\A/{seg}(?:/{seg})*\z"));
            let rel = re(
                &REL,
                &format!(
                    r"\A(?:[\-_.!~*'()a-zA-Z\d;@&=+$,]|%[a-fA-F\d]{{2}})+(?:/{seg}(?:/{seg})*)?\z"
                ),
            );
            let absolute_only = u.scheme.as_deref().is_some_and(|s| s != "ftp");
            if !p.is_empty() {
                if absolute_only && !abs.is_match(p) {
                    return Err(format!(
                        "bad component(expected absolute path component): {p}"
                    ));
                }
                if !absolute_only && !abs.is_match(p) && !rel.is_match(p) {
                    return Err(format!(
                        "bad component(expected relative path component): {p}"
                    ));
                }
            }
            u.path = Some(if class == "URI::FTP" {
                ftp_set_path(p)
            } else {
                p.clone()
            });
        }
        u.query = query.as_deref().map(set_query).transpose()?;
        if let Some(o) = &opaque {
            if u.host.is_some() || u.port.is_some() || u.user.is_some() || u.path.is_some() {
                return Err("can not set opaque with host, port, userinfo or path".into());
            }
            static OPAQUE: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
            let opaque_re = re(
                &OPAQUE,
                r"\A(?:[\-_.!~*'()a-zA-Z\d;?:@&=+$,]|%[a-fA-F\d]{2})(?:[\-_.!~*'()a-zA-Z\d;/?:@&=+$,\[\]]|%[a-fA-F\d]{2})*\z",
            );
            if !opaque_re.is_match(o) {
                return Err(format!("bad component(expected opaque component): {o}"));
            }
            u.opaque = Some(o.clone());
        }
        u.fragment = get("fragment").map(|f| set_fragment(&f));
        if u.path.is_none() && u.opaque.is_none() {
            u.path = Some(String::new());
        }
        if u.port.is_none() && !file {
            u.port = default_port;
        }
        u.subclass_init(true)?;
        Ok(u)
    }

    /// What the subclasses' `initialize` do after `Generic#initialize` (`check`: arg_check,
    /// as `build` passes it).
    fn subclass_init(&mut self, check: bool) -> Result<(), String> {
        match self.class {
            "URI::FTP" => {
                let mut typecode = None;
                if let Some(p) = &self.path {
                    if let Some(i) = p.find(FTP_TYPECODE_PREFIX) {
                        let t = p[i + FTP_TYPECODE_PREFIX.len()..].to_string();
                        if check && !matches!(t.as_str(), "a" | "i" | "d") {
                            return Err(format!("bad typecode(expected a, i, d): {t}"));
                        }
                        typecode = Some(t);
                        self.path = Some(p[..i].to_string());
                    }
                }
                self.extra = Extra::Ftp { typecode };
            }
            "URI::LDAP" | "URI::LDAPS" => {
                if self.fragment.is_some() {
                    return Err("bad LDAP URL".into());
                }
                let Some(p) = &self.path else {
                    return Err("bad LDAP URL".into());
                };
                // `@path[1..-1]`: nil for an empty path.
                let dn = p.get(1..).map(str::to_string).filter(|_| !p.is_empty());
                let [attributes, scope, filter, extensions] = ldap_query(self.query.as_deref());
                self.extra = Extra::Ldap {
                    dn,
                    attributes,
                    scope,
                    filter,
                    extensions,
                };
            }
            "URI::MailTo" => {
                if self.opaque.is_none() {
                    if let Some(q) = &self.query {
                        self.opaque = Some(format!("?{q}"));
                    }
                }
                let Some(opaque) = self.opaque.clone() else {
                    return Err("missing opaque part for mailto URL".into());
                };
                let mut parts = opaque.splitn(2, '?');
                let to = parts
                    .next()
                    .filter(|_| !opaque.is_empty())
                    .map(str::to_string);
                let header = parts.next().map(str::to_string);
                static TO: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
                let to_ok = to
                    .as_deref()
                    .is_some_and(|t| re(&TO, r"\A(?:[^@,;]+@[^@,;]+(?:\z|[,;]))*\z").is_match(t));
                if !to_ok {
                    return Err(format!("unrecognised opaque part for mailtoURL: {opaque}"));
                }
                let headers = header
                    .map(|h| {
                        ruby_split(&h, '&')
                            .into_iter()
                            .map(|x| x.splitn(2, '=').map(str::to_string).collect())
                            .collect()
                    })
                    .unwrap_or_default();
                self.extra = Extra::MailTo { to, headers };
            }
            _ => {}
        }
        Ok(())
    }

    fn default_port(&self) -> Option<i64> {
        class_for(self.scheme.as_deref()).ok().and_then(|(_, p)| p)
    }

    /// `uri.path`: URI::FTP's drops the leading `/` and decodes a leading `%2F`.
    fn path_member(&self) -> Option<String> {
        let p = self.path.clone()?;
        if self.class != "URI::FTP" {
            return Some(p);
        }
        let p = p.strip_prefix('/').unwrap_or(&p).to_string();
        Some(match p.strip_prefix("%2F") {
            Some(rest) => format!("/{rest}"),
            None => p,
        })
    }

    /// `URI::Generic#userinfo`.
    pub(crate) fn userinfo(&self) -> Option<String> {
        match (&self.user, &self.password) {
            (None, _) => None,
            (Some(u), None) => Some(u.clone()),
            (Some(u), Some(p)) => Some(format!("{u}:{p}")),
        }
    }

    /// `URI::Generic#to_s` (and the subclasses': FTP's typecode, MailTo's own form).
    pub(crate) fn to_s(&self) -> String {
        if let Extra::MailTo { to, headers } = &self.extra {
            let mut s = format!("{}:", self.scheme.as_deref().unwrap_or_default());
            s.push_str(to.as_deref().unwrap_or_default());
            if !headers.is_empty() {
                s.push('?');
                let hs: Vec<String> = headers.iter().map(|h| h.join("=")).collect();
                s.push_str(&hs.join("&"));
            }
            if let Some(f) = &self.fragment {
                s.push('#');
                s.push_str(f);
            }
            return s;
        }
        if let Extra::Ftp {
            typecode: Some(t), ..
        } = &self.extra
        {
            let mut with = self.clone();
            with.extra = Extra::None;
            with.path = Some(format!(
                "{}{FTP_TYPECODE_PREFIX}{t}",
                self.path.as_deref().unwrap_or_default()
            ));
            return with.to_s();
        }
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
            (
                "parser".to_string(),
                if self.parsed {
                    parser_value()
                } else {
                    Value::Null
                },
            ),
        ];
        let mut fields = fields;
        match &self.extra {
            Extra::None => {}
            Extra::Ftp { typecode } => fields.push(("typecode".to_string(), opt(typecode))),
            Extra::Ldap {
                dn,
                attributes,
                scope,
                filter,
                extensions,
            } => {
                for (k, v) in [
                    ("dn", dn),
                    ("attributes", attributes),
                    ("scope", scope),
                    ("filter", filter),
                    ("extensions", extensions),
                ] {
                    fields.push((k.to_string(), opt(v)));
                }
            }
            Extra::MailTo { to, headers } => {
                fields.push(("to".to_string(), opt(to)));
                let hs = headers
                    .iter()
                    .map(|h| Value::Array(h.iter().map(|x| Value::str(x.as_str())).collect()))
                    .collect();
                fields.push(("headers".to_string(), Value::Array(hs)));
            }
        }
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
            extra: match o.class {
                "URI::FTP" => Extra::Ftp {
                    typecode: s("typecode"),
                },
                _ => Extra::None,
            },
            parsed: !matches!(get("parser"), Some(Value::Null) | None),
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
            "path" => opt(self.path_member()),
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
        if let Some(p) = self.path_member().filter(|p| !p.is_empty()) {
            out.push(("path".to_string(), Value::String(p)));
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
            ("ftp://h", "URI::FTP", "ftp://h/"),
            (
                "ftp://h/%2Fetc/x;type=z",
                "URI::FTP",
                "ftp://h/%2Fetc/x;type=z",
            ),
            ("ldap:///??sub??", "URI::LDAP", "ldap:///??sub??"),
            (
                "mailto:a@b.c;d@e.f?x=1&y=2&",
                "URI::MailTo",
                "mailto:a@b.c;d@e.f?x=1&y=2",
            ),
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
        // URI::Generic.build and the subclasses' (recorded from Ruby 3.3).
        let build = |pairs: &[(&str, &str)]| {
            let h: hiera_value::value::Map = pairs
                .iter()
                .map(|(k, v)| (Value::str(*k), Value::str(*v)))
                .collect();
            Uri::build(&h).map(|u| u.to_s())
        };
        assert_eq!(
            build(&[("scheme", "ftp"), ("host", "h"), ("path", "/a/b")]).unwrap(),
            "ftp://h/%2Fa/b"
        );
        assert_eq!(
            build(&[
                ("scheme", "ldap"),
                ("host", "h"),
                ("path", "/dc=x"),
                ("query", "q")
            ])
            .unwrap(),
            "ldap://h/dc=x?"
        );
        assert_eq!(build(&[]).unwrap(), "");
        assert_eq!(
            build(&[("scheme", "mailto"), ("opaque", "a@b.c")]).unwrap_err(),
            "bad component(expected opaque component): "
        );
        assert_eq!(
            build(&[("scheme", "http"), ("host", "h"), ("path", "x")]).unwrap_err(),
            "bad component(expected absolute path component): x"
        );
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
