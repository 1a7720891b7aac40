//! `hiera-lookup serve`: the fleet's Hiera data in a browser and as a JSON API
//! ([`hiera_serve`]). The flags are the lookup's groups (layout, facts, strict); the nodes are
//! read as every fleet command reads them ([`Resolved::batch_units`]), and explanations are
//! rendered by the lookup's own [`Request::answer`], so the server answers exactly what the
//! command line answers.

use crate::flags::groups::{self, FactsArgs, LayoutArgs, NodeArgs, StrictArgs};
use crate::flags::groups::{ThreadsArgs, TrustArgs};
use crate::output::{self, ExitCode};
use crate::request::{Flags, Request, Resolved};
use hiera_engine::environment::absolute;
use hiera_engine::{Error, Scope, Session};
use hiera_facts::{puppetdb, FactsRequest};
use hiera_serve::{pack_facts, Frontend, Held, Options, Packed, State};
use std::net::{SocketAddr, ToSocketAddrs};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// The end of `serve -h`.
const AFTER_HELP: &str = "`hiera-lookup serve --help` adds examples and details.";

/// The end of `serve --help`. Its examples start a server, which runs until stopped: the help
/// test checks their shape; tests/serve.rs starts servers as they do.
const AFTER_LONG_HELP: &str = "\
Examples (in a control repo, its nodes' facts in facts/):
    hiera-lookup serve --facts-dir facts
    hiera-lookup serve --puppetdb https://puppetdb.example.com:8081
    hiera-lookup serve --facts-dir facts --listen 0.0.0.0:8080

Pages: / (layers, hierarchies, files, search), /nodes/NODE (every key the node sees),
/keys/KEY (the key across the fleet), /nodes/NODE/keys/KEY (level by level, --explain),
/diff?base=REV, /lint, /files/PATH. The JSON API is under /api/v1/ (its OpenAPI document:
/api/v1/openapi.json). Read-only; an edited data file, hiera.yaml or facts file is seen on
the next request. There is no authentication: listen on a loopback address (the default),
or put the server behind a reverse proxy that authenticates.

Exit status: 2 when the server cannot start (it runs until stopped).";

/// `hiera-lookup serve`'s flags.
#[derive(clap::Args, Debug)]
#[command(after_help = AFTER_HELP, after_long_help = AFTER_LONG_HELP)]
pub struct ServeArgs {
    #[command(flatten)]
    pub layout: LayoutArgs,
    #[command(flatten)]
    pub facts: FactsArgs,
    #[command(flatten)]
    pub strict: StrictArgs,
    /// The address and port to listen on (default 127.0.0.1:8080)
    ///
    /// Any address but a loopback one serves the data to the network, without
    /// authentication: the server warns.
    #[arg(long, value_name = "ADDR:PORT", default_value = "127.0.0.1:8080")]
    pub listen: String,
    /// Seconds between readings of PuppetDB's node set (default 300)
    ///
    /// Facts files are read again as soon as they change.
    #[arg(long = "refresh-interval", value_name = "SECS", default_value = "300")]
    pub refresh_interval: u64,
    /// Show what eyaml decrypts (by default every decrypted plaintext is [redacted])
    #[arg(long = "show-secrets", help_heading = "Output")]
    pub show_secrets: bool,
    #[command(flatten)]
    pub trust: TrustArgs,
    #[command(flatten)]
    pub threads: ThreadsArgs,
}

