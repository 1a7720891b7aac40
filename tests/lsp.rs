//! `hiera-lookup lsp`: the binary spoken to over pipes, as an editor does (JSON-RPC with
//! `Content-Length` framing), one test per feature, and the hostile client.

use crate::scratch_tree::{self, Tree};
use serde_json::{json, Value as Json};
use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

const HIERA: &str = "version: 5\nhierarchy:\n  - name: node\n    path: \"nodes/%{trusted.certname}.yaml\"\n  - name: common\n    path: common.yaml\n";

const COMMON: &str = "---\nntp::servers:\n  - common.pool\nntp::iburst: true\nmotd: \"ü😀 %{facts.os.family}\"\ngreeting: \"%{lookup('motd')}\"\nlookup_options:\n  ntp::servers:\n    merge: unique\n";

const NTP: &str = "class ntp (\n  Array[String] $servers = [],\n  Boolean $iburst = false,\n) {\n  $extra = lookup('ntp::extra', Optional[String], 'first', undef)\n}\n";

/// The control repo every test opens.
fn repo(name: &str) -> Tree {
    scratch_tree::tree(
        "lsp",
        name,
        &[
            ("hiera.yaml", HIERA),
            ("data/common.yaml", COMMON),
            (
                "data/nodes/web01.example.com.yaml",
                "ntp::servers:\n  - web01.pool\n",
            ),
            ("data/nodes/db01.example.com.yaml", "ntp::iburst: false\n"),
            ("modules/ntp/manifests/init.pp", NTP),
            // `greeting` is read by the site manifest (else lint's unused-key flags it).
            ("manifests/site.pp", "notify { lookup('greeting'): }\n"),
            (
                "facts/web01.yaml",
                "clientcert: web01.example.com\nos:\n  family: Debian\n",
            ),
            (
                "facts/db01.yaml",
                "clientcert: db01.example.com\nos:\n  family: RedHat\n",
            ),
        ],
    )
}

/// A running server and what it said.
pub(crate) struct Client {
    child: Child,
    stdin: Option<ChildStdin>,
    rx: Receiver<Json>,
    /// Notifications and answers seen but not yet asked for.
    seen: Vec<Json>,
    next: i64,
}

