//! The typed request between a command line and the library (fd's `Opts` → `Config`,
//! ripgrep's `LowArgs` → `HiArgs`): [`Flags`] as a command line gives them, validated once
//! with Puppet's wording into a [`Request`]: typed [`Format`], [`Strict`], merge strategy
//! and [`Mode`]. [`Request::answer`] then runs a single lookup (or an explanation) and
//! applies `--default`, `--type` and the format, so every command prints through one path.

use hiera_engine::answer::{Answer, Finish};
use hiera_engine::batch::{NodeSource, NodeUnit, ReadNodes};
use hiera_engine::engine::{Session, Settings};
use hiera_engine::environment::{absolute, EnvOptions};
use hiera_engine::error::{Error, Result};
use hiera_engine::format::Format;
use hiera_engine::merge::MergeStrategy;
use hiera_engine::scope::Scope;
use hiera_engine::scope::Strict;
use hiera_facts::conf::PuppetConf;
use hiera_facts::enc::Classification;
use hiera_facts::{puppetdb, BatchNode, FactsRequest};
use hiera_value::value::Value;
use std::path::{Path, PathBuf};

/// Where Puppet says "Run 'puppet lookup --help' for more details": this program's help.
const RUN_HELP: &str = "Run 'hiera-lookup --help' for more details.";

/// The lookup flags as a command line gives them, before validation.
#[derive(Debug, Clone, Default)]
pub struct Flags {
    /// The keys, in order (the first found wins).
    pub keys: Vec<String>,
    /// `--merge`.
    pub merge: Option<String>,
    /// `--knock-out-prefix`.
    pub knock_out_prefix: Option<String>,
    /// `--sort-merged-arrays`.
    pub sort_merged_arrays: bool,
    /// `--merge-hash-arrays`.
    pub merge_hash_arrays: bool,
    /// `--strict`: `off`, `warning` or `error`.
    pub strict: String,
    /// `--render-as`.
    pub render_as: Option<String>,
    /// `--explain`.
    pub explain: bool,
    /// `--explain-options`.
    pub explain_options: bool,
    /// `--compile` (refused: no Puppet compiler).
    pub compile: bool,
    /// `--default`.
    pub default: Option<String>,
    /// `--type`, as written.
    pub value_type: Option<String>,
    /// `--redact`: values decrypted from eyaml are shown as `[redacted]`.
    pub redact: bool,
    /// Many nodes (several `--facts`, `--facts-dir`) or `--all`: batch mode.
    pub batch: bool,
    /// `--all`: every key the node can see.
    pub all: bool,
}

/// What kind of run a request is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// One node, the first of the keys that is found.
    Single,
    /// Many nodes × keys, JSON Lines.
    Batch,
    /// `--explain` (`options_only`: `--explain-options` alone).
    Explain {
        /// `--explain-options` without `--explain`.
        options_only: bool,
    },
}

/// A validated request.
#[derive(Debug, Clone)]
pub struct Request {
    /// The keys, in order (the first found wins).
    pub keys: Vec<String>,
    /// `--merge` and its deep options (`None`: lookup_options or `first` decide).
    pub merge: Option<MergeStrategy>,
    /// `--strict`.
    pub strict: Strict,
    /// Single lookup, batch or explanation.
    pub mode: Mode,
    /// The render format (`s` by default with `--explain`, else `yaml`).
    pub format: Format,
    /// Whether the format was asked for (batch mode adds rendered values only then).
    pub format_given: bool,
    /// `--redact`.
    pub redact: bool,
    /// `--default` and `--type` (parsed by [`finish`](Self::finish)).
    default: Option<String>,
    value_type: Option<String>,
}

/// What a single lookup or an explanation prints, and its exit status.
#[derive(Debug, Clone, PartialEq)]
pub struct Rendered {
    /// What goes to stdout.
    pub text: String,
    /// The exit status: 0 answered, 1 not found.
    pub code: i32,
    /// The text is an `--explain` trace in the `s` format (which a terminal may colour).
    pub explanation: bool,
}

impl Request {
    /// Validates `flags`, in Puppet's order and with its messages.
    pub fn new(flags: &Flags) -> Result<Request> {
        let merge = parse_merge(flags)?;
        let strict = parse_strict(&flags.strict)?;
        if flags.compile {
            return Err(Error::Usage(
                "--compile needs a Puppet compiler and is not supported by hiera-lookup".into(),
            ));
        }
        let explain = flags.explain || flags.explain_options;
        let only_options = flags.explain_options && !flags.explain;
        let mut keys = flags.keys.clone();
        if keys.is_empty() && !flags.batch {
            if only_options {
                keys.push("__global__".into());
            } else {
                return Err(Error::Usage("No keys were given to lookup.".into()));
            }
        }
        let format = match &flags.render_as {
            Some(f) => Format::parse(f)?,
            None if explain => Format::S,
            None => Format::Yaml,
        };
        let mode = if flags.batch {
            Mode::Batch
        } else if explain {
            Mode::Explain {
                options_only: only_options,
            }
        } else {
            Mode::Single
        };
        Ok(Request {
            keys,
            merge,
            strict,
            mode,
            format,
            format_given: flags.render_as.is_some(),
            redact: flags.redact,
            default: flags.default.clone(),
            value_type: flags.value_type.clone(),
        })
    }

