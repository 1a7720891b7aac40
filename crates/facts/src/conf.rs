//! puppet.conf, as `puppet lookup` reads it (run mode `server`): the `[server]` section, then
//! `[master]`, then `[main]` (`[agent]` and `[user]` are valid but not read); Puppet's own
//! settings flags win over the file; `$name` in a value is another setting's final value
//! (`$confdir`, `$codedir`, `$vardir` ...). Checked against Puppet 8.10 with
//! `puppet lookup --confdir DIR --configprint vardir,codedir,ssldir,...`.
//!
//! The file is `--config FILE`, else `$HIERA_LOOKUP_PUPPET_CONF` (empty: none, unless `--confdir`
//! names the directory), else `$confdir/puppet.conf` when it exists. puppetdb.conf (`[main]
//! server_urls`) sits beside it.
//!
//! What the lookup takes from it: the layout (`codedir`, `environmentpath`, `hiera_config`,
//! `basemodulepath`), the node's `environment` (`--environment` and a classifier win), the
//! fact cache's `vardir`, `ssldir`, the classifier (`node_terminus`, `external_nodes`), and the
//! two data-binding settings of Puppet 8 that OpenVox 9 removes: `data_binding_terminus` (`none`
//! turns the global layer off) and `environment_data_provider` (the default of every
//! environment.conf's). `strict` and `strict_variables` are not read (`--strict` defaults to
//! Puppet 8's `error`).

use hiera_engine::error::{Error, Result};
use indexmap::IndexMap;
use std::path::{Path, PathBuf};

/// Settings given on the command line (Puppet's flags of the same names), absolute.
#[derive(Debug, Clone, Default)]
pub struct Flags {
    /// `--config`: puppet.conf.
    pub config: Option<PathBuf>,
    /// `--confdir`.
    pub confdir: Option<PathBuf>,
    /// `--codedir`.
    pub codedir: Option<PathBuf>,
    /// `--vardir`.
    pub vardir: Option<PathBuf>,
    /// `--environmentpath`.
    pub environmentpath: Option<PathBuf>,
    /// `--hiera_config`.
    pub hiera_config: Option<PathBuf>,
    /// `--basemodulepath`.
    pub basemodulepath: Option<String>,
}

/// The settings hiera-lookup takes from Puppet, resolved.
#[derive(Debug, Clone, Default)]
pub struct PuppetConf {
    /// The puppet.conf that was read, if any.
    pub file: Option<PathBuf>,
    /// `$confdir`.
    pub confdir: PathBuf,
    /// `$codedir`.
    pub codedir: PathBuf,
    /// `$vardir` (where the fact cache is).
    pub vardir: PathBuf,
    /// `$ssldir` (PuppetDB's TLS files).
    pub ssldir: PathBuf,
    /// The layout settings, only when the flags or the file set them.
    pub environmentpath: Option<PathBuf>,
    /// `hiera_config`, if set.
    pub hiera_config: Option<PathBuf>,
    /// `basemodulepath`, if set.
    pub basemodulepath: Option<String>,
    /// codedir as set by the file (not defaulted).
    pub codedir_set: Option<PathBuf>,
    /// Every setting of the sections read, raw, for other readers (puppetdb.conf has its own).
    pub raw: IndexMap<String, String>,
    /// The External Node Classifier Puppet's settings name: `external_nodes` when
    /// `node_terminus = exec` (`$setting`s interpolated), as a Puppet server classifies.
    pub external_nodes: Option<String>,
    /// `environment`, if set: the node's environment unless `--environment` (or a classifier)
    /// says otherwise.
    pub environment: Option<String>,
    /// `data_binding_terminus`, if set (`hiera` by default; `none` turns the global layer off).
    pub data_binding_terminus: Option<String>,
    /// `environment_data_provider`, if set: the default of every environment's environment.conf.
    pub environment_data_provider: Option<String>,
}

/// The sections `puppet lookup` reads, first wins.
const SECTIONS_READ: [&str; 3] = ["server", "master", "main"];
/// The sections Puppet accepts at all.
const SECTIONS_VALID: [&str; 5] = ["main", "server", "master", "agent", "user"];

/// `HIERA_LOOKUP_PUPPET_CONF` set empty (or to /dev/null): read none of the machine's Puppet
/// configuration (puppet.conf, routes.yaml, puppetdb.conf) unless a flag names it. The test
/// suites run this way, so a Puppet server's own files never change their answers.
pub fn machine_config_disabled() -> bool {
    std::env::var_os("HIERA_LOOKUP_PUPPET_CONF").is_some_and(|p| p.is_empty() || p == "/dev/null")
}

