//! The command line: which command, and its flags. A command's own flags are declared in its
//! file under `commands/`; the groups several commands share, once, in [`groups`]. Long
//! flags may be abbreviated as Puppet allows ([`abbrev`]).

pub mod abbrev;
pub mod groups;

use crate::commands::eyaml::EyamlArgs;
use crate::commands::lookup::Args;
use crate::commands::TOPICS;
use crate::commands::{completions::CompletionsArgs, diff::DiffArgs, lint::LintArgs};
use crate::commands::{lsp::LspArgs, man::ManArgs, serve::ServeArgs, where_::WhereArgs};
use clap::{Parser, Subcommand};
use std::ffi::OsString;

/// The end of the lookup's `-h`.
const AFTER_SHORT_HELP: &str = "\
`hiera-lookup --help` adds examples and details; `hiera-lookup help COMMAND` describes a command.";

/// The start of the lookup's `--help` epilogue: examples to run in a control repo (a test
/// runs them in a copy of fixtures/environments/production). [`lookup_command`] adds the
/// commands and the exit statuses.
const AFTER_LONG_HELP: &str = "\
Examples (in a control repo: hiera.yaml and data/ in the current directory, or -C DIR):
    hiera-lookup ntp::servers --facts facts/web01.yaml
    hiera-lookup profile::base::users --facts facts/web01.yaml --render-as json
    hiera-lookup ntp::servers --facts facts/web01.yaml --explain
    hiera-lookup profile::web::port --facts facts/web01.yaml --fact role=db
    hiera-lookup ntp::servers --node web01.example.com
    hiera-lookup ntp::servers --facts-dir facts
    hiera-lookup --facts-dir facts --all

A node's facts: `puppet facts show > web01.json` run on the node, a copy of its
fact cache (/opt/puppetlabs/puppet/cache/yaml/facts/NAME.yaml on the Puppet server,
which --node NAME reads), or PuppetDB's (--puppetdb URL). Without -C, --hiera_config,
--environmentpath or --codedir, the current directory is the control repo.

Long flags may be abbreviated as Puppet allows (--env, --exp, --merg), and `_` and `-` are
the same in their names (--render_as, --hiera-config).
";

// The commands other than a lookup (no doc comment here: clap would make it the manual
// page's NAME). A command is recognised only as the very first argument
// (`hiera-lookup diff …`); anything else is a lookup, exactly as `puppet lookup` takes its
// arguments. So a key named like a command is looked up whenever something comes before it:
// `hiera-lookup -- man`, `hiera-lookup --facts node.yaml man`.
#[derive(Subcommand, Debug)]
pub enum Command {
    /// Where a key is defined, and which definition wins for a node
    Where(Box<WhereArgs>),
    /// What a change to the control repo does to every node's data
    Diff(Box<DiffArgs>),
    /// Check a control repo's Hiera data and hiera.yaml files
    Lint(Box<LintArgs>),
    /// Serve the fleet's Hiera data as web pages and a JSON API (read-only)
    Serve(Box<ServeArgs>),
    /// A language server for Hiera data (LSP over stdio, for editors)
    Lsp(Box<LspArgs>),
    /// Encrypt, decrypt, edit and re-key eyaml secrets (hiera-eyaml's commands)
    Eyaml(Box<EyamlArgs>),
    /// Print a shell completion script
    Completions(CompletionsArgs),
    /// Print a manual page (roff)
    Man(ManArgs),
    /// Print the help of the lookup or of a command
    Help(HelpArgs),
}

/// `hiera-lookup help [COMMAND]`.
#[derive(clap::Args, Debug)]
#[command(after_help = "\
Examples:
    hiera-lookup help
    hiera-lookup help lint

Exit status: 0 printed, 2 error.")]
pub struct HelpArgs {
    /// The command (default: the lookup)
    #[arg(value_name = "COMMAND", value_parser = TOPICS.to_vec())]
    pub command: Option<String>,
}

/// `hiera-lookup COMMAND …`: the parser of the commands, used only when the first argument
/// names one.
#[derive(Parser, Debug)]
#[command(
    name = "hiera-lookup",
    version,
    disable_help_subcommand = true,
    max_term_width = 100
)]
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

