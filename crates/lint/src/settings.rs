//! The repo's settings file, `.hiera-lookup.toml`, read here for every command that has a
//! table in it: `[lint]` turns rules off for a whole repo, `[lsp]` gives the language
//! server's node context ([`LspSettings`]). Also the
//! `# hiera-lookup: disable=RULE[,RULE…]` comments in data files and hiera.yaml, which turn
//! rules off for a line (`disable-file=` for the whole file).
//!
//! ```toml
//! [lint]
//! disable = ["yaml11-value", "level-no-files"]
//! fail-on = "warning"
//! exclude = ["modules/vendored", "data/legacy/**/*.yaml"]
//!
//! [lsp]
//! facts = "facts/"
//! node = "web01.example.com"
//! ```

use super::Severity;
use hiera_engine::error::{Error, Result};
use hiera_engine::fs::Fs;
use std::path::Path;

/// The settings file looked for at the root of the repo.
pub const FILE_NAME: &str = ".hiera-lookup.toml";

/// The settings file's text as TOML, or the first line of the parser's message.
fn table(text: &str) -> std::result::Result<toml::Table, String> {
    text.parse()
        .map_err(|e: toml::de::Error| e.to_string().lines().next().unwrap_or_default().to_string())
}

/// The `[lsp]` table: the language server's node context, as plain data.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LspSettings {
    /// `facts`: a facts file or directory (relative to the repo).
    pub facts: Option<String>,
    /// `node`: a node's certname (the node of a facts directory).
    pub node: Option<String>,
}

impl LspSettings {
    /// The `[lsp]` table of `ROOT/.hiera-lookup.toml`, read through `fs`; nothing when the
    /// file is absent or unreadable. The error names the file.
    pub fn load(fs: &dyn Fs, root: &Path) -> std::result::Result<LspSettings, String> {
        let path = root.join(FILE_NAME);
        let Ok(text) = fs.read_text(&path) else {
            return Ok(LspSettings::default());
        };
        LspSettings::parse(&text).map_err(|e| format!("{}: {e}", path.display()))
    }

    /// The `[lsp]` table of a settings file's text (other tables and keys left alone).
    pub fn parse(text: &str) -> std::result::Result<LspSettings, String> {
        let table = table(text)?;
        let Some(lsp) = table.get("lsp") else {
            return Ok(LspSettings::default());
        };
        let lsp = lsp.as_table().ok_or("`lsp` must be a table ([lsp])")?;
        let get = |k: &str| match lsp.get(k) {
            None => Ok(None),
            Some(toml::Value::String(s)) => Ok(Some(s.clone())),
            Some(_) => Err(format!("lsp.{k} must be a string")),
        };
        Ok(LspSettings {
            facts: get("facts")?,
            node: get("node")?,
        })
    }
}

/// The repo's lint settings.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Settings {
    pub disabled: Vec<String>,
    pub fail_on: Option<Severity>,
    /// Paths (relative to the repo, `*`, `?`, `[…]` within a name, `**` for any number of
    /// directories) whose findings are not reported: vendored modules. A directory excludes
    /// everything under it. The files are still read: their keys and classes count.
    pub exclude: Vec<String>,
}

impl Settings {
    /// The settings file at `path`, read through `fs`.
    pub(crate) fn load(fs: &dyn Fs, path: &Path) -> Result<Settings> {
        let text = fs.read_text(path).map_err(|e| {
            Error::run(format!(
                "Could not read {}: {}",
                path.display(),
                hiera_engine::error::io_reason(&e)
            ))
        })?;
        Settings::parse(&text).map_err(|m| Error::run(format!("{}: {m}", path.display())))
    }

