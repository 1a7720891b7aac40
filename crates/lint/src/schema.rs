//! Class parameters as the schema of Hiera data: what the Puppet code of a control repo
//! declares and looks up, and what its data files reference, with positions. `lint` (the
//! rules `unknown-class-parameter`, `unknown-class`, `parameter-type-mismatch`, `unused-key`)
//! and the language server read it.
//!
//! # The code side: [`Schema`]
//!
//! [`Schema::load`] (or [`Schema::for_layers`], from the engine's
//! [`Layers`](hiera_engine::engine::Layers)) reads the `.pp` files of the environment's
//! `manifests/` and of every module's `manifests/`, `functions/` and `types/`, and the
//! `.epp`/`.erb` files of every module's `templates/`. Each file is parsed
//! on its own into a [`Manifest`] ([`parse_manifest`], tree-sitter-puppet; templates by
//! [`scan_template`]): its
//!
//! - [`Class`]es, each [`Param`] with its name, its Puppet type as written
//!   ([`Param::type_text`]) and parsed by the project's exact type system
//!   ([`Param::ty`], a [`hiera_types::Type`]; type aliases of the modulepath's `types/*.pp`
//!   resolved by the schema), its default expression as written ([`Param::default`]);
//! - [`LookupCall`]s: `lookup('k')`, `lookup("k", …)`, `lookup(['a', 'b'])`,
//!   `lookup({'name' => 'k'})`, `'k'.lookup`, `hiera('k')`, `hiera_array`, `hiera_hash`,
//!   `hiera_include` with a literal key; [`DynamicLookup`]s for keys built at run time
//!   (`lookup("ntp::${x}")`: the literal prefix is kept);
//! - [`TypeAlias`]es: `type Mod::Name = …`.
//!
//! The schema indexes every file's contribution: [`Schema::class`], [`Schema::param`] (a data
//! key `CLASS::PARAM` to its declaration), [`Schema::lookups_of`] (a key to every call),
//! [`Schema::params`] (every parameter, for completion), [`Schema::resolve_type`].
//!
//! **Editing**: [`Schema::update_file`] replaces one file's contribution (the editor's buffer,
//! unsaved text included) or removes it, and re-indexes; only that file is parsed again (every
//! parameter's type is resolved again only when the file's type aliases changed).
//!
//! # The data side: [`data_references`]
//!
//! One data file's text (YAML, JSON or HOCON, read by the readers lookups use) gives its
//! top-level keys ([`DataKey`]), the keys its interpolations read (`%{lookup('k')}`,
//! `%{hiera('k')}`, `%{alias('k')}`: [`DataReference`]) and its `lookup_options` entries
//! ([`OptionsEntry`]).
//!
//! # Positions
//!
//! Every [`Position`] is **1-based** in line and column, the column counted in characters
//! (Unicode scalar values), as lint findings and the data readers' marks count them; it also
//! carries the 0-based **byte offset** in the file, from which a client computes any other
//! encoding (LSP's UTF-16 columns: `text[line_start..offset].encode_utf16().count()`).
//! A [`Span`] is a start and an end (exclusive) position.
//!
//! # Puppet's rules this follows (checked against Puppet 8.10)
//!
//! - Automatic parameter lookup asks Hiera for `CLASS::PARAM` (the class name in lower case).
//! - A Hiera value `~` (null) for a parameter **with a default** is as if not found: the default
//!   is used. For a parameter **without** one, `undef` is bound and checked against the type
//!   (`parameter 'x' expects a String value, got Undef`; `Optional[…]` accepts it).
//! - An untyped parameter is `Any`. A `Sensitive[…]` parameter takes a Sensitive value only:
//!   a plain string from Hiera fails unless `lookup_options` give `convert_to: Sensitive`.

pub use crate::manifests::{
    root_key, Class, DynamicLookup, LookupCall, Manifest, Param, TypeAlias,
};
pub use crate::position::{Position, Span};

