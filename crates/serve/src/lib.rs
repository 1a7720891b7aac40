//! `hiera-lookup serve`: a control repo's Hiera data across the fleet, in a browser and as a
//! JSON API, answered by the exact engine. One [`State`] (a long-lived
//! [`Workspace`](hiera_engine::Workspace) and the fleet's nodes) behind an axum [`app`]:
//!
//! | page | API | what |
//! |---|---|---|
//! | `/` | — | layers and hierarchies, files and how many nodes reach them, search |
//! | `/nodes` | `GET /api/v1/nodes` | every node |
//! | `/nodes/{node}` | `GET /api/v1/nodes/{node}` | every key the node sees, value, file:line |
//! | `/nodes/{node}/keys/{key}` | `GET /api/v1/nodes/{node}/keys/{key}` | the answer, `where`, `--explain` |
//! | `/keys/{key}` | `GET /api/v1/keys/{key}` | the key across the fleet |
//! | `/diff?base=REV` | `GET /api/v1/diff?base=REV` | `diff`'s report |
//! | `/lint` | `GET /api/v1/lint` | `lint`'s findings |
//! | `/files/{path}` | `GET /api/v1/files/{path}` | a file with line anchors |
//! | — | `POST /api/v1/lookup` | answers for a facts document |
//! | — | `GET /api/v1/openapi.json` | the API, as OpenAPI 3 |
//!
//! Every document is computed once ([`views`]) and either returned as JSON or rendered as
//! HTML ([`pages`]), every value escaped by the templates (maud), under a strict
//! Content-Security-Policy; assets are compiled into the binary. Read-only: nothing is ever
//! written. No `command` level runs without `--allow-exec`, no eyaml plaintext is shown
//! without `--show-secrets`.
//!
//! The library holds no flags: the program embedding it (the `hiera-lookup` binary) gives it
//! a [`NodeContext`](hiera_facts::context::NodeContext), the one node builder every command
//! uses, and explanations are the engine's own (`hiera_engine::query`), so the server answers
//! a node exactly as the command line does.

pub mod error;
pub mod files;
pub mod guard;
pub mod index;
pub mod listen;
pub mod pack;
pub mod pages;
pub mod slim;
pub mod state;
pub mod views;

pub use guard::{CSP, MAX_URI_BYTES};
pub use listen::Limits;
pub use pack::{pack_facts, Held, Packed, PackedFacts};
pub use state::{Fleet, Options, State};

use axum::extract::{DefaultBodyLimit, Path, Query, State as Ext};
use axum::http::{header, HeaderMap, Request, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use error::ViewError;
use serde_json::Value as Json;
use std::sync::Arc;
use std::time::Duration;

/// The largest request body (`POST /api/v1/lookup`'s facts document), in bytes: a real facts
/// document is about 12 KB.
pub const MAX_BODY_BYTES: usize = 1 << 20;
/// The most values a posted document may hold, counted before it is parsed (an upper bound:
/// its commas, brackets, braces and lines): a facts document holds a few thousand. A parse
/// takes tens of times the text's size; this keeps a body of many tiny values from costing
/// more than a real document of the same size would.
pub const MAX_POSTED_VALUES: usize = 100_000;
/// Posted documents read, parsed and answered at once; others wait their turn (before their
/// body is read).
pub const POSTS_AT_ONCE: usize = 2;
/// The time a posted body may take to arrive, once its turn has come.
pub const BODY_TIMEOUT: Duration = Duration::from_secs(10);

/// The OpenAPI 3 document of the JSON API.
pub const OPENAPI: &str = include_str!("../assets/openapi.json");

/// The HTTP application over `state`: every page, the API and the assets.
pub fn app(state: Arc<State>) -> Router {
    Router::new()
        .route("/", get(pages::index))
        .route("/nodes", get(pages::nodes))
        .route("/nodes/{node}", get(pages::node))
        .route("/nodes/{node}/keys/{key}", get(pages::node_key))
        .route("/keys/{key}", get(pages::key))
        .route("/diff", get(pages::diff))
        .route("/lint", get(pages::lint))
        .route("/files", get(pages::files_root))
        .route("/files/", get(pages::files_root))
        .route("/files/{*path}", get(pages::file))
        .route("/assets/{name}", get(asset))
        .route("/api/v1/", get(api_overview))
        .route("/api/v1/nodes", get(api_nodes))
        .route("/api/v1/nodes/{node}", get(api_node))
        .route("/api/v1/nodes/{node}/keys/{key}", get(api_node_key))
        .route("/api/v1/keys/{key}", get(api_key))
        .route("/api/v1/lint", get(api_lint))
        .route("/api/v1/diff", get(api_diff))
        .route("/api/v1/files", get(api_files_root))
        .route("/api/v1/files/{*path}", get(api_file))
        .route("/api/v1/lookup", post(api_lookup))
        .route("/api/v1/openapi.json", get(openapi))
        .fallback(fallback)
        .layer(DefaultBodyLimit::max(MAX_BODY_BYTES))
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            guard::guard,
        ))
        .with_state(state)
}

