//! `hiera-lookup diff`: its flags, and the library calls they make.

use crate::flags::groups::{ColorArgs, FactsArgs, RedactArgs, RepoArgs, StrictArgs};
use crate::flags::groups::{SecretsArgs, ThreadsArgs, TrustArgs, When};
use crate::output::{self, ExitCode};
use hiera_diff::{self as diff, git::Repo, output::Format, Keys, Tree};
use hiera_engine::{Error, Settings};
use std::path::Path;

/// The end of `diff -h`.
const AFTER_HELP: &str = "`hiera-lookup diff --help` adds examples and details.";

/// The end of `diff --help`: examples to run in a control repo's git checkout (a test runs
/// them in one).
const AFTER_LONG_HELP: &str = "\
Examples (in a control repo's git checkout, its nodes' facts in facts/):
    hiera-lookup diff main --facts-dir facts --all
    hiera-lookup diff main my-branch --facts-dir facts profile::base::dns_servers
    hiera-lookup diff main HEAD --facts-dir facts --all --format github

BASE and HEAD are git revisions of the control repo (the current directory, or -C DIR),
read straight from git's object database, no checkout; HEAD defaults to the work tree.
Or BASE and HEAD are two directories. Every node (--facts-dir, --facts, or PuppetDB's:
--puppetdb, --nodes-query) is looked up on both sides for the keys the change can touch
(and only on the nodes whose hierarchies name a changed file), and what changed is
printed by key. In a pull request's CI job:
    hiera-lookup diff origin/main HEAD --facts-dir facts --all --format github

Exit status: 0 no change, 1 changes, 2 error or a change that makes lookups fail (after the report).";

/// `hiera-lookup diff`'s flags.
#[derive(clap::Args, Debug)]
#[command(after_help = AFTER_HELP, after_long_help = AFTER_LONG_HELP)]
pub struct DiffArgs {
    /// BASE (a revision or a directory), then HEAD (default: the work tree), then keys
    #[arg(value_name = "BASE [HEAD] [KEY]", required = true)]
    pub args: Vec<String>,
    /// Every key either side can see
    #[arg(long)]
    pub all: bool,
    /// Output format: github (workflow annotations), markdown (a pull-request comment)
    #[arg(
        long,
        default_value = "text",
        value_name = "FORMAT",
        value_parser = ["text", "json", "github", "markdown"],
        help_heading = "Output"
    )]
    pub format: String,
    #[command(flatten)]
    pub color: ColorArgs,
    #[command(flatten)]
    pub repo: RepoArgs,
    #[command(flatten)]
    pub facts: FactsArgs,
    #[command(flatten)]
    pub strict: StrictArgs,
    #[command(flatten)]
    pub threads: ThreadsArgs,
    /// Look up every key, even those the change cannot touch (checks the analysis)
    #[arg(long = "no-skip", alias = "no_skip")]
    pub no_skip: bool,
    /// Show what eyaml decrypted (by default every decrypted plaintext is [redacted])
    #[arg(long, conflicts_with = "redact", help_heading = "Output")]
    pub show_secrets: bool,
    /// (diff always redacts unless --show-secrets: --redact is accepted as a lookup takes it)
    #[command(flatten)]
    pub redact: RedactArgs,
    #[command(flatten)]
    pub trust: TrustArgs,
    #[command(flatten)]
    pub secrets: SecretsArgs,
}

/// Runs `diff` and prints its report: 0 no change, 1 changes, 2 (after the report) when the
/// change makes lookups fail.
pub fn exec(args: &DiffArgs) -> output::Result<ExitCode> {
    let (mut text, changed, new_errors, unreadable) = run(args)?;
    if args.format == "text" && args.color.enabled(When::Auto) {
        text = output::colorize_diff(&text);
    }
    output::stdout(&text, ExitCode::negative_if(changed))?;
    // Every node whose facts could not be read, after the report on the others.
    if !unreadable.is_empty() {
        for u in &unreadable {
            output::error(&output::Failure(u.clone()));
        }
        return Err(output::unreadable_nodes(unreadable.len(), "compared"));
    }
    if new_errors > 0 {
        return Err(format!(
            "the change makes {new_errors} lookup{} fail (see the report above): fix the data before merging",
            if new_errors == 1 { "" } else { "s" }
        )
        .into());
    }
    Ok(ExitCode::negative_if(changed))
}