impl Client {
    fn start(root: &std::path::Path, args: &[&str]) -> Client {
        let mut child = Command::new(env!("CARGO_BIN_EXE_hiera-lookup"))
            .arg("lsp")
            .args(args)
            .current_dir(root)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut r = BufReader::new(stdout);
            loop {
                let mut len = 0usize;
                loop {
                    let mut line = String::new();
                    if r.read_line(&mut line).unwrap_or(0) == 0 {
                        return;
                    }
                    let line = line.trim_end();
                    if line.is_empty() {
                        break;
                    }
                    if let Some(v) = line.strip_prefix("Content-Length: ") {
                        len = v.parse().unwrap();
                    }
                }
                let mut body = vec![0; len];
                if r.read_exact(&mut body).is_err() {
                    return;
                }
                let doc: Json = serde_json::from_slice(&body).expect("the server writes JSON");
                if tx.send(doc).is_err() {
                    return;
                }
            }
        });
        Client {
            stdin: child.stdin.take(),
            child,
            rx,
            seen: Vec::new(),
            next: 1,
        }
    }

    /// A started and initialized server over `root` (`options`: initializationOptions).
    pub(crate) fn init(root: &std::path::Path, options: Json) -> Client {
        let mut c = Client::start(root, &[]);
        let r = c.request(
            "initialize",
            json!({
                "processId": null,
                "rootUri": format!("file://{}", root.display()),
                "capabilities": {},
                "initializationOptions": options,
            }),
        );
        assert_eq!(r["result"]["capabilities"]["hoverProvider"], true, "{r}");
        c.notify("initialized", json!({}));
        c
    }

    fn raw(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().unwrap();
        stdin.write_all(bytes).unwrap();
        stdin.flush().unwrap();
    }

    fn send(&mut self, doc: &Json) {
        let body = doc.to_string();
        self.raw(format!("Content-Length: {}\r\n\r\n{body}", body.len()).as_bytes());
    }

    fn notify(&mut self, method: &str, params: Json) {
        self.send(&json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    /// Sends a request and waits for its answer (the whole response).
    fn request(&mut self, method: &str, params: Json) -> Json {
        let id = self.next;
        self.next += 1;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        self.wait(|m| m["id"] == id && m.get("method").is_none())
    }

    /// The result of a request (panics on an error).
    fn result(&mut self, method: &str, params: Json) -> Json {
        let r = self.request(method, params);
        assert!(r.get("error").is_none(), "{method}: {r}");
        r["result"].clone()
    }

    /// The first message (seen or coming within 20 s) `pick` accepts.
    fn wait(&mut self, pick: impl Fn(&Json) -> bool) -> Json {
        if let Some(i) = self.seen.iter().position(&pick) {
            return self.seen.remove(i);
        }
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.rx.recv_timeout(left) {
                Ok(m) if pick(&m) => return m,
                Ok(m) => self.seen.push(m),
                Err(RecvTimeoutError::Timeout) => panic!("no answer; seen {:?}", self.seen),
                Err(RecvTimeoutError::Disconnected) => {
                    panic!("the server ended; seen {:?}", self.seen)
                }
            }
        }
    }

    /// The next diagnostics published for `uri` at `version`.
    fn diagnostics(&mut self, uri: &str, version: i64) -> Vec<Json> {
        let m = self.wait(|m| {
            m["method"] == "textDocument/publishDiagnostics"
                && m["params"]["uri"] == uri
                && m["params"]["version"] == version
        });
        m["params"]["diagnostics"].as_array().unwrap().clone()
    }

    fn open(&mut self, uri: &str, text: &str) {
        self.notify(
            "textDocument/didOpen",
            json!({"textDocument": {"uri": uri, "languageId": "yaml", "version": 1, "text": text}}),
        );
    }

    fn change(&mut self, uri: &str, version: i64, text: &str) {
        self.notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": uri, "version": version}, "contentChanges": [{"text": text}]}),
        );
    }

    /// Shutdown and exit; the exit status.
    fn stop(mut self) -> Option<i32> {
        let r = self.request("shutdown", Json::Null);
        assert!(r.get("error").is_none(), "{r}");
        self.notify("exit", Json::Null);
        drop(self.stdin.take());
        self.child.wait().unwrap().code()
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub(crate) fn uri(root: &std::path::Path, rel: &str) -> String {
    let p = std::fs::canonicalize(root).unwrap().join(rel);
    format!("file://{}", p.display())
}

fn at(uri: &str, line: u32, character: u32) -> Json {
    json!({"textDocument": {"uri": uri}, "position": {"line": line, "character": character}})
}

pub(crate) fn hover_text(c: &mut Client, uri: &str, line: u32, character: u32) -> String {
    let r = c.result("textDocument/hover", at(uri, line, character));
    r["contents"]["value"].as_str().unwrap_or("").to_string()
}

#[test]
fn lifecycle_and_a_hostile_client() {
    let dir = repo("hostile");
    let mut c = Client::start(&dir, &[]);
    // A request before initialize.
    let r = c.request("textDocument/hover", at("file:///x.yaml", 0, 0));
    assert_eq!(r["error"]["code"], -32002, "{r}");
    // Not JSON, not JSON-RPC, no Content-Length, an enormous announced length.
    c.raw(b"Content-Length: 9\r\n\r\n{not json");
    let r = c.wait(|m| m["error"]["code"] == -32700);
    assert_eq!(r["id"], Json::Null);
    c.send(&json!({"jsonrpc": "2.0", "id": 77, "method": 5}));
    let r = c.wait(|m| m["id"] == 77);
    assert_eq!(r["error"]["code"], -32600, "{r}");
    c.raw(b"X-Nothing: 1\r\n\r\n");
    c.wait(|m| m["error"]["code"] == -32600 && m["id"].is_null());
    let r = c.request(
        "initialize",
        json!({"processId": null, "rootUri": format!("file://{}", dir.display()), "capabilities": {"general": {"positionEncodings": ["utf-8", "utf-16"]}}}),
    );
    assert_eq!(r["result"]["capabilities"]["positionEncoding"], "utf-8");
    let r = c.request("initialize", json!({"capabilities": {}}));
    assert_eq!(r["error"]["code"], -32600);
    // Unknown methods, malformed parameters, positions past the end, odd URIs.
    let r = c.request("textDocument/unknownThing", json!({}));
    assert_eq!(r["error"]["code"], -32601);
    let r = c.request("textDocument/hover", json!({"textDocument": 3}));
    assert_eq!(r["error"]["code"], -32602);
    let common = uri(&dir, "data/common.yaml");
    c.open(&common, COMMON);
    for (line, ch) in [(999, 999), (0, 99999), (4, 4_000_000_000u32)] {
        let r = c.request("textDocument/hover", at(&common, line, ch));
        assert!(r.get("error").is_none(), "{r}");
    }
    for bad in ["http://x/y", "file:///nonexistent/%zz", "file:///dev/null"] {
        let r = c.request("textDocument/hover", at(bad, 0, 0));
        assert!(r.get("result").is_some() || r.get("error").is_some(), "{r}");
    }
    // An edit with a range past the end, then a notification the server does not know.
    c.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": common, "version": 2}, "contentChanges": [{"range": {"start": {"line": 500, "character": 3}, "end": {"line": 1, "character": 0}}, "text": "x"}]}),
    );
    c.notify("$/somethingElse", json!(null));
    // A large message is read past, and the server still answers.
    let big = format!(
        "Content-Length: {}\r\n\r\n",
        hiera_lsp::transport::MAX_MESSAGE + 10
    );
    c.raw(big.as_bytes());
    let chunk = vec![b' '; 1 << 20];
    let mut left = hiera_lsp::transport::MAX_MESSAGE + 10;
    while left > 0 {
        let n = left.min(chunk.len());
        c.raw(&chunk[..n]);
        left -= n;
    }
    c.wait(|m| m["error"]["code"] == -32600 && m["id"].is_null());
    let r = c.request("workspace/symbol", json!({"query": "ntp"}));
    assert!(r["result"].as_array().is_some_and(|a| !a.is_empty()), "{r}");
    assert_eq!(c.stop(), Some(0));
}

#[test]
fn exit_without_shutdown_is_status_1() {
    let dir = repo("exit");
    let mut c = Client::init(&dir, json!({}));
    c.notify("exit", Json::Null);
    drop(c.stdin.take());
    assert_eq!(c.child.wait().unwrap().code(), Some(1));
}

#[test]
fn hover_on_keys_for_one_node() {
    let dir = repo("hover");
    let mut c = Client::init(&dir, json!({"facts": "facts/web01.yaml"}));
    let common = uri(&dir, "data/common.yaml");
    c.open(&common, COMMON);
    // `ntp::iburst`: this definition wins, rendered as Puppet renders it.
    let h = hover_text(&mut c, &common, 3, 3);
    assert!(h.contains("`ntp::iburst`"), "{h}");
    assert!(h.contains("~~~yaml\n--- true\n~~~"), "{h}");
    assert!(h.contains("**wins**"), "{h}");
    assert!(h.contains("Merge: `first` (default)"), "{h}");
    assert!(
        h.contains("Class parameter `$iburst` of class `ntp`"),
        "{h}"
    );
    assert!(h.contains("type `Boolean`"), "{h}");
    // `ntp::servers`: merged (lookup_options unique) from the node's file and this one.
    let h = hover_text(&mut c, &common, 1, 5);
    assert!(h.contains("- web01.pool\n- common.pool"), "{h}");
    assert!(h.contains("**contributes**"), "{h}");
    assert!(h.contains("Merge: `unique` (lookup_options)"), "{h}");
    assert!(h.contains("`data/nodes/web01.example.com.yaml:1`"), "{h}");
    // Another node's file is not reached; a shadowed definition names the winner.
    let db = uri(&dir, "data/nodes/db01.example.com.yaml");
    c.open(&db, "ntp::iburst: false\n");
    let h = hover_text(&mut c, &db, 0, 2);
    assert!(h.contains("**not reached**"), "{h}");
    c.change(&common, 2, "ntp::iburst: true\nntp::servers: [x]\n");
    let web = uri(&dir, "data/nodes/web01.example.com.yaml");
    c.open(&web, "ntp::servers:\n  - web01.pool\nntp::iburst: false\n");
    let h = hover_text(&mut c, &common, 0, 2);
    assert!(h.contains("**shadowed**"), "{h}");
    assert!(h.contains("`data/nodes/web01.example.com.yaml:3`"), "{h}");
    // The unsaved buffer is what the hover reads: `--- false`.
    assert!(h.contains("--- false"), "{h}");
    c.stop();
}

