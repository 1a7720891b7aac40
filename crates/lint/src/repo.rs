//! The linted repo: its layers (global if configured, environment, every module on the
//! modulepath), their hiera.yaml loaded by [`hiera_engine::config`], and every data file each
//! hierarchy level can reach. A location with `%{...}` placeholders is expanded over the files
//! that exist (each placeholder matches any one path component's text), so files that no node
//! of a given fleet reaches are read too.

use super::written::{self, Scan};
use super::{Finding, Options, Region, Sink};
use hiera_engine::config::{Entry, HieraConfig, Layer, LoadContext, Locations};
use hiera_engine::error::Result;
use hiera_engine::fs::Fs;
use hiera_engine::interpolation::{tokenize, Token};
use hiera_formats::format::{DataFormat, EYAML_LOOKUP_KEY};
use hiera_formats::position::{positions_of, PosNode};
use hiera_value::value::{Map, Value};
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

/// One layer: the global hiera.yaml, the environment's, or one module's.
#[derive(Debug)]
pub(crate) struct LayerInfo {
    pub kind: Layer,
    pub module: Option<String>,
    /// The environment or module directory (the global layer: the hiera.yaml's directory).
    pub dir: PathBuf,
    /// The hiera.yaml, when it exists.
    pub hiera_yaml: Option<PathBuf>,
    pub config: Option<HieraConfig>,
    /// Why the hiera.yaml did not load.
    pub error: Option<hiera_engine::Error>,
    /// Deprecation warnings from loading it.
    pub warnings: Vec<String>,
    pub levels: Vec<Level>,
}

/// One hierarchy level of a layer and the files it can reach.
#[derive(Debug)]
pub(crate) struct Level {
    pub entry: Entry,
    /// From `default_hierarchy` (modules only).
    pub default_hierarchy: bool,
    /// The absolute location templates (placeholders kept), in declaration order.
    pub templates: Vec<String>,
    /// Indexes into [`Repo::files`], per template.
    pub files: Vec<Vec<usize>>,
}

/// A data file some hierarchy level can reach.
#[derive(Debug)]
pub(crate) struct DataFile {
    pub path: PathBuf,
    pub format: DataFormat,
    /// The layer it belongs to (first level that reaches it).
    pub layer: usize,
    /// The options of an `eyaml_lookup_key` level that reads it.
    pub eyaml: Option<Map>,
    pub bytes: Vec<u8>,
    pub text: String,
    pub read_error: Option<String>,
    /// The parse error: message and 1-based position (0 when unknown).
    pub parse_error: Option<(String, (usize, usize))>,
    /// The top-level hash (empty when the file is empty or did not parse).
    pub data: Map,
    /// Top-level keys holding Ruby-only objects.
    pub ruby_values: Vec<hiera_formats::yaml::RubyValue>,
    /// The top-level value when it is not a hash (Puppet rejects it).
    pub not_a_hash: Option<&'static str>,
    /// What is written where, as text (YAML only): keys given twice, plain scalars, the
    /// top-level keys a byte-order mark makes Psych lose.
    pub scan: Scan,
    /// Where each key and value is, by the file's own reader (built when first asked;
    /// the fleet rules run on worker threads).
    positions: OnceLock<Option<PosNode>>,
}

impl DataFile {
    /// Where `path` (a top-level key first, then keys and indexes inside its value) is
    /// written, as deep as the file holds it, by the marks of the reader that loaded it
    /// (libyaml's, the json gem's, ruby-hocon's); through a YAML alias or merge key, the
    /// place that brings it in. `None` when not even the first key is there.
    pub(crate) fn path_pos(&self, path: &[Value]) -> Option<(usize, usize)> {
        self.path_region(path)
            .map(|r| (r.start.line, r.start.column))
    }

    /// [`path_pos`](Self::path_pos), to the end of the key (or array element) there when
    /// the reader knows it and the whole path is written in place.
    pub(crate) fn path_region(&self, path: &[Value]) -> Option<Region> {
        let tree = self
            .positions
            .get_or_init(|| positions_of(self.format, &self.bytes).ok().flatten())
            .as_ref()?;
        let (n, at) = (1..=path.len())
            .rev()
            .find_map(|n| Some((n, tree.locate(&path[..n])?)))?;
        let end = at.end.filter(|_| n == path.len()).unwrap_or(at.pos);
        Some(Region { start: at.pos, end })
    }

    /// The position of top-level `key` (else the start of the file).
    pub(crate) fn key_pos(&self, key: &str) -> (usize, usize) {
        self.path_pos(&[Value::str(key)]).unwrap_or((1, 1))
    }

    /// Where top-level `key` is written: the key's text (else its start, else the start
    /// of the file).
    pub(crate) fn key_region(&self, key: &str) -> Region {
        self.path_region(&[Value::str(key)])
            .unwrap_or(Region::at(1, 1))
    }

