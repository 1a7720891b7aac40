//! `hiera-lookup lint`: the checks a control repo's CI should run on its Hiera data.
//!
//! The linter is a client of the library: hiera.yaml files are loaded by `hiera_engine::config`,
//! data files read by the same readers the lookups use, interpolations tokenized by
//! `hiera_engine::interpolation`, types parsed by `hiera_types`, and fleet rules drive the
//! `hiera_engine::engine` node by node. One file per rule group:
//!
//! | file | rules |
//! |---|---|
//! | `parse.rs` | 1. every data file parses; eyaml values are well-formed and decrypt |
//! | `hiera_config.rs` | 2. every hiera.yaml is valid; v3/v4/hiera3_backend deprecations |
//! | `openvox9.rs` | 2. settings and termini OpenVox 9 no longer reads |
//! | `classes.rs` | 3. keys no class parameter matches, keys nothing uses |
//! | `param_types.rs` | 3. values the class parameter's type does not take |
//! | `interpolations.rs` | 4. interpolations |
//! | `lookup_options.rs` | 5. lookup_options |
//! | `fleet.rs` | 6. rules that need the nodes (`--facts-dir`) |
//! | `hygiene.rs` | 7. YAML hygiene |
//!
//! `schema.rs` is the public model of the code (classes, parameters with their types, lookups,
//! type aliases; `manifests.rs` reads one Puppet file into it with tree-sitter-puppet) and of a
//! data file's references, which the language server reads too. `repo.rs` finds the layers and every data file their hierarchies can reach (findings point
//! where the formats' own readers place each key, `hiera_formats::position`), `written.rs`
//! scans YAML text for what the loaded value cannot show (keys given twice, plain scalars),
//! `settings.rs` reads `.hiera-lookup.toml` (its `[lsp]` table for the language server too) and the per-line
//! `# hiera-lookup: disable=RULE` comments, `output.rs` prints text, JSON, GitHub and SARIF.
#![warn(missing_docs)]

mod classes;
pub mod editor;
mod fleet;
mod hiera_config;
mod hygiene;
mod interpolations;
mod lookup_options;
mod manifests;
mod openvox9;
pub mod output;
mod param_types;
mod parse;
mod position;
mod repo;
pub(crate) mod rules;
pub mod schema;
pub mod settings;
mod vendored;
mod written;

pub use vendored::Vendored;

use hiera_engine::error::{Error, Result};
use std::path::{Path, PathBuf};

pub use rules::{Rule, RULES};

/// How serious a finding is; `--fail-on` picks the lowest that fails the run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Severity {
    /// Worth knowing; never fails a run unless `--fail-on info`.
    Info,
    /// Probably a mistake.
    Warning,
    /// Breaks lookups for some node.
    Error,
}

impl Severity {
    /// `info`, `warning` or `error`.
    pub fn name(self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }

    /// The severity named `s` (as [`name`](Self::name) gives it).
    pub fn parse(s: &str) -> Option<Severity> {
        match s {
            "info" => Some(Severity::Info),
            "warning" => Some(Severity::Warning),
            "error" => Some(Severity::Error),
            _ => None,
        }
    }
}

pub use hiera_formats::position::Pos;

/// A range of a file's text: 1-based lines and columns (columns in characters, as the
/// readers' positions count them), `end` just after the last character. A region that is
/// only a place (`end == start`) is what a rule knows of a finding about a place; one with
/// a start line of 0 is about the whole file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Region {
    /// Where it starts.
    pub start: Pos,
    /// Just after where it ends (`start` for a place).
    pub end: Pos,
}

impl Region {
    /// The place at 1-based `line` and `column`.
    pub fn at(line: usize, column: usize) -> Region {
        let p = Pos { line, column };
        Region { start: p, end: p }
    }

    /// The text from `start` on one line, `chars` characters long.
    pub fn on_line(start: Pos, chars: usize) -> Region {
        Region {
            start,
            end: Pos {
                column: start.column + chars,
                ..start
            },
        }
    }
}

impl From<(usize, usize)> for Region {
    /// The place at `(line, column)`.
    fn from((line, column): (usize, usize)) -> Region {
        Region::at(line, column)
    }
}

/// A replacement of the text of a region of the finding's file.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct TextEdit {
    /// What is replaced.
    pub region: Region,
    /// What replaces it.
    pub new_text: String,
}

/// What fixes a finding, when its rule knows: the edits of the finding's file.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Fix {
    /// What the fix does, in a few words (an editor's quick fix title).
    pub title: String,
    /// The edits, in the finding's file (their regions do not overlap).
    pub edits: Vec<TextEdit>,
}