/// Puppet's default confdir: /etc/puppetlabs/puppet for root, ~/.puppetlabs/etc/puppet else.
pub(crate) fn default_confdir() -> PathBuf {
    if super::cache::is_root() {
        PathBuf::from("/etc/puppetlabs/puppet")
    } else {
        super::cache::home().join(".puppetlabs/etc/puppet")
    }
}

/// Puppet's default codedir: /etc/puppetlabs/code for root, ~/.puppetlabs/etc/code else.
pub(crate) fn default_codedir() -> PathBuf {
    if super::cache::is_root() {
        PathBuf::from("/etc/puppetlabs/code")
    } else {
        super::cache::home().join(".puppetlabs/etc/code")
    }
}

/// An ini file: section → (setting → (value, line)).
type Ini = IndexMap<String, IndexMap<String, (String, usize)>>;

/// Parses puppet.conf text.
pub(crate) fn parse(text: &str, display: &str) -> Result<Ini> {
    let mut ini: Ini = IndexMap::new();
    let mut section = "main".to_string();
    for (i, raw) in text.lines().enumerate() {
        let n = i + 1;
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') || line.starts_with(';') {
            continue;
        }
        if let Some(name) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            let name = name.trim();
            if !SECTIONS_VALID.contains(&name) {
                return Err(Error::run(format!(
                    "Could not parse {display}: Illegal section '{name}' in config file at (file: {display}, line: {n}). The only valid puppet.conf sections are: [main, server, master, agent, user]. Please use the directory environments feature to specify environments."
                )));
            }
            section = name.to_string();
            continue;
        }
        let Some((k, v)) = line.split_once('=') else {
            return Err(Error::run(format!(
                "Could not parse {display}: Could not match line {n}: {line}"
            )));
        };
        let k = k.trim();
        if k.is_empty() || !k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return Err(Error::run(format!(
                "Could not parse {display}: Could not match line {n}: {line}"
            )));
        }
        // Puppet's `ValueTranslator`: surrounding quotes go.
        let mut v = hiera_engine::environment::settings_value(v);
        // `value {owner = service, mode = 0750}`: file metadata, not part of the value.
        if v.ends_with('}') {
            if let Some(open) = v.rfind('{') {
                if open > 0 && v.as_bytes()[open - 1] != b'$' {
                    v = v[..open].trim_end().to_string();
                } else {
                    return Err(Error::run(format!(
                        "Could not parse {display}: Could not parse '{v}'"
                    )));
                }
            }
        }
        ini.entry(section.clone())
            .or_default()
            .insert(k.to_string(), (v, n));
    }
    Ok(ini)
}