    /// The batch-mode checks (after the layers are known, as before batch mode existed).
    pub fn check_batch(&self, flags: &Flags) -> Result<()> {
        if flags.explain || flags.explain_options {
            return Err(Error::Usage(
                "--explain cannot be combined with batch mode".into(),
            ));
        }
        if flags.all && !flags.keys.is_empty() {
            return Err(Error::Usage("--all and keys cannot be combined".into()));
        }
        if !flags.all && flags.keys.is_empty() {
            return Err(Error::Usage("No keys were given to lookup.".into()));
        }
        Ok(())
    }

    /// The session settings this request needs.
    pub fn settings(&self) -> Settings {
        let (explain, explain_options_only) = match self.mode {
            Mode::Explain { options_only } => (!options_only, options_only),
            _ => (false, false),
        };
        Settings {
            strict: self.strict,
            explain,
            explain_options_only,
            redact: self.redact,
            ..Default::default()
        }
    }

    /// `--default` and `--type`. The type is parsed here, when the node is known, as Puppet
    /// parses it after reading the facts (so a facts error comes first).
    pub fn finish(&self) -> Result<Finish> {
        Ok(Finish {
            default: self.default.clone(),
            value_type: self
                .value_type
                .as_deref()
                .map(Finish::parse_type)
                .transpose()?,
        })
    }

    /// Runs the request's lookup on `session` (made with [`settings`](Self::settings)) and
    /// renders the answer or the explanation as `puppet lookup` prints it.
    pub fn answer(&self, session: &mut Session, warnings: &mut Vec<String>) -> Result<Rendered> {
        let finish = self.finish()?;
        // `--default` and `--type` apply to the outcome; a type mismatch is a plain error.
        let result = session
            .lookup(&self.keys, self.merge.as_ref())
            .and_then(|o| finish.apply(o));
        // --redact changes only what is printed, from here on.
        let redactor = session.redactor().filter(|r| !r.is_empty()).cloned();
        let result = match &redactor {
            Some(r) => result
                .map(|a| a.map_value(|v| r.value(v)))
                .map_err(|e| r.error(&e)),
            None => result,
        };
        let hide = |text: String| match &redactor {
            Some(r) => r.text(&text).into_owned(),
            None => text,
        };
        warnings.extend(session.take_warnings().into_iter().map(hide));
        if let (Some(r), Some(ex)) = (&redactor, session.explainer_mut()) {
            ex.redact(r);
        }
        let format = self.format;
        if let Mode::Explain { .. } = self.mode {
            // The trace holds its own copies of what it prints: the answer and the loaded
            // data are dropped before it is printed.
            let result = result.map(|a| a.map_value(|_| Value::Null));
            session.release_data();
            let extra = match &result {
                Ok(Answer::Found(_) | Answer::Default(_)) => None,
                Ok(Answer::NotFound) => Some(Session::not_found_message(&self.keys)),
                Err(e) if e.is_lookup_error() => Some(e.to_string()),
                Err(e) => return Err(e.clone()),
            };
            // deep_merge's merge_debug lines come first on stdout, as Ruby `puts` them (on
            // an error they stay in the session for the caller, see `Session::take_merge_trace`).
            let trace = hide(session.take_merge_trace());
            let rendered = |text: String| Rendered {
                text: format!("{trace}{text}"),
                code: 0,
                explanation: false,
            };
            if format == Format::S {
                if let (Some(t), Some(ex)) = (extra, session.explainer_mut()) {
                    ex.root_text(t);
                }
                let text = session
                    .explainer()
                    .map(|ex| ex.explain())
                    .transpose()?
                    .unwrap_or_default();
                return Ok(Rendered {
                    text: format!("{trace}{}", hide(text)),
                    code: 0,
                    explanation: true,
                });
            }
            let Some(ex) = session.explainer() else {
                return Ok(rendered(format.render(&Value::Null)?));
            };
            // YAML: Psych shows the symbols and shared objects a plain value cannot hold.
            return Ok(rendered(hide(ex.render(format)?)));
        }
        let answer = result?;
        let trace = hide(session.take_merge_trace());
        Ok(Rendered {
            text: match answer.value() {
                Some(v) => format!("{trace}{}", format.render(v)?),
                None => trace,
            },
            code: answer.status(),
            explanation: false,
        })
    }
}

