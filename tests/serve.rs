//! `hiera-lookup serve`, the binary: it says where it listens, answers exactly what the
//! command line answers (a batch line's fields, `--explain` byte for byte), refuses what it
//! cannot serve; and, when Debian's `chromium` is installed, every view loads in a headless
//! browser (screenshots in a temporary directory). Servers bind 127.0.0.1 only, on a port the
//! system picks; every wait is bounded.

use crate::scratch_tree;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

fn bin() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_hiera-lookup"));
    // Never the machine's own puppet.conf.
    c.env("HIERA_LOOKUP_PUPPET_CONF", "/dev/null");
    c
}

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures")
}

/// A running server, stopped (by its own process id) when dropped.
pub(crate) struct Server {
    child: Child,
    /// `http://127.0.0.1:PORT`.
    base: String,
    /// What it printed on stderr before it accepted connections.
    stderr: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts `hiera-lookup serve ARGS --listen 127.0.0.1:0` in `dir` and waits (at most 20 s) for
/// the line with its URL.
pub(crate) fn start(dir: &Path, args: &[&str]) -> Server {
    let mut all = args.to_vec();
    all.extend(["--listen", "127.0.0.1:0"]);
    launch(dir, &all).unwrap_or_else(|e| panic!("serve ended before listening: {e}"))
}

/// Starts `hiera-lookup serve ARGS` in `dir` and waits (at most 20 s) for the line with its
/// URL; what it printed on stderr if it ended before.
fn launch(dir: &Path, args: &[&str]) -> Result<Server, String> {
    let mut child = bin()
        .current_dir(dir)
        .arg("serve")
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start hiera-lookup serve");
    let (tx, rx) = std::sync::mpsc::channel();
    let stderr = child.stderr.take().unwrap();
    std::thread::spawn(move || {
        let mut seen = String::new();
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            seen.push_str(&line);
            seen.push('\n');
            if line.contains("serving http://") {
                let _ = tx.send(Ok(seen.clone()));
            }
        }
        let _ = tx.send(Err(seen));
    });
    let seen = match rx.recv_timeout(Duration::from_secs(20)) {
        Ok(Ok(s)) => s,
        Ok(Err(s)) => {
            let _ = child.wait();
            return Err(s);
        }
        Err(_) => {
            let _ = child.kill();
            let _ = child.wait();
            panic!("serve did not say where it listens within 20 s");
        }
    };
    let url = seen
        .split_whitespace()
        .find(|w| w.starts_with("http://"))
        .unwrap()
        .trim_end_matches('/')
        .to_string();
    Ok(Server {
        child,
        base: url,
        stderr: seen,
    })
}

/// `GET path` over HTTP/1.1 (one connection, closed after the answer): status and body.
fn get(server: &Server, path: &str) -> (u16, String) {
    let addr = server.base.trim_start_matches("http://");
    // A server on every address (0.0.0.0) answers on the loopback one.
    let addr = &addr.replace("0.0.0.0:", "127.0.0.1:");
    let mut s = TcpStream::connect(addr).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).expect("read the answer");
    let text = String::from_utf8_lossy(&raw).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").expect("an HTTP answer");
    let status = head.split_whitespace().nth(1).unwrap().parse().unwrap();
    (status, body.to_string())
}

pub(crate) fn json(server: &Server, path: &str) -> serde_json::Value {
    let (status, body) = get(server, path);
    assert_eq!(status, 200, "{path}: {body}");
    serde_json::from_str(&body).unwrap()
}

