//! The command line: flags as `puppet lookup` takes them, plus hiera-lookup's own.

use clap::{ArgAction, Parser, Subcommand};
use std::path::PathBuf;

/// The start of the lookup's `--help` epilogue: examples that run against this repository's
/// fixtures (a test runs them). [`lookup_command`] adds the commands and the exit statuses.
const AFTER_HELP_EXAMPLES: &str = "\
EXAMPLES:
    hiera-lookup profile::base::users --environmentpath fixtures/environments --facts fixtures/facts/web01.yaml
    hiera-lookup ntp::servers --environmentpath fixtures/environments --facts fixtures/facts/web01.yaml --merge unique --render-as json
    hiera-lookup ntp::servers --environmentpath fixtures/environments --facts fixtures/facts/web01.yaml --explain
    hiera-lookup --environmentpath fixtures/environments --facts-dir fixtures/facts --all
";

#[derive(Parser, Debug)]
#[command(
    name = "hiera-lookup",
    version,
    about = "Resolve Hiera keys exactly as `puppet lookup` does, without Puppet",
    infer_long_args = true,
    // Puppet's option parser lets a repeated option win: `--render-as s --render-as json`.
    args_override_self = true
)]
pub struct Args {
    /// Keys to look up; the first one found wins. Dotted keys dig into the value.
    pub keys: Vec<String>,

