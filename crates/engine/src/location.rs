//! Hierarchy locations resolved to files: paths, Ruby-style globs and mapped paths.

use crate::config::{Entry, Locations, ResolvedLocation};
use crate::error::{Error, Result};
use crate::fs::{name_bytes, Fs};
use crate::interpolation::{interpolate_str, scope_lookup, Context};
use hiera_value::value::Value;
use std::path::Path;

/// The locations of hierarchy entry `e`, interpolated against the scope, under `datadir`
/// (`None`: the entry declares none). A default hierarchy keeps only existing paths. Files
/// are looked for in `fs`.
pub(crate) fn resolve<C: Context>(
    cx: &mut C,
    fs: &dyn Fs,
    e: &Entry,
    datadir: &str,
    is_default: bool,
) -> Result<Option<Vec<ResolvedLocation>>> {
    let path_loc = |original: &str, p: String| {
        // File.exist?: true for directories and devices too.
        let exists = fs.exists(Path::new(&p));
        ResolvedLocation {
            original: original.to_string(),
            location: p,
            exists,
            uri: false,
        }
    };
    Ok(Some(match &e.locations {
        Locations::None => return Ok(None),
        Locations::Paths(paths) => {
            let mut out = Vec::new();
            for declared in paths {
                let mut p = interpolate_str(cx, declared, false)?;
                if let Some(ext) = &e.extension {
                    if !p.ends_with(ext.as_str()) {
                        p.push_str(ext);
                    }
                }
                let full = crate::config::path_plus(datadir, &p);
                let loc = path_loc(declared, full);
                if !is_default || loc.exists {
                    out.push(loc);
                }
            }
            out
        }
        Locations::Globs(globs) => {
            let mut out = Vec::new();
            for declared in globs {
                let g = interpolate_str(cx, declared, false)?;
                let pattern = crate::config::path_plus(datadir, &g);
                for f in glob(fs, &pattern).map_err(Error::run)? {
                    out.push(ResolvedLocation {
                        original: pattern.clone(),
                        location: f,
                        exists: true,
                        uri: false,
                    });
                }
            }
            out
        }
        Locations::Uris(uris) => {
            let mut out = Vec::new();
            for declared in uris {
                let u = interpolate_str(cx, declared, false)?;
                out.push(ResolvedLocation {
                    original: declared.clone(),
                    location: u,
                    exists: true,
                    uri: true,
                });
            }
            out
        }
        Locations::Mapped(var, key, template) => {
            let vars = scope_lookup(cx, var, "mapped_path[0]")?;
            let vars: Vec<Value> = match vars {
                None | Some(Value::Null) => return Ok(Some(Vec::new())),
                Some(Value::String(s)) if s.is_empty() => return Ok(Some(Vec::new())),
                Some(Value::Array(a)) if a.is_empty() => return Ok(Some(Vec::new())),
                Some(Value::Hash(h)) if h.is_empty() => return Ok(Some(Vec::new())),
                // `mapped.empty?` on a value without that method (Ruby 3.3 wording).
                Some(v @ (Value::Int(_) | Value::BigInt(_) | Value::Float(_) | Value::Bool(_))) => {
                    let recv = match v {
                        Value::Bool(b) => b.to_string(),
                        other => format!("an instance of {}", other.ruby_class()),
                    };
                    return Err(Error::run(format!("undefined method `empty?' for {recv}")));
                }
                Some(Value::String(s)) => vec![Value::String(s)],
                Some(Value::Array(a)) => a,
                Some(Value::Hash(h)) => h
                    .into_iter()
                    .map(|(k, v)| Value::Array(vec![k, v]))
                    .collect(),
                Some(other) => vec![other],
            };
            let mut out = Vec::new();
            for v in vars {
                let p = cx.with_local(key, v, |cx| interpolate_str(cx, template, false));
                let full = crate::config::path_plus(datadir, &p?);
                out.push(path_loc(template, full));
            }
            out
        }
    }))
}

/// Ruby's `Pathname.glob(pattern)` on Ruby 3 (sorted), minus directories.
/// A pattern whose `{a,b}` alternatives would make more than
/// [`MAX_GLOB_PATTERNS`](hiera_value::limits::MAX_GLOB_PATTERNS) patterns, or whose `**` would
/// visit more than `MAX_GLOB_STEPS` directory entries, is an error.
pub fn glob(fs: &dyn Fs, pattern: &str) -> Result<Vec<String>, String> {
    let mut out = glob_entries(fs, pattern)?;
    out.retain(|f: &String| !fs.is_dir(Path::new(f)));
    Ok(out)
}