use crate::manifests::resolve_type;
use hiera_engine::interpolation::{parse_expr, tokenize, Method, Token};
use hiera_formats::format::DataFormat;
use hiera_formats::lines::LineIndex;
use hiera_types::Type;
use hiera_value::value::{Map, Value};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// Parses one `.pp` file (a manifest, function or type alias file). Never fails: what does
/// not parse is left out ([`Manifest::has_errors`]). Parameter types are parsed without
/// aliases; [`Schema::update_file`] resolves them.
pub fn parse_manifest(file: &Path, text: &str) -> Manifest {
    super::manifests::parse(file, text)
}

/// Scans an EPP or ERB template for lookups of literal keys: `lookup('k')`, `hiera('k')`,
/// `call_function('lookup', ['k'])`, `scope.call_function('hiera', 'k')`.
pub fn scan_template(file: &Path, text: &str) -> Manifest {
    use std::sync::OnceLock;
    static RE: OnceLock<regex::Regex> = OnceLock::new();
    let re = RE.get_or_init(|| {
        regex::Regex::new(
            r##"\b(lookup|hiera|hiera_array|hiera_hash)\s*\(\s*(?:\[\s*)?('[^'$\n]*'|"[^"$\n]*")|call_function\(\s*['"](lookup|hiera|hiera_array|hiera_hash)['"]\s*,\s*(?:\[\s*)?('[^'\n]*'|"[^"#\n]*")"##,
        )
        .expect("a valid regex")
    });
    let mut m = Manifest {
        file: file.to_path_buf(),
        ..Default::default()
    };
    let index = LineIndex::new(text);
    for caps in re.captures_iter(text) {
        let (Some(f), Some(k)) = (caps.get(1).or(caps.get(3)), caps.get(2).or(caps.get(4))) else {
            continue;
        };
        let key = &k.as_str()[1..k.as_str().len() - 1];
        if key.is_empty() {
            continue;
        }
        m.lookups.push(LookupCall {
            key: key.to_string(),
            root: root_key(key),
            function: f.as_str().to_string(),
            file: file.to_path_buf(),
            span: Span {
                start: Position::in_lines(&index, k.start()),
                end: Position::in_lines(&index, k.end()),
            },
        });
    }
    m
}

/// Where a class or lookup is: an index into the schema's files and into that file's list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct At {
    file: usize,
    item: usize,
}

/// The Puppet code of a control repo, indexed: classes and their parameters, lookups, type
/// aliases. See the [module documentation](self).
#[derive(Debug, Clone, Default)]
pub struct Schema {
    /// `(module, directory)`: the environment's (module `None`) and every module's.
    roots: Vec<(Option<String>, PathBuf)>,
    files: Vec<Manifest>,
    by_path: HashMap<PathBuf, usize>,
    classes: HashMap<String, At>,
    lookups: HashMap<String, Vec<At>>,
    aliases: HashMap<String, (usize, usize)>,
}

/// The directories of a module whose `.pp` files are read, and its templates.
const MODULE_CODE_DIRS: &[&str] = &["manifests", "functions", "types"];

impl Schema {
    /// Reads the code of the environment at `environment_dir` (its `manifests/`) and of the
    /// `modules` (name, directory) in modulepath order. The first definition of a class wins.
    pub fn load(environment_dir: Option<&Path>, modules: &[(String, PathBuf)]) -> Schema {
        Schema::load_in(&hiera_engine::fs::RealFs, environment_dir, modules)
    }

    /// [`load`](Self::load), the code read through `fs` (an editor's unsaved buffers
    /// among it).
    pub fn load_in(
        fs: &dyn hiera_engine::fs::Fs,
        environment_dir: Option<&Path>,
        modules: &[(String, PathBuf)],
    ) -> Schema {
        let mut s = Schema::default();
        let mut parser = super::manifests::parser();
        if let Some(env) = environment_dir {
            s.roots.push((None, env.to_path_buf()));
            let mut files = Vec::new();
            files_with(fs, &env.join("manifests"), &["pp"], &mut files, 0);
            s.read_files(fs, parser.as_mut(), files, None);
        }
        for (name, dir) in modules {
            s.roots.push((Some(name.clone()), dir.clone()));
            let mut files = Vec::new();
            for sub in MODULE_CODE_DIRS {
                files_with(fs, &dir.join(sub), &["pp"], &mut files, 0);
            }
            files_with(fs, &dir.join("templates"), &["epp", "erb"], &mut files, 0);
            s.read_files(fs, parser.as_mut(), files, Some(name));
        }
        s.reindex(true);
        s
    }

