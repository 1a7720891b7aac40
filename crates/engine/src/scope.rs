//! The node's scope: facts, `$trusted`, `$facts` and top-scope variables, as the compiler
//! of `puppet lookup` sets them up (spec §2.3, §5.3).

use crate::error::{Error, Result};
use crate::key::Segment;
use crate::slim::FactPaths;
use hiera_value::value::{Map, Value};
use indexmap::IndexMap;
use std::sync::{Arc, OnceLock};

/// How undefined variables are treated (Puppet's `strict` setting).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Strict {
    /// Undefined variables are empty strings, silently.
    Off,
    /// Undefined variables are empty strings, with a warning (Puppet 7).
    Warning,
    /// Puppet 8's default.
    #[default]
    Error,
}

impl Strict {
    /// `off`, `warning` or `error`, as `--strict` takes it.
    pub fn name(self) -> &'static str {
        match self {
            Strict::Off => "off",
            Strict::Warning => "warning",
            Strict::Error => "error",
        }
    }
}

/// Top-scope variables of a node.
///
/// The server facts that describe the host (`$servername`, `$serverip`, `$serverip6`, and
/// `$server_facts`, which holds them) are found only when a lookup reads them: finding the
/// host's addresses costs more than the rest of a lookup's scope.
///
/// The facts are held once: each top-level fact variable reads its value inside `$facts`,
/// and a clone shares them (a scope is copied into every session of its node; [`set`]
/// copies what is shared only then).
///
/// [`set`]: Scope::set
#[derive(Debug, Clone, Default)]
pub struct Scope {
    inner: Arc<Inner>,
}

#[derive(Debug, Clone)]
struct Inner {
    vars: IndexMap<String, Var>,
    /// The node's facts (`$facts`), which [`Var::Fact`] variables read.
    facts: Value,
    /// The environment the scope was built for (`$server_facts['environment']`).
    environment: String,
    /// `$server_facts`, built on first use.
    server_facts: OnceLock<Value>,
    /// A slim scope's kept fact paths: `facts` holds only them ([`Scope::slimmed`]).
    slim: Option<Arc<FactPaths>>,
}

impl Default for Inner {
    fn default() -> Inner {
        Inner {
            vars: IndexMap::default(),
            facts: Value::Hash(Map::default()),
            environment: String::new(),
            server_facts: OnceLock::new(),
            slim: None,
        }
    }
}

/// A top-scope variable's value, or where to find it when it is first read.
#[derive(Debug, Clone)]
enum Var {
    Value(Value),
    /// The value of the fact at this index of `$facts` (a top-level fact).
    Fact(usize),
    /// `$facts` itself.
    Facts,
    /// A server fact of the host (`HostFacts`), absent when the host has none.
    Host(&'static str),
    /// `$server_facts`: the server facts and the environment's name.
    ServerFacts,
}

/// The server facts that describe the host, in `Puppet::Node::ServerFacts.load`'s order.
const HOST_FACTS: [&str; 3] = ["servername", "serverip", "serverip6"];

impl Scope {
    /// Builds the scope for a node from its facts, as `generate_scope` does: every fact is a
    /// top-scope variable, plus `$facts`, `$trusted`, `$environment`, and `$name`/`$title`.
    pub fn from_facts(facts: Map, environment: &str) -> Scope {
        let trusted = trusted_from_facts(&facts);
        // Node#fact_merge sanitizes the facts before they become `$facts` and variables.
        let facts = match sanitize_fact(Value::Hash(facts)) {
            Value::Hash(h) => h,
            _ => Map::default(),
        };
        // Every fact, and the dozen variables set below.
        let mut vars: IndexMap<String, Var> = IndexMap::with_capacity(facts.len() + 12);
        for (i, (k, _)) in facts.iter().enumerate() {
            if let Value::String(k) = k {
                vars.insert(k.clone(), Var::Fact(i));
            }
        }
        // Node#add_server_facts: the server facts become node parameters unless a fact of
        // the same name is already one; `$server_facts` holds them all plus the environment.
        vars.entry("serverversion".into())
            .or_insert_with(|| Var::Value(Value::str(PUPPET_VERSION)));
        for name in HOST_FACTS {
            vars.entry(name.into()).or_insert(Var::Host(name));
        }
        let value = |v: Value| Var::Value(v);
        vars.insert("server_facts".into(), Var::ServerFacts);
        vars.insert("environment".into(), value(Value::str(environment)));
        vars.insert("facts".into(), Var::Facts);
        vars.insert("trusted".into(), value(trusted));
        vars.insert("name".into(), value(Value::str("main")));
        vars.insert("title".into(), value(Value::str("main")));
        vars.insert("module_name".into(), value(Value::str("")));
        Scope {
            inner: Arc::new(Inner {
                vars,
                facts: Value::Hash(facts),
                environment: environment.to_string(),
                server_facts: OnceLock::new(),
                slim: None,
            }),
        }
    }

