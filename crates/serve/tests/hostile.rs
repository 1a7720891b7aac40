//! The server against a hostile client: a page re-pointed to 127.0.0.1 by DNS (the Host
//! check), a page posting across sites, bodies too big to hold, clients that send half a
//! request or hold connections open, and a fleet with a broken facts file. In process
//! (`oneshot`) for what a request carries; on a loopback socket, with every wait bounded, for
//! what a connection does.

use axum::body::Body;
use axum::http::{Request, StatusCode};
use hiera_facts::context::NodeSources;
use hiera_serve::{Limits, Options, State};
use http_body_util::BodyExt;
use serde_json::{json, Value as Json};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tower::ServiceExt;

/// A control repo (`repo/`) and its facts (`facts/`) in a scratch directory, removed when
/// dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str, files: &[(&str, &str)]) -> Scratch {
        let d =
            std::env::temp_dir().join(format!("hl-serve-hostile-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        let base: &[(&str, &str)] = &[
            (
                "repo/hiera.yaml",
                "version: 5\nhierarchy:\n  - name: role\n    path: \"roles/%{facts.role}.yaml\"\n  - name: common\n    path: common.yaml\n",
            ),
            ("repo/data/common.yaml", "port: 80\n"),
            ("repo/data/roles/web.yaml", "port: 8080\n"),
            ("facts/web01.yaml", "clientcert: web01\nrole: web\n"),
        ];
        for (rel, text) in base.iter().chain(files) {
            let p = d.join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        }
        Scratch(d)
    }

    fn state(&self, options: impl FnOnce(&mut Options)) -> Arc<State> {
        let context = NodeSources {
            repo: Some("repo".into()),
            facts_dir: Some("facts".into()),
            ..Default::default()
        }
        .resolve_in(&self.0)
        .unwrap();
        let mut o = Options {
            threads: 2,
            ..Options::new(self.0.join("repo"))
        };
        options(&mut o);
        Arc::new(State::open(context, o).unwrap())
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The answer's status and body.
async fn send(app: &axum::Router, req: Request<Body>) -> (StatusCode, String) {
    let res = app.clone().oneshot(req).await.unwrap();
    let status = res.status();
    let bytes = res.into_body().collect().await.unwrap().to_bytes();
    (status, String::from_utf8_lossy(&bytes).into_owned())
}

fn get_as(uri: &str, host: &str) -> Request<Body> {
    Request::get(uri)
        .header("host", host)
        .body(Body::empty())
        .unwrap()
}

const FACTS: &str = r#"{"facts": {"clientcert": "laptop", "role": "web"}, "keys": ["port"]}"#;

/// A page whose DNS name an attacker re-points to 127.0.0.1 is same-origin with the server:
/// only the names the server is reachable as are answered.
#[tokio::test]
async fn only_the_names_the_server_is_reachable_as_are_answered() {
    let s = Scratch::new("host", &[]);
    let app = hiera_serve::app(s.state(|o| {
        o.allowed_hosts = vec!["hiera.example.com".into(), ".corp.example".into()];
    }));
    for host in [
        "127.0.0.1:8080",
        "[::1]:8080",
        "localhost:8080",
        "LOCALHOST",
        "hiera.localhost:8080",
        "192.0.2.7",
        "hiera.example.com",
        "hiera.example.com.:443",
        "corp.example",
        "a.corp.example:8080",
    ] {
        for uri in ["/api/v1/nodes", "/nodes", "/api/v1/nodes/web01/keys/port"] {
            let (status, body) = send(&app, get_as(uri, host)).await;
            assert_eq!(status, StatusCode::OK, "{host} {uri}: {body}");
        }
    }
    for host in [
        "rebind.attacker.example",
        "rebind.attacker.example:8080",
        "localhost.attacker.example",
        "127.0.0.1.nip.io",
        "example.com",
        "xcorp.example",
    ] {
        for uri in [
            "/api/v1/nodes",
            "/",
            "/api/v1/nodes/web01/keys/port",
            "/files/data/common.yaml",
        ] {
            let (status, body) = send(&app, get_as(uri, host)).await;
            assert_eq!(status, StatusCode::FORBIDDEN, "{host} {uri}: {body}");
            assert!(body.contains("--allow-host"), "{body}");
            assert!(
                !body.contains("8080\n") && !body.contains("web01"),
                "{body}"
            );
        }
    }
    // Not a host, or two of them.
    for host in ["a b", "[::1", "x:y"] {
        let (status, _) = send(&app, get_as("/api/v1/nodes", host)).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{host}");
    }
    let two = Request::get("/api/v1/nodes")
        .header("host", "localhost")
        .header("host", "rebind.attacker.example")
        .body(Body::empty())
        .unwrap();
    assert_eq!(send(&app, two).await.0, StatusCode::BAD_REQUEST);
    // A request target in absolute form names its host too.
    let absolute = get_as("http://rebind.attacker.example/api/v1/nodes", "localhost");
    assert_eq!(send(&app, absolute).await.0, StatusCode::FORBIDDEN);
    // The refusal carries the security headers too.
    let res = app
        .clone()
        .oneshot(get_as("/", "rebind.attacker.example"))
        .await
        .unwrap();
    assert!(res.headers()["content-security-policy"]
        .to_str()
        .unwrap()
        .contains("default-src 'none'"));
}

/// Any page may send a POST to the server: one from another site (its Origin, or the
/// browser's Sec-Fetch-Site) is refused, and so is a body a page can send without asking
/// first (text/plain, multipart). `curl -d`'s form type stays accepted.
#[tokio::test]
async fn cross_site_posts_are_refused() {
    let s = Scratch::new("origin", &[]);
    let app = hiera_serve::app(s.state(|o| o.allowed_hosts = vec!["hiera.example.com".into()]));
    let post = |headers: &[(&str, &str)]| {
        let mut r = Request::post("/api/v1/lookup").header("host", "127.0.0.1:8080");
        for (k, v) in headers {
            r = r.header(*k, *v);
        }
        r.body(Body::from(FACTS)).unwrap()
    };
    let json = ("content-type", "application/json");
    for ok in [
        vec![json],
        vec![json, ("origin", "http://127.0.0.1:8080")],
        vec![json, ("origin", "https://hiera.example.com")],
        vec![json, ("sec-fetch-site", "same-origin")],
        vec![("content-type", "application/x-www-form-urlencoded")],
        vec![("content-type", "application/yaml")],
        vec![],
    ] {
        let (status, body) = send(&app, post(&ok)).await;
        assert_eq!(status, StatusCode::OK, "{ok:?}: {body}");
        assert!(body.contains("8080"), "{body}");
    }
    for foreign in [
        vec![json, ("origin", "http://rebind.attacker.example")],
        vec![json, ("origin", "http://127.0.0.1:9999")],
        vec![json, ("origin", "null")],
        vec![json, ("sec-fetch-site", "cross-site")],
        vec![json, ("sec-fetch-site", "same-site")],
    ] {
        let (status, body) = send(&app, post(&foreign)).await;
        assert_eq!(status, StatusCode::FORBIDDEN, "{foreign:?}: {body}");
        assert!(!body.contains("8080"), "{body}");
    }
    for kind in [
        "text/plain",
        "text/plain;charset=UTF-8",
        "multipart/form-data; boundary=x",
    ] {
        let (status, body) = send(&app, post(&[("content-type", kind)])).await;
        assert_eq!(status, StatusCode::UNSUPPORTED_MEDIA_TYPE, "{kind}: {body}");
    }
}

/// A posted document is bounded before it is parsed: its size (declared or read) and how
/// many values it can hold. A real facts document is about 12 KB.
#[tokio::test]
async fn posted_documents_are_bounded() {
    let s = Scratch::new("body", &[]);
    let app = hiera_serve::app(s.state(|_| {}));
    let post = |body: String, declared: Option<usize>| {
        let mut r =
            Request::post("/api/v1/lookup?key=port").header("content-type", "application/json");
        if let Some(n) = declared {
            r = r.header("content-length", n.to_string());
        }
        r.body(Body::from(body)).unwrap()
    };
    // A facts document padded to 2 MB: a valid one, answered before.
    let padded =
        json!({"clientcert": "laptop", "role": "web", "pad": "x".repeat(2 << 20)}).to_string();
    let (status, body) = send(&app, post(padded.clone(), None)).await;
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE, "{body}");
    assert!(body.contains("larger than 1048576 bytes"), "{body}");
    let (status, _) = send(&app, post(padded, Some(2 << 20))).await;
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE);
    // Under the size, but tiny values by the hundred thousand.
    let many = format!(
        "{{\"clientcert\": \"laptop\", \"role\": \"web\", \"a\": [{}0]}}",
        "0,".repeat(200_000)
    );
    assert!(many.len() < hiera_serve::MAX_BODY_BYTES);
    let (status, body) = send(&app, post(many, None)).await;
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE, "{body}");
    assert!(body.contains("too many values"), "{body}");
    // A real document of a good size is answered.
    let real =
        json!({"clientcert": "laptop", "role": "web", "pad": "x".repeat(500_000)}).to_string();
    let (status, body) = send(&app, post(real, None)).await;
    assert_eq!(status, StatusCode::OK, "{body}");
}

