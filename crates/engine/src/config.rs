//! hiera.yaml: versions 3, 4 and 5, read and validated as Puppet's `HieraConfig` does.
//!
//! All three versions are normalised into one list of hierarchy [`Entry`]s, so the engine
//! never looks at the version again except to name it in `--explain`.

use crate::error::{Error, Result};
use hiera_formats::format::{DataFormat, EYAML_LOOKUP_KEY};
use hiera_formats::position::Pos;
use hiera_value::value::{Map, Value};
use std::path::{Path, PathBuf};

/// The layer a configuration belongs to; some features are allowed in one layer only.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layer {
    /// The global hiera.yaml (`--hiera_config`).
    Global,
    /// The environment's hiera.yaml.
    Environment,
    /// A module's hiera.yaml.
    Module,
}

/// The kind of backend function a hierarchy entry names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FunctionKind {
    /// `data_hash`: a function returning a whole hash (yaml_data, json_data, ...).
    DataHash,
    /// `lookup_key`: a function asked one key at a time (eyaml_lookup_key, ...).
    LookupKey,
    /// `data_dig`: a function asked one dotted key at a time.
    DataDig,
    /// `hiera3_backend`: a Hiera 3 backend called through Puppet's adapter.
    Hiera3Backend,
    /// `v4_data_hash`: Puppet 8's legacy data provider function (`MODULE::data`,
    /// `environment::data`), never written in a hiera.yaml: made by [`HieraConfig::v4_function`]
    /// for metadata.json's `"data_provider": "function"` and environment.conf's
    /// `environment_data_provider = function`.
    V4DataHash,
}

impl FunctionKind {
    /// The hiera.yaml key naming this kind (`data_hash`, `lookup_key`, ...).
    pub fn tag(self) -> &'static str {
        match self {
            FunctionKind::DataHash => "data_hash",
            FunctionKind::LookupKey => "lookup_key",
            FunctionKind::DataDig => "data_dig",
            FunctionKind::Hiera3Backend => "hiera3_backend",
            FunctionKind::V4DataHash => "v4_data_hash",
        }
    }
}

/// Where an entry looks for data, as declared (interpolated at lookup time).
#[derive(Debug, Clone, PartialEq)]
pub enum Locations {
    /// No location key: the function is called once without `path`.
    None,
    /// `path`/`paths`: file paths under the datadir.
    Paths(Vec<String>),
    /// `glob`/`globs`: patterns, each matching many files.
    Globs(Vec<String>),
    /// `uri`/`uris`: locations handed to the function as they are.
    Uris(Vec<String>),
    /// `mapped_paths: [VAR, KEY, TEMPLATE]`.
    Mapped(String, String, String),
}

/// One hierarchy level.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    /// The level's `name`.
    pub name: String,
    /// Which kind of function the level calls.
    pub kind: FunctionKind,
    /// The function name (`yaml_data`, `json_data`, `eyaml_lookup_key`, …).
    pub function: String,
    /// The data directory, absolute but not yet interpolated.
    pub datadir: String,
    /// Where the level looks.
    pub locations: Locations,
    /// Options as declared (interpolated at lookup time); `None` when absent.
    pub options: Option<Map>,
    /// v3/v4: the extension added to each path unless already present.
    pub extension: Option<String>,
    /// v3: the datadir was given by the config (not interpolated from the default).
    pub v3: bool,
}

impl Entry {
    /// The format of the data files the level's built-in backend reads: `yaml_data`,
    /// `json_data` and `hocon_data` as `data_hash`, `eyaml_lookup_key` as `lookup_key`
    /// (`None`: a function without data files, or one named under the wrong kind, which
    /// Puppet cannot find).
    pub fn data_format(&self) -> Option<DataFormat> {
        match self.kind {
            FunctionKind::DataHash => DataFormat::of_data_hash(&self.function),
            FunctionKind::LookupKey => DataFormat::of_lookup_key(&self.function),
            FunctionKind::DataDig | FunctionKind::Hiera3Backend | FunctionKind::V4DataHash => None,
        }
    }
}

impl Entry {
    /// The level's location templates, absolute and not interpolated (placeholders kept), in
    /// declaration order: each path (v3/v4: with the extension) or glob, or the mapped
    /// paths' template, under the datadir. URIs are not files: none.
    pub fn templates(&self) -> Vec<String> {
        let with_ext = |p: &str| {
            let mut p = p.to_string();
            if let Some(ext) = &self.extension {
                if !p.ends_with(ext.as_str()) {
                    p.push_str(ext);
                }
            }
            path_plus(&self.datadir, &p)
        };
        match &self.locations {
            Locations::None | Locations::Uris(_) => Vec::new(),
            Locations::Paths(ps) => ps.iter().map(|p| with_ext(p)).collect(),
            Locations::Globs(gs) => gs.iter().map(|g| path_plus(&self.datadir, g)).collect(),
            Locations::Mapped(_, _, t) => vec![path_plus(&self.datadir, t)],
        }
    }
}

/// A data directory or location setting of a hiera.yaml where the file writes it: what an
/// editor points at and resolves ([`HieraConfig::written_settings`]).
#[derive(Debug, Clone, PartialEq)]
pub struct WrittenSetting {
    /// `datadir`, `path`, `paths`, `glob` or `globs`.
    pub setting: &'static str,
    /// The value as written (not interpolated).
    pub template: String,
    /// Where the value's text starts (a quoted one's opening quote).
    pub start: Pos,
    /// Just after where it ends, when the reader knows it.
    pub end: Option<Pos>,
    /// The value as the configuration takes it, absolute and not interpolated: for a
    /// location, the file (or glob) under its level's datadir (the level's own, else the
    /// defaults', else `data`; v4: with the extension); for a datadir, the directory.
    pub absolute: String,
}

/// Hiera 3's `:merge_behavior:`, kept for `hiera_hash`-style lookups.
#[derive(Debug, Clone, PartialEq)]
pub struct V3Merge {
    /// `:merge_behavior:` (`native`, `deep` or `deeper`).
    pub behavior: String,
    /// `:deep_merge_options:`.
    pub deep_merge_options: Map,
}

/// A loaded, validated hiera.yaml.
#[derive(Debug, Clone)]
pub struct HieraConfig {
    /// The file; `None` when it does not exist and Puppet's default config is used.
    pub path: Option<PathBuf>,
    /// The directory the file is (or would be) in; relative datadirs start here.
    pub root: PathBuf,
    /// The hiera.yaml version (3, 4 or 5).
    pub version: u32,
    /// The levels, in lookup order.
    pub hierarchy: Vec<Entry>,
    /// Modules only: searched when nothing else was found.
    pub default_hierarchy: Option<Vec<Entry>>,
    /// Hiera 3's merge settings (v3 global configs only).
    pub v3_merge: Option<V3Merge>,
    /// Duplicate-name errors are raised lazily by Puppet, when the providers are built.
    pub deferred_error: Option<Error>,
}

