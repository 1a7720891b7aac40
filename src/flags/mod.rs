//! The command line: which command, and its flags. A command's own flags are declared in its
//! file under `commands/`; the groups several commands share, once, in [`groups`].

pub mod groups;

use crate::commands::lookup::Args;
use crate::commands::{completions::CompletionsArgs, diff::DiffArgs, lint::LintArgs};
use crate::commands::{man::ManArgs, serve::ServeArgs, where_::WhereArgs};
use clap::{Parser, Subcommand};

/// The start of the lookup's `--help` epilogue: examples that run against this repository's
/// fixtures (a test runs them). [`lookup_command`] adds the commands and the exit statuses.
const AFTER_HELP_EXAMPLES: &str = "\
EXAMPLES:
    hiera-lookup profile::base::users --environmentpath fixtures/environments --facts fixtures/facts/web01.yaml
    hiera-lookup ntp::servers --environmentpath fixtures/environments --facts fixtures/facts/web01.yaml --merge unique --render-as json
    hiera-lookup ntp::servers --environmentpath fixtures/environments --facts fixtures/facts/web01.yaml --explain
    hiera-lookup --environmentpath fixtures/environments --facts-dir fixtures/facts --all
";

/// Puppet's option parser takes the word after an option as its value even when it is `--`
/// (`--knock-out-prefix --` is the usual spelling); clap would end the options there.
pub fn normalize(args: impl IntoIterator<Item = std::ffi::OsString>) -> Vec<std::ffi::OsString> {
    let mut out: Vec<std::ffi::OsString> = Vec::new();
    let mut it = args.into_iter().peekable();
    while let Some(a) = it.next() {
        let takes_value = matches!(
            a.to_str(),
            Some("--knock-out-prefix" | "--knock_out_prefix" | "--default")
        );
        if takes_value && it.peek().is_some_and(|n| n == "--") {
            let mut joined = a.clone();
            joined.push("=--");
            it.next();
            out.push(joined);
        } else {
            out.push(a);
        }
    }
    out
}

/// The commands other than a lookup. A command is recognised only as the very first argument
/// (`hiera-lookup diff …`); anything else is a lookup, exactly as `puppet lookup` takes its
/// arguments. So a key named like a command is looked up whenever something comes before it:
/// `hiera-lookup -- man`, `hiera-lookup --facts node.yaml man`.
#[derive(Subcommand, Debug)]
pub enum Command {
    /// Where a key is defined: every definition a node can reach, with file:line:column and its role
    Where(Box<WhereArgs>),
    /// What a change to the control repo does to every node's Hiera data
    Diff(Box<DiffArgs>),
    /// Check a control repo's Hiera data, hiera.yaml files and their use by the code
    Lint(Box<LintArgs>),
    /// Serve the fleet's Hiera data as web pages and a JSON API (read-only)
    Serve(Box<ServeArgs>),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell)
    Completions(CompletionsArgs),
    /// Print the manual page (roff)
    Man(ManArgs),
}

/// `hiera-lookup COMMAND …`: the parser of the commands, used only when the first argument
/// names one.
#[derive(Parser, Debug)]
#[command(name = "hiera-lookup", version, disable_help_subcommand = true)]
struct Commands {
    #[command(subcommand)]
    command: Command,
}

/// What the command line asks for.
#[derive(Debug)]
pub enum Invocation {
    /// `hiera-lookup [FLAGS] KEY…`: a lookup (or a batch), as `puppet lookup`.
    Lookup(Box<Args>),
    /// One of the [`Command`]s.
    Command(Command),
}

/// Parses the whole command line (`argv[0]` included): a [`Command`] when the first argument
/// names one, else a lookup.
pub fn parse(argv: Vec<std::ffi::OsString>) -> Result<Invocation, clap::Error> {
    use clap::FromArgMatches;
    let argv = normalize(argv);
    let first = argv.get(1).and_then(|a| a.to_str());
    if first.is_some_and(Command::has_subcommand) {
        return Commands::try_parse_from(argv).map(|c| Invocation::Command(c.command));
    }
    // The lookup's parser without the list of commands its help ends with: building that
    // list builds every command's parser, a tenth of a lookup's work. Help is asked for
    // rarely, and then the full parser answers.
    let mut cmd = {
        use clap::CommandFactory;
        Args::command()
    };
    let mut matches = match cmd.try_get_matches_from_mut(argv.clone()) {
        Ok(m) => m,
        Err(e) if e.kind() == clap::error::ErrorKind::DisplayHelp => {
            cmd = lookup_command();
            cmd.try_get_matches_from_mut(argv)?
        }
        Err(e) => return Err(e),
    };
    Args::from_arg_matches_mut(&mut matches)
        .map(|a| Invocation::Lookup(Box::new(a)))
        .map_err(|e| e.format(&mut cmd))
}