    /// Reads the `[lint]` table; other tables belong to other commands and are left alone.
    pub(crate) fn parse(text: &str) -> std::result::Result<Settings, String> {
        let table = table(text)?;
        let mut out = Settings::default();
        let Some(lint) = table.get("lint") else {
            return Ok(out);
        };
        let lint = lint
            .as_table()
            .ok_or_else(|| "`lint` must be a table ([lint])".to_string())?;
        for (k, v) in lint {
            match k.as_str() {
                "disable" => {
                    let list = v
                        .as_array()
                        .ok_or_else(|| "lint.disable must be an array of rule ids".to_string())?;
                    for item in list {
                        let id = item.as_str().ok_or_else(|| {
                            "lint.disable must be an array of rule ids".to_string()
                        })?;
                        if super::rules::find(id).is_none() {
                            return Err(format!("lint.disable: unknown rule '{id}'"));
                        }
                        out.disabled.push(id.to_string());
                    }
                }
                "fail-on" | "fail_on" => {
                    let s = v.as_str().unwrap_or_default();
                    out.fail_on = Some(Severity::parse(s).ok_or_else(|| {
                        format!("lint.{k} must be \"error\", \"warning\" or \"info\", not {v}")
                    })?);
                }
                "exclude" => {
                    let list = v
                        .as_array()
                        .ok_or_else(|| "lint.exclude must be an array of paths".to_string())?;
                    for item in list {
                        let p = item
                            .as_str()
                            .ok_or_else(|| "lint.exclude must be an array of paths".to_string())?;
                        let p = p.trim_start_matches("./").trim_end_matches('/');
                        if p.is_empty() || p.starts_with('/') {
                            return Err(format!(
                                "lint.exclude: '{p}' must be a path relative to the repo"
                            ));
                        }
                        out.exclude.push(p.to_string());
                    }
                }
                other => return Err(format!("unknown setting lint.{other}")),
            }
        }
        Ok(out)
    }
}

impl Settings {
    /// Whether findings in `file` (relative to the repo, `/`-separated) are excluded.
    pub fn excludes(&self, file: &str) -> bool {
        let parts: Vec<&str> = file.split('/').collect();
        self.exclude.iter().any(|pattern| {
            let pat: Vec<&str> = pattern.split('/').collect();
            names_or_contains(&pat, &parts)
        })
    }
}

/// Whether path pattern `pat` names `path` or a directory above it (`*`, `?`, `[…]` within a
/// component as `File.fnmatch`; `**` for any number of components, none included). Dynamic
/// programming over (pattern component, path component): time in the product of their
/// counts whatever the number of `**` (trying every split of every `**` in turn took
/// exponential time: twelve of them ran for minutes).
fn names_or_contains(pat: &[&str], path: &[&str]) -> bool {
    let (p, n) = (pat.len(), path.len());
    // m[i][j]: pat[i..] matches path[j..k] for some k ≥ max(j, 1); filled from the ends.
    let mut m = vec![false; (p + 1) * (n + 1)];
    let at = |i: usize, j: usize| i * (n + 1) + j;
    for i in (0..=p).rev() {
        for j in (0..=n).rev() {
            m[at(i, j)] = if i == p {
                j >= 1
            } else if pat[i] == "**" {
                m[at(i + 1, j)] || (j < n && m[at(i, j + 1)])
            } else {
                j < n
                    && m[at(i + 1, j + 1)]
                    && hiera_engine::location::fnmatch(pat[i].as_bytes(), path[j].as_bytes())
            };
        }
    }
    m[at(0, 0)]
}