/// What loading needs besides the file.
#[derive(Debug, Clone)]
pub struct LoadContext {
    /// The layer the file belongs to.
    pub layer: Layer,
    /// `$codedir`, for the v3 default datadir.
    pub codedir: PathBuf,
    /// Puppet's `strict` is `off` (suppresses deprecation warnings).
    pub strict_off: bool,
}

/// Warnings produced while loading (printed by the CLI as `Warning: …`).
pub(crate) type Warnings = Vec<String>;

const V5_TOP_KEYS: &[&str] = &[
    "version",
    "defaults",
    "hierarchy",
    "plan_hierarchy",
    "default_hierarchy",
];
const V5_DEFAULT_KEYS: &[&str] = &["data_hash", "lookup_key", "data_dig", "datadir", "options"];
const V5_ENTRY_KEYS: &[&str] = &[
    "name",
    "options",
    "data_hash",
    "lookup_key",
    "hiera3_backend",
    "v4_data_hash",
    "data_dig",
    "path",
    "paths",
    "glob",
    "globs",
    "uri",
    "uris",
    "mapped_paths",
    "datadir",
];
const FUNCTION_KEYS: &[&str] = &["data_hash", "lookup_key", "data_dig", "hiera3_backend"];
const ALL_FUNCTION_KEYS: &[&str] = &[
    "data_hash",
    "lookup_key",
    "data_dig",
    "hiera3_backend",
    "v4_data_hash",
];
const LOCATION_KEYS: &[&str] = &[
    "path",
    "paths",
    "glob",
    "globs",
    "uri",
    "uris",
    "mapped_paths",
];

impl HieraConfig {
    /// Loads `path` (absolute). A missing file gives Puppet's default v5 config rooted at
    /// the file's directory.
    pub fn load(path: &Path, ctx: &LoadContext, warnings: &mut Warnings) -> Result<HieraConfig> {
        HieraConfig::load_in(&crate::fs::RealFs, path, ctx, warnings)
    }

    /// [`load`](Self::load), reading `path` from `fs`.
    pub fn load_in(
        fs: &dyn crate::fs::Fs,
        path: &Path,
        ctx: &LoadContext,
        warnings: &mut Warnings,
    ) -> Result<HieraConfig> {
        let root = path
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_else(|| PathBuf::from("/"));
        let text = match fs.read(path) {
            Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return HieraConfig::from_value(default_v5(), None, root, ctx, warnings, "");
            }
            Err(e) => {
                return Err(Error::run(format!(
                    "Could not read {}: {}",
                    path.display(),
                    crate::error::io_reason(&e)
                )))
            }
        };
        let shown = path.display().to_string();
        // A Psych error here is a Puppet::Error: the provider wraps it like a data error.
        let parsed = hiera_formats::yaml::load(&text).map_err(|e| {
            let (line, column) = e.position();
            Error::Puppet(format!(
                "({shown}): {e} ({shown}:{line}:{column}: this Hiera configuration is not valid YAML; no key can be looked up until it is fixed)"
            ))
        })?;
        let config = match parsed {
            Value::Hash(h) => h,
            _ => {
                warnings.push(format!(
                    "{shown}: File exists but does not contain a valid YAML hash. Falling back to Hiera version 3 default config"
                ));
                default_v3()
            }
        };
        HieraConfig::from_value(config, Some(path.to_path_buf()), root, ctx, warnings, &text)
    }

    fn from_value(
        map: Map,
        path: Option<PathBuf>,
        root: PathBuf,
        ctx: &LoadContext,
        warnings: &mut Warnings,
        text: &str,
    ) -> Result<HieraConfig> {
        let shown = path
            .as_ref()
            .map(|p| p.display().to_string())
            .unwrap_or_default();
        let version = match map.get(&Value::str("version")) {
            None | Some(Value::Null) => 3,
            Some(v) => ruby_to_i(v),
        };
        let mut v = Validator {
            path: shown.clone(),
            text,
            file_given: path.is_some(),
        };
        let mut cfg = HieraConfig {
            path,
            root,
            version: 0,
            hierarchy: Vec::new(),
            default_hierarchy: None,
            v3_merge: None,
            deferred_error: None,
        };
        match version {
            5 => v.load_v5(map, ctx, &mut cfg)?,
            4 => {
                if ctx.layer == Layer::Global {
                    return Err(v.issue(
                        "hiera.yaml version 4 cannot be used in the global layer",
                        None,
                    ));
                }
                if !ctx.strict_off {
                    warnings.push(format!(
                        "{shown}: Use of 'hiera.yaml' version 4 is deprecated. It should be converted to version 5"
                    ));
                }
                v.load_v4(map, &mut cfg)?
            }
            3 => {
                // HieraConfigV3#validate_config: the deprecation, then the v3 struct, in every
                // layer (a version-less file with a v5-shaped hierarchy fails here).
                if !ctx.strict_off {
                    warnings.push(format!(
                        "{shown}: Use of 'hiera.yaml' version 3 is deprecated. It should be converted to version 5"
                    ));
                }
                match ctx.layer {
                    Layer::Global => v.load_v3(map, ctx, &mut cfg)?,
                    // Then the caller decides between Puppet 7's warning and Puppet 8's error.
                    // The environment and module providers load their configuration outside
                    // any data provider: the failure is not wrapped.
                    Layer::Environment | Layer::Module => {
                        let mut checked = cfg.clone();
                        v.load_v3(map, ctx, &mut checked).map_err(|e| match e {
                            Error::Puppet(m) => Error::run(m),
                            other => other,
                        })?;
                        cfg.version = 3;
                        return Ok(cfg);
                    }
                }
            }
            n => {
                return Err(v.issue(
                    &format!("This runtime does not support hiera.yaml version {n}"),
                    None,
                ));
            }
        }
        Ok(cfg)
    }

    /// `HieraConfigV5.v4_function_config`: the configuration of a legacy `data_provider:
    /// function` rooted at `root` (the module's or the environment's directory), one level
    /// `Legacy function 'NAME'` calling the `v4_data_hash` function `name` without a location.
    pub fn v4_function(root: &Path, name: &str) -> HieraConfig {
        HieraConfig {
            path: None,
            root: root.to_path_buf(),
            version: 5,
            hierarchy: vec![Entry {
                name: format!("Legacy function '{name}'"),
                kind: FunctionKind::V4DataHash,
                function: name.to_string(),
                datadir: path_plus(&root.display().to_string(), "data"),
                locations: Locations::None,
                options: None,
                extension: None,
                v3: false,
            }],
            default_hierarchy: None,
            v3_merge: None,
            deferred_error: None,
        }
    }

    /// Puppet's provider label: `hiera configuration version N`.
    pub(crate) fn name(&self) -> String {
        format!("hiera configuration version {}", self.version)
    }

    /// Where this configuration's data directories and locations (`path`, `paths`, `glob`,
    /// `globs`) are written in `text`, the file's text it was loaded from, each with the
    /// value the configuration takes (versions 4 and 5; nothing for version 3, or for a text
    /// that does not parse). What an editor points at, without reading hiera.yaml again.
    pub fn written_settings(&self, text: &[u8]) -> Vec<WrittenSetting> {
        let mut out = Vec::new();
        if self.version < 4 {
            return out;
        }
        let Ok(Some(tree)) = hiera_formats::position::positions_of(DataFormat::Yaml, text) else {
            return out;
        };
        let Ok(Value::Hash(map)) = hiera_formats::yaml::load(&String::from_utf8_lossy(text)) else {
            return out;
        };
        let root = self.root.display().to_string();
        let mut push = |setting: &'static str, path: &[Value], value: Option<&Value>, absolute| {
            let (Some(Value::String(template)), Some(node)) = (value, tree.node_at(path)) else {
                return;
            };
            out.push(WrittenSetting {
                setting,
                template: template.clone(),
                start: node.pos,
                end: node.end,
                absolute,
            });
        };
        // The datadir every level without its own takes (v5's defaults, v4's top level).
        let top = match self.version {
            5 => vec![s("defaults"), s("datadir")],
            _ => vec![s("datadir")],
        };
        let top_value = match &top[..] {
            [d, k] => map.get(d).and_then(Value::as_hash).and_then(|h| h.get(k)),
            _ => map.get(&top[0]),
        };
        if let Some(Value::String(d)) = top_value {
            push("datadir", &top, top_value, path_plus(&root, d));
        }
        let sections = [
            ("hierarchy", Some(&self.hierarchy)),
            ("default_hierarchy", self.default_hierarchy.as_ref()),
        ];
        for (section, entries) in sections {
            let (Some(entries), Some(Value::Array(items))) = (entries, map.get(&s(section))) else {
                continue;
            };
            for (i, (entry, item)) in entries.iter().zip(items).enumerate() {
                let Value::Hash(item) = item else { continue };
                // Each level as written is the entry built from it (names told apart).
                if item.get(&s("name")).and_then(Value::as_str) != Some(entry.name.as_str()) {
                    break;
                }
                let at = |k: &str| vec![s(section), Value::Int(i as i64), s(k)];
                if let Some(d @ Value::String(_)) = item.get(&s("datadir")) {
                    push("datadir", &at("datadir"), Some(d), entry.datadir.clone());
                }
                let templates = entry.templates();
                for (setting, many) in [
                    ("path", false),
                    ("paths", true),
                    ("glob", false),
                    ("globs", true),
                ] {
                    let Some(v) = item.get(&s(setting)) else {
                        continue;
                    };
                    let written: Vec<(Vec<Value>, &Value)> = match (many, v) {
                        (false, _) => vec![(at(setting), v)],
                        (true, Value::Array(vs)) => vs
                            .iter()
                            .enumerate()
                            .map(|(j, v)| {
                                let mut p = at(setting);
                                p.push(Value::Int(j as i64));
                                (p, v)
                            })
                            .collect(),
                        (true, _) => Vec::new(),
                    };
                    for ((path, v), absolute) in written.into_iter().zip(&templates) {
                        push(setting, &path, Some(v), absolute.clone());
                    }
                }
            }
        }
        out
    }
}

