//! Where the three layers come from: Puppet's settings (`--hiera_config`, `--codedir`,
//! `--confdir`, `--environmentpath`, `--environment`, `--basemodulepath`), the environment's
//! `environment.conf`, and control-repo mode.

use crate::engine::Layers;
use crate::error::{Error, Result};
use crate::fs::Fs;
use std::path::{Path, PathBuf};

/// The settings a user can give on the command line.
#[derive(Debug, Clone, Default)]
pub struct EnvOptions {
    /// `--hiera_config`: the global hiera.yaml.
    pub hiera_config: Option<PathBuf>,
    /// `--codedir` (default `/etc/puppetlabs/code`).
    pub codedir: Option<PathBuf>,
    /// `--confdir` (default `/etc/puppetlabs/puppet`).
    pub confdir: Option<PathBuf>,
    /// `--environmentpath` (default `$codedir/environments`).
    pub environmentpath: Option<PathBuf>,
    /// `--environment` (default `production`).
    pub environment: Option<String>,
    /// `--basemodulepath`: module directories shared by all environments.
    pub basemodulepath: Option<String>,
    /// `--modulepath`: overrides the environment's modulepath.
    pub modulepath: Option<String>,
    /// puppet.conf's `data_binding_terminus` (`hiera` when unset): `none` (or empty) turns the
    /// global layer off, as `LookupAdapter#lookup_global` does; any other terminus is Ruby
    /// code hiera-lookup cannot run.
    pub data_binding_terminus: Option<String>,
    /// puppet.conf's `environment_data_provider`: what an environment.conf that does not set
    /// its own means (`EnvironmentConf#environment_data_provider`).
    pub environment_data_provider: Option<String>,
    /// The working directory (control-repo mode and relative paths).
    pub cwd: PathBuf,
}

pub(crate) const DEFAULT_CODEDIR: &str = "/etc/puppetlabs/code";
pub(crate) const DEFAULT_CONFDIR: &str = "/etc/puppetlabs/puppet";

/// Makes `p` absolute against `cwd`, as Puppet's file settings are.
pub fn absolute(cwd: &Path, p: &Path) -> PathBuf {
    if p.is_absolute() {
        p.to_path_buf()
    } else {
        let s = crate::config::path_plus(&cwd.display().to_string(), &p.display().to_string());
        PathBuf::from(s)
    }
}

impl EnvOptions {
    /// What the layout of the environment at `environment_dir` (the control repo, or a
    /// directory environment) lacks that the user named, one warning each: a directory of
    /// `--modulepath` or of environment.conf's `modulepath` that does not exist, and the modules
    /// a Puppetfile there installs that are not installed (r10k and g10k install them at
    /// deploy time, a checkout has none). Puppet reads such a modulepath silently; its modules'
    /// data and classes are then missing from every answer and from lint's judgement.
    pub fn layout_warnings(&self, fs: &dyn Fs, environment_dir: &Path) -> Vec<String> {
        let mut out = Vec::new();
        // The Puppetfile's modules first: a missing `modules/` is their not being installed.
        let mut uninstalled = Vec::new();
        let mut puppetfile_dirs_named = Vec::new();
        if let Ok(text) = fs.read_text(&environment_dir.join("Puppetfile")) {
            let dirs = puppetfile_dirs(&text);
            for d in &dirs {
                let parent = Path::new(d).parent().unwrap_or(Path::new(""));
                let parent = environment_dir.join(parent);
                if !puppetfile_dirs_named.contains(&parent) {
                    puppetfile_dirs_named.push(parent);
                }
                if !fs.is_dir(&environment_dir.join(d)) {
                    uninstalled.push(d.clone());
                }
            }
            if !uninstalled.is_empty() {
                let shown: Vec<&str> = uninstalled.iter().take(3).map(String::as_str).collect();
                let more = uninstalled.len() - shown.len();
                out.push(format!(
                    "{}: {} of the {} modules it installs are not installed ({}{}): their data and classes are not read; install them first (r10k puppetfile install, or g10k)",
                    environment_dir.join("Puppetfile").display(),
                    uninstalled.len(),
                    dirs.len(),
                    shown.join(", "),
                    if more > 0 { format!(" and {more} more") } else { String::new() }
                ));
            }
        }
        let (modulepath, named_in, base) = match &self.modulepath {
            Some(m) => (m.clone(), "--modulepath".to_string(), self.cwd.as_path()),
            None => {
                let conf = EnvironmentConf::read(fs, environment_dir);
                let Some(m) = conf.setting("modulepath") else {
                    return out;
                };
                let named_in = format!(
                    "{}'s modulepath",
                    environment_dir.join("environment.conf").display()
                );
                (m.to_string(), named_in, environment_dir)
            }
        };
        for entry in modulepath.split(':').map(str::trim) {
            // `$basemodulepath` and `$codedir` entries are Puppet's defaults, often absent;
            // glob entries name what they match, nothing when nothing does.
            if entry.is_empty() || entry.contains('$') || entry.contains(['*', '?', '[', '{']) {
                continue;
            }
            let dir = base.join(entry);
            if fs.is_dir(&dir) {
                continue;
            }
            if !uninstalled.is_empty() && puppetfile_dirs_named.contains(&dir) {
                continue;
            }
            out.push(format!(
                "{named_in} names {entry} ({}), which is not a directory: no modules are read from it",
                dir.display()
            ));
        }
        out
    }