    /// The position of `needle` in the value of top-level `key` (else of the key).
    pub(crate) fn pos_in_key(&self, key: &str, needle: &str) -> (usize, usize) {
        let (line, col) = self.key_pos(key);
        written::find_text(&self.text, needle, line).unwrap_or((line, col))
    }

    /// Whether the file is in a module layer, and which module.
    pub(crate) fn module<'a>(&self, repo: &'a Repo) -> Option<&'a str> {
        repo.layers[self.layer].module.as_deref()
    }
}

/// The whole repo as the rules see it.
#[derive(Debug)]
pub(crate) struct Repo {
    pub root: PathBuf,
    pub layers: Vec<LayerInfo>,
    pub files: Vec<DataFile>,
    /// Every top-level key of every data file (lookup_options excluded); of a YAML file that
    /// does not parse, the keys written at its top level.
    pub defined: HashSet<String>,
    /// A data file that does not parse holds keys no rule can know (a JSON or HOCON file):
    /// what is not [`defined`](Self::defined) may still be defined there.
    pub defined_unknown: bool,
    pub modules: Vec<(String, PathBuf)>,
    /// The layers as the engine takes them (fleet lookups).
    pub layers_spec: hiera_engine::engine::Layers,
    /// What hiera.yaml and data files are read through ([`Options::fs`]).
    pub fs: Arc<dyn Fs>,
    /// What the layout lacks that the user named (a missing modulepath directory, a
    /// Puppetfile's modules not installed): classes and data the rules then never see.
    pub(crate) warnings: Vec<String>,
}

impl Repo {
    pub(crate) fn load(root: &Path, opts: &Options, _sink: &mut Sink) -> Result<Repo> {
        let env = hiera_engine::environment::EnvOptions {
            cwd: root.to_path_buf(),
            modulepath: opts.modulepath.clone(),
            ..Default::default()
        };
        let fs = opts.fs();
        let mut layers = env.layers_in(&*fs)?;
        if let Some(g) = &opts.hiera_config {
            layers.global = Some(hiera_engine::environment::absolute(root, g));
        }
        let ctx = |layer| LoadContext {
            layer,
            codedir: layers.codedir.clone(),
            strict_off: false,
        };
        let mut infos = Vec::new();
        if let Some(g) = &layers.global {
            infos.push(load_layer(
                &*fs,
                Layer::Global,
                None,
                g.clone(),
                &ctx(Layer::Global),
            ));
        }
        if let Some(dir) = &layers.environment_dir {
            infos.push(load_layer(
                &*fs,
                Layer::Environment,
                None,
                dir.join("hiera.yaml"),
                &ctx(Layer::Environment),
            ));
        }
        for (name, dir) in &layers.modules {
            infos.push(load_layer(
                &*fs,
                Layer::Module,
                Some(name.clone()),
                dir.join("hiera.yaml"),
                &ctx(Layer::Module),
            ));
        }
        let mut repo = Repo {
            root: root.to_path_buf(),
            layers: infos,
            files: Vec::new(),
            defined: HashSet::new(),
            defined_unknown: false,
            modules: layers.modules.clone(),
            layers_spec: layers.clone(),
            warnings: env.layout_warnings(&*fs, root),
            fs,
        };
        repo.find_files();
        for f in &repo.files {
            for k in f.data.keys() {
                if let Value::String(k) = k {
                    if k != "lookup_options" {
                        repo.defined.insert(k.clone());
                    }
                }
            }
            // A file that does not parse is one finding (data-syntax): what it would have
            // defined is unknown, not absent. A YAML file's top-level keys are read off its
            // text as written; any other format's are unknown.
            if f.parse_error.is_some() {
                match f.format {
                    DataFormat::Yaml => repo.defined.extend(
                        written::scan(&f.text)
                            .keys
                            .into_iter()
                            .filter(|k| k.parents.is_empty() && k.key != "lookup_options")
                            .map(|k| k.key),
                    ),
                    _ => repo.defined_unknown = true,
                }
            }
        }
        Ok(repo)
    }