/// Ruby's `Dir.glob(pattern)` on Ruby 3 (sorted): files and directories, bounded as
/// [`glob`] is.
pub fn glob_entries(fs: &dyn Fs, pattern: &str) -> Result<Vec<String>, String> {
    let too_many = || {
        format!(
            "glob '{pattern}' expands to too many patterns (more than {})",
            hiera_value::limits::MAX_GLOB_PATTERNS
        )
    };
    // Counted before anything is built: `{a,b}` forty times is 2^40 patterns. Nested braces
    // are bounded first, since both the count and the expansion recurse into them.
    let mut depth = 0usize;
    for c in pattern.bytes() {
        match c {
            b'{' => depth += 1,
            b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
        if depth > 32 {
            return Err(too_many());
        }
    }
    if brace_count(pattern) > hiera_value::limits::MAX_GLOB_PATTERNS {
        return Err(too_many());
    }
    let mut out = Vec::new();
    let mut steps = 0usize;
    for p in expand_braces(pattern) {
        // A pattern ending in `/` matches only directories: not followed (hierarchy globs
        // want files, and a modulepath entry names its directories without one).
        if p.ends_with('/') {
            continue;
        }
        let absolute = p.starts_with('/');
        let parts: Vec<&str> = p.split('/').filter(|s| !s.is_empty()).collect();
        let base = if absolute {
            "/".to_string()
        } else {
            String::new()
        };
        let mut found = Vec::new();
        walk(fs, &base, &parts, &mut found, &mut steps);
        if steps > MAX_GLOB_STEPS {
            return Err(format!(
                "glob '{pattern}' visits too many directory entries (more than {MAX_GLOB_STEPS})"
            ));
        }
        let mut seen: std::collections::HashSet<String> = out.iter().cloned().collect();
        for f in found {
            if seen.insert(f.clone()) {
                out.push(f);
            }
        }
    }
    Ok(out)
}

/// Directory entries one glob may look at (`**/**/**/…` over a deep tree is exponential).
pub(crate) const MAX_GLOB_STEPS: usize = hiera_value::limits::MAX_GLOB_STEPS;

/// How many patterns [`expand_braces`] would make, without making them (saturating).
fn brace_count(p: &str) -> usize {
    let Some(g) = brace_group(p) else {
        return 1;
    };
    let rest = brace_count(&p[g.close + 1..]);
    let n = g.alternatives(p).into_iter().fold(0usize, |n, alt| {
        // Alternatives may hold braces of their own.
        n.saturating_add(brace_count(alt))
    });
    n.saturating_mul(rest)
}

fn join(base: &str, name: &str) -> String {
    if base.is_empty() {
        name.to_string()
    } else if base.ends_with('/') {
        format!("{base}{name}")
    } else {
        format!("{base}/{name}")
    }
}

/// Ruby's `glob_helper`: at `base`, the pattern suffixes still to match. A suffix that has
/// ended yields `base`; otherwise the directory's entries are read sorted and each is followed,
/// depth first, with the suffixes it advances (so results come in Ruby's order: by entry, a
/// directory's matches before the next entry's). `**` followed by more components is
/// recursive (it stays active below every non-hidden directory and also lets the next
/// component match here); a final `**` is an ordinary component, matching like `*`.
fn walk(fs: &dyn Fs, base: &str, parts: &[&str], out: &mut Vec<String>, steps: &mut usize) {
    walk_set(fs, base, &[parts], out, steps);
}

fn walk_set(fs: &dyn Fs, base: &str, pats: &[&[&str]], out: &mut Vec<String>, steps: &mut usize) {
    *steps += 1;
    if *steps > MAX_GLOB_STEPS {
        return;
    }
    if pats.iter().any(|p| p.is_empty()) && !base.is_empty() {
        out.push(base.to_string());
    }
    let live: Vec<&[&str]> = pats.iter().copied().filter(|p| !p.is_empty()).collect();
    if live.is_empty() {
        return;
    }
    let recursive = |p: &[&str]| p.len() > 1 && p[0] == "**";
    // Only plain components: no directory read, each named path is checked.
    if live.iter().all(|p| !recursive(p) && !has_magic(p[0])) {
        for p in live {
            let path = join(base, &remove_backslashes(p[0]));
            let rest = &p[1..];
            if rest.is_empty() {
                if fs.exists(Path::new(&path)) {
                    out.push(path);
                }
            } else if fs.is_dir(Path::new(&path)) {
                walk_set(fs, &path, &[rest], out, steps);
            }
        }
        return;
    }
    let dir = if base.is_empty() { "." } else { base };
    let Ok(mut names) = fs.read_dir(Path::new(dir)) else {
        return;
    };
    // Ruby sorts by the names' bytes (a name that is not UTF-8 included).
    names.sort_by(|a, b| name_bytes(a).cmp(&name_bytes(b)));
    for n in names {
        let path = join(base, &n);
        let mut next: Vec<&[&str]> = Vec::new();
        let mut is_dir = None;
        for p in &live {
            let mut p: &[&str] = p;
            if recursive(p) {
                // Below every directory that is not hidden (nor a link to one).
                let dir = *is_dir.get_or_insert_with(|| {
                    fs.is_dir(Path::new(&path)) && !fs.is_symlink(Path::new(&path))
                });
                if dir && !n.starts_with('.') {
                    next.push(p);
                }
                p = &p[1..];
            }
            let first = p[0];
            let matched = if has_magic(first) {
                // A hidden name only for a pattern that starts with a dot.
                (first.starts_with('.') || !n.starts_with('.'))
                    && fnmatch(first.as_bytes(), &name_bytes(&n))
            } else {
                n == remove_backslashes(first)
            };
            if matched {
                next.push(&p[1..]);
            }
        }
        if next.is_empty() {
            continue;
        }
        if next.iter().all(|p| p.is_empty()) || fs.is_dir(Path::new(&path)) {
            walk_set(fs, &path, &next, out, steps);
        }
    }
}

/// Whether a component needs matching (Ruby's `has_magic`): `*`, `?` or `[` not escaped.
fn has_magic(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'\\' => i += 1,
            b'*' | b'?' | b'[' => return true,
            _ => {}
        }
        i += 1;
    }
    false
}

