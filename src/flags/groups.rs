//! The flag groups commands share, each declared once: a command takes a group by flattening
//! it, so a flag means the same thing (and is spelled, documented and converted the same way)
//! in every command that has it. Each group turns itself into the library's terms here.

use crate::request::Sources;
use clap::ArgAction;
use std::path::PathBuf;

/// Where the control repo, Puppet's settings and the layers are.
#[derive(clap::Args, Debug, Clone, Default)]
#[command(next_help_heading = "Layout")]
pub struct LayoutArgs {
    /// The global hiera.yaml (default: control-repo mode, see README).
    #[arg(
        long = "hiera_config",
        visible_alias = "hiera-config",
        value_name = "FILE",
        // '' is a value (Puppet expands it to the working directory).
        value_parser = clap::builder::TypedValueParser::map(clap::builder::OsStringValueParser::new(), PathBuf::from)
    )]
    pub hiera_config: Option<PathBuf>,

    /// Puppet's puppet.conf (default $confdir/puppet.conf), as Puppet's --config.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,

    /// The environment (default production).
    #[arg(long, short = 'E', value_name = "NAME")]
    pub environment: Option<String>,

    /// Directory of environments (default $codedir/environments).
    #[arg(long, value_name = "DIR")]
    pub environmentpath: Option<PathBuf>,

    /// Puppet's codedir (default /etc/puppetlabs/code).
    #[arg(long, value_name = "DIR")]
    pub codedir: Option<PathBuf>,

    /// Puppet's confdir (default /etc/puppetlabs/puppet).
    #[arg(long, value_name = "DIR")]
    pub confdir: Option<PathBuf>,

    /// Puppet's vardir, where the fact cache is (default from puppet.conf, else
    /// /opt/puppetlabs/puppet/cache for root, ~/.puppetlabs/opt/puppet/cache otherwise).
    #[arg(long, value_name = "DIR")]
    pub vardir: Option<PathBuf>,

    /// Module directories shared by all environments.
    #[arg(long, value_name = "PATH")]
    pub basemodulepath: Option<String>,

    /// Overrides the environment's modulepath.
    #[arg(long, value_name = "PATH")]
    pub modulepath: Option<String>,
}

/// Where the nodes' facts come from: files, or PuppetDB.
#[derive(clap::Args, Debug, Clone, Default)]
#[command(next_help_heading = "Facts and node")]
pub struct FactsArgs {
    /// Facts of the node: a YAML or JSON file (`-`: standard input), Facter's hash, `puppet
    /// facts` output, a fact cache file or PuppetDB's JSON. With --node, merged over the node's
    /// cached facts, as Puppet does. Given more than once, every node is answered (batch mode,
    /// JSON Lines out).
    #[arg(long, value_name = "FILE", action = ArgAction::Append)]
    pub facts: Vec<PathBuf>,

    /// Batch mode: one node per facts file (.yaml, .yml, .json) in DIR.
    #[arg(long = "facts-dir", visible_alias = "facts_dir", value_name = "DIR")]
    pub facts_dir: Option<PathBuf>,

    /// An extra top-scope variable; the value is read as YAML. Repeatable.
    #[arg(long = "var", value_name = "NAME=VALUE", action = ArgAction::Append)]
    pub vars: Vec<String>,

    #[command(flatten)]
    pub pdb: PuppetDbArgs,
}

/// One node named for a lookup: its certname, Puppet's fact cache, its trusted data.
#[derive(clap::Args, Debug, Clone, Default)]
#[command(next_help_heading = "Facts and node")]
pub struct NodeArgs {
    /// The node's name (certname): its facts come from Puppet's fact cache
    /// ($vardir/yaml/facts/NAME.yaml), with --facts over them; none at all is an error.
    #[arg(long, value_name = "NAME")]
    pub node: Option<String>,

    /// With --node: no facts but the node's name (clientcert and trusted.certname), instead of
    /// the error when no source has facts for it.
    #[arg(long = "no-facts", visible_alias = "no_facts")]
    pub no_facts: bool,