    /// Facts Puppet refuses as node parameters: `server_facts` is a reserved variable that
    /// only the compiler may set.
    pub fn check_facts(facts: &Map) -> Result<()> {
        if facts.contains_key(&Value::str("server_facts")) {
            return Err(Error::run(
                "Attempt to assign to a reserved variable name: 'server_facts'",
            ));
        }
        Ok(())
    }

    /// Adds or replaces a top-scope variable (`--var NAME=VALUE`).
    pub fn set(&mut self, name: &str, value: Value) {
        let name = name.trim_start_matches("::");
        let inner = Arc::make_mut(&mut self.inner);
        // A server fact the host does not have was never a variable: setting it adds one
        // at the end, as for any new name.
        if let Some(Var::Host(k)) = inner.vars.get(name) {
            if !host_facts().contains_key(&Value::str(*k)) {
                inner.vars.shift_remove(name);
            }
        }
        inner.vars.insert(name.to_string(), Var::Value(value));
    }

    /// This scope with only the facts `keep` keeps (every other variable as it is): what a
    /// program holding many nodes keeps of each. A session reading it tells when a read
    /// needed more ([`Session::missed_facts`](crate::Session::missed_facts)); see
    /// [`slim`](crate::slim).
    pub fn slimmed(&self, keep: Arc<FactPaths>) -> Scope {
        let inner = &*self.inner;
        let facts = match &inner.facts {
            Value::Hash(h) => keep.prune(h),
            _ => Map::default(),
        };
        let vars = inner
            .vars
            .iter()
            .filter_map(|(name, var)| {
                let var = match var {
                    Var::Fact(_) => Var::Fact(facts.get_index_of(&Value::str(name.as_str()))?),
                    other => other.clone(),
                };
                Some((name.clone(), var))
            })
            .collect();
        Scope {
            inner: Arc::new(Inner {
                vars,
                facts: Value::Hash(facts),
                environment: inner.environment.clone(),
                server_facts: OnceLock::new(),
                slim: Some(keep),
            }),
        }
    }

    /// Whether this is a [slim](Self::slimmed) scope that cannot answer a read of the
    /// variable `root` then `segments` as its whole scope would.
    pub(crate) fn misses(&self, root: &str, segments: &[Segment]) -> bool {
        let Some(keep) = &self.inner.slim else {
            return false;
        };
        crate::slim::fact_path(root, segments).is_some_and(|path| !keep.covers(path))
    }

    /// The node's facts (`$facts`), when the scope has them (a [slim](Self::slimmed)
    /// scope's: those it kept).
    pub fn facts(&self) -> Option<&Map> {
        match self.inner.vars.get("facts") {
            Some(Var::Value(Value::Hash(m))) => Some(m),
            Some(Var::Facts) => self.inner.facts.as_hash(),
            _ => None,
        }
    }

    /// A variable by name (`x`, `::x`); `None` when it does not exist.
    pub fn get(&self, name: &str) -> Option<&Value> {
        self.resolve(
            self.inner
                .vars
                .get(name.strip_prefix("::").unwrap_or(name))?,
        )
    }

    fn resolve<'a>(&'a self, var: &'a Var) -> Option<&'a Value> {
        match var {
            Var::Value(v) => Some(v),
            Var::Fact(i) => match &self.inner.facts {
                Value::Hash(h) => h.get_index(*i).map(|(_, v)| v),
                _ => None,
            },
            Var::Facts => Some(&self.inner.facts),
            Var::Host(k) => host_facts().get(&Value::str(*k)),
            Var::ServerFacts => Some(self.server_facts_value()),
        }
    }

    /// `$server_facts`: `serverversion`, the host's server facts, then the environment's name.
    fn server_facts_value(&self) -> &Value {
        let inner = &*self.inner;
        inner.server_facts.get_or_init(|| {
            let mut m = Map::default();
            m.insert(Value::str("serverversion"), Value::str(PUPPET_VERSION));
            m.extend(host_facts().iter().map(|(k, v)| (k.clone(), v.clone())));
            m.insert(
                Value::str("environment"),
                Value::str(inner.environment.as_str()),
            );
            Value::Hash(m)
        })
    }

