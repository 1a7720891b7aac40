//! `hiera-lookup lint [PATH]`: flags → [`hiera_lint::lint`] → findings and exit status.

use hiera_lint::{self as lint, output, Severity};
use std::io::Write;
use std::path::PathBuf;

const AFTER_HELP: &str = "\
EXAMPLES:
    hiera-lookup lint fixtures/environments/production
    hiera-lookup lint tests/conformance/layers/realworld/environments/production --facts-dir tests/conformance/layers/realworld/facts --format github
    hiera-lookup lint --list-rules

Rules are listed with --list-rules and explained in docs/lint.md. Turn a rule off for a repo
in .hiera-lookup.toml ([lint] disable = [\"RULE\"]), or for one line of a data file with a
comment on it or just above it: # hiera-lookup: disable=RULE

Exit status: 0 no finding at or above --fail-on, 1 findings, 2 the lint could not run.";

/// `hiera-lookup lint`'s flags.
#[derive(clap::Args, Debug)]
#[command(after_help = AFTER_HELP)]
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
    #[arg(long = "facts-dir", visible_alias = "facts_dir", value_name = "DIR")]
    facts_dir: Option<PathBuf>,
    /// PuppetDB's nodes as the fleet (`https://puppetdb:8081`; several, comma-separated, are
    /// tried in order): every active node, or those of --nodes-query. Enables the fleet rules.
    #[arg(long, value_name = "URL", conflicts_with = "facts_dir")]
    puppetdb: Option<String>,
    /// With --puppetdb: the nodes of a PQL query, e.g.
    /// 'inventory[certname] { facts.os.family = "RedHat" }'.
    #[arg(
        long = "nodes-query",
        visible_alias = "nodes_query",
        value_name = "PQL",
        requires = "puppetdb"
    )]
    nodes_query: Option<String>,
    /// CA certificate of PuppetDB's certificate (PEM).
    #[arg(long = "puppetdb-cacert", value_name = "FILE")]
    puppetdb_cacert: Option<PathBuf>,
    /// Client certificate for PuppetDB (PEM).
    #[arg(long = "puppetdb-cert", value_name = "FILE")]
    puppetdb_cert: Option<PathBuf>,
    /// Client key for PuppetDB (PEM).
    #[arg(long = "puppetdb-key", value_name = "FILE")]
    puppetdb_key: Option<PathBuf>,
    /// Seconds each PuppetDB request may take.
    #[arg(long = "puppetdb-timeout", value_name = "SECS", default_value = "30")]
    puppetdb_timeout: u64,
    /// A global hiera.yaml to lint with the repo.
    #[arg(long = "hiera_config", visible_aliases = ["hiera-config"], value_name = "FILE")]
    hiera_config: Option<PathBuf>,
    /// The modulepath, instead of environment.conf's (`:`-separated, relative to PATH).
    #[arg(long, value_name = "PATH")]
    modulepath: Option<String>,
    /// The lint settings file (default: PATH/.hiera-lookup.toml when it exists).
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// Run the programs `lookup_key: command` levels name (the fleet's lookups).
    #[arg(long = "allow-exec")]
    allow_exec: bool,
    /// Print every rule (id, severity, summary) and exit.
    #[arg(long = "list-rules")]
    list_rules: bool,
}

/// Runs the command; the return value is the exit status.
pub fn main(args: &LintArgs) -> i32 {
    if args.list_rules {
        let text: String = lint::RULES
            .iter()
            .map(|r| format!("{:<32} {:<8} {}\n", r.id, r.severity.name(), r.summary))
            .collect();
        return write_out(&text, 0);
    }
    // File flags are relative to the working directory (the library takes them relative
    // to the repo).
    let cwd = std::env::current_dir().unwrap_or_default();
    let abs = |p: &Option<PathBuf>| {
        p.as_ref()
            .map(|p| hiera_engine::environment::absolute(&cwd, p))
    };
    let opts = lint::Options {
        root: args.path.clone(),
        hiera_config: abs(&args.hiera_config),
        modulepath: args.modulepath.clone(),
        facts_dir: abs(&args.facts_dir),
        puppetdb: args
            .puppetdb
            .as_deref()
            .map(|urls| hiera_facts::puppetdb::Options {
                urls: hiera_facts::puppetdb::split_urls(urls),
                cacert: abs(&args.puppetdb_cacert),
                cert: abs(&args.puppetdb_cert),
                key: abs(&args.puppetdb_key),
                timeout: std::time::Duration::from_secs(args.puppetdb_timeout.max(1)),
            }),
        nodes_query: args.nodes_query.clone(),
        config: abs(&args.config),
        allow_exec: args.allow_exec,
    };
    let result = std::thread::Builder::new()
        .stack_size(hiera_value::limits::LOOKUP_STACK_SIZE)
        .spawn(move || lint::lint(&opts))
        .map_err(|e| e.to_string())
        .and_then(|h| h.join().map_err(|_| "the lint thread panicked".to_string()));
    let report = match result {
        Ok(Ok(r)) => r,
        Ok(Err(e)) => {
            eprintln!("Error: {e}");
            return 2;
        }
        Err(e) => {
            eprintln!("Error: {e}");
            return 2;
        }
    };
    let fail_on = args
        .fail_on
        .as_deref()
        .and_then(Severity::parse)
        .or(report.fail_on)
        .unwrap_or(Severity::Error);
    let format = output::OutputFormat::parse(&args.format).unwrap_or_default();
    let code = if report.fails(fail_on) { 1 } else { 0 };
    write_out(&output::render(&report, format), code)
}

fn write_out(text: &str, code: i32) -> i32 {
    let mut stdout = std::io::stdout().lock();
    match stdout
        .write_all(text.as_bytes())
        .and_then(|_| stdout.flush())
    {
        Ok(()) => code,
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => code,
        Err(e) => {
            eprintln!("Error: Could not write to stdout: {e}");
            2
        }
    }
}
