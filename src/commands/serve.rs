//! `hiera-lookup serve`: the fleet's Hiera data in a browser and as a JSON API
//! ([`hiera_serve`]). The flags are the lookup's groups (layout, facts, strict); the server
//! takes its nodes from the node context every command uses, so it answers exactly what the
//! command line answers.

use crate::flags::groups::{self, FactsArgs, LayoutArgs, NodeArgs, StrictArgs};
use crate::flags::groups::{ThreadsArgs, TrustArgs};
use crate::output::{self, ExitCode};
use hiera_engine::environment::absolute;
use hiera_engine::Error;
use hiera_serve::{Options, State};
use std::net::{SocketAddr, ToSocketAddrs};
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
    hiera-lookup serve --facts-dir facts --allow-host hiera.example.com

Pages: / (layers, hierarchies, files, search), /nodes/NODE (every key the node sees),
/keys/KEY (the key across the fleet), /nodes/NODE/keys/KEY (level by level, --explain),
/diff?base=REV, /lint, /files/PATH. The JSON API is under /api/v1/ (its OpenAPI document:
/api/v1/openapi.json). Read-only; an edited data file, hiera.yaml or facts file is seen on
the next request. There is no authentication: listen on a loopback address (the default),
or put the server behind a reverse proxy that authenticates.

It answers only requests whose Host is an IP address, localhost or a name given with
--allow-host (a web page whose DNS name points at 127.0.0.1 cannot read it), refuses a POST
from another site, and bounds what a client may hold: 1 MiB of body, 15 s for a request's
headers (and for an idle connection), 512 connections (fewer when the file limit, raised at
the start, leaves less room). Behind a reverse proxy that passes its own name on as the Host,
allow that name with --allow-host.

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
    /// Also answer requests for NAME, beside IP addresses and localhost (repeatable)
    ///
    /// The server refuses a Host it is not known as (DNS rebinding). Behind a reverse proxy
    /// that passes its own name on (nginx's `proxy_set_header Host $host`), give that name;
    /// `.example.com` allows that domain and every name under it. A `--listen` host name is
    /// allowed already.
    #[arg(long = "allow-host", value_name = "NAME")]
    pub allow_host: Vec<String>,
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
    let context = sources.resolve_in(&cwd)?;
    context.check_control_repo()?;
    for w in context.layout_warnings() {
        output::warn(&w);
    }
    let root = if context.env.control_repo_mode() {
        context.env.cwd.clone()
    } else {
        context
            .env
            .layers()?
            .environment_dir
            .unwrap_or_else(|| cwd.clone())
    };
    // A classifier in the served tree runs only with --allow-exec, as for every fleet command.
    context.check_enc_trust(&root, args.trust.allow_exec, "serve")?;
    let strict = hiera_engine::query::parse_strict(&args.strict.strict)?;
    let listen = listen_address(&args.listen)?;
    let allowed_hosts = allowed_hosts(&args.allow_host, &args.listen)?;
    if !args.facts.any() && context.db()?.is_none() {
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
        strict,
        show_secrets: args.show_secrets,
        allow_exec: args.trust.allow_exec,
        threads: output::threads(args.threads.threads),
        lint,
        // PuppetDB's node set changes with no file to watch: read on an interval.
        reload_every: context
            .fleet_from_puppetdb()?
            .then(|| Duration::from_secs(args.refresh_interval.max(1))),
        release_memory,
        allowed_hosts,
        ..Options::new(root)
    };
    let state = State::open(context, options)?;
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

/// Gives the memory glibc's malloc holds free back to the system (the server's
/// [`Options::release_memory`]).
fn release_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu", not(feature = "mimalloc")))]
    // SAFETY: malloc_trim only returns free memory to the system.
    unsafe {
        libc::malloc_trim(0);
    }
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

/// The host names the server answers to besides addresses and localhost: `--allow-host`'s,
/// and `--listen`'s when it names the host.
fn allowed_hosts(given: &[String], listen: &str) -> Result<Vec<String>, Error> {
    let mut names = Vec::new();
    for name in given {
        let bare = name.strip_prefix('.').unwrap_or(name);
        match hiera_serve::guard::host_of(bare) {
            Some(h) if h == bare.to_ascii_lowercase().trim_end_matches('.') => {
                names.push(name.to_ascii_lowercase())
            }
            _ => {
                return Err(Error::Usage(format!(
                    "--allow-host expects a host name (hiera.example.com, or .example.com for a domain), got '{}'",
                    hiera_value::escape::printable(name)
                )))
            }
        }
    }
    if listen.parse::<SocketAddr>().is_err() {
        if let Some(host) = listen
            .rsplit_once(':')
            .and_then(|(h, _)| hiera_serve::guard::host_of(h))
        {
            names.push(host);
        }
    }
    Ok(names)
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
        let names = |given: &[&str], listen: &str| {
            let given: Vec<String> = given.iter().map(|s| s.to_string()).collect();
            allowed_hosts(&given, listen)
        };
        assert_eq!(
            names(&["Hiera.Example.com", ".corp.example"], "127.0.0.1:8080").unwrap(),
            ["hiera.example.com", ".corp.example"]
        );
        assert_eq!(names(&[], "localhost:8080").unwrap(), ["localhost"]);
        assert_eq!(names(&[], "[::1]:8080").unwrap(), Vec::<String>::new());
        for bad in ["", "a b", "x:1", "http://x", "."] {
            assert!(names(&[bad], "127.0.0.1:8080").is_err(), "{bad}");
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