/// Where the layers and the nodes come from, as a command line gives them. Every command
/// that looks nodes up (the lookup, batch mode, `where`, `diff`) resolves them through
/// [`Sources::resolve`] and the methods of [`Sources`]' [`Resolved`] form, so a flag means
/// the same thing everywhere.
#[derive(Debug, Clone, Default)]
pub struct Sources {
    /// `-C DIR`: the control repo (default: the current directory).
    pub repo: Option<PathBuf>,
    /// `--hiera_config`: the global layer's hiera.yaml.
    pub hiera_config: Option<PathBuf>,
    /// `--config`: puppet.conf.
    pub config: Option<PathBuf>,
    /// `--codedir`.
    pub codedir: Option<PathBuf>,
    /// `--confdir`.
    pub confdir: Option<PathBuf>,
    /// `--vardir`: where Puppet's fact cache is.
    pub vardir: Option<PathBuf>,
    /// `--environmentpath`.
    pub environmentpath: Option<PathBuf>,
    /// `--environment`.
    pub environment: Option<String>,
    /// `--basemodulepath`.
    pub basemodulepath: Option<String>,
    /// `--modulepath`.
    pub modulepath: Option<String>,
    /// `--node`.
    pub node: Option<String>,
    /// `--facts` (repeatable).
    pub facts: Vec<PathBuf>,
    /// `--facts-dir`: every facts file of a directory.
    pub facts_dir: Option<PathBuf>,
    /// `--no-facts`.
    pub no_facts: bool,
    /// `--trusted=FILE`.
    pub trusted: Option<PathBuf>,
    /// `--puppetdb`: PuppetDB's URLs, comma-separated.
    pub puppetdb: Option<String>,
    /// `--nodes-query`: a PQL query for the nodes.
    pub nodes_query: Option<String>,
    /// `--puppetdb-cacert`.
    pub puppetdb_cacert: Option<PathBuf>,
    /// `--puppetdb-cert`.
    pub puppetdb_cert: Option<PathBuf>,
    /// `--puppetdb-key`.
    pub puppetdb_key: Option<PathBuf>,
    /// Seconds.
    pub puppetdb_timeout: u64,
    /// `--var NAME=VALUE`, as written.
    pub vars: Vec<String>,
    /// `--fact NAME=VALUE`, as written.
    pub fact_overrides: Vec<String>,
    /// `--enc[=COMMAND]`: the classifier (`Some(None)`: puppet.conf's `external_nodes`).
    pub enc: Option<Option<String>>,
}

/// [`Sources`] with Puppet's settings read and the layers located.
#[derive(Debug, Clone)]
pub struct Resolved {
    /// The directory relative paths are taken from.
    pub cwd: PathBuf,
    /// Puppet's settings.
    pub conf: PuppetConf,
    /// Where the layers are.
    pub env: EnvOptions,
    /// `--var`s, values read as YAML.
    pub vars: Vec<(String, Value)>,
    /// `--fact`s: dotted names, values read as YAML.
    pub fact_overrides: Vec<(String, Value)>,
    /// The External Node Classifier to ask about every node (`--enc`).
    pub enc: Option<hiera_facts::enc::Enc>,
    /// The environments a classifier puts nodes of a fleet in, besides the run's (Puppet's
    /// layout; `None`: such a node is an error, see [`Resolved::answer_other_environments`]).
    pub other_environments: Option<std::sync::Arc<OtherEnvironments>>,
    /// The flags resolved.
    pub sources: Sources,
}

impl Sources {
    /// Whether the flags name many nodes (several `--facts`, `--facts-dir`, PuppetDB's nodes
    /// without `--node`).
    pub fn many_nodes(&self) -> bool {
        let puppetdb_batch =
            self.nodes_query.is_some() || (self.puppetdb.is_some() && self.node.is_none());
        self.facts.len() > 1 || self.facts_dir.is_some() || puppetdb_batch
    }

    /// The current directory, Puppet's settings (the flags, then puppet.conf) and where the
    /// layers are.
    pub fn resolve(&self) -> Result<Resolved> {
        let cwd = std::env::current_dir()
            .map_err(|e| Error::run(format!("cannot read the current directory: {e}")))?;
        self.resolve_in(&cwd)
    }

