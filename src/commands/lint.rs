//! `hiera-lookup lint [PATH]`: flags → [`hiera_lint::lint`] → findings and exit status.

use crate::flags::groups::{ColorArgs, FactsArgs, RepoArgs, SecretsArgs, TrustArgs, When};
use crate::output::{self, ExitCode};
use hiera_lint::{self as lint, Severity};
use std::path::PathBuf;

const AFTER_HELP: &str = "`hiera-lookup lint --help` adds examples and details.";

/// The end of `lint --help` (and of its man page): examples, every rule (from the rule table
/// itself, so an installed binary explains its rules without the source's docs/lint.md),
/// the settings, the exit statuses.
fn after_long_help() -> String {
    let mut rules = String::new();
    for r in lint::RULES {
        rules.push_str(&format!("    {} ({})\n", r.id, r.severity.name()));
        let mut line = String::from("       ");
        for word in r.summary.split_whitespace() {
            if line.len() + 1 + word.len() > 92 {
                rules.push_str(&line);
                rules.push('\n');
                line = String::from("       ");
            }
            line.push(' ');
            line.push_str(word);
        }
        rules.push_str(&line);
        rules.push('\n');
    }
    format!(
        "\
Examples (in a control repo, its nodes' facts in facts/):
    hiera-lookup lint
    hiera-lookup lint --facts-dir facts --format github
    hiera-lookup lint --list-rules

Rules (id, severity: what it checks; --list-rules prints them one per line):
{rules}
Turn a rule off for a repo in .hiera-lookup.toml ([lint] disable = [\"RULE\"]), or for one
line of a data file with a comment on it or just above it: # hiera-lookup: disable=RULE

Exit status: 0 no finding at or above --fail-on, 1 findings, 2 the lint could not run."
    )
}

/// `hiera-lookup lint`'s flags.
#[derive(clap::Args, Debug)]
#[command(after_help = AFTER_HELP, after_long_help = after_long_help())]
pub struct LintArgs {
    /// The control repo, as -C DIR (default: the current directory)
    #[arg(value_name = "PATH")]
    path: Option<PathBuf>,

    #[command(flatten)]
    repo: RepoArgs,

    #[command(flatten)]
    facts: FactsArgs,

    /// Output format
    #[arg(
        long,
        default_value = "text",
        value_name = "FORMAT",
        value_parser = ["text", "json", "github", "sarif"],
        help_heading = "Output"
    )]
    format: String,

    /// Exit 1 when a finding is at least this severe
    ///
    /// Default: the settings file's `fail-on`, else error.
    #[arg(
        long = "fail-on",
        value_name = "SEVERITY",
        value_parser = ["error", "warning", "info"],
        help_heading = "Output"
    )]
    fail_on: Option<String>,

    #[command(flatten)]
    color: ColorArgs,

    /// The lint settings file (default: the repo's .hiera-lookup.toml when it exists)
    // `--config`, its name before 0.3, stays accepted but unlisted: everywhere else --config
    // is Puppet's puppet.conf.
    #[arg(long = "lint-config", alias = "config", value_name = "FILE")]
    lint_config: Option<PathBuf>,

    /// Report findings in vendored modules too
    ///
    /// By default the modules the repo's Puppetfile installs and the directories its
    /// .gitignore leaves out (r10k's modules/) are read, but their findings only counted.
    #[arg(long = "include-vendored")]
    include_vendored: bool,

    #[command(flatten)]
    trust: TrustArgs,

    #[command(flatten)]
    secrets: SecretsArgs,

    /// Print every rule (id, severity, summary) and exit
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
    let root = match (&args.path, &args.repo.repo) {
        // `lint ./x -C x` names one directory twice: it is that directory.
        (Some(p), Some(c)) if same_dir(&cwd, p) != same_dir(&cwd, c) => {
            return Err(format!(
                "the control repo is given twice ({} and -C {}): give PATH or -C DIR",
                p.display(),
                c.display()
            )
            .into())
        }
        (Some(p), _) | (None, Some(p)) => p.clone(),
        (None, None) => PathBuf::from("."),
    };
    // An empty directory, the one above the repo, an unrelated tree: no finding would
    // mean nothing, and a CI step in the wrong directory would pass for ever.
    let looks_like_one = ["hiera.yaml", "data", "modules", "environment.conf"]
        .iter()
        .any(|name| root.join(name).exists());
    if !looks_like_one {
        return Err(format!(
            "{} is not a control repo (no hiera.yaml, data/, modules/ or environment.conf): run hiera-lookup lint in the control repo, or name it: hiera-lookup lint -C DIR",
            std::fs::canonicalize(&root).unwrap_or_else(|_| root.clone()).display()
        )
        .into());
    }
    // The fleet, as every command finds its nodes (files, PuppetDB, --var over them), read
    // as the fleet rules check them.
    let context = match args.facts.any() {
        true => {
            let mut context = args.facts.sources().resolve_in(&cwd)?;
            context.env.cwd = hiera_engine::environment::absolute(&cwd, &root);
            context.check_enc_trust(&context.env.cwd.clone(), args.trust.allow_exec, "lint")?;
            Some(context)
        }
        false => None,
    };
    let nodes = context.as_ref().map(|c| c.fleet()).transpose()?;
    // The puppet.conf Puppet reads, for openvox9-compat.
    let puppet_conf = match &context {
        Some(c) => c.conf.file.clone(),
        None => hiera_facts::conf::PuppetConf::resolve(&Default::default(), &cwd)
            .ok()
            .and_then(|c| c.file),
    };
    let opts = lint::Options {
        root,
        puppet_conf,
        hiera_config: abs(&args.repo.hiera_config),
        modulepath: args.repo.modulepath_in(&cwd),
        config: abs(&args.lint_config),
        include_vendored: args.include_vendored,
        allow_exec: args.trust.allow_exec,
        secrets: args.secrets.mode(true)?,
        ..Default::default()
    };
    let progress = output::Progress::nodes(nodes.as_ref().map_or(0, |n| n.expected));
    let mut report = lint::lint_fleet(&opts, nodes, &mut |done, expected| {
        progress.set(done, expected)
    })?;
    drop(progress);
    for w in std::mem::take(&mut report.warnings) {
        output::warn(&w);
    }
    let fail_on = args
        .fail_on
        .as_deref()
        .and_then(Severity::parse)
        .or(report.fail_on)
        .unwrap_or(Severity::Error);
    let format = lint::output::OutputFormat::parse(&args.format).unwrap_or_default();
    // GitHub's annotations and SARIF name files from the repository's root (a control repo
    // may be a directory of a monorepo).
    if matches!(
        format,
        lint::output::OutputFormat::Github | lint::output::OutputFormat::Sarif
    ) {
        let root = hiera_engine::environment::absolute(&cwd, &opts.root);
        if let Some(prefix) = git_prefix(&root) {
            report.prefix_paths(&prefix);
        }
    }
    let code = ExitCode::negative_if(report.fails(fail_on));
    if !report.vendored.is_empty() {
        output::note(&vendored_summary(&report.vendored));
    }
    if report.opaque_skipped > 0 {
        output::note(&format!(
            "{} type check{} of the fleet's values skipped: the value holds an encrypted eyaml secret and no private key decrypts it here (--secrets)",
            report.opaque_skipped,
            if report.opaque_skipped == 1 { "" } else { "s" }
        ));
    }
    let mut text = lint::output::render(&report, format);
    if format == lint::output::OutputFormat::Text && args.color.enabled(When::Auto) {
        text = output::colorize_lint(&text);
    }
    output::stdout(&text, code)?;
    // Every node whose facts could not be read, after the findings on the others.
    if !report.unreadable.is_empty() {
        for u in &report.unreadable {
            output::error(&output::Failure(u.clone()));
        }
        return Err(output::unreadable_nodes(report.unreadable.len(), "linted"));
    }
    Ok(code)
}

