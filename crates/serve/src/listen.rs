//! The connections: accepted on the listener, each served by hyper's HTTP/1 with the app,
//! within [`Limits`]. `axum::serve` sets no timeout and no limit: a client sending half a
//! request's headers held its connection for ever, and about a thousand of them (a systemd
//! service's default of 1,024 files) shut everyone else out.
//!
//! - A request's headers must arrive within [`Limits::header_timeout`], counted from the
//!   moment the connection is ready for a request: so a connection idle between requests
//!   is closed after it too.
//! - At most [`Limits::max_connections`] are open, and never more than the process's file
//!   limit leaves room for (beside [`RESERVED_FILES`] for the files the answers read). At the
//!   limit, a new connection takes the place of the oldest one that is not answering a request
//!   (a half-sent request, an idle keep-alive): under a flood of held-open connections, a new
//!   client is still answered. When every open connection is answering, new ones wait in the
//!   listener's backlog.
//! - At the start the file limit is raised to the most the system allows
//!   ([`raise_file_limit`]).

use axum::body::Body;
use axum::Router;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::Notify;
use tower::ServiceExt;

/// How long a client may take, and how many connections may be open.
#[derive(Debug, Clone)]
pub struct Limits {
    /// The time a request's headers may take to arrive, from the moment the connection is
    /// ready for a request (a new connection, or one idle after an answer).
    pub header_timeout: Duration,
    /// The most connections open at once (fewer when the file limit leaves less room).
    pub max_connections: usize,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            header_timeout: Duration::from_secs(15),
            max_connections: 512,
        }
    }
}

/// Files kept free for what answering needs (data files, facts files, git packs, eyaml keys,
/// PuppetDB's connections, the runtime's own).
pub const RESERVED_FILES: u64 = 64;

/// The fewest connections allowed, whatever the file limit.
const MIN_CONNECTIONS: usize = 8;

/// The largest buffer kept for one connection's request head (hyper's default is 400 KiB;
/// the request target is capped at 16 KiB).
const MAX_BUFFER: usize = 64 << 10;

/// Raises the soft limit on open files to the hard one, as far as the system allows; the
/// limit then in effect (`None` where it cannot be known).
pub fn raise_file_limit() -> Option<u64> {
    #[cfg(unix)]
    {
        let mut r = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: getrlimit and setrlimit only read and write the struct given.
        unsafe {
            if libc::getrlimit(libc::RLIMIT_NOFILE, &mut r) != 0 {
                return None;
            }
            if r.rlim_cur < r.rlim_max {
                // An unlimited hard limit: the most a process may open on Linux by default.
                let want = if r.rlim_max == libc::RLIM_INFINITY {
                    1 << 20
                } else {
                    r.rlim_max
                };
                let raised = libc::rlimit {
                    rlim_cur: want.max(r.rlim_cur),
                    rlim_max: r.rlim_max,
                };
                if libc::setrlimit(libc::RLIMIT_NOFILE, &raised) == 0 {
                    r = raised;
                }
            }
        }
        // `rlim_t` is not `u64` on every platform.
        #[allow(clippy::unnecessary_cast)]
        Some(r.rlim_cur as u64)
    }
    #[cfg(not(unix))]
    None
}

/// The connections open, by the order they were accepted.
#[derive(Default)]
struct Open {
    next: u64,
    conns: BTreeMap<u64, Conn>,
}

/// An open connection: how many requests it is answering, and how to close it.
struct Conn {
    busy: Arc<AtomicUsize>,
    close: Arc<Notify>,
}

impl Open {
    /// The oldest connection answering no request.
    fn oldest_idle(&self) -> Option<u64> {
        (self.conns.iter())
            .find(|(_, c)| c.busy.load(Ordering::SeqCst) == 0)
            .map(|(id, _)| *id)
    }

    /// Closes the oldest connection answering no request; false when every one is.
    fn close_oldest_idle(&mut self) -> bool {
        match self.oldest_idle().and_then(|id| self.conns.remove(&id)) {
            Some(c) => {
                c.close.notify_one();
                true
            }
            None => false,
        }
    }
}

/// A request being answered on a connection: counted as answered when dropped, and the
/// accept loop told (the connection may be closed to make room from now on).
struct Answering {
    busy: Arc<AtomicUsize>,
    ended: Arc<Notify>,
}

impl Drop for Answering {
    fn drop(&mut self) {
        self.busy.fetch_sub(1, Ordering::SeqCst);
        self.ended.notify_waiters();
    }
}

/// Accepts connections on `listener` and serves `app` on each, within `limits` and the
/// process's file limit `files` (see the [module](self)), until the process ends.
pub async fn run(
    listener: tokio::net::TcpListener,
    app: Router,
    limits: Limits,
    files: Option<u64>,
) -> std::io::Result<()> {
    let room = files.map_or(usize::MAX, |n| {
        usize::try_from(n.saturating_sub(RESERVED_FILES)).unwrap_or(usize::MAX)
    });
    let max = limits.max_connections.min(room).max(MIN_CONNECTIONS);
    let open = Arc::new(Mutex::new(Open::default()));
    let ended = Arc::new(Notify::new());
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(hyper_util::rt::TokioTimer::new())
        .header_read_timeout(limits.header_timeout)
        .max_buf_size(MAX_BUFFER);
    loop {
        // Room for one more: under the limit, or a connection answering nothing to close.
        loop {
            let notified = ended.notified();
            {
                let o = open.lock().unwrap_or_else(|e| e.into_inner());
                if o.conns.len() < max || o.oldest_idle().is_some() {
                    break;
                }
            }
            notified.await;
        }
        let stream = match listener.accept().await {
            Ok((stream, _)) => stream,
            Err(e) => {
                // Out of files (another process's share too), or a connection reset before
                // it was accepted: wait a moment, as axum does.
                if matches!(e.raw_os_error(), Some(libc::EMFILE | libc::ENFILE)) {
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
                continue;
            }
        };
        let conn = Conn {
            busy: Arc::new(AtomicUsize::new(0)),
            close: Arc::new(Notify::new()),
        };
        let (busy, close) = (conn.busy.clone(), conn.close.clone());
        let id = {
            let mut o = open.lock().unwrap_or_else(|e| e.into_inner());
            if o.conns.len() >= max && !o.close_oldest_idle() {
                // Every one turned busy meanwhile: this one is not served.
                continue;
            }
            let id = o.next;
            o.next += 1;
            o.conns.insert(id, conn);
            id
        };
        let (app, done) = (app.clone(), ended.clone());
        let service = hyper::service::service_fn(move |request: hyper::Request<_>| {
            let app = app.clone();
            busy.fetch_add(1, Ordering::SeqCst);
            let answering = Answering {
                busy: busy.clone(),
                ended: done.clone(),
            };
            async move {
                let response = app.oneshot(request.map(Body::new)).await;
                drop(answering);
                response
            }
        });
        let connection = http.serve_connection(hyper_util::rt::TokioIo::new(stream), service);
        let (open, ended) = (open.clone(), ended.clone());
        tokio::spawn(async move {
            tokio::select! {
                // A client that stops or errs (a header timeout included) just goes.
                _ = connection => {}
                // Closed to make room: dropping the connection closes its socket.
                _ = close.notified() => {}
            }
            open.lock()
                .unwrap_or_else(|e| e.into_inner())
                .conns
                .remove(&id);
            ended.notify_waiters();
        });
    }
}