    /// [`resolve`](Self::resolve) with relative paths taken from `cwd`.
    pub fn resolve_in(&self, cwd: &Path) -> Result<Resolved> {
        let abs = |p: &Option<PathBuf>| p.as_deref().map(|p| absolute(cwd, p));
        let flags = hiera_facts::conf::Flags {
            config: abs(&self.config),
            confdir: abs(&self.confdir),
            codedir: abs(&self.codedir),
            vardir: abs(&self.vardir),
            environmentpath: abs(&self.environmentpath),
            hiera_config: abs(&self.hiera_config),
            basemodulepath: self.basemodulepath.clone(),
        };
        let conf = PuppetConf::resolve(&flags, cwd)?;
        let mut env = EnvOptions {
            hiera_config: self.hiera_config.clone(),
            codedir: self.codedir.clone(),
            confdir: self.confdir.clone(),
            environmentpath: self.environmentpath.clone(),
            environment: self.environment.clone(),
            basemodulepath: self.basemodulepath.clone(),
            modulepath: self.modulepath.clone(),
            cwd: cwd.to_path_buf(),
        };
        if let Some(repo) = &self.repo {
            // The control repo is DIR; every other flag's file stays relative to `cwd`.
            if !env.control_repo_mode() {
                return Err(Error::Usage(
                    "-C DIR reads DIR as the control repo, while --hiera_config, --environmentpath, --codedir and --confdir name Puppet's layout instead: give one or the other"
                        .into(),
                ));
            }
            let root = absolute(cwd, repo);
            if !root.is_dir() {
                return Err(Error::Usage(format!(
                    "-C {}: no such directory",
                    repo.display()
                )));
            }
            env.modulepath = env
                .modulepath
                .as_deref()
                .map(|m| absolute_path_list(cwd, m));
            env.basemodulepath = env
                .basemodulepath
                .as_deref()
                .map(|m| absolute_path_list(cwd, m));
            env.cwd = root;
        }
        conf.apply_layout(&mut env, self.config.is_some());
        let enc = match &self.enc {
            None => None,
            Some(Some(command)) => Some(hiera_facts::enc::Enc::new(command, cwd)?),
            Some(None) => match &conf.external_nodes {
                Some(command) => Some(hiera_facts::enc::Enc::new(command, cwd)?),
                None => {
                    let read = match &conf.file {
                        Some(f) => format!("{} names none", f.display()),
                        None => "no puppet.conf was read".to_string(),
                    };
                    return Err(Error::Usage(format!(
                        "--enc without =COMMAND asks the classifier Puppet's settings name (node_terminus = exec, external_nodes = PROGRAM), and {read}: give --enc=COMMAND"
                    )));
                }
            },
        };
        Ok(Resolved {
            cwd: cwd.to_path_buf(),
            conf,
            env,
            vars: parse_vars(&self.vars)?,
            fact_overrides: parse_pairs("--fact", &self.fact_overrides)?,
            enc,
            other_environments: None,
            sources: self.clone(),
        })
    }
}

impl Resolved {
    /// In control-repo mode (no layout flag, none from puppet.conf), the working directory
    /// must look like one: a hiera.yaml, a data/ or modules/ directory, or environment.conf.
    /// Anywhere else a lookup would find nothing and exit 1 like a missing key, and a CI step
    /// run in the wrong directory would pass for ever.
    pub fn check_control_repo(&self) -> Result<()> {
        if !self.env.control_repo_mode() {
            return Ok(());
        }
        let dir = &self.env.cwd;
        let looks_like_one = ["hiera.yaml", "data", "modules", "environment.conf"]
            .iter()
            .any(|name| dir.join(name).exists());
        if looks_like_one {
            return Ok(());
        }
        Err(Error::Usage(format!(
            "{} is not a control repo (no hiera.yaml, data/, modules/ or environment.conf): run hiera-lookup in the control repo, or point at one with --environmentpath DIR (and --environment) or --hiera_config FILE",
            dir.display()
        )))
    }

    /// Whether a single lookup was given no facts at all (no `--facts`, `--node`, PuppetDB,
    /// and not `--no-facts`):
    /// it answers as for a node with none, which is rarely what was meant.
    pub fn no_facts_given(&self) -> bool {
        let s = &self.sources;
        s.facts.is_empty()
            && s.facts_dir.is_none()
            && s.node.is_none()
            && s.puppetdb.is_none()
            && s.nodes_query.is_none()
            && !s.no_facts
    }

    /// Where the node's facts come from.
    pub fn facts_request(&self) -> Result<FactsRequest> {
        let s = &self.sources;
        let shown = |p: &Path| (absolute(&self.cwd, p), p.display().to_string());
        let trusted = match &s.trusted {
            Some(f) => {
                let (path, display) = shown(f);
                Some(hiera_facts::read_trusted_file(&path, &display)?)
            }
            None => None,
        };
        Ok(FactsRequest {
            node: s.node.clone(),
            files: s.facts.iter().map(|f| shown(f)).collect(),
            dir: s.facts_dir.as_deref().map(shown),
            vardir: self.conf.vardir.clone(),
            no_facts: s.no_facts,
            trusted,
        })
    }

    /// The PuppetDB client the flags (or Puppet's routes.yaml and puppetdb.conf) ask for.
    pub fn puppetdb(&self) -> Result<Option<puppetdb::Client>> {
        match self.puppetdb_options()? {
            Some(opts) => puppetdb::Client::new(&opts).map(Some),
            None => Ok(None),
        }
    }