/// One facts file that does not parse keeps its error to its node: lint answers for the
/// others, and names it.
#[tokio::test]
async fn a_broken_facts_file_is_one_nodes_error_in_lint() {
    let s = Scratch::new(
        "lint",
        &[
            ("facts/db01.yaml", "clientcert: db01\nrole: db\n"),
            (
                "facts/broken.json",
                "{\"clientcert\": \"broken\", \"role\": ",
            ),
        ],
    );
    let app = hiera_serve::app(s.state(|_| {}));
    let (status, body) = send(&app, get_as("/api/v1/lint", "localhost")).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let doc: Json = serde_json::from_str(&body).unwrap();
    assert_eq!(doc["unreadable_nodes"], json!(["broken"]), "{doc}");
    assert!(doc["findings"].is_array(), "{doc}");
    let (status, page) = send(&app, get_as("/lint", "localhost")).await;
    assert_eq!(status, StatusCode::OK, "{page}");
    assert!(page.contains("facts unreadable"), "{page}");
    // The node's own views say what is wrong with it.
    let (status, body) = send(&app, get_as("/api/v1/nodes", "localhost")).await;
    assert_eq!(status, StatusCode::OK);
    assert!(body.contains("not valid JSON"), "{body}");
}

/// The server on a loopback socket within `limits`, on a thread of its own (it runs until
/// the test process ends): its address.
fn listening(state: Arc<State>, limits: Limits) -> std::net::SocketAddr {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        hiera_serve::serve_within(state, listener, limits, |addr| {
            let _ = tx.send(addr);
        })
    });
    rx.recv_timeout(Duration::from_secs(20))
        .expect("the server listens")
}