fn run(args: &DiffArgs) -> Result<(String, bool, usize, Vec<String>), Error> {
    let format = Format::parse(&args.format).map_err(Error::Usage)?;
    let strict = hiera_engine::query::parse_strict(&args.strict.strict)?;
    let cwd = std::env::current_dir()
        .map_err(|e| Error::run(format!("cannot read the current directory: {e}")))?;
    let abs = |p: &Path| hiera_engine::environment::absolute(&cwd, p);
    let root = args.repo.root(&cwd);

    let mut positional = args.args.iter();
    let base_arg = positional.next().cloned().unwrap_or_default();
    let rest: Vec<String> = positional.cloned().collect();
    let (base, head, keys) = if Path::new(&base_arg).is_dir() && !looks_like_rev(&base_arg) {
        // Two directories.
        let Some(head_arg) = rest.first().filter(|h| Path::new(h.as_str()).is_dir()) else {
            return Err(Error::Usage(format!(
                "{base_arg} is a directory: the new side must be a directory too (diff OLD_DIR NEW_DIR)"
            )));
        };
        (
            Tree::dir(&abs(Path::new(&base_arg)), base_arg.clone())?,
            Tree::dir(&abs(Path::new(head_arg)), head_arg.clone())?,
            rest[1..].to_vec(),
        )
    } else {
        let repo = Repo::discover(&root).map_err(Error::run)?;
        let base = Tree::revision(&repo, &base_arg, &root)?;
        // The second word is HEAD when it names a revision (a key has `::` or is not one).
        let head_rev = rest
            .first()
            .filter(|h| !h.contains("::") && repo.resolves(h))
            .cloned();
        match head_rev {
            Some(h) => (base, Tree::revision(&repo, &h, &root)?, rest[1..].to_vec()),
            None => {
                let mut head = Tree::dir(&root, "work tree")?;
                head.prefix = base.prefix.clone();
                (base, head, rest)
            }
        }
    };
    let keys = match (args.all, keys.is_empty()) {
        (true, true) => Keys::All,
        (false, false) => Keys::List(keys),
        (true, false) => return Err(Error::Usage("--all and keys cannot be combined".into())),
        (false, true) => {
            return Err(Error::Usage(
                "No keys were given to compare (name keys, or --all)".into(),
            ))
        }
    };

    // The nodes, as batch mode finds them: facts files, or PuppetDB's.
    let sources = args.facts.sources();
    if args.facts.facts.is_empty() && !sources.many_nodes() {
        return Err(Error::Usage(
            "diff needs nodes: --facts-dir DIR, --facts FILE, or PuppetDB's (--puppetdb URL, --nodes-query PQL)"
                .into(),
        ));
    }
    let mut context = sources.resolve_in(&cwd)?;
    // The variables a lookup in control-repo mode has ($settings::…), then --var.
    context.env = hiera_engine::environment::EnvOptions {
        cwd: root.clone(),
        ..Default::default()
    };
    context.check_enc_trust(&root, args.trust.allow_exec, "diff")?;
    let nodes = context.fleet()?;
    let progress = output::Progress::nodes(nodes.expected);
    let threads = output::threads(args.threads.threads);
    let report = diff::run(diff::Request {
        base,
        head,
        nodes,
        events: Box::new(move |event| match event {
            diff::Event::Warning(w) => output::warn(&w),
            diff::Event::Progress { done, expected } => progress.set(done, expected),
        }),
        keys,
        settings: Settings {
            strict,
            secrets: args.secrets.mode(true)?,
            ..Default::default()
        },
        threads,
        no_skip: args.no_skip,
        hiera_config: args.repo.hiera_config.as_deref().map(abs),
        modulepath: args.repo.modulepath_in(&cwd),
        show_secrets: args.show_secrets,
        allow_exec: args.trust.allow_exec,
    })?;
    Ok((
        format.render(&report),
        report.has_changes(),
        report.new_errors(),
        report.unreadable.clone(),
    ))
}

/// Whether a word that is also a directory was meant as a revision: never, unless it has
/// revision syntax (`HEAD~1`, `main^`, `@{u}`).
fn looks_like_rev(s: &str) -> bool {
    s.contains(['~', '^', '@'])
}