    /// How to reach the PuppetDB the flags (or Puppet's routes.yaml and puppetdb.conf) ask
    /// for: its URLs, and the certificates, Puppet's `$ssldir` ones unless the flags name
    /// others. The one place every command turns PuppetDB's flags into the library's terms.
    pub fn puppetdb_options(&self) -> Result<Option<puppetdb::Options>> {
        let s = &self.sources;
        let conf = &self.conf;
        let urls = if let Some(u) = &s.puppetdb {
            puppetdb::split_urls(u)
        } else if s.nodes_query.is_some()
            || (s.node.is_some()
                && !s.no_facts
                && (s.confdir.is_some() || !hiera_facts::conf::machine_config_disabled())
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
        let abs = |p: &Option<PathBuf>| p.as_deref().map(|p| absolute(&self.cwd, p));
        Ok(Some(
            puppetdb::Options {
                urls,
                cacert: abs(&s.puppetdb_cacert),
                cert: abs(&s.puppetdb_cert),
                key: abs(&s.puppetdb_key),
                timeout: std::time::Duration::from_secs(s.puppetdb_timeout.max(1)),
            }
            .with_ssldir(&conf.ssldir, conf.raw.get("certname").map(String::as_str)),
        ))
    }

    /// [`single_scope`](Self::single_scope) as `lookup` and `where` take it: with the warning
    /// that no facts were given, and whether the classifier moved the node to another
    /// environment (its layers are then to be found again).
    pub fn single_node(
        &mut self,
        facts: &FactsRequest,
        db: Option<&puppetdb::Client>,
        warnings: &mut Vec<String>,
    ) -> Result<(Scope, bool)> {
        if self.no_facts_given() {
            warnings.push(crate::commands::lookup::NO_FACTS.into());
        }
        let environment = self.env.environment.clone();
        let scope = self.single_scope(facts, db, warnings)?;
        Ok((scope, self.env.environment != environment))
    }

    /// The scope of the one node of `facts`: its facts (`--fact`s over them), the
    /// environment's `$settings::` variables, the classifier's parameters (`--enc`), then
    /// `--var`s; the facts' warnings go to `warnings`. The classifier's environment becomes
    /// the environment unless `--environment` was given, as for a Puppet server's node:
    /// [`Resolved::env`] changes then (the caller's layers are to be found again).
    pub fn single_scope(
        &mut self,
        facts: &FactsRequest,
        db: Option<&puppetdb::Client>,
        warnings: &mut Vec<String>,
    ) -> Result<Scope> {
        let (mut facts, facts_warnings) = hiera_facts::single(facts, db)?;
        warnings.extend(facts_warnings);
        self.override_facts(&mut facts);
        Scope::check_facts(&facts)?;
        let class = match &self.enc {
            Some(enc) => {
                let name = self
                    .sources
                    .node
                    .clone()
                    .or_else(|| certname_of(&facts))
                    .ok_or_else(|| {
                        Error::Usage(
                            "--enc asks the classifier about the node's certname, which neither --node nor the facts (clientcert) give".into(),
                        )
                    })?;
                Some(enc.classify(&name)?)
            }
            None => None,
        };
        if let Some(env) = class.as_ref().and_then(|c| c.environment.clone()) {
            if self.sources.environment.is_none() {
                self.env.environment = Some(env);
            }
        }
        Ok(self.scope_of(facts, class.as_ref(), &self.env))
    }

    /// The scope of a node known only by the facts it was given (`serve`'s posted facts):
    /// `--fact`s over them, the `$settings::` variables and `--var`s; no classifier is asked
    /// about it.
    pub fn unclassified_scope(&self, mut facts: hiera_value::value::Map) -> Scope {
        self.override_facts(&mut facts);
        self.scope_of(facts, None, &self.env)
    }

    /// A node's scope from its facts (overrides applied) and classification, in the
    /// environment `env` names (`$environment`, `$server_facts`, `$settings::`).
    fn scope_of(
        &self,
        facts: hiera_value::value::Map,
        class: Option<&Classification>,
        env: &EnvOptions,
    ) -> Scope {
        let mut scope = Scope::from_facts(facts, &env.environment_name());
        for (name, value) in env.settings_vars() {
            scope.set(&name, value);
        }
        // Node parameters win over facts as top-scope variables ($facts keeps the facts).
        for (name, value) in class.iter().flat_map(|c| c.parameters.iter()) {
            if let Some(name) = name.as_str() {
                scope.set(name, value.clone());
            }
        }
        for (name, value) in &self.vars {
            scope.set(name, value.clone());
        }
        scope
    }

    /// `--fact NAME=VALUE`s over a node's facts.
    fn override_facts(&self, facts: &mut hiera_value::value::Map) {
        for (name, value) in &self.fact_overrides {
            hiera_facts::set_fact(facts, name, value.clone());
        }
    }

    /// The environment a classified node is looked up in, or why the run cannot: in Puppet's
    /// layout the run reads one environment (unless `--environment` was given, a node the
    /// classifier puts elsewhere is an error, not a wrong answer); a control repo is its own
    /// environment, whatever its name.
    fn classified_environment(&self, class: &Classification, node: &str) -> Result<String> {
        let run = self.env.environment_name();
        match &class.environment {
            Some(e) if *e != run && self.sources.environment.is_none() => {
                if self.env.control_repo_mode() || self.other_environments.is_some() {
                    Ok(e.clone())
                } else {
                    Err(Error::run(format!(
                        "the classifier puts {node} in environment '{e}', but this run reads '{run}': look its nodes up with --environment {e}"
                    )))
                }
            }
            _ => Ok(run),
        }
    }

    /// The nodes of a batch, read as they are answered: each facts file, or each chunk of
    /// PuppetDB's nodes, is a unit a worker reads (and builds the nodes' scopes of) when it
    /// comes to it. Listing them reads nothing (PuppetDB's certnames are asked for now).
    pub fn node_source<'a>(
        &'a self,
        facts: &FactsRequest,
        db: Option<&'a puppetdb::Client>,
    ) -> Result<NodeSource<'a>> {
        let (units, expected) = self.batch_units(facts, db)?;
        let units = units.map(move |unit| -> NodeUnit<'a> {
            Box::new(move || {
                let (nodes, warnings) = unit();
                ReadNodes {
                    nodes: nodes.into_iter().map(|n| self.batch_node(n)).collect(),
                    warnings,
                }
            })
        });
        Ok(NodeSource::new(units, expected))
    }

    /// The units of [`node_source`](Self::node_source), each giving its nodes as read (their
    /// facts before [`batch_node`](Self::batch_node) makes a scope of them: `--fact`s not
    /// applied, no classifier asked) and the warnings reading them gave; and how many nodes
    /// are expected. Listing them reads nothing (PuppetDB's certnames are asked for now).
    pub fn batch_units<'a>(
        &self,
        facts: &FactsRequest,
        db: Option<&'a puppetdb::Client>,
    ) -> Result<(BatchUnits<'a>, usize)> {
        let trusted = std::sync::Arc::new(facts.trusted.clone());
        Ok(match db {
            Some(db) if facts.node.is_none() => {
                if !facts.files.is_empty() || facts.dir.is_some() {
                    return Err(Error::Usage(
                        "--facts/--facts-dir and PuppetDB's nodes cannot be combined in one batch"
                            .into(),
                    ));
                }
                let chunks = hiera_facts::puppetdb_chunks(db, self.sources.nodes_query.as_deref())?;
                let expected = chunks.iter().map(Vec::len).sum();
                let units = chunks.into_iter().map(move |chunk| -> BatchUnit<'a> {
                    let trusted = trusted.clone();
                    Box::new(move || {
                        let nodes =
                            hiera_facts::read_puppetdb_chunk(db, &chunk, trusted.as_ref().as_ref());
                        (nodes, Vec::new())
                    })
                });
                (Box::new(units), expected)
            }
            _ => {
                let files = hiera_facts::batch_files(facts)?;
                let expected = files.len();
                let units = files
                    .into_iter()
                    .map(move |(path, display)| -> BatchUnit<'a> {
                        let trusted = trusted.clone();
                        Box::new(move || {
                            hiera_facts::read_batch_file(&path, &display, trusted.as_ref().as_ref())
                        })
                    });
                (Box::new(units), expected)
            }
        })
    }

    /// Refuses a classifier that lives in the tree a command analyses (`root`, or the git
    /// work tree holding it) unless `--allow-exec`: that tree may be a branch nobody has
    /// read. A classifier of the machine's (puppet.conf's, a path outside) runs.
    pub fn check_enc_trust(&self, root: &Path, allow_exec: bool, command: &str) -> Result<()> {
        let Some(program) = self.enc.as_ref().and_then(|e| e.program_path()) else {
            return Ok(());
        };
        if allow_exec {
            return Ok(());
        }
        let canonical = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
        let root = canonical(root);
        let top = root
            .ancestors()
            .find(|d| d.join(".git").exists())
            .map(Path::to_path_buf)
            .unwrap_or_else(|| root.clone());
        if canonical(&program).starts_with(&top) {
            return Err(Error::Usage(format!(
                "the classifier {} is part of the tree {command} analyses, which may be a branch nobody has read: {command} runs it only with --allow-exec",
                program.display()
            )));
        }
        Ok(())
    }

    /// Lets the nodes of a fleet that a classifier puts in another environment than the
    /// run's be answered from that environment's data (Puppet's layout), as Puppet compiles
    /// each node in its environment; `settings` are the run's. Without this, such a node is
    /// an error naming `--environment`.
    pub fn answer_other_environments(&mut self, settings: Settings) {
        if self.enc.is_some() && !self.env.control_repo_mode() {
            self.other_environments = Some(std::sync::Arc::new(OtherEnvironments {
                env: self.env.clone(),
                settings,
                open: Default::default(),
            }));
        }
    }

    /// A batch node with its scope (`$settings::` variables and `--var`s included); facts
    /// that cannot be read are the node's error (the batch goes on).
    pub fn batch_node(&self, n: BatchNode) -> hiera_engine::batch::Node {
        let classified = n.facts.and_then(|mut facts| {
            self.override_facts(&mut facts);
            Scope::check_facts(&facts)?;
            let class = match &self.enc {
                Some(enc) => {
                    let c = enc.classify(&n.name)?;
                    let env = self.classified_environment(&c, &n.name)?;
                    Some((c, env))
                }
                None => None,
            };
            Ok((facts, class))
        });
        let mut workspace = None;
        let (scope, facts_error) = match classified {
            Ok((facts, None)) => (self.scope_of(facts, None, &self.env), None),
            Ok((facts, Some((class, env)))) => {
                let mut error = None;
                let scope = if env != self.env.environment_name() {
                    // Classified into another environment: its name (as the single lookup
                    // takes it), and in Puppet's layout its data (a control repo is its own
                    // environment, whatever its name).
                    let there = EnvOptions {
                        environment: Some(env.clone()),
                        ..self.env.clone()
                    };
                    match &self.other_environments {
                        Some(other) if !self.env.control_repo_mode() => match other.get(&env) {
                            Ok(w) => workspace = Some(w),
                            Err(e) => error = Some(e),
                        },
                        _ => {}
                    }
                    self.scope_of(facts, Some(&class), &there)
                } else {
                    self.scope_of(facts, Some(&class), &self.env)
                };
                (scope, error)
            }
            Err(e) => (self.scope_of(Default::default(), None, &self.env), Some(e)),
        };
        hiera_engine::batch::Node {
            name: n.name,
            source: Some((n.kind.into(), n.source)),
            scope,
            facts_error,
            workspace,
        }
    }
}