/// Starts the server; returns only when it cannot start or fails.
pub fn exec(args: &ServeArgs) -> output::Result<ExitCode> {
    long_lived_malloc();
    let cwd =
        std::env::current_dir().map_err(|e| format!("cannot read the current directory: {e}"))?;
    let sources = groups::sources(&args.layout, &args.facts, &NodeArgs::default());
    let resolved = sources.resolve_in(&cwd)?;
    resolved.check_control_repo()?;
    let root = if resolved.env.control_repo_mode() {
        resolved.env.cwd.clone()
    } else {
        resolved
            .env
            .layers()?
            .environment_dir
            .unwrap_or_else(|| cwd.clone())
    };
    // A classifier in the served tree runs only with --allow-exec, as for every fleet command.
    resolved.check_enc_trust(&root, args.trust.allow_exec, "serve")?;
    let strict = crate::request::parse_strict(&args.strict.strict)?;
    let listen = listen_address(&args.listen)?;
    let facts = resolved.facts_request()?;
    let db = resolved.puppetdb()?;
    if facts.files.is_empty() && facts.dir.is_none() && db.is_none() {
        output::warn("no nodes: give --facts-dir DIR, --facts FILE or --puppetdb URL to see the fleet (POST /api/v1/lookup still answers for posted facts)");
    }
    let lint = hiera_lint::Options {
        root: root.clone(),
        hiera_config: args
            .layout
            .repo
            .hiera_config
            .as_deref()
            .map(|p| absolute(&cwd, p)),
        modulepath: args.layout.repo.modulepath_in(&cwd),
        allow_exec: args.trust.allow_exec,
        ..Default::default()
    };
    let options = Options {
        root,
        strict,
        show_secrets: args.show_secrets,
        allow_exec: args.trust.allow_exec,
        threads: output::threads(args.threads.threads),
        lint,
    };
    let frontend = Cli {
        env: resolved.env.clone(),
        resolved,
        facts,
        db,
        strict: args.strict.strict.clone(),
        show_secrets: args.show_secrets,
        reload_every: Duration::from_secs(args.refresh_interval.max(1)),
    };
    let env = frontend.env.clone();
    let state = State::open(env, options, Box::new(frontend))?;
    for w in &state.refresh().warnings {
        output::warn(w);
    }
    let listener = std::net::TcpListener::bind(listen)
        .map_err(|e| format!("cannot listen on {listen}: {e}"))?;
    if let Some(w) = exposure_warning(listen) {
        output::warn(&w);
    }
    hiera_serve::serve(Arc::new(state), listener, |addr| {
        output::note(&format!("serving http://{addr}/ (Ctrl-C stops)"));
    })
    .map_err(|e| format!("the server failed: {e}"))?;
    Ok(ExitCode::Success)
}

/// main's glibc tuning keeps every freed byte until the process ends, right for a command
/// that exits; a server lives on, and a fleet-wide question (a lint with the fleet's facts, a
/// diff) would leave its peak mapped for good. Freed memory above 32 MiB goes back.
fn long_lived_malloc() {
    #[cfg(all(target_os = "linux", target_env = "gnu", not(feature = "mimalloc")))]
    // SAFETY: mallopt only sets glibc's malloc parameters; called before the server's
    // threads start.
    unsafe {
        libc::mallopt(libc::M_TOP_PAD, 1 << 20);
        libc::mallopt(libc::M_TRIM_THRESHOLD, 32 << 20);
    }
}

/// The warning for an address other machines may reach: the server has no authentication.
fn exposure_warning(listen: SocketAddr) -> Option<String> {
    (!listen.ip().is_loopback()).then(|| format!(
        "serving on {listen}, a non-loopback address: the server has no authentication, so anyone who can reach it reads this Hiera data; put it behind a reverse proxy that authenticates, or listen on 127.0.0.1"
    ))
}

/// `--listen`: an address and port (a host name resolves to its first address).
fn listen_address(text: &str) -> Result<SocketAddr, Error> {
    let usage = || {
        Error::Usage(format!(
            "--listen expects ADDR:PORT (127.0.0.1:8080, [::1]:8080), got '{text}'"
        ))
    };
    if let Ok(a) = text.parse::<SocketAddr>() {
        return Ok(a);
    }
    text.to_socket_addrs()
        .map_err(|_| usage())?
        .next()
        .ok_or_else(usage)
}

/// The command line as the server's front end: nodes read as every fleet command reads them,
/// explanations rendered as the lookup renders them.
struct Cli {
    resolved: Resolved,
    env: hiera_engine::EnvOptions,
    facts: FactsRequest,
    db: Option<puppetdb::Client>,
    strict: String,
    show_secrets: bool,
    reload_every: Duration,
}