#[test]
fn hover_for_a_fleet_counts_nodes() {
    let dir = repo("fleet");
    let mut c = Client::init(&dir, json!({"facts": "facts"}));
    let common = uri(&dir, "data/common.yaml");
    c.open(&common, COMMON);
    let h = hover_text(&mut c, &common, 3, 3);
    assert!(h.contains("2 nodes of facts"), "{h}");
    assert!(h.contains("**1 node**:\n~~~yaml\n--- false"), "{h}");
    assert!(h.contains("**1 node**:\n~~~yaml\n--- true"), "{h}");
    assert!(h.contains("shadowed for 1"), "{h}");
    assert!(h.contains("wins for 1"), "{h}");
    // selectNode narrows the context to one node.
    let r = c.result(
        "workspace/executeCommand",
        json!({"command": "hiera-lookup.selectNode", "arguments": ["db01.example.com"]}),
    );
    assert_eq!(r["nodes"], 1, "{r}");
    let h = hover_text(&mut c, &common, 3, 3);
    assert!(h.contains("node db01.example.com"), "{h}");
    assert!(h.contains("**shadowed**"), "{h}");
    let r = c.request(
        "workspace/executeCommand",
        json!({"command": "hiera-lookup.selectNode", "arguments": ["nobody"]}),
    );
    assert!(
        r["error"]["message"]
            .as_str()
            .unwrap()
            .contains("no node named nobody"),
        "{r}"
    );
    c.stop();
}

#[test]
fn hover_on_interpolations_paths_and_parameters_with_utf16() {
    let dir = repo("hover-more");
    let mut c = Client::init(&dir, json!({"facts": "facts/web01.yaml"}));
    let common = uri(&dir, "data/common.yaml");
    c.open(&common, COMMON);
    // `motd: "ü😀 %{facts.os.family}"`: in UTF-16, 'ü' is 1 unit and '😀' 2, so `%{` is at 11.
    let h = hover_text(&mut c, &common, 4, 13);
    assert!(h.contains("`%{facts.os.family}`"), "{h}");
    assert!(h.contains("--- Debian"), "{h}");
    let r = c.result("textDocument/hover", at(&common, 4, 13));
    assert_eq!(r["range"]["start"]["character"], 11, "{r}");
    // A hiera.yaml path: interpolated for the node, and whether the file exists.
    let hiera = uri(&dir, "hiera.yaml");
    c.open(&hiera, HIERA);
    let h = hover_text(&mut c, &hiera, 3, 12);
    assert!(
        h.contains("data/nodes/web01.example.com.yaml` — exists"),
        "{h}"
    );
    // Each path under the datadir the configuration gives its level (the unsaved buffer's
    // configuration): the level's own, else the defaults'.
    c.change(
        &hiera,
        2,
        "version: 5\ndefaults:\n  datadir: data\n  data_hash: yaml_data\nhierarchy:\n  - name: node\n    datadir: other\n    path: \"nodes/%{trusted.certname}.yaml\"\n  - name: common\n    path: common.yaml  # nodes/x.yaml\n",
    );
    let h = hover_text(&mut c, &hiera, 7, 12);
    assert!(
        h.contains("`other/nodes/web01.example.com.yaml` — **does not exist**"),
        "{h}"
    );
    let h = hover_text(&mut c, &hiera, 9, 12);
    assert!(h.contains("`data/common.yaml` — exists"), "{h}");
    let h = hover_text(&mut c, &hiera, 6, 14);
    assert!(h.contains("`other` — **does not exist**"), "{h}");
    let h = hover_text(&mut c, &hiera, 2, 12);
    assert!(h.contains("`data` — exists"), "{h}");
    c.change(&hiera, 3, HIERA);
    // A class parameter in a manifest: its Hiera value for the node.
    let init = uri(&dir, "modules/ntp/manifests/init.pp");
    c.open(&init, NTP);
    let h = hover_text(&mut c, &init, 1, 19);
    assert!(h.contains("`ntp::servers`"), "{h}");
    assert!(h.contains("- web01.pool"), "{h}");
    c.stop();
}

/// Files changed outside the editor are taken where they count: a facts file's nodes are
/// read again, a manifest goes into the schema, a saved buffer needs nothing more.
#[test]
fn files_changed_outside_the_editor() {
    let dir = repo("watched");
    let mut c = Client::init(&dir, json!({"facts": "facts/web01.yaml"}));
    let common = uri(&dir, "data/common.yaml");
    let text = format!("{COMMON}ntp::serverz: [a]\n");
    c.open(&common, &text);
    let codes = |d: &[Json]| -> Vec<String> {
        d.iter()
            .map(|d| d["code"].as_str().unwrap().to_string())
            .collect()
    };
    assert!(codes(&c.diagnostics(&common, 1)).contains(&"unknown-class-parameter".to_string()));
    assert!(hover_text(&mut c, &common, 4, 1).contains("Debian"));
    // The node's facts change on disk.
    std::fs::write(
        dir.join("facts/web01.yaml"),
        "clientcert: web01.example.com\nos:\n  family: RedHat\n",
    )
    .unwrap();
    let facts = uri(&dir, "facts/web01.yaml");
    c.notify(
        "workspace/didChangeWatchedFiles",
        json!({"changes": [{"uri": facts, "type": 2}]}),
    );
    c.diagnostics(&common, 1);
    let h = hover_text(&mut c, &common, 4, 1);
    assert!(h.contains("RedHat") && !h.contains("Debian"), "{h}");
    // The class gains the parameter on disk: the misspelling is a parameter now.
    let manifest = dir.join("modules/ntp/manifests/init.pp");
    std::fs::write(
        &manifest,
        NTP.replace(
            "Boolean $iburst",
            "Array[String] $serverz = [],\n  Boolean $iburst",
        ),
    )
    .unwrap();
    c.notify(
        "workspace/didChangeWatchedFiles",
        json!({"changes": [{"uri": uri(&dir, "modules/ntp/manifests/init.pp"), "type": 2}]}),
    );
    let d = c.diagnostics(&common, 1);
    assert!(
        !codes(&d).contains(&"unknown-class-parameter".to_string()),
        "{d:?}"
    );
    assert_eq!(c.stop(), Some(0));
}