/// The rules a `# hiera-lookup: disable=…` comment on `line` names, and whether it is
/// `disable-file`. `None` when the line has no such comment.
pub(crate) fn inline_disable(line: &str) -> Option<(bool, Vec<String>)> {
    let at = line.find("hiera-lookup:")?;
    // Only inside a comment.
    let hash = line[..at].rfind('#')?;
    if !line[hash + 1..at].trim().is_empty() {
        return None;
    }
    let rest = line[at + "hiera-lookup:".len()..].trim_start();
    let (file, list) = if let Some(r) = rest.strip_prefix("disable-file=") {
        (true, r)
    } else if let Some(r) = rest.strip_prefix("disable=") {
        (false, r)
    } else {
        return None;
    };
    // The first word is the list; anything after it is the reason.
    let ids = list
        .split_whitespace()
        .next()
        .unwrap_or_default()
        .split(',')
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect();
    Some((file, ids))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exclude_paths() {
        let s = Settings::parse(
            "[lint]\nexclude = [\"modules/vendored/\", \"./data/legacy/**/*.yaml\", \"site/*/data\"]\n",
        )
        .unwrap();
        assert_eq!(
            s.exclude,
            ["modules/vendored", "data/legacy/**/*.yaml", "site/*/data"]
        );
        for (file, excluded) in [
            ("modules/vendored/data/common.yaml", true),
            ("modules/vendored/hiera.yaml", true),
            ("modules/vendored", true),
            ("modules/vendored2/data/common.yaml", false),
            ("modules/ours/data/common.yaml", false),
            ("data/legacy/a.yaml", true),
            ("data/legacy/x/y/b.yaml", true),
            ("data/legacy/x/b.json", false),
            ("data/common.yaml", false),
            ("site/web/data/common.yaml", true),
            ("site/web/manifests/init.pp", false),
        ] {
            assert_eq!(s.excludes(file), excluded, "{file}");
        }
        for bad in [
            "exclude = \"x\"",
            "exclude = [1]",
            "exclude = [\"/abs\"]",
            "exclude = [\"\"]",
        ] {
            assert!(
                Settings::parse(&format!("[lint]\n{bad}\n")).is_err(),
                "{bad}"
            );
        }
    }

    /// Many `**` against a deep path that does not match: answered at once.
    #[test]
    fn exclude_globs_match_in_polynomial_time() {
        let pattern = ["**"; 12].join("/") + "/x.yaml";
        let s = Settings::parse(&format!("[lint]\nexclude = [\"{pattern}\"]\n")).unwrap();
        let deep = ["d"; 40].join("/");
        let start = std::time::Instant::now();
        assert!(!s.excludes(&format!("{deep}/y.yaml")));
        assert!(s.excludes(&format!("{deep}/x.yaml")));
        assert!(s.excludes(&format!("{deep}/x.yaml/under")));
        assert!(start.elapsed() < std::time::Duration::from_secs(5));
    }

    #[test]
    fn table() {
        let s = Settings::parse(
            "[lint]\ndisable = [\"tab\", \"bom\"]\nfail-on = \"warning\"\n[other]\nx=1\n",
        )
        .unwrap();
        assert_eq!(s.disabled, vec!["tab", "bom"]);
        assert_eq!(s.fail_on, Some(Severity::Warning));
        assert_eq!(Settings::parse("").unwrap(), Settings::default());
        assert!(Settings::parse("[lint]\ndisable = [\"nope\"]\n")
            .unwrap_err()
            .contains("unknown rule 'nope'"));
        assert!(Settings::parse("[lint]\nfoo = 1\n").is_err());
        assert!(Settings::parse("[lint\n").is_err());
        assert!(Settings::parse("[lint]\nfail-on = \"sometimes\"\n").is_err());
    }

    #[test]
    fn lsp_table() {
        let t = LspSettings::parse(
            "[lint]\ndisable = [\"x\"]\n[lsp]\nfacts = \"facts/\" # the fleet\nnode = 'web01'\n",
        )
        .unwrap();
        assert_eq!(t.facts.as_deref(), Some("facts/"));
        assert_eq!(t.node.as_deref(), Some("web01"));
        assert_eq!(
            LspSettings::parse("[lsp]\nfacts = 3\n").unwrap_err(),
            "lsp.facts must be a string"
        );
        assert!(LspSettings::parse("lsp = 1\n").is_err());
        assert!(LspSettings::parse("[lsp\n").is_err());
        assert_eq!(LspSettings::parse("").unwrap(), LspSettings::default());
        // Each command judges its own table.
        assert!(LspSettings::parse("[lint]\nfoo = 1\n").is_ok());
        assert!(Settings::parse("[lsp]\nfacts = 3\n").is_ok());
    }

    #[test]
    fn comments() {
        assert_eq!(
            inline_disable("a: no # hiera-lookup: disable=yaml11-value"),
            Some((false, vec!["yaml11-value".to_string()]))
        );
        assert_eq!(
            inline_disable("# hiera-lookup: disable-file=tab,bom"),
            Some((true, vec!["tab".to_string(), "bom".to_string()]))
        );
        assert_eq!(inline_disable("a: 'hiera-lookup: disable=tab'"), None);
        assert_eq!(inline_disable("a: b"), None);
    }
}
