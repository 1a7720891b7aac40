//! `hiera-lookup completions SHELL`: a shell completion script covering the lookup's flags
//! and every command.

use crate::output::{self, ExitCode};

/// `hiera-lookup completions SHELL`.
#[derive(clap::Args, Debug)]
#[command(after_help = "\
Examples:
    hiera-lookup completions bash
    hiera-lookup completions zsh

Install (bash; the directory may not exist yet):
    mkdir -p ~/.local/share/bash-completion/completions
    hiera-lookup completions bash > ~/.local/share/bash-completion/completions/hiera-lookup
zsh: a file _hiera-lookup in a directory of $fpath; fish:
~/.config/fish/completions/hiera-lookup.fish.

Exit status: 0 printed, 2 error.")]
pub struct CompletionsArgs {
    /// bash, zsh, fish, elvish or powershell
    #[arg(value_name = "SHELL")]
    pub shell: String,
}

/// Prints the completion script.
pub fn exec(args: &CompletionsArgs) -> output::Result<ExitCode> {
    use clap_complete::Shell;
    let shell: Shell = args.shell.parse().map_err(|_| {
        format!(
            "unknown shell '{}': expected bash, zsh, fish, elvish or powershell",
            args.shell
        )
    })?;
    let mut out = Vec::new();
    clap_complete::generate(
        shell,
        &mut crate::flags::full_command(),
        "hiera-lookup",
        &mut out,
    );
    let text = String::from_utf8(out).map_err(|e| e.to_string())?;
    output::stdout(&text, ExitCode::Success)
}
