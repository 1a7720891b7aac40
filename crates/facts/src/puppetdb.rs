//! PuppetDB as a facts source: a node's facts and trusted data from
//! `/pdb/query/v4/inventory`, the certnames of every active node or of a PQL query from
//! `/pdb/query/v4`. HTTPS with the client certificate, key and CA of Puppet's ssldir (PuppetDB
//! requires a client certificate from Puppet's CA), or plain HTTP for a local instance.
//!
//! Every failure is one line naming the server: unreachable, TLS refused, 401/403, a query
//! PuppetDB rejects, an answer that is not JSON, a node it does not know.

use super::NodeFacts;
use hiera_engine::error::{Error, Result};
use hiera_value::value::Value;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Where PuppetDB is and how to talk to it.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Base URLs (`https://puppetdb:8081`), tried in order until one answers.
    pub urls: Vec<String>,
    /// CA certificate(s) that signed PuppetDB's certificate (PEM).
    pub cacert: Option<PathBuf>,
    /// Client certificate and its private key (PEM).
    pub cert: Option<PathBuf>,
    /// The client certificate's private key (PEM).
    pub key: Option<PathBuf>,
    /// Bound on each request, connection included.
    pub timeout: Duration,
}

impl Options {
    /// The TLS files Puppet itself uses: `$ssldir/certs/ca.pem`, `$ssldir/certs/CERTNAME.pem`
    /// and `$ssldir/private_keys/CERTNAME.pem`, each only when the flag left it unset and the
    /// file exists.
    /// `certname` is Puppet's setting (puppet.conf's, else this host's name).
    pub fn with_ssldir(mut self, ssldir: &Path, certname: Option<&str>) -> Options {
        let host = hiera_engine::scope::host_name().unwrap_or_default();
        let certname = certname.unwrap_or(&host).to_ascii_lowercase();
        let exists = |p: PathBuf| p.is_file().then_some(p);
        if self.cacert.is_none() {
            self.cacert = exists(ssldir.join("certs/ca.pem"));
        }
        if self.cert.is_none() && self.key.is_none() {
            let cert = exists(ssldir.join(format!("certs/{certname}.pem")));
            let key = exists(ssldir.join(format!("private_keys/{certname}.pem")));
            if let (Some(c), Some(k)) = (cert, key) {
                self.cert = Some(c);
                self.key = Some(k);
            }
        }
        self
    }
}

/// `$confdir/puppetdb.conf`'s `[main] server_urls` (comma-separated), if the file exists.
pub fn server_urls_from_conf(confdir: &Path) -> Result<Option<Vec<String>>> {
    let file = confdir.join("puppetdb.conf");
    if !file.is_file() {
        return Ok(None);
    }
    let display = file.display().to_string();
    let text = hiera_value::limits::read_text(&file).map_err(|e| {
        Error::run(format!(
            "Could not read {display}: {}",
            hiera_engine::error::io_reason(&e)
        ))
    })?;
    let mut section = "main".to_string();
    for line in text.lines() {
        let line = line.trim();
        if line.starts_with('#') || line.starts_with(';') || line.is_empty() {
            continue;
        }
        if let Some(s) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            section = s.trim().to_string();
            continue;
        }
        if let Some((k, v)) = line.split_once('=') {
            if section == "main" && k.trim() == "server_urls" {
                let urls = split_urls(v);
                if urls.is_empty() {
                    return Err(Error::run(format!("{display}: server_urls is empty")));
                }
                return Ok(Some(urls));
            }
        }
    }
    Ok(None)
}

/// Whether `$confdir/routes.yaml` makes PuppetDB the facts terminus of `puppet lookup`'s run
/// mode (`server:` or `master:` → `facts:` → `terminus: puppetdb`), as on a Puppet Server
/// set up for PuppetDB.
pub fn routes_facts_to_puppetdb(confdir: &Path) -> bool {
    let Ok(text) = hiera_value::limits::read_text(confdir.join("routes.yaml")) else {
        return false;
    };
    let Ok(v) = hiera_formats::yaml::load(&text) else {
        return false;
    };
    ["server", "master"].iter().any(|mode| {
        v.get(mode)
            .and_then(|m| m.get("facts"))
            .and_then(|f| f.get("terminus"))
            .is_some_and(|t| t == &Value::str("puppetdb"))
    })
}

