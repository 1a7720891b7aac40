//! `hiera-lookup [FLAGS] KEY…`: the lookup, as `puppet lookup` takes it. One node: flags →
//! scope and layers → lookup → rendered answer (or `--explain`'s trace). Many nodes (several
//! `--facts`, `--facts-dir`, PuppetDB's, `--all`): batch mode, JSON Lines.

use crate::flags::groups::{self, ColorArgs, FactsArgs, LayoutArgs, Listed, MergeArgs};
use crate::flags::groups::{NodeArgs, RedactArgs, SecretsArgs, StrictArgs, ThreadsArgs, When};
use crate::output::{self, ExitCode};
use hiera_engine::query::{Flags, Mode, Request};
use hiera_engine::{Error, Session, Settings, Workspace};
use hiera_facts::context::{NodeContext, NodeSources};

/// The lookup's flags: `puppet lookup`'s, and hiera-lookup's own.
#[derive(clap::Parser, Debug)]
#[command(
    name = "hiera-lookup",
    version,
    about = "Resolve Hiera keys exactly as `puppet lookup` does, without Puppet",
    // Puppet's option parser lets a repeated option win: `--render-as s --render-as json`.
    args_override_self = true,
    max_term_width = 100
)]
pub struct Args {
    /// Keys to look up; the first one found wins. Dotted keys dig into the value.
    #[arg(value_name = "KEY")]
    pub keys: Vec<String>,

    #[command(flatten)]
    pub layout: LayoutArgs,

    #[command(flatten)]
    pub facts: FactsArgs,

    #[command(flatten)]
    pub node: NodeArgs,

    #[command(flatten)]
    pub merge: MergeArgs,

    #[command(flatten)]
    pub strict: StrictArgs,

    /// Print Puppet's explanation of the lookup instead of the value
    #[arg(long, help_heading = "Output")]
    pub explain: bool,

    /// Explain the lookup_options search
    #[arg(
        long = "explain-options",
        alias = "explain_options",
        help_heading = "Output"
    )]
    pub explain_options: bool,

    /// Value (a string) to answer when no key is found
    #[arg(
        long,
        value_name = "VALUE",
        allow_hyphen_values = true,
        help_heading = "Output"
    )]
    pub default: Option<String>,

    /// Assert the type of the found value (a Puppet type: `Array[String]`)
    #[arg(long = "type", value_name = "TYPE", help_heading = "Output")]
    pub type_: Option<String>,

    /// Output format (default yaml; s with --explain)
    #[arg(
        long = "render-as",
        alias = "render_as",
        value_name = "FORMAT",
        value_parser = Listed(RENDER_FORMATS),
        help_heading = "Output"
    )]
    pub render_as: Option<String>,

    #[command(flatten)]
    pub redact: RedactArgs,

    #[command(flatten)]
    pub secrets: SecretsArgs,

    #[command(flatten)]
    pub color: ColorArgs,

    /// Batch mode: every key each node can see in its data, instead of named keys
    #[arg(long, help_heading = "Fleet")]
    pub all: bool,

    #[command(flatten)]
    pub threads: ThreadsArgs,

    /// Puppet's --compile needs a Puppet compiler; not supported
    #[arg(
        long,
        short = 'c',
        help_heading = "Puppet compatibility",
        hide_short_help = true
    )]
    pub compile: bool,

    /// Accepted and ignored (Puppet's logging flag)
    #[arg(
        long,
        short = 'd',
        help_heading = "Puppet compatibility",
        hide_short_help = true
    )]
    pub debug: bool,

    #[arg(long, short = 'v', hide = true)]
    pub verbose: bool,

    /// Puppet settings we accept and ignore (logdir, rundir).
    #[arg(long, value_name = "DIR", hide = true)]
    pub logdir: Option<std::path::PathBuf>,
    #[arg(long, value_name = "DIR", hide = true)]
    pub rundir: Option<std::path::PathBuf>,
}

/// `--render-as`'s formats that render a value (any case; `pson` is json, and Puppet's
/// binary and msgpack render no lookup value).
pub const RENDER_FORMATS: &[&str] = &["yaml", "json", "s"];

impl Args {
    /// The command line's flags, as the library's request takes them.
    pub fn flags(&self) -> Flags {
        let pdb = &self.facts.pdb;
        let puppetdb_batch =
            pdb.nodes_query.is_some() || (pdb.puppetdb.is_some() && self.node.node.is_none());
        Flags {
            keys: self.keys.clone(),
            merge: self.merge.merge.clone(),
            knock_out_prefix: self.merge.knock_out_prefix.clone(),
            sort_merged_arrays: self.merge.sort_merged_arrays,
            merge_hash_arrays: self.merge.merge_hash_arrays,
            strict: self.strict.strict.clone(),
            render_as: self.render_as.clone(),
            explain: self.explain,
            explain_options: self.explain_options,
            compile: self.compile,
            default: self.default.clone(),
            value_type: self.type_.clone(),
            redact: self.redact.redact,
            batch: self.facts.facts.len() > 1
                || self.facts.facts_dir.is_some()
                || self.all
                || puppetdb_batch,
            all: self.all,
        }
    }

    /// Where the layers and nodes come from, as the library's request takes them.
    pub fn sources(&self) -> NodeSources {
        groups::sources(&self.layout, &self.facts, &self.node)
    }
}

