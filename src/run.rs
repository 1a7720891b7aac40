//! One invocation of the command: flags → scope and layers → lookup → rendered output.

use crate::cli::Args;
use hiera_lookup::answer::{Answer, Finish, Format};
use hiera_lookup::environment::EnvOptions;
use hiera_lookup::merge::MergeStrategy;
use hiera_lookup::scope::{Scope, Strict};
use hiera_lookup::{render, Error, Session, Settings, Value};

/// What the process prints and its exit status.
pub struct Output {
    pub stdout: String,
    pub warnings: Vec<String>,
    pub error: Option<String>,
    pub code: i32,
}

const RUN_HELP: &str = "Run 'puppet lookup --help' for more details";

pub fn run(args: &Args) -> Output {
    let mut warnings = Vec::new();
    match run_inner(args, &mut warnings) {
        Ok((stdout, code)) => Output {
            stdout,
            warnings,
            error: None,
            code,
        },
        Err(e) => Output {
            stdout: String::new(),
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

pub(crate) fn parse_merge(args: &Args) -> Result<Option<MergeStrategy>, Error> {
    let deep_only =
        args.sort_merged_arrays || args.merge_hash_arrays || args.knock_out_prefix.is_some();
    let deep = matches!(
        args.merge.as_deref(),
        Some("deep" | "reverse_deep" | "unconstrained_deep")
    );
    if deep_only && !deep {
        return Err(Error::Usage(format!(
            "The options --knock-out-prefix, --sort-merged-arrays, and --merge-hash-arrays are only available with '--merge deep'\n{RUN_HELP}"
        )));
    }
    let Some(m) = args.merge.as_deref() else {
        return Ok(None);
    };
    if !matches!(
        m,
        "first" | "unique" | "hash" | "deep" | "reverse_deep" | "unconstrained_deep"
    ) {
        return Err(Error::Usage(format!(
            "The --merge option only accepts 'first', 'hash', 'unique', or 'deep'\n{RUN_HELP}"
        )));
    }
    MergeStrategy::from_cli(
        m,
        args.knock_out_prefix.as_deref(),
        args.sort_merged_arrays,
        args.merge_hash_arrays,
    )
    .map(Some)
    .map_err(|e| Error::Usage(e.message))
}

fn run_inner(args: &Args, warnings: &mut Vec<String>) -> Result<(String, i32), Error> {
    let merge = parse_merge(args)?;
    let strict = parse_strict(args)?;
    if args.compile {
        return Err(Error::Usage(
            "--compile needs a Puppet compiler and is not supported by hiera-lookup".into(),
        ));
    }
    let explain = args.explain || args.explain_options;
    let only_options = args.explain_options && !args.explain;
    let puppetdb_batch =
        args.nodes_query.is_some() || (args.puppetdb.is_some() && args.node.is_none());
    let batch = args.facts.len() > 1 || args.facts_dir.is_some() || args.all || puppetdb_batch;
    let mut keys = args.keys.clone();
    if keys.is_empty() && !batch {
        if only_options {
            keys.push("__global__".into());
        } else {
            return Err(Error::Usage("No keys were given to lookup.".into()));
        }
    }
    let format = match &args.render_as {
        Some(f) => Format::parse(f)?,
        None if explain => Format::S,
        None => Format::Yaml,
    };

    let (cwd, conf, env) = environment(args)?;
    let layers = env.layers()?;

    if batch {
        let request = facts_request(args, &cwd, &conf)?;
        let db = puppetdb_client(args, &cwd, &conf)?;
        return run_batch(args, &env, layers, strict, merge, (request, db), format);
    }
    let db = puppetdb_client(args, &cwd, &conf)?;
    let request = facts_request(args, &cwd, &conf)?;
    let scope = single_scope(args, &env, &request, db.as_ref(), warnings)?;

    let settings = Settings {
        strict,
        explain: args.explain,
        explain_options_only: only_options,
        redact: args.redact,
    };
    let finish = finish_of(args)?;
    let mut session = Session::with_files(
        scope,
        layers,
        settings,
        hiera_lookup::backend::DataFiles::default(),
    );
    // `--default` and `--type` apply to the outcome; a type mismatch is a plain error.
    let result = session
        .lookup(&keys, merge.as_ref())
        .and_then(|o| finish.apply(o));
    warnings.extend(session.take_warnings());

    if explain {
        let ex_text = |s: &mut Session, extra: Option<String>| -> String {
            if let (Some(t), Some(ex)) = (extra, s.explainer_mut()) {
                ex.root_text(t);
            }
            match s.explainer() {
                Some(ex) => ex.explain(),
                None => String::new(),
            }
        };
        let extra = match &result {
            Ok(Answer::Found(_) | Answer::Default(_)) => None,
            Ok(Answer::NotFound) => Some(Session::not_found_message(&keys)),
            Err(e) if e.is_lookup_error() => Some(e.to_string()),
            Err(e) => return Err(e.clone()),
        };
        if format == Format::S {
            let text = ex_text(&mut session, extra);
            return Ok((
                if use_color(args)? {
                    colorize(&text)
                } else {
                    text
                },
                0,
            ));
        }
        let Some(ex) = session.explainer() else {
            return Ok((format.render(&Value::Null)?, 0));
        };
        if format == Format::Yaml {
            // Psych shows the symbols and shared objects a plain value cannot hold.
            let text =
                render::tree_to_yaml(&ex.to_tree()).map_err(|e| Error::run(e.to_string()))?;
            return Ok((text, 0));
        }
        return Ok((format.render(&ex.to_hash())?, 0));
    }

    let answer = result?;
    match answer.value() {
        Some(v) => Ok((format.render(v)?, answer.status())),
        None => Ok((String::new(), answer.status())),
    }
}

/// `--strict`.
pub(crate) fn parse_strict(args: &Args) -> Result<Strict, Error> {
    Ok(match args.strict.as_str() {
        "off" => Strict::Off,
        "warning" => Strict::Warning,
        "error" => Strict::Error,
        other => {
            return Err(Error::Usage(format!(
                "Invalid value '{other}' for parameter strict: expected off, warning or error"
            )))
        }
    })
}

/// The current directory, Puppet's settings and where the layers are, from the flags and
/// puppet.conf.
pub(crate) fn environment(
    args: &Args,
) -> Result<
    (
        std::path::PathBuf,
        hiera_lookup::facts::conf::PuppetConf,
        EnvOptions,
    ),
    Error,
> {
    let cwd = std::env::current_dir()
        .map_err(|e| Error::run(format!("cannot read the current directory: {e}")))?;
    let conf = puppet_conf(args, &cwd)?;
    let mut env = EnvOptions {
        hiera_config: args.hiera_config.clone(),
        codedir: args.codedir.clone(),
        confdir: args.confdir.clone(),
        environmentpath: args.environmentpath.clone(),
        environment: args.environment.clone(),
        basemodulepath: args.basemodulepath.clone(),
        modulepath: args.modulepath.clone(),
        cwd: cwd.clone(),
    };
    conf.apply_layout(&mut env, args.config.is_some());
    Ok((cwd, conf, env))
}

/// The scope of the one node of the facts request, with `--var`s.
pub(crate) fn single_scope(
    args: &Args,
    env: &EnvOptions,
    request: &hiera_lookup::facts::FactsRequest,
    db: Option<&hiera_lookup::facts::puppetdb::Client>,
    warnings: &mut Vec<String>,
) -> Result<Scope, Error> {
    let (facts, facts_warnings) = hiera_lookup::facts::single(request, db)?;
    warnings.extend(facts_warnings);
    Scope::check_facts(&facts)?;
    let mut scope = Scope::from_facts(facts, &env.environment_name());
    for (name, value) in env.settings_vars() {
        scope.set(&name, value);
    }
    for (name, value) in parse_vars(args)? {
        scope.set(&name, value);
    }
    Ok(scope)
}

/// The nodes of batch mode, in chunks: one for files, PuppetDB's as they are fetched.
pub(crate) fn node_chunks<'a>(
    args: &'a Args,
    request: &hiera_lookup::facts::FactsRequest,
    db: Option<&'a hiera_lookup::facts::puppetdb::Client>,
) -> Result<Box<dyn Iterator<Item = Vec<hiera_lookup::facts::BatchNode>> + 'a>, Error> {
    Ok(match db {
        Some(db) if request.node.is_none() => {
            if !request.files.is_empty() || request.dir.is_some() {
                return Err(Error::Usage(
                    "--facts/--facts-dir and PuppetDB's nodes cannot be combined in one batch"
                        .into(),
                ));
            }
            Box::new(hiera_lookup::facts::puppetdb_batch(
                db,
                args.nodes_query.as_deref(),
                request.trusted.clone(),
            )?)
        }
        _ => {
            let (found, facts_warnings) = hiera_lookup::facts::batch(request)?;
            // Printed now, before the answers stream out.
            for w in facts_warnings {
                eprintln!("Warning: {w}");
            }
            Box::new(std::iter::once(found))
        }
    })
}

/// A batch node with its scope (`--var`s included); facts that cannot be read are the
/// node's error (the batch goes on).
pub(crate) fn batch_node(
    env: &EnvOptions,
    vars: &[(String, Value)],
    n: hiera_lookup::facts::BatchNode,
) -> hiera_lookup::batch::Node {
    let (facts, facts_error) = match n
        .facts
        .and_then(|facts| Scope::check_facts(&facts).map(|()| facts))
    {
        Ok(facts) => (facts, None),
        Err(e) => (Default::default(), Some(e)),
    };
    let mut scope = Scope::from_facts(facts, &env.environment_name());
    for (n, v) in env.settings_vars() {
        scope.set(&n, v);
    }
    for (n, v) in vars {
        scope.set(n, v.clone());
    }
    hiera_lookup::batch::Node {
        name: n.name,
        source: Some((n.kind.into(), n.source)),
        scope,
        facts_error,
    }
}

/// Puppet's settings: the flags, then puppet.conf (`--config`, else the confdir's).
pub(crate) fn puppet_conf(
    args: &Args,
    cwd: &std::path::Path,
) -> Result<hiera_lookup::facts::conf::PuppetConf, Error> {
    use hiera_lookup::environment::absolute;
    let abs = |p: &Option<std::path::PathBuf>| p.as_deref().map(|p| absolute(cwd, p));
    let flags = hiera_lookup::facts::conf::Flags {
        config: abs(&args.config),
        confdir: abs(&args.confdir),
        codedir: abs(&args.codedir),
        vardir: abs(&args.vardir),
        environmentpath: abs(&args.environmentpath),
        hiera_config: abs(&args.hiera_config),
        basemodulepath: args.basemodulepath.clone(),
    };
    hiera_lookup::facts::conf::PuppetConf::resolve(&flags, cwd)
}

/// The PuppetDB client the flags (or Puppet's routes.yaml and puppetdb.conf) ask for.
pub(crate) fn puppetdb_client(
    args: &Args,
    cwd: &std::path::Path,
    conf: &hiera_lookup::facts::conf::PuppetConf,
) -> Result<Option<hiera_lookup::facts::puppetdb::Client>, Error> {
    use hiera_lookup::environment::absolute;
    use hiera_lookup::facts::puppetdb;
    let urls = if let Some(u) = &args.puppetdb {
        puppetdb::split_urls(u)
    } else if args.nodes_query.is_some()
        || (args.node.is_some()
            && !args.no_facts
            && (args.confdir.is_some() || !hiera_lookup::facts::conf::machine_config_disabled())
            && puppetdb::routes_facts_to_puppetdb(&conf.confdir))
    {
        match puppetdb::server_urls_from_conf(&conf.confdir)? {
            Some(urls) => urls,
            None => {
                return Err(Error::Usage(format!(
                    "PuppetDB's address is unknown: give --puppetdb URL (no server_urls in {})",
                    conf.confdir.join("puppetdb.conf").display()
                )))
            }
        }
    } else {
        return Ok(None);
    };
    let abs = |p: &Option<std::path::PathBuf>| p.as_deref().map(|p| absolute(cwd, p));
    let opts = puppetdb::Options {
        urls,
        cacert: abs(&args.puppetdb_cacert),
        cert: abs(&args.puppetdb_cert),
        key: abs(&args.puppetdb_key),
        timeout: std::time::Duration::from_secs(args.puppetdb_timeout.max(1)),
    }
    .with_ssldir(&conf.ssldir, conf.raw.get("certname").map(String::as_str));
    puppetdb::Client::new(&opts).map(Some)
}

/// Where the node's facts come from, from the flags.
pub(crate) fn facts_request(
    args: &Args,
    cwd: &std::path::Path,
    conf: &hiera_lookup::facts::conf::PuppetConf,
) -> Result<hiera_lookup::facts::FactsRequest, Error> {
    use hiera_lookup::environment::absolute;
    let shown = |p: &std::path::Path| (absolute(cwd, p), p.display().to_string());
    let trusted = match &args.trusted {
        Some(Some(f)) => {
            let (path, display) = shown(f);
            Some(hiera_lookup::facts::read_trusted_file(&path, &display)?)
        }
        _ => None,
    };
    Ok(hiera_lookup::facts::FactsRequest {
        node: args.node.clone(),
        files: args.facts.iter().map(|f| shown(f)).collect(),
        dir: args.facts_dir.as_deref().map(shown),
        vardir: conf.vardir.clone(),
        no_facts: args.no_facts,
        trusted,
    })
}

/// `--default` and `--type`, as the library applies them.
pub(crate) fn finish_of(args: &Args) -> Result<Finish, Error> {
    Ok(Finish {
        default: args.default.clone(),
        value_type: args.type_.as_deref().map(Finish::parse_type).transpose()?,
    })
}

/// `--var NAME=VALUE` pairs, values read as YAML.
pub(crate) fn parse_vars(args: &Args) -> Result<Vec<(String, Value)>, Error> {
    let mut out = Vec::new();
    for v in &args.vars {
        let Some((name, value)) = v.split_once('=') else {
            return Err(Error::Usage(format!("--var expects NAME=VALUE, got '{v}'")));
        };
        let value = hiera_lookup::yaml::load(value)
            .map_err(|e| Error::Usage(format!("--var {name}: {e}")))?;
        out.push((name.to_string(), value));
    }
    Ok(out)
}

/// Batch mode: JSON Lines for every node × key, streamed in node order.
fn run_batch(
    args: &Args,
    env: &EnvOptions,
    layers: hiera_lookup::Layers,
    strict: Strict,
    merge: Option<MergeStrategy>,
    (request, db): (
        hiera_lookup::facts::FactsRequest,
        Option<hiera_lookup::facts::puppetdb::Client>,
    ),
    format: Format,
) -> Result<(String, i32), Error> {
    use hiera_lookup::batch::{Batch, Keys, Node};
    use std::io::{IsTerminal, Write};
    if args.explain || args.explain_options {
        return Err(Error::Usage(
            "--explain cannot be combined with batch mode".into(),
        ));
    }
    if args.all && !args.keys.is_empty() {
        return Err(Error::Usage("--all and keys cannot be combined".into()));
    }
    if !args.all && args.keys.is_empty() {
        return Err(Error::Usage("No keys were given to lookup.".into()));
    }
    let vars = parse_vars(args)?;
    let chunks = node_chunks(args, &request, db.as_ref())?;
    let to_nodes = |found: Vec<hiera_lookup::facts::BatchNode>| -> Vec<Node> {
        found
            .into_iter()
            .map(|n| batch_node(env, &vars, n))
            .collect()
    };
    let threads = args.threads.unwrap_or_else(|| {
        std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1)
    });
    let batch = Batch {
        layers,
        settings: Settings {
            strict,
            explain: false,
            explain_options_only: false,
            redact: args.redact,
        },
        merge,
        keys: if args.all {
            Keys::All
        } else {
            Keys::List(args.keys.clone())
        },
        threads,
        finish: finish_of(args)?,
        format: args.render_as.is_some().then_some(format),
    };
    let progress = std::io::stderr().is_terminal();
    let mut out = std::io::BufWriter::with_capacity(1 << 16, std::io::stdout());
    let (mut missed, mut errors) = (false, false);
    let mut broken: Option<std::io::Error> = None;
    let files = hiera_lookup::backend::DataFiles::default();
    let mut done = 0usize;
    for chunk in chunks {
        let nodes = to_nodes(chunk);
        let count = nodes.len();
        let show = progress && (done > 0 || count >= 50);
        batch.run(nodes, files.clone(), |i, records| {
            if broken.is_some() {
                return;
            }
            for r in &records {
                let (line, is_error) = r.json_line();
                if is_error {
                    errors = true;
                } else if matches!(r.outcome, Ok(Answer::NotFound)) {
                    missed = true;
                }
                if let Err(e) = writeln!(out, "{line}") {
                    broken = Some(e);
                    return;
                }
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