    /// The environment name (`production` unless `--environment`).
    pub fn environment_name(&self) -> String {
        self.environment
            .clone()
            .unwrap_or_else(|| "production".to_string())
    }

    /// `--codedir`, absolute, or Puppet's default.
    fn codedir_path(&self) -> PathBuf {
        self.codedir
            .as_ref()
            .map(|c| absolute(&self.cwd, c))
            .unwrap_or_else(|| PathBuf::from(DEFAULT_CODEDIR))
    }

    /// `--confdir`, absolute, or Puppet's default.
    fn confdir_path(&self) -> PathBuf {
        self.confdir
            .as_ref()
            .map(|c| absolute(&self.cwd, c))
            .unwrap_or_else(|| PathBuf::from(DEFAULT_CONFDIR))
    }

    /// Puppet's settings that data may interpolate as `$settings::NAME`: the ones hiera-lookup
    /// computes (codedir, confdir, environmentpath, environment), with Puppet's values.
    pub fn settings_vars(&self) -> Vec<(String, hiera_value::value::Value)> {
        use hiera_value::value::Value;
        let cwd = &self.cwd;
        let (codedir, confdir) = (self.codedir_path(), self.confdir_path());
        let envpath = self
            .environmentpath
            .as_ref()
            .map(|e| absolute(cwd, e))
            .unwrap_or_else(|| codedir.join("environments"));
        let s = |p: &Path| Value::str(p.display().to_string());
        vec![
            ("settings::codedir".into(), s(&codedir)),
            ("settings::confdir".into(), s(&confdir)),
            ("settings::environmentpath".into(), s(&envpath)),
            (
                "settings::environment".into(),
                Value::str(self.environment_name()),
            ),
        ]
    }

    /// True when no layer setting was given: the working directory is a control repo.
    pub fn control_repo_mode(&self) -> bool {
        self.hiera_config.is_none()
            && self.environmentpath.is_none()
            && self.codedir.is_none()
            && self.confdir.is_none()
    }

    /// Resolves the layers, on the disk.
    pub fn layers(&self) -> Result<Layers> {
        self.layers_in(&crate::fs::RealFs)
    }