    /// Every top-scope variable, as a hash (for external backends).
    pub(crate) fn to_value(&self) -> Value {
        Value::Hash(
            self.inner
                .vars
                .iter()
                .filter_map(|(k, var)| Some((Value::str(k.as_str()), self.resolve(var)?.clone())))
                .collect(),
        )
    }
}

/// The Puppet version whose answers hiera-lookup gives (`$serverversion`).
pub(crate) const PUPPET_VERSION: &str = "8.10.0";

/// What `Puppet::Node::ServerFacts.load` says of the host `puppet lookup` runs on, found
/// once per process: the host's name (`servername`: the fqdn, else hostname + domain, else
/// the hostname) and the addresses of its primary interface (`serverip`, `serverip6`).
fn host_facts() -> &'static Map {
    static HOST: OnceLock<Map> = OnceLock::new();
    HOST.get_or_init(|| {
        let mut h = Map::default();
        let (ip, ip6) = crate::hostinfo::primary_addresses();
        let found = [host_name(), ip, ip6];
        for (name, value) in HOST_FACTS.into_iter().zip(found) {
            if let Some(v) = value {
                h.insert(Value::str(name), Value::str(v));
            }
        }
        h
    })
}

/// The host's name as Facter's `networking.fqdn` would give it on Linux: the kernel's
/// hostname, with the domain of /etc/resolv.conf (`domain`, else the first `search`) when
/// the hostname has none.
pub fn host_name() -> Option<String> {
    let read = |p: &str| {
        std::fs::read_to_string(p)
            .ok()
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty() && s != "(none)")
    };
    let host = read("/proc/sys/kernel/hostname")?;
    if host.contains('.') {
        return Some(host);
    }
    let resolv = std::fs::read_to_string("/etc/resolv.conf").unwrap_or_default();
    let word = |key: &str| {
        resolv.lines().find_map(|l| {
            let mut w = l.split_whitespace();
            (w.next() == Some(key)).then(|| w.next().map(str::to_string))?
        })
    };
    match word("domain").or_else(|| word("search")) {
        Some(d) => Some(format!("{host}.{d}")),
        None => Some(host),
    }
}

/// `Puppet::Node::Facts#sanitize_fact`: hashes (keys too) and arrays are kept, numbers,
/// booleans and Strings as they are, anything else becomes its `to_s`: a nil, at any depth,
/// is `""`.
pub fn sanitize_fact(v: Value) -> Value {
    match v {
        Value::Hash(h) => {
            let mut out = Map::with_capacity_and_hasher(h.len(), Default::default());
            for (k, x) in h {
                out.insert(sanitize_fact(k), sanitize_fact(x));
            }
            Value::Hash(out)
        }
        Value::Array(a) => Value::Array(a.into_iter().map(sanitize_fact).collect()),
        Value::Null => Value::str(""),
        v @ (Value::Bool(_)
        | Value::Int(_)
        | Value::BigInt(_)
        | Value::Float(_)
        | Value::String(_)) => v,
        Value::Object(o) if o.binary_bytes().is_some() => Value::Object(o),
        other => Value::String(hiera_value::text::to_s(&other)),
    }
}