/// Serves `app(state)` on `listener` until the process ends, within the default
/// [`Limits`]; `ready` is called with the address once connections are accepted. The
/// lookups run on blocking threads with the lookup stack.
pub fn serve(
    state: Arc<State>,
    listener: std::net::TcpListener,
    ready: impl FnOnce(std::net::SocketAddr),
) -> std::io::Result<()> {
    serve_within(state, listener, Limits::default(), ready)
}

/// [`serve`] within `limits` (the connections' timeouts and number: [`listen`]).
pub fn serve_within(
    state: Arc<State>,
    listener: std::net::TcpListener,
    limits: Limits,
    ready: impl FnOnce(std::net::SocketAddr),
) -> std::io::Result<()> {
    listener.set_nonblocking(true)?;
    // Before the first connection (and before `ready` says the server listens).
    let files = listen::raise_file_limit();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_stack_size(hiera_value::limits::LOOKUP_STACK_SIZE)
        .thread_name("hiera-serve")
        .build()?;
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::from_std(listener)?;
        ready(listener.local_addr()?);
        let start = state.clone();
        tokio::task::spawn_blocking(move || {
            let fleet = start.refresh();
            if start.to_warm(&fleet) {
                warm_up(&start, &fleet);
            }
        });
        listen::run(listener, app(state), limits, files).await
    })
}

/// The overview's index of the whole fleet, and every node's slim form, made for a new
/// reading of the nodes (at the start, when facts changed, on PuppetDB's interval) while the
/// first pages are asked for.
fn warm_up(state: &State, fleet: &Fleet) {
    views::fleet_index_of(state, fleet);
    state.release_memory();
}

/// Runs `work` on a blocking thread (with the lookup stack), after a refresh: lookups never
/// hold up the threads that accept connections.
pub(crate) async fn blocking<T: Send + 'static>(
    state: &Arc<State>,
    work: impl FnOnce(&State, &Fleet) -> T + Send + 'static,
) -> Result<T, ViewError> {
    let state = state.clone();
    tokio::task::spawn_blocking(move || {
        // A thread of a runtime built elsewhere (the tests') may have a small stack.
        let size = hiera_value::limits::LOOKUP_STACK_SIZE;
        stacker::maybe_grow(size / 2, size, || {
            let fleet = state.refresh();
            if state.to_warm(&fleet) {
                let (state, fleet) = (state.clone(), fleet.clone());
                // A new reading of the nodes: warmed up beside this request.
                let _ = std::thread::Builder::new()
                    .name("hiera-serve-warm".into())
                    .stack_size(size)
                    .spawn(move || warm_up(&state, &fleet));
            }
            work(&state, &fleet)
        })
    })
    .await
    .map_err(|e| ViewError::Failed(format!("the request failed: {e}")))
}

/// [`blocking`] for a question about the whole fleet: at most a few at once.
pub(crate) async fn heavy<T: Send + 'static>(
    state: &Arc<State>,
    work: impl FnOnce(&State, &Fleet) -> T + Send + 'static,
) -> Result<T, ViewError> {
    let _permit = state
        .heavy
        .acquire()
        .await
        .map_err(|_| ViewError::Failed("the server is stopping".into()))?;
    blocking(state, |s, f| {
        let answer = work(s, f);
        s.release_memory();
        answer
    })
    .await
}

