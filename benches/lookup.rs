//! In-process benchmarks: deep merges of big hashes, and lookups on a generated repo.
//! Whole-process timings (and Puppet side by side) are in benches/run.sh.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use hiera_engine::merge::MergeStrategy;
use hiera_value::{Map, Value};
use std::hint::black_box;

// As in the binary: glibc's malloc, or mimalloc with the `mimalloc` feature.
#[cfg(feature = "mimalloc")]
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// A hash of `n` entries as level `level` of a hierarchy would hold it: most keys shared
/// with the other levels, some own keys, nested hashes and arrays.
fn level_hash(n: usize, level: usize) -> Value {
    let mut m = Map::with_capacity_and_hasher(n, Default::default());
    for i in 0..n {
        let key = if i % 10 == 0 {
            format!("own{level}_{i}")
        } else {
            format!("key{i}")
        };
        let v = match i % 3 {
            0 => Value::Int((i * level) as i64),
            1 => Value::Array(vec![
                Value::str(format!("a{i}")),
                Value::str(format!("l{level}")),
            ]),
            _ => {
                let mut inner = Map::default();
                inner.insert(Value::str("name"), Value::str(format!("n{i}")));
                inner.insert(Value::str(format!("l{level}")), Value::Bool(true));
                Value::Hash(inner)
            }
        };
        m.insert(Value::str(key), v);
    }
    Value::Hash(m)
}

fn deep(c: &mut Criterion) {
    let deep = MergeStrategy::from_value(&Value::str("deep")).unwrap();
    let hash = MergeStrategy::from_value(&Value::str("hash")).unwrap();
    let mut g = c.benchmark_group("merge 6 levels");
    for n in [1_000usize, 10_000] {
        let levels: Vec<Value> = (0..6).map(|l| level_hash(n, l)).collect();
        for (name, s) in [("deep", &deep), ("hash", &hash)] {
            g.bench_with_input(BenchmarkId::new(name, n), &levels, |b, levels| {
                // The levels are cloned outside the timed part: a lookup owns what it merges.
                b.iter_batched(
                    || levels.clone(),
                    |levels| {
                        let mut memo: Option<Value> = None;
                        for v in levels {
                            memo = Some(match memo {
                                None => s.convert_value(v).unwrap(),
                                Some(m) => s.merge(m, v).unwrap(),
                            });
                        }
                        black_box(memo)
                    },
                    criterion::BatchSize::LargeInput,
                )
            });
        }
    }
    g.finish();
}

fn lookups(c: &mut Criterion) {
    use hiera_engine::environment::EnvOptions;
    use hiera_engine::scope::Scope;
    use hiera_engine::{Session, Settings};
    use hiera_facts::load_facts_file;
    let repo =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/environments/production");
    let facts_path = repo.join("../../facts/web01.yaml");
    let env = EnvOptions {
        cwd: repo.clone(),
        ..EnvOptions::default()
    };
    let layers = env.layers().unwrap();
    let facts = load_facts_file(&facts_path, "web01.yaml").unwrap();
    let scope = Scope::from_facts(facts, "production");
    let mut g = c.benchmark_group("lookup in a warm session");
    for key in [
        "ntp::servers",
        "profile::base::users",
        "profile::base::motd",
    ] {
        let mut session = Session::new(scope.clone(), layers.clone(), Settings::default());
        let keys = vec![key.to_string()];
        g.bench_function(key, |b| {
            b.iter(|| black_box(session.lookup(&keys, None).unwrap()))
        });
    }
    g.finish();
}

criterion_group!(benches, deep, lookups);
criterion_main!(benches);