/// `a,b` → the URLs, without trailing slashes.
pub fn split_urls(v: &str) -> Vec<String> {
    v.split(',')
        .map(|u| u.trim().trim_end_matches('/').to_string())
        .filter(|u| !u.is_empty())
        .collect()
}

/// A connection to PuppetDB.
pub struct Client {
    agent: Agent,
    urls: Vec<String>,
}

/// The HTTP client: ureq on rustls with the `puppetdb` feature; without it there is none, and
/// no `Client` can be made.
#[cfg(feature = "puppetdb")]
type Agent = ureq::Agent;
#[cfg(not(feature = "puppetdb"))]
enum Agent {}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client").field("urls", &self.urls).finish()
    }
}

/// Most bytes one answer may have (the facts of a whole chunk of nodes).
#[cfg(feature = "puppetdb")]
const MAX_ANSWER: u64 = hiera_value::limits::MAX_FILE_SIZE;

impl Client {
    /// A client for `opts`, in a build without PuppetDB support: an error saying so.
    #[cfg(not(feature = "puppetdb"))]
    pub fn new(opts: &Options) -> Result<Client> {
        Err(Error::Usage(format!(
            "PuppetDB ({}) cannot be asked: this program was built without PuppetDB support (the `puppetdb` feature of hiera-facts); give the nodes' facts as files",
            opts.urls.join(", ")
        )))
    }

    /// A client for `opts`: reads the TLS files (an unreadable one is an error).
    #[cfg(feature = "puppetdb")]
    pub fn new(opts: &Options) -> Result<Client> {
        use ureq::tls::{RootCerts, TlsConfig};
        if opts.urls.is_empty() {
            return Err(Error::run("PuppetDB: no server URL"));
        }
        for u in &opts.urls {
            if !(u.starts_with("http://") || u.starts_with("https://")) {
                return Err(Error::run(format!(
                    "PuppetDB URL {u} is not http:// or https://"
                )));
            }
        }
        let mut tls = TlsConfig::builder();
        if let Some(ca) = &opts.cacert {
            let certs = read_certs(ca, "CA certificate")?;
            tls = tls.root_certs(RootCerts::new_with_certs(&certs));
        }
        match (&opts.cert, &opts.key) {
            (Some(c), Some(k)) => {
                let chain = read_certs(c, "client certificate")?;
                let key = read_key(k)?;
                tls = tls.client_cert(Some(ureq::tls::ClientCert::new_with_certs(&chain, key)));
            }
            (None, None) => {}
            _ => {
                return Err(Error::run(
                    "PuppetDB: a client certificate needs its key, and a key its certificate (--puppetdb-cert and --puppetdb-key)",
                ))
            }
        }
        let agent = ureq::Agent::config_builder()
            .tls_config(tls.build())
            .timeout_global(Some(opts.timeout))
            .http_status_as_error(false)
            .max_redirects(0)
            .user_agent(concat!("hiera-lookup/", env!("CARGO_PKG_VERSION")))
            .build()
            .new_agent();
        Ok(Client {
            agent,
            urls: opts.urls.clone(),
        })
    }

    /// Without PuppetDB support there is no client to ask.
    #[cfg(not(feature = "puppetdb"))]
    fn query(&self, _: &str, _: serde_json::Value) -> Result<Value> {
        match self.agent {}
    }

    /// POSTs a query to `endpoint` (`/pdb/query/v4/inventory`, `/pdb/query/v4`) on the first
    /// server that answers, and parses the JSON answer.
    #[cfg(feature = "puppetdb")]
    fn query(&self, endpoint: &str, query: serde_json::Value) -> Result<Value> {
        let body = serde_json::json!({ "query": query }).to_string();
        let mut last = None;
        for base in &self.urls {
            let url = format!("{base}{endpoint}");
            let sent = self
                .agent
                .post(&url)
                .header("Content-Type", "application/json")
                .header("Accept", "application/json")
                .send(body.as_str());
            let mut resp = match sent {
                Ok(r) => r,
                Err(e) => {
                    // Unreachable: the next server of server_urls, as Puppet's terminus does.
                    last = Some(transport_error(base, &e));
                    continue;
                }
            };
            let status = resp.status().as_u16();
            let text = resp
                .body_mut()
                .with_config()
                .limit(MAX_ANSWER)
                .read_to_string()
                .map_err(|e| transport_error(base, &e))?;
            if status != 200 {
                return Err(status_error(base, status, &text));
            }
            return hiera_formats::json::parse_fast(&text).map_err(|e| {
                Error::run(format!(
                    "PuppetDB at {base} answered {endpoint} with something that is not JSON ({e})"
                ))
            });
        }
        Err(last.unwrap_or_else(|| Error::run("PuppetDB: no server URL")))
    }