/// The lookup's parser, its `--help` ending with the examples and the list of commands.
fn lookup_command() -> clap::Command {
    use clap::CommandFactory;
    let commands = Commands::command();
    let mut list = String::new();
    for sub in commands.get_subcommands() {
        let about = sub.get_about().map(|a| a.to_string()).unwrap_or_default();
        list.push_str(&format!("    {:<13}{about}\n", sub.get_name()));
    }
    Args::command().after_help(format!(
        "{AFTER_HELP_EXAMPLES}\n\
COMMANDS (as the first argument; `hiera-lookup COMMAND --help` for each):\n{list}\
A key named like a command is looked up when anything comes before it:\n    \
hiera-lookup --facts node.yaml man\n    \
hiera-lookup -- man\n\n\
Exit status: 0 found, 1 not found, 2 error."
    ))
}

/// Every command line hiera-lookup takes, for completions and the manual page: the lookup's
/// flags and the commands.
pub fn full_command() -> clap::Command {
    Command::augment_subcommands(lookup_command())
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn double_dash_as_a_value() {
        let v = |xs: &[&str]| xs.iter().map(std::ffi::OsString::from).collect::<Vec<_>>();
        assert_eq!(
            normalize(v(&["x", "--knock-out-prefix", "--", "k"])),
            v(&["x", "--knock-out-prefix=--", "k"])
        );
        assert_eq!(normalize(v(&["--", "k"])), v(&["--", "k"]));
        let a = Args::try_parse_from(normalize(v(&[
            "hl",
            "--merge",
            "deep",
            "--knock-out-prefix",
            "--",
            "k",
        ])))
        .unwrap();
        assert_eq!(a.merge.knock_out_prefix.as_deref(), Some("--"));
        assert_eq!(a.keys, ["k"]);
    }

    fn parsed(xs: &[&str]) -> Invocation {
        parse(xs.iter().map(std::ffi::OsString::from).collect()).unwrap()
    }

    fn keys(i: Invocation) -> Vec<String> {
        match i {
            Invocation::Lookup(a) => a.keys,
            Invocation::Command(c) => panic!("a command: {c:?}"),
        }
    }

    #[test]
    fn a_command_only_as_the_first_argument() {
        assert!(matches!(
            parsed(&["hl", "man"]),
            Invocation::Command(Command::Man(_))
        ));
        assert!(matches!(
            parsed(&["hl", "lint", "--list-rules"]),
            Invocation::Command(Command::Lint(_))
        ));
        match parsed(&["hl", "diff", "HEAD", "--all"]) {
            Invocation::Command(Command::Diff(d)) => assert!(d.all),
            other => panic!("{other:?}"),
        }
        assert_eq!(keys(parsed(&["hl", "--", "man"])), ["man"]);
        assert_eq!(keys(parsed(&["hl", "--facts", "f.yaml", "diff"])), ["diff"]);
        assert_eq!(keys(parsed(&["hl", "k", "lint"])), ["k", "lint"]);
        // Not a command: `help` is a key, as for `puppet lookup`; no abbreviations.
        assert_eq!(keys(parsed(&["hl", "help"])), ["help"]);
        assert_eq!(keys(parsed(&["hl", "dif"])), ["dif"]);
        // The lookup keeps Puppet's `--knock-out-prefix --`.
        let Invocation::Lookup(a) = parsed(&["hl", "k", "--knock-out-prefix", "--"]) else {
            panic!()
        };
        assert_eq!(a.merge.knock_out_prefix.as_deref(), Some("--"));
    }

    #[test]
    fn the_command_line_is_consistent() {
        full_command().debug_assert();
        Commands::command().debug_assert();
    }
}