/// Waits (at most 60 s) for the server to close `conn`: true when it did.
fn closed_by_server(conn: &mut TcpStream) -> bool {
    conn.set_read_timeout(Some(Duration::from_millis(200)))
        .unwrap();
    let started = Instant::now();
    let mut buf = [0u8; 4096];
    while started.elapsed() < Duration::from_secs(60) {
        match conn.read(&mut buf) {
            Ok(0) => return true,
            Ok(_) => {}
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) => {}
            Err(_) => return true,
        }
    }
    false
}

/// `GET path` on a new connection, closed after the answer: the status (at most 60 s).
fn get_status(addr: std::net::SocketAddr, path: &str) -> u16 {
    let mut c = TcpStream::connect(addr).unwrap();
    c.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    write!(
        c,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut raw = Vec::new();
    let _ = c.read_to_end(&mut raw);
    let text = String::from_utf8_lossy(&raw);
    text.split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0)
}

/// Slowloris: a request whose headers never end, and a connection left idle after an
/// answer, are closed once the header timeout has passed.
#[test]
fn half_sent_requests_and_idle_connections_are_closed() {
    let s = Scratch::new("slow", &[]);
    let addr = listening(
        s.state(|_| {}),
        Limits {
            header_timeout: Duration::from_secs(1),
            ..Limits::default()
        },
    );
    let mut half = TcpStream::connect(addr).unwrap();
    write!(
        half,
        "GET /api/v1/nodes HTTP/1.1\r\nHost: localhost\r\nX-A: "
    )
    .unwrap();
    let mut silent = TcpStream::connect(addr).unwrap();
    let mut idle = TcpStream::connect(addr).unwrap();
    write!(
        idle,
        "GET /api/v1/nodes HTTP/1.1\r\nHost: localhost\r\n\r\n"
    )
    .unwrap();
    idle.set_read_timeout(Some(Duration::from_secs(60)))
        .unwrap();
    let mut first = [0u8; 12];
    idle.read_exact(&mut first).unwrap();
    assert_eq!(&first, b"HTTP/1.1 200");
    assert!(
        closed_by_server(&mut half),
        "half-sent headers were never timed out"
    );
    assert!(
        closed_by_server(&mut silent),
        "a silent connection was never closed"
    );
    assert!(
        closed_by_server(&mut idle),
        "an idle connection was never closed"
    );
    assert_eq!(get_status(addr, "/api/v1/nodes"), 200);
}

/// At the connection limit, a new client takes the place of the oldest connection that is
/// answering nothing (here, held open with half-sent headers): it is answered, not shut out.
#[test]
fn at_the_limit_a_new_client_takes_a_held_connections_place() {
    let s = Scratch::new("limit", &[]);
    let limits = Limits {
        header_timeout: Duration::from_secs(600),
        max_connections: 8,
    };
    let addr = listening(s.state(|_| {}), limits);
    let mut held: Vec<TcpStream> = (0..8)
        .map(|_| {
            let mut c = TcpStream::connect(addr).unwrap();
            write!(c, "GET / HTTP/1.1\r\nHost: localhost\r\n").unwrap();
            c
        })
        .collect();
    // Connections are accepted in the order they came: the eight are open when the next
    // client is accepted.
    assert_eq!(get_status(addr, "/api/v1/nodes"), 200);
    assert!(
        closed_by_server(&mut held[0]),
        "the oldest held connection stayed open"
    );
    assert_eq!(get_status(addr, "/api/v1/nodes/web01"), 200);
}
