//! The flag groups commands share, each declared once: a command takes a group by flattening
//! it, so a flag means the same thing (and is spelled, documented and converted the same way)
//! in every command that has it. Each group turns itself into the library's terms here.
//!
//! The first paragraph of a flag's doc comment is its `-h` line; the rest is added by
//! `--help`.

use clap::builder::{PossibleValue, TypedValueParser};
use clap::ArgAction;
use hiera_facts::context::NodeSources as Sources;
use std::path::{Path, PathBuf};

/// A value parser that lists the values a flag takes (for `--help` and the shell
/// completions) but leaves checking them to the command, so that a wrong value gets Puppet's
/// own message (`--merge`, `--strict`, `--render-as`).
#[derive(Clone, Copy, Debug)]
pub struct Listed(pub &'static [&'static str]);

impl TypedValueParser for Listed {
    type Value = String;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<String, clap::Error> {
        clap::builder::StringValueParser::new().parse_ref(cmd, arg, value)
    }

    fn possible_values(&self) -> Option<Box<dyn Iterator<Item = PossibleValue> + '_>> {
        Some(Box::new(self.0.iter().map(|v| PossibleValue::new(*v))))
    }
}

/// `--merge`'s strategies (Puppet's four, then hiera-lookup's two).
pub const MERGE_STRATEGIES: &[&str] = &[
    "first",
    "unique",
    "hash",
    "deep",
    "reverse_deep",
    "unconstrained_deep",
];

/// `--strict`'s modes.
pub const STRICT_MODES: &[&str] = &["error", "warning", "off"];

pub use crate::output::When;

/// The control repo and its own Hiera and module settings: every command that reads a
/// control repo has them.
#[derive(clap::Args, Debug, Clone, Default)]
#[command(next_help_heading = "Layout")]
pub struct RepoArgs {
    /// The control repo (default: the current directory)
    ///
    /// The directory with the environment's hiera.yaml, data/ and environment.conf. Other
    /// flags' files stay relative to the current directory.
    #[arg(short = 'C', long = "repo", value_name = "DIR")]
    pub repo: Option<PathBuf>,

    /// The global hiera.yaml
    ///
    /// Puppet's --hiera_config. A lookup without it (and without --environmentpath,
    /// --codedir, --confdir) reads the control repo; see README's "control-repo mode".
    #[arg(
        long = "hiera_config",
        alias = "hiera-config",
        value_name = "FILE",
        // '' is a value (Puppet expands it to the working directory).
        value_parser = clap::builder::TypedValueParser::map(clap::builder::OsStringValueParser::new(), PathBuf::from)
    )]
    pub hiera_config: Option<PathBuf>,

    /// Module directories (`:`-separated), instead of environment.conf's modulepath
    ///
    /// Relative entries are taken from the current directory, as Puppet's --modulepath.
    #[arg(long, value_name = "PATH")]
    pub modulepath: Option<String>,
}

impl RepoArgs {
    /// The control repo's directory, absolute (`cwd` without -C).
    pub fn root(&self, cwd: &Path) -> PathBuf {
        match &self.repo {
            Some(r) => hiera_engine::environment::absolute(cwd, r),
            None => cwd.to_path_buf(),
        }
    }

    /// `--modulepath` with its relative entries made absolute against `cwd`.
    pub fn modulepath_in(&self, cwd: &Path) -> Option<String> {
        self.modulepath
            .as_deref()
            .map(|m| hiera_facts::context::absolute_path_list(cwd, m))
    }
}

/// Puppet's settings that say where the layers are, for the commands that resolve them as
/// `puppet lookup` does (the lookup, `where`).
#[derive(clap::Args, Debug, Clone, Default)]
#[command(next_help_heading = "Layout")]
pub struct LayoutArgs {
    #[command(flatten)]
    pub repo: RepoArgs,

    /// Puppet's puppet.conf (default $confdir/puppet.conf), as Puppet's --config
    #[arg(hide_short_help = true, long, value_name = "FILE")]
    pub config: Option<PathBuf>,

    /// The environment (default production)
    #[arg(long, short = 'E', value_name = "NAME")]
    pub environment: Option<String>,

    /// Directory of environments (default $codedir/environments)
    #[arg(long, value_name = "DIR")]
    pub environmentpath: Option<PathBuf>,

    /// Puppet's codedir (default /etc/puppetlabs/code)
    #[arg(hide_short_help = true, long, value_name = "DIR")]
    pub codedir: Option<PathBuf>,

