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

use hiera_engine::interpolation::{parse_expr, tokenize, Method, Token};
use hiera_formats::format::DataFormat;
use hiera_types::{Type, TypeError};
use hiera_value::value::{Map, Value};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// A place in a file: 1-based line and column (characters), and the 0-based byte offset.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Position {
    /// 1-based line.
    pub line: usize,
    /// 1-based column, in characters.
    pub column: usize,
    /// 0-based byte offset in the file.
    pub offset: usize,
}

impl Position {
    /// The position of byte `offset` of `text` (clamped to the text, and to a char boundary).
    pub fn of_offset(text: &str, offset: usize) -> Position {
        let mut offset = offset.min(text.len());
        while !text.is_char_boundary(offset) {
            offset -= 1;
        }
        let before = &text[..offset];
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        Position {
            line: before.bytes().filter(|b| *b == b'\n').count() + 1,
            column: before[line_start..].chars().count() + 1,
            offset,
        }
    }

    /// `(line, column)`, as lint findings take it.
    pub fn line_col(&self) -> (usize, usize) {
        (self.line, self.column)
    }
}

/// A range of a file: `start` inclusive, `end` exclusive.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Span {
    /// Where it starts.
    pub start: Position,
    /// Where it ends (the position just after it).
    pub end: Position,
}

/// A class parameter.
#[derive(Debug, Clone, PartialEq)]
pub struct Param {
    /// The name, without `$`.
    pub name: String,
    /// The type as written (`Optional[Array[Stdlib::Host]]`); `None` when untyped.
    pub type_text: Option<String>,
    /// The type, parsed by [`hiera_types`] with the modulepath's type aliases resolved (`Any`
    /// when untyped); `Err` says why it could not be (an unknown type name, a type the
    /// parser does not know, a recursive alias): such a parameter's values are not judged.
    pub ty: Result<Type, String>,
    /// The default expression as written (`undef`, `[]`, `$ntp::params::servers`); `None`
    /// when the parameter has no default (Puppet then requires a value).
    pub default: Option<String>,
    /// The `$name` variable of the declaration.
    pub span: Span,
}

impl Param {
    /// Whether the parameter has a default expression.
    pub fn has_default(&self) -> bool {
        self.default.is_some()
    }

    /// `Boolean $iburst = true`, on one line (runs of whitespace, newlines included, made
    /// one space), for a hover or a completion's detail.
    pub fn signature(&self) -> String {
        let mut s = String::new();
        if let Some(t) = &self.type_text {
            s.push_str(t);
            s.push(' ');
        }
        s.push('$');
        s.push_str(&self.name);
        if let Some(d) = &self.default {
            s.push_str(" = ");
            s.push_str(d);
        }
        s.split_whitespace().collect::<Vec<_>>().join(" ")
    }
}

/// A class definition (`class NAME (PARAMS) inherits PARENT { … }`).
#[derive(Debug, Clone, PartialEq)]
pub struct Class {
    /// The name in lower case, without leading `::` (`ntp::config`).
    pub name: String,
    /// The parameters in declaration order.
    pub params: Vec<Param>,
    /// `inherits PARENT`, in lower case.
    pub inherits: Option<String>,
    /// The manifest.
    pub file: PathBuf,
    /// The name after `class`.
    pub name_span: Span,
    /// The whole definition.
    pub span: Span,
}

impl Class {
    /// The parameter named `name`.
    pub fn param(&self, name: &str) -> Option<&Param> {
        self.params.iter().find(|p| p.name == name)
    }

    /// `Class[Ntp::Config]`, as Puppet names the class in its errors.
    pub fn reference(&self) -> String {
        let cap: Vec<String> = self
            .name
            .split("::")
            .map(|s| {
                let mut c = s.chars();
                match c.next() {
                    Some(f) => f.to_uppercase().chain(c).collect(),
                    None => String::new(),
                }
            })
            .collect();
        format!("Class[{}]", cap.join("::"))
    }
}

/// A call that looks a literal key up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LookupCall {
    /// The key as written (`ntp::servers`, `profile::x.sub.0`).
    pub key: String,
    /// The data key it reads: the key's first segment (`profile::x`), leading `::` removed.
    pub root: String,
    /// `lookup`, `hiera`, `hiera_array`, `hiera_hash` or `hiera_include`.
    pub function: String,
    /// The manifest or template.
    pub file: PathBuf,
    /// The key's string literal, quotes included.
    pub span: Span,
}

/// A lookup whose key is built at run time (`lookup("ntp::${x}")`, `lookup($key)`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DynamicLookup {
    /// The literal text before the first interpolation (`ntp::`; empty for `lookup($key)`).
    pub prefix: String,
    /// The manifest.
    pub file: PathBuf,
    /// The key expression.
    pub span: Span,
}

