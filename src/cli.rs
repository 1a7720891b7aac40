//! The command line: flags as `puppet lookup` takes them, plus hiera-lookup's own.

use clap::{ArgAction, Parser};
use std::path::PathBuf;

/// The end of `--help`: examples that run against this repository's fixtures, the exit
/// statuses, and the other commands.
const AFTER_HELP: &str = "\
EXAMPLES:
    hiera-lookup profile::base::users --environmentpath fixtures/environments --facts fixtures/facts/web01.yaml
    hiera-lookup ntp::servers --environmentpath fixtures/environments --facts fixtures/facts/web01.yaml --merge unique --render-as json
    hiera-lookup ntp::servers --environmentpath fixtures/environments --facts fixtures/facts/web01.yaml --explain
    hiera-lookup --environmentpath fixtures/environments --facts-dir fixtures/facts --all

COMMANDS (as the first argument):
    diff BASE [HEAD]     what a change to the control repo does to every node (diff --help)
    completions SHELL    print a completion script (bash, zsh, fish, elvish, powershell)
    man                  print the manual page (roff)
    A key named like a command is looked up after the flags and `--`:
        hiera-lookup --facts node.yaml -- man

Exit status: 0 found, 1 not found, 2 error.";

#[derive(Parser, Debug)]
#[command(
    name = "hiera-lookup",
    version,
    about = "Resolve Hiera keys exactly as `puppet lookup` does, without Puppet",
    infer_long_args = true,
    // Puppet's option parser lets a repeated option win: `--render-as s --render-as json`.
    args_override_self = true,
    after_help = AFTER_HELP
)]
pub struct Args {
    /// Keys to look up; the first one found wins. Dotted keys dig into the value.
    pub keys: Vec<String>,

    /// The global hiera.yaml (default: control-repo mode, see README).
    #[arg(
        long = "hiera_config",
        visible_alias = "hiera-config",
        value_name = "FILE"
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

/// `hiera-lookup completions SHELL`: the completion script for SHELL on stdout.
pub fn completions(args: &[std::ffi::OsString]) -> Result<String, String> {
    use clap::CommandFactory;
    use clap_complete::Shell;
    let name = args
        .first()
        .and_then(|a| a.to_str())
        .ok_or("completions needs a shell: bash, zsh, fish, elvish or powershell")?;
    if args.len() > 1 {
        return Err("completions takes one argument, the shell".into());
    }
    let shell: Shell = name.parse().map_err(|_| {
        format!("unknown shell '{name}': expected bash, zsh, fish, elvish or powershell")
    })?;
    // The commands recognised as the first argument, with their own flags.
    let mut command = Args::command()
        .subcommand(crate::where_cmd::WhereArgs::command().name("where"))
        .subcommand(crate::diff_cmd::DiffArgs::command().name("diff"))
        .subcommand(crate::lint_cmd::command().name("lint"))
        .subcommand(
            clap::Command::new("completions")
                .about("Shell completions on stdout")
                .arg(clap::Arg::new("shell").value_parser([
                    "bash",
                    "zsh",
                    "fish",
                    "elvish",
                    "powershell",
                ])),
        )
        .subcommand(clap::Command::new("man").about("The manual page (roff) on stdout"));
    let mut out = Vec::new();
    clap_complete::generate(shell, &mut command, "hiera-lookup", &mut out);
    String::from_utf8(out).map_err(|e| e.to_string())
}

/// `hiera-lookup man`: the manual page (roff) on stdout.
pub fn man() -> Result<String, String> {
    use clap::CommandFactory;
    let mut out = Vec::new();
    clap_mangen::Man::new(Args::command())
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
