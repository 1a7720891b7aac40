//! What a control repo marks as vendored: the modules its Puppetfile installs (r10k, g10k and
//! Code Manager deploy them; nobody edits them in this repo) and the directories its
//! .gitignore leaves out. Their findings are left out of the report by default and counted
//! instead ([`Report::vendored`](crate::Report::vendored)).

use hiera_engine::environment::puppetfile_dirs;
use hiera_engine::fs::Fs;
use std::path::Path;

/// A vendored directory, relative to the repo, and what says it is vendored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Vendored {
    /// The directory, relative to the repo (`modules/ntp`).
    pub dir: String,
    /// `Puppetfile` or `.gitignore`.
    pub source: &'static str,
    /// The findings in it that were left out.
    pub findings: usize,
}

/// The vendored directories of the repo at `root` that exist (read through `fs`).
pub(crate) fn find(fs: &dyn Fs, root: &Path) -> Vec<Vendored> {
    let mut out: Vec<Vendored> = Vec::new();
    let mut add = |dir: String, source: &'static str| {
        let dir = dir.trim_matches('/').to_string();
        if !dir.is_empty() && fs.is_dir(&root.join(&dir)) && !out.iter().any(|v| v.dir == dir) {
            out.push(Vendored {
                dir,
                source,
                findings: 0,
            });
        }
    };
    if let Ok(text) = fs.read_text(&root.join("Puppetfile")) {
        for dir in puppetfile_dirs(&text) {
            add(dir, "Puppetfile");
        }
    }
    if let Ok(text) = fs.read_text(&root.join(".gitignore")) {
        for dir in gitignore_dirs(&text) {
            add(dir, ".gitignore");
        }
    }
    out
}

/// The directories a .gitignore names plainly (`/modules/`, `modules/*`, `site/vendor`):
/// patterns with wildcards elsewhere, and negations, are not followed.
fn gitignore_dirs(text: &str) -> Vec<String> {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#') && !l.starts_with('!'))
        .map(|l| {
            l.trim_end_matches("/**")
                .trim_end_matches("/*")
                .trim_matches('/')
                .to_string()
        })
        .filter(|l| !l.contains(['*', '?', '[']))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn puppetfile_modules() {
        let text = "forge 'https://forge.puppet.com'\n\
                    mod 'puppetlabs/stdlib', '9.4.1'\n\
                    mod 'puppetlabs-ntp', :latest\n\
                    mod \"chrony\",\n  :git => 'https://example.com/chrony.git'\n\
                    mod 'site_role', :install_path => 'site'\n\
                    # mod 'commented/out'\n";
        assert_eq!(
            puppetfile_dirs(text),
            [
                "modules/stdlib",
                "modules/ntp",
                "modules/chrony",
                "site/site_role"
            ]
        );
        assert_eq!(
            puppetfile_dirs("moduledir 'vendor'\nmod 'a/b'\n"),
            ["vendor/b"]
        );
    }

    #[test]
    fn gitignore_directories() {
        assert_eq!(
            gitignore_dirs("# r10k\n/modules/\n.tmp\n*.swp\nvendor/*\n!keep\n"),
            ["modules", ".tmp", "vendor"]
        );
    }
}