    /// Resolves the layers in the files of `fs`.
    pub fn layers_in(&self, fs: &dyn Fs) -> Result<Layers> {
        let cwd = &self.cwd;
        let (codedir, confdir) = (self.codedir_path(), self.confdir_path());
        // Puppet manages hiera_config as a file when it starts (`Puppet.settings.use`): a
        // directory (`''` is the working directory) fails there, before anything is read.
        // (Puppet would create a missing file; here the layer reports it missing instead, as
        // nothing is written where the user did not ask.)
        if let Some(h) = &self.hiera_config {
            let h = absolute(cwd, h);
            if fs.is_dir(&h) {
                return Err(Error::SettingsFile(h.display().to_string()));
            }
        }
        if self.control_repo_mode() {
            return self.control_repo_layers(fs, codedir);
        }
        let global = match &self.hiera_config {
            Some(h) => absolute(cwd, h),
            None => {
                let c = codedir.join("hiera.yaml");
                if fs.exists(&c) {
                    c
                } else {
                    confdir.join("hiera.yaml")
                }
            }
        };
        let global = match self.data_binding_terminus.as_deref() {
            None | Some("hiera") => Some(global),
            // `lookup_global`: no global data at all (and no trace of it in --explain).
            Some("none" | "") => None,
            Some(other) => {
                return Err(Error::run(format!(
                    "Could not find terminus {other} for indirection data_binding"
                )))
            }
        };
        let envpath = self
            .environmentpath
            .as_ref()
            .map(|e| absolute(cwd, e))
            .unwrap_or_else(|| codedir.join("environments"));
        let name = self.environment_name();
        let env_dir = envpath.join(&name);
        // Environment::valid_name? (/\A\w+\Z/): other names are never looked for (an empty
        // one is not checked, as Puppet does not check it).
        let body = name.strip_suffix('\n').unwrap_or(&name);
        let valid = body.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
        let mut environment_data_provider = None;
        let (environment_dir, modules) = if valid && fs.is_dir(&env_dir) {
            let conf = EnvironmentConf::read(fs, &env_dir);
            environment_data_provider = conf
                .setting("environment_data_provider")
                .map(str::to_string)
                .or_else(|| self.environment_data_provider.clone());
            let modules = self.modules_of(fs, &env_dir, &codedir, &conf)?;
            (Some(env_dir), modules)
        } else if name == "production" {
            // Puppet.base_context: when the configured environment is `production` and no
            // directory provides it, a bare `production` is created (no environment layer,
            // modulepath = --modulepath, else the basemodulepath).
            (None, self.bare_modules(fs, &codedir))
        } else {
            return Err(Error::run(format!(
                "Could not find a directory environment named '{name}' anywhere in the path: {}. Does the directory exist?",
                envpath.display()
            )));
        };
        Ok(Layers {
            global,
            environment_dir,
            modules,
            codedir,
            environment_data_provider,
        })
    }

    fn control_repo_layers(&self, fs: &dyn Fs, codedir: PathBuf) -> Result<Layers> {
        let dir = self.cwd.clone();
        let hiera = dir.join("hiera.yaml");
        // A Hiera 3 hiera.yaml at the root is a global configuration (it cannot be an
        // environment layer); anything else is the environment layer.
        let is_v3 = fs.is_file(&hiera) && is_v3_config(fs, &hiera);
        let conf = EnvironmentConf::read(fs, &dir);
        let modules = self.modules_of(fs, &dir, &codedir, &conf)?;
        if is_v3 {
            Ok(Layers {
                global: Some(hiera),
                environment_dir: None,
                modules,
                codedir,
                environment_data_provider: None,
            })
        } else {
            let environment_data_provider = conf
                .setting("environment_data_provider")
                .map(str::to_string)
                .or_else(|| self.environment_data_provider.clone());
            Ok(Layers {
                global: None,
                environment_dir: Some(dir),
                modules,
                codedir,
                environment_data_provider,
            })
        }
    }

    /// The basemodulepath, its relative entries made absolute against the working directory
    /// (as Puppet expands path settings).
    fn basemodulepath(&self, codedir: &Path) -> String {
        match &self.basemodulepath {
            Some(b) => b
                .split(':')
                .map(|p| absolute(&self.cwd, Path::new(p)).display().to_string())
                .collect::<Vec<_>>()
                .join(":"),
            None => format!("{}/modules", codedir.display()),
        }
    }

    /// Modules of the bare `production` environment: `--modulepath`, else the basemodulepath.
    fn bare_modules(&self, fs: &dyn Fs, codedir: &Path) -> Vec<(String, PathBuf)> {
        let path = match &self.modulepath {
            Some(m) if !m.is_empty() => m.clone(),
            _ => self.basemodulepath(codedir),
        };
        let mut out = Vec::new();
        add_modules(fs, &mut out, &self.cwd, &path);
        out
    }

