//! The node context: where a run's layers and nodes come from, and the one place a node is
//! built. Every front end — the command line's lookup, batch mode, `where`, `diff` and
//! `lint`, the web view and the language server — describes its nodes as [`NodeSources`]
//! (the flags, or their settings), resolves them once into a [`NodeContext`] (Puppet's
//! settings read, the layers located, `--var`s and `--fact`s parsed, the classifier and
//! PuppetDB set up), and takes its nodes from it: [`NodeContext::single`] for one node,
//! [`NodeContext::fleet`] for many (streamed: a facts file or a chunk of PuppetDB's nodes at a
//! time), [`NodeContext::scope`] for facts given by other means (a posted facts document).
//! So a node is answered alike everywhere: its facts (`--fact`s over them), `$trusted`, the
//! environment's `$settings::` variables, the classifier's parameters and environment, then
//! `--var`s.

use crate::conf::PuppetConf;
use crate::enc::Classification;
use crate::{puppetdb, BatchNode, FactsRequest};
use hiera_engine::batch::{NodeSource, NodeUnit, ReadNodes};
use hiera_engine::engine::Settings;
use hiera_engine::environment::{absolute, EnvOptions};
use hiera_engine::error::{Error, Result};
use hiera_engine::scope::Scope;
use hiera_value::value::{Map, Value};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

/// The warning for a single lookup given no facts.
pub const NO_FACTS: &str = "no facts given (--facts FILE, --node NAME or --puppetdb URL): answering for a node without facts";

/// Where the layers and the nodes come from, as a command line gives them. Every command
/// that looks nodes up (the lookup, batch mode, `where`, `diff`) resolves them through
/// [`NodeSources::resolve`] and the methods of [`NodeSources`]' [`NodeContext`] form, so a flag means
/// the same thing everywhere.
#[derive(Debug, Clone, Default)]
pub struct NodeSources {
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

/// [`NodeSources`] with Puppet's settings read and the layers located.
#[derive(Debug, Clone)]
pub struct NodeContext {
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
    pub enc: Option<crate::enc::Enc>,
    /// The environments a classifier puts nodes of a fleet in, besides the run's (Puppet's
    /// layout; `None`: such a node is an error, see [`NodeContext::answer_other_environments`]).
    pub other_environments: Option<Arc<OtherEnvironments>>,
    /// The flags resolved.
    pub sources: NodeSources,
    /// PuppetDB's client, made when first asked for ([`db`](Self::db)).
    db: Arc<OnceLock<Option<puppetdb::Client>>>,
}

impl NodeSources {
    /// Whether the flags name many nodes (several `--facts`, `--facts-dir`, PuppetDB's nodes
    /// without `--node`).
    pub fn many_nodes(&self) -> bool {
        let puppetdb_batch =
            self.nodes_query.is_some() || (self.puppetdb.is_some() && self.node.is_none());
        self.facts.len() > 1 || self.facts_dir.is_some() || puppetdb_batch
    }

    /// The current directory, Puppet's settings (the flags, then puppet.conf) and where the
    /// layers are.
    pub fn resolve(&self) -> Result<NodeContext> {
        let cwd = std::env::current_dir()
            .map_err(|e| Error::run(format!("cannot read the current directory: {e}")))?;
        self.resolve_in(&cwd)
    }