    /// The first URL (for messages and batch lines).
    pub(crate) fn url(&self) -> &str {
        &self.urls[0]
    }

    /// A node's facts and trusted data; `None` when PuppetDB has no active node of that name.
    pub(crate) fn node(&self, certname: &str) -> Result<Option<NodeFacts>> {
        let v = self.query(
            "/pdb/query/v4/inventory",
            serde_json::json!(["=", "certname", certname]),
        )?;
        let mut nodes = self.inventory_nodes(v)?;
        Ok(nodes.pop())
    }

    /// The facts of the named nodes, in PuppetDB's order (unknown names are left out).
    pub(crate) fn nodes(&self, certnames: &[String]) -> Result<Vec<NodeFacts>> {
        if certnames.is_empty() {
            return Ok(Vec::new());
        }
        let v = self.query(
            "/pdb/query/v4/inventory",
            serde_json::json!(["in", "certname", ["array", certnames]]),
        )?;
        self.inventory_nodes(v)
    }

    fn inventory_nodes(&self, v: Value) -> Result<Vec<NodeFacts>> {
        let display = format!("PuppetDB at {}", self.url());
        match v {
            Value::Array(items) if items.is_empty() => Ok(Vec::new()),
            Value::Array(items) => {
                let mut nodes = super::shapes::from_value(Value::Array(items), &display)?;
                for n in &mut nodes {
                    n.source = n.certname.clone().unwrap_or_default();
                }
                Ok(nodes)
            }
            _ => Err(Error::run(format!(
                "{display} answered /pdb/query/v4/inventory with something that is not a list of nodes"
            ))),
        }
    }

    /// The certnames of every active node (`None`), or of a PQL query's answer (each row's
    /// `certname`), sorted as PuppetDB returns them, without duplicates.
    pub(crate) fn certnames(&self, pql: Option<&str>) -> Result<Vec<String>> {
        let pql = pql.unwrap_or("inventory[certname] { order by certname }");
        let v = self.query("/pdb/query/v4", serde_json::json!(pql))?;
        let Value::Array(rows) = v else {
            return Err(Error::run(format!(
                "PuppetDB at {} answered the query with something that is not a list",
                self.url()
            )));
        };
        let mut seen = std::collections::HashSet::new();
        let mut out = Vec::new();
        for r in rows {
            match r.get("certname") {
                Some(Value::String(c)) => {
                    if seen.insert(c.clone()) {
                        out.push(c.clone());
                    }
                }
                _ => {
                    return Err(Error::run(format!(
                        "the --nodes-query answer has rows without a certname: project it, e.g. inventory[certname] {{ facts.os.family = \"RedHat\" }} (PuppetDB at {})",
                        self.url()
                    )))
                }
            }
        }
        Ok(out)
    }
}

#[cfg(feature = "puppetdb")]
fn read_certs(path: &Path, what: &str) -> Result<Vec<ureq::tls::Certificate<'static>>> {
    let bytes = read_pem(path, what)?;
    let mut certs = Vec::new();
    for item in ureq::tls::parse_pem(&bytes) {
        match item {
            Ok(ureq::tls::PemItem::Certificate(c)) => certs.push(c),
            Ok(_) => {}
            Err(e) => return Err(pem_error(path, what, &e)),
        }
    }
    if certs.is_empty() {
        return Err(Error::run(format!(
            "PuppetDB: the {what} {} holds no PEM certificate",
            path.display()
        )));
    }
    Ok(certs)
}

#[cfg(feature = "puppetdb")]
fn read_key(path: &Path) -> Result<ureq::tls::PrivateKey<'static>> {
    let what = "client key";
    let bytes = read_pem(path, what)?;
    for item in ureq::tls::parse_pem(&bytes) {
        match item {
            Ok(ureq::tls::PemItem::PrivateKey(k)) => return Ok(k),
            Ok(_) => {}
            Err(e) => return Err(pem_error(path, what, &e)),
        }
    }
    Err(Error::run(format!(
        "PuppetDB: the {what} {} holds no PEM private key",
        path.display()
    )))
}

