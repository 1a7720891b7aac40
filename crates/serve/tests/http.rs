//! The server at the HTTP level, in process (`tower::ServiceExt::oneshot` on the router: no
//! socket): every route, escaping, the file view's confinement, live reload, secrets and
//! command levels, the request bounds, and the OpenAPI document checked against the real
//! answers.

#[path = "../../../tests/common/eyaml.rs"]
mod eyaml;

use axum::body::Body;
use axum::http::{Request, StatusCode};
use hiera_facts::context::{NodeContext, NodeSources};
use hiera_serve::{Options, State};
use http_body_util::BodyExt;
use serde_json::{json, Value as Json};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use tower::ServiceExt;

/// A scratch directory, removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Scratch {
        let d = std::env::temp_dir().join(format!("hl-serve-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        Scratch(d)
    }
    fn write(&self, rel: &str, text: &str) {
        let p = self.0.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    fn repo(&self) -> PathBuf {
        self.0.join("repo")
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

const HIERA: &str = "version: 5
hierarchy:
  - name: node
    path: \"nodes/%{trusted.certname}.yaml\"
  - name: role
    path: \"roles/%{facts.role}.yaml\"
  - name: common
    path: common.yaml
";

const HOSTILE_KEY: &str = "<script>alert(1)</script>";

/// A control repo (`repo/`), its facts directory (`facts/`) and a file outside both.
fn fleet(name: &str) -> Scratch {
    let s = Scratch::new(name);
    s.write("repo/hiera.yaml", HIERA);
    s.write(
        "repo/data/common.yaml",
        "lookup_options:\n  users:\n    merge: deep\nport: 80\nusers:\n  alice: 1\n\"<script>alert(1)</script>\": \"<img src=x onerror=alert(2)>\"\nmotd: \"hello %{facts.role}\"\nlegacy: yes\n",
    );
    s.write("repo/data/roles/web.yaml", "port: 8080\nusers:\n  bob: 2\n");
    s.write("repo/data/nodes/web01.yaml", "motd: only web01\n");
    s.write("repo/data/unused.yaml", "port: 1\n");
    s.write(
        "repo/keys/private_key.pkcs7.pem",
        "-----BEGIN PRIVATE KEY-----\n",
    );
    s.write("repo/.git-like/config", "token\n");
    s.write("repo/.hidden.yaml", "x: 1\n");
    s.write("outside/secret.yaml", "secret: outside\n");
    s.write("facts/web01.yaml", "clientcert: web01\nrole: web\n");
    s.write(
        "facts/db01.json",
        "{\"clientcert\": \"db01\", \"role\": \"db\"}\n",
    );
    s.write(
        "facts/evil.yaml",
        "clientcert: \"<img src=x onerror=alert(3)>\"\nrole: db\n",
    );
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(
            s.0.join("outside/secret.yaml"),
            s.repo().join("data/out.yaml"),
        )
        .unwrap();
        std::os::unix::fs::symlink(s.0.join("outside"), s.repo().join("data/outdir")).unwrap();
        std::os::unix::fs::symlink(
            s.repo().join("keys/private_key.pkcs7.pem"),
            s.repo().join("data/key.yaml"),
        )
        .unwrap();
        std::os::unix::fs::symlink(
            s.repo().join("data/roles/web.yaml"),
            s.repo().join("data/web-link.yaml"),
        )
        .unwrap();
    }
    s
}

/// The node context of the tests, as the command line makes it for `serve -C repo
/// --facts-dir facts` in the scratch directory: the one node builder every command uses.
fn context(s: &Scratch) -> NodeContext {
    NodeSources {
        repo: Some("repo".into()),
        facts_dir: Some("facts".into()),
        ..Default::default()
    }
    .resolve_in(&s.0)
    .unwrap()
}

fn options(root: &Path) -> Options {
    Options {
        threads: 2,
        ..Options::new(root.to_path_buf())
    }
}

fn app_with(s: &Scratch, options: Options) -> axum::Router {
    let state = State::open(context(s), options).unwrap();
    hiera_serve::app(Arc::new(state))
}

fn app(s: &Scratch) -> axum::Router {
    app_with(s, options(&s.repo()))
}

/// An answer: status, content type, CSP header and body.
struct Got {
    status: StatusCode,
    kind: String,
    csp: String,
    body: String,
}

impl Got {
    fn json(&self) -> Json {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("{e}: {}", self.body))
    }
}

async fn send(app: &axum::Router, req: Request<Body>) -> Got {
    let res = app.clone().oneshot(req).await.unwrap();
    let status = res.status();
    let header = |n: &str| {
        res.headers()
            .get(n)
            .map(|v| v.to_str().unwrap().to_string())
            .unwrap_or_default()
    };
    let (kind, csp) = (header("content-type"), header("content-security-policy"));
    let bytes = res.into_body().collect().await.unwrap().to_bytes();
    Got {
        status,
        kind,
        csp,
        body: String::from_utf8(bytes.to_vec()).unwrap(),
    }
}

async fn get(app: &axum::Router, uri: &str) -> Got {
    send(app, Request::get(uri).body(Body::empty()).unwrap()).await
}

async fn post(app: &axum::Router, uri: &str, body: &str) -> Got {
    send(
        app,
        Request::post(uri)
            .header("content-type", "application/json")
            .body(Body::from(body.to_string()))
            .unwrap(),
    )
    .await
}

fn enc(s: &str) -> String {
    hiera_serve::pages::segment(s)
}

#[tokio::test]
async fn every_page_and_api_route_answers() {
    let s = fleet("routes");
    let app = app(&s);
    let pages = [
        "/".to_string(),
        "/?q=port".into(),
        "/nodes".into(),
        "/nodes?q=web".into(),
        "/nodes/web01".into(),
        "/nodes/web01?q=po".into(),
        "/nodes/web01/keys/port".into(),
        "/keys/port".into(),
        "/keys/users".into(),
        "/lint".into(),
        "/diff".into(),
        "/files/".into(),
        "/files".into(),
        "/files/data/common.yaml".into(),
        "/files/data".into(),
    ];
    for p in &pages {
        let g = get(&app, p).await;
        assert_eq!(g.status, StatusCode::OK, "{p}: {}", g.body);
        assert!(g.kind.starts_with("text/html"), "{p}: {}", g.kind);
        assert!(g.csp.contains("default-src 'none'"), "{p}");
        assert!(g.body.starts_with("<!DOCTYPE html>"), "{p}");
    }
    for (p, kind) in [
        ("/assets/style.css", "text/css"),
        ("/assets/app.js", "text/javascript"),
    ] {
        let g = get(&app, p).await;
        assert_eq!(g.status, StatusCode::OK);
        assert!(g.kind.starts_with(kind));
    }
    assert_eq!(
        get(&app, "/assets/other.js").await.status,
        StatusCode::NOT_FOUND
    );

    // The node view: every key, the winning file:line, the merge.
    let node = get(&app, "/api/v1/nodes/web01").await.json();
    let keys: Vec<&str> = node["keys"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| k["key"].as_str().unwrap())
        .collect();
    assert!(keys.contains(&"port") && keys.contains(&"motd") && keys.contains(&HOSTILE_KEY));
    let port = node["keys"]
        .as_array()
        .unwrap()
        .iter()
        .find(|k| k["key"] == "port")
        .unwrap();
    assert_eq!(port["value"], 8080);
    assert_eq!(port["merge"], "first");
    assert_eq!(port["sources"][0]["path"], "data/roles/web.yaml");
    assert_eq!(port["sources"][0]["line"], 1);
    let users = node["keys"]
        .as_array()
        .unwrap()
        .iter()
        .find(|k| k["key"] == "users")
        .unwrap();
    assert_eq!(users["merge"], "deep");
    assert_eq!(users["value"], json!({"bob": 2, "alice": 1}));
    assert_eq!(users["sources"].as_array().unwrap().len(), 2);

    // One node and key: a batch line's fields, where's report, and the explanation.
    let one = get(&app, "/api/v1/nodes/web01/keys/port?explain=1")
        .await
        .json();
    assert_eq!(one["node"], "web01");
    assert_eq!(one["facts"], "facts/web01.yaml");
    assert_eq!(
        (one["found"].clone(), one["value"].clone()),
        (json!(true), json!(8080))
    );
    assert!(one["explain"]
        .as_str()
        .unwrap()
        .contains("Searching for \"port\""));
    let defs = one["where"]["definitions"].as_array().unwrap();
    assert_eq!(defs[0]["role"], "wins");
    assert!(defs
        .iter()
        .any(|d| d["role"] == "shadowed" && d["path"] == "data/common.yaml"));
    assert!(defs
        .iter()
        .any(|d| d["role"] == "not reached" && d["path"] == "data/unused.yaml"));
    let no_explain = get(&app, "/api/v1/nodes/web01/keys/port").await.json();
    assert!(no_explain.get("explain").is_none());
    let missing = get(&app, "/api/v1/nodes/web01/keys/nothing").await.json();
    assert_eq!(missing["found"], false);

    // The key across the fleet: values grouped, definitions with the nodes they win for.
    let key = get(&app, "/api/v1/keys/port").await.json();
    assert_eq!(key["nodes"], 3);
    let values = key["values"].as_array().unwrap();
    assert_eq!(values[0]["value"], 80);
    assert_eq!(values[0]["count"], 2);
    assert_eq!(
        values[1],
        json!({"value": 8080, "count": 1, "nodes": ["web01"]})
    );
    let common = key["definitions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["path"] == "data/common.yaml")
        .unwrap();
    assert_eq!(common["wins"].as_array().unwrap().len(), 2);
    assert_eq!(common["shadowed"], json!(["web01"]));
    // Definitions no node reaches come last.
    let defs = key["definitions"].as_array().unwrap();
    let unused = defs
        .iter()
        .position(|d| d["path"] == "data/unused.yaml")
        .unwrap();
    assert!(defs[unused..].iter().all(|d| d["reached_by"] == 0));
    assert!(defs[..unused].iter().all(|d| d["reached_by"] != 0));
    let users = get(&app, "/api/v1/keys/users").await.json();
    assert_eq!(users["lookup_options"][0]["name"], "users");
    let nodes = get(&app, "/api/v1/nodes").await.json();
    assert_eq!(nodes.as_array().unwrap().len(), 3);

    // The overview: layers, levels, files and who reaches them, search.
    let o = get(&app, "/api/v1/?q=web").await.json();
    assert_eq!(
        o["layers"][0]["levels"][1]["locations"]["templates"][0],
        "roles/%{facts.role}.yaml"
    );
    let reach = |path: &str| {
        o["files"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["path"] == path)
            .map(|f| f["nodes"].clone())
    };
    assert_eq!(reach("data/common.yaml"), Some(json!(3)));
    assert_eq!(reach("data/roles/web.yaml"), Some(json!(1)));
    assert!(o["unreached_files"]
        .as_array()
        .unwrap()
        .iter()
        .any(|f| f["path"] == "data/unused.yaml"));
    assert_eq!(o["search"]["nodes"], json!(["web01"]));
    assert!(o["lint"]["warning"].is_u64(), "{}", o["lint"]);

    // Lint and files.
    let lint = get(&app, "/api/v1/lint").await.json();
    assert!(lint["counts"]["error"].is_u64());
    // A finding in a data file names the nodes that reach it.
    let yes = lint["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["rule"] == "yaml11-value" && f["path"] == "data/common.yaml")
        .unwrap_or_else(|| panic!("{lint}"));
    assert_eq!(yes["reached_by"], 3, "{yes}");
    assert!(yes["nodes"].as_array().unwrap().contains(&json!("web01")));
    let file = get(&app, "/api/v1/files/data/roles/web.yaml").await.json();
    assert_eq!(file["lines"][0], "port: 8080");
    let dir = get(&app, "/api/v1/files").await.json();
    assert!(dir["entries"]
        .as_array()
        .unwrap()
        .iter()
        .any(|e| e["name"] == "data" && e["dir"] == true));

    // Errors are JSON on the API, pages elsewhere.
    let g = get(&app, "/api/v1/nodes/nobody").await;
    assert_eq!(g.status, StatusCode::NOT_FOUND);
    assert_eq!(g.json()["error"], "no node named nobody");
    let g = get(&app, "/api/v1/nowhere").await;
    assert_eq!(g.status, StatusCode::NOT_FOUND);
    assert!(g.json()["error"].is_string());
    let g = get(&app, "/nodes/nobody").await;
    assert_eq!(g.status, StatusCode::NOT_FOUND);
    assert!(g.kind.starts_with("text/html"));
    assert_eq!(
        get(&app, "/api/v1/diff").await.status,
        StatusCode::BAD_REQUEST
    );
}

/// Every file:line a page shows links to the file view's line anchor; lint findings link the
/// nodes they matter to; a key's node lists expand; a node's key page has the level-by-level
/// table and the explanation.
#[tokio::test]
async fn pages_link_file_lines_and_nodes() {
    let s = fleet("links");
    let app = app(&s);
    let lint = get(&app, "/lint").await.body;
    // `legacy: yes` (a YAML 1.1 boolean) is line 9 of data/common.yaml.
    assert!(
        lint.contains("href=\"/files/data/common.yaml#L9\""),
        "{lint}"
    );
    assert!(lint.contains("href=\"/nodes/web01\""), "{lint}");
    let node = get(&app, "/nodes/web01").await.body;
    assert!(
        node.contains("href=\"/files/data/roles/web.yaml#L1\""),
        "{node}"
    );
    assert!(node.contains("href=\"/nodes/web01/keys/port\""), "{node}");
    let key = get(&app, "/keys/port").await.body;
    assert!(key.contains("href=\"/files/data/common.yaml#L4\""), "{key}");
    assert!(key.contains("<details"), "{key}");
    assert!(key.contains("href=\"/nodes/db01/keys/port\""), "{key}");
    let one = get(&app, "/nodes/web01/keys/port").await.body;
    for level in [
        "wins",
        "shadowed",
        "not reached",
        "Searching for &quot;port&quot;",
    ] {
        assert!(one.contains(level), "{level}: {one}");
    }
    assert!(one.contains("href=\"/files/data/unused.yaml#L1\""), "{one}");
}

#[tokio::test]
async fn hostile_names_render_as_text() {
    let s = fleet("escape");
    let app = app(&s);
    let evil_node = "<img src=x onerror=alert(3)>";
    let pages = [
        format!("/keys/{}", enc(HOSTILE_KEY)),
        format!("/nodes/{}", enc(evil_node)),
        format!("/nodes/web01/keys/{}", enc(HOSTILE_KEY)),
        format!("/nodes/{}/keys/{}", enc(evil_node), enc(HOSTILE_KEY)),
        "/nodes/web01".into(),
        "/nodes".into(),
        "/?q=%3C".into(),
        "/files/data/common.yaml".into(),
    ];
    for p in &pages {
        let g = get(&app, p).await;
        assert_eq!(g.status, StatusCode::OK, "{p}: {}", g.body);
        for raw in ["<script>alert", "<img src=x", "onerror=alert(2)>"] {
            assert!(!g.body.contains(raw), "{p} holds {raw}: {}", g.body);
        }
        // The one script is the server's own.
        assert_eq!(g.body.matches("<script").count(), 1, "{p}");
    }
    let g = get(&app, &format!("/keys/{}", enc(HOSTILE_KEY))).await;
    assert!(
        g.body.contains("&lt;script&gt;alert(1)&lt;/script&gt;"),
        "{}",
        g.body
    );
    assert!(g.body.contains("&lt;img src=x onerror=alert(2)&gt;"));
    // Links to hostile names are percent-encoded paths.
    let g = get(&app, "/nodes").await;
    assert!(
        g.body
            .contains("href=\"/nodes/%3Cimg%20src%3Dx%20onerror%3Dalert%283%29%3E\""),
        "{}",
        g.body
    );
    // The API has the name as it is.
    let j = get(&app, &format!("/api/v1/keys/{}", enc(HOSTILE_KEY)))
        .await
        .json();
    assert_eq!(j["key"], HOSTILE_KEY);
    assert_eq!(j["values"][0]["value"], "<img src=x onerror=alert(2)>");
}

#[tokio::test]
async fn files_stay_inside_the_repo() {
    let s = fleet("files");
    let app = app(&s);
    for p in [
        "/files/../outside/secret.yaml",
        "/files/..%2Foutside%2Fsecret.yaml",
        "/files/%2e%2e/outside/secret.yaml",
        "/files/data/../../outside/secret.yaml",
        "/files//etc/passwd",
        "/files/data/out.yaml",
        "/files/data/outdir/secret.yaml",
        "/files/data/outdir",
        "/files/data/key.yaml",
        "/files/keys/private_key.pkcs7.pem",
        "/files/.git-like/config",
        "/files/.hidden.yaml",
        "/files/data/nothing.yaml",
        "/files/data/common.yaml%00.pem",
        "/api/v1/files/../outside/secret.yaml",
        "/api/v1/files/data/out.yaml",
        "/api/v1/files/keys/private_key.pkcs7.pem",
    ] {
        let g = get(&app, p).await;
        assert_eq!(g.status, StatusCode::NOT_FOUND, "{p}: {}", g.body);
        // Nothing outside the repo is named (an error may repeat the path asked for, never
        // where it leads on the server).
        assert!(!g.body.contains("outside") || p.contains("outside"), "{p}");
        assert!(!g.body.contains(&*s.0.to_string_lossy()), "{p}: {}", g.body);
        assert!(
            !g.body.contains("secret: outside") && !g.body.contains("BEGIN PRIVATE"),
            "{p}"
        );
    }
    // A link inside the repo to a file inside it is shown.
    let g = get(&app, "/files/data/web-link.yaml").await;
    assert_eq!(g.status, StatusCode::OK);
    // Line anchors.
    let g = get(&app, "/files/data/common.yaml").await;
    assert!(
        g.body
            .contains("<tr id=\"L4\"><td class=\"ln\"><a href=\"#L4\">4</a>"),
        "{}",
        g.body
    );
    assert!(g.body.contains("port: 80"));
    // Listings leave out what they would not show.
    let g = get(&app, "/api/v1/files/data").await.json();
    let names: BTreeSet<&str> = g["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["name"].as_str().unwrap())
        .collect();
    assert!(names.contains("common.yaml") && names.contains("web-link.yaml"));
    for hidden in ["out.yaml", "outdir", "key.yaml"] {
        assert!(!names.contains(hidden), "{hidden}");
    }
    let g = get(&app, "/api/v1/files").await.json();
    let names: BTreeSet<&str> = g["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["name"].as_str().unwrap())
        .collect();
    assert!(
        names.contains("data") && !names.contains(".git-like") && !names.contains(".hidden.yaml")
    );
}

#[tokio::test]
async fn edits_show_on_the_next_request() {
    let s = fleet("live");
    let app = app(&s);
    let port = |j: Json| j["value"].clone();
    assert_eq!(
        port(get(&app, "/api/v1/nodes/db01/keys/port").await.json()),
        80
    );
    // The key across the fleet is kept while nothing changes…
    let first = |j: Json| j["values"][0]["value"].clone();
    assert_eq!(first(get(&app, "/api/v1/keys/port").await.json()), 80);
    assert_eq!(first(get(&app, "/api/v1/keys/port").await.json()), 80);
    // …and a data file edited (same length: the stamp's time or inode tells) shows at once.
    std::thread::sleep(std::time::Duration::from_millis(20));
    s.write("repo/data/common.yaml", "port: 81\n");
    assert_eq!(
        port(get(&app, "/api/v1/nodes/db01/keys/port").await.json()),
        81
    );
    assert_eq!(first(get(&app, "/api/v1/keys/port").await.json()), 81);
    // The overview's counts, then a data file added: both seen.
    let reach = |o: &Json, path: &str| {
        o["files"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["path"] == path)
            .map(|f| f["nodes"].clone())
    };
    let o = get(&app, "/api/v1/").await.json();
    assert_eq!(reach(&o, "data/roles/db.yaml"), None);
    let keys_before = o["key_count"].as_u64().unwrap();
    s.write("repo/data/roles/db.yaml", "port: 5432\nonly_db: 1\n");
    assert_eq!(
        port(get(&app, "/api/v1/nodes/db01/keys/port").await.json()),
        5432
    );
    let o = get(&app, "/api/v1/").await.json();
    assert_eq!(reach(&o, "data/roles/db.yaml"), Some(json!(2)));
    assert_eq!(o["key_count"].as_u64().unwrap(), keys_before + 1);
    // hiera.yaml edited: the role level is gone.
    s.write(
        "repo/hiera.yaml",
        "version: 5\nhierarchy:\n  - name: common\n    path: common.yaml\n",
    );
    assert_eq!(
        port(get(&app, "/api/v1/nodes/db01/keys/port").await.json()),
        81
    );
    // A facts file edited, added, removed.
    s.write(
        "facts/db01.json",
        "{\"clientcert\": \"db01\", \"role\": \"web\"}\n",
    );
    s.write("repo/hiera.yaml", HIERA);
    assert_eq!(
        port(get(&app, "/api/v1/nodes/db01/keys/port").await.json()),
        8080
    );
    s.write("facts/new01.yaml", "clientcert: new01\nrole: db\n");
    let names = |j: Json| -> Vec<String> {
        j.as_array()
            .unwrap()
            .iter()
            .map(|n| n["node"].as_str().unwrap().to_string())
            .collect()
    };
    assert!(names(get(&app, "/api/v1/nodes").await.json()).contains(&"new01".to_string()));
    assert_eq!(
        port(get(&app, "/api/v1/nodes/new01/keys/port").await.json()),
        5432
    );
    std::fs::remove_file(s.0.join("facts/new01.yaml")).unwrap();
    assert!(!names(get(&app, "/api/v1/nodes").await.json()).contains(&"new01".to_string()));
    assert_eq!(get(&app, "/api/v1/").await.json()["node_count"], 3);
    assert_eq!(
        get(&app, "/api/v1/nodes/new01").await.status,
        StatusCode::NOT_FOUND
    );
    // The fleet view follows.
    let key = get(&app, "/api/v1/keys/port").await.json();
    assert!(key["values"]
        .as_array()
        .unwrap()
        .iter()
        .any(|v| v["value"] == 8080 && v["count"] == 2));
    // A facts file that breaks is that node's error; the others still answer.
    s.write("facts/db01.json", "{not json");
    let nodes = get(&app, "/api/v1/nodes").await.json();
    let db = nodes
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n["certname"] == "db01")
        .unwrap();
    assert!(db["error"].is_string());
    assert_eq!(
        port(get(&app, "/api/v1/nodes/web01/keys/port").await.json()),
        8080
    );
}

#[tokio::test]
async fn posted_facts_are_answered() {
    let s = fleet("post");
    let app = app(&s);
    // A JSON body: facts (any shape --facts reads) and keys.
    let g = post(
        &app,
        "/api/v1/lookup",
        &json!({"facts": {"clientcert": "laptop", "role": "web"}, "keys": ["port", "users", "nothing"], "explain": true}).to_string(),
    )
    .await;
    assert_eq!(g.status, StatusCode::OK, "{}", g.body);
    let j = g.json();
    assert_eq!(j["node"], "laptop");
    assert_eq!(
        j["answers"][0],
        json!({"node": "laptop", "key": "port", "found": true, "value": 8080, "explain": j["answers"][0]["explain"]})
    );
    assert_eq!(j["answers"][1]["value"], json!({"bob": 2, "alice": 1}));
    assert_eq!(j["answers"][2]["found"], false);
    assert!(j["answers"][0]["explain"]
        .as_str()
        .unwrap()
        .contains("roles/web.yaml"));
    // `puppet facts` output as YAML text, merge given.
    let yaml = "name: laptop2\nvalues:\n  clientcert: laptop2\n  role: db\n";
    let g = post(
        &app,
        "/api/v1/lookup",
        &json!({"facts": yaml, "keys": ["users"], "merge": "first"}).to_string(),
    )
    .await;
    let j = g.json();
    assert_eq!(j["node"], "laptop2");
    assert_eq!(j["answers"][0]["value"], json!({"alice": 1}));
    // The facts document as the body, the keys in the query (`curl --data-binary @facts.json`).
    let g = post(
        &app,
        "/api/v1/lookup?key=port&key=motd",
        "{\"role\": \"web\"}",
    )
    .await;
    let j = g.json();
    assert_eq!(j["node"], "posted");
    assert_eq!(j["answers"][0]["value"], 8080);
    assert_eq!(j["answers"][1]["value"], "hello web");
    // Bad requests say why.
    for (uri, body) in [
        ("/api/v1/lookup", "not json"),
        ("/api/v1/lookup", "{\"facts\": {\"a\": 1}}"),
        ("/api/v1/lookup", "{\"keys\": [\"port\"]}"),
        ("/api/v1/lookup", "{\"facts\": {\"a\": 1}, \"keys\": []}"),
        (
            "/api/v1/lookup",
            "{\"facts\": {\"a\": 1}, \"keys\": [\"port\"], \"merge\": \"bogus\"}",
        ),
        ("/api/v1/lookup?key=port", "- just\n- a list\n"),
        (
            "/api/v1/lookup",
            "{\"facts\": {\"server_facts\": 1}, \"keys\": [\"port\"]}",
        ),
    ] {
        let g = post(&app, uri, body).await;
        assert_eq!(g.status, StatusCode::BAD_REQUEST, "{body}: {}", g.body);
        assert!(g.json()["error"].is_string());
    }
    let too_many: Vec<String> = (0..=hiera_serve::views::MAX_POSTED_KEYS)
        .map(|i| format!("k{i}"))
        .collect();
    let g = post(
        &app,
        "/api/v1/lookup",
        &json!({"facts": {"a": 1}, "keys": too_many}).to_string(),
    )
    .await;
    assert_eq!(g.status, StatusCode::BAD_REQUEST);
    // GET is not a lookup.
    assert_eq!(
        get(&app, "/api/v1/lookup").await.status,
        StatusCode::METHOD_NOT_ALLOWED
    );
}

#[tokio::test]
async fn requests_are_bounded() {
    let s = fleet("bounds");
    let app = app(&s);
    let big = "x".repeat(hiera_serve::MAX_BODY_BYTES + 1);
    let g = post(&app, "/api/v1/lookup?key=port", &big).await;
    assert_eq!(g.status, StatusCode::PAYLOAD_TOO_LARGE);
    let long = format!("/keys/{}", "a".repeat(hiera_serve::MAX_URI_BYTES));
    let g = get(&app, &long).await;
    assert_eq!(g.status, StatusCode::URI_TOO_LONG);
    assert!(g.csp.contains("default-src 'none'"));
    let g = get(
        &app,
        &format!(
            "/api/v1/keys/{}",
            "a".repeat(hiera_serve::views::MAX_KEY_BYTES + 1)
        ),
    )
    .await;
    assert_eq!(g.status, StatusCode::BAD_REQUEST);
    let g = get(&app, "/api/v1/diff?base=--output=/tmp/x").await;
    assert_eq!(g.status, StatusCode::BAD_REQUEST);
}

/// A repo whose hierarchy has an eyaml level holding `OLDSECRET1`.
fn secret_repo(name: &str) -> Scratch {
    let s = Scratch::new(name);
    let keys = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/backends/eyaml/keys");
    s.write(
        "repo/hiera.yaml",
        &format!(
            "version: 5\nhierarchy:\n  - name: secrets\n    lookup_key: eyaml_lookup_key\n    path: secrets.eyaml\n    options:\n      pkcs7_private_key: {}\n      pkcs7_public_key: {}\n  - name: common\n    path: common.yaml\n",
            keys.join("private_key.pkcs7.pem").display(),
            keys.join("public_key.pkcs7.pem").display()
        ),
    );
    s.write(
        "repo/data/secrets.eyaml",
        &format!("db::password: {}\n", eyaml::OLD),
    );
    s.write(
        "repo/data/common.yaml",
        "dsn: \"postgres://app:%{lookup('db::password')}@db\"\n",
    );
    s.write("facts/web01.yaml", "clientcert: web01\n");
    s
}

#[tokio::test]
async fn secrets_are_redacted_unless_shown() {
    let s = secret_repo("secrets");
    let app = app(&s);
    let uris = [
        "/api/v1/nodes/web01/keys/db::password?explain=1",
        "/api/v1/nodes/web01/keys/dsn?explain=1",
        "/api/v1/nodes/web01",
        "/api/v1/keys/db::password",
        "/api/v1/keys/dsn",
        "/nodes/web01/keys/db::password",
        "/nodes/web01/keys/dsn",
        "/nodes/web01",
        "/keys/dsn",
        "/keys/db::password",
    ];
    for u in uris {
        let g = get(&app, u).await;
        assert_eq!(g.status, StatusCode::OK, "{u}");
        assert!(
            !g.body.contains(eyaml::OLD_PLAIN),
            "{u} shows the plaintext: {}",
            g.body
        );
        assert!(g.body.contains("[redacted]"), "{u}: {}", g.body);
    }
    let g = post(
        &app,
        "/api/v1/lookup?key=dsn&explain=1",
        "{\"clientcert\": \"x\"}",
    )
    .await;
    assert!(
        !g.body.contains(eyaml::OLD_PLAIN) && g.body.contains("[redacted]"),
        "{}",
        g.body
    );
    let j = get(&app, "/api/v1/nodes/web01/keys/dsn").await.json();
    assert_eq!(j["value"], "postgres://app:[redacted]@db");

    let shown = app_with(
        &s,
        Options {
            show_secrets: true,
            ..options(&s.repo())
        },
    );
    let j = get(&shown, "/api/v1/nodes/web01/keys/dsn").await.json();
    assert_eq!(
        j["value"],
        format!("postgres://app:{}@db", eyaml::OLD_PLAIN)
    );
}

#[cfg(unix)]
#[tokio::test]
async fn command_levels_do_not_run_unless_allowed() {
    use std::os::unix::fs::PermissionsExt;
    let s = Scratch::new("exec");
    let marker = s.0.join("ran");
    let prog = s.0.join("prog.sh");
    std::fs::write(
        &prog,
        format!(
            "#!/bin/sh\ntouch {}\nif grep -q '\"k\"'; then echo '{{\"found\": true, \"value\": \"from the program\"}}'; else echo '{{\"found\": false}}'; fi\n",
            marker.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&prog, std::fs::Permissions::from_mode(0o755)).unwrap();
    s.write(
        "repo/hiera.yaml",
        &format!(
            "version: 5\nhierarchy:\n  - name: vault\n    lookup_key: command\n    options:\n      command: [{}]\n  - name: common\n    path: common.yaml\n",
            prog.display()
        ),
    );
    s.write("repo/data/common.yaml", "k: v\n");
    s.write("facts/web01.yaml", "clientcert: web01\n");
    let app = app(&s);
    for u in [
        "/api/v1/nodes/web01/keys/k?explain=1",
        "/api/v1/keys/k",
        "/api/v1/nodes/web01",
        "/api/v1/",
        "/nodes/web01/keys/k",
        "/keys/k",
    ] {
        let g = get(&app, u).await;
        assert!(!marker.exists(), "{u} ran the program");
        assert_eq!(g.status, StatusCode::OK, "{u}: {}", g.body);
    }
    let j = get(&app, "/api/v1/nodes/web01/keys/k").await.json();
    assert!(j["error"].as_str().unwrap().contains("--allow-exec"), "{j}");
    let g = post(&app, "/api/v1/lookup?key=k", "{\"clientcert\": \"x\"}").await;
    assert!(!marker.exists());
    assert!(g.body.contains("--allow-exec"));

    let allowed = app_with(
        &s,
        Options {
            allow_exec: true,
            ..options(&s.repo())
        },
    );
    let j = get(&allowed, "/api/v1/nodes/web01/keys/k").await.json();
    assert!(marker.exists());
    assert_eq!(j["value"], "from the program", "{j}");
}

fn git(dir: &Path, args: &[&str]) {
    let o = std::process::Command::new("git")
        .current_dir(dir)
        .args([
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@example.com",
            "-c",
            "commit.gpgsign=false",
            "-c",
            "init.defaultBranch=main",
        ])
        .args(args)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("HOME", dir)
        .output()
        .expect("git");
    assert!(
        o.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
}

#[tokio::test]
async fn diff_reports_a_change_against_a_revision() {
    if std::process::Command::new("git")
        .arg("--version")
        .output()
        .is_err()
    {
        eprintln!("skipped: no git");
        return;
    }
    let s = fleet("diff");
    git(&s.repo(), &["init", "-q"]);
    git(&s.repo(), &["add", "-A"]);
    git(&s.repo(), &["commit", "-qm", "base"]);
    s.write("repo/data/roles/web.yaml", "port: 8443\nusers:\n  bob: 2\n");
    let app = app(&s);
    let j = get(&app, "/api/v1/diff?base=HEAD").await.json();
    assert_eq!(j["head"], "work tree");
    assert_eq!(j["changed_keys"], 1, "{j}");
    assert_eq!(j["changes"][0]["key"], "port");
    assert_eq!(j["changes"][0]["groups"][0]["nodes"], json!(["web01"]));
    let g = get(&app, "/diff?base=HEAD").await;
    assert_eq!(g.status, StatusCode::OK);
    assert!(g.body.contains("8443"));
    git(&s.repo(), &["commit", "-qam", "head"]);
    let j = get(&app, "/api/v1/diff?base=HEAD~1&head=HEAD").await.json();
    assert_eq!(j["changed_keys"], 1);
    let g = get(&app, "/api/v1/diff?base=no-such-rev").await;
    assert_eq!(g.status, StatusCode::BAD_REQUEST, "{}", g.body);
    assert_eq!(
        get(&app, "/diff?base=no-such-rev").await.status,
        StatusCode::BAD_REQUEST
    );
}

// ---- The OpenAPI document, checked against the answers. ----

/// The schema the document gives for `path`'s answer with `status` (`None`: no JSON schema).
fn response_schema<'a>(
    spec: &'a Json,
    method: &str,
    path: &str,
    status: u16,
) -> (String, Option<&'a Json>) {
    let segs: Vec<&str> = path.split('?').next().unwrap().split('/').collect();
    let mut found = None;
    for (template, item) in spec["paths"].as_object().unwrap() {
        let t: Vec<&str> = template.split('/').collect();
        let ok = if t.last() == Some(&"{path}") {
            segs.len() >= t.len()
                && t[..t.len() - 1]
                    .iter()
                    .zip(&segs)
                    .all(|(a, b)| a == b || a.starts_with('{'))
        } else {
            t.len() == segs.len()
                && t.iter()
                    .zip(&segs)
                    .all(|(a, b)| a == b || (a.starts_with('{') && !b.is_empty()))
        };
        if ok {
            found = Some((template.clone(), item));
        }
    }
    let (template, item) =
        found.unwrap_or_else(|| panic!("no path of the document matches {path}"));
    let resp = &item[method]["responses"][status.to_string()];
    assert!(
        !resp.is_null(),
        "{method} {template} has no response {status}"
    );
    let resp = resolve(spec, resp);
    (template, resp["content"]["application/json"].get("schema"))
}

fn resolve<'a>(spec: &'a Json, v: &'a Json) -> &'a Json {
    match v.get("$ref").and_then(Json::as_str) {
        Some(r) => {
            let mut at = spec;
            for part in r.trim_start_matches("#/").split('/') {
                at = &at[part];
            }
            assert!(!at.is_null(), "dangling {r}");
            resolve(spec, at)
        }
        None => v,
    }
}

/// Where `v` breaks `schema` (the JSON Schema the document uses: type, enum, required,
/// properties, items, allOf, oneOf, $ref).
fn violations(spec: &Json, v: &Json, schema: &Json, at: &str, out: &mut Vec<String>) {
    let schema = resolve(spec, schema);
    for s in schema["allOf"].as_array().into_iter().flatten() {
        violations(spec, v, s, at, out);
    }
    if let Some(options) = schema["oneOf"].as_array() {
        let fits = options
            .iter()
            .filter(|s| {
                let mut o = Vec::new();
                violations(spec, v, s, at, &mut o);
                o.is_empty()
            })
            .count();
        if fits != 1 {
            out.push(format!("{at}: {fits} of oneOf fit {v}"));
        }
    }
    if let Some(t) = schema.get("type") {
        let types: Vec<&str> = match t {
            Json::String(s) => vec![s.as_str()],
            Json::Array(a) => a.iter().filter_map(Json::as_str).collect(),
            _ => vec![],
        };
        let fits = types.iter().any(|t| match *t {
            "object" => v.is_object(),
            "array" => v.is_array(),
            "string" => v.is_string(),
            "integer" => v.is_i64() || v.is_u64(),
            "number" => v.is_number(),
            "boolean" => v.is_boolean(),
            "null" => v.is_null(),
            _ => false,
        });
        if !fits {
            out.push(format!("{at}: {v} is not {types:?}"));
            return;
        }
    }
    if let Some(e) = schema["enum"].as_array() {
        if !e.contains(v) {
            out.push(format!("{at}: {v} not in {e:?}"));
        }
    }
    if let Json::Object(o) = v {
        for r in schema["required"].as_array().into_iter().flatten() {
            if !o.contains_key(r.as_str().unwrap()) {
                out.push(format!("{at}: no {r}"));
            }
        }
        if let Some(props) = schema["properties"].as_object() {
            for (k, s) in props {
                if let Some(x) = o.get(k) {
                    violations(spec, x, s, &format!("{at}.{k}"), out);
                }
            }
        }
    }
    if let (Json::Array(a), Some(items)) = (v, schema.get("items")) {
        for (i, x) in a.iter().enumerate() {
            violations(spec, x, items, &format!("{at}[{i}]"), out);
        }
    }
}

#[tokio::test]
async fn the_openapi_document_describes_the_answers() {
    let s = fleet("openapi");
    if std::process::Command::new("git")
        .arg("--version")
        .output()
        .is_ok()
    {
        git(&s.repo(), &["init", "-q"]);
        git(&s.repo(), &["add", "-A"]);
        git(&s.repo(), &["commit", "-qm", "base"]);
        s.write("repo/data/common.yaml", "port: 81\n");
    }
    let app = app(&s);
    let spec: Json = serde_json::from_str(hiera_serve::OPENAPI).unwrap();
    assert_eq!(spec["openapi"], "3.1.0");
    let served = get(&app, "/api/v1/openapi.json").await;
    assert_eq!(served.json(), spec);
    let covered = Mutex::new(BTreeSet::new());
    let check = |method: &str, uri: &str, g: &Got| {
        let (template, schema) = response_schema(&spec, method, uri, g.status.as_u16());
        covered.lock().unwrap().insert(template.clone());
        if let Some(schema) = schema {
            assert!(g.kind.starts_with("application/json"), "{uri}");
            let mut out = Vec::new();
            violations(&spec, &g.json(), schema, "$", &mut out);
            assert!(out.is_empty(), "{uri} ({template}): {out:#?}");
        }
    };
    let gets = [
        "/api/v1/".to_string(),
        "/api/v1/?q=o".into(),
        "/api/v1/nodes".into(),
        "/api/v1/nodes/web01".into(),
        "/api/v1/nodes/nobody".into(),
        "/api/v1/nodes/web01/keys/port?explain=1".into(),
        "/api/v1/nodes/web01/keys/users".into(),
        "/api/v1/nodes/web01/keys/nothing".into(),
        format!("/api/v1/nodes/web01/keys/{}", enc(HOSTILE_KEY)),
        "/api/v1/nodes/nobody/keys/port".into(),
        "/api/v1/keys/port".into(),
        "/api/v1/keys/users".into(),
        "/api/v1/keys/nothing".into(),
        "/api/v1/lint".into(),
        "/api/v1/diff?base=HEAD".into(),
        "/api/v1/diff?base=no-such".into(),
        "/api/v1/files".into(),
        "/api/v1/files/data".into(),
        "/api/v1/files/data/common.yaml".into(),
        "/api/v1/files/data/out.yaml".into(),
        "/api/v1/openapi.json".into(),
    ];
    for uri in &gets {
        let g = get(&app, uri).await;
        check("get", uri, &g);
    }
    for (uri, body) in [
        (
            "/api/v1/lookup",
            json!({"facts": {"role": "web"}, "keys": ["port", "nothing"], "explain": true})
                .to_string(),
        ),
        ("/api/v1/lookup?key=port", "role: db\n".to_string()),
        ("/api/v1/lookup", "{}".to_string()),
    ] {
        let g = post(&app, uri, &body).await;
        check("post", uri, &g);
    }
    let all: BTreeSet<String> = spec["paths"].as_object().unwrap().keys().cloned().collect();
    let covered = covered.into_inner().unwrap();
    if std::process::Command::new("git")
        .arg("--version")
        .output()
        .is_ok()
    {
        assert_eq!(covered, all, "paths of the document no test answer checks");
    }
}

/// A source read on an interval (PuppetDB's node set): read again once the interval passed,
/// not before, with no file changed.
#[tokio::test]
async fn interval_sources_are_read_again() {
    let s = fleet("interval");
    let options = Options {
        reload_every: Some(std::time::Duration::from_secs(2)),
        ..options(&s.repo())
    };
    let state = Arc::new(State::open(context(&s), options).unwrap());
    let app = hiera_serve::app(state.clone());
    assert_eq!(
        get(&app, "/api/v1/nodes")
            .await
            .json()
            .as_array()
            .unwrap()
            .len(),
        3
    );
    let first = state.refresh().generation;
    // Nothing changed, within the interval: the nodes read before.
    get(&app, "/api/v1/nodes").await;
    assert_eq!(state.refresh().generation, first);
    tokio::time::sleep(std::time::Duration::from_millis(2100)).await;
    // Past the interval, the nodes are read again in the background: requests answer for the
    // last complete reading meanwhile.
    let started = std::time::Instant::now();
    loop {
        assert_eq!(
            get(&app, "/api/v1/nodes")
                .await
                .json()
                .as_array()
                .unwrap()
                .len(),
            3
        );
        if state.refresh().generation != first {
            break;
        }
        assert!(
            started.elapsed() < std::time::Duration::from_secs(30),
            "the nodes were not read again"
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
}

/// The fleet-wide views ask each node's slim form (its facts cut down to what lookups were
/// seen to read) and ask the whole node again when a lookup reads beyond it: every node's
/// answer is its own whatever the data starts to read, and once learnt, the slim forms answer.
#[tokio::test]
async fn fleet_views_answer_each_node_as_its_whole_facts_do() {
    let s = Scratch::new("slim");
    s.write(
        "repo/hiera.yaml",
        "version: 5\nhierarchy:\n  - name: node\n    path: \"nodes/%{trusted.certname}.yaml\"\n  \
         - name: os\n    path: \"os/%{facts.os.family}.yaml\"\n  - name: common\n    path: common.yaml\n",
    );
    s.write(
        "repo/data/os/RedHat.yaml",
        "fqdn: \"rh %{facts.networking.fqdn}\"\n",
    );
    s.write(
        "repo/data/common.yaml",
        "fqdn: \"%{facts.networking.fqdn}\"\n",
    );
    let families = ["Debian", "RedHat", "Debian", "Suse"];
    for (i, family) in families.iter().enumerate() {
        s.write(
            &format!("facts/n{i}.json"),
            &json!({
                "clientcert": format!("n{i}"),
                "os": {"family": family, "release": {"full": format!("{i}.1"), "major": i.to_string()}},
                "networking": {"fqdn": format!("n{i}.example.com"), "ip": format!("10.0.0.{i}"),
                               "interfaces": {"eth0": {"ip": format!("10.0.0.{i}")}}},
                "memorysize": format!("{i} GiB"),
                "uptime_seconds": i,
            })
            .to_string(),
        );
    }
    let state = Arc::new(State::open(context(&s), options(&s.repo())).unwrap());
    let app = hiera_serve::app(state.clone());
    // Each node's answer as a single-node question (the whole node) gives it.
    async fn each(app: &axum::Router, key: &str) -> BTreeSet<(String, String)> {
        let mut out = BTreeSet::new();
        for i in 0..4 {
            let doc = get(app, &format!("/api/v1/nodes/n{i}/keys/{key}"))
                .await
                .json();
            out.insert((format!("n{i}"), doc["value"].to_string()));
        }
        out
    }
    async fn across(app: &axum::Router, key: &str) -> BTreeSet<(String, String)> {
        let doc = get(app, &format!("/api/v1/keys/{key}")).await.json();
        let mut out = BTreeSet::new();
        for v in doc["values"].as_array().unwrap() {
            for n in v["nodes"].as_array().unwrap() {
                out.insert((n.as_str().unwrap().to_string(), v["value"].to_string()));
            }
        }
        for n in doc["not_found"].as_array().unwrap() {
            out.insert((n.as_str().unwrap().to_string(), "null".into()));
        }
        out
    }
    // The overview asks every node whole once, and learns what they read.
    assert_eq!(get(&app, "/api/v1/").await.status, StatusCode::OK);
    assert_eq!(state.slim_counts(), (0, 4));
    let want = each(&app, "fqdn").await;
    assert!(want.contains(&("n1".into(), "\"rh n1.example.com\"".into())));
    assert_eq!(across(&app, "fqdn").await, want);
    assert_eq!(state.slim_counts(), (4, 4), "answered by the slim forms");
    // The data starts to read facts the slim forms do not hold: a part of a kept hash, a
    // whole hash, a top-scope variable, all of $facts.
    s.write(
        "repo/data/common.yaml",
        "fqdn: \"%{facts.networking.fqdn}\"\nip: \"%{facts.networking.ip}\"\n\
         net: \"%{facts.networking}\"\nrel: \"%{::os.release.full}\"\nmem: \"%{::memorysize}\"\n\
         all: \"%{facts}\"\nip_again: \"ip %{facts.networking.ip}\"\n",
    );
    for key in ["ip", "net", "rel", "mem", "all"] {
        let want = each(&app, key).await;
        assert_eq!(want.len(), 4);
        assert!(
            want.iter().all(|(_, v)| v != "null" && v != "\"\""),
            "{want:?}"
        );
        let before = state.slim_counts();
        assert_eq!(across(&app, key).await, want, "{key}");
        let after = state.slim_counts();
        assert_eq!(after.1 - before.1, 4, "{key}: each node asked whole again");
    }
    // What was learnt is kept: a new key reading the same facts is answered slim.
    let before = state.slim_counts();
    let want = each(&app, "ip_again").await;
    assert_eq!(across(&app, "ip_again").await, want);
    let after = state.slim_counts();
    assert_eq!(after.1, before.1, "no node asked whole");
    // A facts file changed: the node's new facts answer.
    s.write(
        "facts/n3.json",
        &json!({"clientcert": "n3", "os": {"family": "RedHat"},
                "networking": {"fqdn": "new.example.com", "ip": "10.9.9.9"}})
        .to_string(),
    );
    let got = across(&app, "fqdn").await;
    assert!(
        got.contains(&("n3".into(), "\"rh new.example.com\"".into())),
        "{got:?}"
    );
    assert_eq!(got, each(&app, "fqdn").await);
}