    /// The global hiera.yaml (default: control-repo mode, see README).
    #[arg(
        long = "hiera_config",
        visible_alias = "hiera-config",
        value_name = "FILE",
        // '' is a value (Puppet expands it to the working directory).
        value_parser = clap::builder::TypedValueParser::map(clap::builder::OsStringValueParser::new(), PathBuf::from)
    )]
    pub hiera_config: Option<PathBuf>,

    /// Puppet's puppet.conf (default $confdir/puppet.conf), as Puppet's --config.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,

    /// Facts of the node: a YAML or JSON file (`-`: standard input), Facter's hash, `puppet
    /// facts` output, a fact cache file or PuppetDB's JSON. With --node, merged over the node's
    /// cached facts, as Puppet does. Given more than once, every node is answered (batch mode,
    /// JSON Lines out).
    #[arg(long, value_name = "FILE", action = ArgAction::Append)]
    pub facts: Vec<PathBuf>,

    /// Batch mode: one node per facts file (.yaml, .yml, .json) in DIR.
    #[arg(long = "facts-dir", visible_alias = "facts_dir", value_name = "DIR")]
    pub facts_dir: Option<PathBuf>,

    /// Batch mode: every key each node can see in its data, instead of named keys.
    #[arg(long)]
    pub all: bool,

    /// Print `[redacted]` wherever a plaintext decrypted from an eyaml `ENC[...]` token would
    /// appear: values, --explain traces, batch lines, messages (beyond Puppet). Lookups,
    /// interpolation and --type still use the real value.
    #[arg(long)]
    pub redact: bool,

    /// Batch mode: worker threads (default: the number of CPUs).
    #[arg(long, value_name = "N")]
    pub threads: Option<usize>,

    /// The node's name (certname): its facts come from Puppet's fact cache
    /// ($vardir/yaml/facts/NAME.yaml), with --facts over them; none at all is an error.
    #[arg(long, value_name = "NAME")]
    pub node: Option<String>,

    #[command(flatten)]
    pub pdb: PuppetDbArgs,

    /// With --node: no facts but the node's name (clientcert and trusted.certname), instead of
    /// the error when no source has facts for it.
    #[arg(long = "no-facts", visible_alias = "no_facts")]
    pub no_facts: bool,

    /// An extra top-scope variable; the value is read as YAML. Repeatable.
    #[arg(long = "var", value_name = "NAME=VALUE", action = ArgAction::Append)]
    pub vars: Vec<String>,

    /// Merge strategy: first, unique, hash, deep (also reverse_deep, unconstrained_deep).
    #[arg(long, value_name = "STRATEGY")]
    pub merge: Option<String>,

    /// Deep merge: prefix that knocks out values of lower priority.
    #[arg(
        long = "knock-out-prefix",
        visible_alias = "knock_out_prefix",
        value_name = "PREFIX"
    )]
    pub knock_out_prefix: Option<String>,

    /// Deep merge: sort merged arrays.
    #[arg(long = "sort-merged-arrays", visible_alias = "sort_merged_arrays")]
    pub sort_merged_arrays: bool,

    /// Deep merge: merge hashes inside arrays.
    #[arg(long = "merge-hash-arrays", visible_alias = "merge_hash_arrays")]
    pub merge_hash_arrays: bool,

    /// Print Puppet's explanation of the lookup instead of the value.
    #[arg(long)]
    pub explain: bool,

    /// Explain the lookup_options search.
    #[arg(long = "explain-options", visible_alias = "explain_options")]
    pub explain_options: bool,

    /// Value (a string) to answer when no key is found.
    #[arg(long, value_name = "VALUE", allow_hyphen_values = true)]
    pub default: Option<String>,

    /// Assert the type of the found value (Puppet type expression).
    #[arg(long = "type", value_name = "TYPE")]
    pub type_: Option<String>,

    /// Output format: yaml (default), json, s.
    #[arg(long = "render-as", visible_alias = "render_as", value_name = "FORMAT")]
    pub render_as: Option<String>,

    /// Undefined variables: error (Puppet 8, default), warning (Puppet 7) or off.
    #[arg(long, value_name = "MODE", default_value = "error")]
    pub strict: String,

    /// Accepted for compatibility with Puppet 8's flags (always on).
    #[arg(long = "strict_variables", visible_alias = "strict-variables")]
    pub strict_variables: bool,

    /// The environment (default production).
    #[arg(long, short = 'E', value_name = "NAME")]
    pub environment: Option<String>,

    /// Directory of environments (default $codedir/environments).
    #[arg(long, value_name = "DIR")]
    pub environmentpath: Option<PathBuf>,

    /// Puppet's codedir (default /etc/puppetlabs/code).
    #[arg(long, value_name = "DIR")]
    pub codedir: Option<PathBuf>,

    /// Puppet's confdir (default /etc/puppetlabs/puppet).
    #[arg(long, value_name = "DIR")]
    pub confdir: Option<PathBuf>,

    /// Module directories shared by all environments.
    #[arg(long, value_name = "PATH")]
    pub basemodulepath: Option<String>,

    /// Overrides the environment's modulepath.
    #[arg(long, value_name = "PATH")]
    pub modulepath: Option<String>,

    /// Puppet's --compile needs a Puppet compiler; not supported.
    #[arg(long, short = 'c')]
    pub compile: bool,

    /// `--trusted=FILE`: the node's trusted data (a YAML or JSON hash: extensions, ...), over
    /// what Puppet derives from the certname. A bare --trusted is accepted and ignored, as by
    /// Puppet.
    #[arg(
        long,
        value_name = "FILE",
        num_args = 0..=1,
        require_equals = true
    )]
    pub trusted: Option<Option<PathBuf>>,

    /// Accepted for compatibility (logging flags of Puppet).
    #[arg(long, short = 'd')]
    pub debug: bool,

    #[arg(long, short = 'v', hide = true)]
    pub verbose: bool,

    /// Colour the --explain text: always, never or auto (a terminal, unless NO_COLOR is
    /// set). Default never, so the trace stays byte-identical to Puppet's. Puppet's
    /// true/false are accepted too.
    #[arg(long, value_name = "WHEN")]
    pub color: Option<String>,

    /// Puppet's vardir, where the fact cache is (default from puppet.conf, else
    /// /opt/puppetlabs/puppet/cache for root, ~/.puppetlabs/opt/puppet/cache otherwise).
    #[arg(long, value_name = "DIR")]
    pub vardir: Option<PathBuf>,

    /// Puppet settings we accept and ignore (logdir, rundir).
    #[arg(long, value_name = "DIR", hide = true)]
    pub logdir: Option<PathBuf>,
    #[arg(long, value_name = "DIR", hide = true)]
    pub rundir: Option<PathBuf>,
}

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
    Where(Box<crate::where_cmd::WhereArgs>),
    /// What a change to the control repo does to every node's Hiera data
    Diff(Box<crate::diff_cmd::DiffArgs>),
    /// Check a control repo's Hiera data, hiera.yaml files and their use by the code
    Lint(Box<crate::lint_cmd::LintArgs>),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell)
    Completions(CompletionsArgs),
    /// Print the manual page (roff)
    Man(ManArgs),
}

/// `hiera-lookup completions SHELL`.
#[derive(clap::Args, Debug)]
#[command(after_help = "\
EXAMPLES:
    hiera-lookup completions bash
    hiera-lookup completions zsh

