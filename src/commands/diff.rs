//! `hiera-lookup diff`: its flags, and the library calls they make.

use crate::flags::groups::{FactsArgs, StrictArgs};
use crate::output::{self, ExitCode};
use hiera_diff::{self as diff, git::Repo, output::Format, Keys, Tree};
use hiera_engine::{Error, Settings};
use std::path::{Path, PathBuf};

/// The end of `diff --help`: examples that run against this repository (a test runs them).
const AFTER_HELP: &str = "\
EXAMPLES:
    hiera-lookup diff HEAD -C fixtures/environments/production --facts-dir fixtures/facts --all
    hiera-lookup diff fixtures/environments/production fixtures/environments/production --facts fixtures/facts/web01.yaml ntp::servers --format json

BASE and HEAD are git revisions of the control repo (the current directory, or -C DIR), read
straight from git's object database, no checkout; HEAD defaults to the work tree. Or BASE and
HEAD are two directories. Every node (--facts-dir, --facts, or PuppetDB's: --puppetdb,
--nodes-query) is looked up on both sides for the keys the change can touch (and only on the
nodes whose hierarchies name a changed file), and what changed is printed by key. In a pull
request's CI job:
    hiera-lookup diff origin/main HEAD --facts-dir facts --all --format github

Exit status: 0 no change, 1 changes, 2 error.";

/// `hiera-lookup diff`'s flags.
#[derive(clap::Args, Debug)]
#[command(after_help = AFTER_HELP)]
pub struct DiffArgs {
    /// BASE (a revision or a directory), then HEAD (default: the work tree), then keys
    #[arg(value_name = "BASE [HEAD] [KEY]", required = true)]
    pub args: Vec<String>,
    /// Every key either side can see
    #[arg(long)]
    pub all: bool,
    /// text, json, github (workflow annotations) or markdown (a pull-request comment)
    #[arg(long, default_value = "text", value_name = "FORMAT")]
    pub format: String,
    /// The control repo (default: the current directory)
    #[arg(short = 'C', long = "repo", value_name = "DIR")]
    pub repo: Option<PathBuf>,
    #[command(flatten)]
    pub facts: FactsArgs,
    #[command(flatten)]
    pub strict: StrictArgs,
    /// Worker threads (default: every core)
    #[arg(long)]
    pub threads: Option<usize>,
    /// Look up every key, even those the change cannot touch (checks the analysis)
    #[arg(long)]
    pub no_skip: bool,
    /// Show what eyaml decrypted (by default every decrypted plaintext is [redacted])
    #[arg(long, conflicts_with = "redact")]
    pub show_secrets: bool,
    /// Hide what eyaml decrypted (the default; accepted as a lookup accepts it)
    #[arg(long)]
    pub redact: bool,
    /// Run the programs `lookup_key: command` levels of the compared trees name
    #[arg(long)]
    pub allow_exec: bool,
}

/// Runs `diff` and prints its report: 0 no change, 1 changes.
pub fn exec(args: &DiffArgs) -> output::Result<ExitCode> {
    let (text, changed) = run(args)?;
    output::stdout(&text, ExitCode::negative_if(changed))
}

fn run(args: &DiffArgs) -> Result<(String, bool), Error> {
    let format = Format::parse(&args.format).map_err(Error::Usage)?;
    let strict = crate::request::parse_strict(&args.strict.strict)?;
    let cwd = std::env::current_dir()
        .map_err(|e| Error::run(format!("cannot read the current directory: {e}")))?;
    let abs = |p: &Path| hiera_engine::environment::absolute(&cwd, p);
    let root = abs(args.repo.as_deref().unwrap_or(Path::new(".")));

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
    let mut resolved = sources.resolve_in(&cwd)?;
    // The variables a lookup in control-repo mode has ($settings::…), then --var.
    resolved.env = hiera_engine::environment::EnvOptions {
        cwd: root.clone(),
        ..Default::default()
    };
    let facts = resolved.facts_request()?;
    let db = resolved.puppetdb()?;
    let nodes = resolved.node_source(&facts, db.as_ref())?;
    let threads = output::threads(args.threads);
    let report = diff::run(diff::Request {
        base,
        head,
        nodes,
        events: Box::new(|event| {
            if let diff::Event::Warning(w) = event {
                output::warn(&w);
            }
        }),
        keys,
        settings: Settings {
            strict,
            ..Default::default()
        },
        threads,
        no_skip: args.no_skip,
        show_secrets: args.show_secrets,
        allow_exec: args.allow_exec,
    })?;
    Ok((format.render(&report), report.has_changes()))
}

/// Whether a word that is also a directory was meant as a revision: never, unless it has
/// revision syntax (`HEAD~1`, `main^`, `@{u}`).
fn looks_like_rev(s: &str) -> bool {
    s.contains(['~', '^', '@'])
}