/// Ruby's `to_i` of a hiera.yaml `version`.
fn ruby_to_i(v: &Value) -> i64 {
    match v {
        Value::Int(i) => *i,
        Value::Float(f) => *f as i64,
        Value::String(s) => hiera_value::ruby::str_to_i(s)
            .map_or(i64::MAX, |i| i64::try_from(i).unwrap_or(i64::MAX)),
        _ => 0,
    }
}

fn s(v: &str) -> Value {
    Value::str(v)
}

fn default_v5() -> Map {
    let mut defaults = Map::default();
    defaults.insert(s("datadir"), s("data"));
    defaults.insert(s("data_hash"), s("yaml_data"));
    let mut entry = Map::default();
    entry.insert(s("name"), s("Common"));
    entry.insert(s("path"), s("common.yaml"));
    let mut m = Map::default();
    m.insert(s("version"), Value::Int(5));
    m.insert(s("defaults"), Value::Hash(defaults));
    m.insert(s("hierarchy"), Value::Array(vec![Value::Hash(entry)]));
    m
}

fn default_v3() -> Map {
    let mut m = Map::default();
    m.insert(s("backends"), Value::Array(vec![s("yaml")]));
    m.insert(
        s("hierarchy"),
        Value::Array(vec![s("nodes/%{::trusted.certname}"), s("common")]),
    );
    m.insert(s("merge_behavior"), s("native"));
    m
}

/// A value as Puppet's string formatter quotes it in messages (`'x'`).
fn puppet_string(v: &Value) -> String {
    match v {
        Value::String(s) => format!("'{s}'"),
        other => hiera_value::ruby::inspect(other),
    }
}

struct Validator<'a> {
    path: String,
    text: &'a str,
    file_given: bool,
}