    /// [`resolve`](Self::resolve) with relative paths taken from `cwd`.
    pub fn resolve_in(&self, cwd: &Path) -> Result<NodeContext> {
        let abs = |p: &Option<PathBuf>| p.as_deref().map(|p| absolute(cwd, p));
        let flags = crate::conf::Flags {
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
            ..EnvOptions::default()
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
            Some(Some(command)) => Some(crate::enc::Enc::new(command, cwd)?),
            Some(None) => match &conf.external_nodes {
                Some(command) => Some(crate::enc::Enc::new(command, cwd)?),
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
        Ok(NodeContext {
            cwd: cwd.to_path_buf(),
            conf,
            env,
            vars: parse_vars(&self.vars)?,
            fact_overrides: parse_pairs("--fact", &self.fact_overrides)?,
            enc,
            other_environments: None,
            sources: self.clone(),
            db: Arc::default(),
        })
    }
}

impl NodeContext {
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

    /// What the layout the lookups read lacks or ignores that the user may not know, one
    /// warning each (never an error: Puppet reads such a layout silently): a modulepath
    /// directory the user named that does not exist, a Puppetfile's modules not installed
    /// ([`EnvOptions::layout_warnings`]), and, in control-repo mode, an `--environment` that is
    /// neither `production` nor the checked-out branch — the repo is read whatever the name,
    /// which only sets `%{environment}` (a directory environment is chosen with
    /// `--environmentpath`). An unreadable layout is for the lookup itself to report.
    pub fn layout_warnings(&self) -> Vec<String> {
        let fs = hiera_engine::fs::RealFs;
        let mut out = Vec::new();
        if let Ok(layers) = self.env.layers_in(&fs) {
            if let Some(dir) = &layers.environment_dir {
                out.extend(self.env.layout_warnings(&fs, dir));
            }
        }
        if self.env.control_repo_mode() {
            if let Some(name) = &self.env.environment {
                let branch = checked_out_branch(&self.env.cwd);
                if name != "production" && branch.as_deref() != Some(name.as_str()) {
                    out.push(format!(
                        "environment '{name}': {} is read as the environment whatever its name{}; the name only sets %{{environment}}. To read a directory environment by name, give --environmentpath DIR",
                        self.env.cwd.display(),
                        match &branch {
                            Some(b) => format!(" (its checked-out branch is '{b}')"),
                            None => String::new(),
                        }
                    ));
                }
            }
        }
        out
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
                Some(crate::read_trusted_file(&path, &display)?)
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

    /// The PuppetDB client the flags (or Puppet's routes.yaml and puppetdb.conf) ask for,
    /// made the first time (its certificates read then: an unreadable one is an error each
    /// time it is asked for).
    pub fn db(&self) -> Result<Option<&puppetdb::Client>> {
        if let Some(made) = self.db.get() {
            return Ok(made.as_ref());
        }
        let made = match self.puppetdb_options()? {
            Some(opts) => Some(puppetdb::Client::new(&opts)?),
            None => None,
        };
        Ok(self.db.get_or_init(|| made).as_ref())
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
                && (s.confdir.is_some() || !crate::conf::machine_config_disabled())
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

    /// The one node a single lookup is for (`--facts FILE`, `--node`, PuppetDB's node): its
    /// facts (`--fact`s over them), the environment's `$settings::` variables, the
    /// classifier's parameters (`--enc`), then `--var`s; what reading the facts warned of
    /// (and that no facts were given, if so) goes to `warnings`. The classifier's environment
    /// becomes the environment unless `--environment` was given, as for a Puppet server's
    /// node: [`NodeContext::env`] changes then, and [`Single::moved`] says so (the caller's
    /// layers are to be found again).
    pub fn single(&mut self, warnings: &mut Vec<String>) -> Result<Single> {
        if self.no_facts_given() {
            warnings.push(NO_FACTS.into());
        }
        let environment = self.env.environment.clone();
        let db = self.db()?;
        let facts = self.facts_request()?;
        let (mut facts, facts_warnings) = crate::single(&facts, db)?;
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
        Ok(Single {
            scope: self.scope_of(facts, class.as_ref(), &self.env),
            moved: self.env.environment != environment,
        })
    }

    /// The scope of a node known only by the facts it was given (`serve`'s posted facts, a
    /// packed node made again): `--fact`s over them, the `$settings::` variables and
    /// `--var`s; no classifier is asked about it.
    pub fn scope(&self, mut facts: Map) -> Scope {
        self.override_facts(&mut facts);
        self.scope_of(facts, None, &self.env)
    }

    /// A node's scope from its facts (overrides applied) and classification, in the
    /// environment `env` names (`$environment`, `$server_facts`, `$settings::`).
    fn scope_of(&self, facts: Map, class: Option<&Classification>, env: &EnvOptions) -> Scope {
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
    fn override_facts(&self, facts: &mut Map) {
        for (name, value) in &self.fact_overrides {
            crate::set_fact(facts, name, value.clone());
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

    /// The fleet's nodes (the facts files, a facts directory's, PuppetDB's), read as they
    /// are answered: each facts file, or each chunk of PuppetDB's nodes, is a unit a worker
    /// reads (and builds the nodes of, [`node`](Self::node)) when it comes to it. Listing
    /// them reads nothing (PuppetDB's certnames are asked for now).
    pub fn fleet(&self) -> Result<NodeSource<'_>> {
        let (units, expected) = self.units()?;
        let units = units.map(move |unit| -> NodeUnit<'_> {
            Box::new(move || {
                let (nodes, warnings) = unit();
                ReadNodes {
                    nodes: nodes.into_iter().map(|n| self.node(n)).collect(),
                    warnings,
                }
            })
        });
        Ok(NodeSource::new(units, expected))
    }

    /// The units of [`fleet`](Self::fleet), each giving its nodes as read (their facts
    /// before [`node`](Self::node) makes a node of them: `--fact`s not applied, no classifier
    /// asked) and the warnings reading them gave; and how many nodes are expected. Listing
    /// them reads nothing (PuppetDB's certnames are asked for now).
    pub fn units(&self) -> Result<(Units<'_>, usize)> {
        let db = self.db()?;
        let facts = self.facts_request()?;
        let trusted = Arc::new(facts.trusted.clone());
        Ok(match db {
            Some(db) if facts.node.is_none() => {
                if !facts.files.is_empty() || facts.dir.is_some() {
                    return Err(Error::Usage(
                        "--facts/--facts-dir and PuppetDB's nodes cannot be combined in one batch"
                            .into(),
                    ));
                }
                let chunks = crate::puppetdb_chunks(db, self.sources.nodes_query.as_deref())?;
                let expected = chunks.iter().map(Vec::len).sum();
                let units = chunks.into_iter().map(move |chunk| -> Unit<'_> {
                    let trusted = trusted.clone();
                    Box::new(move || {
                        let nodes =
                            crate::read_puppetdb_chunk(db, &chunk, trusted.as_ref().as_ref());
                        (nodes, Vec::new())
                    })
                });
                (Box::new(units), expected)
            }
            _ => {
                let files = crate::batch_files(&facts)?;
                let expected = files.len();
                let units = files.into_iter().map(move |(path, display)| -> Unit<'_> {
                    let trusted = trusted.clone();
                    Box::new(move || {
                        crate::read_batch_file(&path, &display, trusted.as_ref().as_ref())
                    })
                });
                (Box::new(units), expected)
            }
        })
    }

    /// The facts files and directories whose change (a file edited, added or removed) means
    /// the fleet is to be read again, absolute.
    pub fn watched(&self) -> Vec<PathBuf> {
        let s = &self.sources;
        s.facts
            .iter()
            .chain(&s.facts_dir)
            .map(|p| absolute(&self.cwd, p))
            .collect()
    }

    /// Whether the nodes come from PuppetDB (whose node set changes with no file to watch).
    pub fn fleet_from_puppetdb(&self) -> Result<bool> {
        Ok(self.db()?.is_some() && self.sources.node.is_none())
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
            self.other_environments = Some(Arc::new(OtherEnvironments {
                env: self.env.clone(),
                settings,
                open: Default::default(),
            }));
        }
    }

    /// The node of a fleet whose facts are `n`: `--fact`s over its facts, the classifier
    /// asked about it (its environment's workspace when it puts it elsewhere), its scope with
    /// the `$settings::` variables and `--var`s. Facts that cannot be read are the node's
    /// error (the fleet goes on).
    pub fn node(&self, n: BatchNode) -> hiera_engine::batch::Node {
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

/// One unit of [`NodeContext::units`]: a facts file's nodes, or a chunk of PuppetDB's, as
/// read, and the warnings reading them gave.
pub type Unit<'a> = Box<dyn FnOnce() -> (Vec<BatchNode>, Vec<String>) + Send + 'a>;

/// The units of a fleet, in order ([`NodeContext::units`]).
pub type Units<'a> = Box<dyn Iterator<Item = Unit<'a>> + Send + 'a>;

/// The node of a single lookup ([`NodeContext::single`]).
#[derive(Debug, Clone)]
pub struct Single {
    /// Its scope.
    pub scope: Scope,
    /// Whether the classifier put it in another environment than the run's: the layers are
    /// [`NodeContext::env`]'s, to be found again.
    pub moved: bool,
}

/// The workspaces of the environments a classifier puts nodes in, opened once each (with
/// the run's settings and layout; only the environment differs).
pub struct OtherEnvironments {
    env: EnvOptions,
    settings: Settings,
    open: Mutex<std::collections::HashMap<String, Result<Arc<hiera_engine::Workspace>>>>,
}

impl std::fmt::Debug for OtherEnvironments {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OtherEnvironments").finish_non_exhaustive()
    }
}

impl OtherEnvironments {
    /// The workspace of environment `name` (an environment that cannot be read is every
    /// answer's error for its nodes, as Puppet's would be).
    fn get(&self, name: &str) -> Result<Arc<hiera_engine::Workspace>> {
        let mut open = self.open.lock().unwrap_or_else(|e| e.into_inner());
        open.entry(name.to_string())
            .or_insert_with(|| {
                let env = EnvOptions {
                    environment: Some(name.to_string()),
                    ..self.env.clone()
                };
                hiera_engine::Workspace::open(env, self.settings.clone()).map(Arc::new)
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
fn certname_of(facts: &Map) -> Option<String> {
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

/// The branch checked out in the git repository at `dir` (`.git/HEAD`'s `ref: refs/heads/NAME`,
/// through a worktree's `gitdir:` file), if any: r10k deploys a control repo's branch as the
/// environment of that name.
fn checked_out_branch(dir: &Path) -> Option<String> {
    let dot_git = dir.join(".git");
    let git_dir = if dot_git.is_file() {
        let text = hiera_value::limits::read_text(&dot_git).ok()?;
        let target = text.strip_prefix("gitdir:")?.trim();
        absolute(dir, Path::new(target))
    } else {
        dot_git
    };
    let head = hiera_value::limits::read_text(git_dir.join("HEAD")).ok()?;
    head.trim()
        .strip_prefix("ref: refs/heads/")
        .map(str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn context(sources: NodeSources) -> NodeContext {
        sources.resolve_in(&std::env::temp_dir()).unwrap()
    }

    /// Facts given by other means (a posted document, a packed node) become a node as every
    /// node does: `--fact`s over them, then the `$settings::` variables and `--var`s.
    #[test]
    fn a_scope_has_fact_overrides_settings_and_vars() {
        let c = context(NodeSources {
            vars: vec!["extra=[1, 2]".into()],
            fact_overrides: vec!["os.family=RedHat".into()],
            ..Default::default()
        });
        let Value::Hash(facts) =
            hiera_formats::yaml::load("{os: {family: Debian, name: x}}").unwrap()
        else {
            unreachable!()
        };
        let scope = c.scope(facts);
        let family = scope
            .facts()
            .and_then(|f| f.get(&Value::str("os")))
            .and_then(|os| os.get("family"));
        assert_eq!(family, Some(&Value::str("RedHat")));
        assert_eq!(
            scope.get("extra"),
            Some(&Value::Array(vec![Value::Int(1), Value::Int(2)]))
        );
        assert_eq!(
            scope.get("settings::environment"),
            Some(&Value::str("production"))
        );
    }

    /// `--var` and `--fact` are NAME=VALUE, in Puppet's words otherwise.
    #[test]
    fn bad_pairs_are_usage_errors() {
        for (sources, want) in [
            (
                NodeSources {
                    vars: vec!["novalue".into()],
                    ..Default::default()
                },
                "--var expects NAME=VALUE, got 'novalue'",
            ),
            (
                NodeSources {
                    fact_overrides: vec!["=x".into()],
                    ..Default::default()
                },
                "--fact expects NAME=VALUE",
            ),
        ] {
            let e = sources.resolve_in(&std::env::temp_dir()).unwrap_err();
            assert!(e.to_string().starts_with(want), "{e}");
        }
    }

    /// Built without the `puppetdb` feature, PuppetDB's nodes are one line saying so.
    #[cfg(not(feature = "puppetdb"))]
    #[test]
    fn without_puppetdb_support_a_puppetdb_fleet_says_so() {
        let c = context(NodeSources {
            puppetdb: Some("https://puppetdb.example.com:8081".into()),
            ..Default::default()
        });
        let e = c.fleet().unwrap_err().to_string();
        assert!(
            e.contains("built without PuppetDB support") && !e.contains('\n'),
            "{e}"
        );
    }
}