/// One unit of [`Resolved::batch_units`]: a facts file's nodes, or a chunk of PuppetDB's, as
/// read, and the warnings reading them gave.
pub type BatchUnit<'a> = Box<dyn FnOnce() -> (Vec<BatchNode>, Vec<String>) + Send + 'a>;

/// The units of a batch, in order ([`Resolved::batch_units`]).
pub type BatchUnits<'a> = Box<dyn Iterator<Item = BatchUnit<'a>> + Send + 'a>;

/// The workspaces of the environments a classifier puts nodes in, opened once each (with
/// the run's settings and layout; only the environment differs).
pub struct OtherEnvironments {
    env: EnvOptions,
    settings: Settings,
    open: std::sync::Mutex<
        std::collections::HashMap<String, Result<std::sync::Arc<hiera_engine::Workspace>>>,
    >,
}

impl std::fmt::Debug for OtherEnvironments {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OtherEnvironments").finish_non_exhaustive()
    }
}

impl OtherEnvironments {
    /// The workspace of environment `name` (an environment that cannot be read is every
    /// answer's error for its nodes, as Puppet's would be).
    fn get(&self, name: &str) -> Result<std::sync::Arc<hiera_engine::Workspace>> {
        let mut open = self.open.lock().unwrap_or_else(|e| e.into_inner());
        open.entry(name.to_string())
            .or_insert_with(|| {
                let env = EnvOptions {
                    environment: Some(name.to_string()),
                    ..self.env.clone()
                };
                hiera_engine::Workspace::open(env, self.settings.clone()).map(std::sync::Arc::new)
            })
            .clone()
    }
}