    /// Puppet's confdir (default /etc/puppetlabs/puppet)
    #[arg(hide_short_help = true, long, value_name = "DIR")]
    pub confdir: Option<PathBuf>,

    /// Puppet's vardir, where the fact cache is
    ///
    /// Default from puppet.conf, else /opt/puppetlabs/puppet/cache for root,
    /// ~/.puppetlabs/opt/puppet/cache otherwise.
    #[arg(hide_short_help = true, long, value_name = "DIR")]
    pub vardir: Option<PathBuf>,

    /// Module directories shared by all environments (`:`-separated)
    #[arg(hide_short_help = true, long, value_name = "PATH")]
    pub basemodulepath: Option<String>,
}

/// Where the nodes' facts come from: files, or PuppetDB; and what is set over them.
#[derive(clap::Args, Debug, Clone, Default)]
#[command(next_help_heading = "Facts and node")]
pub struct FactsArgs {
    /// Facts of the node: a YAML or JSON file (`-`: standard input)
    ///
    /// Facter's hash, `puppet facts` output, a fact cache file or PuppetDB's JSON. With
    /// --node, merged over the node's cached facts, as Puppet does. Given more than once,
    /// every node is answered (batch mode, JSON Lines out).
    #[arg(long, value_name = "FILE", action = ArgAction::Append)]
    pub facts: Vec<PathBuf>,

    /// One node per facts file (.yaml, .yml, .json) in DIR
    #[arg(long = "facts-dir", alias = "facts_dir", value_name = "DIR")]
    pub facts_dir: Option<PathBuf>,

    /// A fact set over every node's facts; VALUE is read as YAML (repeatable)
    ///
    /// A dotted NAME sets a nested fact (`--fact os.family=RedHat`): "what would this node get
    /// with role db" is `--fact role=db`, over --facts, --facts-dir, --node or PuppetDB's.
    #[arg(long = "fact", value_name = "NAME=VALUE", action = ArgAction::Append)]
    pub facts_set: Vec<String>,

    /// An extra top-scope variable; VALUE is read as YAML (repeatable)
    #[arg(long = "var", value_name = "NAME=VALUE", action = ArgAction::Append)]
    pub vars: Vec<String>,

    /// `--enc=COMMAND`: ask an External Node Classifier about every node
    ///
    /// COMMAND runs with the node's certname (as Puppet's `external_nodes`) and prints YAML:
    /// its `parameters` become top-scope variables (`%{role}`), its `environment` the
    /// node's (unless --environment). A bare --enc runs the classifier puppet.conf names
    /// (node_terminus = exec, external_nodes). `puppet lookup` asks it only with --compile.
    #[arg(
        long,
        value_name = "COMMAND",
        num_args = 0..=1,
        require_equals = true,
        help_heading = "Facts and node"
    )]
    pub enc: Option<Option<String>>,

    #[command(flatten)]
    pub pdb: PuppetDbArgs,
}

/// One node named for a lookup: its certname, Puppet's fact cache, its trusted data.
#[derive(clap::Args, Debug, Clone, Default)]
#[command(next_help_heading = "Facts and node")]
pub struct NodeArgs {
    /// The node's certname: its facts come from Puppet's fact cache
    ///
    /// $vardir/yaml/facts/NAME.yaml, with --facts over them; none at all is an error.
    #[arg(long, value_name = "NAME")]
    pub node: Option<String>,

    /// With --node: no facts but the node's name
    ///
    /// clientcert and trusted.certname only, instead of the error when no source has facts
    /// for the node.
    #[arg(long = "no-facts", alias = "no_facts")]
    pub no_facts: bool,

    /// `--trusted=FILE`: the node's trusted data (extensions, ...)
    ///
    /// A YAML or JSON hash, over what Puppet derives from the certname. A bare --trusted is
    /// accepted and ignored, as by Puppet.
    #[arg(long, value_name = "FILE", num_args = 0..=1, require_equals = true)]
    pub trusted: Option<Option<PathBuf>>,
}

/// PuppetDB as the nodes' source.
#[derive(clap::Args, Debug, Clone)]
#[command(next_help_heading = "PuppetDB")]
pub struct PuppetDbArgs {
    /// PuppetDB to take facts and trusted data from (`https://puppetdb:8081`)
    ///
    /// Several URLs, comma-separated, are tried in order. With --node, that node; without,
    /// every active node (batch mode). Default with --node: PuppetDB when Puppet's
    /// routes.yaml sends facts there (puppetdb.conf's server_urls).
    #[arg(long, value_name = "URL")]
    pub puppetdb: Option<String>,

