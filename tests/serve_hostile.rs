//! `hiera-lookup serve`, the binary, against what holds a server up: connections held open
//! by the hundred under a low file limit, a slow PuppetDB, documents posted at once. Servers
//! bind 127.0.0.1 on a port the system picks; every wait is bounded.

use crate::serve::fake_puppetdb_held;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures")
}

/// A running server, stopped by its own process id when dropped.
struct Server {
    child: Child,
    addr: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts `hiera-lookup serve ARGS --listen 127.0.0.1:0` in the fixtures' environment with
/// the file limit `(soft, hard)`, and waits (at most 20 s) for its address.
fn start(args: &[&str], files: Option<(u64, u64)>) -> Server {
    let mut command = Command::new(env!("CARGO_BIN_EXE_hiera-lookup"));
    command
        .current_dir(fixtures().join("environments/production"))
        .env("HIERA_LOOKUP_PUPPET_CONF", "/dev/null")
        .arg("serve")
        .args(args)
        .args(["--listen", "127.0.0.1:0"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    if let Some((soft, hard)) = files {
        // SAFETY: only setrlimit, async-signal-safe, between fork and exec.
        unsafe {
            command.pre_exec(move || {
                let lim = libc::rlimit {
                    rlim_cur: soft,
                    rlim_max: hard,
                };
                libc::setrlimit(libc::RLIMIT_NOFILE, &lim);
                Ok(())
            });
        }
    }
    let mut child = command.spawn().expect("start hiera-lookup serve");
    let (tx, rx) = std::sync::mpsc::channel();
    let stderr = child.stderr.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if let Some(at) = line.find("http://") {
                let url = line[at + 7..].split('/').next().unwrap_or("").to_string();
                let _ = tx.send(url);
            }
        }
    });
    let addr = rx
        .recv_timeout(Duration::from_secs(20))
        .expect("serve says where it listens within 20 s");
    Server { child, addr }
}

/// `METHOD path` with `body` on a new connection to `addr`: the status and body (at most
/// 60 s).
fn request(addr: &str, method: &str, path: &str, body: &str) -> (u16, String) {
    let mut c = TcpStream::connect(addr).unwrap();
    c.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    write!(
        c,
        "{method} {path} HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        addr,
        body.len()
    )
    .unwrap();
    let mut raw = Vec::new();
    let _ = c.read_to_end(&mut raw);
    let text = String::from_utf8_lossy(&raw).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    (status, body.to_string())
}

/// The `VmHWM`/`VmRSS` line of the server's /proc status, in kB.
fn memory_kb(server: &Server, field: &str) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{}/status", server.child.id())).unwrap();
    status
        .lines()
        .find_map(|l| {
            l.strip_prefix(field)?
                .trim()
                .strip_suffix("kB")?
                .trim()
                .parse()
                .ok()
        })
        .unwrap()
}

/// Slowloris under a file limit the server cannot raise (64, soft and hard): connections
/// held open with half-sent headers, more than there are files, do not shut a client out.
#[test]
fn held_open_connections_do_not_shut_clients_out() {
    let facts = fixtures().join("facts");
    let server = start(&["--facts-dir", facts.to_str().unwrap()], Some((64, 64)));
    let held: Vec<TcpStream> = (0..90)
        .map(|_| {
            let mut c = TcpStream::connect(&server.addr).unwrap();
            write!(c, "GET / HTTP/1.1\r\nHost: localhost\r\nX-Slow: ").unwrap();
            c
        })
        .collect();
    let (status, body) = request(&server.addr, "GET", "/api/v1/nodes", "");
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("web01.example.com"), "{body}");
    drop(held);
}

/// The file limit is raised to the hard limit at the start, where the system allows it.
#[test]
fn the_file_limit_is_raised_at_the_start() {
    let server = start(&[], Some((256, 4096)));
    let limits = std::fs::read_to_string(format!("/proc/{}/limits", server.child.id())).unwrap();
    let line = limits
        .lines()
        .find(|l| l.starts_with("Max open files"))
        .unwrap();
    let numbers: Vec<&str> = line.split_whitespace().skip(3).take(2).collect();
    assert_eq!(numbers, ["4096", "4096"], "{line}");
}

