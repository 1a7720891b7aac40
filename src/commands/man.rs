//! `hiera-lookup man`: the manual page (roff), the commands included.

use crate::output::{self, ExitCode};

/// `hiera-lookup man`.
#[derive(clap::Args, Debug)]
#[command(after_help = "\
EXAMPLES:
    hiera-lookup man

Install: hiera-lookup man > ~/.local/share/man/man1/hiera-lookup.1, then: man hiera-lookup

Exit status: 0 printed, 2 error.")]
pub struct ManArgs {}

/// Prints the manual page of `command_line` (every command hiera-lookup takes).
pub fn exec(_: &ManArgs, command_line: clap::Command) -> output::Result<ExitCode> {
    let mut out = Vec::new();
    clap_mangen::Man::new(command_line)
        .render(&mut out)
        .map_err(|e| e.to_string())?;
    let text = String::from_utf8(out).map_err(|e| e.to_string())?;
    output::stdout(&text, ExitCode::Success)
}