#[test]
fn an_edit_updates_the_findings_of_other_open_files() {
    let dir = repo("cross-file");
    let mut c = Client::init(&dir, json!({"facts": "facts/web01.yaml"}));
    let common = uri(&dir, "data/common.yaml");
    let node = uri(&dir, "data/nodes/web01.example.com.yaml");
    c.open(&common, COMMON);
    assert!(c.diagnostics(&common, 1).is_empty());
    c.open(&node, "ntp::servers:\n  - \"%{lookup('motd')}\"\n");
    let d = c.diagnostics(&node, 1);
    assert!(d.is_empty(), "{d:?}");
    // `motd` goes from common.yaml: the node file's interpolation now reads nothing.
    c.change(&common, 2, &COMMON.replace("motd:", "motto:"));
    c.diagnostics(&common, 2);
    let d = c.diagnostics(&node, 1);
    let codes: Vec<&str> = d.iter().map(|d| d["code"].as_str().unwrap()).collect();
    assert!(codes.contains(&"interpolation-undefined-key"), "{d:?}");
    assert_eq!(c.stop(), Some(0));
}

#[test]
fn diagnostics_on_unsaved_buffers_and_code_actions() {
    let dir = repo("diagnostics");
    let mut c = Client::init(&dir, json!({"facts": "facts/web01.yaml"}));
    let common = uri(&dir, "data/common.yaml");
    c.open(&common, COMMON);
    let d = c.diagnostics(&common, 1);
    assert!(d.is_empty(), "{d:?}");
    // Unsaved: a misspelt parameter and a YAML 1.1 boolean.
    c.change(&common, 2, "ntp::serverz: [a]\nntp::iburst: yes\n");
    let d = c.diagnostics(&common, 2);
    let codes: Vec<&str> = d.iter().map(|d| d["code"].as_str().unwrap()).collect();
    assert!(codes.contains(&"unknown-class-parameter"), "{d:?}");
    assert!(codes.contains(&"yaml11-value"), "{d:?}");
    let actions = c.result(
        "textDocument/codeAction",
        json!({"textDocument": {"uri": common}, "range": {"start": {"line": 0, "character": 0}, "end": {"line": 2, "character": 0}}, "context": {"diagnostics": d}}),
    );
    let titles: Vec<&str> = actions
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["title"].as_str().unwrap())
        .collect();
    assert!(titles.contains(&"Rename to 'ntp::servers'"), "{titles:?}");
    assert!(titles.contains(&"Quote 'yes' (a string)"), "{titles:?}");
    let quote = actions
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["title"] == "Quote 'yes' (a string)")
        .unwrap();
    let edit = &quote["edit"]["changes"][&common][0];
    assert_eq!(edit["newText"], "'yes'");
    assert_eq!(edit["range"]["start"], json!({"line": 1, "character": 13}));
    assert_eq!(edit["range"]["end"], json!({"line": 1, "character": 16}));
    // The rename replaces the whole key, namespaces and all.
    let rename = actions
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["title"] == "Rename to 'ntp::servers'")
        .unwrap();
    let edit = &rename["edit"]["changes"][&common][0];
    assert_eq!(edit["range"]["start"], json!({"line": 0, "character": 0}));
    assert_eq!(edit["range"]["end"], json!({"line": 0, "character": 12}));
    // The past bug: a key before a `1:30` value was replaced only up to its first `:`.
    // The edits are lint's fix as it is, the value left to its own quick fix, in UTF-16
    // units (after a character outside the BMP on the last line).
    let text = "ntp::serverz: 1:30 # 😀\n\"ntp::iburts\": yes\n\"ü😀\": no\n";
    c.change(&common, 4, text);
    let d = c.diagnostics(&common, 4);
    let actions = c.result(
        "textDocument/codeAction",
        json!({"textDocument": {"uri": common}, "range": {"start": {"line": 0, "character": 0}, "end": {"line": 2, "character": 0}}, "context": {"diagnostics": d}}),
    );
    let edits_of = |title: &str| {
        let a = actions
            .as_array()
            .unwrap()
            .iter()
            .find(|a| a["title"] == title)
            .unwrap_or_else(|| panic!("no {title} in {actions}"));
        a["edit"]["changes"][&common].as_array().unwrap().clone()
    };
    let mut edits = edits_of("Rename to 'ntp::servers'");
    edits.extend(edits_of("Quote '1:30' (a string)"));
    edits.extend(edits_of("Rename to 'ntp::iburst'"));
    assert_eq!(edits.len(), 3, "{edits:?}");
    assert_eq!(
        apply(text, &edits),
        "ntp::servers: '1:30' # 😀\n\"ntp::iburst\": yes\n\"ü😀\": no\n"
    );
    let no = &edits_of("Quote 'no' (a string)")[0];
    assert_eq!(
        no["range"],
        json!({"start": {"line": 2, "character": 7}, "end": {"line": 2, "character": 9}})
    );
    assert_eq!(no["newText"], "'no'");
    let key = &edits_of("Rename to 'ntp::servers'")[0];
    assert_eq!(key["range"]["end"], json!({"line": 0, "character": 12}));
    assert_eq!(key["newText"], "ntp::servers");
    // The diagnostic covers what the finding is about: the key, the scalar.
    let range_of = |code: &str, line: u64| {
        d.iter()
            .find(|x| x["code"] == code && x["range"]["start"]["line"] == line)
            .map(|x| x["range"].clone())
            .unwrap_or_else(|| panic!("no {code} on line {line}: {d:?}"))
    };
    assert_eq!(
        range_of("yaml11-value", 0),
        json!({"start": {"line": 0, "character": 14}, "end": {"line": 0, "character": 18}})
    );
    assert_eq!(
        range_of("unknown-class-parameter", 1),
        json!({"start": {"line": 1, "character": 0}, "end": {"line": 1, "character": 13}})
    );
    // A YAML error, at its position.
    c.change(&common, 3, "a: 1\nb: [\n");
    let d = c.diagnostics(&common, 3);
    assert_eq!(d[0]["code"], "data-syntax", "{d:?}");
    assert_eq!(d[0]["severity"], 1);
    assert!(
        d[0]["range"]["start"]["line"].as_u64().unwrap() >= 1,
        "{d:?}"
    );
    // A file no hierarchy reads yet: its YAML all the same.
    let new = uri(&dir, "data/new.yaml");
    c.open(&new, "x: [\n");
    let d = c.diagnostics(&new, 1);
    assert_eq!(d[0]["code"], "data-syntax", "{d:?}");
    c.stop();
}