impl PuppetConf {
    /// Resolves the settings from the flags and the puppet.conf they lead to.
    pub fn resolve(flags: &Flags, cwd: &Path) -> Result<PuppetConf> {
        let confdir = flags.confdir.clone().unwrap_or_else(default_confdir);
        let file = match &flags.config {
            Some(f) => {
                if !f.is_file() {
                    return Err(Error::run(format!(
                        "Could not read the --config file {}: {}",
                        f.display(),
                        match std::fs::metadata(f) {
                            Ok(_) => "not a regular file".to_string(),
                            Err(e) => hiera_engine::error::io_reason(&e),
                        }
                    )));
                }
                Some(f.clone())
            }
            None => match std::env::var_os("HIERA_LOOKUP_PUPPET_CONF") {
                // `--confdir DIR` names the configuration to read, as it names routes.yaml.
                Some(_) if machine_config_disabled() && flags.confdir.is_none() => None,
                Some(_) if machine_config_disabled() => {
                    Some(confdir.join("puppet.conf")).filter(|p| p.is_file())
                }
                Some(p) => Some(hiera_engine::environment::absolute(cwd, Path::new(&p))),
                None => Some(confdir.join("puppet.conf")).filter(|p| p.is_file()),
            },
        };
        // Settings of the sections read: [server] over [master] over [main].
        let mut raw: IndexMap<String, String> = IndexMap::new();
        if let Some(f) = &file {
            let display = f.display().to_string();
            let text = hiera_value::limits::read_text(f).map_err(|e| {
                Error::run(format!(
                    "Could not read {display}: {}",
                    hiera_engine::error::io_reason(&e)
                ))
            })?;
            let ini = parse(&text, &display)?;
            for s in SECTIONS_READ.iter().rev() {
                if let Some(sec) = ini.get(*s) {
                    for (k, (v, _)) in sec {
                        raw.insert(k.clone(), v.clone());
                    }
                }
            }
        }
        // Puppet's own flags win; confdir is never taken from the file.
        let path_flag = |p: &Option<PathBuf>| p.as_ref().map(|p| p.display().to_string());
        let mut values = raw.clone();
        values.insert("confdir".into(), confdir.display().to_string());
        for (name, flag) in [
            ("codedir", path_flag(&flags.codedir)),
            ("vardir", path_flag(&flags.vardir)),
            ("environmentpath", path_flag(&flags.environmentpath)),
            ("hiera_config", path_flag(&flags.hiera_config)),
            ("basemodulepath", flags.basemodulepath.clone()),
        ] {
            if let Some(v) = flag {
                values.insert(name.into(), v);
            }
        }
        let set_by_file = |name: &str| raw.contains_key(name);
        let mut r = Resolver {
            values: &values,
            display: file
                .as_ref()
                .map(|f| f.display().to_string())
                .unwrap_or_default(),
            cwd,
        };
        let codedir = r.path("codedir", default_codedir().display().to_string())?;
        let vardir = r.path(
            "vardir",
            super::cache::default_vardir().display().to_string(),
        )?;
        let ssldir = r.path("ssldir", "$confdir/ssl".into())?;
        let optional = |r: &mut Resolver, name: &str| -> Result<Option<PathBuf>> {
            if set_by_file(name) {
                Ok(Some(r.path(name, String::new())?))
            } else {
                Ok(None)
            }
        };
        let environmentpath = optional(&mut r, "environmentpath")?;
        let hiera_config = optional(&mut r, "hiera_config")?;
        let basemodulepath = if set_by_file("basemodulepath") {
            Some(r.value("basemodulepath", String::new(), 0)?)
        } else {
            None
        };
        let codedir_set = set_by_file("codedir").then(|| codedir.clone());
        let plain = |r: &mut Resolver, name: &str| -> Result<Option<String>> {
            if set_by_file(name) {
                Ok(Some(r.value(name, String::new(), 0)?))
            } else {
                Ok(None)
            }
        };
        let environment = plain(&mut r, "environment")?;
        let data_binding_terminus = plain(&mut r, "data_binding_terminus")?;
        let environment_data_provider = plain(&mut r, "environment_data_provider")?;
        let external_nodes = if raw.get("node_terminus").map(|t| t.trim()) == Some("exec") {
            Some(r.value("external_nodes", "none".into(), 0)?)
                .filter(|c| !c.trim().is_empty() && c.trim() != "none")
        } else {
            None
        };
        Ok(PuppetConf {
            file,
            confdir,
            codedir,
            vardir,
            ssldir,
            environmentpath,
            hiera_config,
            basemodulepath,
            codedir_set,
            raw,
            external_nodes,
            environment,
            data_binding_terminus,
            environment_data_provider,
        })
    }
}

impl PuppetConf {
    /// Fills the layout settings the flags left unset with the file's (codedir,
    /// environmentpath, hiera_config, basemodulepath, environment, and the data-binding
    /// settings). Only in Puppet's layout, i.e. when a layout flag or `--config` was given: in
    /// control-repo mode the working directory is the environment, whatever the machine's own
    /// puppet.conf says.
    pub fn apply_layout(
        &self,
        env: &mut hiera_engine::environment::EnvOptions,
        explicit_config: bool,
    ) {
        if env.control_repo_mode() && !explicit_config {
            return;
        }
        if env.codedir.is_none() {
            env.codedir = self.codedir_set.clone();
        }
        if env.environmentpath.is_none() {
            env.environmentpath = self.environmentpath.clone();
        }
        if env.hiera_config.is_none() {
            env.hiera_config = self.hiera_config.clone();
        }
        if env.basemodulepath.is_none() {
            env.basemodulepath = self.basemodulepath.clone();
        }
        if env.environment.is_none() {
            env.environment = self.environment.clone();
        }
        if env.data_binding_terminus.is_none() {
            env.data_binding_terminus = self.data_binding_terminus.clone();
        }
        if env.environment_data_provider.is_none() {
            env.environment_data_provider = self.environment_data_provider.clone();
        }
    }
}

struct Resolver<'a> {
    values: &'a IndexMap<String, String>,
    display: String,
    cwd: &'a Path,
}

