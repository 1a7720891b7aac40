//! One invocation of the command: flags → scope and layers → lookup → rendered output.

use crate::cli::Args;
use crate::request::{Flags, Mode, Request, Resolved, Sources};
use hiera_engine::{Error, Session};

/// What the process prints and its exit status.
pub struct Output {
    pub stdout: String,
    pub warnings: Vec<String>,
    pub error: Option<String>,
    pub code: i32,
}

pub fn run(args: &Args) -> Output {
    let mut warnings = Vec::new();
    // What Puppet would have printed on stdout before an error (merge_debug's trace).
    let mut before_error = String::new();
    match run_inner(args, &mut warnings, &mut before_error) {
        Ok((stdout, code)) => Output {
            stdout,
            warnings,
            error: None,
            code,
        },
        Err(e) => Output {
            stdout: before_error + &e.stdout(),
            warnings,
            error: Some(one_line(&e.to_string())),
            code: 2,
        },
    }
}

/// Errors are printed on one line; Puppet's multi-line messages are joined.
fn one_line(s: &str) -> String {
    s.lines().collect::<Vec<_>>().join(" ")
}

/// The command line's flags, as the library's request takes them.
fn flags(args: &Args) -> Flags {
    let puppetdb_batch =
        args.pdb.nodes_query.is_some() || (args.pdb.puppetdb.is_some() && args.node.is_none());
    Flags {
        keys: args.keys.clone(),
        merge: args.merge.clone(),
        knock_out_prefix: args.knock_out_prefix.clone(),
        sort_merged_arrays: args.sort_merged_arrays,
        merge_hash_arrays: args.merge_hash_arrays,
        strict: args.strict.clone(),
        render_as: args.render_as.clone(),
        explain: args.explain,
        explain_options: args.explain_options,
        compile: args.compile,
        default: args.default.clone(),
        value_type: args.type_.clone(),
        redact: args.redact,
        batch: args.facts.len() > 1 || args.facts_dir.is_some() || args.all || puppetdb_batch,
        all: args.all,
    }
}

/// Where the layers and nodes come from, as the library's request takes them.
pub(crate) fn sources(args: &Args) -> Sources {
    Sources {
        hiera_config: args.hiera_config.clone(),
        config: args.config.clone(),
        codedir: args.codedir.clone(),
        confdir: args.confdir.clone(),
        vardir: args.vardir.clone(),
        environmentpath: args.environmentpath.clone(),
        environment: args.environment.clone(),
        basemodulepath: args.basemodulepath.clone(),
        modulepath: args.modulepath.clone(),
        node: args.node.clone(),
        facts: args.facts.clone(),
        facts_dir: args.facts_dir.clone(),
        no_facts: args.no_facts,
        // A bare `--trusted` is ignored, as by Puppet.
        trusted: args.trusted.clone().flatten(),
        vars: args.vars.clone(),
        ..args.pdb.sources()
    }
}

fn run_inner(
    args: &Args,
    warnings: &mut Vec<String>,
    before_error: &mut String,
) -> Result<(String, i32), Error> {
    let flags = flags(args);
    let request = Request::new(&flags)?;
    let sources = sources(args).resolve()?;
    let layers = sources.env.layers()?;

    if request.mode == Mode::Batch {
        let facts = sources.facts_request()?;
        let db = sources.puppetdb()?;
        request.check_batch(&flags)?;
        return run_batch(args, &sources, layers, &request, (facts, db));
    }
    let db = sources.puppetdb()?;
    let scope = sources.single_scope(&sources.facts_request()?, db.as_ref(), warnings)?;

    let mut session = Session::with_files(
        scope,
        layers,
        request.settings(),
        hiera_engine::backend::DataFiles::default(),
    );
    let out = request.answer(&mut session, warnings).inspect_err(|_| {
        let trace = session.take_merge_trace();
        // --redact hides decrypted plaintexts there too.
        *before_error = match session.redactor() {
            Some(r) => r.text(&trace).into_owned(),
            None => trace,
        };
    })?;
    if out.explanation && use_color(args)? {
        return Ok((colorize(&out.text), out.code));
    }
    Ok((out.text, out.code))
}