    /// [`load`](Self::load) for the layers the engine looks up (`Workspace::layers`).
    pub fn for_layers(layers: &hiera_engine::engine::Layers) -> Schema {
        Schema::load(layers.environment_dir.as_deref(), &layers.modules)
    }

    fn read_files(
        &mut self,
        fs: &dyn hiera_engine::fs::Fs,
        mut parser: Option<&mut tree_sitter::Parser>,
        mut files: Vec<PathBuf>,
        module: Option<&String>,
    ) {
        files.sort();
        for f in files {
            let Ok(bytes) = fs.read(&f) else {
                continue;
            };
            let (text, invalid) = match String::from_utf8(bytes) {
                Ok(text) => (text, None),
                Err(e) => {
                    let at = e.utf8_error().valid_up_to();
                    let byte = e.as_bytes()[at];
                    let text = String::from_utf8_lossy(e.as_bytes()).into_owned();
                    // The bytes before the first invalid one are the same in the lossy text.
                    (text.clone(), Some((Position::of_offset(&text, at), byte)))
                }
            };
            let mut m = if is_template(&f) {
                scan_template(&f, &text)
            } else {
                match parser.as_deref_mut() {
                    Some(p) => {
                        let mut m = super::manifests::parse_with(p, &f, &text);
                        m.invalid_utf8 = invalid;
                        m
                    }
                    None => continue,
                }
            };
            m.module = module.cloned();
            self.by_path.insert(f, self.files.len());
            self.files.push(m);
        }
    }

    /// Replaces what `file` contributes by what `text` holds (`None`: the file is gone),
    /// as an editor does after an edit, and re-indexes. A `.epp`/`.erb` file is scanned as a
    /// template, anything else parsed as Puppet code. The file's module is the root
    /// (environment or module directory) holding it.
    pub fn update_file(&mut self, file: &Path, text: Option<&str>) {
        let old_aliases = self
            .by_path
            .get(file)
            .map(|&i| self.files[i].type_aliases.clone())
            .unwrap_or_default();
        let new = text.map(|t| {
            let mut m = if is_template(file) {
                scan_template(file, t)
            } else {
                super::manifests::parse(file, t)
            };
            m.module = self.module_of(file);
            m
        });
        let new_aliases = new
            .as_ref()
            .map(|m| m.type_aliases.clone())
            .unwrap_or_default();
        match (self.by_path.get(file).copied(), new) {
            (Some(i), Some(m)) => self.files[i] = m,
            (Some(i), None) => {
                self.files.remove(i);
                self.by_path = self
                    .files
                    .iter()
                    .enumerate()
                    .map(|(i, m)| (m.file.clone(), i))
                    .collect();
            }
            (None, Some(m)) => {
                self.by_path.insert(file.to_path_buf(), self.files.len());
                self.files.push(m);
            }
            (None, None) => return,
        }
        let aliases_changed = strip_spans(&old_aliases) != strip_spans(&new_aliases);
        if !aliases_changed {
            // Only the new file's types need resolving.
            self.reindex(false);
            if let Some(&i) = self.by_path.get(file) {
                self.resolve_file(i);
            }
        } else {
            self.reindex(true);
        }
    }

    fn module_of(&self, file: &Path) -> Option<String> {
        self.roots
            .iter()
            .filter(|(_, d)| file.starts_with(d))
            .max_by_key(|(_, d)| d.components().count())
            .and_then(|(m, _)| m.clone())
    }