Install: hiera-lookup completions bash > ~/.local/share/bash-completion/completions/hiera-lookup
(zsh: a file _hiera-lookup on $fpath; fish: ~/.config/fish/completions/hiera-lookup.fish).

Exit status: 0 printed, 2 error.")]
pub struct CompletionsArgs {
    /// bash, zsh, fish, elvish or powershell
    #[arg(value_name = "SHELL")]
    pub shell: String,
}

/// `hiera-lookup man`.
#[derive(clap::Args, Debug)]
#[command(after_help = "\
EXAMPLES:
    hiera-lookup man

Install: hiera-lookup man > ~/.local/share/man/man1/hiera-lookup.1, then: man hiera-lookup

Exit status: 0 printed, 2 error.")]
pub struct ManArgs {}

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
fn full_command() -> clap::Command {
    Command::augment_subcommands(lookup_command())
}

/// `hiera-lookup completions SHELL`: the completion script for SHELL, covering the lookup's
/// flags and every command.
pub fn completions(shell: &str) -> Result<String, String> {
    use clap_complete::Shell;
    let shell: Shell = shell.parse().map_err(|_| {
        format!("unknown shell '{shell}': expected bash, zsh, fish, elvish or powershell")
    })?;
    let mut out = Vec::new();
    clap_complete::generate(shell, &mut full_command(), "hiera-lookup", &mut out);
    String::from_utf8(out).map_err(|e| e.to_string())
}

/// `hiera-lookup man`: the manual page (roff), the commands included.
pub fn man() -> Result<String, String> {
    let mut out = Vec::new();
    clap_mangen::Man::new(full_command())
        .render(&mut out)
        .map_err(|e| e.to_string())?;
    String::from_utf8(out).map_err(|e| e.to_string())
}

/// PuppetDB as the nodes' source: the lookup's flags, shared by `where` and `diff`.
#[derive(clap::Args, Debug, Clone)]
pub struct PuppetDbArgs {
    /// PuppetDB to take facts and trusted data from (`https://puppetdb:8081`, `http://localhost:8080`;
    /// several, comma-separated, are tried in order). With --node, that node; without, batch
    /// mode over every active node. Default with --node: PuppetDB when Puppet's routes.yaml
    /// sends facts there (puppetdb.conf's server_urls).
    #[arg(long, value_name = "URL")]
    pub puppetdb: Option<String>,

    /// Batch mode over the nodes of a PuppetDB PQL query, e.g.
    /// 'inventory[certname] { facts.os.family = "RedHat" }'.
    #[arg(
        long = "nodes-query",
        visible_alias = "nodes_query",
        value_name = "PQL"
    )]
    pub nodes_query: Option<String>,

    /// CA certificate of PuppetDB's certificate (default $ssldir/certs/ca.pem).
    #[arg(long = "puppetdb-cacert", value_name = "FILE")]
    pub puppetdb_cacert: Option<PathBuf>,

    /// Client certificate for PuppetDB (default $ssldir/certs/CERTNAME.pem).
    #[arg(long = "puppetdb-cert", value_name = "FILE")]
    pub puppetdb_cert: Option<PathBuf>,

    /// Client key for PuppetDB (default $ssldir/private_keys/CERTNAME.pem).
    #[arg(long = "puppetdb-key", value_name = "FILE")]
    pub puppetdb_key: Option<PathBuf>,

    /// Seconds each PuppetDB request may take (default 30).
    #[arg(long = "puppetdb-timeout", value_name = "SECS", default_value = "30")]
    pub puppetdb_timeout: u64,
}

impl PuppetDbArgs {
    /// The request's node sources with only these flags set: the one place the lookup, `where`
    /// and `diff` turn them into the library's terms.
    pub fn sources(&self) -> crate::request::Sources {
        crate::request::Sources {
            puppetdb: self.puppetdb.clone(),
            nodes_query: self.nodes_query.clone(),
            puppetdb_cacert: self.puppetdb_cacert.clone(),
            puppetdb_cert: self.puppetdb_cert.clone(),
            puppetdb_key: self.puppetdb_key.clone(),
            puppetdb_timeout: self.puppetdb_timeout,
            ..Default::default()
        }
    }
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
        assert_eq!(a.knock_out_prefix.as_deref(), Some("--"));
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
        assert_eq!(a.knock_out_prefix.as_deref(), Some("--"));
    }

    #[test]
    fn the_command_line_is_consistent() {
        full_command().debug_assert();
        Commands::command().debug_assert();
    }
}