impl Validator<'_> {
    fn type_error(&self, detail: &str) -> Error {
        Error::Puppet(format!(
            "The Lookup Configuration at '{}' has wrong type, {detail}",
            self.path
        ))
    }

    /// An issue error with Puppet's ` (file: F, line: L)` suffix.
    fn issue(&self, message: &str, line: Option<usize>) -> Error {
        let mut m = message.to_string();
        if self.file_given {
            match line {
                Some(l) => m.push_str(&format!(" (file: {}, line: {l})", self.path)),
                None => m.push_str(&format!(" (file: {})", self.path)),
            }
        }
        Error::issue(m)
    }

    fn find_line(&self, re: &regex::Regex, start: usize) -> Option<usize> {
        find_line_matching(self.text, re, start)
    }

    fn check_keys(&self, map: &Map, allowed: &[&str], prefix: &str) -> Result<()> {
        for k in map.keys() {
            match k {
                Value::String(k) if allowed.contains(&k.as_str()) => {}
                Value::String(k) => {
                    // Puppet's words, then where the key is and what is valid there.
                    let re = regex::Regex::new(&format!(
                        r#"^\s*(-\s+)?["']?{}["']?\s*:"#,
                        regex::escape(k)
                    ))
                    .ok();
                    let line = re.and_then(|re| self.find_line(&re, 1));
                    let at = match (self.file_given, line) {
                        (true, Some(l)) => format!("{}:{l}: ", self.path),
                        _ => String::new(),
                    };
                    return Err(self.type_error(&format!(
                        "{prefix}unrecognized key '{k}' ({at}valid keys here: {})",
                        allowed.join(", ")
                    )));
                }
                other => {
                    return Err(self.type_error(&format!(
                        "{prefix}unrecognized key {}",
                        hiera_value::ruby::inspect(other)
                    )))
                }
            }
        }
        Ok(())
    }

    fn nes(&self, v: &Value, what: &str) -> Result<String> {
        match v {
            Value::String(s) if !s.is_empty() => Ok(s.clone()),
            Value::String(_) => {
                Err(self.type_error(&format!("{what} expects a String[1] value, got String")))
            }
            other => Err(self.type_error(&format!(
                "{what} expects a String value, got {}",
                hiera_types::simple_name(other)
            ))),
        }
    }

    fn nes_array(
        &self,
        v: &Value,
        what: &str,
        min: usize,
        max: Option<usize>,
    ) -> Result<Vec<String>> {
        let Value::Array(items) = v else {
            return Err(self.type_error(&format!(
                "{what} expects an Array value, got {}",
                hiera_types::simple_name(v)
            )));
        };
        for (i, item) in items.iter().enumerate() {
            self.nes(item, &format!("{what} index {i}"))?;
        }
        match max {
            Some(m) if m == min && items.len() != m => {
                return Err(self.type_error(&format!(
                    "{what} expects size to be {m}, got {}",
                    items.len()
                )))
            }
            _ if items.len() < min => {
                return Err(self.type_error(&format!(
                    "{what} expects size to be at least {min}, got {}",
                    items.len()
                )))
            }
            _ => {}
        }
        Ok(items
            .iter()
            .filter_map(|i| i.as_str().map(str::to_string))
            .collect())
    }

    fn options(&self, v: &Value, what: &str) -> Result<Map> {
        let Value::Hash(h) = v else {
            return Err(self.type_error(&format!(
                "{what} expects a Hash value, got {}",
                hiera_types::simple_name(v)
            )));
        };
        for k in h.keys() {
            let ok = matches!(k, Value::String(s) if option_name_ok(s));
            if !ok {
                return Err(self.type_error(&format!(
                    "{what} key of entry {} expects a match for Pattern[/\\A[A-Za-z](:?[0-9A-Za-z_-]*[0-9A-Za-z])?\\z/], got {}",
                    puppet_string(k),
                    puppet_string(k)
                )));
            }
        }
        Ok(h.clone())
    }

    fn load_v5(&mut self, mut map: Map, ctx: &LoadContext, cfg: &mut HieraConfig) -> Result<()> {
        cfg.version = 5;
        // `||=`: absent or null take Puppet's defaults.
        let defaults_v = match map.get(&s("defaults")) {
            None | Some(Value::Null) => default_v5()
                .get(&s("defaults"))
                .cloned()
                .unwrap_or(Value::Null),
            Some(v) => v.clone(),
        };
        map.insert(s("defaults"), defaults_v.clone());
        if matches!(map.get(&s("hierarchy")), None | Some(Value::Null)) {
            map.insert(
                s("hierarchy"),
                default_v5()
                    .get(&s("hierarchy"))
                    .cloned()
                    .unwrap_or(Value::Null),
            );
        }
        self.check_keys(&map, V5_TOP_KEYS, "")?;
        if let Some(v) = map.get(&s("version")) {
            if !matches!(v, Value::Int(_)) {
                return Err(self.type_error(&format!(
                    "entry 'version' expects an Integer value, got {}",
                    hiera_types::simple_name(v)
                )));
            }
        }
        let Value::Hash(defaults) = &defaults_v else {
            return Err(self.type_error(&format!(
                "entry 'defaults' expects a Struct value, got {}",
                hiera_types::simple_name(&defaults_v)
            )));
        };
        self.check_keys(defaults, V5_DEFAULT_KEYS, "entry 'defaults' ")?;
        for k in ["data_hash", "lookup_key", "data_dig", "datadir"] {
            if let Some(v) = defaults.get(&s(k)) {
                self.nes(v, &format!("entry 'defaults' entry '{k}'"))?;
            }
        }
        let default_options = match defaults.get(&s("options")) {
            Some(v) => Some(self.options(v, "entry 'defaults' entry 'options'")?),
            None => None,
        };
        let mut hierarchies: Vec<(&str, Vec<Map>)> = Vec::new();
        for key in ["hierarchy", "plan_hierarchy", "default_hierarchy"] {
            if let Some(h) = map.get(&s(key)) {
                let Value::Array(items) = h else {
                    return Err(self.type_error(&format!(
                        "entry '{key}' expects an Array value, got {}",
                        hiera_types::simple_name(h)
                    )));
                };
                let mut entries = Vec::new();
                for (i, item) in items.iter().enumerate() {
                    let prefix = format!("entry '{key}' index {i} ");
                    let Value::Hash(e) = item else {
                        return Err(self.type_error(&format!(
                            "{prefix}expects a Struct value, got {}",
                            hiera_types::simple_name(item)
                        )));
                    };
                    self.check_keys(e, V5_ENTRY_KEYS, &prefix)?;
                    match e.get(&s("name")) {
                        None => {
                            return Err(
                                self.type_error(&format!("{prefix}expects a value for key 'name'"))
                            )
                        }
                        Some(n) => {
                            self.nes(n, &format!("{prefix}entry 'name'"))?;
                        }
                    }
                    for k in [
                        "data_hash",
                        "lookup_key",
                        "hiera3_backend",
                        "v4_data_hash",
                        "data_dig",
                        "path",
                        "glob",
                        "uri",
                        "datadir",
                    ] {
                        if let Some(v) = e.get(&s(k)) {
                            self.nes(v, &format!("{prefix}entry '{k}'"))?;
                        }
                    }
                    for k in ["paths", "globs", "uris"] {
                        if let Some(v) = e.get(&s(k)) {
                            self.nes_array(v, &format!("{prefix}entry '{k}'"), 1, None)?;
                        }
                    }
                    if let Some(v) = e.get(&s("mapped_paths")) {
                        self.nes_array(v, &format!("{prefix}entry 'mapped_paths'"), 3, Some(3))?;
                    }
                    if let Some(v) = e.get(&s("options")) {
                        self.options(v, &format!("{prefix}entry 'options'"))?;
                    }
                    entries.push(e.clone());
                }
                hierarchies.push((key, entries));
            }
        }
        // Issue validation (validate_defaults / validate_hierarchy).
        let fcount = |m: &Map, keys: &[&str]| keys.iter().filter(|k| m.contains_key(&s(k))).count();
        if fcount(defaults, FUNCTION_KEYS) > 1 {
            return Err(self.issue(
                "Only one of data_hash, lookup_key, data_dig, or hiera3_backend can be defined in defaults",
                None,
            ));
        }
        if let Some(o) = &default_options {
            for r in ["path", "uri"] {
                if o.contains_key(&s(r)) {
                    return Err(self.issue(
                        &format!("Option key '{r}' used in defaults is reserved by Puppet"),
                        None,
                    ));
                }
            }
        }
        for (key, entries) in &hierarchies {
            if *key == "default_hierarchy" && ctx.layer != Layer::Module {
                #[allow(clippy::regex_creation_in_loops)] // runs once: it returns
                let re = regex::Regex::new(r"(?:^|\s+)default_hierarchy:").expect("static regex");
                return Err(self.issue(
                    "'default_hierarchy' is only allowed in the module layer",
                    self.find_line(&re, 1),
                ));
            }
            for e in entries {
                let name = e
                    .get(&s("name"))
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string();
                match fcount(e, ALL_FUNCTION_KEYS) {
                    0 if fcount(defaults, FUNCTION_KEYS) == 0 => {
                        return Err(self.issue(
                            &format!("One of data_hash, lookup_key, data_dig, or hiera3_backend must be defined in hierarchy '{name}'"),
                            None,
                        ));
                    }
                    0 | 1 => {}
                    _ => {
                        return Err(self.issue(
                            &format!("Only one of data_hash, lookup_key, data_dig, or hiera3_backend can be defined in hierarchy '{name}'"),
                            None,
                        ));
                    }
                }
                if let Some(b) = e.get(&s("hiera3_backend")).and_then(Value::as_str) {
                    if ctx.layer != Layer::Global {
                        #[allow(clippy::regex_creation_in_loops)] // runs once: it returns
                        let re = regex::Regex::new(r"\s+hiera3_backend:").expect("static regex");
                        return Err(self.issue(
                            "'hiera3_backend' is only allowed in the global layer",
                            self.find_line(&re, 1),
                        ));
                    }
                    if b == "json" || b == "yaml" {
                        let re = regex::Regex::new(&format!(
                            r#"\s+hiera3_backend:\s*['"]?{}(?:[^\w]|$)"#,
                            regex::escape(b)
                        ))
                        .expect("escaped regex");
                        return Err(self.issue(
                            &format!(
                                "Use \"data_hash: {b}_data\" instead of \"hiera3_backend: {b}\""
                            ),
                            self.find_line(&re, 1),
                        ));
                    }
                }
                if fcount(e, LOCATION_KEYS) > 1 {
                    return Err(self.issue(
                        &format!("Only one of path, paths, glob, globs, uri, uris, or mapped_paths can be defined in hierarchy '{name}'"),
                        None,
                    ));
                }
                if let Some(Value::Hash(o)) = e.get(&s("options")) {
                    for r in ["path", "uri"] {
                        if o.contains_key(&s(r)) {
                            return Err(self.issue(
                                &format!("Option key '{r}' used in hierarchy '{name}' is reserved by Puppet"),
                                None,
                            ));
                        }
                    }
                }
            }
        }
        let default_datadir = defaults
            .get(&s("datadir"))
            .and_then(Value::as_str)
            .unwrap_or("data")
            .to_string();
        for (key, entries) in hierarchies {
            // plan_hierarchy serves only plans (Puppet::Pal's ScriptCompiler): validated above,
            // never built, so a repeated name in it is not an error for a lookup.
            if key == "plan_hierarchy" {
                continue;
            }
            let built =
                self.build_v5_entries(&entries, defaults, &default_options, &default_datadir, cfg)?;
            match key {
                "hierarchy" => cfg.hierarchy = built,
                "default_hierarchy" => cfg.default_hierarchy = Some(built),
                _ => {}
            }
        }
        Ok(())
    }

    fn build_v5_entries(
        &self,
        entries: &[Map],
        defaults: &Map,
        default_options: &Option<Map>,
        default_datadir: &str,
        cfg: &mut HieraConfig,
    ) -> Result<Vec<Entry>> {
        let mut out: Vec<Entry> = Vec::new();
        // Names seen so far: a set, so that a 20,000-level hierarchy is not quadratic.
        let mut names = std::collections::HashSet::new();
        for e in entries {
            let name = e
                .get(&s("name"))
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string();
            if !names.insert(name.clone()) && cfg.deferred_error.is_none() {
                cfg.deferred_error = Some(self.duplicate_name_error(&name));
            }
            let (kind, function) = match ALL_FUNCTION_KEYS.iter().find(|k| e.contains_key(&s(k))) {
                Some(k) => (
                    kind_of(k),
                    e.get(&s(k))
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_string(),
                ),
                None => match FUNCTION_KEYS.iter().find(|k| defaults.contains_key(&s(k))) {
                    Some(k) => (
                        kind_of(k),
                        defaults
                            .get(&s(k))
                            .and_then(Value::as_str)
                            .unwrap_or_default()
                            .to_string(),
                    ),
                    None => (FunctionKind::DataHash, String::new()),
                },
            };
            let datadir = e
                .get(&s("datadir"))
                .and_then(Value::as_str)
                .unwrap_or(default_datadir);
            let datadir = path_plus(&cfg.root.display().to_string(), datadir);
            let strs = |k: &str| -> Vec<String> {
                match e.get(&s(k)) {
                    Some(Value::Array(a)) => a
                        .iter()
                        .filter_map(|x| x.as_str().map(str::to_string))
                        .collect(),
                    Some(Value::String(x)) => vec![x.clone()],
                    _ => Vec::new(),
                }
            };
            let locations = match LOCATION_KEYS.iter().find(|k| e.contains_key(&s(k))) {
                Some(&"path") | Some(&"paths") => {
                    Locations::Paths(strs(if e.contains_key(&s("path")) {
                        "path"
                    } else {
                        "paths"
                    }))
                }
                Some(&"glob") | Some(&"globs") => {
                    Locations::Globs(strs(if e.contains_key(&s("glob")) {
                        "glob"
                    } else {
                        "globs"
                    }))
                }
                Some(&"uri") | Some(&"uris") => {
                    Locations::Uris(strs(if e.contains_key(&s("uri")) {
                        "uri"
                    } else {
                        "uris"
                    }))
                }
                Some(&"mapped_paths") => {
                    let m = strs("mapped_paths");
                    Locations::Mapped(m[0].clone(), m[1].clone(), m[2].clone())
                }
                _ => Locations::None,
            };
            let options = match e.get(&s("options")) {
                Some(Value::Hash(o)) => Some(o.clone()),
                _ => default_options.clone(),
            };
            out.push(Entry {
                name,
                kind,
                function,
                datadir,
                locations,
                options,
                extension: None,
                v3: false,
            });
        }
        Ok(out)
    }

    fn duplicate_name_error(&self, name: &str) -> Error {
        let re = regex::Regex::new(&format!(
            r#"\s+name:\s+['"]?{}(?:[^\w]|$)"#,
            regex::escape(name)
        ))
        .expect("escaped regex");
        let mut first = self.find_line(&re, 1);
        let mut line = first.and_then(|f| self.find_line(&re, f + 1));
        if line.is_none() {
            line = first;
            first = None;
        }
        let first_txt = first.map(|f| f.to_string()).unwrap_or_default();
        self.issue(
            &format!("Hierarchy name '{name}' defined more than once. First defined at (line: {first_txt})"),
            line,
        )
    }

    fn load_v4(&mut self, mut map: Map, cfg: &mut HieraConfig) -> Result<()> {
        cfg.version = 4;
        if matches!(map.get(&s("datadir")), None | Some(Value::Null)) {
            map.insert(s("datadir"), s("data"));
        }
        if matches!(map.get(&s("hierarchy")), None | Some(Value::Null)) {
            let mut e = Map::default();
            e.insert(s("name"), s("common"));
            e.insert(s("backend"), s("yaml"));
            map.insert(s("hierarchy"), Value::Array(vec![Value::Hash(e)]));
        }
        self.check_keys(&map, &["version", "datadir", "hierarchy"], "")?;
        let datadir = self.nes(
            map.get(&s("datadir")).unwrap_or(&Value::Null),
            "entry 'datadir'",
        )?;
        let Some(Value::Array(items)) = map.get(&s("hierarchy")) else {
            let h = map.get(&s("hierarchy")).unwrap_or(&Value::Null);
            return Err(self.type_error(&format!(
                "entry 'hierarchy' expects an Array value, got {}",
                hiera_types::simple_name(h)
            )));
        };
        let mut out: Vec<Entry> = Vec::new();
        for (i, item) in items.iter().enumerate() {
            let prefix = format!("entry 'hierarchy' index {i} ");
            let Value::Hash(e) = item else {
                return Err(self.type_error(&format!(
                    "{prefix}expects a Struct value, got {}",
                    hiera_types::simple_name(item)
                )));
            };
            self.check_keys(e, &["backend", "name", "datadir", "path", "paths"], &prefix)?;
            for k in ["backend", "name"] {
                match e.get(&s(k)) {
                    None => {
                        return Err(
                            self.type_error(&format!("{prefix}expects a value for key '{k}'"))
                        )
                    }
                    Some(v) => {
                        self.nes(v, &format!("{prefix}entry '{k}'"))?;
                    }
                }
            }
            for k in ["datadir", "path"] {
                if let Some(v) = e.get(&s(k)) {
                    self.nes(v, &format!("{prefix}entry '{k}'"))?;
                }
            }
            if let Some(v) = e.get(&s("paths")) {
                self.nes_array(v, &format!("{prefix}entry 'paths'"), 0, None)?;
            }
        }
        for item in items {
            let Value::Hash(e) = item else { continue };
            let get = |k: &str| e.get(&s(k)).and_then(Value::as_str).map(str::to_string);
            let name = get("name").unwrap_or_default();
            if out.iter().any(|x| x.name == name) && cfg.deferred_error.is_none() {
                cfg.deferred_error = Some(self.duplicate_name_error(&name));
            }
            let paths = match e.get(&s("paths")) {
                Some(Value::Array(a)) => a
                    .iter()
                    .filter_map(|x| x.as_str().map(str::to_string))
                    .collect(),
                _ => vec![get("path").unwrap_or_else(|| name.clone())],
            };
            let backend = get("backend").unwrap_or_default();
            let format = match DataFormat::of_backend(&backend) {
                Some(f) => f,
                None => {
                    // Raised when the providers are built, inside the provider's explain node.
                    #[allow(clippy::regex_creation_in_loops)] // once: the loop ends here
                    let re =
                        regex::Regex::new(&format!(r"[^\w]{}(?:[^\w]|$)", regex::escape(&backend)))
                            .expect("escaped regex");
                    if cfg.deferred_error.is_none() {
                        cfg.deferred_error = Some(self.issue(
                            &format!("No data provider is registered for backend '{backend}'"),
                            self.find_line(&re, 1),
                        ));
                    }
                    break;
                }
            };
            let dd = get("datadir").unwrap_or_else(|| datadir.clone());
            out.push(Entry {
                name,
                kind: FunctionKind::DataHash,
                function: format.data_hash_function().to_string(),
                datadir: path_plus(&cfg.root.display().to_string(), &dd),
                locations: Locations::Paths(paths),
                options: None,
                extension: Some(format!(".{}", format.extension())),
                v3: false,
            });
        }
        cfg.hierarchy = out;
        Ok(())
    }

    fn load_v3(&mut self, mut map: Map, ctx: &LoadContext, cfg: &mut HieraConfig) -> Result<()> {
        cfg.version = 3;
        let d = default_v3();
        for k in ["backends", "hierarchy", "merge_behavior"] {
            if matches!(map.get(&s(k)), None | Some(Value::Null)) {
                map.insert(s(k), d.get(&s(k)).cloned().unwrap_or(Value::Null));
            }
        }
        if matches!(map.get(&s("deep_merge_options")), None | Some(Value::Null)) {
            map.insert(s("deep_merge_options"), Value::Hash(Map::default()));
        }
        let flat = |v: &Value| -> Vec<Value> {
            match v {
                Value::Array(a) => a.clone(),
                other => vec![other.clone()],
            }
        };
        let backends_v = flat(map.get(&s("backends")).unwrap_or(&Value::Null));
        // HieraConfigV3#validate_config: one Struct of config_type's entries plus a Hash entry
        // per backend, asserted as a whole, so that every mismatch is reported in Puppet's
        // order (entries first, then unrecognized keys).
        let nes_or_list = "Variant[String[1], Array[String[1]]]";
        let mut entries = vec![
            "Optional['version'] => Integer[3, 3]".to_string(),
            format!("Optional['backends'] => {nes_or_list}"),
            "Optional['logger'] => String[1]".to_string(),
            "Optional['merge_behavior'] => Enum['deep', 'deeper', 'native']".to_string(),
            "Optional['deep_merge_options'] => Hash[String[1], Variant[String, Boolean]]"
                .to_string(),
            format!("Optional['hierarchy'] => {nes_or_list}"),
        ];
        let fixed = [
            "version",
            "backends",
            "logger",
            "merge_behavior",
            "deep_merge_options",
            "hierarchy",
        ];
        for b in backends_v.iter().filter_map(Value::as_str) {
            let entry = format!(
                "Optional[{}] => Hash[String[1], Any]",
                hiera_types::puppet_quote(b)
            );
            match fixed.iter().position(|k| *k == b) {
                Some(i) => entries[i] = entry,
                None if !entries.contains(&entry) => entries.push(entry),
                None => {}
            }
        }
        let struct_text = format!("Struct[{{{}}}]", entries.join(", "));
        if let Ok(t) = hiera_types::parse_cli(&struct_text) {
            let whole = Value::Hash(map.clone());
            if !t.is_instance(&whole) {
                return Err(Error::Puppet(hiera_types::describe_mismatch(
                    &format!("The Lookup Configuration at '{}'", self.path),
                    &t,
                    &whole,
                )));
            }
        }
        let mb = map
            .get(&s("merge_behavior"))
            .and_then(Value::as_str)
            .unwrap_or("native")
            .to_string();
        let hierarchy: Vec<String> = flat(map.get(&s("hierarchy")).unwrap_or(&Value::Null))
            .iter()
            .filter_map(|x| x.as_str().map(str::to_string))
            .collect();
        let mut seen: Vec<String> = Vec::new();
        for b in backends_v.iter().filter_map(|x| x.as_str()) {
            if seen.iter().any(|x| x == b) {
                let re = regex::Regex::new(&format!(r"[^\w]{}(?:[^\w]|$)", regex::escape(b)))
                    .expect("escaped regex");
                let mut first = self.find_line(&re, 1);
                let mut line = first.and_then(|f| self.find_line(&re, f + 1));
                if line.is_none() {
                    line = first;
                    first = None;
                }
                return Err(self.issue(
                    &format!(
                        "Backend '{b}' is defined more than once. First defined at (line: {})",
                        first.map(|f| f.to_string()).unwrap_or_default()
                    ),
                    line,
                ));
            }
            seen.push(b.to_string());
            let format = DataFormat::of_backend(b);
            let bc = match map.get(&s(b)) {
                Some(Value::Hash(h)) => Some(h.clone()),
                _ => None,
            };
            let (datadir, explicit) = match bc
                .as_ref()
                .and_then(|h| h.get(&s("datadir")))
                .and_then(Value::as_str)
            {
                Some(d) => (d.to_string(), true),
                None => (
                    format!(
                        "{}/environments/%{{::environment}}/hieradata",
                        ctx.codedir.display()
                    ),
                    false,
                ),
            };
            let ext = match bc
                .as_ref()
                .and_then(|h| h.get(&s("extension")))
                .and_then(Value::as_str)
            {
                Some(e) => format!(".{e}"),
                // eyaml's and other backends' extension is their name.
                None => format!(".{}", format.map_or(b, |f| f.extension())),
            };
            let (kind, function) = match (format, b) {
                (Some(f), _) => (FunctionKind::DataHash, f.data_hash_function().to_string()),
                (None, "eyaml") => (FunctionKind::LookupKey, EYAML_LOOKUP_KEY.to_string()),
                (None, other) => (FunctionKind::Hiera3Backend, other.to_string()),
            };
            // Puppet passes a data_hash backend no options (only eyaml gets its section).
            let mut options = if kind == FunctionKind::DataHash {
                None
            } else {
                bc.clone()
            };
            if let Some(o) = options.as_mut() {
                o.shift_remove(&s("datadir"));
            }
            cfg.hierarchy.push(Entry {
                name: b.to_string(),
                kind,
                function,
                datadir,
                locations: Locations::Paths(hierarchy.clone()),
                options,
                extension: Some(ext),
                v3: explicit,
            });
        }
        let dmo = match map.get(&s("deep_merge_options")) {
            Some(Value::Hash(h)) => h.clone(),
            _ => Map::default(),
        };
        cfg.v3_merge = Some(V3Merge {
            behavior: mb,
            deep_merge_options: dmo,
        });
        Ok(())
    }
}