/// Ruby's `remove_backslashes`: `\x` is `x`.
fn remove_backslashes(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            if let Some(n) = chars.next() {
                out.push(n);
                continue;
            }
        }
        out.push(c);
    }
    out
}

/// The first brace group of a pattern: where it opens and closes, and its top-level commas.
struct BraceGroup {
    open: usize,
    commas: Vec<usize>,
    close: usize,
}

impl BraceGroup {
    /// The text of each alternative.
    fn alternatives<'p>(&self, p: &'p str) -> Vec<&'p str> {
        let ends = self
            .commas
            .iter()
            .copied()
            .chain(std::iter::once(self.close));
        let starts = std::iter::once(self.open + 1).chain(self.commas.iter().map(|c| c + 1));
        starts.zip(ends).map(|(s, e)| &p[s..e]).collect()
    }
}

/// The first `{` that is not escaped (ruby_brace_expand skips `\x`) and its matching `}`;
/// `None` when there is none or it is never closed (then the braces are literal).
fn brace_group(p: &str) -> Option<BraceGroup> {
    let b = p.as_bytes();
    let mut open = None;
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'\\' => i += 1,
            b'{' => {
                open = Some(i);
                break;
            }
            _ => {}
        }
        i += 1;
    }
    let open = open?;
    let mut depth = 0;
    let mut commas = Vec::new();
    let mut escaped = false;
    for (i, &c) in b.iter().enumerate().skip(open) {
        if escaped {
            escaped = false;
            continue;
        }
        match c {
            b'\\' => escaped = true,
            b'{' => depth += 1,
            b'}' => {
                depth -= 1;
                if depth == 0 {
                    return Some(BraceGroup {
                        open,
                        commas,
                        close: i,
                    });
                }
            }
            b',' if depth == 1 => commas.push(i),
            _ => {}
        }
    }
    None
}

/// `{a,b}` alternatives, expanded first as Ruby does.
fn expand_braces(p: &str) -> Vec<String> {
    let Some(g) = brace_group(p) else {
        return vec![p.to_string()];
    };
    let (head, tail) = (&p[..g.open], &p[g.close + 1..]);
    g.alternatives(p)
        .into_iter()
        .flat_map(|a| expand_braces(&format!("{head}{a}{tail}")))
        .collect()
}

/// The length of the character at `i` of `name`, as Ruby counts characters of a UTF-8 name:
/// a well-formed UTF-8 sequence is one, and so is each byte that is not part of one.
fn char_len(name: &[u8], i: usize) -> usize {
    let len = match name[i] {
        0xC2..=0xDF => 2,
        0xE0..=0xEF => 3,
        0xF0..=0xF4 => 4,
        _ => return 1,
    };
    let well_formed = name
        .get(i..i + len)
        .is_some_and(|s| std::str::from_utf8(s).is_ok());
    if well_formed {
        len
    } else {
        1
    }
}