/// A `:`-separated list of directories, each made absolute against `cwd`.
pub fn absolute_path_list(cwd: &Path, list: &str) -> String {
    list.split(':')
        .map(|p| {
            if p.is_empty() {
                String::new()
            } else {
                hiera_engine::environment::absolute(cwd, Path::new(p))
                    .display()
                    .to_string()
            }
        })
        .collect::<Vec<_>>()
        .join(":")
}

/// The certname a node's facts give (`clientcert`, else `certname`), for the classifier.
fn certname_of(facts: &hiera_value::value::Map) -> Option<String> {
    ["clientcert", "certname"]
        .iter()
        .find_map(|k| facts.get(&Value::str(*k)).and_then(|v| v.as_str()))
        .map(str::to_string)
}

/// `FLAG NAME=VALUE` pairs (`--fact`), values read as YAML.
fn parse_pairs(flag: &str, pairs: &[String]) -> Result<Vec<(String, Value)>> {
    let mut out = Vec::new();
    for p in pairs {
        let Some((name, value)) = p.split_once('=').filter(|(n, _)| !n.is_empty()) else {
            return Err(Error::Usage(format!(
                "{flag} expects NAME=VALUE (a dotted NAME sets a nested fact: os.family=RedHat), got '{p}'"
            )));
        };
        let value = hiera_formats::yaml::load(value)
            .map_err(|e| Error::Usage(format!("{flag} {name}: {e}")))?;
        out.push((name.to_string(), value));
    }
    Ok(out)
}

