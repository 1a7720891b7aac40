//! The Puppet code of the repo, as the class rules need it: every `class NAME ( $params )`
//! and every key the code looks up explicitly (`lookup('x')`, `hiera('x')`, …), read with
//! the tree-sitter Puppet grammar from `manifests/` of the environment and of every module
//! on the modulepath.

use super::repo::Repo;
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use tree_sitter::{Node, Parser};

/// A class definition.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Class {
    pub name: String,
    pub params: Vec<String>,
    pub file: PathBuf,
    pub line: usize,
}

/// What the code defines and looks up.
#[derive(Debug, Default)]
pub(crate) struct Code {
    pub classes: HashMap<String, Class>,
    /// Keys given as a literal first argument of lookup(), hiera(), hiera_array(), hiera_hash().
    pub lookups: HashSet<String>,
    /// Modules with at least one manifest (only their namespaces are checked for classes).
    pub modules_with_code: HashSet<String>,
}

const LOOKUP_FUNCTIONS: &[&str] = &[
    "lookup",
    "hiera",
    "hiera_array",
    "hiera_hash",
    "hiera_include",
];

impl Code {
    pub(crate) fn load(repo: &Repo) -> Code {
        let mut code = Code::default();
        let mut parser = Parser::new();
        if parser
            .set_language(&tree_sitter_puppet::LANGUAGE.into())
            .is_err()
        {
            return code;
        }
        let mut dirs: Vec<(Option<String>, PathBuf)> = vec![(None, repo.root.join("manifests"))];
        for (name, dir) in &repo.modules {
            dirs.push((Some(name.clone()), dir.join("manifests")));
        }
        for (module, dir) in dirs {
            let mut files = Vec::new();
            pp_files(&dir, &mut files, 0);
            files.sort();
            if let (Some(m), false) = (&module, files.is_empty()) {
                code.modules_with_code.insert(m.clone());
            }
            for f in files {
                let Ok(text) = hiera_value::limits::read_text(&f) else {
                    continue;
                };
                code.add_source(&mut parser, &f, &text);
            }
        }
        code
    }

    /// Adds what one manifest defines and looks up.
    pub(crate) fn add_source(&mut self, parser: &mut Parser, file: &Path, text: &str) {
        let Some(tree) = parser.parse(text, None) else {
            return;
        };
        let src = text.as_bytes();
        let mut stack = vec![tree.root_node()];
        while let Some(node) = stack.pop() {
            match node.kind() {
                "class_definition" => {
                    if let Some(class) = class_of(node, src, file) {
                        self.classes.entry(class.name.clone()).or_insert(class);
                    }
                }
                "function_call" => {
                    if let Some(key) = lookup_key(node, src) {
                        self.lookups.insert(key);
                    }
                }
                _ => {}
            }
            let mut cursor = node.walk();
            for child in node.children(&mut cursor) {
                stack.push(child);
            }
        }
    }
}

fn text<'a>(node: Node, src: &'a [u8]) -> &'a str {
    node.utf8_text(src).unwrap_or("")
}

fn class_of(node: Node, src: &[u8], file: &Path) -> Option<Class> {
    let mut cursor = node.walk();
    let children: Vec<Node> = node.named_children(&mut cursor).collect();
    let name_node = children
        .iter()
        .find(|c| matches!(c.kind(), "class_identifier" | "identifier"))?;
    let name = text(*name_node, src)
        .trim_start_matches("::")
        .to_ascii_lowercase();
    let mut params = Vec::new();
    if let Some(list) = children.iter().find(|c| c.kind() == "parameter_list") {
        let mut c2 = list.walk();
        for p in list.named_children(&mut c2) {
            if p.kind() != "parameter" {
                continue;
            }
            let mut c3 = p.walk();
            let var = p.named_children(&mut c3).find(|n| n.kind() == "variable");
            if let Some(v) = var {
                params.push(text(v, src).trim_start_matches('$').to_string());
            }
        }
    }
    Some(Class {
        name,
        params,
        file: file.to_path_buf(),
        line: node.start_position().row + 1,
    })
}

/// The key of `lookup('k', …)`, `lookup({'name' => 'k', …})` or `hiera('k')`.
fn lookup_key(node: Node, src: &[u8]) -> Option<String> {
    let mut cursor = node.walk();
    let mut children = node.named_children(&mut cursor);
    let f = children.next()?;
    if f.kind() != "identifier" || !LOOKUP_FUNCTIONS.contains(&text(f, src)) {
        return None;
    }
    let arg = children.next()?;
    let key = match arg.kind() {
        "string" => string_value(arg, src)?,
        "hash" => {
            let mut c = arg.walk();
            let mut found = None;
            for attr in arg.named_children(&mut c) {
                let (Some(n), Some(v)) = (
                    attr.child_by_field_name("name"),
                    attr.child_by_field_name("value"),
                ) else {
                    continue;
                };
                if n.kind() == "string" && string_value(n, src).as_deref() == Some("name") {
                    found = string_value(v, src);
                }
            }
            found?
        }
        _ => return None,
    };
    let root = match hiera_engine::key::split_key(&key) {
        Ok(segs) if !segs.is_empty() => segs[0].to_string(),
        _ => key,
    };
    Some(root.trim_start_matches("::").to_string())
}

/// A string literal without interpolation.
fn string_value(node: Node, src: &[u8]) -> Option<String> {
    if node.kind() != "string" {
        return None;
    }
    let mut c = node.walk();
    let mut out = String::new();
    for part in node.named_children(&mut c) {
        match part.kind() {
            "string_content" => out.push_str(text(part, src)),
            _ => return None,
        }
    }
    Some(out)
}

fn pp_files(dir: &Path, out: &mut Vec<PathBuf>, depth: usize) {
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
            pp_files(&p, out, depth + 1);
        } else if ft.is_file() && p.extension().is_some_and(|x| x == "pp") {
            out.push(p);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_and_lookups() {
        let mut parser = Parser::new();
        parser
            .set_language(&tree_sitter_puppet::LANGUAGE.into())
            .unwrap();
        let mut code = Code::default();
        let src = r#"
class profile::base (
  Array[String] $users = [],
  $packages,
  Optional[Integer] $uid = undef,
) inherits profile::params {
  $x = lookup('profile::extra')
  $y = lookup("profile::other.sub", Array, 'unique', [])
  $z = hiera('legacy::key')
  $i = lookup("x::${name}")
  class { 'foo': bar => 1 }
}
class ntp {}
define mymod::thing($a) {}
$w = lookup({ 'name' => 'x::y' })
"#;
        code.add_source(&mut parser, Path::new("a.pp"), src);
        let base = &code.classes["profile::base"];
        assert_eq!(base.params, vec!["users", "packages", "uid"]);
        assert_eq!(base.line, 2);
        assert_eq!(code.classes["ntp"].params, Vec::<String>::new());
        assert!(!code.classes.contains_key("mymod::thing"));
        let mut l: Vec<_> = code.lookups.iter().cloned().collect();
        l.sort();
        assert_eq!(
            l,
            vec!["legacy::key", "profile::extra", "profile::other", "x::y"]
        );
    }
}