#[cfg(feature = "puppetdb")]
fn read_pem(path: &Path, what: &str) -> Result<Vec<u8>> {
    hiera_value::limits::read_file(path).map_err(|e| {
        Error::run(format!(
            "PuppetDB: cannot read the {what} {}: {}",
            path.display(),
            hiera_engine::error::io_reason(&e)
        ))
    })
}

#[cfg(feature = "puppetdb")]
fn pem_error(path: &Path, what: &str, e: &ureq::Error) -> Error {
    Error::run(format!(
        "PuppetDB: the {what} {} is not valid PEM ({e})",
        path.display()
    ))
}

/// A failure before any HTTP answer, in one line.
#[cfg(feature = "puppetdb")]
fn transport_error(base: &str, e: &ureq::Error) -> Error {
    let why = match e {
        ureq::Error::Timeout(_) => "timed out".to_string(),
        ureq::Error::HostNotFound => "host not found".to_string(),
        ureq::Error::Io(io)
            if base.starts_with("https://")
                && matches!(
                    io.kind(),
                    std::io::ErrorKind::BrokenPipe | std::io::ErrorKind::ConnectionReset
                ) =>
        {
            format!(
                "the TLS handshake was cut off ({}): PuppetDB wants a client certificate its CA signed",
                hiera_engine::error::io_reason(io)
            )
        }
        ureq::Error::Io(io) => hiera_engine::error::io_reason(io),
        ureq::Error::Rustls(t) => format!("TLS failed: {t}"),
        ureq::Error::Tls(t) => format!("TLS failed: {t}"),
        ureq::Error::BodyExceedsLimit(n) => format!("the answer is larger than {n} bytes"),
        other => other.to_string(),
    };
    let tls = ["certificate", "alert", "handshake", "TLS"]
        .iter()
        .any(|w| why.contains(w));
    if tls {
        return Error::run(format!(
            "TLS with PuppetDB at {base} failed: {why} (check --puppetdb-cacert, --puppetdb-cert and --puppetdb-key, by default Puppet's ssldir)"
        ));
    }
    Error::run(format!("Could not reach PuppetDB at {base}: {why}"))
}

/// An HTTP error status, with the first line of PuppetDB's explanation.
#[cfg_attr(not(feature = "puppetdb"), allow(dead_code))]
fn status_error(base: &str, status: u16, body: &str) -> Error {
    let first = body
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("")
        .chars()
        .take(300)
        .collect::<String>();
    let what = match status {
        401 | 403 => "refused the request (check the client certificate, --puppetdb-cert/--puppetdb-key, and PuppetDB's certificate allowlist)",
        400 => "rejected the query",
        404 => "has no such endpoint (is this PuppetDB?)",
        _ => "failed",
    };
    Error::run(format!(
        "PuppetDB at {base} {what}: HTTP {status}{}",
        if first.is_empty() {
            String::new()
        } else {
            format!(": {first}")
        }
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn puppetdb_conf_and_routes_yaml() {
        let dir = std::env::temp_dir().join(format!("hl-pdb-conf-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        assert_eq!(server_urls_from_conf(&dir).unwrap(), None);
        assert!(!routes_facts_to_puppetdb(&dir));
        std::fs::write(
            dir.join("puppetdb.conf"),
            "[main]\nserver_urls = https://a:8081/, https://b:8081\nsoft_write_failure = false\n",
        )
        .unwrap();
        assert_eq!(
            server_urls_from_conf(&dir).unwrap(),
            Some(vec![
                "https://a:8081".to_string(),
                "https://b:8081".to_string()
            ])
        );
        std::fs::write(
            dir.join("routes.yaml"),
            "---\nmaster:\n  facts:\n    terminus: puppetdb\n    cache: yaml\n",
        )
        .unwrap();
        assert!(routes_facts_to_puppetdb(&dir));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn status_errors_name_the_server_and_the_reason() {
        let e = status_error("https://p:8081", 403, "Forbidden request: x\nmore").to_string();
        assert_eq!(
            e,
            "PuppetDB at https://p:8081 refused the request (check the client certificate, --puppetdb-cert/--puppetdb-key, and PuppetDB's certificate allowlist): HTTP 403: Forbidden request: x"
        );
        assert!(Client::new(&Options {
            urls: vec!["ftp://x".into()],
            ..Options::default()
        })
        .is_err());
    }
}
