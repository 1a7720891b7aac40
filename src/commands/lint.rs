//! `hiera-lookup lint [PATH]`: flags → [`hiera_lint::lint`] → findings and exit status.

use crate::flags::groups::PuppetDbArgs;
use crate::output::{self, ExitCode};
use hiera_lint::{self as lint, Severity};
use std::path::PathBuf;

const AFTER_HELP: &str = "`hiera-lookup lint --help` adds examples and details.";

const AFTER_LONG_HELP: &str = "\
Examples (in a control repo, its nodes' facts in facts/):
    hiera-lookup lint
    hiera-lookup lint --facts-dir facts --format github
    hiera-lookup lint --list-rules

Rules are listed with --list-rules and explained in docs/lint.md. Turn a rule off for a
repo in .hiera-lookup.toml ([lint] disable = [\"RULE\"]), or for one line of a data file
with a comment on it or just above it: # hiera-lookup: disable=RULE

Exit status: 0 no finding at or above --fail-on, 1 findings, 2 the lint could not run.";

/// `hiera-lookup lint`'s flags.
#[derive(clap::Args, Debug)]
#[command(after_help = AFTER_HELP, after_long_help = AFTER_LONG_HELP)]
pub struct LintArgs {
    /// The control repo (an environment directory: hiera.yaml, data/, environment.conf).
    #[arg(default_value = ".")]
    path: PathBuf,
    /// Output format: text, json, github (workflow commands) or sarif (2.1.0).
    #[arg(long, default_value = "text", value_parser = ["text", "json", "github", "sarif"])]
    format: String,
    /// Exit 1 when a finding is at least this severe: error, warning or info
    /// (default: the settings file's `fail-on`, else error).
    #[arg(long = "fail-on", value_parser = ["error", "warning", "info"])]
    fail_on: Option<String>,
    /// One facts file per node (.yaml, .yml, .json): enables the fleet rules.
    #[arg(long = "facts-dir", alias = "facts_dir", value_name = "DIR")]
    facts_dir: Option<PathBuf>,
    /// PuppetDB's nodes as the fleet (every active node, or those of --nodes-query): enables
    /// the fleet rules.
    #[command(flatten)]
    pdb: PuppetDbArgs,
    /// A global hiera.yaml to lint with the repo.
    #[arg(long = "hiera_config", aliases = ["hiera-config"], value_name = "FILE")]
    hiera_config: Option<PathBuf>,
    /// The modulepath, instead of environment.conf's (`:`-separated, relative to PATH).
    #[arg(long, value_name = "PATH")]
    modulepath: Option<String>,
    /// The lint settings file (default: PATH/.hiera-lookup.toml when it exists).
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// Print every rule (id, severity, summary) and exit.
    #[arg(long = "list-rules")]
    list_rules: bool,
}

/// Runs the lint and prints its findings: 0 none at or above --fail-on, 1 some.
pub fn exec(args: &LintArgs) -> output::Result<ExitCode> {
    if args.list_rules {
        let text: String = lint::RULES
            .iter()
            .map(|r| format!("{:<32} {:<8} {}\n", r.id, r.severity.name(), r.summary))
            .collect();
        return output::stdout(&text, ExitCode::Success);
    }
    // File flags are relative to the working directory (the library takes them relative
    // to the repo).
    let cwd =
        std::env::current_dir().map_err(|e| format!("cannot read the current directory: {e}"))?;
    let abs = |p: &Option<PathBuf>| {
        p.as_ref()
            .map(|p| hiera_engine::environment::absolute(&cwd, p))
    };
    if args.facts_dir.is_some() && args.pdb.puppetdb.is_some() {
        return Err(
            "--facts-dir and --puppetdb cannot be combined: pick one fleet"
                .to_string()
                .into(),
        );
    }
    if args.pdb.nodes_query.is_some() && args.pdb.puppetdb.is_none() {
        return Err("--nodes-query needs --puppetdb URL".to_string().into());
    }
    // PuppetDB's flags mean what they mean for a lookup, Puppet's $ssldir certificates
    // included.
    let puppetdb = match &args.pdb.puppetdb {
        Some(_) => args.pdb.sources().resolve_in(&cwd)?.puppetdb_options()?,
        None => None,
    };
    let opts = lint::Options {
        root: args.path.clone(),
        hiera_config: abs(&args.hiera_config),
        modulepath: args.modulepath.clone(),
        facts_dir: abs(&args.facts_dir),
        puppetdb,
        nodes_query: args.pdb.nodes_query.clone(),
        config: abs(&args.config),
    };
    let report = lint::lint(&opts)?;
    let fail_on = args
        .fail_on
        .as_deref()
        .and_then(Severity::parse)
        .or(report.fail_on)
        .unwrap_or(Severity::Error);
    let format = lint::output::OutputFormat::parse(&args.format).unwrap_or_default();
    let code = ExitCode::negative_if(report.fails(fail_on));
    output::stdout(&lint::output::render(&report, format), code)
}