    fn reindex(&mut self, resolve: bool) {
        self.classes.clear();
        self.lookups.clear();
        self.aliases.clear();
        for (fi, m) in self.files.iter().enumerate() {
            for (ci, c) in m.classes.iter().enumerate() {
                self.classes
                    .entry(c.name.clone())
                    .or_insert(At { file: fi, item: ci });
            }
            for (li, l) in m.lookups.iter().enumerate() {
                self.lookups
                    .entry(l.root.clone())
                    .or_default()
                    .push(At { file: fi, item: li });
            }
            for (ai, a) in m.type_aliases.iter().enumerate() {
                self.aliases
                    .entry(a.name.to_ascii_lowercase())
                    .or_insert((fi, ai));
            }
        }
        if resolve {
            for i in 0..self.files.len() {
                self.resolve_file(i);
            }
        }
    }

    fn alias_texts(&self) -> HashMap<String, String> {
        self.aliases
            .iter()
            .map(|(k, &(f, a))| (k.clone(), self.files[f].type_aliases[a].text.clone()))
            .collect()
    }

    fn resolve_file(&mut self, i: usize) {
        if self.files[i].classes.iter().all(|c| c.params.is_empty()) {
            return;
        }
        let aliases = self.alias_texts();
        for c in &mut self.files[i].classes {
            for p in &mut c.params {
                p.ty = resolve_type(p.type_text.as_deref(), &aliases);
            }
        }
    }

    /// Every file's contribution, in load order.
    pub fn files(&self) -> &[Manifest] {
        &self.files
    }

    /// The contribution of `file`.
    pub fn file(&self, file: &Path) -> Option<&Manifest> {
        self.by_path.get(file).map(|&i| &self.files[i])
    }

    /// Every class (the first definition of each name).
    pub fn classes(&self) -> impl Iterator<Item = &Class> {
        self.classes
            .values()
            .map(|at| &self.files[at.file].classes[at.item])
    }

    /// The class named `name` (lower case, no leading `::`).
    pub fn class(&self, name: &str) -> Option<&Class> {
        self.classes
            .get(name)
            .map(|at| &self.files[at.file].classes[at.item])
    }

    /// The manifest defining the class named `name`.
    pub fn class_manifest(&self, name: &str) -> Option<&Manifest> {
        self.classes.get(name).map(|at| &self.files[at.file])
    }

    /// The class and parameter that automatic parameter lookup asks the data key `key`
    /// (`ntp::servers` → class `ntp`, parameter `servers`) for.
    pub fn param(&self, key: &str) -> Option<(&Class, &Param)> {
        let (class, param) = key.rsplit_once("::")?;
        let c = self.class(class)?;
        Some((c, c.param(param)?))
    }

    /// Every parameter as its data key (`ntp::servers`), with its class: completion's list.
    pub fn params(&self) -> impl Iterator<Item = (String, &Class, &Param)> {
        self.classes().flat_map(|c| {
            c.params
                .iter()
                .map(move |p| (format!("{}::{}", c.name, p.name), c, p))
        })
    }

    /// Every lookup of a literal key.
    pub fn lookups(&self) -> impl Iterator<Item = &LookupCall> {
        self.files.iter().flat_map(|m| m.lookups.iter())
    }