#[test]
fn definition_and_references() {
    let dir = repo("navigation");
    let mut c = Client::init(&dir, json!({"facts": "facts/web01.yaml"}));
    let common = uri(&dir, "data/common.yaml");
    let init = uri(&dir, "modules/ntp/manifests/init.pp");
    c.open(&common, COMMON);
    // A key → its class parameter.
    let r = c.result("textDocument/definition", at(&common, 1, 3));
    assert_eq!(r[0]["uri"], init, "{r}");
    assert_eq!(r[0]["range"]["start"], json!({"line": 1, "character": 16}));
    // `%{lookup('motd')}` → the key's definition.
    let r = c.result("textDocument/definition", at(&common, 5, 16));
    assert_eq!(r[0]["uri"], common, "{r}");
    assert_eq!(r[0]["range"]["start"]["line"], 4, "{r}");
    // A hiera.yaml path → the file.
    let hiera = uri(&dir, "hiera.yaml");
    let r = c.result("textDocument/definition", at(&hiera, 5, 12));
    assert_eq!(r[0]["uri"], common, "{r}");
    // References of a key: the parameter, every data definition, lookup_options.
    let r = c.result(
        "textDocument/references",
        json!({"textDocument": {"uri": common}, "position": {"line": 1, "character": 3}, "context": {"includeDeclaration": true}}),
    );
    let places: Vec<(String, u64)> = r
        .as_array()
        .unwrap()
        .iter()
        .map(|l| {
            (
                l["uri"]
                    .as_str()
                    .unwrap()
                    .rsplit('/')
                    .next()
                    .unwrap()
                    .to_string(),
                l["range"]["start"]["line"].as_u64().unwrap(),
            )
        })
        .collect();
    for want in [
        ("init.pp".to_string(), 1),
        ("common.yaml".to_string(), 1),
        ("common.yaml".to_string(), 7),
        ("web01.example.com.yaml".to_string(), 0),
    ] {
        assert!(places.contains(&want), "{want:?} in {places:?}");
    }
    // A lookup() call is a reference of its key (from the manifest).
    c.open(&init, NTP);
    let r = c.result(
        "textDocument/references",
        json!({"textDocument": {"uri": init}, "position": {"line": 4, "character": 22}, "context": {"includeDeclaration": true}}),
    );
    assert_eq!(r[0]["uri"], init, "{r}");
    assert_eq!(r[0]["range"]["start"]["line"], 4, "{r}");
    c.stop();
}

#[test]
fn completion_of_keys_options_and_facts() {
    let dir = repo("completion");
    let mut c = Client::init(&dir, json!({"facts": "facts/web01.yaml"}));
    let common = uri(&dir, "data/common.yaml");
    let text = "---\n\nmotd: \"%{facts.\"\nlookup_options:\n  ntp::servers:\n    merge: \n";
    c.open(&common, text);
    let labels = |r: &Json| -> Vec<String> {
        r["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| i["label"].as_str().unwrap().to_string())
            .collect()
    };
    let r = c.result("textDocument/completion", at(&common, 1, 0));
    assert!(labels(&r).contains(&"ntp::servers".to_string()), "{r}");
    let item = r["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["label"] == "ntp::servers")
        .unwrap();
    assert_eq!(item["detail"], "Array[String] (default [])");
    let r = c.result("textDocument/completion", at(&common, 2, 15));
    assert!(labels(&r).contains(&"os".to_string()), "{r}");
    let r = c.result("textDocument/completion", at(&common, 2, 9));
    assert!(labels(&r).contains(&"lookup('".to_string()), "{r}");
    let r = c.result("textDocument/completion", at(&common, 5, 11));
    assert_eq!(labels(&r), ["first", "unique", "hash", "deep"], "{r}");
    c.stop();
}

#[test]
fn symbols_inlay_hints_and_rename() {
    let dir = repo("symbols");
    let mut c = Client::init(&dir, json!({"facts": "facts/web01.yaml"}));
    let common = uri(&dir, "data/common.yaml");
    c.open(&common, COMMON);
    let r = c.result(
        "textDocument/documentSymbol",
        json!({"textDocument": {"uri": common}}),
    );
    let names: Vec<&str> = r
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "ntp::servers",
            "ntp::iburst",
            "motd",
            "greeting",
            "lookup_options"
        ]
    );
    assert_eq!(r[4]["children"][0]["name"], "ntp::servers");
    let r = c.result("workspace/symbol", json!({"query": "IBURST"}));
    assert_eq!(r.as_array().unwrap().len(), 2, "{r}");
    // Inlay hints: what the node gets where this file does not decide.
    let r = c.result(
        "textDocument/inlayHint",
        json!({"textDocument": {"uri": common}, "range": {"start": {"line": 0, "character": 0}, "end": {"line": 99, "character": 0}}}),
    );
    let hint = r
        .as_array()
        .unwrap()
        .iter()
        .find(|h| h["position"]["line"] == 1)
        .unwrap();
    assert!(
        hint["label"]
            .as_str()
            .unwrap()
            .contains("merged ⇒ - web01.pool - common.pool"),
        "{r}"
    );
    // Rename a key across the data files and lookup_options.
    let r = c.result("textDocument/prepareRename", at(&common, 1, 2));
    assert_eq!(r["placeholder"], "ntp::servers");
    let r = c.result(
        "textDocument/rename",
        json!({"textDocument": {"uri": common}, "position": {"line": 1, "character": 2}, "newName": "ntp::pool"}),
    );
    let changes = r["changes"].as_object().unwrap();
    assert_eq!(changes[&common].as_array().unwrap().len(), 2, "{r}");
    assert_eq!(
        changes[&uri(&dir, "data/nodes/web01.example.com.yaml")][0]["newText"],
        "ntp::pool"
    );
    c.stop();
}