/// PuppetDB is read again in the background: while it takes its time, pages answer for the
/// last complete node set; the new one is served once it is read whole.
#[test]
fn a_slow_puppetdb_holds_no_request_up() {
    let count = Arc::new(AtomicUsize::new(1));
    let held = Arc::new(AtomicBool::new(false));
    let port = fake_puppetdb_held(count.clone(), held.clone());
    let url = format!("http://127.0.0.1:{port}");
    let server = start(&["--puppetdb", &url, "--refresh-interval", "1"], None);
    fn nodes(addr: &str) -> usize {
        let (status, body) = request(addr, "GET", "/api/v1/nodes", "");
        assert_eq!(status, 200, "{body}");
        serde_json::from_str::<serde_json::Value>(&body)
            .unwrap()
            .as_array()
            .unwrap()
            .len()
    }
    assert_eq!(nodes(&server.addr), 1);
    held.store(true, Ordering::SeqCst);
    count.store(3, Ordering::SeqCst);
    std::thread::sleep(Duration::from_millis(1500));
    // The interval has passed and PuppetDB does not answer: the pages do, from the nodes
    // read before (on a thread, so a page that waits for PuppetDB fails the test).
    let (tx, rx) = std::sync::mpsc::channel();
    let addr = server.addr.clone();
    std::thread::spawn(move || {
        let answers: Vec<usize> = (0..3).map(|_| nodes(&addr)).collect();
        let _ = tx.send(answers);
    });
    let answers = rx.recv_timeout(Duration::from_secs(30));
    held.store(false, Ordering::SeqCst);
    assert_eq!(
        answers.expect("a page waited for PuppetDB"),
        [1, 1, 1],
        "the last complete node set"
    );
    let started = Instant::now();
    while nodes(&server.addr) != 3 {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "the new node set was never served"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// Documents posted at once are read and answered a few at a time, each at most 1 MiB and
/// refused past it before it is parsed, and what their parse took is given back: eight
/// posts of the largest document (tiny values, as many as a document may hold) leave the
/// server a fraction of what eight parses at once would take.
#[test]
fn posted_documents_are_answered_a_few_at_a_time() {
    let facts = fixtures().join("facts");
    let server = Arc::new(start(&["--facts-dir", facts.to_str().unwrap()], None));
    let before = memory_kb(&server, "VmRSS:");
    // Just under both bounds: 1 MiB, 100,000 values counted (tiny hashes, the costliest to
    // parse).
    let fill = "{\"a\":1},".repeat(49_000);
    let doc = format!("{{\"clientcert\":\"x\",\"hostname\":\"x\",\"domain\":\"d\",\"fqdn\":\"x.d\",\"many\":[{fill}0]}}");
    assert!(doc.len() < 1 << 20);
    let doc = Arc::new(doc);
    let posts: Vec<_> = (0..8)
        .map(|_| {
            let (server, doc) = (server.clone(), doc.clone());
            std::thread::spawn(move || {
                request(
                    &server.addr,
                    "POST",
                    "/api/v1/lookup?key=ntp::servers",
                    &doc,
                )
                .0
            })
        })
        .collect();
    for p in posts {
        assert_eq!(p.join().unwrap(), 200);
    }
    let (peak, after) = (memory_kb(&server, "VmHWM:"), memory_kb(&server, "VmRSS:"));
    eprintln!("resident before {before} kB, peak {peak} kB, after {after} kB");
    // One parse of such a document takes about 30 MB: eight at once would be 240 MB.
    assert!(peak < before + 150_000, "peak {peak} kB (from {before} kB)");
    assert!(
        after < before + 100_000,
        "{after} kB kept (from {before} kB)"
    );
    // Past the size, refused before it is read whole.
    let big = format!("{{\"pad\":\"{}\"}}", "x".repeat(2 << 20));
    assert_eq!(
        request(
            &server.addr,
            "POST",
            "/api/v1/lookup?key=ntp::servers",
            &big
        )
        .0,
        413
    );
}