fn kind_of(k: &str) -> FunctionKind {
    match k {
        "lookup_key" => FunctionKind::LookupKey,
        "data_dig" => FunctionKind::DataDig,
        "hiera3_backend" => FunctionKind::Hiera3Backend,
        _ => FunctionKind::DataHash,
    }
}

/// `/\A[A-Za-z](:?[0-9A-Za-z_-]*[0-9A-Za-z])?\z/`
fn option_name_ok(s: &str) -> bool {
    let b = s.as_bytes();
    if b.is_empty() || !b[0].is_ascii_alphabetic() {
        return false;
    }
    if b.len() == 1 {
        return true;
    }
    let rest = &b[1..];
    let rest = rest.strip_prefix(b":").unwrap_or(rest);
    if rest.is_empty() {
        return false;
    }
    let last = rest[rest.len() - 1];
    last.is_ascii_alphanumeric()
        && rest
            .iter()
            .all(|c| c.is_ascii_alphanumeric() || *c == b'_' || *c == b'-')
}

/// Puppet's `find_line_matching`: the first line (1-based, from `start`) whose text, with
/// `#` comments outside quotes stripped, matches.
pub(crate) fn find_line_matching(text: &str, re: &regex::Regex, start: usize) -> Option<usize> {
    for (i, line) in text.lines().enumerate() {
        let n = i + 1;
        if n < start {
            continue;
        }
        let mut quote: Option<char> = None;
        let mut stripped = String::new();
        for c in line.chars() {
            if c == '"' || c == '\'' {
                if quote == Some(c) {
                    quote = None;
                } else if quote.is_none() {
                    quote = Some(c);
                }
            } else if c == '#' {
                break;
            }
            stripped.push(c);
        }
        if re.is_match(&stripped) {
            return Some(n);
        }
    }
    None
}