    fn find_files(&mut self) {
        let mut by_path: HashMap<PathBuf, usize> = HashMap::new();
        for li in 0..self.layers.len() {
            let Some(cfg) = self.layers[li].config.clone() else {
                continue;
            };
            let mut entries: Vec<(Entry, bool)> =
                cfg.hierarchy.iter().map(|e| (e.clone(), false)).collect();
            if let Some(d) = &cfg.default_hierarchy {
                entries.extend(d.iter().map(|e| (e.clone(), true)));
            }
            for (entry, default_hierarchy) in entries {
                let format = entry.data_format();
                let templates = entry.templates();
                let mut level_files = Vec::new();
                for t in &templates {
                    let mut found = Vec::new();
                    if let Some(format) = format {
                        for p in expand(&*self.fs, t) {
                            let idx = *by_path.entry(p.clone()).or_insert_with(|| {
                                self.files.push(read_file(&*self.fs, p.clone(), format, li));
                                self.files.len() - 1
                            });
                            if entry.function == EYAML_LOOKUP_KEY {
                                self.files[idx].eyaml =
                                    Some(entry.options.clone().unwrap_or_default());
                            }
                            found.push(idx);
                        }
                    }
                    level_files.push(found);
                }
                self.layers[li].levels.push(Level {
                    entry,
                    default_hierarchy,
                    templates,
                    files: level_files,
                });
            }
        }
    }

    /// The text of a file findings are reported in: a data file's, or read from disk
    /// (hiera.yaml).
    pub(crate) fn text_of(&self, path: &Path) -> Option<String> {
        match self.files.iter().find(|d| d.path == path) {
            Some(d) => Some(d.text.clone()),
            None => self.read_text(path).ok(),
        }
    }

    /// A file of the repo, as text, through [`fs`](Self::fs).
    pub(crate) fn read_text(&self, path: &Path) -> std::io::Result<String> {
        self.fs.read_text(path)
    }

    /// A file of the repo, through [`fs`](Self::fs).
    pub(crate) fn read_bytes(&self, path: &Path) -> std::io::Result<Vec<u8>> {
        self.fs.read(path)
    }

    /// The files a node (`session`: its session) reaches, in priority order (layer, then
    /// level, then location); `index`: each data file's index in [`files`](Self::files).
    pub(crate) fn reached(
        &self,
        index: &HashMap<&Path, usize>,
        session: &mut hiera_engine::engine::Session,
    ) -> Vec<usize> {
        let mut out = Vec::new();
        for layer in &self.layers {
            for level in &layer.levels {
                for (t, files) in level.templates.iter().zip(&level.files) {
                    if files.is_empty() {
                        continue;
                    }
                    if !has_placeholders(t)
                        || matches!(level.entry.locations, Locations::Mapped(..))
                    {
                        // Mapped paths depend on the node's array; counted as reached.
                        out.extend(files.iter().copied());
                        continue;
                    }
                    let Ok(Value::String(p)) = session.interpolate(&Value::str(t.as_str()), false)
                    else {
                        continue;
                    };
                    if matches!(level.entry.locations, Locations::Globs(_)) {
                        for g in hiera_engine::location::glob(&*self.fs, &p).unwrap_or_default() {
                            if let Some(&i) = index.get(Path::new(&g)) {
                                out.push(i);
                            }
                        }
                    } else if let Some(&i) = index.get(Path::new(&p)) {
                        out.push(i);
                    }
                }
            }
        }
        let mut seen = HashSet::new();
        out.retain(|i| seen.insert(*i));
        out
    }

    /// The keys whose lookup_options give a merge (exact names, and defined keys a pattern
    /// matches), sorted.
    pub(crate) fn merged_keys(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for f in &self.files {
            let Some(Value::Hash(lo)) = f.data.get(&Value::str("lookup_options")) else {
                continue;
            };
            for (name, opts) in lo {
                let Some(name) = name.as_str() else { continue };
                let has_merge = opts
                    .as_hash()
                    .and_then(|h| h.get(&Value::str("merge")))
                    .is_some_and(|m| !m.is_null() && m.as_str() != Some("first"));
                if !has_merge {
                    continue;
                }
                if name.starts_with('^') {
                    if let Ok(re) = hiera_engine::engine::KeyPattern::new(name) {
                        out.extend(self.defined.iter().filter(|k| re.is_match(k)).cloned());
                    }
                } else if self.defined.contains(name) {
                    out.push(name.to_string());
                }
            }
        }
        out.sort();
        out.dedup();
        out
    }
}

/// The `# hiera-lookup: disable…` comments of one file: rules off for the whole file, and
/// per line (a comment on the line, or on the comment-only lines just above it).
#[derive(Debug, Default)]
pub(crate) struct InlineDisables {
    file: Vec<String>,
    lines: HashMap<usize, Vec<String>>,
}

impl InlineDisables {
    pub(crate) fn parse(text: &str) -> InlineDisables {
        let mut out = InlineDisables::default();
        let mut pending: Vec<String> = Vec::new();
        for (i, line) in text.lines().enumerate() {
            let parsed = super::settings::inline_disable(line);
            let comment_only = line.trim_start().starts_with('#');
            match parsed {
                Some((true, ids)) => out.file.extend(ids),
                Some((false, ids)) if comment_only => pending.extend(ids),
                Some((false, ids)) => {
                    let e = out.lines.entry(i + 1).or_default();
                    e.extend(ids);
                    e.append(&mut pending);
                }
                None if comment_only => {}
                None => {
                    if !pending.is_empty() {
                        out.lines.entry(i + 1).or_default().append(&mut pending);
                    }
                }
            }
            if line.trim().is_empty() {
                pending.clear();
            }
        }
        out
    }

