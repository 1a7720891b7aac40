//! One file per command, each with its flags and one `exec(&Args) -> output::Result<ExitCode>`
//! that prints through [`crate::output`]. A new command is a new file here, a variant of
//! [`crate::flags::Command`] and an arm in `main`.

pub mod completions;
pub mod diff;
#[cfg(feature = "eyaml")]
pub mod eyaml;
/// Built without the `eyaml` feature: the command is there, and says so.
#[cfg(not(feature = "eyaml"))]
#[path = "eyaml_unavailable.rs"]
pub mod eyaml;
pub mod lint;
pub mod lookup;
pub mod lsp;
pub mod man;
pub mod serve;
pub mod where_;

/// The names `help` and `man` take: the lookup's, then the commands'.
pub const TOPICS: &[&str] = &[
    "lookup",
    "where",
    "diff",
    "lint",
    "serve",
    "lsp",
    "eyaml",
    "completions",
    "man",
    "help",
];