    /// The nodes of a PuppetDB PQL query
    ///
    /// For example 'inventory[certname] { facts.os.family = "RedHat" }'.
    #[arg(long = "nodes-query", alias = "nodes_query", value_name = "PQL")]
    pub nodes_query: Option<String>,

    /// CA certificate of PuppetDB's certificate (default $ssldir/certs/ca.pem)
    #[arg(hide_short_help = true, long = "puppetdb-cacert", value_name = "FILE")]
    pub puppetdb_cacert: Option<PathBuf>,

    /// Client certificate for PuppetDB (default $ssldir/certs/CERTNAME.pem)
    #[arg(hide_short_help = true, long = "puppetdb-cert", value_name = "FILE")]
    pub puppetdb_cert: Option<PathBuf>,

    /// Client key for PuppetDB (default $ssldir/private_keys/CERTNAME.pem)
    #[arg(hide_short_help = true, long = "puppetdb-key", value_name = "FILE")]
    pub puppetdb_key: Option<PathBuf>,

    /// Seconds each PuppetDB request may take
    #[arg(
        hide_short_help = true,
        long = "puppetdb-timeout",
        value_name = "SECS",
        default_value = "30"
    )]
    pub puppetdb_timeout: u64,
}

impl Default for PuppetDbArgs {
    fn default() -> PuppetDbArgs {
        PuppetDbArgs {
            puppetdb: None,
            nodes_query: None,
            puppetdb_cacert: None,
            puppetdb_cert: None,
            puppetdb_key: None,
            puppetdb_timeout: 30,
        }
    }
}

/// How values found in several places are merged.
#[derive(clap::Args, Debug, Clone, Default)]
#[command(next_help_heading = "Merging")]
pub struct MergeArgs {
    /// Merge strategy (default: lookup_options, else first)
    #[arg(long, value_name = "STRATEGY", value_parser = Listed(MERGE_STRATEGIES))]
    pub merge: Option<String>,

    /// Deep merge: prefix that knocks out values of lower priority
    #[arg(
        long = "knock-out-prefix",
        alias = "knock_out_prefix",
        value_name = "PREFIX"
    )]
    pub knock_out_prefix: Option<String>,

    /// Deep merge: sort merged arrays
    #[arg(long = "sort-merged-arrays", alias = "sort_merged_arrays")]
    pub sort_merged_arrays: bool,

    /// Deep merge: merge hashes inside arrays
    #[arg(long = "merge-hash-arrays", alias = "merge_hash_arrays")]
    pub merge_hash_arrays: bool,
}

/// How undefined variables are treated.
#[derive(clap::Args, Debug, Clone)]
#[command(next_help_heading = "Merging")]
pub struct StrictArgs {
    /// Undefined variables: error (Puppet 8), warning (Puppet 7) or off
    #[arg(long, value_name = "MODE", default_value = "error", value_parser = Listed(STRICT_MODES))]
    pub strict: String,

    /// Accepted for compatibility with Puppet 8's flags (always on)
    #[arg(
        hide_short_help = true,
        long = "strict_variables",
        alias = "strict-variables"
    )]
    pub strict_variables: bool,
}

impl Default for StrictArgs {
    fn default() -> StrictArgs {
        StrictArgs {
            strict: "error".into(),
            strict_variables: false,
        }
    }
}

/// Colour.
#[derive(clap::Args, Debug, Clone, Default)]
#[command(next_help_heading = "Output")]
pub struct ColorArgs {
    /// When to colour the output (default auto; the lookup's: never)
    ///
    /// auto: on a terminal, unless NO_COLOR is set. The lookup's output (a value, Puppet's
    /// explanation) stays byte-identical to Puppet's unless asked: its default is never.
    /// Puppet's true and false are accepted too.
    #[arg(long, value_name = "WHEN", value_enum)]
    pub color: Option<When>,
}

impl ColorArgs {
    /// Whether to colour stdout, `default` when --color is not given.
    pub fn enabled(&self, default: When) -> bool {
        crate::output::use_color(self.color.unwrap_or(default))
    }
}

/// `--redact`.
#[derive(clap::Args, Debug, Clone, Default)]
#[command(next_help_heading = "Output")]
pub struct RedactArgs {
    /// Print `[redacted]` for every plaintext decrypted from eyaml
    ///
    /// Wherever it would appear: values, explanations, batch lines, messages (beyond
    /// Puppet). Lookups, interpolation and type checks still use the real value.
    #[arg(long)]
    pub redact: bool,
}

