//! PuppetDB as a facts source, without PuppetDB: the answers a real PuppetDB 8.4 gave
//! (tests/puppetdb/recorded.jsonl, written by tests/puppetdb/run.sh) are replayed from a
//! loopback HTTPS server that, like PuppetDB, requires a client certificate. Its CA, server and
//! client certificates are made here with rcgen. Our outputs must be the ones the real run
//! printed (tests/puppetdb/expected/).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::Arc;
use std::time::Duration;

fn here() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/puppetdb")
}

/// One recorded exchange.
struct Exchange {
    path: String,
    body: serde_json::Value,
    status: u16,
    response: String,
}

fn recording() -> Vec<Exchange> {
    let text = std::fs::read_to_string(here().join("recorded.jsonl")).unwrap();
    text.lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            Exchange {
                path: v["path"].as_str().unwrap().to_string(),
                body: v["body"].clone(),
                status: v["status"].as_u64().unwrap() as u16,
                response: v["response"].as_str().unwrap().to_string(),
            }
        })
        .collect()
}

/// The test PKI, as PEM files in a temp dir.
struct Pki {
    dir: PathBuf,
    server: Arc<rustls::ServerConfig>,
}

fn pki(name: &str) -> Pki {
    use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, KeyPair, SanType};
    let dir = std::env::temp_dir().join(format!("hiera-lookup-pdb-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let ca_key = KeyPair::generate().unwrap();
    let mut ca_params = CertificateParams::new(vec![]).unwrap();
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca_params
        .distinguished_name
        .push(DnType::CommonName, "Puppet CA: test");
    let ca = ca_params.clone().self_signed(&ca_key).unwrap();
    let srv_key = KeyPair::generate().unwrap();
    let mut srv_params = CertificateParams::new(vec!["localhost".into()]).unwrap();
    srv_params
        .subject_alt_names
        .push(SanType::IpAddress("127.0.0.1".parse().unwrap()));
    let srv = srv_params.signed_by(&srv_key, &ca, &ca_key).unwrap();
    let cli_key = KeyPair::generate().unwrap();
    let mut cli_params = CertificateParams::new(vec![]).unwrap();
    cli_params
        .distinguished_name
        .push(DnType::CommonName, "puppetdb-client");
    let cli = cli_params.signed_by(&cli_key, &ca, &ca_key).unwrap();
    // Another CA, that signed nothing here.
    let other_key = KeyPair::generate().unwrap();
    let other = ca_params.self_signed(&other_key).unwrap();
    for (f, text) in [
        ("ca.pem", ca.pem()),
        ("other-ca.pem", other.pem()),
        ("client.pem", cli.pem()),
        ("client.key", cli_key.serialize_pem()),
    ] {
        std::fs::write(dir.join(f), text).unwrap();
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut roots = rustls::RootCertStore::empty();
    roots.add(ca.der().clone()).unwrap();
    let verifier = rustls::server::WebPkiClientVerifier::builder_with_provider(
        Arc::new(roots),
        provider.clone(),
    )
    .build()
    .unwrap();
    let key = rustls::pki_types::PrivateKeyDer::Pkcs8(srv_key.serialize_der().into());
    let server = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_client_cert_verifier(verifier)
        .with_single_cert(vec![srv.der().clone()], key)
        .unwrap();
    Pki {
        dir,
        server: Arc::new(server),
    }
}

/// Serves the recording over HTTPS on a loopback port (at most `max` connections, each with
/// a read timeout; the thread ends with them). `deny` answers 403 to everything, as PuppetDB
/// does for a certificate it does not allow.
fn serve(pki: &Pki, max: usize, deny: bool) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let config = pki.server.clone();
    let exchanges = Arc::new(recording());
    std::thread::spawn(move || {
        for stream in listener.incoming().take(max) {
            let Ok(stream) = stream else { continue };
            let _ = stream.set_read_timeout(Some(Duration::from_secs(20)));
            let _ = stream.set_write_timeout(Some(Duration::from_secs(20)));
            let config = config.clone();
            let exchanges = exchanges.clone();
            std::thread::spawn(move || {
                let Ok(conn) = rustls::ServerConnection::new(config) else {
                    return;
                };
                let mut tls = rustls::StreamOwned::new(conn, stream);
                let _ = answer(&mut tls, &exchanges, deny);
            });
        }
    });
    port
}

fn answer(
    tls: &mut (impl Read + Write),
    exchanges: &[Exchange],
    deny: bool,
) -> std::io::Result<()> {
    let mut reader = BufReader::new(&mut *tls);
    let mut request_line = String::new();
    reader.read_line(&mut request_line)?;
    let path = request_line
        .split_whitespace()
        .nth(1)
        .unwrap_or("")
        .to_string();
    let mut length = 0usize;
    loop {
        let mut h = String::new();
        reader.read_line(&mut h)?;
        let h = h.trim_end();
        if h.is_empty() {
            break;
        }
        if let Some((k, v)) = h.split_once(':') {
            if k.eq_ignore_ascii_case("content-length") {
                length = v.trim().parse().unwrap_or(0);
            }
        }
    }
    let mut body = vec![0u8; length.min(1 << 20)];
    reader.read_exact(&mut body)?;
    let body: serde_json::Value = serde_json::from_slice(&body).unwrap_or_default();
    let (status, text) = if deny {
        (
            403,
            "Forbidden request: /pdb/query/v4 (method :post)".to_string(),
        )
    } else {
        match exchanges.iter().find(|e| e.path == path && e.body == body) {
            Some(e) => (e.status, e.response.clone()),
            None => (500, format!("no recorded answer for {path} {body}")),
        }
    };
    let head = format!(
        "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        text.len()
    );
    tls.write_all(head.as_bytes())?;
    tls.write_all(text.as_bytes())?;
    tls.flush()
}

fn lookup(port: u16, tls: &[String], args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_hiera-lookup"))
        .current_dir(here().join("case"))
        .env("HIERA_LOOKUP_PUPPET_CONF", "/dev/null")
        .env("HIERA_LOOKUP_CACHE", "off")
        .args(["--hiera_config", "hiera.yaml", "--puppetdb"])
        .arg(format!("https://127.0.0.1:{port}"))
        .args(tls)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

fn tls_flags(pki: &Pki, ca: &str) -> Vec<String> {
    let f = |n: &str| pki.dir.join(n).display().to_string();
    vec![
        "--puppetdb-cacert".into(),
        f(ca),
        "--puppetdb-cert".into(),
        f("client.pem"),
        "--puppetdb-key".into(),
        f("client.key"),
    ]
}

/// The lookups of tests/puppetdb/run.sh, answered as the real PuppetDB run answered them.
#[test]
fn replayed_puppetdb_gives_the_recorded_answers() {
    let pki = pki("replay");
    let port = serve(&pki, 64, false);
    let tls = tls_flags(&pki, "ca.pem");
    let redhat = "inventory[certname] { facts.os.family = \"RedHat\" }";
    let bad = "inventory[certname] { facts.os.family = ";
    let none = "inventory[certname] { facts.os.family = \"Plan9\" }";
    let cases: [(&str, Vec<&str>); 8] = [
        (
            "node-trusted-role",
            vec!["--node", "web01.example.com", "profile::ntp::servers"],
        ),
        (
            "node-trusted-whoami",
            vec!["--node", "web01.example.com", "whoami"],
        ),
        (
            "node-debian",
            vec![
                "--node",
                "facter4-11-debian-13-x86-64.example.com",
                "profile::ntp::servers",
            ],
        ),
        (
            "node-unknown",
            vec!["--node", "nosuch.example.com", "profile::ntp::servers"],
        ),
        ("all-active", vec!["profile::ntp::servers"]),
        ("query-redhat", vec!["--nodes-query", redhat, "whoami"]),
        ("query-bad", vec!["--nodes-query", bad, "whoami"]),
        ("query-none", vec!["--nodes-query", none, "whoami"]),
    ];
    let expected = here().join("expected");
    for (name, args) in cases {
        let o = lookup(port, &tls, &args);
        let read =
            |ext: &str| std::fs::read_to_string(expected.join(format!("{name}.{ext}"))).unwrap();
        let err = String::from_utf8_lossy(&o.stderr)
            .replace(&format!("https://127.0.0.1:{port}"), "<PUPPETDB>");
        assert_eq!(
            String::from_utf8_lossy(&o.stdout),
            read("out"),
            "{name}: {err}"
        );
        assert_eq!(err, read("err"), "{name}");
        assert_eq!(
            o.status.code().unwrap().to_string(),
            read("status").trim(),
            "{name}"
        );
    }
    let _ = std::fs::remove_dir_all(&pki.dir);
}

/// TLS and HTTP failures: one line on stderr, exit 2, nothing on stdout.
#[test]
fn puppetdb_failures_are_one_clear_line() {
    let pki = pki("fail");
    let port = serve(&pki, 16, false);
    let args = ["--node", "web01.example.com", "whoami"];
    let one_line = |o: &Output, want: &str| {
        let err = String::from_utf8_lossy(&o.stderr).into_owned();
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert!(o.stdout.is_empty());
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains(want), "want {want:?} in {err}");
    };
    // No client certificate: PuppetDB (and this server) end the handshake.
    let ca = vec![
        "--puppetdb-cacert".to_string(),
        pki.dir.join("ca.pem").display().to_string(),
    ];
    one_line(
        &lookup(port, &ca, &args),
        "TLS with PuppetDB at https://127.0.0.1:",
    );
    // A CA that did not sign the server's certificate.
    one_line(
        &lookup(port, &tls_flags(&pki, "other-ca.pem"), &args),
        "invalid peer certificate",
    );
    // A certificate PuppetDB does not allow: 403.
    let denying = serve(&pki, 4, true);
    one_line(
        &lookup(denying, &tls_flags(&pki, "ca.pem"), &args),
        "refused the request (check the client certificate",
    );
    // Nobody listening.
    let closed = TcpListener::bind("127.0.0.1:0").unwrap();
    let closed_port = closed.local_addr().unwrap().port();
    drop(closed);
    one_line(
        &lookup(closed_port, &tls_flags(&pki, "ca.pem"), &args),
        "Could not reach PuppetDB at https://127.0.0.1:",
    );
    // A key without its certificate.
    let key_only = vec![
        "--puppetdb-key".to_string(),
        pki.dir.join("client.key").display().to_string(),
    ];
    one_line(&lookup(port, &key_only, &args), "needs its key");
    let _ = std::fs::remove_dir_all(&pki.dir);
}

/// `hiera-lookup ARGS… --puppetdb URL TLS…` in `dir` (ARGS start with the command).
fn command_in(dir: &Path, port: u16, tls: &[String], args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_hiera-lookup"))
        .current_dir(dir)
        .env("HIERA_LOOKUP_PUPPET_CONF", "/dev/null")
        .args(args)
        .arg("--puppetdb")
        .arg(format!("https://127.0.0.1:{port}"))
        .args(tls)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

/// The recorded batch answers of every active node: node → value.
fn recorded_values(name: &str, key: &str) -> std::collections::BTreeMap<String, serde_json::Value> {
    std::fs::read_to_string(here().join("expected").join(format!("{name}.out")))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter(|v| v["key"] == key)
        .map(|v| (v["node"].as_str().unwrap().to_string(), v["value"].clone()))
        .collect()
}

/// `where` and `diff` take their nodes from PuppetDB as batch mode does (every active node,
/// or a query's), with each node's trusted data: where's winner for each node holds what the
/// real PuppetDB run answered for it, and diff changes exactly the nodes whose answer came
/// from the changed file.
#[test]
fn where_and_diff_take_their_nodes_from_puppetdb() {
    let pki = pki("nodes");
    let port = serve(&pki, 64, false);
    let tls = tls_flags(&pki, "ca.pem");
    let key = "profile::ntp::servers";
    let recorded = recorded_values("all-active", key);
    assert!(recorded.len() > 10);

    let o = command_in(
        &here().join("case"),
        port,
        &tls,
        &[
            "where",
            key,
            "--hiera_config",
            "hiera.yaml",
            "--format",
            "json",
        ],
    );
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let report: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let nodes: Vec<&str> = report["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_str().unwrap())
        .collect();
    assert_eq!(
        nodes
            .iter()
            .copied()
            .collect::<std::collections::BTreeSet<_>>(),
        recorded.keys().map(String::as_str).collect()
    );
    let mut won = std::collections::BTreeMap::new();
    for d in report["definitions"].as_array().unwrap() {
        for n in d["wins"].as_array().unwrap() {
            let n = n.as_str().unwrap();
            assert_eq!(d["value"], recorded[n], "{n}: {d}");
            assert!(won.insert(n, d["file"].clone()).is_none(), "{n} wins twice");
        }
    }
    assert_eq!(won.len(), recorded.len());

    // diff of two copies of the control repo, one RedHat value changed.
    let dir = pki.dir.join("diff");
    for side in ["old", "new"] {
        for f in [
            "hiera.yaml",
            "data/common.yaml",
            "data/os/RedHat.yaml",
            "data/os/Debian.yaml",
            "data/roles/web.yaml",
        ] {
            let to = dir.join(side).join(f);
            std::fs::create_dir_all(to.parent().unwrap()).unwrap();
            std::fs::copy(here().join("case").join(f), &to).unwrap();
        }
    }
    let redhat = dir.join("new/data/os/RedHat.yaml");
    let text = std::fs::read_to_string(&redhat).unwrap();
    std::fs::write(
        &redhat,
        text.replace("ntp.redhat.example.com", "ntp2.redhat.example.com"),
    )
    .unwrap();
    let o = command_in(
        &dir,
        port,
        &tls,
        &["diff", "old", "new", key, "--format", "json"],
    );
    assert_eq!(
        o.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let diff: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let changed: std::collections::BTreeSet<&str> = diff["changes"][0]["groups"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|g| {
            g["nodes"]
                .as_array()
                .unwrap()
                .iter()
                .map(|n| n.as_str().unwrap())
        })
        .collect();
    let want: std::collections::BTreeSet<&str> = recorded
        .iter()
        .filter(|(_, v)| v.to_string().contains("ntp.redhat.example.com"))
        .map(|(n, _)| n.as_str())
        .collect();
    assert!(!want.is_empty());
    assert_eq!(changed, want);
    assert_eq!(diff["nodes"], recorded.len());
    // The nodes whose hierarchy never names the RedHat file were not looked up.
    assert!(diff["nodes_skipped"].as_u64().unwrap() > 0, "{diff}");

    // A query's nodes only.
    let query = "inventory[certname] { facts.os.family = \"RedHat\" }";
    let o = command_in(
        &dir,
        port,
        &tls,
        &[
            "diff",
            "old",
            "new",
            key,
            "--nodes-query",
            query,
            "--format",
            "json",
        ],
    );
    assert_eq!(
        o.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let diff: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(
        diff["nodes"],
        recorded_values("query-redhat", "whoami").len()
    );
    let _ = std::fs::remove_dir_all(&pki.dir);
}

/// `lint --puppetdb`: PuppetDB's nodes (here those of the recorded RedHat query) are the
/// fleet, read as batch mode reads them.
#[test]
fn lint_takes_its_fleet_from_puppetdb() {
    let pki = pki("lint");
    let port = serve(&pki, 16, false);
    let repo = pki.dir.join("repo");
    for (path, text) in [
        (
            "hiera.yaml",
            "version: 5\nhierarchy:\n  - name: os\n    path: \"os/%{facts.os.family}.yaml\"\n  - name: common\n    path: common.yaml\n",
        ),
        ("data/os/RedHat.yaml", "a: 1\n"),
        ("data/os/Debian.yaml", "a: 2\n"),
        ("data/common.yaml", "b: \"%{facts.no_node_has_this}\"\n"),
    ] {
        let p = repo.join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    let lint = |extra: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_hiera-lookup"))
            .current_dir(&repo)
            .env("HIERA_LOOKUP_PUPPET_CONF", "/dev/null")
            .args(["lint", "--format", "json", "--puppetdb"])
            .arg(format!("https://127.0.0.1:{port}"))
            .args(tls_flags(&pki, "ca.pem"))
            .args(extra)
            .stdin(Stdio::null())
            .output()
            .unwrap()
    };
    let redhat = "inventory[certname] { facts.os.family = \"RedHat\" }";
    let o = lint(&["--nodes-query", redhat, "--fail-on", "info"]);
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(o.status.code(), Some(1), "{err}");
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let found = |file: &str, rule: &str| {
        j.as_array()
            .unwrap()
            .iter()
            .any(|f| f["file"] == file && f["rule"] == rule)
    };
    // No RedHat node reads the Debian file; every one reads the RedHat file.
    assert!(found("data/os/Debian.yaml", "unreached-file"), "{j}");
    assert!(!found("data/os/RedHat.yaml", "unreached-file"), "{j}");
    assert!(found("data/common.yaml", "unknown-fact"), "{j}");
    // PuppetDB's errors stop the lint with one line.
    let o = lint(&["--nodes-query", "inventory[certname] { facts.os.family = "]);
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("PQL parse error"), "{err}");
    let o = lint(&[
        "--nodes-query",
        "inventory[certname] { facts.os.family = \"Plan9\" }",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("has no node matching the --nodes-query"));
    let _ = std::fs::remove_dir_all(&pki.dir);
}