    /// `--trusted=FILE`: the node's trusted data (a YAML or JSON hash: extensions, ...), over
    /// what Puppet derives from the certname. A bare --trusted is accepted and ignored, as by
    /// Puppet.
    #[arg(long, value_name = "FILE", num_args = 0..=1, require_equals = true)]
    pub trusted: Option<Option<PathBuf>>,
}

/// PuppetDB as the nodes' source.
#[derive(clap::Args, Debug, Clone)]
#[command(next_help_heading = "PuppetDB")]
pub struct PuppetDbArgs {
    /// PuppetDB to take facts and trusted data from (`https://puppetdb:8081`, `http://localhost:8080`;
    /// several, comma-separated, are tried in order). With --node, that node; without, batch
    /// mode over every active node. Default with --node: PuppetDB when Puppet's routes.yaml
    /// sends facts there (puppetdb.conf's server_urls).
    #[arg(long, value_name = "URL")]
    pub puppetdb: Option<String>,

    /// Batch mode over the nodes of a PuppetDB PQL query, e.g.
    /// 'inventory[certname] { facts.os.family = "RedHat" }'.
    #[arg(
        long = "nodes-query",
        visible_alias = "nodes_query",
        value_name = "PQL"
    )]
    pub nodes_query: Option<String>,

    /// CA certificate of PuppetDB's certificate (default $ssldir/certs/ca.pem).
    #[arg(long = "puppetdb-cacert", value_name = "FILE")]
    pub puppetdb_cacert: Option<PathBuf>,

    /// Client certificate for PuppetDB (default $ssldir/certs/CERTNAME.pem).
    #[arg(long = "puppetdb-cert", value_name = "FILE")]
    pub puppetdb_cert: Option<PathBuf>,

    /// Client key for PuppetDB (default $ssldir/private_keys/CERTNAME.pem).
    #[arg(long = "puppetdb-key", value_name = "FILE")]
    pub puppetdb_key: Option<PathBuf>,

    /// Seconds each PuppetDB request may take (default 30).
    #[arg(long = "puppetdb-timeout", value_name = "SECS", default_value = "30")]
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
    /// Merge strategy: first, unique, hash, deep (also reverse_deep, unconstrained_deep).
    #[arg(long, value_name = "STRATEGY")]
    pub merge: Option<String>,

    /// Deep merge: prefix that knocks out values of lower priority.
    #[arg(
        long = "knock-out-prefix",
        visible_alias = "knock_out_prefix",
        value_name = "PREFIX"
    )]
    pub knock_out_prefix: Option<String>,

    /// Deep merge: sort merged arrays.
    #[arg(long = "sort-merged-arrays", visible_alias = "sort_merged_arrays")]
    pub sort_merged_arrays: bool,

    /// Deep merge: merge hashes inside arrays.
    #[arg(long = "merge-hash-arrays", visible_alias = "merge_hash_arrays")]
    pub merge_hash_arrays: bool,
}

/// How undefined variables are treated.
#[derive(clap::Args, Debug, Clone)]
#[command(next_help_heading = "Merging")]
pub struct StrictArgs {
    /// Undefined variables: error (Puppet 8, default), warning (Puppet 7) or off.
    #[arg(long, value_name = "MODE", default_value = "error")]
    pub strict: String,

    /// Accepted for compatibility with Puppet 8's flags (always on).
    #[arg(long = "strict_variables", visible_alias = "strict-variables")]
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
            ..self.pdb.sources()
        }
    }
}

/// Every source a lookup names: the layout, the facts, the node.
pub fn sources(layout: &LayoutArgs, facts: &FactsArgs, node: &NodeArgs) -> Sources {
    Sources {
        hiera_config: layout.hiera_config.clone(),
        config: layout.config.clone(),
        codedir: layout.codedir.clone(),
        confdir: layout.confdir.clone(),
        vardir: layout.vardir.clone(),
        environmentpath: layout.environmentpath.clone(),
        environment: layout.environment.clone(),
        basemodulepath: layout.basemodulepath.clone(),
        modulepath: layout.modulepath.clone(),
        node: node.node.clone(),
        no_facts: node.no_facts,
        // A bare `--trusted` is ignored, as by Puppet.
        trusted: node.trusted.clone().flatten(),
        ..facts.sources()
    }
}