impl Resolver<'_> {
    /// A setting's final value: its own (flag or file) or `default`, `$name`s replaced.
    fn value(&mut self, name: &str, default: String, depth: usize) -> Result<String> {
        let raw = self.values.get(name).cloned().unwrap_or(default);
        self.interpolate(name, &raw, depth)
    }

    fn path(&mut self, name: &str, default: String) -> Result<PathBuf> {
        let v = self.value(name, default, 0)?;
        Ok(expand_path(&hiera_engine::environment::absolute(
            self.cwd,
            Path::new(&v),
        )))
    }

    /// `$name` (letters, digits, `_`) → that setting's value.
    fn interpolate(&mut self, setting: &str, raw: &str, depth: usize) -> Result<String> {
        if depth > 16 {
            return Err(Error::run(format!(
                "Error converting value for param '{setting}' in {}: the settings refer to each other in a loop",
                self.display
            )));
        }
        let mut out = String::new();
        let mut rest = raw;
        while let Some(i) = rest.find('$') {
            out.push_str(&rest[..i]);
            let after = &rest[i + 1..];
            let len = after
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(after.len());
            if len == 0 {
                out.push('$');
                rest = after;
                continue;
            }
            let var = &after[..len];
            let value = match (self.values.contains_key(var), default_of(var)) {
                (true, _) => self.value(var, String::new(), depth + 1)?,
                (false, Some(d)) => self.interpolate(var, &d, depth + 1)?,
                (false, None) => {
                    return Err(Error::run(format!(
                        "Error converting value for param '{setting}': Could not find value for ${var} (in {})",
                        self.display
                    )))
                }
            };
            out.push_str(&value);
            rest = &after[len..];
        }
        out.push_str(rest);
        Ok(out)
    }
}