#[test]
fn serve_answers_as_the_command_line_does() {
    let env = fixtures().join("environments/production");
    let facts_dir = fixtures().join("facts");
    // Facts named relative to the working directory, as batch mode names them below.
    let server = start(&env, &["--facts-dir", "../../facts"]);
    assert!(server.stderr.contains("serving http://127.0.0.1:"));
    assert!(
        !server.stderr.contains("no authentication"),
        "{}",
        server.stderr
    );
    let nodes = json(&server, "/api/v1/nodes");
    assert_eq!(nodes.as_array().unwrap().len(), 2);
    for key in [
        "ntp::servers",
        "profile::base::users",
        "profile::base::motd",
        "profile::base::ntp_servers",
        "profile::base::packages",
        "no::such::key",
    ] {
        for (node, facts) in [
            ("web01.example.com", "web01.yaml"),
            ("db01.example.com", "db01.json"),
        ] {
            let facts = facts_dir.join(facts);
            let served = json(
                &server,
                &format!("/api/v1/nodes/{node}/keys/{key}?explain=1"),
            );
            // --explain, byte for byte.
            let cli = bin()
                .current_dir(&env)
                .args([key, "--explain", "--facts", facts.to_str().unwrap()])
                .output()
                .unwrap();
            assert_eq!(
                served["explain"].as_str().unwrap(),
                String::from_utf8_lossy(&cli.stdout),
                "{node} {key}"
            );
            // The batch line's fields, as batch mode writes them.
            let batch = bin()
                .current_dir(&env)
                .args([key, "--facts-dir", "../../facts"])
                .output()
                .unwrap();
            let line = String::from_utf8_lossy(&batch.stdout)
                .lines()
                .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
                .find(|l| l["node"] == node)
                .unwrap();
            for (field, v) in line.as_object().unwrap() {
                assert_eq!(&served[field], v, "{node} {key} {field}");
            }
        }
    }
    // Pages answer too.
    for page in [
        "/",
        "/nodes/web01.example.com",
        "/keys/ntp::servers",
        "/lint",
    ] {
        assert_eq!(get(&server, page).0, 200, "{page}");
    }
}

/// `-C DIR` names the control repo; the facts' paths stay relative to the working directory.
#[test]
fn serve_takes_the_repo_from_c() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let server = start(
        repo,
        &[
            "-C",
            "fixtures/environments/production",
            "--facts-dir",
            "fixtures/facts",
        ],
    );
    let nodes = json(&server, "/api/v1/nodes");
    assert_eq!(nodes[0]["source"]["name"], "fixtures/facts/db01.json");
    let (status, body) = get(&server, "/files/hiera.yaml");
    assert_eq!(status, 200);
    assert!(body.contains("id=\"L1\""));
}

