//! The fuzz targets' smoke run on stable Rust (CI cannot afford nightly or minutes of
//! fuzzing): every seed in fuzz/corpus/<target>/ and a few thousand deterministic mutations of
//! them (bit flips, byte insertions and deletions, splices of two seeds, repeated chunks for
//! depth) go through the same function the cargo-fuzz target calls. A panic fails the test.
//! Longer runs: fuzz/README.md. `FUZZ_SMOKE_ITERS=n` sets the mutations per target.

use hiera_engine::fuzzing::{self, Rng};
use std::path::Path;

/// Bytes that matter to the parsers: structure, quoting, escapes, interpolation.
const DICT: &[&[u8]] = &[
    b"[",
    b"]",
    b"{",
    b"}",
    b":",
    b",",
    b"\"",
    b"'",
    b"\\",
    b"\n",
    b"  ",
    b"- ",
    b"&a ",
    b"*a",
    b"!!",
    b"%{",
    b"}",
    b"${",
    b"${?",
    b".",
    b"::",
    b"lookup('",
    b"')",
    b"=",
    b"+=",
    b"#",
    b"Array[",
    b"Hash[",
    b"Pattern[/",
    b"/]",
    b"Variant[",
    b"Struct[{",
    b"=>",
    b"\x00",
    b"\xff",
    b"\xc3\xa9",
    b"0x",
    b"1e400",
    b"-",
    b"---",
    b"...",
    b"? ",
    b"|",
    b">",
    b"\t",
    b"\"\"\"",
];

fn mutate(rng: &mut Rng, seeds: &[Vec<u8>]) -> Vec<u8> {
    let mut d = seeds[rng.below(seeds.len())].clone();
    for _ in 0..1 + rng.below(6) {
        let at = rng.below(d.len() + 1);
        match rng.below(7) {
            0 if !d.is_empty() => {
                let i = rng.below(d.len());
                d[i] ^= 1 << rng.below(8);
            }
            1 if !d.is_empty() => {
                let end = (at + 1 + rng.below(16)).min(d.len());
                d.drain(at.min(end)..end);
            }
            2 => {
                let w = DICT[rng.below(DICT.len())];
                d.splice(at..at, w.iter().copied());
            }
            3 => {
                let other = &seeds[rng.below(seeds.len())];
                let from = rng.below(other.len() + 1);
                let to = (from + rng.below(64)).min(other.len());
                d.splice(at..at, other[from..to].iter().copied());
            }
            4 => {
                // A chunk repeated: nesting, long strings, many keys.
                let w = DICT[rng.below(DICT.len())];
                let n = 1 + rng.below(300);
                let rep: Vec<u8> = w.iter().copied().cycle().take(w.len() * n).collect();
                d.splice(at..at, rep);
            }
            5 => d.insert(at, rng.next() as u8),
            _ => d.truncate(at),
        }
    }
    d.truncate(1 << 16);
    d
}

fn seeds(target: &str) -> Vec<Vec<u8>> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fuzz/corpus")
        .join(target);
    let mut names: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .collect();
    names.sort();
    names.iter().map(|p| std::fs::read(p).unwrap()).collect()
}

fn smoke(target: &str) {
    let seeds = seeds(target);
    assert!(!seeds.is_empty(), "no seeds for {target}");
    for s in &seeds {
        fuzzing::run(target, s);
    }
    let iters: usize = std::env::var("FUZZ_SMOKE_ITERS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(2000);
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15 ^ target.len() as u64);
    for i in 0..iters {
        let input = mutate(&mut rng, &seeds);
        let r = std::panic::catch_unwind(|| fuzzing::run(target, &input));
        if r.is_err() {
            panic!(
                "{target}: mutation {i} panicked on input {:?}",
                String::from_utf8_lossy(&input)
            );
        }
    }
}

#[test]
fn every_target_has_a_test() {
    let mut names: Vec<&str> = fuzzing::TARGETS.to_vec();
    names.sort();
    let mut here = vec![
        "hiera_config",
        "hocon",
        "json",
        "key_interpolation",
        "type_expr",
        "yaml",
    ];
    here.sort();
    assert_eq!(names, here);
}

#[test]
fn yaml() {
    smoke("yaml");
}

#[test]
fn hiera_config() {
    smoke("hiera_config");
}

#[test]
fn key_interpolation() {
    smoke("key_interpolation");
}

#[test]
fn type_expr() {
    smoke("type_expr");
}

#[test]
fn hocon() {
    smoke("hocon");
}

#[test]
fn json() {
    smoke("json");
}

/// The `diff` target (`hiera_diff::fuzzing`): a random control repo and change per case,
/// `diff` checked against single lookups on both sides. Each case writes two or three small
/// trees (and runs git for a third of them), so the smoke run makes a few hundred
/// (`FUZZ_SMOKE_DIFF_ITERS=n` for more).
#[test]
fn diff() {
    let mut cases = seeds("diff");
    let iters: usize = std::env::var("FUZZ_SMOKE_DIFF_ITERS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(200);
    let mut rng = Rng(0xD1FF_F022_5EED_0001);
    cases.extend((0..iters).map(|_| (0..256).map(|_| rng.next() as u8).collect()));
    let mut total = hiera_diff::fuzzing::Stats::default();
    let (mut git, mut errors, mut changed) = (0, 0, 0);
    for (i, input) in cases.iter().enumerate() {
        let r = std::panic::catch_unwind(|| hiera_diff::fuzzing::run(input));
        let Ok(s) = r else {
            panic!("diff: case {i} disagrees (input {input:02x?})");
        };
        total.pairs += s.pairs;
        total.changed_pairs += s.changed_pairs;
        git += usize::from(s.git);
        errors += usize::from(s.errors);
        changed += usize::from(s.changed_pairs > 0);
    }
    eprintln!(
        "diff: {} cases ({git} through git, {changed} with changed answers, {errors} with errors), {} node × key pairs, {} changed",
        cases.len(),
        total.pairs,
        total.changed_pairs
    );
}