/// Ruby's `File.expand_path` on an absolute path: `.` and `..` resolved lexically.
fn expand_path(p: &Path) -> PathBuf {
    use std::path::Component;
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// Puppet's defaults of the settings a puppet.conf value may refer to.
fn default_of(name: &str) -> Option<String> {
    let root = super::cache::is_root();
    Some(match name {
        "confdir" => default_confdir().display().to_string(),
        "codedir" => default_codedir().display().to_string(),
        "vardir" => super::cache::default_vardir().display().to_string(),
        "ssldir" => "$confdir/ssl".into(),
        "environmentpath" => "$codedir/environments".into(),
        "environment" => "production".into(),
        "statedir" => "$vardir/state".into(),
        "publicdir" if root => "/opt/puppetlabs/puppet/public".into(),
        "publicdir" => super::cache::home()
            .join(".puppetlabs/opt/puppet/public")
            .display()
            .to_string(),
        "rundir" if root => "/var/run/puppetlabs".into(),
        "rundir" => super::cache::home()
            .join(".puppetlabs/var/run")
            .display()
            .to_string(),
        "logdir" if root => "/var/log/puppetlabs/puppet".into(),
        "logdir" => super::cache::home()
            .join(".puppetlabs/var/log")
            .display()
            .to_string(),
        "hiera_config" => "$confdir/hiera.yaml".into(),
        "certdir" => "$ssldir/certs".into(),
        "privatekeydir" => "$ssldir/private_keys".into(),
        "yamldir" => "$vardir/yaml".into(),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resolve_text(text: &str, flags: Flags) -> Result<PuppetConf> {
        let dir = std::env::temp_dir().join(format!(
            "hl-puppet-conf-{}-{}",
            std::process::id(),
            text.len()
        ));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("puppet.conf");
        std::fs::write(&f, text).unwrap();
        let r = PuppetConf::resolve(
            &Flags {
                config: Some(f),
                confdir: Some("/c".into()),
                ..flags
            },
            Path::new("/cwd"),
        );
        std::fs::remove_dir_all(&dir).unwrap();
        r
    }

    /// Puppet 8.10, `puppet lookup --confdir DIR --configprint ...` with this puppet.conf:
    /// vardir = /s/var, codedir = /m/code, ssldir = /s/var/ssl-main, environmentpath =
    /// /m/code/envs, hiera_config = /master/hiera.yaml, basemodulepath = /m/code/mods:/x.
    #[test]
    fn sections_and_interpolation_as_puppet_reads_them() {
        let text = "[main]\nvardir = /m/var\ncodedir = /m/code\nssldir = $vardir/ssl-main\nbasemodulepath = $codedir/mods:/x\n[server]\nvardir = /s/var\nenvironmentpath = $codedir/envs\n[master]\nhiera_config = /master/hiera.yaml\nvardir = /master/var\n[agent]\ncodedir = /a/code\n[user]\ncodedir = /u/code\n";
        let c = resolve_text(text, Flags::default()).unwrap();
        assert_eq!(c.vardir, PathBuf::from("/s/var"));
        assert_eq!(c.codedir, PathBuf::from("/m/code"));
        assert_eq!(c.ssldir, PathBuf::from("/s/var/ssl-main"));
        assert_eq!(c.environmentpath, Some(PathBuf::from("/m/code/envs")));
        assert_eq!(c.hiera_config, Some(PathBuf::from("/master/hiera.yaml")));
        assert_eq!(c.basemodulepath.as_deref(), Some("/m/code/mods:/x"));
    }

    /// Puppet 8.10 with `--codedir /flag/code`: codedir = /flag/code, environmentpath =
    /// /flag/code/envs (the file's `$codedir/envs` with the flag's codedir).
    #[test]
    fn flags_win_and_feed_interpolation() {
        let text = "[main]\ncodedir = /m/code\n[server]\nenvironmentpath = $codedir/envs\nhiera_config = $confdir/h.yaml\n";
        let c = resolve_text(
            text,
            Flags {
                codedir: Some("/flag/code".into()),
                ..Flags::default()
            },
        )
        .unwrap();
        assert_eq!(c.codedir, PathBuf::from("/flag/code"));
        assert_eq!(c.environmentpath, Some(PathBuf::from("/flag/code/envs")));
        assert_eq!(c.hiera_config, Some(PathBuf::from("/c/h.yaml")));
        assert_eq!(c.ssldir, PathBuf::from("/c/ssl"));
    }

    /// Puppet 8.10 (`--configprint environment,data_binding_terminus,environment_data_provider`
    /// and lookups, tests/conformance/layers/p8-install-puppet-conf): [server] over [master]
    /// over [main], never [agent] nor [user]; quotes around a value dropped; the flags and a
    /// classifier's environment win.
    #[test]
    fn the_lookups_settings_from_run_mode_server_sections() {
        let text = "[main]\nenvironment = \"mainenv\"\ndata_binding_terminus = 'none'\n[agent]\nenvironment = agentenv\nenvironment_data_provider = hiera\n[master]\nenvironment = dev\n";
        let c = resolve_text(text, Flags::default()).unwrap();
        assert_eq!(c.environment.as_deref(), Some("dev"));
        assert_eq!(c.data_binding_terminus.as_deref(), Some("none"));
        assert_eq!(c.environment_data_provider, None);
        let c = resolve_text("[main]\nenvironment = \"mainenv\"\n", Flags::default()).unwrap();
        assert_eq!(c.environment.as_deref(), Some("mainenv"));
        let mut env = hiera_engine::environment::EnvOptions {
            codedir: Some("/code".into()),
            environment: Some("flag".into()),
            ..Default::default()
        };
        c.apply_layout(&mut env, true);
        assert_eq!(env.environment.as_deref(), Some("flag"));
        env.environment = None;
        c.apply_layout(&mut env, true);
        assert_eq!(env.environment.as_deref(), Some("mainenv"));
        // Control-repo mode reads no machine puppet.conf's environment.
        let mut env = hiera_engine::environment::EnvOptions::default();
        c.apply_layout(&mut env, false);
        assert_eq!(env.environment, None);
    }

    #[test]
    fn errors_in_puppets_words() {
        // Puppet 8.10: "Could not parse <file>: Illegal section 'production' in config file at
        // (file: <file>, line: 3). The only valid puppet.conf sections are: [main, server,
        // master, agent, user]. ..."
        let e = resolve_text("[main]\na = 1\n[production]\n", Flags::default())
            .unwrap_err()
            .to_string();
        assert!(e.contains("Illegal section 'production'"), "{e}");
        assert!(e.contains("line: 3)"), "{e}");
        // Puppet 8.10: "Error converting value for param 'basemodulepath': Could not find
        // value for $nosuch"
        let e = resolve_text("[main]\nbasemodulepath = $nosuch/x\n", Flags::default())
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with(
                "Error converting value for param 'basemodulepath': Could not find value for $nosuch"
            ),
            "{e}"
        );
        let e = resolve_text(
            "[main]\nvardir = $ssldir\nssldir = $vardir\n",
            Flags::default(),
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("loop"), "{e}");
        assert!(resolve_text("[main]\njunk\n", Flags::default()).is_err());
    }

    #[test]
    fn relative_values_are_taken_from_the_working_directory() {
        let c = resolve_text("[main]\nvardir = var\n", Flags::default()).unwrap();
        assert_eq!(c.vardir, PathBuf::from("/cwd/var"));
        let c = resolve_text("[main]\nvardir = $confdir/../v/./x\n", Flags::default()).unwrap();
        assert_eq!(c.vardir, PathBuf::from("/v/x"));
    }
}