/// One problem, at a place in a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// The file, relative to the linted directory where it is inside it.
    pub file: String,
    /// What the finding is about (a key, a scalar, an interpolation), as far as the rule
    /// knows it: a start line of 0 is the whole file (printed as line 1), a column of 0
    /// unknown (printed as 1).
    pub region: Region,
    /// The rule's severity.
    pub severity: Severity,
    /// The rule's id.
    pub rule: &'static str,
    /// What is wrong, and what to do.
    pub message: String,
    /// The edit that fixes it, when the rule knows one (a misspelt parameter's name, a
    /// YAML 1.1 scalar quoted).
    pub fix: Option<Fix>,
}

impl Finding {
    /// The 1-based line where it starts (0: the whole file).
    pub fn line(&self) -> usize {
        self.region.start.line
    }

    /// The 1-based column where it starts (0: unknown).
    pub fn column(&self) -> usize {
        self.region.start.column
    }

    /// `file:line:col: severity rule: message`, one line whatever the file name and the
    /// message quote ([`hiera_value::escape::printable`]).
    pub(crate) fn to_text(&self) -> String {
        use hiera_value::escape::printable;
        format!(
            "{}:{}:{}: {} {}: {}",
            printable(&self.file),
            self.line().max(1),
            self.column().max(1),
            self.severity.name(),
            self.rule,
            printable(&self.message)
        )
    }
}

/// What to lint.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// The control repo (the environment directory).
    pub root: PathBuf,
    /// A global hiera.yaml to lint with it (else only a Hiera 3 `./hiera.yaml` is global).
    /// Relative paths here and below are relative to `root`.
    pub hiera_config: Option<PathBuf>,
    /// Overrides the modulepath of `environment.conf` (`:`-separated, relative to `root`).
    pub modulepath: Option<String>,
    /// The fleet's nodes as the caller found them (their scopes: facts, `--var`s, …):
    /// enables the fleet rules. Given, `facts_dir` is not read.
    pub nodes: Option<Vec<hiera_engine::batch::Node>>,
    /// One facts file per node, read as `--facts-dir` reads them: enables the fleet rules.
    pub facts_dir: Option<PathBuf>,
    /// The lint settings file; default `ROOT/.hiera-lookup.toml` when it exists.
    pub config: Option<PathBuf>,
    /// Report the findings in vendored directories too (modules the Puppetfile installs,
    /// directories .gitignore leaves out); by default they are only counted.
    pub include_vendored: bool,
    /// Run the programs of `lookup_key: command` levels in the fleet's lookups
    /// (`--allow-exec`). Off, a lookup reaching one fails the lint with one line: the tree
    /// linted may be a branch nobody has read. Only the caller sets it: the settings file,
    /// which the linted tree holds, cannot.
    pub allow_exec: bool,
    /// The file system every file of the repo is read through (default: the disk): the
    /// hiera.yaml files, data files, the files a node's globs reach, eyaml keys, the
    /// manifests (unless [`schema`](Self::schema) is given), the settings file, Puppetfile
    /// and .gitignore. A language server passes its workspace's, whose overlays are the
    /// editor's unsaved buffers: the rules then judge what the user sees.
    pub fs: Option<std::sync::Arc<dyn hiera_engine::fs::Fs>>,
    /// The code's schema as the caller holds it (a language server's, its unsaved manifest
    /// buffers applied with [`Schema::update_file`](schema::Schema::update_file)); default:
    /// the manifests read from the disk.
    pub schema: Option<std::sync::Arc<schema::Schema>>,
    /// Puppet's puppet.conf as the caller found it (`--config`, `$confdir/puppet.conf`):
    /// `openvox9-compat` checks its data-binding settings.
    pub puppet_conf: Option<PathBuf>,
    /// With a fleet, run only the fleet part of `parameter-type-mismatch` (the value each
    /// node gets) and not the other fleet rules, which look every key of every level up for
    /// every node: what a language server re-diagnosing as the user types can afford.
    pub fleet_types_only: bool,
    /// What the fleet's lookups make of an eyaml value ([`hiera_engine::Secrets`]; by default
    /// opaque without the private key).
    pub secrets: hiera_engine::Secrets,
}

impl Options {
    /// The file system the repo is read through: [`fs`](Self::fs), else the disk.
    pub(crate) fn fs(&self) -> std::sync::Arc<dyn hiera_engine::fs::Fs> {
        self.fs.clone().unwrap_or_else(hiera_engine::fs::disk)
    }
}