/// `--var NAME=VALUE` pairs, values read as YAML.
pub fn parse_vars(vars: &[String]) -> Result<Vec<(String, Value)>> {
    let mut out = Vec::new();
    for v in vars {
        let Some((name, value)) = v.split_once('=') else {
            return Err(Error::Usage(format!("--var expects NAME=VALUE, got '{v}'")));
        };
        let value = hiera_formats::yaml::load(value)
            .map_err(|e| Error::Usage(format!("--var {name}: {e}")))?;
        out.push((name.to_string(), value));
    }
    Ok(out)
}

/// `--strict`: `off`, `warning` or `error`, with Puppet's message.
pub fn parse_strict(strict: &str) -> Result<Strict> {
    Ok(match strict {
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

/// `--merge` and the deep-only options, with Puppet's messages.
fn parse_merge(flags: &Flags) -> Result<Option<MergeStrategy>> {
    let deep_only =
        flags.sort_merged_arrays || flags.merge_hash_arrays || flags.knock_out_prefix.is_some();
    let deep = matches!(
        flags.merge.as_deref(),
        Some("deep" | "reverse_deep" | "unconstrained_deep")
    );
    if deep_only && !deep {
        return Err(Error::Usage(format!(
            "The options --knock-out-prefix, --sort-merged-arrays, and --merge-hash-arrays are only available with '--merge deep': add --merge deep, or leave them out. {RUN_HELP}"
        )));
    }
    let Some(m) = flags.merge.as_deref() else {
        return Ok(None);
    };
    if !matches!(
        m,
        "first" | "unique" | "hash" | "deep" | "reverse_deep" | "unconstrained_deep"
    ) {
        return Err(Error::Usage(format!(
            "The --merge option only accepts 'first', 'hash', 'unique', or 'deep' (and hiera-lookup's 'reverse_deep' and 'unconstrained_deep'), not '{m}'. {RUN_HELP}"
        )));
    }
    MergeStrategy::from_cli(
        m,
        flags.knock_out_prefix.as_deref(),
        flags.sort_merged_arrays,
        flags.merge_hash_arrays,
    )
    .map(Some)
    .map_err(|e| Error::Usage(e.message))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flags(keys: &[&str]) -> Flags {
        Flags {
            keys: keys.iter().map(|k| k.to_string()).collect(),
            strict: "error".into(),
            ..Flags::default()
        }
    }

    #[test]
    fn typed_from_flags() {
        let r = Request::new(&flags(&["k"])).unwrap();
        assert_eq!(
            (r.mode, r.format, r.strict),
            (Mode::Single, Format::Yaml, Strict::Error)
        );
        assert!(r.merge.is_none() && !r.format_given);
        let r = Request::new(&Flags {
            explain: true,
            render_as: Some("JSON".into()),
            merge: Some("deep".into()),
            sort_merged_arrays: true,
            ..flags(&["k"])
        })
        .unwrap();
        assert_eq!(
            r.mode,
            Mode::Explain {
                options_only: false
            }
        );
        assert_eq!(r.format, Format::Json);
        assert!(r.settings().explain && !r.settings().explain_options_only);
        assert_eq!(r.merge.map(|m| m.name()), Some("deep"));
        // --explain-options alone looks up no key of its own.
        let r = Request::new(&Flags {
            explain_options: true,
            ..flags(&[])
        })
        .unwrap();
        assert_eq!(
            (r.mode, r.format),
            (Mode::Explain { options_only: true }, Format::S)
        );
        assert_eq!(r.keys, ["__global__"]);
    }

    #[test]
    fn puppets_messages() {
        let err = |f: Flags| Request::new(&f).unwrap_err().to_string();
        assert_eq!(err(flags(&[])), "No keys were given to lookup.");
        assert_eq!(
            err(Flags {
                strict: "loud".into(),
                ..flags(&["k"])
            }),
            "Invalid value 'loud' for parameter strict: expected off, warning or error"
        );
        assert!(err(Flags {
            merge: Some("first".into()),
            merge_hash_arrays: true,
            ..flags(&["k"])
        })
        .starts_with("The options --knock-out-prefix, --sort-merged-arrays, and --merge-hash-arrays are only available with '--merge deep'"));
        assert!(err(Flags {
            merge: Some("all".into()),
            ..flags(&["k"])
        })
        .starts_with("The --merge option only accepts"));
        assert_eq!(
            err(Flags {
                render_as: Some("xml".into()),
                ..flags(&["k"])
            }),
            "Unknown rendering format 'xml': --render-as takes yaml, json, s, console or flat"
        );
        let batch = Flags {
            batch: true,
            explain: true,
            ..flags(&["k"])
        };
        let r = Request::new(&batch).unwrap();
        assert_eq!(r.mode, Mode::Batch);
        assert_eq!(
            r.check_batch(&batch).unwrap_err().to_string(),
            "--explain cannot be combined with batch mode"
        );
    }
}
