//! The server against what a hostile client or tree brings it: here, a fleet with a broken
//! facts file.

use axum::body::Body;
use axum::http::{Request, StatusCode};
use hiera_facts::context::NodeSources;
use hiera_serve::{Options, State};
use http_body_util::BodyExt;
use serde_json::{json, Value as Json};
use std::path::PathBuf;
use std::sync::Arc;
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