/// `type Name = TYPE` (a module's `types/*.pp`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TypeAlias {
    /// The name as written (`Stdlib::Port`).
    pub name: String,
    /// The aliased type as written.
    pub text: String,
    /// The file.
    pub file: PathBuf,
    /// The name.
    pub span: Span,
}

/// What one manifest or template contributes.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Manifest {
    /// The file.
    pub file: PathBuf,
    /// The module whose directory holds it (`None`: the environment's `manifests/`, or a
    /// file outside every root).
    pub module: Option<String>,
    /// Its classes, in file order (parameter types not yet resolved against the schema's
    /// aliases: [`Schema`] does that).
    pub classes: Vec<Class>,
    /// Its lookups of literal keys.
    pub lookups: Vec<LookupCall>,
    /// Its lookups of keys built at run time.
    pub dynamic_lookups: Vec<DynamicLookup>,
    /// Its type aliases.
    pub type_aliases: Vec<TypeAlias>,
    /// Whether the parser met a syntax error (what it found is still given).
    pub has_errors: bool,
    /// A `.pp` file on disk that is not UTF-8: where its first invalid byte is, and the byte.
    /// Puppet refuses to parse it; what it holds is read with the bytes replaced (U+FFFD).
    pub invalid_utf8: Option<(Position, u8)>,
}

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
    let index = LineStarts::new(text);
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
                start: index.position(k.start()),
                end: index.position(k.end()),
            },
        });
    }
    m
}