#[test]
fn serve_refuses_what_it_cannot_serve() {
    let empty = scratch_tree::tree("serve", "empty", &[("README", "not a control repo\n")]);
    let o = bin()
        .current_dir(&*empty)
        .args(["serve", "--listen", "127.0.0.1:0"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("is not a control repo"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let env = fixtures().join("environments/production");
    let o = bin()
        .current_dir(&env)
        .args(["serve", "--listen", "nonsense"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--listen expects ADDR:PORT"));
    let o = bin()
        .args([
            "serve",
            "-C",
            ".",
            "--environmentpath",
            "x",
            "--listen",
            "127.0.0.1:0",
        ])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
}

/// Debian's `chromium`, if installed.
fn chromium() -> Option<PathBuf> {
    ["chromium", "chromium-browser"].iter().find_map(|name| {
        std::env::var_os("PATH").and_then(|paths| {
            std::env::split_paths(&paths)
                .map(|d| d.join(name))
                .find(|p| p.is_file())
        })
    })
}

/// Runs headless Chromium on `url` with `extra` (`--dump-dom`, `--screenshot=…`), at most 60 s,
/// its profile in `dir/profile` and its home in `dir/home` ([`scratch_tree::own_home`]).
fn browse(chromium: &Path, dir: &Path, url: &str, extra: &[String]) -> String {
    let mut command = Command::new(chromium);
    scratch_tree::own_home(&mut command, dir);
    let profile = dir.join("profile");
    let mut child = command
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--no-first-run",
            "--disable-dev-shm-usage",
            "--window-size=1280,1000",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(extra)
        .arg(url)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start chromium");
    let mut out = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = out.read_to_string(&mut s);
        s
    });
    let started = Instant::now();
    loop {
        if child.try_wait().unwrap().is_some() {
            break;
        }
        if started.elapsed() > Duration::from_secs(60) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("chromium did not finish {url} within 60 s");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    reader.join().unwrap()
}

#[test]
fn every_view_loads_in_headless_chromium() {
    let Some(chromium) = chromium() else {
        eprintln!("skipped: no chromium (Debian's `chromium` package) on PATH");
        return;
    };
    let shots = scratch_tree::tree("serve", "screenshots", &[]);
    let profile = shots.join("browser");
    let env = fixtures().join("environments/production");
    let facts_dir = fixtures().join("facts");
    let server = start(&env, &["--facts-dir", facts_dir.to_str().unwrap()]);
    let views = [
        ("overview", "/?q=ntp", "Layers and hierarchies"),
        ("nodes", "/nodes", "web01.example.com"),
        ("node", "/nodes/web01.example.com", "profile::base::users"),
        (
            "node-key",
            "/nodes/web01.example.com/keys/ntp::servers",
            "Searching for \"ntp::servers\"",
        ),
        ("key", "/keys/profile::base::users", "Definitions"),
        ("lint", "/lint", "yaml11-value"),
        ("diff", "/diff", "Compare"),
        (
            "file",
            "/files/data/common.yaml#L11",
            "profile::base::users",
        ),
    ];
    for (name, path, expected) in views {
        let url = format!("{}{path}", server.base);
        let dom = browse(&chromium, &profile, &url, &["--dump-dom".to_string()]);
        assert!(
            dom.contains(expected),
            "{name}: {expected:?} not in the page: {dom}"
        );
        let shot = shots.join(format!("{name}.png"));
        browse(
            &chromium,
            &profile,
            &url,
            &[format!("--screenshot={}", shot.display())],
        );
        let png = std::fs::read(&shot).unwrap_or_default();
        assert!(png.starts_with(b"\x89PNG"), "{name}: no screenshot");
        eprintln!("{name}: {} ({} bytes)", shot.display(), png.len());
    }
    // The script runs under the Content-Security-Policy (it marks the page when it starts),
    // and the filter form works without it (the server filters).
    let dom = browse(
        &chromium,
        &profile,
        &format!("{}/nodes?q=db01", server.base),
        &["--dump-dom".to_string()],
    );
    assert!(
        dom.contains("data-script=\"on\""),
        "the script did not run: {dom}"
    );
    assert!(
        dom.contains("db01.example.com") && !dom.contains(">web01.example.com<"),
        "{dom}"
    );
    // What the browser writes for itself (crash-report settings, dconf's cache) went to its
    // scratch home, not to the home of whoever runs the tests.
    let home = scratch_tree::files_under(&profile.join("home"));
    assert!(!home.is_empty(), "chromium wrote nothing to its home");
    if let Some(keep) = std::env::var_os("HIERA_LOOKUP_SCREENSHOTS") {
        // Kept for a look (README's screenshot): copied before the scratch tree goes.
        std::fs::create_dir_all(&keep).unwrap();
        for e in std::fs::read_dir(&*shots).unwrap().flatten() {
            if e.path().extension().is_some_and(|x| x == "png") {
                std::fs::copy(e.path(), Path::new(&keep).join(e.file_name())).unwrap();
            }
        }
    }
}

/// Without `--listen` the server listens on 127.0.0.1:8080: it says so there, or, when
/// something else holds that port, says it cannot listen there. `--help` names the default.
#[test]
fn serve_listens_on_127_0_0_1_8080_by_default() {
    let help = bin().args(["serve", "--help"]).output().unwrap();
    let help = String::from_utf8_lossy(&help.stdout);
    assert!(help.contains("[default: 127.0.0.1:8080]"), "{help}");
    let env = fixtures().join("environments/production");
    match launch(&env, &["--facts-dir", "../../facts"]) {
        Ok(server) => {
            assert_eq!(server.base, "http://127.0.0.1:8080", "{}", server.stderr);
            assert!(!server.stderr.contains("no authentication"));
        }
        Err(stderr) => assert!(
            stderr.contains("cannot listen on 127.0.0.1:8080"),
            "{stderr}"
        ),
    }
}

/// An address other machines may reach, spelled out, is served with a warning on stderr
/// before the URL; a loopback one is served without.
#[test]
fn serve_warns_on_a_non_loopback_address() {
    let env = fixtures().join("environments/production");
    let server = launch(
        &env,
        &["--facts-dir", "../../facts", "--listen", "0.0.0.0:0"],
    )
    .unwrap_or_else(|e| panic!("{e}"));
    assert!(
        server.base.starts_with("http://0.0.0.0:"),
        "{}",
        server.base
    );
    let warning = server
        .stderr
        .lines()
        .find(|l| l.contains("no authentication"))
        .unwrap_or_else(|| panic!("no warning: {}", server.stderr));
    assert!(warning.contains("non-loopback address"), "{warning}");
    assert!(
        server.stderr.find("no authentication") < server.stderr.find("serving http://"),
        "{}",
        server.stderr
    );
    assert_eq!(json(&server, "/api/v1/nodes").as_array().unwrap().len(), 2);
}

/// `--facts F1 --facts F2`: the nodes are those files' nodes, named by them.
#[test]
fn serve_takes_its_nodes_from_facts_files() {
    let env = fixtures().join("environments/production");
    let server = start(
        &env,
        &[
            "--facts",
            "../../facts/web01.yaml",
            "--facts",
            "../../facts/db01.json",
        ],
    );
    let nodes = json(&server, "/api/v1/nodes");
    let mut seen: Vec<(String, String)> = nodes
        .as_array()
        .unwrap()
        .iter()
        .map(|n| {
            (
                n["node"].as_str().unwrap().to_string(),
                n["source"]["name"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    seen.sort();
    assert_eq!(
        seen,
        [
            (
                "db01.example.com".to_string(),
                "../../facts/db01.json".to_string()
            ),
            (
                "web01.example.com".to_string(),
                "../../facts/web01.yaml".to_string()
            ),
        ]
    );
    let served = json(&server, "/api/v1/nodes/db01.example.com/keys/ntp::servers");
    let cli = bin()
        .current_dir(&env)
        .args([
            "ntp::servers",
            "--render-as",
            "json",
            "--facts",
            "../../facts/db01.json",
        ])
        .output()
        .unwrap();
    let cli: serde_json::Value = serde_json::from_slice(&cli.stdout).unwrap();
    assert_eq!(served["value"], cli, "{served}");
}

/// A plain-HTTP stand-in for PuppetDB: the active nodes are `n0` … `n{count-1}`, `count`
/// read at every query (so a test changes the node set), each with facts of its own (its
/// `os.family`, `role`, an integer, a float, keys in an order of their own) and trusted data.
fn fake_puppetdb(count: std::sync::Arc<std::sync::atomic::AtomicUsize>) -> u16 {
    fake_puppetdb_held(count, Default::default())
}

/// [`fake_puppetdb`], whose answers wait while `held` is true (at most 60 s each): a slow
/// PuppetDB.
pub(crate) fn fake_puppetdb_held(
    count: std::sync::Arc<std::sync::atomic::AtomicUsize>,
    held: std::sync::Arc<std::sync::atomic::AtomicBool>,
) -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let waited = Instant::now();
            while held.load(std::sync::atomic::Ordering::SeqCst)
                && waited.elapsed() < Duration::from_secs(60)
            {
                std::thread::sleep(Duration::from_millis(20));
            }
            let _ = stream.set_read_timeout(Some(Duration::from_secs(20)));
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut line = String::new();
            if reader.read_line(&mut line).is_err() {
                continue;
            }
            let path = line.split_whitespace().nth(1).unwrap_or("").to_string();
            let mut length = 0usize;
            loop {
                let mut h = String::new();
                if reader.read_line(&mut h).is_err() {
                    break;
                }
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
            let _ = reader.read_exact(&mut body);
            let n = count.load(std::sync::atomic::Ordering::SeqCst);
            let names: Vec<String> = (0..n).map(|i| format!("n{i}")).collect();
            let answer = if path.ends_with("/inventory") {
                serde_json::Value::from(
                    names
                        .iter()
                        .map(|c| {
                            let i: usize = c[1..].parse().unwrap();
                            let os = if i.is_multiple_of(2) {
                                serde_json::json!({"family": "RedHat", "name": "Rocky", "release": {"major": "9", "full": "9.3"}})
                            } else {
                                serde_json::json!({"family": "Debian", "name": "Debian", "release": {"major": "12", "full": "12.5"}})
                            };
                            let mut facts = serde_json::json!({
                                "zeta": i,
                                "os": os,
                                "networking": {"fqdn": c, "mtu": 1500},
                                "load": 1.0 + i as f64 / 4.0,
                                "alpha": [true, null, "é"],
                            });
                            if i.is_multiple_of(3) {
                                facts["role"] = "web".into();
                            }
                            serde_json::json!({
                                "certname": c,
                                "environment": "production",
                                "facts": facts,
                                "trusted": {"certname": c, "authenticated": "remote", "extensions": {}},
                            })
                        })
                        .collect::<Vec<_>>(),
                )
            } else {
                serde_json::Value::from(
                    names
                        .iter()
                        .map(|c| serde_json::json!({ "certname": c }))
                        .collect::<Vec<_>>(),
                )
            };
            let text = answer.to_string();
            let _ = write!(
                stream,
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{text}",
                text.len()
            );
        }
    });
    port
}

fn node_count(server: &Server) -> usize {
    json(server, "/api/v1/nodes").as_array().unwrap().len()
}

/// `--refresh-interval SECS`: PuppetDB's node set is read again once SECS have passed (and
/// not before: the default is 300 s); a value that is not a number of seconds is one line
/// and exit status 2.
#[test]
fn serve_reads_puppetdb_again_every_refresh_interval() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;
    let env = fixtures().join("environments/production");
    let count = Arc::new(AtomicUsize::new(1));
    let port = fake_puppetdb(count.clone());
    let url = format!("http://127.0.0.1:{port}");
    let every_second = start(&env, &["--puppetdb", &url, "--refresh-interval", "1"]);
    let by_default = start(&env, &["--puppetdb", &url]);
    assert_eq!(node_count(&every_second), 1, "{}", every_second.stderr);
    assert_eq!(node_count(&by_default), 1, "{}", by_default.stderr);
    count.store(3, Ordering::SeqCst);
    let started = Instant::now();
    while node_count(&every_second) != 3 {
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "the node set was not read again"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    assert_eq!(node_count(&by_default), 1);
    for bad in ["soon", "-1", ""] {
        let o = bin()
            .current_dir(&env)
            .args([
                "serve",
                "--refresh-interval",
                bad,
                "--listen",
                "127.0.0.1:0",
            ])
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(2), "{bad}");
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert_eq!(stderr.trim_end().lines().count(), 1, "{bad}: {stderr}");
        assert!(stderr.starts_with("Error: "), "{bad}: {stderr}");
    }
}

/// PuppetDB's nodes are packed as facts files' are, and answer exactly what batch mode
/// answers for them (each batch line's fields, every node, keys reaching facts, roles and
/// interpolations), and every key of a node as `--all` gives it.
#[test]
fn serve_answers_for_puppetdb_nodes_as_batch_mode_does() {
    use std::sync::atomic::AtomicUsize;
    use std::sync::Arc;
    let env = fixtures().join("environments/production");
    let port = fake_puppetdb(Arc::new(AtomicUsize::new(5)));
    let url = format!("http://127.0.0.1:{port}");
    let server = start(&env, &["--puppetdb", &url]);
    let nodes = json(&server, "/api/v1/nodes");
    let names: Vec<&str> = nodes
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["node"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["n0", "n1", "n2", "n3", "n4"], "{nodes}");
    for n in nodes.as_array().unwrap() {
        assert_eq!(n["source"]["kind"], "puppetdb", "{n}");
        assert_eq!(n["source"]["name"], n["node"], "{n}");
    }
    let batch = |args: &[&str]| -> Vec<serde_json::Value> {
        let o = bin()
            .current_dir(&env)
            .args(args)
            .args(["--puppetdb", &url])
            .output()
            .unwrap();
        // Exit status 1 when some node has no value: each line says which.
        assert!(
            matches!(o.status.code(), Some(0 | 1)),
            "{args:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        String::from_utf8_lossy(&o.stdout)
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    };
    for key in [
        "profile::base::motd",
        "profile::base::packages",
        "profile::base::users",
        "profile::web::port",
        "profile::web::service",
        "no::such::key",
    ] {
        let lines = batch(&[key]);
        assert_eq!(lines.len(), 5, "{key}: {lines:?}");
        for line in &lines {
            let node = line["node"].as_str().unwrap();
            let served = json(&server, &format!("/api/v1/nodes/{node}/keys/{key}"));
            for (field, v) in line.as_object().unwrap() {
                assert_eq!(&served[field], v, "{node} {key} {field}: {served}");
            }
        }
    }
    // The facts made again from the packed ones are the facts: interpolated, typed, in order.
    let motd = json(&server, "/api/v1/nodes/n1/keys/profile::base::motd");
    assert_eq!(motd["value"], "Welcome to n1 (Debian 12.5)", "{motd}");
    let port = json(&server, "/api/v1/nodes/n3/keys/profile::web::port");
    assert_eq!(port["value"], 8080, "{port}");
    // Every key of every node, as `--all` gives them.
    let all = batch(&["--all"]);
    for node in names {
        let served = json(&server, &format!("/api/v1/nodes/{node}"));
        let keys = served["keys"].as_array().expect("a node's keys");
        let lines: Vec<&serde_json::Value> = all.iter().filter(|l| l["node"] == node).collect();
        assert!(!lines.is_empty(), "{node}");
        assert_eq!(keys.len(), lines.len(), "{node}: {served}");
        for line in lines {
            let k = keys
                .iter()
                .find(|k| k["key"] == line["key"])
                .unwrap_or_else(|| panic!("{node}: {line} not served: {served}"));
            assert_eq!(k["found"], line["found"], "{node} {line}");
            assert_eq!(k["value"], line["value"], "{node} {line}");
        }
    }
}