/// The status a view error answers with.
pub(crate) fn status(e: &ViewError) -> StatusCode {
    match e {
        ViewError::NotFound(_) => StatusCode::NOT_FOUND,
        ViewError::BadRequest(_) => StatusCode::BAD_REQUEST,
        ViewError::Failed(_) => StatusCode::INTERNAL_SERVER_ERROR,
    }
}

/// A JSON answer.
fn json_response(status: StatusCode, doc: &Json) -> Response {
    let mut body = serde_json::to_string_pretty(doc).unwrap_or_else(|_| "null".into());
    body.push('\n');
    (
        status,
        [(header::CONTENT_TYPE, "application/json; charset=utf-8")],
        body,
    )
        .into_response()
}

/// The API's answer for a document or an error (`{"error": message}`).
fn api(result: Result<Result<Json, ViewError>, ViewError>) -> Response {
    match result.and_then(|r| r) {
        Ok(doc) => json_response(StatusCode::OK, &doc),
        Err(e) => json_response(status(&e), &serde_json::json!({"error": e.message()})),
    }
}

/// The query's parameters, in order (a name may repeat).
pub(crate) type Params = Query<Vec<(String, String)>>;

/// The first value of the query parameter `name`.
pub(crate) fn param<'a>(params: &'a [(String, String)], name: &str) -> Option<&'a str> {
    params
        .iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.as_str())
}

/// Whether a flag parameter (`?explain=1`) is on.
pub(crate) fn flag(params: &[(String, String)], name: &str) -> bool {
    param(params, name).is_some_and(|v| !matches!(v, "" | "0" | "false" | "no"))
}

async fn api_overview(Ext(state): Ext<Arc<State>>, Query(p): Params) -> Response {
    let q = param(&p, "q").map(str::to_string);
    api(heavy(&state, move |s, f| Ok(views::overview(s, f, q.as_deref()))).await)
}

async fn api_nodes(Ext(state): Ext<Arc<State>>) -> Response {
    api(blocking(&state, |_, f| Ok(views::nodes(f))).await)
}

async fn api_node(Ext(state): Ext<Arc<State>>, Path(node): Path<String>) -> Response {
    api(blocking(&state, move |s, f| views::node(s, f, &node)).await)
}

async fn api_node_key(
    Ext(state): Ext<Arc<State>>,
    Path((node, key)): Path<(String, String)>,
    Query(p): Params,
) -> Response {
    let explain = flag(&p, "explain");
    api(blocking(&state, move |s, f| {
        views::node_key(s, f, &node, &key, explain)
    })
    .await)
}

async fn api_key(Ext(state): Ext<Arc<State>>, Path(key): Path<String>) -> Response {
    api(heavy(&state, move |s, f| views::key(s, f, &key)).await)
}

async fn api_lint(Ext(state): Ext<Arc<State>>) -> Response {
    api(heavy(&state, views::lint).await)
}

async fn api_diff(Ext(state): Ext<Arc<State>>, Query(p): Params) -> Response {
    let Some(base) = param(&p, "base").map(str::to_string) else {
        return api(Err(ViewError::BadRequest(
            "diff needs ?base=REV (and optionally &head=REV; default: the work tree)".into(),
        )));
    };
    let head = param(&p, "head")
        .filter(|h| !h.is_empty())
        .map(str::to_string);
    api(heavy(&state, move |s, f| {
        views::diff(s, f, &base, head.as_deref())
    })
    .await)
}

async fn api_files_root(Ext(state): Ext<Arc<State>>) -> Response {
    api(blocking(&state, |s, _| files::view(s, "")).await)
}

async fn api_file(Ext(state): Ext<Arc<State>>, Path(path): Path<String>) -> Response {
    api(blocking(&state, move |s, _| files::view(s, &path)).await)
}

