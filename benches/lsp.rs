//! The language server in process (`hiera_lsp::run` over in-memory pipes) on the realworld
//! control repo (benches/realworld/env/production) with one node's facts: a hover on a key
//! of data/common.yaml (request to answer), and the re-diagnosis of an edited buffer
//! (didChange to publishDiagnostics: lint on the unsaved text); then the same re-diagnosis
//! in a fleet context (the facts directory: the fleet part of `parameter-type-mismatch`
//! runs, every node's value of every parameter key judged). The targets: hover
//! ≤ 20 ms, re-diagnosis ≤ 50 ms (one node).

use criterion::{criterion_group, criterion_main, Criterion};
use serde_json::{json, Value as Json};
use std::io::{Read, Write};
use std::path::PathBuf;
use std::sync::mpsc::{channel, Receiver, Sender};

/// The reading end of an in-memory pipe.
struct PipeIn {
    rx: Receiver<Vec<u8>>,
    buf: Vec<u8>,
    at: usize,
}

impl Read for PipeIn {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        if self.at == self.buf.len() {
            match self.rx.recv() {
                Ok(b) => {
                    self.buf = b;
                    self.at = 0;
                }
                Err(_) => return Ok(0),
            }
        }
        let n = out.len().min(self.buf.len() - self.at);
        out[..n].copy_from_slice(&self.buf[self.at..self.at + n]);
        self.at += n;
        Ok(n)
    }
}

/// The writing end.
struct PipeOut(Sender<Vec<u8>>);

impl Write for PipeOut {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        let _ = self.0.send(b.to_vec());
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// A client: what it writes, and the server's messages parsed.
struct Client {
    tx: Sender<Vec<u8>>,
    rx: PipeIn,
    next: i64,
}

impl Client {
    fn send(&mut self, doc: Json) {
        let body = doc.to_string();
        let _ = self
            .tx
            .send(format!("Content-Length: {}\r\n\r\n{body}", body.len()).into_bytes());
    }

    fn read(&mut self) -> Json {
        let mut header = Vec::new();
        let mut byte = [0u8];
        while !header.ends_with(b"\r\n\r\n") {
            self.rx.read_exact(&mut byte).unwrap();
            header.push(byte[0]);
        }
        let text = String::from_utf8(header).unwrap();
        let len: usize = text
            .trim()
            .strip_prefix("Content-Length: ")
            .unwrap()
            .parse()
            .unwrap();
        let mut body = vec![0; len];
        self.rx.read_exact(&mut body).unwrap();
        serde_json::from_slice(&body).unwrap()
    }

    fn wait(&mut self, pick: impl Fn(&Json) -> bool) -> Json {
        loop {
            let m = self.read();
            if pick(&m) {
                return m;
            }
        }
    }

    fn request(&mut self, method: &str, params: Json) -> Json {
        let id = self.next;
        self.next += 1;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        self.wait(|m| m["id"] == id)
    }
}

/// The server on the realworld repo with one node's facts, or (`fleet`) the facts directory.
fn start(fleet: bool) -> (Client, String, String) {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("benches/realworld/env/production");
    let root = std::fs::canonicalize(root).unwrap();
    let facts = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("benches/realworld/facts/facter4.11-debian-12-x86_64.json");
    let facts = if facts.exists() {
        facts
    } else {
        std::fs::read_dir(facts.parent().unwrap())
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .find(|p| p.extension().is_some_and(|x| x == "json"))
            .unwrap()
    };
    let facts = if fleet {
        facts.parent().unwrap().to_path_buf()
    } else {
        facts
    };
    let (to_server, server_in) = channel();
    let (server_out, from_server) = channel();
    let input = PipeIn {
        rx: server_in,
        buf: Vec::new(),
        at: 0,
    };
    std::thread::Builder::new()
        .stack_size(hiera_value::limits::LOOKUP_STACK_SIZE)
        .spawn(move || hiera_lsp::run(input, PipeOut(server_out), hiera_lsp::Options::default()))
        .unwrap();
    let mut c = Client {
        tx: to_server,
        rx: PipeIn {
            rx: from_server,
            buf: Vec::new(),
            at: 0,
        },
        next: 1,
    };
    let r = c.request(
        "initialize",
        json!({"rootUri": format!("file://{}", root.display()), "capabilities": {},
               "initializationOptions": {"facts": facts.to_string_lossy()}}),
    );
    assert!(r.get("result").is_some(), "{r}");
    let common = root.join("data/common.yaml");
    let text = std::fs::read_to_string(&common).unwrap();
    let uri = format!("file://{}", common.display());
    c.send(json!({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {"uri": uri, "languageId": "yaml", "version": 1, "text": text}}}));
    c.wait(|m| m["method"] == "textDocument/publishDiagnostics");
    (c, uri, text)
}

fn lsp(c: &mut Criterion) {
    let (mut client, uri, text) = start(false);
    // `profile::base::ntp_servers:` (line 24 of data/common.yaml).
    let line = text
        .lines()
        .position(|l| l.starts_with("profile::base::ntp_servers:"))
        .unwrap();
    let hover = json!({"textDocument": {"uri": uri}, "position": {"line": line, "character": 3}});
    let r = client.request("textDocument/hover", hover.clone());
    assert!(
        r["result"]["contents"]["value"]
            .as_str()
            .is_some_and(|v| v.contains("profile::base::ntp_servers")),
        "{r}"
    );
    c.bench_function("lsp hover (realworld, one node)", |b| {
        b.iter(|| client.request("textDocument/hover", hover.clone()))
    });
    c.bench_function("lsp re-diagnosis of an edited buffer (realworld)", |b| {
        rediagnose(b, &mut client, &uri, &text)
    });
    let (mut fleet, uri, text) = start(true);
    let nodes = std::fs::read_dir(
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("benches/realworld/facts"),
    )
    .unwrap()
    .count();
    c.bench_function(
        &format!("lsp re-diagnosis of an edited buffer (realworld, fleet of {nodes} nodes)"),
        |b| rediagnose(b, &mut fleet, &uri, &text),
    );
}

/// didChange (a key added) to publishDiagnostics.
fn rediagnose(b: &mut criterion::Bencher, client: &mut Client, uri: &str, text: &str) {
    let mut version = 1;
    b.iter(|| {
        version += 1;
        let edited = format!("{text}\nbench::edit_{version}: {version}\n");
        client.send(json!({"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {"textDocument": {"uri": uri, "version": version}, "contentChanges": [{"text": edited}]}}));
        client.wait(|m| {
            m["method"] == "textDocument/publishDiagnostics" && m["params"]["version"] == version
        })
    })
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(30);
    targets = lsp
}
criterion_main!(benches);