/// The findings of a run, sorted by file and position, disabled rules removed.
#[derive(Debug, Clone, Default)]
pub struct Report {
    pub(crate) findings: Vec<Finding>,
    /// `fail-on` from the settings file, if any (the command line wins over it).
    pub fail_on: Option<Severity>,
    /// The vendored directories whose findings were left out, with their counts.
    pub vendored: Vec<Vendored>,
    /// What reading the fleet's nodes warned of (a facts file that sets some of the names
    /// Puppet wants together, a node name given twice …).
    pub warnings: Vec<String>,
    /// The fleet's nodes whose facts could not be read, each `node NAME: why`: the fleet
    /// rules judged the others (a run with some is a failed run).
    pub unreadable: Vec<String>,
    /// Type checks of the fleet's values not made: the value holds an opaque eyaml secret
    /// (no private key; `--secrets`), whose type only its plaintext tells.
    pub opaque_skipped: usize,
}

impl Report {
    /// Names every finding's file with `prefix` before it (`envs/prod` + `data/x.yaml`):
    /// annotations attach to a pull request's files only when named from the git root.
    pub fn prefix_paths(&mut self, prefix: &str) {
        let prefix = prefix.trim_matches('/');
        if prefix.is_empty() {
            return;
        }
        for f in &mut self.findings {
            f.file = format!("{prefix}/{}", f.file);
        }
    }

    /// The findings, sorted by file and position.
    pub fn findings(&self) -> &[Finding] {
        &self.findings
    }

    /// True when a finding is at or above `fail_on`.
    pub fn fails(&self, fail_on: Severity) -> bool {
        self.findings.iter().any(|f| f.severity >= fail_on)
    }
}

/// Collects findings as the rules run.
#[derive(Debug, Default)]
pub(crate) struct Sink {
    root: PathBuf,
    findings: Vec<Finding>,
    /// [`Report::opaque_skipped`].
    pub(crate) opaque_skipped: usize,
}

impl Sink {
    pub(crate) fn new(root: &Path) -> Sink {
        Sink {
            root: root.to_path_buf(),
            findings: Vec::new(),
            opaque_skipped: 0,
        }
    }

    /// The name a file is reported under: relative to the root when inside it.
    pub(crate) fn display(&self, path: &Path) -> String {
        sink_display(&self.root, path)
    }

    /// Adds a finding of `rule` about `region` of `path` (a `(line, column)` place, or the
    /// region of what it is about).
    pub(crate) fn add(
        &mut self,
        path: &Path,
        region: impl Into<Region>,
        rule: &'static str,
        message: impl Into<String>,
    ) {
        self.add_fixed(path, region, rule, message, None);
    }

    /// [`add`](Self::add) with the fix the rule knows.
    pub(crate) fn add_fixed(
        &mut self,
        path: &Path,
        region: impl Into<Region>,
        rule: &'static str,
        message: impl Into<String>,
        fix: Option<Fix>,
    ) {
        let severity = rules::severity(rule);
        self.findings.push(Finding {
            file: self.display(path),
            region: region.into(),
            severity,
            rule,
            message: message.into(),
            fix,
        });
    }
}

/// `1 node`, `2 nodes`.
pub(crate) fn nodes_text(n: usize) -> String {
    if n == 1 {
        "1 node".into()
    } else {
        format!("{n} nodes")
    }
}

/// The name a file is reported under: relative to `root` when inside it.
fn sink_display(root: &Path, path: &Path) -> String {
    match path.strip_prefix(root) {
        Ok(rel) if !rel.as_os_str().is_empty() => rel.display().to_string(),
        _ => path.display().to_string(),
    }
}

/// Lints the control repo at `opts.root`.
pub fn lint(opts: &Options) -> Result<Report> {
    lint_fleet(opts, None, &mut |_, _| ())
}