/// The line saying which vendored directories' findings were left out, and how to see them.
fn vendored_summary(vendored: &[lint::Vendored]) -> String {
    let total: usize = vendored.iter().map(|v| v.findings).sum();
    let mut by_source: Vec<(&str, Vec<&str>)> = Vec::new();
    for v in vendored {
        match by_source.iter_mut().find(|(s, _)| *s == v.source) {
            Some((_, dirs)) => dirs.push(&v.dir),
            None => by_source.push((v.source, vec![&v.dir])),
        }
    }
    let sources: Vec<String> = by_source
        .iter()
        .map(|(source, dirs)| {
            let shown: Vec<&str> = dirs.iter().take(5).copied().collect();
            let more = if dirs.len() > 5 {
                format!(" and {} more", dirs.len() - 5)
            } else {
                String::new()
            };
            let how = if *source == "Puppetfile" {
                "installed by the Puppetfile"
            } else {
                "left out by .gitignore"
            };
            format!("{}{more}, {how}", shown.join(", "))
        })
        .collect();
    format!(
        "{total} finding{} in vendored code not shown ({}); --include-vendored shows them",
        if total == 1 { "" } else { "s" },
        sources.join("; ")
    )
}

/// `dir` relative to the root of the git work tree holding it (`None` outside git, `""` at
/// its root).
fn git_prefix(dir: &std::path::Path) -> Option<String> {
    let dir = std::fs::canonicalize(dir).ok()?;
    let top = dir.ancestors().find(|d| d.join(".git").exists())?;
    let rel = dir.strip_prefix(top).ok()?;
    Some(rel.to_string_lossy().into_owned())
}

/// A directory as two names of it compare equal (`./x`, `x`, a link to it).
fn same_dir(cwd: &std::path::Path, p: &std::path::Path) -> PathBuf {
    let p = hiera_engine::environment::absolute(cwd, p);
    std::fs::canonicalize(&p).unwrap_or(p)
}
