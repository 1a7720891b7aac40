//! `hiera-lookup lsp`: a language server for Hiera data, answered by the exact engine.
//!
//! The server speaks LSP 3.17 over a byte stream (stdio for the command), synchronously: one
//! thread reads and frames messages ([`transport`], bounded), the main loop answers them in
//! order. It is a client of one long-lived [`Workspace`](hiera_engine::Workspace) over the
//! control repo: every open buffer is an overlay of it, so hovers, lookups and lint findings
//! judge the unsaved text the user sees.
//!
//! | feature | on |
//! |---|---|
//! | hover | a key of a data file (the context node's value as Puppet renders it, the winning file:line, whether this definition wins, is shadowed or is not reached, the merge; a fleet's values with node counts), a `%{…}`, a hiera.yaml path, a class parameter in a manifest |
//! | definition | a key → its class parameter; `lookup('k')`/`alias('k')` → the key's definitions; a hiera.yaml path → the file |
//! | references | a key or class parameter → every data definition, `lookup()` call and interpolation |
//! | completion | keys from class parameters, lookup_options and merge strategies, facts after `%{facts.`, interpolation functions |
//! | diagnostics | lint's rules on the open buffers, YAML errors where they are |
//! | symbols, code actions, inlay hints, rename | keys of a file and of the repo; rename to the suggested parameter, quote a YAML 1.1 value; the effective value; a key across data files |
//!
//! The node context (which facts) comes from `initializationOptions` (`{"facts": …,
//! "node": …}`), from `[lsp]` in the repo's `.hiera-lookup.toml`, or from the
//! `hiera-lookup.selectNode` command. Decrypted eyaml values are shown only when enabled, and
//! `lookup_key: command` levels run only with [`Options::allow_exec`], which only the command
//! line sets.
#![warn(missing_docs)]

pub mod context;
pub mod cursor;
mod diagnostics;
mod features;
mod hover;
mod schema;
mod server;
pub mod text;
pub mod transport;

use std::io::{Read, Write};
use std::path::PathBuf;

/// How the server runs (the command line's choices; the client's come with `initialize`).
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// The control repo (`-C`); else the client's root.
    pub root: Option<PathBuf>,
    /// A global hiera.yaml (`--hiera_config`).
    pub hiera_config: Option<PathBuf>,
    /// A modulepath instead of environment.conf's.
    pub modulepath: Option<String>,
    /// Run the programs `lookup_key: command` levels name (`--allow-exec`).
    pub allow_exec: bool,
    /// Show what eyaml decrypts (`--show-secrets`; the client may also ask with the
    /// `showSecrets` initialization option).
    pub show_secrets: bool,
}

/// Serves one client on `input`/`output` until it exits or the input ends. `Ok(true)` when
/// it shut down as the protocol asks (`shutdown`, then `exit`).
pub fn run(
    input: impl Read + Send + 'static,
    output: impl Write + Send + 'static,
    options: Options,
) -> std::io::Result<bool> {
    server::run(Box::new(input), Box::new(output), options)
}