    /// The lookups that read the data key `key` (their [`root`](LookupCall::root) is it).
    pub fn lookups_of(&self, key: &str) -> Vec<&LookupCall> {
        self.lookups
            .get(key.trim_start_matches("::"))
            .map(|v| {
                v.iter()
                    .map(|at| &self.files[at.file].lookups[at.item])
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Whether some call looks `key` up (literally).
    pub fn is_looked_up(&self, key: &str) -> bool {
        self.lookups.contains_key(key.trim_start_matches("::"))
    }

    /// Every lookup of a key built at run time.
    pub fn dynamic_lookups(&self) -> impl Iterator<Item = &DynamicLookup> {
        self.files.iter().flat_map(|m| m.dynamic_lookups.iter())
    }

    /// The type alias named `name` (case-insensitive, as Puppet's loaders find them).
    pub fn type_alias(&self, name: &str) -> Option<&TypeAlias> {
        self.aliases
            .get(&name.trim_start_matches("::").to_ascii_lowercase())
            .map(|&(f, a)| &self.files[f].type_aliases[a])
    }

    /// Parses a type expression with the schema's aliases resolved (`Any` for `None`).
    pub fn resolve_type(&self, text: Option<&str>) -> Result<Type, String> {
        resolve_type(text, &self.alias_texts())
    }

    /// The modules with at least one manifest, function or type file.
    pub fn modules_with_code(&self) -> impl Iterator<Item = &str> {
        let mut seen: Vec<&str> = self
            .files
            .iter()
            .filter(|m| !is_template(&m.file))
            .filter_map(|m| m.module.as_deref())
            .collect();
        seen.sort_unstable();
        seen.dedup();
        seen.into_iter()
    }
}

fn strip_spans(a: &[TypeAlias]) -> Vec<(&str, &str)> {
    a.iter()
        .map(|a| (a.name.as_str(), a.text.as_str()))
        .collect()
}

fn is_template(f: &Path) -> bool {
    f.extension().is_some_and(|x| x == "epp" || x == "erb")
}

/// The files under `dir` with one of `exts`, at most 32 directories deep.
fn files_with(
    fs: &dyn hiera_engine::fs::Fs,
    dir: &Path,
    exts: &[&str],
    out: &mut Vec<PathBuf>,
    depth: usize,
) {
    if depth > 32 {
        return;
    }
    let Ok(names) = fs.read_dir(dir) else {
        return;
    };
    for name in names {
        let p = dir.join(name);
        // Links are not followed (two links to a parent would make the walk exponential).
        if fs.is_symlink(&p) {
            continue;
        }
        match fs.kind(&p) {
            Some(hiera_engine::fs::Kind::Dir) => files_with(fs, &p, exts, out, depth + 1),
            Some(hiera_engine::fs::Kind::File)
                if p.extension()
                    .and_then(|x| x.to_str())
                    .is_some_and(|x| exts.contains(&x)) =>
            {
                out.push(p)
            }
            _ => {}
        }
    }
}

// ---- the data side ------------------------------------------------------------------------

/// A top-level key of a data file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DataKey {
    /// The key (`lookup_options` included).
    pub key: String,
    /// Where the key is written (its reader's mark).
    pub pos: Position,
}

/// How an interpolation reads another key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RefFunction {
    /// `%{lookup('k')}`.
    Lookup,
    /// `%{hiera('k')}`.
    Hiera,
    /// `%{alias('k')}`.
    Alias,
}

/// An interpolation in a data file that reads another key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DataReference {
    /// The key as written in the interpolation (`a.b.0`).
    pub key: String,
    /// The data key it reads (`a`).
    pub root: String,
    /// The function.
    pub function: RefFunction,
    /// The top-level key whose value (or one of whose hash keys) holds it.
    pub in_key: String,
    /// The `%{…}` token.
    pub span: Span,
}

/// One entry of a data file's `lookup_options`.
#[derive(Debug, Clone, PartialEq)]
pub struct OptionsEntry {
    /// The key, or a `^pattern`.
    pub name: String,
    /// Whether `name` is a pattern (starts with `^`).
    pub pattern: bool,
    /// The `merge` option as written.
    pub merge: Option<Value>,
    /// The `convert_to` option as written.
    pub convert_to: Option<Value>,
    /// Where the name is written.
    pub pos: Position,
}

/// What one data file defines and references.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct DataRefs {
    /// Its top-level keys, in file order.
    pub keys: Vec<DataKey>,
    /// The keys its interpolations read.
    pub references: Vec<DataReference>,
    /// Its `lookup_options` entries.
    pub lookup_options: Vec<OptionsEntry>,
}

impl DataRefs {
    /// The keys used by this file's interpolations and named by its `lookup_options`
    /// (patterns excluded).
    pub fn used_keys(&self) -> impl Iterator<Item = &str> {
        self.references.iter().map(|r| r.root.as_str()).chain(
            self.lookup_options
                .iter()
                .filter(|o| !o.pattern)
                .map(|o| o.name.as_str()),
        )
    }
}