/// `$trusted`: a complete `trusted` hash in the facts is used as is; otherwise Puppet builds
/// the "local" trusted information from the clientcert fact.
pub fn trusted_from_facts(facts: &Map) -> Value {
    if let Some(Value::Hash(t)) = facts.get(&Value::str("trusted")) {
        let has = |k: &str| t.contains_key(&Value::str(k));
        if has("authenticated") && has("certname") && has("extensions") {
            return Value::Hash(t.clone());
        }
    }
    let certname = facts
        .get(&Value::str("clientcert"))
        .cloned()
        .unwrap_or(Value::Null);
    let (hostname, domain) = match &certname {
        Value::String(c) => match c.split_once('.') {
            Some((h, d)) => (Value::str(h), Value::str(d)),
            None => (Value::str(c.as_str()), Value::Null),
        },
        _ => (Value::Null, Value::Null),
    };
    let mut t = Map::default();
    t.insert(Value::str("authenticated"), Value::str("local"));
    t.insert(Value::str("certname"), certname);
    t.insert(Value::str("extensions"), Value::Hash(Map::default()));
    t.insert(Value::str("hostname"), hostname);
    t.insert(Value::str("domain"), domain);
    t.insert(Value::str("external"), Value::Hash(Map::default()));
    Value::Hash(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts(pairs: &[(&str, Value)]) -> Map {
        pairs
            .iter()
            .map(|(k, v)| (Value::str(*k), v.clone()))
            .collect()
    }

    #[test]
    fn trusted_is_derived_from_clientcert() {
        let s = Scope::from_facts(
            facts(&[("clientcert", Value::str("web01.example.com"))]),
            "production",
        );
        let t = s.get("trusted").unwrap();
        assert_eq!(t.get("certname"), Some(&Value::str("web01.example.com")));
        assert_eq!(t.get("hostname"), Some(&Value::str("web01")));
        assert_eq!(t.get("domain"), Some(&Value::str("example.com")));
        assert_eq!(t.get("authenticated"), Some(&Value::str("local")));
    }

    #[test]
    fn trusted_without_clientcert_has_nil_certname() {
        let s = Scope::from_facts(Map::default(), "production");
        assert_eq!(
            s.get("trusted").unwrap().get("certname"),
            Some(&Value::Null)
        );
    }

    #[test]
    fn complete_trusted_hash_is_used_verbatim() {
        let mut t = Map::default();
        t.insert(Value::str("authenticated"), Value::str("remote"));
        t.insert(Value::str("certname"), Value::str("x"));
        t.insert(Value::str("extensions"), Value::Hash(Map::default()));
        let s = Scope::from_facts(facts(&[("trusted", Value::Hash(t.clone()))]), "production");
        assert_eq!(s.get("trusted"), Some(&Value::Hash(t)));
    }

    #[test]
    fn top_scope_names() {
        let s = Scope::from_facts(facts(&[("fqdn", Value::str("a.b"))]), "dev");
        assert_eq!(s.get("::fqdn"), Some(&Value::str("a.b")));
        assert_eq!(s.get("fqdn"), Some(&Value::str("a.b")));
        assert_eq!(s.get("environment"), Some(&Value::str("dev")));
        assert!(s.get("nope").is_none());
    }

    fn names(v: &Value) -> Vec<String> {
        match v {
            Value::Hash(h) => h.keys().map(|k| k.as_str().unwrap().to_string()).collect(),
            _ => panic!("not a hash"),
        }
    }

    #[test]
    fn server_facts_follow_the_facts_in_puppets_order() {
        let s = Scope::from_facts(facts(&[("a", Value::str("1"))]), "dev");
        let mut want: Vec<String> = vec!["a".into(), "serverversion".into()];
        want.extend(names(&Value::Hash(host_facts().clone())));
        want.extend(
            [
                "server_facts",
                "environment",
                "facts",
                "trusted",
                "name",
                "title",
                "module_name",
            ]
            .map(String::from),
        );
        assert_eq!(names(&s.to_value()), want);
        let sf = s.get("server_facts").unwrap();
        let mut want: Vec<String> = vec!["serverversion".into()];
        want.extend(names(&Value::Hash(host_facts().clone())));
        want.push("environment".into());
        assert_eq!(names(sf), want);
        assert_eq!(sf.get("environment"), Some(&Value::str("dev")));
        assert_eq!(s.get("serverversion"), Some(&Value::str(PUPPET_VERSION)));
        for name in HOST_FACTS {
            assert_eq!(s.get(name), host_facts().get(&Value::str(name)));
        }
    }

    #[test]
    fn a_fact_named_like_a_server_fact_wins() {
        let s = Scope::from_facts(
            facts(&[
                ("servername", Value::str("mine")),
                ("serverversion", Value::str("1")),
            ]),
            "production",
        );
        assert_eq!(s.get("servername"), Some(&Value::str("mine")));
        assert_eq!(s.get("serverversion"), Some(&Value::str("1")));
        // $server_facts keeps the server's own values.
        let sf = s.get("server_facts").unwrap();
        assert_eq!(sf.get("serverversion"), Some(&Value::str(PUPPET_VERSION)));
        assert_eq!(
            sf.get("servername"),
            host_facts().get(&Value::str("servername"))
        );
    }

    #[test]
    fn setting_a_server_fact_keeps_its_place_only_when_the_host_has_it() {
        for name in HOST_FACTS {
            let mut s = Scope::from_facts(Map::default(), "production");
            let before = names(&s.to_value());
            s.set(name, Value::str("x"));
            let after = names(&s.to_value());
            assert_eq!(s.get(name), Some(&Value::str("x")));
            if before.iter().any(|n| n == name) {
                assert_eq!(before, after);
            } else {
                assert_eq!(after.last().map(String::as_str), Some(name));
            }
        }
    }

    #[test]
    fn setting_the_environment_leaves_server_facts_as_built() {
        let mut s = Scope::from_facts(Map::default(), "production");
        s.set("environment", Value::str("other"));
        assert_eq!(s.get("environment"), Some(&Value::str("other")));
        assert_eq!(
            s.get("server_facts").unwrap().get("environment"),
            Some(&Value::str("production"))
        );
    }
}