/// `POST /api/v1/lookup`: at most [`POSTS_AT_ONCE`] at a time, each body read only when its
/// turn comes (within [`BODY_TIMEOUT`], at most [`MAX_BODY_BYTES`] and [`MAX_POSTED_VALUES`]),
/// and the memory its parse took given back after.
async fn api_lookup(
    Ext(state): Ext<Arc<State>>,
    Query(p): Params,
    headers: HeaderMap,
    body: axum::body::Body,
) -> Response {
    let refuse = |status: StatusCode, message: String| {
        json_response(status, &serde_json::json!({ "error": message }))
    };
    let too_large = || {
        refuse(
            StatusCode::PAYLOAD_TOO_LARGE,
            format!(
                "the body is larger than {MAX_BODY_BYTES} bytes (a facts document is about 12 KB)"
            ),
        )
    };
    let declared = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok()?.parse::<u64>().ok());
    if declared.is_some_and(|n| n > MAX_BODY_BYTES as u64) {
        return too_large();
    }
    let Ok(_turn) = state.posts.acquire().await else {
        return api(Err(ViewError::Failed("the server is stopping".into())));
    };
    let body = match tokio::time::timeout(BODY_TIMEOUT, axum::body::to_bytes(body, MAX_BODY_BYTES))
        .await
    {
        Ok(Ok(body)) => body,
        Ok(Err(e)) if is_length_limit(&e) => return too_large(),
        Ok(Err(e)) => {
            return refuse(
                StatusCode::BAD_REQUEST,
                format!("the body could not be read: {e}"),
            )
        }
        Err(_) => {
            return refuse(
                StatusCode::REQUEST_TIMEOUT,
                format!(
                    "the body did not arrive within {} s",
                    BODY_TIMEOUT.as_secs()
                ),
            )
        }
    };
    let values = body
        .iter()
        .filter(|b| matches!(b, b',' | b'[' | b'{' | b'\n'))
        .count();
    if values > MAX_POSTED_VALUES {
        return refuse(
            StatusCode::PAYLOAD_TOO_LARGE,
            format!("the body holds too many values (more than {MAX_POSTED_VALUES} commas, brackets, braces and lines; a facts document holds a few thousand)"),
        );
    }
    let keys: Vec<String> = p
        .iter()
        .filter(|(k, _)| k == "key")
        .map(|(_, v)| v.clone())
        .collect();
    let merge = param(&p, "merge").map(str::to_string);
    let explain = flag(&p, "explain");
    api(blocking(&state, move |s, _| {
        let answer = views::lookup(s, &body, keys, merge, explain);
        drop(body);
        s.release_memory();
        answer
    })
    .await)
}

/// Whether reading a body failed at [`MAX_BODY_BYTES`].
fn is_length_limit(e: &axum::Error) -> bool {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(s) = source {
        if s.is::<http_body_util::LengthLimitError>() {
            return true;
        }
        source = s.source();
    }
    false
}

async fn openapi() -> Response {
    (
        [(header::CONTENT_TYPE, "application/json; charset=utf-8")],
        OPENAPI,
    )
        .into_response()
}

/// The stylesheet and the script, compiled into the binary.
async fn asset(Path(name): Path<String>) -> Response {
    let (body, kind) = match name.as_str() {
        "style.css" => (
            include_str!("../assets/style.css"),
            "text/css; charset=utf-8",
        ),
        "app.js" => (
            include_str!("../assets/app.js"),
            "text/javascript; charset=utf-8",
        ),
        _ => return (StatusCode::NOT_FOUND, "no such asset\n").into_response(),
    };
    (
        [
            (header::CONTENT_TYPE, kind),
            (header::CACHE_CONTROL, "public, max-age=300"),
        ],
        body,
    )
        .into_response()
}

async fn fallback(request: Request<axum::body::Body>) -> Response {
    let path = request.uri().path();
    if path.starts_with("/api/") {
        return api(Err(ViewError::NotFound(format!(
            "no such API route: {}",
            hiera_value::escape::printable(path)
        ))));
    }
    pages::error_page(&ViewError::NotFound("no such page".into()))
}