#[test]
fn context_from_the_settings_file() {
    let dir = repo("settings");
    std::fs::write(
        dir.join(".hiera-lookup.toml"),
        "[lsp]\nfacts = \"facts\"\nnode = \"db01.example.com\"\n",
    )
    .unwrap();
    let mut c = Client::init(&dir, json!(null));
    let common = uri(&dir, "data/common.yaml");
    c.open(&common, COMMON);
    let h = hover_text(&mut c, &common, 3, 3);
    assert!(h.contains("node db01.example.com (facts)"), "{h}");
    c.stop();
}

#[test]
fn no_program_runs_without_allow_exec() {
    let dir = repo("exec");
    let marker = dir.join("ran");
    let script = dir.join("prog.sh");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\ntouch {}\necho '{{\"value\": 1}}'\n",
            marker.display()
        ),
    )
    .unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    std::fs::write(
        dir.join("hiera.yaml"),
        format!(
            "version: 5\nhierarchy:\n  - name: prog\n    lookup_key: command\n    options:\n      command: {}\n  - name: common\n    path: common.yaml\n",
            script.display()
        ),
    )
    .unwrap();
    let mut c = Client::init(&dir, json!({"facts": "facts/web01.yaml"}));
    let common = uri(&dir, "data/common.yaml");
    c.open(&common, COMMON);
    let h = hover_text(&mut c, &common, 3, 3);
    assert!(h.contains("--allow-exec"), "{h}");
    assert!(!marker.exists(), "a program ran");
    c.stop();
}

/// A real editor: headless Neovim (Debian's `neovim`) starts the server as its users do and
/// drives hover, definition, completion and diagnostics (tests/lsp/neovim.lua). Skipped, with
/// a notice, where Neovim is not installed.
#[test]
fn neovim_drives_hover_definition_completion_and_diagnostics() {
    // Even `nvim --version` writes a log into its home: every run gets a scratch one.
    let dir = repo("neovim");
    let root = std::fs::canonicalize(&*dir).unwrap();
    let editor = scratch_tree::tree("lsp", "neovim-home", &[]);
    let mut probe = Command::new("nvim");
    scratch_tree::own_home(&mut probe, &editor);
    let found = probe.arg("--version").output();
    if !found.is_ok_and(|o| o.status.success()) {
        eprintln!(
            "NOTICE: nvim is not installed: the Neovim test is skipped (apt-get install neovim)"
        );
        return;
    }
    let out = root.join("nvim-out.json");
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/lsp/neovim.lua");
    let mut command = Command::new("nvim");
    let home = scratch_tree::own_home(&mut command, &editor);
    let mut child = command
        .args(["--headless", "-u", "NONE", "-i", "NONE", "-n", "-c"])
        .arg(format!("luafile {}", script.display()))
        .env("HL_ROOT", &root)
        .env("HL_BIN", env!("CARGO_BIN_EXE_hiera-lookup"))
        .env("HL_OUT", &out)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("nvim did not finish");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let text = std::fs::read_to_string(&out).expect("nvim wrote its results");
    let r: Json = serde_json::from_str(&text).unwrap();
    let hover = r["hover"].as_str().unwrap();
    assert!(
        hover.contains("`ntp::iburst`") && hover.contains("--- true"),
        "{r}"
    );
    assert!(
        r["definition"]
            .as_str()
            .unwrap()
            .ends_with("modules/ntp/manifests/init.pp"),
        "{r}"
    );
    assert!(
        r["completion"]
            .as_array()
            .unwrap()
            .iter()
            .any(|l| l == "ntp::servers"),
        "{r}"
    );
    assert!(
        r["diagnostics"]
            .as_array()
            .unwrap()
            .iter()
            .any(|d| d["code"] == "unknown-class-parameter"),
        "{r}"
    );
    // What Neovim writes for itself (its log, its state) went to the scratch home.
    assert!(
        !scratch_tree::files_under(&home).is_empty(),
        "nvim wrote nothing to its home"
    );
}

/// The labels of a completion answer.
/// `text` with LSP text edits applied (UTF-16 positions; the edits do not overlap).
fn apply(text: &str, edits: &[Json]) -> String {
    let offset = |p: &Json| {
        let (line, ch) = (
            p["line"].as_u64().unwrap(),
            p["character"].as_u64().unwrap(),
        );
        let start: usize = text
            .split_inclusive('\n')
            .take(line as usize)
            .map(str::len)
            .sum();
        let mut units = 0;
        for (i, c) in text[start..].char_indices() {
            if units >= ch {
                return start + i;
            }
            units += c.len_utf16() as u64;
        }
        text.len()
    };
    let mut spans: Vec<(usize, usize, &str)> = edits
        .iter()
        .map(|e| {
            (
                offset(&e["range"]["start"]),
                offset(&e["range"]["end"]),
                e["newText"].as_str().unwrap(),
            )
        })
        .collect();
    spans.sort();
    let mut out = text.to_string();
    for (a, b, new) in spans.into_iter().rev() {
        out.replace_range(a..b, new);
    }
    out
}