/// A command line that ends before any command runs.
#[derive(Debug)]
pub enum Early {
    /// clap's: a usage error, or the help or version asked for.
    Clap(clap::Error),
    /// A usage error of ours, one line (exit 2).
    Usage(String),
    /// No arguments at all: the short usage (exit 2).
    NoArguments(String),
}

/// Ends a command line that runs no command: clap's help, version or usage error (exit 0
/// or 2), a usage error of ours, or the short usage when there were no arguments.
pub fn exit_early(e: Early) -> ! {
    use crate::output::{error, exit, ExitCode, Failure};
    use std::io::Write;
    match e {
        Early::Clap(e) => {
            let _ = e.print();
            exit(if e.use_stderr() {
                ExitCode::Error
            } else {
                ExitCode::Success
            })
        }
        Early::Usage(message) => {
            error(&Failure(message));
            exit(ExitCode::Error)
        }
        Early::NoArguments(usage) => {
            let _ = writeln!(std::io::stderr(), "{usage}");
            exit(ExitCode::Error)
        }
    }
}

impl From<clap::Error> for Early {
    fn from(e: clap::Error) -> Early {
        Early::Clap(e)
    }
}

/// Puppet's option parser takes the word after an option as its value even when it is `--`
/// (`--knock-out-prefix --` is the usual spelling); clap would end the options there.
pub fn normalize(args: impl IntoIterator<Item = OsString>) -> Vec<OsString> {
    let mut out: Vec<OsString> = Vec::new();
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

/// What `hiera-lookup` alone prints: how to call it, and where the help is.
fn short_usage() -> String {
    let mut commands = String::new();
    for (name, about) in command_list() {
        commands.push_str(&format!("    {name:<13}{about}\n"));
    }
    format!(
        "hiera-lookup: resolve Hiera keys exactly as `puppet lookup` does, without Puppet\n\n\
Usage: hiera-lookup [OPTIONS] KEY...        (a lookup, as `puppet lookup`)\n       \
hiera-lookup COMMAND [OPTIONS]     (one of the commands below)\n\n\
Commands:\n{commands}\n\
`hiera-lookup -h` lists the options, `hiera-lookup --help` explains them with examples,\n\
`hiera-lookup help COMMAND` describes a command."
    )
}

/// The commands and their one-line descriptions.
fn command_list() -> Vec<(String, String)> {
    use clap::CommandFactory;
    Commands::command()
        .get_subcommands()
        .map(|sub| {
            let about = sub.get_about().map(|a| a.to_string()).unwrap_or_default();
            (sub.get_name().to_string(), about)
        })
        .collect()
}

/// Parses the whole command line (`argv[0]` included): a [`Command`] when the first argument
/// names one, else a lookup.
pub fn parse(argv: Vec<OsString>) -> Result<Invocation, Early> {
    use clap::{CommandFactory, FromArgMatches};
    let argv = normalize(argv);
    let Some(first) = argv.get(1) else {
        return Err(Early::NoArguments(short_usage()));
    };
    let argv0 = argv[0].clone();
    let first = first.to_str();
    if first == Some("help") {
        // `help [COMMAND]` is `[COMMAND] --help`, as git and cargo have it.
        let parsed = Commands::try_parse_from(&argv)?;
        let Command::Help(h) = parsed.command else {
            unreachable!("`help` parses as the help command")
        };
        let mut again = vec![argv0];
        if let Some(topic) = h.command.filter(|t| t != "lookup") {
            again.push(topic.into());
        }
        again.push("--help".into());
        return parse(again);
    }
    if let Some(name) = first.filter(|f| Command::has_subcommand(f)) {
        let commands = Commands::command();
        let sub = commands
            .find_subcommand(name)
            .expect("has_subcommand named it");
        let rest = abbrev::expand(sub, &argv[2..]).map_err(Early::Usage)?;
        let argv: Vec<OsString> = argv[..2].iter().cloned().chain(rest).collect();
        return Commands::try_parse_from(argv)
            .map(|c| Invocation::Command(c.command))
            .map_err(|e| not_for_command(name, e));
    }
    // The lookup's parser without the list of commands its help ends with: building that
    // list builds every command's parser, a tenth of a lookup's work. Help is asked for
    // rarely, and then the full parser answers.
    let mut cmd = Args::command();
    let rest = abbrev::expand(&cmd, &argv[1..]).map_err(Early::Usage)?;
    let argv: Vec<OsString> = std::iter::once(argv0).chain(rest).collect();
    let mut matches = match cmd.try_get_matches_from_mut(argv.clone()) {
        Ok(m) => m,
        Err(e) if e.kind() == clap::error::ErrorKind::DisplayHelp => {
            cmd = lookup_command();
            cmd.try_get_matches_from_mut(argv)?
        }
        Err(e) if e.kind() == clap::error::ErrorKind::UnknownArgument => {
            return Err(unknown_option(e, &argv).into())
        }
        Err(e) => return Err(e.into()),
    };
    Args::from_arg_matches_mut(&mut matches)
        .map(|a| Invocation::Lookup(Box::new(a)))
        .map_err(|e| e.format(&mut cmd).into())
}

/// A flag of the lookup given to a command that does not take it (`where --explain`): said
/// in one line, rather than as an unknown flag.
fn not_for_command(name: &str, e: clap::Error) -> Early {
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    use clap::CommandFactory;
    if e.kind() != ErrorKind::UnknownArgument {
        return e.into();
    }
    let Some(ContextValue::String(given)) = e.get(ContextKind::InvalidArg) else {
        return e.into();
    };
    let flag = given.split('=').next().unwrap_or(given);
    let lookup = Args::command();
    let known = lookup.get_arguments().any(|a| {
        if let Some(long) = flag.strip_prefix("--") {
            a.get_long() == Some(long) || a.get_all_aliases().is_some_and(|al| al.contains(&long))
        } else if let Some(short) = flag.strip_prefix('-').filter(|s| s.chars().count() == 1) {
            a.get_short() == short.chars().next()
        } else {
            false
        }
    });
    if known {
        return Early::Usage(format!(
            "{flag} is a flag of the lookup, not of `{name}`: `hiera-lookup {name} --help` lists the flags {name} takes"
        ));
    }
    e.into()
}

/// A usage error as one line: clap's message, its tip, and the help to read (clap prints
/// seven lines with the usage in the middle).
pub fn usage_error(e: &clap::Error, argv: &[std::ffi::OsString]) -> crate::output::Failure {
    let text = e.to_string();
    // Paragraphs: the message (its lines joined), then tips, the usage, the pointer to help.
    let paragraphs: Vec<String> = text
        .split("\n\n")
        .map(|p| p.lines().map(str::trim).collect::<Vec<_>>().join(" "))
        .filter(|p| !p.is_empty())
        .collect();
    let first = paragraphs
        .first()
        .map_or("invalid arguments", |p| p.trim_start_matches("error: "));
    let tip = paragraphs
        .iter()
        .find_map(|p| p.strip_prefix("tip: "))
        .map(|t| format!(" ({t})"))
        .unwrap_or_default();
    let command = argv
        .get(1)
        .and_then(|a| a.to_str())
        .filter(|a| Command::has_subcommand(a))
        .map(|a| format!(" {a}"))
        .unwrap_or_default();
    crate::output::Failure(format!("{first}{tip}; see 'hiera-lookup{command} --help'"))
}

/// An option the lookup does not know, in Puppet's words (OptionParser names the whole word:
/// `-1.y` is an option to it, not a key; `-- -1.y` looks the key up).
fn unknown_option(e: clap::Error, argv: &[std::ffi::OsString]) -> clap::Error {
    use clap::error::{ContextKind, ContextValue};
    let Some(ContextValue::String(bad)) = e.get(ContextKind::InvalidArg) else {
        return e;
    };
    let words = argv.iter().skip(1).take_while(|a| *a != "--");
    let Some(word) = words
        .filter_map(|a| a.to_str())
        .find(|a| a.starts_with('-') && a.starts_with(bad.as_str()))
    else {
        return e;
    };
    // Puppet's words, then what clap found close to the word (a misspelt flag).
    let similar = match e.get(ContextKind::SuggestedArg) {
        Some(ContextValue::String(s)) => format!(" (did you mean '{s}'?)"),
        Some(ContextValue::Strings(s)) if !s.is_empty() => {
            format!(" (did you mean '{}'?)", s.join("' or '"))
        }
        _ => String::new(),
    };
    clap::Error::raw(
        clap::error::ErrorKind::UnknownArgument,
        format!(
            "Could not parse application options: invalid option: {word}{similar}\n\n  tip: to look up a key that starts with '-', put '--' before it\n"
        ),
    )
}

/// The lookup's parser, its `--help` ending with the examples and the list of commands.
fn lookup_command() -> clap::Command {
    use clap::CommandFactory;
    let mut list = String::new();
    for (name, about) in command_list() {
        list.push_str(&format!("    {name:<13}{about}\n"));
    }
    Args::command()
        .after_help(format!(
            "Commands (the first argument):\n{list}\n{AFTER_SHORT_HELP}"
        ))
        .after_long_help(format!(
            "{AFTER_LONG_HELP}\n\
Commands (the first argument; `hiera-lookup help COMMAND` for each):\n{list}\n\
A key named like a command is looked up when anything comes before it:\n    \
hiera-lookup -- man\n    \
hiera-lookup --facts node.yaml man\n\n\
Exit status: 0 found, 1 not found, 2 error."
        ))
}

/// Every command line hiera-lookup takes, for completions and the manual pages: the lookup's
/// flags and the commands.
pub fn full_command() -> clap::Command {
    Command::augment_subcommands(lookup_command()).disable_help_subcommand(true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    fn v(xs: &[&str]) -> Vec<OsString> {
        xs.iter().map(OsString::from).collect()
    }

    /// `help` and `man` name every command: the topics are the lookup's, then clap's
    /// subcommands, in order (a command added is a topic too).
    #[test]
    fn topics_are_the_commands() {
        let cmd = <Command as Subcommand>::augment_subcommands(clap::Command::new("hl"));
        let names: Vec<&str> = cmd.get_subcommands().map(|c| c.get_name()).collect();
        assert_eq!(crate::commands::TOPICS[0], "lookup");
        assert_eq!(&crate::commands::TOPICS[1..], names.as_slice());
    }

    #[test]
    fn double_dash_as_a_value() {
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
        parse(v(xs)).unwrap()
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
        assert_eq!(keys(parsed(&["hl", "--", "help"])), ["help"]);
        assert_eq!(keys(parsed(&["hl", "--facts", "f.yaml", "diff"])), ["diff"]);
        assert_eq!(keys(parsed(&["hl", "k", "lint"])), ["k", "lint"]);
        assert_eq!(keys(parsed(&["hl", "dif"])), ["dif"]);
        // The lookup keeps Puppet's `--knock-out-prefix --`.
        let Invocation::Lookup(a) = parsed(&["hl", "k", "--knock-out-prefix", "--"]) else {
            panic!()
        };
        assert_eq!(a.merge.knock_out_prefix.as_deref(), Some("--"));
    }

    #[test]
    fn help_is_a_command_and_nothing_is_a_short_usage() {
        use clap::error::ErrorKind;
        let help = |xs: &[&str]| match parse(v(xs)) {
            Err(Early::Clap(e)) if e.kind() == ErrorKind::DisplayHelp => e.to_string(),
            other => panic!("{xs:?}: {other:?}"),
        };
        assert!(help(&["hl", "help"]).contains("Usage: hl [OPTIONS] [KEY]..."));
        assert!(help(&["hl", "help", "lookup"]).contains("Usage: hl [OPTIONS] [KEY]..."));
        assert!(help(&["hl", "help", "lint"]).contains("Usage: hl lint"));
        assert!(matches!(
            parse(v(&["hl", "help", "nope"])),
            Err(Early::Clap(e)) if e.kind() == ErrorKind::InvalidValue
        ));
        assert!(matches!(parse(v(&["hl"])), Err(Early::NoArguments(_))));
    }

    #[test]
    fn the_command_line_is_consistent() {
        full_command().debug_assert();
        Commands::command().debug_assert();
    }
}