/// Reads one data file's text as `format` and lists its keys, its interpolations of other
/// keys and its `lookup_options`. `Err` is the reader's message when the text does not parse.
pub fn data_references(format: DataFormat, text: &str) -> Result<DataRefs, String> {
    let value = match format {
        DataFormat::Yaml => hiera_formats::yaml::load_document(text.as_bytes())
            .map(|d| d.value)
            .map_err(|e| e.to_string())?,
        DataFormat::Json => hiera_formats::json::parse(text)?,
        DataFormat::Hocon => hiera_formats::hocon::parse_hocon(text)?,
    };
    let Value::Hash(data) = value else {
        return Ok(DataRefs::default());
    };
    let tree = hiera_formats::position::positions_of(format, text.as_bytes())
        .ok()
        .flatten();
    let index = LineIndex::new(text);
    Ok(data_refs_of(&data, tree.as_ref(), &index))
}

fn data_refs_of(
    data: &Map,
    tree: Option<&hiera_formats::position::PosNode>,
    index: &LineIndex<&str>,
) -> DataRefs {
    let mut out = DataRefs::default();
    let text = index.text();
    let key_pos = |path: &[Value]| -> Position {
        tree.and_then(|t| t.locate(path))
            .map(|l| Position::at(index, l.pos.line, l.pos.column))
            .unwrap_or_else(|| Position::at(index, 1, 1))
    };
    for (k, v) in data {
        let Some(key) = k.as_str() else { continue };
        let pos = key_pos(std::slice::from_ref(k));
        out.keys.push(DataKey {
            key: key.to_string(),
            pos,
        });
        if key == "lookup_options" {
            if let Value::Hash(lo) = v {
                for (name, opts) in lo {
                    let Some(name) = name.as_str() else { continue };
                    let get = |o: &str| opts.as_hash().and_then(|h| h.get(&Value::str(o))).cloned();
                    out.lookup_options.push(OptionsEntry {
                        name: name.to_string(),
                        pattern: name.starts_with('^'),
                        merge: get("merge"),
                        convert_to: get("convert_to"),
                        pos: key_pos(&[k.clone(), Value::str(name)]),
                    });
                }
            }
            continue;
        }
        let mut strings = Vec::new();
        strings_with_interpolations(v, &mut strings, 0);
        let mut from = pos.offset;
        for s in strings {
            for tok in tokenize(s) {
                let Token::Expr { whole, expr } = tok else {
                    continue;
                };
                let (method, arg, _) = parse_expr(expr);
                let function = match method {
                    Method::Lookup => RefFunction::Lookup,
                    Method::Hiera => RefFunction::Hiera,
                    Method::Alias => RefFunction::Alias,
                    _ => continue,
                };
                // The first `whole` written at or after `from` (a byte offset), else anywhere.
                let find = |from: usize| {
                    let from = from.min(text.len());
                    let i = text.get(from..)?.find(whole)? + from;
                    Some(Position::in_lines(index, i))
                };
                let start = find(from).or_else(|| find(0)).unwrap_or(pos);
                let end = Position::in_lines(index, start.offset + whole.len());
                from = end.offset;
                out.references.push(DataReference {
                    key: arg.to_string(),
                    root: root_key(arg),
                    function,
                    in_key: key.to_string(),
                    span: Span { start, end },
                });
            }
        }
    }
    out
}

/// The strings of a value holding `%{`, hash keys included (Puppet interpolates both), at
/// most [`MAX_VALUE_DEPTH`](hiera_value::limits::MAX_VALUE_DEPTH) deep.
pub(crate) fn strings_with_interpolations<'a>(v: &'a Value, out: &mut Vec<&'a str>, depth: usize) {
    if depth > hiera_value::limits::MAX_VALUE_DEPTH {
        return;
    }
    match v {
        Value::String(s) if s.contains("%{") => out.push(s),
        Value::Array(a) => a
            .iter()
            .for_each(|e| strings_with_interpolations(e, out, depth + 1)),
        Value::Hash(h) => {
            for (k, e) in h {
                strings_with_interpolations(k, out, depth + 1);
                strings_with_interpolations(e, out, depth + 1);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests;