/// Ruby's `Pathname#+`: an absolute right side replaces the left; leading `.` and `..`
/// components of the right side are resolved against the left.
pub fn path_plus(left: &str, right: &str) -> String {
    if right.starts_with('/') {
        return right.to_string();
    }
    let mut base = left.trim_end_matches('/').to_string();
    if base.is_empty() && left.starts_with('/') {
        base = String::new();
    }
    let mut rest = right;
    loop {
        if rest == "." || rest.is_empty() {
            rest = "";
            break;
        }
        if let Some(r) = rest.strip_prefix("./") {
            rest = r.trim_start_matches('/');
            continue;
        }
        if rest == ".." || rest.starts_with("../") {
            let last = base.rsplit('/').next().unwrap_or("");
            if last == ".." || (base.is_empty() && !left.starts_with('/')) {
                break;
            }
            if let Some(i) = base.rfind('/') {
                base.truncate(i);
            } else {
                base.clear();
            }
            rest = rest.get(3..).unwrap_or("").trim_start_matches('/');
            continue;
        }
        break;
    }
    if rest.is_empty() {
        if base.is_empty() {
            return if left.starts_with('/') {
                "/".into()
            } else {
                ".".into()
            };
        }
        return base;
    }
    if base.is_empty() && left.starts_with('/') {
        return format!("/{rest}");
    }
    if base.is_empty() {
        return rest.to_string();
    }
    format!("{base}/{rest}")
}