/// [`lint`], the fleet rules over `nodes` when given (read as they are checked, one unit at
/// a time: a fleet is never all in memory) instead of `opts`' nodes, telling `progress` how
/// many of the fleet's nodes were checked, of about how many.
pub fn lint_fleet(
    opts: &Options,
    nodes: Option<hiera_engine::batch::NodeSource<'_>>,
    progress: &mut (dyn FnMut(usize, usize) + Send),
) -> Result<Report> {
    let root = opts.root.canonicalize().map_err(|e| {
        Error::run(format!(
            "Could not lint {}: {}",
            opts.root.display(),
            hiera_engine::error::io_reason(&e)
        ))
    })?;
    if !root.is_dir() {
        return Err(Error::run(format!(
            "Could not lint {}: not a directory",
            opts.root.display()
        )));
    }
    let settings_path = opts
        .config
        .clone()
        .unwrap_or_else(|| root.join(settings::FILE_NAME));
    let fs = opts.fs();
    let lint_settings = if opts.config.is_some() || fs.is_file(&settings_path) {
        settings::Settings::load(&*fs, &settings_path)?
    } else {
        settings::Settings::default()
    };
    let mut sink = Sink::new(&root);
    let repo = repo::Repo::load(&root, opts, &mut sink)?;
    hiera_config::check(&repo, &mut sink);
    openvox9::check(&repo, opts.puppet_conf.as_deref(), &mut sink);
    parse::check(&repo, &mut sink);
    hygiene::check(&repo, &mut sink);
    let loaded;
    let schema = match &opts.schema {
        Some(s) => s.as_ref(),
        None => {
            loaded = schema::Schema::load_in(&*fs, Some(&repo.root), &repo.modules);
            &loaded
        }
    };
    let known = interpolations::check(&repo, &mut sink);
    lookup_options::check(&repo, &known, &mut sink);
    // The repo's own code: not vendored, not excluded by the settings.
    let vendored_dirs = vendored::find(&*fs, &root);
    let own = |path: &Path| {
        let rel = sink_display(&root, path);
        !lint_settings.excludes(&rel)
            && !vendored_dirs
                .iter()
                .any(|v| rel.starts_with(&format!("{}/", v.dir)))
    };
    let uses = classes::Uses {
        data_refs: &known,
        own: &own,
    };
    classes::check(&repo, schema, &uses, &mut sink);
    // The written values of class parameters now; with a fleet, the values its nodes get
    // are judged in the fleet rules' pass (the fleet is read once).
    let mut types = param_types::written_values(&repo, schema, &sink);
    let mut warnings = repo.warnings.clone();
    let mut unreadable = Vec::new();
    // `facts_dir`'s nodes, built as every command builds nodes (`--facts-dir`).
    let context = match (&nodes, &opts.nodes, &opts.facts_dir) {
        (None, None, Some(dir)) => Some(
            hiera_facts::context::NodeSources {
                facts_dir: Some(dir.clone()),
                ..Default::default()
            }
            .resolve_in(&root)?,
        ),
        _ => None,
    };
    let nodes = match &context {
        Some(c) => Some(c.fleet()?),
        None => nodes.map(|n| n.shorten()),
    };
    if let Some(fleet) = fleet::Fleet::from_options(opts, nodes) {
        let asked = interpolations::facts_asked(&repo);
        let mut facts = fleet::check(&repo, fleet, asked, &types, opts, progress, &mut sink)?;
        if !opts.fleet_types_only {
            interpolations::check_facts(&repo, &facts, &mut sink);
        }
        warnings = std::mem::take(&mut facts.warnings);
        unreadable = std::mem::take(&mut facts.unreadable);
        types.fleet_of(facts.nodes);
        for (name, notes) in std::mem::take(&mut facts.judged) {
            types.add_node(&name, notes, &sink);
        }
    }
    types.finish(&repo, &mut sink);
    let opaque_skipped = sink.opaque_skipped;
    let mut findings = sink.findings;
    // Per-line and per-file disables written in the data files themselves.
    findings.retain(|f| !lint_settings.disabled.iter().any(|d| d == f.rule));
    findings.retain(|f| !lint_settings.excludes(&f.file));
    let mut inline: std::collections::HashMap<String, repo::InlineDisables> = Default::default();
    findings.retain(|f| {
        let d = inline.entry(f.file.clone()).or_insert_with(|| {
            repo.text_of(&root.join(&f.file))
                .map(|t| repo::InlineDisables::parse(&t))
                .unwrap_or_default()
        });
        !d.covers(f)
    });
    findings.sort_by(|a, b| {
        (&a.file, a.region.start, a.rule, &a.message, a.region.end).cmp(&(
            &b.file,
            b.region.start,
            b.rule,
            &b.message,
            b.region.end,
        ))
    });
    // The same finding found twice (its text is what counts: regions and fixes aside).
    findings.dedup_by(|a, b| {
        (&a.file, a.region.start, a.rule, &a.message)
            == (&b.file, b.region.start, b.rule, &b.message)
    });
    // What the repo marks as vendored is not the user's to fix: counted, not reported.
    let mut vendored = if opts.include_vendored {
        Vec::new()
    } else {
        vendored_dirs
    };
    findings.retain(|f| {
        match vendored
            .iter_mut()
            .find(|v| f.file.starts_with(&format!("{}/", v.dir)))
        {
            Some(v) => {
                v.findings += 1;
                false
            }
            None => true,
        }
    });
    vendored.retain(|v| v.findings > 0);
    Ok(Report {
        findings,
        fail_on: lint_settings.fail_on,
        vendored,
        warnings,
        unreadable,
        opaque_skipped,
    })
}

#[cfg(test)]
mod tests;
