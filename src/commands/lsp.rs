//! `hiera-lookup lsp`: a language server for Hiera data over stdio ([`hiera_lsp`]).

use crate::flags::groups::{RepoArgs, TrustArgs};
use crate::output::{self, ExitCode};
use hiera_engine::environment::absolute;

/// The end of `lsp -h`.
const AFTER_HELP: &str = "`hiera-lookup lsp --help` adds the editor setup and details.";

/// The end of `lsp --help`. Its example starts a server that waits for an editor on its
/// standard input: the help test checks its shape; tests/lsp.rs speaks to it.
const AFTER_LONG_HELP: &str = "\
Examples (an editor starts it; README's \"Editors\" shows Neovim, Helix, VS Code and Emacs):
    hiera-lookup lsp
    hiera-lookup lsp -C /path/to/control-repo

The control repo is -C, else the editor's workspace folder. Which node the hovers answer
for: the initialization options {\"facts\": \"FILE-or-DIR\", \"node\": \"CERTNAME\"} (relative
to the repo), else [lsp] facts = \"DIR\" and node = \"CERTNAME\" in the repo's .hiera-lookup.toml, or
the workspace/executeCommand hiera-lookup.selectNode; a facts directory is a fleet.
Decrypted eyaml values are shown only with --show-secrets (or the showSecrets option).

Exit status: 0 after shutdown and exit, 1 if the input ends first, 2 if it cannot start.";

/// `hiera-lookup lsp`'s flags.
#[derive(clap::Args, Debug)]
#[command(after_help = AFTER_HELP, after_long_help = AFTER_LONG_HELP)]
pub struct LspArgs {
    #[command(flatten)]
    pub repo: RepoArgs,
    /// Show what eyaml decrypts in hovers and hints (by default [redacted])
    #[arg(long = "show-secrets")]
    pub show_secrets: bool,
    #[command(flatten)]
    pub trust: TrustArgs,
    /// Speak over standard input and output (the default and only transport)
    #[arg(long)]
    pub stdio: bool,
}

/// Serves the editor on standard input and output until it exits.
pub fn exec(args: &LspArgs) -> output::Result<ExitCode> {
    let cwd =
        std::env::current_dir().map_err(|e| format!("cannot read the current directory: {e}"))?;
    let options = hiera_lsp::Options {
        root: args.repo.repo.as_deref().map(|r| absolute(&cwd, r)),
        hiera_config: args.repo.hiera_config.as_deref().map(|p| absolute(&cwd, p)),
        modulepath: args.repo.modulepath_in(&cwd),
        allow_exec: args.trust.allow_exec,
        show_secrets: args.show_secrets,
    };
    let clean = hiera_lsp::run(std::io::stdin(), std::io::stdout(), options)
        .map_err(|e| format!("the language server failed: {e}"))?;
    Ok(if clean {
        ExitCode::Success
    } else {
        ExitCode::Negative
    })
}
