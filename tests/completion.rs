//! The shell completions, run in the real shells: bash (its completion function called with
//! COMP_WORDS/COMP_CWORD set, as readline would), zsh (an interactive zsh on a pseudo
//! terminal, tests/completion/capture.zsh) and fish (`complete -C`). A shell that is not
//! installed is skipped with a message.

use crate::scratch_tree;
use std::path::{Path, PathBuf};
use std::process::Command;

fn script(shell: &str, dir: &Path) -> PathBuf {
    let o = Command::new(env!("CARGO_BIN_EXE_hiera-lookup"))
        .args(["completions", shell])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let name = match shell {
        "zsh" => "_hiera-lookup",
        other => other,
    };
    let path = dir.join(name);
    std::fs::write(&path, &o.stdout).unwrap();
    path
}

fn have(shell: &str) -> bool {
    let found = Command::new(shell)
        .args(["-c", "exit 0"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !found {
        eprintln!("skipped: {shell} is not installed");
    }
    found
}

/// What each shell offers for a command line (the words before the cursor; a trailing
/// space completes a new word).
fn offered(shell: &str, dir: &Path, line: &str) -> Vec<String> {
    let out = match shell {
        "bash" => {
            let path = script("bash", dir);
            let program = format!(
                "source {}\n\
                 read -ra COMP_WORDS <<< \"$LINE\"\n\
                 [[ \"$LINE\" == *' ' ]] && COMP_WORDS+=('')\n\
                 COMP_CWORD=$(( ${{#COMP_WORDS[@]}} - 1 ))\n\
                 COMP_LINE=\"$LINE\"; COMP_POINT=${{#LINE}}\n\
                 _hiera__lookup hiera-lookup \"${{COMP_WORDS[COMP_CWORD]}}\" \"${{COMP_WORDS[COMP_CWORD-1]}}\" 2>/dev/null\n\
                 printf '%s\\n' \"${{COMPREPLY[@]}}\"",
                path.display()
            );
            Command::new("bash")
                .current_dir(dir)
                .env("LINE", line)
                .args(["-c", &program])
                .output()
                .unwrap()
        }
        "zsh" => {
            script("zsh", dir);
            let capture =
                Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/completion/capture.zsh");
            Command::new("zsh")
                .current_dir(dir)
                .env("TMPDIR", dir)
                .arg(capture)
                .args([line, dir.to_str().unwrap()])
                .output()
                .unwrap()
        }
        "fish" => {
            let path = script("fish", dir);
            Command::new("fish")
                .current_dir(dir)
                .env("LINE", line)
                .env("XDG_CONFIG_HOME", dir)
                .env("XDG_DATA_HOME", dir)
                .args([
                    "--no-config",
                    "-c",
                    &format!("source {}; complete -C \"$LINE\"", path.display()),
                ])
                .output()
                .unwrap()
        }
        _ => unreachable!(),
    };
    let mut words: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        // fish adds a tab and the description.
        .map(|l| l.split('\t').next().unwrap().trim().to_string())
        .filter(|w| !w.is_empty())
        .collect();
    words.sort();
    words.dedup();
    words
}

fn sorted(words: &[&str]) -> Vec<String> {
    let mut v: Vec<String> = words.iter().map(|w| w.to_string()).collect();
    v.sort();
    v
}

fn check(shell: &str) {
    if !have(shell) {
        return;
    }
    // An empty directory: file names are never among the answers.
    let dir = scratch_tree::tree("completion", shell, &[]);
    let offered = |line: &str| offered(shell, &dir, line);
    // Values of the flags with a fixed set of them, for the lookup and each command.
    for (line, values) in [
        (
            "hiera-lookup --merge ",
            &[
                "first",
                "unique",
                "hash",
                "deep",
                "reverse_deep",
                "unconstrained_deep",
            ][..],
        ),
        ("hiera-lookup --render-as ", &["yaml", "json", "s"]),
        ("hiera-lookup --color ", &["always", "never", "auto"]),
        ("hiera-lookup --strict ", &["error", "warning", "off"]),
        ("hiera-lookup where k --format ", &["text", "json"]),
        (
            "hiera-lookup diff HEAD --format ",
            &["text", "json", "github", "markdown"],
        ),
        (
            "hiera-lookup lint --format ",
            &["text", "json", "github", "sarif"],
        ),
        (
            "hiera-lookup lint --fail-on ",
            &["error", "warning", "info"],
        ),
        ("hiera-lookup lint --color ", &["always", "never", "auto"]),
        (
            "hiera-lookup completions ",
            &["bash", "elvish", "fish", "powershell", "zsh"],
        ),
    ] {
        // (bash offers a command's flags beside its first positional's values.)
        let got: Vec<String> = offered(line)
            .into_iter()
            .filter(|w| !w.starts_with('-'))
            .collect();
        assert_eq!(got, sorted(values), "{shell}: {line:?}");
    }
    // A command's own flags.
    let lint = offered("hiera-lookup lint --f");
    for flag in ["--facts", "--facts-dir", "--format", "--fail-on"] {
        assert!(lint.contains(&flag.to_string()), "{shell}: {lint:?}");
    }
    assert!(offered("hiera-lookup where k --reach").contains(&"--reachable-only".to_string()));
    assert!(offered("hiera-lookup diff HEAD main --no-s").contains(&"--no-skip".to_string()));
    // Hidden flags are not offered: Puppet's ignored ones, old spellings.
    assert_eq!(offered("hiera-lookup --ve"), ["--version"], "{shell}");
    for (line, hidden) in [
        ("hiera-lookup --l", "--logdir"),
        ("hiera-lookup --r", "--rundir"),
        ("hiera-lookup --render", "--render_as"),
        ("hiera-lookup lint --c", "--config"),
    ] {
        let got = offered(line);
        assert!(
            !got.contains(&hidden.to_string()),
            "{shell}: {line:?} {got:?}"
        );
    }
    assert!(offered("hiera-lookup lint --c").contains(&"--color".to_string()));
}

#[test]
fn bash_completes_commands_flags_and_values() {
    check("bash");
}

#[test]
fn zsh_completes_commands_flags_and_values() {
    check("zsh");
}

#[test]
fn fish_completes_commands_flags_and_values() {
    check("fish");
}
