//! What a newcomer meets first: `help`, `-h`/`--help`, the short usage, examples that run in
//! their own control repo, the manual pages and the shell completions (issue 29).

use crate::scratch_tree;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn bin() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_hiera-lookup"));
    c.env("HIERA_LOOKUP_PUPPET_CONF", "/dev/null");
    c.env_remove("COLUMNS");
    c
}

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn run(args: &[&str]) -> Output {
    bin()
        .current_dir(repo())
        .args(args)
        .output()
        .expect("run hiera-lookup")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// `hiera-lookup help [COMMAND]` is `[COMMAND] --help`, as `git help` and `cargo help`; the
/// key `help` is still looked up after `--` (or any flag).
#[test]
fn help_is_a_command() {
    let o = run(&["help"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stdout(&o), stdout(&run(&["--help"])));
    assert!(stdout(&o).contains("Usage: hiera-lookup [OPTIONS] [KEY]..."));
    for command in [
        "where",
        "diff",
        "lint",
        "serve",
        "lsp",
        "eyaml",
        "completions",
        "man",
        "help",
    ] {
        let o = run(&["help", command]);
        assert_eq!(o.status.code(), Some(0), "{command}: {}", stderr(&o));
        assert_eq!(stdout(&o), stdout(&run(&[command, "--help"])), "{command}");
        assert!(
            stdout(&o).contains(&format!("Usage: hiera-lookup {command}")),
            "{command}: {}",
            stdout(&o)
        );
    }
    assert_eq!(stdout(&run(&["help", "lookup"])), stdout(&run(&["--help"])));
    let o = run(&["help", "nope"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("possible values"), "{}", stderr(&o));
    assert!(stdout(&o).is_empty());

    let dir = scratch_tree::tree(
        "help",
        "key-help",
        &[
            ("hiera.yaml", "version: 5\n"),
            ("data/common.yaml", "help: h\n"),
            ("f.yaml", "clientcert: n1\n"),
        ],
    );
    let o = bin()
        .current_dir(&dir)
        .args(["--", "help"])
        .output()
        .unwrap();
    assert_eq!(stdout(&o), "--- h\n", "{}", stderr(&o));
    let o = bin()
        .current_dir(&dir)
        .args(["--facts", "f.yaml", "help"])
        .output()
        .unwrap();
    assert_eq!(stdout(&o), "--- h\n", "{}", stderr(&o));
}

/// No arguments at all: a short usage on stderr that points at the help (exit 2), not
/// Puppet's "No keys were given to lookup."
#[test]
fn no_arguments_is_a_short_usage() {
    let o = run(&[]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stdout(&o).is_empty());
    let err = stderr(&o);
    assert!(
        err.contains("Usage: hiera-lookup [OPTIONS] KEY..."),
        "{err}"
    );
    assert!(err.contains("hiera-lookup --help"), "{err}");
    assert!(err.contains("help COMMAND"), "{err}");
    assert!(err.lines().count() < 20, "{err}");
    // Flags without keys is still Puppet's usage error.
    let o = run(&["--facts", "fixtures/facts/web01.yaml"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("No keys were given to lookup."));
}

/// `-h` is the short help, `--help` the long one; the options are grouped under headings,
/// and the text is wrapped to the terminal (COLUMNS when stdout is no terminal).
#[test]
fn short_and_long_help_grouped_and_wrapped() {
    let short = stdout(&run(&["-h"]));
    let long = stdout(&run(&["--help"]));
    assert!(short.lines().count() * 2 < long.lines().count(), "{short}");
    assert!(!short.contains("Examples"), "{short}");
    assert!(short.contains("hiera-lookup --help"), "{short}");
    assert!(long.contains("Examples"), "{long}");
    // Rarely used flags only in --help.
    assert!(!short.contains("--puppetdb-cacert"), "{short}");
    assert!(long.contains("--puppetdb-cacert"), "{long}");
    for heading in [
        "Layout:",
        "Facts and node:",
        "PuppetDB:",
        "Merging:",
        "Output:",
        "Fleet:",
    ] {
        assert!(
            short.lines().any(|l| l == heading),
            "{heading} in -h: {short}"
        );
        assert!(long.lines().any(|l| l == heading), "{heading} in --help");
    }
    for width in [60usize, 80, 100] {
        for args in [
            &["--help"][..],
            &["-h"],
            &["lint", "--help"],
            &["where", "-h"],
        ] {
            let o = bin()
                .current_dir(repo())
                .env("COLUMNS", width.to_string())
                .args(args)
                .output()
                .unwrap();
            for line in stdout(&o).lines() {
                assert!(
                    line.chars().count() <= width,
                    "{args:?} at {width} columns: {line:?}"
                );
            }
        }
    }
    // Wider terminals: at most 100 columns, the width text stays readable at.
    let o = bin().env("COLUMNS", "250").arg("--help").output().unwrap();
    assert!(stdout(&o).lines().all(|l| l.chars().count() <= 100));
}

/// `where --help` lists only the flags `where` takes; a lookup flag given to `where` is
/// refused by the parser in one line that says so.
#[test]
fn where_help_lists_only_where_flags() {
    let help = stdout(&run(&["where", "--help"]));
    // The words of the help (a flag's name, without what follows it).
    let words: Vec<&str> = help
        .split(|c: char| c.is_whitespace() || c == ',' || c == '[' || c == ']')
        .collect();
    for absent in [
        "--explain",
        "--all",
        "--type",
        "--default",
        "--render-as",
        "--compile",
    ] {
        assert!(!words.contains(&absent), "{absent}: {help}");
    }
    assert!(!help.contains("KEYS"), "{help}");
    for present in [
        "<KEY>",
        "--facts",
        "--merge",
        "--reachable-only",
        // A fleet's nodes are asked on worker threads.
        "--threads",
        "-C, --repo",
    ] {
        assert!(help.contains(present), "{present}: {help}");
    }
    for flag in [
        "--explain",
        "--all",
        "--type=String",
        "--render-as=json",
        "-c",
    ] {
        let o = run(&["where", "k", flag]);
        assert_eq!(o.status.code(), Some(2));
        let err = stderr(&o);
        let name = flag.split('=').next().unwrap();
        assert_eq!(
            err,
            format!(
                "Error: {name} is a flag of the lookup, not of `where`: `hiera-lookup where \
                 --help` lists the flags where takes\n"
            )
        );
    }
}

/// A control repo as a user has one: the fixture environment with its nodes' facts in
/// facts/, Puppet's fact cache for --node (through puppet.conf's vardir), and git history
/// with a branch for diff.
struct UserRepo {
    dir: scratch_tree::Tree,
    puppet_conf: PathBuf,
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let target = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &target);
        } else {
            std::fs::copy(e.path(), &target).unwrap();
        }
    }
}

fn git(dir: &Path, args: &[&str]) {
    let o = Command::new("git")
        .current_dir(dir)
        .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
        .args(args)
        .output()
        .expect("git");
    assert!(o.status.success(), "git {args:?}: {}", stderr(&o));
}

fn user_repo(name: &str) -> UserRepo {
    let dir = scratch_tree::tree("help", name, &[]);
    let repo = dir.join("control-repo");
    copy_dir(&repo_path("fixtures/environments/production"), &repo);
    copy_dir(&repo_path("fixtures/facts"), &repo.join("facts"));
    let vardir = dir.join("vardir");
    copy_dir(&repo_path("fixtures/facts"), &vardir.join("yaml/facts"));
    std::fs::rename(
        vardir.join("yaml/facts/web01.yaml"),
        vardir.join("yaml/facts/web01.example.com.yaml"),
    )
    .unwrap();
    let puppet_conf = dir.join("puppet.conf");
    std::fs::write(
        &puppet_conf,
        format!("[main]\nvardir = {}\n", vardir.display()),
    )
    .unwrap();
    git(&repo, &["init", "-q", "-b", "main"]);
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-q", "-m", "initial"]);
    git(&repo, &["checkout", "-q", "-b", "my-branch"]);
    let common = repo.join("data/common.yaml");
    let text = std::fs::read_to_string(&common).unwrap();
    std::fs::write(&common, text.replace("10.0.0.2", "10.0.0.9")).unwrap();
    git(&repo, &["commit", "-q", "-am", "ntp"]);
    UserRepo { dir, puppet_conf }
}

fn repo_path(rel: &str) -> PathBuf {
    repo().join(rel)
}

/// The example lines of a `--help`: the indented `hiera-lookup …` lines after a line that
/// starts with "Examples".
fn examples(help: &str) -> Vec<String> {
    help.lines()
        .skip_while(|l| !l.starts_with("Examples"))
        .skip(1)
        .take_while(|l| l.starts_with("    "))
        .map(|l| l.trim().to_string())
        .collect()
}

/// The lookup's and every command's `--help` have the same shape: a one-line summary, the
/// usage, the options, examples, and the exit statuses last. The examples are for the
/// user's own control repo: each runs as written in one (a copy of the fixture) and answers.
#[test]
fn every_help_has_examples_that_run_in_a_control_repo() {
    let user = user_repo("examples");
    let control = user.dir.join("control-repo");
    let mut ran = 0;
    for command in [
        "",
        "where",
        "diff",
        "lint",
        "serve",
        "lsp",
        "completions",
        "man",
        "help",
    ] {
        let args: Vec<&str> = [command, "--help"]
            .into_iter()
            .filter(|a| !a.is_empty())
            .collect();
        let o = run(&args);
        assert_eq!(o.status.code(), Some(0), "{command}: {}", stderr(&o));
        let help = stdout(&o);
        let usage = format!("Usage: hiera-lookup {command}")
            .trim_end()
            .to_string();
        assert!(
            help.lines().nth(2).is_some_and(|l| l.starts_with(&usage)),
            "{help}"
        );
        assert!(
            help.trim_end()
                .lines()
                .last()
                .unwrap()
                .starts_with("Exit status: "),
            "{command}: {help}"
        );
        let examples = examples(&help);
        assert!(!examples.is_empty(), "{command}: no examples: {help}");
        for ex in examples {
            assert!(!ex.contains("fixtures/"), "{ex}: not the user's repo");
            // A redirection into the user's files (an install step) runs without it.
            let ex = ex.split(" > ").next().unwrap();
            let ex = ex.split(" | ").next().unwrap();
            let words: Vec<&str> = ex.split_whitespace().collect();
            assert_eq!(words[0], "hiera-lookup", "{ex}");
            if !command.is_empty() {
                assert_eq!(words[1], command, "{ex}");
            }
            if command == "serve" || command == "lsp" {
                // A server runs until stopped: tests/serve.rs and tests/lsp.rs start them as
                // these do.
                continue;
            }
            let o = bin()
                .current_dir(&control)
                .env("HIERA_LOOKUP_PUPPET_CONF", &user.puppet_conf)
                .args(&words[1..])
                .output()
                .unwrap();
            // diff's 1 is "changes", lint's 1 is "findings": answers, not failures.
            let ok = match command {
                "diff" | "lint" => [Some(0), Some(1)].contains(&o.status.code()),
                _ => o.status.code() == Some(0),
            };
            assert!(ok, "{ex}: {:?} {}", o.status.code(), stderr(&o));
            assert!(!o.stdout.is_empty(), "{ex}");
            ran += 1;
        }
    }
    assert!(ran >= 16, "only {ran} examples");
}

/// `man`'s output without its overstrike (`N\x08N` bold, `_\x08x` underline).
fn plain(text: &str) -> String {
    let mut out = String::new();
    for c in text.chars() {
        if c == '\x08' {
            out.pop();
        } else {
            out.push(c);
        }
    }
    out
}

/// Whether a program runs here (`man`, `groff`, `lexgrog` come with man-db and groff-base).
fn have(program: &str) -> bool {
    Command::new(program).arg("--version").output().is_ok()
}

/// The manual pages: one per command (`hiera-lookup-lint(1)`, …) as the lookup's page lists
/// them, each with a correct NAME (what `whatis`/`apropos` show), the command's own options,
/// its examples line by line; groff and man parse them without a warning.
#[test]
fn a_manual_page_per_command() {
    let dir = scratch_tree::tree("help", "man", &[]);
    let o = run(&["man", "--dir", dir.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let mut names: Vec<String> = std::fs::read_dir(&*dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "hiera-lookup-completions.1",
            "hiera-lookup-diff.1",
            "hiera-lookup-eyaml.1",
            "hiera-lookup-help.1",
            "hiera-lookup-lint.1",
            "hiera-lookup-lsp.1",
            "hiera-lookup-man.1",
            "hiera-lookup-serve.1",
            "hiera-lookup-where.1",
            "hiera-lookup.1",
        ]
    );
    let main = std::fs::read_to_string(dir.join("hiera-lookup.1")).unwrap();
    assert_eq!(main, stdout(&run(&["man"])));
    assert!(main.contains(".TH hiera-lookup 1"), "{main}");
    assert!(
        main.contains(
            ".SH NAME\nhiera\\-lookup \\- Resolve Hiera keys exactly as `puppet lookup` does, without Puppet\n"
        ),
        "{main}"
    );
    // Every page a page points at is one of the pages.
    for page in &names {
        let text = std::fs::read_to_string(dir.join(page)).unwrap();
        for (i, _) in text.match_indices("hiera\\-lookup\\-") {
            let rest = &text[i..];
            if let Some(end) = rest.find("(1)") {
                let name = rest[..end].replace("\\-", "-");
                if !name.contains(' ') {
                    assert!(
                        names.contains(&format!("{name}.1")),
                        "{page} points at {name}(1)"
                    );
                }
            }
        }
    }
    // A command's page: its NAME, its own options, its examples one per line.
    let lint = stdout(&run(&["man", "lint"]));
    assert_eq!(
        lint,
        std::fs::read_to_string(dir.join("hiera-lookup-lint.1")).unwrap()
    );
    assert!(
        lint.contains(".SH NAME\nhiera\\-lookup\\-lint \\- Check a control repo"),
        "{lint}"
    );
    for option in [
        "\\-\\-lint\\-config",
        "\\-\\-fail\\-on",
        "\\-\\-facts\\-dir",
        "\\-C",
    ] {
        assert!(lint.contains(option), "{option}: {lint}");
    }
    assert!(!lint.contains("\\-\\-explain"), "{lint}");
    assert!(
        lint.contains(".SH EXAMPLES\n") && lint.contains(".nf\nhiera\\-lookup lint\n"),
        "{lint}"
    );
    let where_ = stdout(&run(&["man", "where"]));
    assert!(where_.contains("\\-\\-reachable\\-only"), "{where_}");
    // Every option of every page says what it does (one left out of -h used to have an
    // empty entry: --config, -c/--compile, -d/--debug).
    for page in &names {
        let text = std::fs::read_to_string(dir.join(page)).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        for (i, l) in lines.iter().enumerate() {
            if *l == ".TP" && lines.get(i + 1).is_some_and(|h| h.starts_with("\\fB\\-")) {
                let description = lines.get(i + 2).copied().unwrap_or("");
                assert!(
                    !description.is_empty() && !description.starts_with('.'),
                    "{page}: {} has no description",
                    lines[i + 1]
                );
            }
        }
    }
    // groff parses every page without a warning; man formats it; lexgrog (what whatis and
    // apropos index) reads the NAME line.
    if !have("groff") {
        eprintln!("skipped: groff is not installed (apt-get install groff-base)");
        return;
    }
    for page in &names {
        let path = dir.join(page);
        let o = Command::new("groff")
            .args(["-ww", "-z", "-man"])
            .arg(&path)
            .output()
            .unwrap();
        assert!(
            o.status.success() && o.stderr.is_empty(),
            "{page}: {}",
            stderr(&o)
        );
        if have("man") {
            let o = Command::new("man")
                .env("MANWIDTH", "80")
                .env("MAN_KEEP_FORMATTING", "0")
                .arg("-l")
                .arg(&path)
                .output()
                .unwrap();
            assert!(o.status.success(), "{page}: {}", stderr(&o));
            let text = plain(&stdout(&o));
            assert!(
                text.contains("NAME") && text.contains("OPTIONS"),
                "{page}: {text}"
            );
        }
        if have("lexgrog") {
            let o = Command::new("lexgrog").arg(&path).output().unwrap();
            let name = page.trim_end_matches(".1");
            assert!(
                stdout(&o).contains(&format!("\"{name} - ")),
                "{page}: {}",
                stdout(&o)
            );
        }
    }
    // The examples of the lookup's page, one per line, as `man` shows them.
    if have("man") {
        let o = Command::new("man")
            .env("MANWIDTH", "100")
            .arg("-l")
            .arg(dir.join("hiera-lookup.1"))
            .output()
            .unwrap();
        assert!(
            plain(&stdout(&o))
                .lines()
                .any(|l| l.trim() == "hiera-lookup ntp::servers --facts facts/web01.yaml --explain"),
            "{}",
            stdout(&o)
        );
    }
}

/// An installed binary explains its lint rules without the source tree: `help lint` and the
/// lint man page list every rule with its severity and what it checks.
#[test]
fn lint_help_lists_every_rule() {
    let help = stdout(&run(&["help", "lint"]));
    let page = stdout(&run(&["man", "lint"]));
    let listed = stdout(&run(&["lint", "--list-rules"]));
    assert!(listed.lines().count() > 30, "{listed}");
    for line in listed.lines() {
        let mut words = line.split_whitespace();
        let (id, severity) = (words.next().unwrap(), words.next().unwrap());
        assert!(
            help.contains(&format!("    {id} ({severity})\n")),
            "{id}: {help}"
        );
        assert!(page.contains(&id.replace('-', "\\-")), "{id}");
    }
    assert!(!help.contains("docs/lint.md"), "{help}");
}
