//! `hiera-lookup eyaml …` in a build without the `eyaml` feature (no cryptography): the
//! command exists, so that scripts and help are the same, and fails in one line.

use crate::output::{self, ExitCode, Failure};

/// `hiera-lookup eyaml COMMAND` (unavailable in this build).
#[derive(clap::Args, Debug)]
#[command(after_help = "\
Examples:
    hiera-lookup eyaml encrypt -s 'hunter2'

Exit status: 2 (this build has no eyaml support).")]
pub struct EyamlArgs {
    /// The eyaml command and its arguments
    #[arg(
        value_name = "ARGS",
        trailing_var_arg = true,
        allow_hyphen_values = true
    )]
    pub args: Vec<String>,
}

/// Says that this build cannot.
pub fn exec(_: &EyamlArgs) -> output::Result<ExitCode> {
    Err(Failure(
        "hiera-lookup was built without its `eyaml` feature: rebuild with it (the default) for the eyaml commands".into(),
    ))
}
