//! The node's scope: facts, `$trusted`, `$facts` and top-scope variables, as the compiler
//! of `puppet lookup` sets them up (spec §2.3, §5.3).

use crate::error::{Error, Result};
use crate::value::{Map, Value};
use indexmap::IndexMap;
use std::path::Path;

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

use crate::facts::TRUSTED_INFORMATION_FACTS;

/// Top-scope variables of a node.
#[derive(Debug, Clone, Default)]
pub struct Scope {
    vars: IndexMap<String, Value>,
}

impl Scope {
    /// Builds the scope for a node from its facts, as `generate_scope` does: every fact is a
    /// top-scope variable, plus `$facts`, `$trusted`, `$environment`, and `$name`/`$title`.
    pub fn from_facts(facts: Map, environment: &str) -> Scope {
        let mut vars: IndexMap<String, Value> = IndexMap::default();
        for (k, v) in &facts {
            if let Value::String(k) = k {
                vars.insert(k.clone(), v.clone());
            }
        }
        let trusted = trusted_from_facts(&facts);
        // Node#add_server_facts: the server facts become node parameters unless a fact of
        // the same name is already one; `$server_facts` holds them all plus the environment.
        let mut server = server_facts();
        for (k, v) in &server {
            if let Value::String(k) = k {
                vars.entry(k.clone()).or_insert_with(|| v.clone());
            }
        }
        server.insert(Value::str("environment"), Value::str(environment));
        vars.insert("server_facts".into(), Value::Hash(server));
        vars.insert("environment".into(), Value::str(environment));
        vars.insert("facts".into(), Value::Hash(facts));
        vars.insert("trusted".into(), trusted);
        vars.insert("name".into(), Value::str("main"));
        vars.insert("title".into(), Value::str("main"));
        vars.insert("module_name".into(), Value::str(""));
        Scope { vars }
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
        self.vars
            .insert(name.trim_start_matches("::").to_string(), value);
    }

    /// A variable by name (`x`, `::x`); `None` when it does not exist.
    pub(crate) fn get(&self, name: &str) -> Option<&Value> {
        self.vars.get(name.strip_prefix("::").unwrap_or(name))
    }

    /// Every top-scope variable, as a hash (for external backends).
    pub(crate) fn to_value(&self) -> Value {
        Value::Hash(
            self.vars
                .iter()
                .map(|(k, v)| (Value::str(k.as_str()), v.clone()))
                .collect(),
        )
    }
}

/// The Puppet version whose answers hiera-lookup gives (`$serverversion`).
pub(crate) const PUPPET_VERSION: &str = "8.10.0";

/// `Puppet::Node::ServerFacts.load` as `puppet lookup` runs it on this host: the Puppet
/// version and the host's name (`servername`: the fqdn, else hostname + domain, else the
/// hostname) and the addresses of its primary interface (`serverip`, `serverip6`).
fn server_facts() -> Map {
    use std::sync::OnceLock;
    static HOST: OnceLock<Map> = OnceLock::new();
    let mut m = Map::default();
    m.insert(Value::str("serverversion"), Value::str(PUPPET_VERSION));
    m.extend(
        HOST.get_or_init(|| {
            let mut h = Map::default();
            let (ip, ip6) = crate::hostinfo::primary_addresses();
            if let Some(name) = host_name() {
                h.insert(Value::str("servername"), Value::str(name));
            }
            if let Some(ip) = ip {
                h.insert(Value::str("serverip"), Value::str(ip));
            }
            if let Some(ip6) = ip6 {
                h.insert(Value::str("serverip6"), Value::str(ip6));
            }
            h
        })
        .iter()
        .map(|(k, v)| (k.clone(), v.clone())),
    );
    m
}

/// The host's name as Facter's `networking.fqdn` would give it on Linux: the kernel's
/// hostname, with the domain of /etc/resolv.conf (`domain`, else the first `search`) when
/// the hostname has none.
pub(crate) fn host_name() -> Option<String> {
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

/// `$trusted`: a complete `trusted` hash in the facts is used as is; otherwise Puppet builds
/// the "local" trusted information from the clientcert fact.
pub(crate) fn trusted_from_facts(facts: &Map) -> Value {
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

/// Reads a `--facts` file as Puppet does: `.json` as JSON, `.yaml`/`.yml` as YAML, anything
/// else JSON then YAML, with Puppet's rule that hostname, domain, fqdn and clientcert are
/// overridden together. Beyond Puppet, every shape of `crate::facts::shapes` is read (the
/// `puppet facts` wrapper, the fact cache's Ruby-tagged YAML, PuppetDB's answers for one node).
pub fn load_facts_file(path: &Path, display: &str) -> Result<Map> {
    let nodes = crate::facts::shapes::parse_text(
        &crate::limits::read_text(path).map_err(|e| {
            crate::error::unreadable("The facts file", display, &e, crate::facts::FACTS_FIX)
        })?,
        display,
    )?;
    let facts = crate::facts::pick(nodes, None, display)?.values;
    let has = |k: &str| facts.contains_key(&Value::str(k));
    if TRUSTED_INFORMATION_FACTS.iter().any(|k| has(k))
        && !TRUSTED_INFORMATION_FACTS.iter().all(|k| has(k))
    {
        return Err(Error::run(format!(
            "When overriding any of the {} facts with {display} given via the --facts flag, they must all be overridden.",
            TRUSTED_INFORMATION_FACTS.join(",")
        )));
    }
    Ok(facts)
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
}
