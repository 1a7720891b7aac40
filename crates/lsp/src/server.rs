//! The main loop: the protocol's lifecycle, the documents, the workspace and the node
//! context, and the dispatch of each request to its feature.

use crate::context::{self, Context, ContextRequest};
use crate::cursor::{self, FileKind, Span, Target};
use crate::text::{self, Doc, Encoding};
use crate::transport::{self, Incoming};
use crate::Options;
use hiera_engine::engine::{Exec, Session, Settings};
use hiera_engine::environment::EnvOptions;
use hiera_engine::redact::Redactor;
use hiera_engine::where_::{self, Reporter};
use hiera_engine::{Scope, Strict, Workspace};
use lsp_server::{ErrorCode, Message, Notification, Request, RequestId, Response};
use lsp_types::{Location, Position, Range, Uri};
use serde_json::{json, Value as Json};
use std::collections::{BTreeSet, HashMap};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

/// What the refusal to run a `lookup_key: command` level adds to its error.
pub const HOW_TO_ALLOW: &str =
    "the language server runs no program a hierarchy names unless started with --allow-exec";

/// The command that changes the node context.
pub const SELECT_NODE: &str = "hiera-lookup.selectNode";

/// Where the protocol is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// Before `initialize`.
    Start,
    /// Answering.
    Running,
    /// After `shutdown`.
    ShutDown,
}

/// The repo's data files, found again when files come and go.
pub(crate) struct Index {
    /// Every data file the hierarchies reach.
    pub files: Vec<PathBuf>,
}

/// Everything the server holds.
pub(crate) struct Server {
    out: Box<dyn Write + Send>,
    pub options: Options,
    phase: Phase,
    pub enc: Encoding,
    /// The control repo, canonical.
    pub root: Option<PathBuf>,
    pub env: EnvOptions,
    pub ws: Option<Workspace>,
    ws_error: Option<String>,
    /// What the client asked for the context (init options over the settings file).
    ctx_request: ContextRequest,
    pub ctx: Result<Context, String>,
    pub docs: HashMap<PathBuf, Doc>,
    index: Option<std::rc::Rc<Index>>,
    /// The code's schema, open code buffers applied (loaded at the first question).
    pub schema: Option<std::sync::Arc<hiera_lint::schema::Schema>>,
    /// Documents whose diagnostics are due.
    dirty: BTreeSet<PathBuf>,
    /// Files diagnostics were last published for (to clear them).
    published: BTreeSet<PathBuf>,
}

/// A feature's failure: a JSON-RPC error.
pub(crate) struct Failure(pub ErrorCode, pub String);

pub(crate) type Answer = Result<Json, Failure>;

pub(crate) fn invalid(msg: impl Into<String>) -> Failure {
    Failure(ErrorCode::InvalidParams, msg.into())
}

pub fn run(
    input: Box<dyn Read + Send>,
    output: Box<dyn Write + Send>,
    options: Options,
) -> std::io::Result<bool> {
    let (tx, rx) = std::sync::mpsc::sync_channel::<Incoming>(64);
    std::thread::Builder::new()
        .name("lsp-reader".into())
        .spawn(move || transport::read_loop(input, tx))?;
    let mut server = Server::new(output, options);
    loop {
        // Diagnostics wait until the client has nothing more to say (a burst of edits is
        // linted once).
        let next = match rx.try_recv() {
            Ok(m) => m,
            Err(std::sync::mpsc::TryRecvError::Empty) => {
                if !server.dirty.is_empty() {
                    server.publish_diagnostics()?;
                    continue;
                }
                match rx.recv() {
                    Ok(m) => m,
                    Err(_) => return Ok(false),
                }
            }
            Err(std::sync::mpsc::TryRecvError::Disconnected) => return Ok(false),
        };
        match next {
            Incoming::Invalid(doc) => transport::write_json(&mut server.out, &doc)?,
            Incoming::Message(Message::Request(r)) => server.request(r)?,
            Incoming::Message(Message::Notification(n)) => {
                if n.method == "exit" {
                    return Ok(server.phase == Phase::ShutDown);
                }
                server.notification(n)?;
            }
            // Answers to our own requests (none needs one).
            Incoming::Message(Message::Response(_)) => {}
        }
    }
}

