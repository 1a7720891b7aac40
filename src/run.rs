//! One invocation of the command: flags → scope and layers → lookup → rendered output.

use crate::cli::Args;
use hiera_lookup::answer::{Answer, Finish, Format};
use hiera_lookup::environment::EnvOptions;
use hiera_lookup::merge::MergeStrategy;
use hiera_lookup::scope::{load_facts_file, Scope, Strict};
use hiera_lookup::{render, Error, Map, Session, Settings, Value};

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
    let batch = args.facts.len() > 1 || args.facts_dir.is_some() || args.all;
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

    let (cwd, env) = env_options(args)?;
    let layers = env.layers()?;

    if batch {
        return run_batch(args, &env, layers, strict, merge, &cwd, format);
    }
    let scope = single_scope(args, &env, &cwd)?;

    let settings = Settings {
        strict,
        explain: args.explain,
        explain_options_only: only_options,
        redact: args.redact,
    };
    let finish = finish_of(args)?;
    let mut session = Session::with_files(scope, layers, settings, data_files(args));
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

/// The current directory and where the layers are, from the layer flags.
pub(crate) fn env_options(args: &Args) -> Result<(std::path::PathBuf, EnvOptions), Error> {
    let cwd = std::env::current_dir()
        .map_err(|e| Error::run(format!("cannot read the current directory: {e}")))?;
    let env = EnvOptions {
        hiera_config: args.hiera_config.clone(),
        codedir: args.codedir.clone(),
        confdir: args.confdir.clone(),
        environmentpath: args.environmentpath.clone(),
        environment: args.environment.clone(),
        basemodulepath: args.basemodulepath.clone(),
        modulepath: args.modulepath.clone(),
        cwd: cwd.clone(),
    };
    Ok((cwd, env))
}

/// The scope of the one node of `--facts`/`--node`, with `--var`s.
pub(crate) fn single_scope(
    args: &Args,
    env: &EnvOptions,
    cwd: &std::path::Path,
) -> Result<Scope, Error> {
    let facts = match args.facts.first() {
        Some(f) => {
            let path = hiera_lookup::environment::absolute(cwd, f);
            load_facts_file(&path, &f.display().to_string())?
        }
        None => {
            // Puppet would ask Facter or PuppetDB; we only know the node's name.
            let mut m = Map::default();
            if let Some(n) = &args.node {
                m.insert(Value::str("clientcert"), Value::str(n.as_str()));
            }
            m
        }
    };
    if facts.is_empty() && !args.facts.is_empty() {
        let node = args.node.clone().unwrap_or_else(|| "localhost".into());
        return Err(Error::run(format!(
            "No facts available for target node: {node}"
        )));
    }
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

/// The nodes of batch mode (`--facts` given more than once, `--facts-dir`), in order. A
/// facts file that cannot be read is that node's error.
pub(crate) fn batch_nodes(
    args: &Args,
    env: &EnvOptions,
    cwd: &std::path::Path,
) -> Result<Vec<hiera_lookup::batch::Node>, Error> {
    use hiera_lookup::batch::Node;
    let mut files: Vec<std::path::PathBuf> = args
        .facts
        .iter()
        .map(|f| hiera_lookup::environment::absolute(cwd, f))
        .collect();
    if let Some(dir) = &args.facts_dir {
        let dir = hiera_lookup::environment::absolute(cwd, dir);
        let rd = std::fs::read_dir(&dir).map_err(|e| {
            Error::run(format!(
                "Could not read facts directory {}: {e}",
                dir.display()
            ))
        })?;
        let mut found: Vec<_> = rd
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| {
                matches!(
                    p.extension().and_then(|x| x.to_str()),
                    Some("yaml" | "yml" | "json")
                )
            })
            .collect();
        found.sort();
        files.extend(found);
    }
    let vars = parse_vars(args)?;
    let mut nodes = Vec::with_capacity(files.len());
    for f in &files {
        // A facts file that cannot be read is that node's answer: the batch goes on.
        let (facts, facts_error) = match load_facts_file(f, &f.display().to_string())
            .and_then(|facts| Scope::check_facts(&facts).map(|()| facts))
        {
            Ok(facts) => (facts, None),
            Err(e) => (Default::default(), Some(e)),
        };
        let name = match facts.get(&Value::str("clientcert")) {
            Some(Value::String(c)) => c.clone(),
            _ => f
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default(),
        };
        let mut scope = Scope::from_facts(facts, &env.environment_name());
        for (n, v) in env.settings_vars() {
            scope.set(&n, v);
        }
        for (n, v) in &vars {
            scope.set(n, v.clone());
        }
        nodes.push(Node {
            name,
            scope,
            facts_error,
        });
    }
    Ok(nodes)
}

/// `--default` and `--type`, as the library applies them.
pub(crate) fn finish_of(args: &Args) -> Result<Finish, Error> {
    Ok(Finish {
        default: args.default.clone(),
        value_type: args.type_.as_deref().map(Finish::parse_type).transpose()?,
    })
}

/// The process-wide data file store, with the parse cache unless `--no-cache`.
pub(crate) fn data_files(args: &Args) -> hiera_lookup::backend::DataFiles {
    let dir = if args.no_cache {
        None
    } else {
        hiera_lookup::cache::default_dir()
    };
    hiera_lookup::backend::DataFiles::with_cache(dir)
}

/// `--var NAME=VALUE` pairs, values read as YAML.
fn parse_vars(args: &Args) -> Result<Vec<(String, Value)>, Error> {
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
    cwd: &std::path::Path,
    format: Format,
) -> Result<(String, i32), Error> {
    use hiera_lookup::batch::{Batch, Keys};
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
    let nodes = batch_nodes(args, env, cwd)?;
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
    let total = nodes.len();
    let progress = std::io::stderr().is_terminal() && total >= 50;
    let mut out = std::io::BufWriter::with_capacity(1 << 16, std::io::stdout());
    let (mut missed, mut errors) = (false, false);
    let mut broken: Option<std::io::Error> = None;
    batch.run(nodes, data_files(args), |i, records| {
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
        if progress {
            eprint!("\rhiera-lookup: {}/{total} nodes", i + 1);
        }
    });
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
