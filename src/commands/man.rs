//! `hiera-lookup man`: the manual page (roff), the commands included.

use crate::output::{self, ExitCode};

/// `hiera-lookup man`.
#[derive(clap::Args, Debug)]
#[command(after_help = "\
Examples:
    hiera-lookup man | man -l -

Install (the directory may not exist yet), then `man hiera-lookup`:
    mkdir -p ~/.local/share/man/man1
    hiera-lookup man > ~/.local/share/man/man1/hiera-lookup.1

Exit status: 0 printed, 2 error.")]
pub struct ManArgs {}

/// Prints the manual page.
pub fn exec(_: &ManArgs) -> output::Result<ExitCode> {
    let mut out = Vec::new();
    clap_mangen::Man::new(crate::flags::full_command())
        .render(&mut out)
        .map_err(|e| e.to_string())?;
    let text = String::from_utf8(out).map_err(|e| e.to_string())?;
    output::stdout(&text, ExitCode::Success)
}