impl Frontend for Cli {
    /// Each node packed (its facts, made a scope again by `scope` when a request needs it:
    /// what `batch_node` makes of a node no classifier is asked about), unless a classifier
    /// is asked (asking again would run it again) or its facts cannot be packed: then whole,
    /// as `batch_node` makes it. Facts files and PuppetDB's nodes alike, unit by unit (a
    /// file, a chunk of PuppetDB's nodes) as batch mode reads them, each unit's nodes packed
    /// before the next is read: the fleet's scopes are never all in memory at once.
    fn load_nodes(&self, keep: &mut dyn FnMut(Held)) -> Result<Vec<String>, Error> {
        let mut warnings = Vec::new();
        let packable = self.resolved.enc.is_none()
            && !self
                .resolved
                .fact_overrides
                .iter()
                .any(|(name, _)| name.split('.').next() == Some("server_facts"));
        let mut named: Vec<(String, String)> = Vec::new();
        let (units, _) = self.resolved.batch_units(&self.facts, self.db.as_ref())?;
        for unit in units {
            let (nodes, w) = unit();
            warnings.extend(w);
            for n in nodes {
                named.push((n.name.clone(), n.source.clone()));
                let packed = match &n.facts {
                    Ok(facts) if packable && Scope::check_facts(facts).is_ok() => pack_facts(facts),
                    _ => None,
                };
                keep(match packed {
                    Some(facts) => Held::Packed(Packed {
                        name: n.name,
                        source: Some((n.kind.into(), n.source)),
                        facts,
                    }),
                    None => Held::Node(Arc::new(self.resolved.batch_node(n))),
                });
            }
        }
        warnings.extend(hiera_engine::batch::duplicate_warnings(
            named.iter().map(|(n, s)| (n.as_str(), s.as_str())),
        ));
        Ok(warnings)
    }

    fn release_memory(&self) {
        #[cfg(all(target_os = "linux", target_env = "gnu", not(feature = "mimalloc")))]
        // SAFETY: malloc_trim only returns free memory to the system.
        unsafe {
            libc::malloc_trim(0);
        }
    }

    fn watched(&self) -> Vec<PathBuf> {
        let mut paths: Vec<PathBuf> = self.facts.files.iter().map(|(p, _)| p.clone()).collect();
        if let Some((dir, _)) = &self.facts.dir {
            paths.push(dir.clone());
        }
        paths
    }

    fn reload_every(&self) -> Option<Duration> {
        self.db.as_ref().map(|_| self.reload_every)
    }

    fn scope(&self, facts: hiera_value::value::Map) -> Scope {
        self.resolved.unclassified_scope(facts)
    }

    fn explain(
        &self,
        session: &mut Session,
        key: &str,
        merge: Option<&str>,
    ) -> Result<String, Error> {
        let request = Request::new(&Flags {
            keys: vec![key.to_string()],
            merge: merge.map(str::to_string),
            strict: self.strict.clone(),
            explain: true,
            redact: !self.show_secrets,
            ..Flags::default()
        })?;
        let mut warnings = Vec::new();
        Ok(request.answer(session, &mut warnings)?.text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn listen_addresses_and_the_exposure_warning() {
        let a = |s: &str| listen_address(s).unwrap();
        assert_eq!(a("127.0.0.1:8080").port(), 8080);
        assert_eq!(a("[::1]:9000").port(), 9000);
        assert!(a("localhost:8080").ip().is_loopback());
        for bad in ["8080", "127.0.0.1", "nonsense", ""] {
            assert!(listen_address(bad).is_err(), "{bad}");
        }
        assert_eq!(exposure_warning(a("127.0.0.1:8080")), None);
        assert_eq!(exposure_warning(a("[::1]:8080")), None);
        for exposed in ["0.0.0.0:8080", "[::]:8080", "192.0.2.1:80"] {
            assert!(
                exposure_warning(a(exposed)).is_some_and(|w| w.contains("no authentication")),
                "{exposed}"
            );
        }
    }
}