/// Batch mode: JSON Lines for every node × key, streamed in node order.
fn run_batch(
    args: &Args,
    sources: &Resolved,
    layers: hiera_engine::Layers,
    lookup: &Request,
    (request, db): (
        hiera_facts::FactsRequest,
        Option<hiera_facts::puppetdb::Client>,
    ),
) -> Result<(String, i32), Error> {
    use hiera_engine::batch::{Batch, Keys};
    use std::io::{IsTerminal, Write};
    let mut facts_warnings = Vec::new();
    let chunks = sources.node_chunks(&request, db.as_ref(), &mut facts_warnings)?;
    // Printed now, before the answers stream out.
    for w in facts_warnings {
        eprintln!("Warning: {}", hiera_value::limits::printable(&w));
    }
    let threads = args.threads.unwrap_or_else(|| {
        std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1)
    });
    let batch = Batch {
        layers,
        settings: lookup.settings(),
        merge: lookup.merge.clone(),
        keys: if args.all {
            Keys::All
        } else {
            Keys::List(args.keys.clone())
        },
        threads,
        finish: lookup.finish()?,
        format: lookup.format_given.then_some(lookup.format),
    };
    let progress = std::io::stderr().is_terminal();
    let mut out = std::io::BufWriter::with_capacity(1 << 16, std::io::stdout());
    let (mut missed, mut errors) = (false, false);
    let mut broken: Option<std::io::Error> = None;
    let files = hiera_engine::backend::DataFiles::default();
    let mut done = 0usize;
    for chunk in chunks {
        let nodes: Vec<_> = chunk.into_iter().map(|n| sources.batch_node(n)).collect();
        let count = nodes.len();
        let show = progress && (done > 0 || count >= 50);
        batch.run_lines(nodes, files.clone(), |i, lines| {
            if broken.is_some() {
                return;
            }
            errors |= lines.errors;
            missed |= lines.missed;
            if let Err(e) = out.write_all(lines.text.as_bytes()) {
                broken = Some(e);
                return;
            }
            if show {
                eprint!("\rhiera-lookup: {} nodes", done + i + 1);
            }
        });
        done += count;
        if broken.is_some() {
            break;
        }
        // What a chunk answered is out before the next chunk is fetched.
        if let Err(e) = out.flush() {
            broken = Some(e);
            break;
        }
    }
    let progress = progress && done >= 50;
    if progress {
        eprintln!();
    }
    if let Err(e) = out.flush() {
        broken.get_or_insert(e);
    }
    let code = if errors {
        2
    } else if missed {
        1
    } else {
        0
    };
    match broken {
        // `hiera-lookup … | head` ends quietly, as a broken pipe does for one lookup.
        Some(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(crate::output_error(&e)),
        _ => Ok((String::new(), code)),
    }
}

/// Whether `--color` asks for colour on stdout.
pub(crate) fn use_color(args: &Args) -> Result<bool, Error> {
    use std::io::IsTerminal;
    match args.color.as_deref() {
        None | Some("never" | "false") => Ok(false),
        Some("always" | "true" | "ansi") => Ok(true),
        Some("auto") => {
            Ok(std::env::var_os("NO_COLOR").is_none() && std::io::stdout().is_terminal())
        }
        Some(other) => Err(Error::Usage(format!(
            "--color expects always, never or auto, got '{other}'"
        ))),
    }
}

/// Highlights an explanation: what was found in green (the merged result in bold), the
/// files it came from in cyan, misses dimmed, errors and the final miss in red.
fn colorize(text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = String::with_capacity(text.len() + lines.len() * 12);
    // A multi-line value keeps its line's colour down to its closing bracket.
    let mut open: Option<(&str, usize)> = None;
    for (i, line) in lines.iter().enumerate() {
        let t = line.trim_start();
        let indent = line.len() - t.len();
        if let Some((code, at)) = open {
            if indent == at && (t.starts_with('}') || t.starts_with(']')) {
                open = None;
            }
            out.push_str(&format!("\x1b[{code}m{line}\x1b[0m\n"));
            continue;
        }
        let style = if t.starts_with("Found key:") {
            Some("32")
        } else if t.starts_with("Merged result:") {
            Some("1;32")
        } else if t.starts_with("Path \"") || t.starts_with("URI \"") {
            // The location a value was found in: its "Found key" follows further down.
            let found = lines[i + 1..]
                .iter()
                .take_while(|l| l.len() - l.trim_start().len() > indent)
                .any(|l| l.trim_start().starts_with("Found key:"));
            found.then_some("36")
        } else if t.starts_with("No such key:") || t == "Path not found" {
            Some("2")
        } else if !line.starts_with(' ')
            && !t.starts_with("Searching for")
            && !t.starts_with("Merge strategy")
            && !t.starts_with("Using merge options")
        {
            Some("31")
        } else {
            None
        };
        match style {
            Some(code) => {
                if t.ends_with('{') || t.ends_with('[') {
                    open = Some((code, indent));
                }
                out.push_str(&format!("\x1b[{code}m{line}\x1b[0m\n"))
            }
            None => {
                out.push_str(line);
                out.push('\n');
            }
        }
    }
    out
}