    pub(crate) fn covers(&self, f: &Finding) -> bool {
        let hit = |ids: &Vec<String>| ids.iter().any(|i| i == f.rule || i == "all");
        hit(&self.file) || self.lines.get(&f.line().max(1)).is_some_and(hit)
    }
}

fn load_layer(
    fs: &dyn Fs,
    kind: Layer,
    module: Option<String>,
    path: PathBuf,
    ctx: &LoadContext,
) -> LayerInfo {
    let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
    let exists = fs.is_file(&path);
    let mut info = LayerInfo {
        kind,
        module,
        dir,
        hiera_yaml: exists.then(|| path.clone()),
        config: None,
        error: None,
        warnings: Vec::new(),
        levels: Vec::new(),
    };
    // An environment or module without hiera.yaml has no data provider (as in the engine);
    // a missing global hiera.yaml is Puppet's default configuration.
    if !exists && kind != Layer::Global {
        return info;
    }
    match HieraConfig::load_in(fs, &path, ctx, &mut info.warnings) {
        Ok(cfg) => info.config = Some(cfg),
        Err(e) => info.error = Some(e),
    }
    info
}

/// Whether a template has placeholders.
pub(crate) fn has_placeholders(t: &str) -> bool {
    tokenize(t)
        .iter()
        .any(|tok| matches!(tok, Token::Expr { .. } | Token::Empty))
}

/// The existing files a template can name: placeholders become `*`, glob characters of the
/// literal text are escaped unless the template is a glob itself.
fn expand(fs: &dyn Fs, template: &str) -> Vec<PathBuf> {
    let mut pattern = String::new();
    for tok in tokenize(template) {
        match tok {
            Token::Text(t) => pattern.push_str(t),
            Token::Empty => {}
            Token::Expr { .. } => pattern.push('*'),
        }
    }
    let mut out: Vec<PathBuf> = hiera_engine::location::glob(fs, &pattern)
        .unwrap_or_default()
        .into_iter()
        .map(PathBuf::from)
        .filter(|p| fs.is_file(p))
        .collect();
    out.sort();
    out.dedup();
    out
}

fn read_file(fs: &dyn Fs, path: PathBuf, format: DataFormat, layer: usize) -> DataFile {
    let mut f = DataFile {
        path,
        format,
        layer,
        eyaml: None,
        bytes: Vec::new(),
        text: String::new(),
        read_error: None,
        parse_error: None,
        data: Map::default(),
        ruby_values: Vec::new(),
        not_a_hash: None,
        scan: Scan::default(),
        positions: OnceLock::new(),
    };
    match fs.read(&f.path) {
        Ok(b) => f.bytes = b,
        Err(e) => {
            f.read_error = Some(hiera_engine::error::io_reason(&e));
            return f;
        }
    }
    f.text = String::from_utf8_lossy(&f.bytes).into_owned();
    let parsed: std::result::Result<Value, (String, (usize, usize))> = match format {
        DataFormat::Yaml => match hiera_formats::yaml::load_document(&f.bytes) {
            Ok(doc) => {
                f.ruby_values = doc.ruby_values;
                f.scan = written::scan(&f.text);
                Ok(doc.value)
            }
            Err(e) => Err((e.to_string(), e.position())),
        },
        DataFormat::Json => hiera_formats::json::parse(&f.text).map_err(|m| {
            let p = position_in_message(&m);
            (m, p)
        }),
        DataFormat::Hocon => hiera_formats::hocon::parse_hocon(&f.text).map_err(|m| {
            let p = position_in_message(&m);
            (m, p)
        }),
    };
    match parsed {
        Ok(Value::Hash(h)) => f.data = h,
        // An empty file (YAML) is no data; Puppet reads it as an empty hash.
        Ok(Value::Null) | Ok(Value::Bool(false)) => {}
        Ok(other) => f.not_a_hash = Some(other.ruby_class()),
        Err(e) => f.parse_error = Some(e),
    }
    f
}

/// `line N` / `column M` in a reader's message.
fn position_in_message(m: &str) -> (usize, usize) {
    let num_after = |word: &str| {
        let i = m.find(word)? + word.len();
        let digits: String = m[i..]
            .trim_start()
            .chars()
            .take_while(|c| c.is_ascii_digit())
            .collect();
        digits.parse::<usize>().ok()
    };
    match num_after("line") {
        Some(l) => (l, num_after("column").unwrap_or(1)),
        None => (1, 1),
    }
}