/// `--secrets`: what an eyaml `ENC[...]` value is when its private key is not there.
#[derive(clap::Args, Debug, Clone, Default)]
#[command(next_help_heading = "Secrets")]
pub struct SecretsArgs {
    /// eyaml values: decrypt, opaque or auto (default: auto for many nodes, decrypt for one)
    ///
    /// decrypt: with the level's private key, or fail as Puppet does. opaque: never decrypt;
    /// every encrypted value is a stand-in (`ENC[` and a digest of its ciphertext) that
    /// lookups, merges and interpolation carry (equal only to the same ciphertext). auto:
    /// decrypt where the private key is there, opaque where it is not (CI, with the
    /// production hiera.yaml and no key).
    #[arg(long, value_name = "MODE", value_parser = Listed(SECRETS_MODES))]
    pub secrets: Option<String>,
}

/// `--secrets`' modes.
pub const SECRETS_MODES: &[&str] = &["auto", "decrypt", "opaque"];

impl SecretsArgs {
    /// The mode asked for, else `auto` for a command over many nodes (`fleet`) and `decrypt`
    /// (Puppet's error without the key) for one.
    pub fn mode(&self, fleet: bool) -> Result<hiera_engine::Secrets, hiera_engine::Error> {
        use hiera_engine::Secrets;
        Ok(match self.secrets.as_deref() {
            None if fleet => Secrets::Auto,
            None => Secrets::Decrypt,
            Some("auto") => Secrets::Auto,
            Some("decrypt") => Secrets::Decrypt,
            Some("opaque") => Secrets::Opaque,
            Some(other) => {
                return Err(hiera_engine::Error::Usage(format!(
                    "--secrets '{other}': not a mode (auto, decrypt or opaque)"
                )))
            }
        })
    }
}

/// Whether a command that analyses a repo runs the programs it names.
#[derive(clap::Args, Debug, Clone, Default)]
#[command(next_help_heading = "Trust")]
pub struct TrustArgs {
    /// Run the programs the analysed repo names (`lookup_key: command` levels)
    ///
    /// Off by default: a repo under review (a pull request's branch, a fleet's data) could
    /// name any program.
    #[arg(long = "allow-exec")]
    pub allow_exec: bool,
}

/// Worker threads of a fleet run.
#[derive(clap::Args, Debug, Clone, Default)]
#[command(next_help_heading = "Fleet")]
pub struct ThreadsArgs {
    /// Worker threads for many nodes (default: the number of CPUs)
    #[arg(long, value_name = "N")]
    pub threads: Option<usize>,
}

impl PuppetDbArgs {
    /// The node sources with only these flags set.
    pub fn sources(&self) -> Sources {
        Sources {
            puppetdb: self.puppetdb.clone(),
            nodes_query: self.nodes_query.clone(),
            puppetdb_cacert: self.puppetdb_cacert.clone(),
            puppetdb_cert: self.puppetdb_cert.clone(),
            puppetdb_key: self.puppetdb_key.clone(),
            puppetdb_timeout: self.puppetdb_timeout,
            ..Default::default()
        }
    }
}

impl FactsArgs {
    /// The node sources these flags name (files, PuppetDB, `--var`s).
    pub fn sources(&self) -> Sources {
        Sources {
            facts: self.facts.clone(),
            facts_dir: self.facts_dir.clone(),
            vars: self.vars.clone(),
            fact_overrides: self.facts_set.clone(),
            enc: self.enc.clone(),
            ..self.pdb.sources()
        }
    }

    /// Whether these flags name any node.
    pub fn any(&self) -> bool {
        !self.facts.is_empty()
            || self.facts_dir.is_some()
            || self.pdb.puppetdb.is_some()
            || self.pdb.nodes_query.is_some()
    }
}

/// Every source a lookup names: the layout, the facts, the node.
pub fn sources(layout: &LayoutArgs, facts: &FactsArgs, node: &NodeArgs) -> Sources {
    Sources {
        repo: layout.repo.repo.clone(),
        hiera_config: layout.repo.hiera_config.clone(),
        config: layout.config.clone(),
        codedir: layout.codedir.clone(),
        confdir: layout.confdir.clone(),
        vardir: layout.vardir.clone(),
        environmentpath: layout.environmentpath.clone(),
        environment: layout.environment.clone(),
        basemodulepath: layout.basemodulepath.clone(),
        modulepath: layout.repo.modulepath.clone(),
        node: node.node.clone(),
        no_facts: node.no_facts,
        // A bare `--trusted` is ignored, as by Puppet.
        trusted: node.trusted.clone().flatten(),
        ..facts.sources()
    }
}