fn labels(r: &Json) -> Vec<String> {
    r["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["label"].as_str().unwrap().to_string())
        .collect()
}

/// `(file name, line, character)` of each location of an answer.
fn places(r: &Json) -> Vec<(String, u64, u64)> {
    r.as_array()
        .unwrap()
        .iter()
        .map(|l| {
            (
                l["uri"]
                    .as_str()
                    .unwrap()
                    .rsplit('/')
                    .next()
                    .unwrap()
                    .to_string(),
                l["range"]["start"]["line"].as_u64().unwrap(),
                l["range"]["start"]["character"].as_u64().unwrap(),
            )
        })
        .collect()
}

#[test]
fn schema_types_exact_spans_templates_and_unsaved_manifests() {
    let dir = repo("schema");
    let motd_pp = "class motd (String $banner = '😀ü', Integer $width = 80) {}\n";
    std::fs::create_dir_all(dir.join("modules/motd/manifests")).unwrap();
    std::fs::write(dir.join("modules/motd/manifests/init.pp"), motd_pp).unwrap();
    std::fs::create_dir_all(dir.join("modules/ntp/templates")).unwrap();
    std::fs::write(
        dir.join("modules/ntp/templates/ntp.conf.epp"),
        "# ntp\nserver <%= lookup('ntp::servers')[0] %>\n",
    )
    .unwrap();
    let mut c = Client::init(&dir, json!({"facts": "facts/web01.yaml"}));
    let extra = uri(&dir, "data/extra.yaml");
    c.open(&extra, "\nmotd::width: 100\n");
    // Completion: the parameter's type and default.
    let r = c.result("textDocument/completion", at(&extra, 0, 0));
    let item = |r: &Json, label: &str| {
        r["items"]
            .as_array()
            .unwrap()
            .iter()
            .find(|i| i["label"] == label)
            .cloned()
            .unwrap_or_else(|| panic!("{label} in {r}"))
    };
    assert_eq!(item(&r, "ntp::iburst")["detail"], "Boolean (default false)");
    assert_eq!(item(&r, "motd::banner")["detail"], "String (default '😀ü')");
    // Definition: the `$width` of the declaration, its column in UTF-16 units.
    let r = c.result("textDocument/definition", at(&extra, 1, 3));
    let motd = uri(&dir, "modules/motd/manifests/init.pp");
    assert_eq!(r[0]["uri"], motd, "{r}");
    let col = motd_pp[..motd_pp.find("$width").unwrap()]
        .encode_utf16()
        .count();
    assert_eq!(r[0]["range"]["start"], json!({"line": 0, "character": col}));
    assert_eq!(
        r[0]["range"]["end"],
        json!({"line": 0, "character": col + "$width".len()})
    );
    // References: the declaration, the data, and lookups in manifests and templates.
    let common = uri(&dir, "data/common.yaml");
    let r = c.result(
        "textDocument/references",
        json!({"textDocument": {"uri": common}, "position": {"line": 1, "character": 3}, "context": {"includeDeclaration": true}}),
    );
    let got = places(&r);
    for want in [
        ("init.pp".to_string(), 1, 16),
        ("common.yaml".to_string(), 1, 0),
        ("web01.example.com.yaml".to_string(), 0, 0),
    ] {
        assert!(got.contains(&want), "{want:?} in {got:?}");
    }
    assert!(
        got.iter().any(|(f, l, _)| f == "ntp.conf.epp" && *l == 1),
        "{got:?}"
    );
    // An unsaved manifest counts before it is saved: a new parameter, a changed type…
    let init = uri(&dir, "modules/ntp/manifests/init.pp");
    let edited = NTP
        .replace(
            "Boolean $iburst = false",
            "Variant[Boolean, String] $iburst = false",
        )
        .replace(") {", "  String $pool = 'pool.ntp.org',\n) {");
    c.open(&init, NTP);
    c.change(&init, 2, &edited);
    let r = c.result("textDocument/completion", at(&extra, 0, 0));
    assert_eq!(
        item(&r, "ntp::pool")["detail"],
        "String (default 'pool.ntp.org')"
    );
    assert_eq!(
        item(&r, "ntp::iburst")["detail"],
        "Variant[Boolean, String] (default false)"
    );
    let h = hover_text(&mut c, &common, 3, 3);
    assert!(h.contains("type `Variant[Boolean, String]`"), "{h}");
    // … and a hover on its parameter in the manifest.
    let h = hover_text(&mut c, &init, 3, 11);
    assert!(h.contains("`ntp::pool`"), "{h}");
    // Closed unsaved, the disk's manifest counts again.
    c.notify(
        "textDocument/didClose",
        json!({"textDocument": {"uri": init}}),
    );
    let r = c.result("textDocument/completion", at(&extra, 0, 0));
    assert!(!labels(&r).contains(&"ntp::pool".to_string()), "{r}");
    assert_eq!(item(&r, "ntp::iburst")["detail"], "Boolean (default false)");
    c.stop();
}

#[test]
fn type_mismatch_and_unused_key_on_unsaved_data_and_manifest_buffers() {
    let dir = repo("type-mismatch");
    let mut c = Client::init(&dir, json!({"facts": "facts/web01.yaml"}));
    let common = uri(&dir, "data/common.yaml");
    c.open(&common, COMMON);
    let d = c.diagnostics(&common, 1);
    assert!(d.is_empty(), "{d:?}");
    // Unsaved data: a string against `Boolean $iburst`, and a key nothing uses.
    c.change(
        &common,
        2,
        &format!(
            "{}orphan: 1\n",
            COMMON.replace("ntp::iburst: true", "ntp::iburst: 'yes'")
        ),
    );
    let d = c.diagnostics(&common, 2);
    let m = d
        .iter()
        .find(|d| d["code"] == "parameter-type-mismatch")
        .unwrap_or_else(|| panic!("{d:?}"));
    assert_eq!(m["range"]["start"]["line"], 3, "{m}");
    assert!(m["message"].as_str().unwrap().contains("Boolean"), "{m}");
    let u = d
        .iter()
        .find(|d| d["code"] == "unused-key")
        .unwrap_or_else(|| panic!("{d:?}"));
    assert_eq!(u["range"]["start"]["line"], 9, "{u}");
    c.change(&common, 3, COMMON);
    let d = c.diagnostics(&common, 3);
    assert!(d.is_empty(), "{d:?}");
    // An unsaved manifest: `ntp::iburst: true` no longer matches the type it now declares.
    let init = uri(&dir, "modules/ntp/manifests/init.pp");
    c.open(&init, &NTP.replace("Boolean $iburst", "String $iburst"));
    let d = c.diagnostics(&common, 3);
    let m = d
        .iter()
        .find(|d| d["code"] == "parameter-type-mismatch")
        .unwrap_or_else(|| panic!("{d:?}"));
    assert_eq!(m["range"]["start"]["line"], 3, "{m}");
    assert!(m["message"].as_str().unwrap().contains("String"), "{m}");
    // Closed unsaved: the disk's `Boolean` again.
    c.notify(
        "textDocument/didClose",
        json!({"textDocument": {"uri": init}}),
    );
    let d = c.diagnostics(&common, 3);
    assert!(d.is_empty(), "{d:?}");
    c.stop();
}

#[test]
fn fleet_type_mismatch_by_node_and_inlay_hints_with_counts() {
    let dir = repo("fleet-types");
    std::fs::create_dir_all(dir.join("modules/motd/manifests")).unwrap();
    std::fs::write(
        dir.join("modules/motd/manifests/init.pp"),
        "class motd (Enum['Debian'] $family = 'Debian') {}\n",
    )
    .unwrap();
    let mut c = Client::init(&dir, json!({"facts": "facts"}));
    let common = uri(&dir, "data/common.yaml");
    // Judged only with the nodes: the interpolation gives db01 `RedHat`.
    let text = format!("{COMMON}motd::family: \"%{{facts.os.family}}\"\n");
    c.open(&common, &text);
    let d = c.diagnostics(&common, 1);
    let m = d
        .iter()
        .find(|d| d["code"] == "parameter-type-mismatch")
        .unwrap_or_else(|| panic!("{d:?}"));
    assert_eq!(m["range"]["start"]["line"], 9, "{m}");
    let msg = m["message"].as_str().unwrap();
    assert!(msg.contains("node db01.example.com"), "{msg}");
    assert!(!msg.contains("web01"), "{msg}");
    // Inlay hints: the values the fleet gets, with counts.
    let r = c.result(
        "textDocument/inlayHint",
        json!({"textDocument": {"uri": common}, "range": {"start": {"line": 0, "character": 0}, "end": {"line": 99, "character": 0}}}),
    );
    let label = |line: u64| -> String {
        r.as_array()
            .unwrap()
            .iter()
            .find(|h| h["position"]["line"] == line)
            .map(|h| h["label"].as_str().unwrap().to_string())
            .unwrap_or_else(|| panic!("no hint on line {line}: {r}"))
    };
    let iburst = label(3);
    assert!(iburst.contains("2 values over 2 nodes"), "{iburst}");
    assert!(iburst.contains("1× false, 1× true"), "{iburst}");
    let family = label(9);
    assert!(
        family.contains("Debian") && family.contains("RedHat"),
        "{family}"
    );
    c.stop();
}

/// Hovers and inlay hints on a key eyaml decrypts: `[redacted]`, never the plaintext, unless
/// the client asks for `showSecrets`.
#[test]
fn eyaml_plaintexts_only_with_show_secrets() {
    let secrets = format!("db::password: {}\n", crate::eyaml::OLD);
    let files = [
        ("hiera.yaml", crate::eyaml::hiera_yaml()),
        ("data/secrets.eyaml", secrets.clone()),
        ("data/common.yaml", "db::password: fallback\n".to_string()),
        ("facts/n1.yaml", "clientcert: n1\n".to_string()),
        ("facts/n2.yaml", "clientcert: n2\n".to_string()),
    ];
    let files: Vec<(&str, &str)> = files.iter().map(|(p, t)| (*p, t.as_str())).collect();
    let dir = scratch_tree::tree("lsp", "eyaml", &files);
    let all = json!({"textDocument": {"uri": uri(&dir, "data/common.yaml")}, "range": {"start": {"line": 0, "character": 0}, "end": {"line": 9, "character": 0}}});
    for (options, shown) in [
        (json!({"facts": "facts/n1.yaml"}), false),
        (json!({"facts": "facts"}), false),
        (json!({"facts": "facts/n1.yaml", "showSecrets": true}), true),
    ] {
        let mut c = Client::init(&dir, options.clone());
        let eyaml = uri(&dir, "data/secrets.eyaml");
        let common = uri(&dir, "data/common.yaml");
        c.open(&eyaml, &secrets);
        c.open(&common, "db::password: fallback\n");
        for (doc, what) in [
            (&eyaml, "on the eyaml key"),
            (&common, "on the shadowed key"),
        ] {
            let h = hover_text(&mut c, doc, 0, 3);
            assert_eq!(
                h.contains(crate::eyaml::OLD_PLAIN),
                shown,
                "{options} {what}: {h}"
            );
            if !shown {
                // Decrypted (the lookup succeeded), then redacted.
                assert!(h.contains("[redacted]"), "{options} {what}: {h}");
            }
        }
        let r = c.result("textDocument/inlayHint", all.clone());
        let hints = r.to_string();
        assert_eq!(
            hints.contains(crate::eyaml::OLD_PLAIN),
            shown,
            "{options}: {r}"
        );
        assert!(
            hints.contains(if shown {
                crate::eyaml::OLD_PLAIN
            } else {
                "[redacted]"
            }),
            "{options}: {r}"
        );
        let d = c.diagnostics(&common, 1);
        assert!(!format!("{d:?}").contains(crate::eyaml::OLD_PLAIN), "{d:?}");
        c.stop();
    }
}