    /// Modules along the environment's modulepath (environment.conf, else
    /// `modules:$basemodulepath`), first occurrence of a name wins.
    fn modules_of(
        &self,
        fs: &dyn Fs,
        env_dir: &Path,
        codedir: &Path,
        conf: &EnvironmentConf,
    ) -> Result<Vec<(String, PathBuf)>> {
        // Puppet expands a relative basemodulepath against the working directory.
        let base = self.basemodulepath(codedir);
        // `--modulepath` is a path setting, made absolute against the working directory;
        // environment.conf's entries are relative to the environment.
        if let Some(m) = &self.modulepath {
            let mut out = Vec::new();
            add_modules(fs, &mut out, &self.cwd, m);
            return Ok(out);
        }
        let modulepath = conf
            .setting("modulepath")
            .unwrap_or("modules:$basemodulepath")
            .to_string();
        let mut out: Vec<(String, PathBuf)> = Vec::new();
        for entry in modulepath.split(':') {
            let entry = entry.trim();
            if entry.is_empty() {
                continue;
            }
            // `EnvironmentConf#modulepath`: an entry with glob characters names every
            // directory it matches (Ruby's `Dir.glob`, sorted); `$setting` entries are not
            // globbed.
            if !entry.starts_with('$') && entry.contains(['*', '?', '[', '{']) {
                let pattern = absolute(env_dir, Path::new(entry)).display().to_string();
                let dirs = crate::location::glob_entries(fs, &pattern).map_err(|e| {
                    Error::run(format!(
                        "{}: modulepath: {e}",
                        env_dir.join("environment.conf").display()
                    ))
                })?;
                for d in dirs.iter().filter(|d| fs.is_dir(Path::new(d))) {
                    add_modules(fs, &mut out, env_dir, d);
                }
                continue;
            }
            let expanded = entry
                .replace("$basemodulepath", &base)
                .replace("$codedir", &codedir.display().to_string());
            add_modules(fs, &mut out, env_dir, &expanded);
        }
        Ok(out)
    }
}

/// Adds the modules of each directory of a `:`-separated path (relative entries against
/// `base`); the first occurrence of a module name wins.
fn add_modules(fs: &dyn Fs, out: &mut Vec<(String, PathBuf)>, base: &Path, path: &str) {
    for part in path.split(':') {
        if part.is_empty() {
            continue;
        }
        let dir = absolute(base, Path::new(part));
        let Ok(rd) = fs.read_dir(&dir) else {
            continue;
        };
        let mut names: Vec<String> = rd
            .into_iter()
            .filter(|n| valid_module_name(n) && fs.is_dir(&dir.join(n)))
            .collect();
        names.sort();
        for n in names {
            if !out.iter().any(|(m, _)| *m == n) {
                out.push((n.clone(), dir.join(&n)));
            }
        }
    }
}

/// The quoted strings of a Ruby line, in order (`'a'`, `"b"`).
fn strings(line: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = line;
    while let Some(start) = rest.find(['\'', '"']) {
        let quote = rest.as_bytes()[start] as char;
        let after = &rest[start + 1..];
        let Some(end) = after.find(quote) else { break };
        out.push(&after[..end]);
        rest = &after[end + 1..];
    }
    out
}

/// Where a Puppetfile installs its modules: `moduledir` (default `modules`) / the module's
/// name (`mod 'puppetlabs/ntp'`, `mod 'puppetlabs-ntp'`, `mod 'ntp', :git => …`), or the
/// module's `install_path`.
pub fn puppetfile_dirs(text: &str) -> Vec<String> {
    let mut moduledir = "modules".to_string();
    let mut out = Vec::new();
    for line in text.lines() {
        let line = line.split('#').next().unwrap_or("").trim();
        if let Some(rest) = line.strip_prefix("moduledir") {
            if let Some(d) = strings(rest).first() {
                moduledir = d.to_string();
            }
            continue;
        }
        let Some(rest) = line
            .strip_prefix("mod ")
            .or_else(|| line.strip_prefix("mod("))
        else {
            continue;
        };
        let words = strings(rest);
        let Some(full) = words.first() else { continue };
        let name = match full.rsplit_once('/') {
            Some((_, n)) => n,
            None => full.split_once('-').map(|(_, n)| n).unwrap_or(full),
        };
        let install = rest
            .find("install_path")
            .and_then(|i| strings(&rest[i..]).first().map(|s| s.to_string()));
        out.push(format!(
            "{}/{name}",
            install.unwrap_or_else(|| moduledir.clone())
        ));
    }
    out
}