/// Runs the lookup (or the batch) and prints its answer.
pub fn exec(args: &Args) -> output::Result<ExitCode> {
    let mut warnings = Vec::new();
    // What Puppet would have printed on stdout before an error (merge_debug's trace).
    let mut before_error = String::new();
    let result = run(args, &mut warnings, &mut before_error);
    for w in &warnings {
        output::warn(w);
    }
    match result {
        Ok((stdout, code)) => output::stdout(&stdout, code),
        Err(e) => {
            output::stdout(&(before_error + &e.stdout()), ExitCode::Error)?;
            Err(e.into())
        }
    }
}

fn run(
    args: &Args,
    warnings: &mut Vec<String>,
    before_error: &mut String,
) -> Result<(String, ExitCode), Error> {
    let flags = args.flags();
    let request = Request::new(&flags)?;
    let mut context = args.sources().resolve()?;
    context.check_control_repo()?;
    for w in context.layout_warnings() {
        output::warn(&w);
    }
    // A single lookup keeps Puppet's error without the private key; a batch goes on.
    let settings = Settings {
        secrets: args.secrets.mode(request.mode == Mode::Batch)?,
        ..request.settings()
    };
    if request.mode == Mode::Batch {
        let workspace = Workspace::open(context.env.clone(), settings.clone())?;
        request.check_batch(&flags)?;
        context.answer_other_environments(settings);
        return run_batch(args, &context, &workspace, &request);
    }
    let layers = context.env.layers()?;
    let node = context.single(warnings)?;
    // The classifier put the node in another environment: its layers.
    let layers = if node.moved {
        context.env.layers()?
    } else {
        layers
    };

    let mut session = Session::with_files(
        node.scope,
        layers,
        settings,
        hiera_engine::store::DataFiles::default(),
    );
    let out = request.answer(&mut session, warnings).inspect_err(|_| {
        let trace = session.take_merge_trace();
        // --redact hides decrypted plaintexts there too.
        *before_error = match session.redactor() {
            Some(r) => r.text(&trace).into_owned(),
            None => trace,
        };
    })?;
    let code = ExitCode::from_status(out.code);
    if out.explanation && args.color.enabled(When::Never) {
        return Ok((output::colorize_explanation(&out.text), code));
    }
    Ok((out.text, code))
}

/// Batch mode: JSON Lines for every node × key, streamed in node order.
fn run_batch(
    args: &Args,
    context: &NodeContext,
    workspace: &Workspace,
    lookup: &Request,
) -> Result<(String, ExitCode), Error> {
    use hiera_engine::batch::{Batch, Keys};
    use std::io::Write;
    use std::ops::ControlFlow;
    let nodes = context.fleet()?;
    let batch = Batch {
        merge: lookup.merge.clone(),
        keys: if args.all {
            Keys::All
        } else {
            Keys::List(args.keys.clone())
        },
        threads: output::threads(args.threads.threads),
        finish: lookup.finish()?,
        format: lookup.format_given.then_some(lookup.format),
    };
    let progress = output::Progress::nodes(nodes.expected);
    let expected = nodes.expected;
    let mut out = std::io::BufWriter::with_capacity(1 << 16, std::io::stdout());
    let (mut missed, mut errors) = (false, false);
    let mut opaque = 0usize;
    let mut broken: Option<std::io::Error> = None;
    let mut done = 0usize;
    // Every node's name and source, for the warning about names given twice (at the end:
    // a node's name is known once its facts are read).
    let mut names: Vec<(String, String)> = Vec::new();
    // Written out at least this often, so that a reader that left (`| head`) is noticed
    // within it, and a slow stream (PuppetDB's) shows its answers as they come.
    const FLUSH_EVERY: std::time::Duration = std::time::Duration::from_millis(25);
    let mut flushed = std::time::Instant::now();
    // A warning every node gives (a level that cannot list its keys) is printed once.
    let mut warned = std::collections::HashSet::new();
    batch.run_lines(workspace, nodes, |_, lines| {
        // A facts file's warnings come before its answers.
        for w in lines.warnings {
            if warned.insert(w.clone()) {
                output::warn(&w);
            }
        }
        errors |= lines.errors;
        missed |= lines.missed;
        opaque += lines.opaque;
        done += lines.nodes.len();
        names.extend(lines.nodes);
        let written = out.write_all(lines.text.as_bytes()).and_then(|()| {
            if flushed.elapsed() >= FLUSH_EVERY {
                flushed = std::time::Instant::now();
                out.flush()
            } else {
                Ok(())
            }
        });
        if let Err(e) = written {
            broken = Some(e);
            return ControlFlow::Break(());
        }
        progress.set(done, expected);
        ControlFlow::Continue(())
    });
    drop(progress);
    if let Err(e) = out.flush() {
        broken.get_or_insert(e);
    }
    if broken.is_none() && opaque > 0 {
        output::note(&format!(
            "{opaque} answer{} held encrypted secrets no private key here decrypts (shown as ENC[…digest]; --secrets)",
            if opaque == 1 { "" } else { "s" }
        ));
    }
    if broken.is_none() {
        for w in
            hiera_facts::duplicate_warnings(names.iter().map(|(n, s)| (n.as_str(), s.as_str())))
        {
            output::warn(&w);
        }
    }
    let code = if errors {
        ExitCode::Error
    } else {
        ExitCode::negative_if(missed)
    };
    match broken {
        // `hiera-lookup … | head` ends quietly, as a broken pipe does for one lookup.
        Some(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
            Err(Error::run(output::write_error(&e).0))
        }
        _ => Ok((String::new(), code)),
    }
}