impl Server {
    fn new(out: Box<dyn Write + Send>, options: Options) -> Server {
        Server {
            out,
            options,
            phase: Phase::Start,
            enc: Encoding::Utf16,
            root: None,
            env: EnvOptions::default(),
            ws: None,
            ws_error: None,
            ctx_request: ContextRequest::default(),
            ctx: Err("no context yet".into()),
            docs: HashMap::new(),
            index: None,
            schema: None,
            dirty: BTreeSet::new(),
            published: BTreeSet::new(),
        }
    }

    pub(crate) fn send(&mut self, m: Message) -> std::io::Result<()> {
        transport::write_message(&mut self.out, &m)
    }

    fn notify(&mut self, method: &str, params: Json) -> std::io::Result<()> {
        self.send(Message::Notification(Notification::new(
            method.to_string(),
            params,
        )))
    }

    /// `window/showMessage` (1 error, 2 warning, 3 info).
    pub(crate) fn show(&mut self, kind: u8, message: &str) -> std::io::Result<()> {
        self.notify(
            "window/showMessage",
            json!({"type": kind, "message": message}),
        )
    }

    fn request(&mut self, r: Request) -> std::io::Result<()> {
        let id = r.id.clone();
        let answer = match (self.phase, r.method.as_str()) {
            (Phase::Start, "initialize") => self.initialize(r.params),
            (Phase::Start, _) => Err(Failure(
                ErrorCode::ServerNotInitialized,
                "the server is not initialized".into(),
            )),
            (Phase::ShutDown, _) => Err(Failure(
                ErrorCode::InvalidRequest,
                "the server is shut down".into(),
            )),
            (Phase::Running, "initialize") => Err(Failure(
                ErrorCode::InvalidRequest,
                "initialize was already received".into(),
            )),
            (Phase::Running, "shutdown") => {
                self.phase = Phase::ShutDown;
                Ok(Json::Null)
            }
            (Phase::Running, method) => {
                let method = method.to_string();
                // What changed on disk since the last request, dropped once: every session
                // of this request shares what the workspace keeps.
                if let Some(ws) = &self.ws {
                    ws.refresh();
                }
                // A feature that panics on some input answers with an error; the server lives.
                let params = r.params;
                let size = hiera_value::limits::LOOKUP_STACK_SIZE;
                let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    stacker::maybe_grow(size / 2, size, || self.dispatch(&method, params))
                }));
                match result {
                    Ok(a) => a,
                    Err(_) => Err(Failure(
                        ErrorCode::InternalError,
                        format!("{method} failed on this input"),
                    )),
                }
            }
        };
        self.respond(id, answer)
    }

    fn respond(&mut self, id: RequestId, answer: Answer) -> std::io::Result<()> {
        let response = match answer {
            Ok(result) => Response::new_ok(id, result),
            Err(Failure(code, message)) => Response::new_err(id, code as i32, message),
        };
        self.send(Message::Response(response))
    }

    fn dispatch(&mut self, method: &str, params: Json) -> Answer {
        match method {
            "textDocument/hover" => self.hover(&params),
            "textDocument/definition" => self.definition(&params),
            "textDocument/references" => self.references(&params),
            "textDocument/completion" => self.completion(&params),
            "textDocument/documentSymbol" => self.document_symbols(&params),
            "workspace/symbol" => self.workspace_symbols(&params),
            "textDocument/codeAction" => self.code_actions(&params),
            "textDocument/inlayHint" => self.inlay_hints(&params),
            "textDocument/prepareRename" => self.prepare_rename(&params),
            "textDocument/rename" => self.rename(&params),
            "workspace/executeCommand" => self.execute_command(&params),
            _ => Err(Failure(
                ErrorCode::MethodNotFound,
                format!(
                    "unknown method {}",
                    hiera_value::escape::printable(&truncate(method, 200))
                ),
            )),
        }
    }

    fn notification(&mut self, n: Notification) -> std::io::Result<()> {
        if self.phase != Phase::Running {
            return Ok(());
        }
        let p = &n.params;
        match n.method.as_str() {
            "textDocument/didOpen" => {
                let td = &p["textDocument"];
                let (Some(uri), Some(text)) = (td["uri"].as_str(), td["text"].as_str()) else {
                    return Ok(());
                };
                let version = td["version"].as_i64().unwrap_or(0) as i32;
                if let Some((uri, path)) = self.uri_path(uri) {
                    let doc = Doc::new(uri, path.clone(), version, text.to_string());
                    self.open(doc);
                }
            }
            "textDocument/didChange" => {
                let Some((_, path)) = p["textDocument"]["uri"]
                    .as_str()
                    .and_then(|u| self.uri_path(u))
                else {
                    return Ok(());
                };
                let enc = self.enc;
                let Some(doc) = self.docs.get_mut(&path) else {
                    return Ok(());
                };
                if let Some(v) = p["textDocument"]["version"].as_i64() {
                    doc.version = v as i32;
                }
                for change in p["contentChanges"].as_array().into_iter().flatten() {
                    let Some(text) = change["text"].as_str() else {
                        continue;
                    };
                    let range: Option<Range> = serde_json::from_value(change["range"].clone()).ok();
                    doc.edit(range, text, enc);
                }
                let text = doc.text().to_string();
                if is_code(&path) {
                    // The code changed: every open data file is judged again.
                    self.code_changed(&path, Some(&text));
                    self.dirty.extend(self.docs.keys().cloned());
                }
                if let Some(ws) = &self.ws {
                    ws.set_overlay(&path, Some(text));
                }
                self.dirty.insert(path);
            }
            "textDocument/didClose" => {
                if let Some((_, path)) = p["textDocument"]["uri"]
                    .as_str()
                    .and_then(|u| self.uri_path(u))
                {
                    if let Some(doc) = self.docs.remove(&path) {
                        if let Some(ws) = &self.ws {
                            ws.set_overlay(&path, None);
                        }
                        self.dirty.remove(&path);
                        if is_code(&path) {
                            // What the disk holds counts again.
                            self.code_changed(&path, None);
                            self.dirty.extend(self.docs.keys().cloned());
                        }
                        if self.published.remove(&path) {
                            self.notify(
                                "textDocument/publishDiagnostics",
                                json!({"uri": doc.uri.as_str(), "diagnostics": []}),
                            )?;
                        }
                    }
                    self.index = None;
                }
            }
            "textDocument/didSave" | "workspace/didChangeWatchedFiles" => {
                // What changed, and how (LSP's FileChangeType: 1 created, 2 changed, 3
                // deleted; a save: changed).
                let changed: Vec<(PathBuf, u64)> = if n.method == "textDocument/didSave" {
                    let uri = p["textDocument"]["uri"].as_str();
                    uri.and_then(|u| self.uri_path(u))
                        .map(|(_, path)| vec![(path, 2)])
                        .unwrap_or_default()
                } else {
                    let changes = p["changes"].as_array().cloned().unwrap_or_default();
                    changes
                        .iter()
                        .filter_map(|c| {
                            let (_, path) = self.uri_path(c["uri"].as_str()?)?;
                            Some((path, c["type"].as_u64().unwrap_or(2)))
                        })
                        .collect()
                };
                self.files_changed(&changed);
            }
            "workspace/didChangeConfiguration" => {
                let settings = &p["settings"];
                let section = settings.get("hiera-lookup").unwrap_or(settings);
                let req = ContextRequest::from_json(section);
                if req != ContextRequest::default() {
                    self.set_context(req)?;
                }
            }
            _ => {}
        }
        Ok(())
    }

    fn open(&mut self, doc: Doc) {
        let path = doc.path.clone();
        if let Some(ws) = &self.ws {
            ws.set_overlay(&path, Some(doc.text().to_string()));
        }
        let new_file = !path.exists();
        if is_code(&path) {
            self.code_changed(&path, Some(doc.text()));
            self.dirty.extend(self.docs.keys().cloned());
        }
        self.docs.insert(path.clone(), doc);
        if new_file {
            self.index = None;
        }
        self.dirty.insert(path);
    }

    /// The client's URI and the file it names, as the workspace names it (canonical
    /// directory).
    pub(crate) fn uri_path(&self, uri: &str) -> Option<(Uri, PathBuf)> {
        let parsed: Uri = uri.parse().ok()?;
        let path = text::uri_to_path(&parsed)?;
        Some((parsed, canonical(&path)))
    }

    fn initialize(&mut self, params: Json) -> Answer {
        let offered: Vec<String> = params["capabilities"]["general"]["positionEncodings"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|e| e.as_str().map(str::to_string))
            .collect();
        self.enc = if offered.iter().any(|e| e == "utf-8") {
            Encoding::Utf8
        } else {
            Encoding::Utf16
        };
        let init = &params["initializationOptions"];
        if init["showSecrets"].as_bool() == Some(true) {
            self.options.show_secrets = true;
        }
        // The root: -C, else the first workspace folder, else rootUri, else rootPath.
        let client_root = params["workspaceFolders"]
            .as_array()
            .and_then(|f| f.first())
            .and_then(|f| f["uri"].as_str())
            .or_else(|| params["rootUri"].as_str())
            .and_then(text::path_of_uri_str)
            .or_else(|| params["rootPath"].as_str().map(PathBuf::from));
        let root = self.options.root.clone().or(client_root);
        self.phase = Phase::Running;
        if let Some(root) = root {
            let root = canonical(&root);
            self.env = EnvOptions {
                cwd: root.clone(),
                hiera_config: self.options.hiera_config.clone(),
                modulepath: self.options.modulepath.clone(),
                ..Default::default()
            };
            let settings = Settings {
                redact: !self.options.show_secrets,
                ..Default::default()
            };
            match Workspace::open(self.env.clone(), settings) {
                Ok(ws) => self.ws = Some(ws),
                Err(e) => self.ws_error = Some(e.to_string()),
            }
            let from_file = context::from_settings_file(&root);
            let file_req = match from_file {
                Ok(r) => r,
                Err(e) => {
                    self.ws_error.get_or_insert(e);
                    ContextRequest::default()
                }
            };
            self.ctx_request = ContextRequest::from_json(init).or(file_req);
            self.root = Some(root);
        } else {
            self.ws_error =
                Some("no control repo: open a folder, or start the server with -C DIR".into());
            self.ctx_request = ContextRequest::from_json(init);
        }
        self.load_context();
        let encoding = match self.enc {
            Encoding::Utf8 => "utf-8",
            Encoding::Utf16 => "utf-16",
        };
        Ok(json!({
            "capabilities": {
                "positionEncoding": encoding,
                "textDocumentSync": {"openClose": true, "change": 2, "save": {"includeText": false}},
                "hoverProvider": true,
                "definitionProvider": true,
                "referencesProvider": true,
                "completionProvider": {"triggerCharacters": ["{", ".", ":", "'", "\""]},
                "documentSymbolProvider": true,
                "workspaceSymbolProvider": true,
                "codeActionProvider": {"codeActionKinds": ["quickfix"]},
                "inlayHintProvider": true,
                "renameProvider": {"prepareProvider": true},
                "executeCommandProvider": {"commands": [SELECT_NODE]},
            },
            "serverInfo": {"name": "hiera-lookup", "version": env!("CARGO_PKG_VERSION")},
        }))
    }

    fn load_context(&mut self) {
        let env = match &self.root {
            Some(_) => self.env.clone(),
            None => EnvOptions {
                cwd: PathBuf::from("/"),
                ..Default::default()
            },
        };
        self.ctx = Context::load(&self.ctx_request, &env, self.options.allow_exec);
    }

    /// Files saved, or changed outside the editor: each is taken where it counts, and every
    /// open document is judged again. The data files' index is found again when files came
    /// or went (or a hiera.yaml changed), the nodes are read again when their facts changed,
    /// and a code file changed outside the editor is read again into the schema (an open
    /// buffer is in it already). An empty list (a client that names no file): all of it.
    fn files_changed(&mut self, changed: &[(PathBuf, u64)]) {
        let facts = match &self.ctx {
            Ok(c) => c.source.as_deref().map(canonical),
            Err(_) => None,
        };
        let all = changed.is_empty();
        let mut reread_facts = all && facts.is_some();
        let mut new_index = all;
        for (path, kind) in changed {
            reread_facts |= facts.as_ref().is_some_and(|f| path.starts_with(f));
            new_index |= *kind != 2 || path.file_name().is_some_and(|n| n == "hiera.yaml");
            if is_code(path) && !self.docs.contains_key(path) {
                self.code_changed(path, None);
            }
        }
        if new_index {
            self.index = None;
        }
        if reread_facts {
            self.load_context();
        }
        self.dirty.extend(self.docs.keys().cloned());
    }

    /// Answers for the node (or nodes) `req` names from now on: every open file's
    /// diagnostics are due again.
    fn apply_context(&mut self, req: ContextRequest) {
        self.ctx_request = req;
        self.load_context();
        self.dirty.extend(self.docs.keys().cloned());
    }

    fn set_context(&mut self, req: ContextRequest) -> std::io::Result<()> {
        self.apply_context(req);
        if let Err(e) = &self.ctx {
            let e = format!("hiera-lookup: {e}");
            self.show(1, &e)?;
        }
        Ok(())
    }

    fn execute_command(&mut self, p: &Json) -> Answer {
        if p["command"].as_str() != Some(SELECT_NODE) {
            return Err(invalid("unknown command"));
        }
        let arg = p["arguments"]
            .as_array()
            .and_then(|a| a.first())
            .cloned()
            .unwrap_or(Json::Null);
        let req = match &arg {
            Json::String(node) => ContextRequest {
                node: Some(node.clone()),
                ..self.ctx_request.clone()
            },
            Json::Object(_) => ContextRequest::from_json(&arg),
            _ => {
                return Err(invalid(
                    "selectNode takes {\"facts\": …, \"node\": …} or a node name",
                ))
            }
        };
        self.apply_context(req);
        match &self.ctx {
            Ok(c) => Ok(json!({"context": c.label, "nodes": c.nodes.len()})),
            Err(e) => Err(Failure(ErrorCode::RequestFailed, e.clone())),
        }
    }

    // ---- helpers the features share ----

    /// The workspace, or the reason there is none.
    pub(crate) fn workspace(&self) -> Result<&Workspace, Failure> {
        self.ws.as_ref().ok_or_else(|| {
            Failure(
                ErrorCode::RequestFailed,
                self.ws_error
                    .clone()
                    .unwrap_or_else(|| "no workspace".into()),
            )
        })
    }

    /// The document a request names (its open buffer, else the file), and the file's kind.
    pub(crate) fn doc_of(&self, p: &Json) -> Result<(Doc, FileKind), Failure> {
        let uri = p["textDocument"]["uri"]
            .as_str()
            .ok_or_else(|| invalid("textDocument.uri is missing"))?;
        let (uri, path) = self
            .uri_path(uri)
            .ok_or_else(|| invalid("not a file: URI"))?;
        let doc = match self.docs.get(&path) {
            Some(d) => d.clone(),
            None => {
                let text = hiera_value::limits::read_text(&path).map_err(|e| {
                    Failure(
                        ErrorCode::RequestFailed,
                        format!("cannot read the file: {e}"),
                    )
                })?;
                Doc::new(uri, path.clone(), 0, text)
            }
        };
        let kind = cursor::kind_of(&path);
        Ok((doc, kind))
    }

    /// The document and what is at the request's position.
    pub(crate) fn target(&self, p: &Json) -> Result<(Doc, FileKind, Option<Target>), Failure> {
        let (doc, kind) = self.doc_of(p)?;
        let pos: Position = serde_json::from_value(p["position"].clone())
            .map_err(|_| invalid("position is missing or malformed"))?;
        let (line, byte) = doc.line_byte(pos, self.enc);
        let t = cursor::target_at(&doc, kind, line, byte).or_else(|| {
            let settings = (kind == FileKind::HieraYaml).then(|| self.hiera_settings(&doc.path))?;
            cursor::hiera_setting_at(&doc, &settings, line, byte)
        });
        Ok((doc, kind, t))
    }

    /// A session for `scope` on the workspace (refreshed once per request), running no
    /// program unless allowed.
    pub(crate) fn session(&self, scope: Scope) -> Result<Session, Failure> {
        let mut s = self.workspace()?.session_unrefreshed(scope);
        if !self.options.allow_exec {
            s.set_exec(Exec::Refused {
                how_to_allow: HOW_TO_ALLOW,
            });
        }
        Ok(s)
    }

    /// `where`'s report of `key` for `scope`, and what its lookups decrypted.
    pub(crate) fn report(
        &self,
        scope: &Scope,
        node: &str,
        key: &str,
        reporter: &mut Reporter,
    ) -> Result<(where_::Report, Redactor), String> {
        let mut session = self.session(scope.clone()).map_err(|f| f.1)?;
        let request = where_::Request {
            key: key.to_string(),
            merge: None,
            reachable_only: false,
        };
        let report = reporter
            .report(&mut session, &request, Some(node.to_string()))
            .map_err(|e| e.to_string());
        let secrets = session.redactor().cloned().unwrap_or_default();
        match report {
            Ok(r) => Ok((r, secrets)),
            Err(e) => Err(secrets.text(&e).into_owned()),
        }
    }

    /// `key` across `nodes` by the fleet loop, every node's session as
    /// [`session`](Self::session) makes one (values and errors redacted unless secrets are
    /// shown).
    pub(crate) fn across(
        &self,
        key: &str,
        nodes: &[hiera_engine::batch::Node],
    ) -> Result<hiera_engine::fleet::KeyAcross, Failure> {
        let ws = self.workspace()?;
        let request = where_::Request {
            key: key.to_string(),
            merge: None,
            reachable_only: false,
        };
        let exec = match self.options.allow_exec {
            true => Exec::Allowed,
            false => Exec::Refused {
                how_to_allow: HOW_TO_ALLOW,
            },
        };
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
        Ok(hiera_engine::fleet::key_across(
            &hiera_engine::fleet::Streamed {
                workspace: ws,
                exec,
            },
            hiera_engine::batch::NodeSource::from_refs(nodes).into_units(),
            threads,
            (&ws.files(), Strict::default()),
            &request,
        ))
    }

    /// A reporter sharing the workspace's parses.
    pub(crate) fn reporter(&self) -> Result<Reporter, Failure> {
        Ok(Reporter::new(self.workspace()?.files(), Strict::default()))
    }

    /// The repo's data files and schema (found again after files come or go).
    pub(crate) fn index(&mut self) -> Result<std::rc::Rc<Index>, Failure> {
        if let Some(i) = &self.index {
            return Ok(i.clone());
        }
        let ws = self.workspace()?;
        let root = self.root.clone().unwrap_or_default();
        let opts = hiera_lint::Options {
            root: root.clone(),
            hiera_config: self.options.hiera_config.clone(),
            modulepath: self.options.modulepath.clone(),
            fs: Some(ws.fs()),
            ..Default::default()
        };
        let files = hiera_lint::editor::data_files(&opts)
            .map_err(|e| Failure(ErrorCode::RequestFailed, e.to_string()))?;
        let index = std::rc::Rc::new(Index { files });
        self.index = Some(index.clone());
        Ok(index)
    }

    /// The text of a file: its open buffer, else what the workspace reads.
    pub(crate) fn file_text(&self, path: &Path) -> Option<String> {
        if let Some(d) = self.docs.get(path) {
            return Some(d.text().to_string());
        }
        match &self.ws {
            Some(ws) => ws.fs().read_text(path).ok(),
            None => hiera_value::limits::read_text(path).ok(),
        }
    }

    /// The LSP range of a span of `doc`.
    pub(crate) fn range(&self, doc: &Doc, span: Span) -> Range {
        Range::new(
            doc.position_at_byte(span.0, span.1, self.enc),
            doc.position_at_byte(span.0, span.2, self.enc),
        )
    }

    /// The location of a 1-based line and character column of `path` (`len` characters).
    pub(crate) fn location(
        &self,
        path: &Path,
        (line, col): (usize, usize),
        len: usize,
    ) -> Option<Location> {
        let uri = text::path_to_uri(path)?;
        let text = self.file_text(path).unwrap_or_default();
        let doc = Doc::new(uri.clone(), path.to_path_buf(), 0, text);
        let start = doc.position_of(line, col, self.enc);
        let end = doc.position_of(line, col + len, self.enc);
        Some(Location::new(uri, Range::new(start, end)))
    }

    /// A path as hovers show it: relative to the root when inside it.
    pub(crate) fn shown(&self, path: &str) -> String {
        match &self.root {
            Some(r) => Path::new(path)
                .strip_prefix(r)
                .map(|p| p.display().to_string())
                .unwrap_or_else(|_| path.to_string()),
            None => path.to_string(),
        }
    }

    pub(crate) fn publish_diagnostics(&mut self) -> std::io::Result<()> {
        // One file's change can make or clear another's findings (a key an interpolation
        // of another file reads): every open file is published again, from the one lint.
        self.dirty.clear();
        let open: Vec<PathBuf> = self.docs.keys().cloned().collect();
        let results = self.diagnose(&open);
        for (path, diags) in results {
            let Some(doc) = self.docs.get(&path) else {
                continue;
            };
            let msg =
                json!({"uri": doc.uri.as_str(), "version": doc.version, "diagnostics": diags});
            self.published.insert(path);
            self.notify("textDocument/publishDiagnostics", msg)?;
        }
        Ok(())
    }
}

/// Whether `path` is code the schema reads (a manifest or a template).
pub(crate) fn is_code(path: &Path) -> bool {
    path.extension()
        .is_some_and(|x| x == "pp" || x == "epp" || x == "erb")
}

/// `path` with its directory's symbolic links resolved (the file itself need not exist).
pub(crate) fn canonical(path: &Path) -> PathBuf {
    if let Ok(c) = std::fs::canonicalize(path) {
        return c;
    }
    match (path.parent(), path.file_name()) {
        (Some(dir), Some(name)) => canonical(dir).join(name),
        _ => path.to_path_buf(),
    }
}

/// At most `n` characters of `s`.
pub(crate) fn truncate(s: &str, n: usize) -> String {
    match s.char_indices().nth(n) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_string(),
    }
}