/// `File.fnmatch` for one path component (its bytes): `*`, `?`, `[...]`, `\` escapes. `?` and
/// a class match one character (`char_len`).
pub fn fnmatch(pat: &[u8], name: &[u8]) -> bool {
    let (mut p, mut n) = (0, 0);
    let (mut star_p, mut star_n) = (None, 0);
    while n < name.len() {
        if p < pat.len() {
            match pat[p] {
                b'*' => {
                    star_p = Some(p);
                    star_n = n;
                    p += 1;
                    continue;
                }
                b'?' => {
                    p += 1;
                    n += char_len(name, n);
                    continue;
                }
                b'[' => {
                    if let Some((matched, next)) = class_match(pat, p, name[n]) {
                        if matched {
                            p = next;
                            n += char_len(name, n);
                            continue;
                        }
                    } else if name[n] == b'[' {
                        p += 1;
                        n += 1;
                        continue;
                    }
                }
                b'\\' if p + 1 < pat.len() && pat[p + 1] == name[n] => {
                    p += 2;
                    n += 1;
                    continue;
                }
                c if c == name[n] => {
                    p += 1;
                    n += 1;
                    continue;
                }
                _ => {}
            }
        }
        match star_p {
            Some(sp) => {
                p = sp + 1;
                star_n += char_len(name, star_n);
                n = star_n;
            }
            None => return false,
        }
    }
    while p < pat.len() && pat[p] == b'*' {
        p += 1;
    }
    p == pat.len()
}

fn class_match(pat: &[u8], start: usize, c: u8) -> Option<(bool, usize)> {
    let mut i = start + 1;
    let negate = i < pat.len() && (pat[i] == b'!' || pat[i] == b'^');
    if negate {
        i += 1;
    }
    let mut matched = false;
    let mut first = true;
    while i < pat.len() && (pat[i] != b']' || first) {
        first = false;
        let lo = pat[i];
        if i + 2 < pat.len() && pat[i + 1] == b'-' && pat[i + 2] != b']' {
            if lo <= c && c <= pat[i + 2] {
                matched = true;
            }
            i += 3;
        } else {
            if lo == c {
                matched = true;
            }
            i += 1;
        }
    }
    if i >= pat.len() {
        return None;
    }
    Some((matched != negate, i + 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fnmatch_rules() {
        assert!(fnmatch(b"*.yaml", b"a.yaml"));
        assert!(!fnmatch(b"*.yaml", b"a.json"));
        assert!(fnmatch(b"a?c", b"abc"));
        assert!(fnmatch(b"[a-c]x", b"bx"));
        assert!(!fnmatch(b"[!a-c]x", b"bx"));
        assert!(fnmatch(b"*", b""));
        // One character: a UTF-8 sequence, or a byte outside one (Ruby's count).
        assert!(fnmatch(b"a?.yaml", "a\u{e9}.yaml".as_bytes()));
        assert!(fnmatch(b"a?.yaml", b"a\xe9.yaml"));
        assert!(fnmatch(b"a??", b"a\xc3\xe9"));
        assert!(!fnmatch(b"a?", "a\u{e9}\u{e9}".as_bytes()));
        assert!(fnmatch(b"[!x]b", "\u{e9}b".as_bytes()));
    }

    #[test]
    fn braces() {
        assert_eq!(brace_count("a/{x,{y,z}}{1,2,3}.yaml"), 9);
        assert_eq!(expand_braces("a/{x,{y,z}}{1,2,3}.yaml").len(), 9);
        assert!(glob(&crate::fs::RealFs, &"{a,b}".repeat(40)).is_err());
        assert!(glob(&crate::fs::RealFs, &"{".repeat(100_000)).is_err());
        assert_eq!(expand_braces("a/{x,y}.yaml"), vec!["a/x.yaml", "a/y.yaml"]);
        assert_eq!(expand_braces("plain"), vec!["plain"]);
        // The limit check counts exactly what expansion makes, escapes and unclosed groups too.
        for p in [
            r"a/\{x,y}{1,2}",
            r"{a\,b,c}",
            r"{a,\}b,c}",
            "{a,b",
            "{a,b}{c",
            "{}{,}{a,{b,{c,d}}}",
            r"x\\{a,b}",
        ] {
            assert_eq!(brace_count(p), expand_braces(p).len(), "{p}");
        }
        assert_eq!(expand_braces(r"{a\,b,c}"), vec![r"a\,b", "c"]);
    }

    #[test]
    fn glob_on_disk_is_sorted_and_skips_dirs() {
        let dir = std::env::temp_dir().join(format!("hl-glob-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("sub.yaml")).unwrap();
        std::fs::create_dir_all(dir.join("deep/er")).unwrap();
        for f in ["b.yaml", "a.yaml", "c.json", "deep/er/x.yaml"] {
            std::fs::write(dir.join(f), "").unwrap();
        }
        let d = dir.display().to_string();
        assert_eq!(
            glob(&crate::fs::RealFs, &format!("{d}/*.yaml")).unwrap(),
            vec![format!("{d}/a.yaml"), format!("{d}/b.yaml")]
        );
        assert_eq!(
            glob(&crate::fs::RealFs, &format!("{d}/**/*.yaml")).unwrap(),
            vec![
                format!("{d}/a.yaml"),
                format!("{d}/b.yaml"),
                format!("{d}/deep/er/x.yaml")
            ]
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