/// A location of a hierarchy entry after interpolation.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ResolvedLocation {
    /// As declared (for globs: the absolute pattern), printed as `Original path`.
    pub original: String,
    /// The absolute file path, or the URI.
    pub location: String,
    pub exists: bool,
    pub uri: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pathname_plus() {
        assert_eq!(path_plus("/a/b", "data"), "/a/b/data");
        assert_eq!(path_plus("/a/b", "/abs"), "/abs");
        assert_eq!(path_plus("/a/b", "./data"), "/a/b/data");
        assert_eq!(path_plus("/a/b", "../data"), "/a/data");
        assert_eq!(path_plus("/a/b", "../../data"), "/data");
        assert_eq!(path_plus("/a/b/", "x.yaml"), "/a/b/x.yaml");
        assert_eq!(path_plus("/a/b", "x/../y"), "/a/b/x/../y");
    }

    /// Where a hiera.yaml writes its datadirs and locations, each with the value the
    /// configuration takes: the level's own datadir, else the defaults'.
    #[test]
    fn written_settings_point_at_the_text() {
        let dir = std::env::temp_dir().join(format!("hiera-config-written-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("hiera.yaml");
        let text = "version: 5\ndefaults:\n  datadir: hieradata\n  data_hash: yaml_data\nhierarchy:\n  - name: a\n    datadir: other\n    path: \"a/%{facts.x}.yaml\"  # not b.yaml\n  - name: b.yaml\n    paths:\n      - b.yaml\n      - 'c.yaml'\n  - name: g\n    glob: \"*.yaml\"\n";
        std::fs::write(&path, text).unwrap();
        let ctx = LoadContext {
            layer: Layer::Environment,
            codedir: dir.clone(),
            strict_off: true,
        };
        let cfg = HieraConfig::load(&path, &ctx, &mut Vec::new()).unwrap();
        let root = dir.display().to_string();
        let written = cfg.written_settings(text.as_bytes());
        let got: Vec<String> = written
            .iter()
            .map(|w| {
                let end = w.end.map(|e| e.to_string()).unwrap_or_default();
                let absolute = w.absolute.strip_prefix(&root).unwrap_or(&w.absolute);
                format!("{} {} {}-{end} {absolute}", w.setting, w.template, w.start)
            })
            .collect();
        let _ = std::fs::remove_dir_all(&dir);
        assert_eq!(
            got,
            [
                "datadir hieradata 3:12-3:21 /hieradata",
                "datadir other 7:14-7:19 /other",
                "path a/%{facts.x}.yaml 8:11-8:30 /other/a/%{facts.x}.yaml",
                "paths b.yaml 11:9-11:15 /hieradata/b.yaml",
                "paths c.yaml 12:9-12:17 /hieradata/c.yaml",
                "glob *.yaml 14:11-14:19 /hieradata/*.yaml",
            ]
        );
        // Version 3, or a text that does not parse: nothing.
        assert!(cfg.written_settings(b"version: 5\nhierarchy: [").is_empty());
    }

    #[test]
    fn option_names() {
        assert!(option_name_ok("a"));
        assert!(option_name_ok("pkcs7_private_key"));
        assert!(option_name_ok("a-b1"));
        assert!(!option_name_ok("a_"));
        assert!(!option_name_ok("_a"));
        assert!(!option_name_ok("1a"));
    }

    /// Hiera 3's and 4's backend names and Hiera 5's function names reach the same
    /// [`DataFormat`]s: the function, the default extension and the format of each level.
    #[test]
    fn backends_read_their_formats() {
        use DataFormat::{Hocon, Json, Yaml};
        use FunctionKind::{DataHash, Hiera3Backend, LookupKey};
        let dir = std::env::temp_dir().join(format!("hiera-config-formats-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let levels = |name: &str, text: &str| {
            let p = dir.join(name);
            std::fs::write(&p, text).unwrap();
            // Hiera 4 is for environments and modules only.
            let ctx = LoadContext {
                layer: if name == "v4.yaml" {
                    Layer::Environment
                } else {
                    Layer::Global
                },
                codedir: dir.clone(),
                strict_off: true,
            };
            let cfg = HieraConfig::load(&p, &ctx, &mut Vec::new()).unwrap();
            cfg.hierarchy
                .iter()
                .map(|e| {
                    let ext = e.extension.clone();
                    (e.kind, e.function.clone(), ext, e.data_format())
                })
                .collect::<Vec<_>>()
        };
        let l = |k, f: &str, x: Option<&str>, d| (k, f.to_string(), x.map(str::to_string), d);
        assert_eq!(
            levels(
                "v3.yaml",
                ":backends: [yaml, json, hocon, eyaml, other]\n:hierarchy: [common]\n:json: {extension: js}\n"
            ),
            vec![
                l(DataHash, "yaml_data", Some(".yaml"), Some(Yaml)),
                l(DataHash, "json_data", Some(".js"), Some(Json)),
                l(DataHash, "hocon_data", Some(".conf"), Some(Hocon)),
                l(LookupKey, "eyaml_lookup_key", Some(".eyaml"), Some(Yaml)),
                l(Hiera3Backend, "other", Some(".other"), None),
            ]
        );
        assert_eq!(
            levels(
                "v4.yaml",
                "version: 4\nhierarchy:\n  - {name: a, backend: yaml}\n  - {name: b, backend: json}\n  - {name: c, backend: hocon}\n"
            ),
            vec![
                l(DataHash, "yaml_data", Some(".yaml"), Some(Yaml)),
                l(DataHash, "json_data", Some(".json"), Some(Json)),
                l(DataHash, "hocon_data", Some(".conf"), Some(Hocon)),
            ]
        );
        // A function named under the wrong kind reads no data files (Puppet cannot find it).
        assert_eq!(
            levels(
                "v5.yaml",
                "version: 5\nhierarchy:\n  - {name: a, data_hash: json_data, path: a}\n  - {name: b, lookup_key: eyaml_lookup_key, path: b}\n  - {name: c, lookup_key: yaml_data, path: c}\n  - {name: d, data_hash: eyaml_lookup_key, path: d}\n  - {name: e, data_hash: my_data, path: e}\n"
            ),
            vec![
                l(DataHash, "json_data", None, Some(Json)),
                l(LookupKey, "eyaml_lookup_key", None, Some(Yaml)),
                l(LookupKey, "yaml_data", None, None),
                l(DataHash, "eyaml_lookup_key", None, None),
                l(DataHash, "my_data", None, None),
            ]
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn ruby_to_i_is_lenient() {
        assert_eq!(ruby_to_i(&Value::str("5")), 5);
        assert_eq!(ruby_to_i(&Value::str("5x")), 5);
        assert_eq!(ruby_to_i(&Value::str("x")), 0);
    }
}