/// The data key a lookup of `key` reads: its first segment (`a::b.c.0` → `a::b`; a quoted
/// first segment keeps its dots), leading `::` removed.
pub fn root_key(key: &str) -> String {
    let root = match hiera_engine::key::split_key(key) {
        Ok(segs) if !segs.is_empty() => segs[0].to_string(),
        _ => key.to_string(),
    };
    root.trim_start_matches("::").to_string()
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
        let mut s = Schema::default();
        let mut parser = super::manifests::parser();
        if let Some(env) = environment_dir {
            s.roots.push((None, env.to_path_buf()));
            let mut files = Vec::new();
            files_with(&env.join("manifests"), &["pp"], &mut files, 0);
            s.read_files(parser.as_mut(), files, None);
        }
        for (name, dir) in modules {
            s.roots.push((Some(name.clone()), dir.clone()));
            let mut files = Vec::new();
            for sub in MODULE_CODE_DIRS {
                files_with(&dir.join(sub), &["pp"], &mut files, 0);
            }
            files_with(&dir.join("templates"), &["epp", "erb"], &mut files, 0);
            s.read_files(parser.as_mut(), files, Some(name));
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
        mut parser: Option<&mut tree_sitter::Parser>,
        mut files: Vec<PathBuf>,
        module: Option<&String>,
    ) {
        files.sort();
        for f in files {
            let Ok(bytes) = hiera_value::limits::read_file(&f) else {
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
fn files_with(dir: &Path, exts: &[&str], out: &mut Vec<PathBuf>, depth: usize) {
    if depth > 32 {
        return;
    }
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.flatten() {
        let p = e.path();
        let Ok(ft) = e.file_type() else { continue };
        if ft.is_dir() {
            files_with(&p, exts, out, depth + 1);
        } else if ft.is_file()
            && p.extension()
                .and_then(|x| x.to_str())
                .is_some_and(|x| exts.contains(&x))
        {
            out.push(p);
        }
    }
}

/// How many alias names one type may expand, and how long the expanded text may grow.
const MAX_ALIAS_EXPANSIONS: usize = 256;
const MAX_EXPANDED_TYPE: usize = 64 << 10;

/// Parses a parameter's type text with the aliases (lower-case name → text) expanded.
pub(crate) fn resolve_type(
    text: Option<&str>,
    aliases: &HashMap<String, String>,
) -> Result<Type, String> {
    let Some(text) = text else {
        return Ok(Type::Any);
    };
    let expanded = expand_aliases(text, aliases)?;
    hiera_types::parse(&expanded).map_err(|e| match e {
        TypeError::Unknown(name) => format!(
            "the type '{name}' is neither built in nor a type alias of the modulepath's types/*.pp"
        ),
        TypeError::Invalid(m) => format!("the type does not parse: {m}"),
    })
}

/// `text` with every name of a type alias replaced by the aliased type, recursively (names
/// in strings and regexps left alone).
fn expand_aliases(text: &str, aliases: &HashMap<String, String>) -> Result<String, String> {
    if aliases.is_empty() {
        return Ok(text.to_string());
    }
    let mut cur = text.to_string();
    let mut expansions = 0;
    loop {
        let (next, n) = expand_once(&cur, aliases);
        if n == 0 {
            return Ok(cur);
        }
        expansions += n;
        if expansions > MAX_ALIAS_EXPANSIONS || next.len() > MAX_EXPANDED_TYPE {
            return Err(format!(
                "the type '{text}' expands through its aliases beyond {MAX_ALIAS_EXPANSIONS} names or {MAX_EXPANDED_TYPE} bytes (a recursive alias?)"
            ));
        }
        cur = next;
    }
}

fn expand_once(text: &str, aliases: &HashMap<String, String>) -> (String, usize) {
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut n = 0;
    let mut i = 0;
    let mut last_sig: Option<u8> = None;
    while i < b.len() {
        let c = b[i];
        // Strings and regexps (`Pattern[/x/]`) are copied as they are.
        if let Some((end, open)) = crate::manifests::skip_literal(b, i, last_sig.unwrap_or(b'[')) {
            out.push_str(&text[i..end]);
            i = end;
            last_sig = Some(open);
            continue;
        }
        if c.is_ascii_alphabetic() || (c == b':' && b.get(i + 1) == Some(&b':')) {
            let start = i;
            loop {
                if b.get(i) == Some(&b':') && b.get(i + 1) == Some(&b':') {
                    i += 2;
                }
                let seg = i;
                while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                    i += 1;
                }
                if i == seg
                    || !(b.get(i) == Some(&b':')
                        && b.get(i + 1) == Some(&b':')
                        && b.get(i + 2).is_some_and(|x| x.is_ascii_alphabetic()))
                {
                    break;
                }
            }
            let word = &text[start..i];
            let name = word.trim_start_matches("::");
            // A type's name is capitalized: a bare word (a Struct's key, an Enum's value)
            // is never an alias.
            let alias = name
                .starts_with(|c: char| c.is_ascii_uppercase())
                .then(|| aliases.get(&name.to_ascii_lowercase()))
                .flatten();
            match alias {
                Some(t) => {
                    out.push_str(t);
                    n += 1;
                }
                None => out.push_str(word),
            }
            last_sig = Some(b'a');
            continue;
        }
        // A multi-byte character is copied whole.
        let ch_len = text[i..].chars().next().map_or(1, char::len_utf8);
        out.push_str(&text[i..i + ch_len]);
        if !c.is_ascii_whitespace() {
            last_sig = Some(c);
        }
        i += ch_len;
    }
    (out, n)
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
    let index = LineStarts::new(text);
    Ok(data_refs_of(&data, tree.as_ref(), &index))
}

/// The byte offset of each line's start, to turn 1-based line/char positions into offsets.
pub(crate) struct LineStarts<'a> {
    text: &'a str,
    index: hiera_formats::position::LineIndex<'a>,
}

impl<'a> LineStarts<'a> {
    pub(crate) fn new(text: &'a str) -> LineStarts<'a> {
        LineStarts {
            text,
            index: hiera_formats::position::LineIndex::new(text),
        }
    }

    /// The position at 1-based `line` and `column` (characters).
    pub(crate) fn at(&self, line: usize, column: usize) -> Position {
        let start = self.index.line_start(line).unwrap_or(self.text.len());
        let offset = self.text[start..]
            .char_indices()
            .nth(column.saturating_sub(1))
            .map_or(self.text.len(), |(i, _)| start + i);
        Position {
            line,
            column,
            offset,
        }
    }

    /// The position of byte `offset` ([`Position::of_offset`] without reading the text
    /// before it again: a file's many places cost a binary search each).
    pub(crate) fn position(&self, offset: usize) -> Position {
        let mut offset = offset.min(self.text.len());
        while !self.text.is_char_boundary(offset) {
            offset -= 1;
        }
        let p = self.index.pos(offset);
        Position {
            line: p.line,
            column: p.column,
            offset,
        }
    }

    /// The position of the first `needle` at or after `from` (a byte offset).
    pub(crate) fn find(&self, needle: &str, from: usize) -> Option<Position> {
        let from = from.min(self.text.len());
        let i = self.text.get(from..)?.find(needle)? + from;
        Some(self.position(i))
    }
}

fn data_refs_of(
    data: &Map,
    tree: Option<&hiera_formats::position::PosNode>,
    index: &LineStarts,
) -> DataRefs {
    let mut out = DataRefs::default();
    let key_pos = |path: &[Value]| -> Position {
        tree.and_then(|t| t.locate(path))
            .map(|l| index.at(l.pos.line, l.pos.column))
            .unwrap_or_else(|| index.at(1, 1))
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
                let start = index
                    .find(whole, from)
                    .or_else(|| index.find(whole, 0))
                    .unwrap_or(pos);
                let end = index.position(start.offset + whole.len());
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