/// An environment's environment.conf, as Puppet reads it (`EnvironmentConf.load_from`): the
/// settings before any `[section]` (Puppet reads only its main section and ignores the others,
/// with a warning), each value as Puppet's settings translate it ([`settings_value`]). A
/// missing or unreadable file sets nothing.
#[derive(Debug, Clone, Default)]
pub struct EnvironmentConf {
    settings: Vec<(String, String)>,
}

impl EnvironmentConf {
    /// Reads `<env_dir>/environment.conf`.
    pub fn read(fs: &dyn Fs, env_dir: &Path) -> EnvironmentConf {
        match fs.read_text(&env_dir.join("environment.conf")) {
            Ok(text) => EnvironmentConf::parse(&text),
            Err(_) => EnvironmentConf::default(),
        }
    }

    /// Parses the text of an environment.conf.
    pub fn parse(text: &str) -> EnvironmentConf {
        let mut settings: Vec<(String, String)> = Vec::new();
        let mut main = true;
        for line in text.lines() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') || line.starts_with(';') {
                continue;
            }
            if let Some(name) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
                main = name.trim() == "main";
                continue;
            }
            if let (true, Some((k, v))) = (main, line.split_once('=')) {
                // `Section#setting` finds the first.
                let k = k.trim().to_string();
                if !settings.iter().any(|(n, _)| *n == k) {
                    settings.push((k, settings_value(v)));
                }
            }
        }
        EnvironmentConf { settings }
    }

    /// A setting's value, if the file sets it.
    pub fn setting(&self, name: &str) -> Option<&str> {
        self.settings
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// A value of a Puppet settings file (puppet.conf, environment.conf) as Puppet's
/// `ValueTranslator` gives it: trimmed, and a quote at either end removed (`"none"` is
/// `none`).
pub fn settings_value(raw: &str) -> String {
    let v = raw.trim();
    let v = v.strip_prefix(['"', '\'']).unwrap_or(v);
    let v = v.strip_suffix(['"', '\'']).unwrap_or(v);
    v.trim_end().to_string()
}

/// Puppet's module name rule: lower-case letter, then lower-case letters, digits, `_`.
fn valid_module_name(n: &str) -> bool {
    let mut chars = n.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_lowercase())
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
}

fn is_v3_config(fs: &dyn Fs, path: &Path) -> bool {
    let Ok(text) = fs.read_text(path) else {
        return false;
    };
    match hiera_formats::yaml::load(&text) {
        Ok(hiera_value::value::Value::Hash(h)) => {
            let v = h
                .get(&hiera_value::value::Value::str("version"))
                .or_else(|| h.get(&hiera_value::value::Value::str(":version")));
            v.is_none()
        }
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn module_names() {
        assert!(valid_module_name("ntp"));
        assert!(valid_module_name("my_mod2"));
        assert!(!valid_module_name("Ntp"));
        assert!(!valid_module_name("2x"));
        assert!(!valid_module_name("my-mod"));
    }

    #[test]
    fn environment_conf_modulepath() {
        let dir = std::env::temp_dir().join(format!("hl-envconf-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("environment.conf");
        std::fs::write(&f, "# c\nmodulepath = site:modules:$basemodulepath\n").unwrap();
        assert_eq!(
            EnvironmentConf::read(&crate::fs::RealFs, &dir).setting("modulepath"),
            Some("site:modules:$basemodulepath")
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// Puppet reads the main section only, and its settings translator drops the quotes.
    #[test]
    fn environment_conf_as_puppet_reads_it() {
        let c = EnvironmentConf::parse(
            "environment_timeout = 0\nenvironment_data_provider = 'function'\n[other]\nmodulepath = x\n",
        );
        assert_eq!(c.setting("environment_data_provider"), Some("function"));
        assert_eq!(c.setting("modulepath"), None);
        assert_eq!(settings_value(" \"none\" "), "none");
        assert_eq!(settings_value("a b"), "a b");
    }
}
