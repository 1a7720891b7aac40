//! The two ports of deep_merge against each other (proptest): the value-level merges of
//! [`super`] (what a lookup answers) and the Ruby-object replay of [`super::objects`] (what
//! `--explain` prints and `merge_debug` traces) must give the same result for every strategy,
//! every deep-merge option and every sequence of found values. Where the value-level merge
//! fails, the replay is not run (the engine runs it only after the value-level merge
//! succeeded; see [`objects::Heap::merge`]).

use super::fold::pairwise;
use super::objects::{Heap, Rv};
use super::MergeStrategy;
use hiera_value::value::{Map, Value};
use proptest::prelude::*;

/// Scalars that meet each other often, knockout-looking strings (`--a`, `-b`, the bare
/// markers `--` and `-`) and comma-joined strings for `unpack_arrays`.
fn scalar() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        (-2i64..3).prop_map(Value::Int),
        Just(Value::Float(1.5)),
        "[ab]{0,2}".prop_map(|s| Value::str(s.as_str())),
        prop_oneof![
            Just("--a"),
            Just("--b"),
            Just("--"),
            Just("-a"),
            Just("-"),
            Just("a,b")
        ]
        .prop_map(Value::str),
    ]
}

fn value() -> impl Strategy<Value = Value> {
    scalar().prop_recursive(4, 40, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::vec(("[abc]", inner), 0..4).prop_map(|kv| {
                let mut m = Map::default();
                for (k, v) in kv {
                    m.insert(Value::str(k.as_str()), v);
                }
                Value::Hash(m)
            }),
        ]
    })
}

/// Every strategy, the deep ones with any combination of deep_merge's options that Puppet
/// accepts for them (`deep` takes fewer than the unconstrained strategies).
fn strategy() -> impl Strategy<Value = MergeStrategy> {
    let flags = prop::collection::vec(any::<bool>(), 8);
    let knockout = prop_oneof![Just(None), Just(Some("--")), Just(Some("-"))];
    let name = prop_oneof![
        Just("first"),
        Just("unique"),
        Just("hash"),
        Just("deep"),
        Just("deep"),
        Just("unconstrained_deep"),
        Just("reverse_deep"),
    ];
    (name, knockout, flags).prop_filter_map("options the strategy accepts", |(name, ko, f)| {
        let mut m = Map::default();
        m.insert(Value::str("strategy"), Value::str(name));
        if matches!(name, "first" | "unique" | "hash") {
            return MergeStrategy::from_value(&Value::Hash(m)).ok();
        }
        let names = [
            "sort_merged_arrays",
            "merge_hash_arrays",
            "preserve_unmergeables",
            "overwrite_arrays",
            "extend_existing_arrays",
            "keep_array_duplicates",
            "merge_nil_values",
        ];
        // `deep` takes the first two only; the others take them all (rarely, so that most
        // cases merge something).
        let allowed = if name == "deep" { 2 } else { names.len() };
        for (i, opt) in names.iter().enumerate().take(allowed) {
            if f[i] && (i < 2 || !f[7]) {
                m.insert(Value::str(*opt), Value::Bool(true));
            }
        }
        if let Some(k) = ko {
            m.insert(Value::str("knockout_prefix"), Value::str(k));
        }
        if name != "deep" && f[7] && f[6] {
            m.insert(Value::str("unpack_arrays"), Value::str(","));
        }
        MergeStrategy::from_value(&Value::Hash(m)).ok()
    })
}

/// The merge driver's fold (`convert_value`, then `merge(memo, v)`) on the object heap.
fn replayed(s: &MergeStrategy, vals: &[Value]) -> Option<Value> {
    let mut heap = Heap::new();
    let objs: Vec<Rv> = vals.iter().map(|v| heap.alloc(v)).collect();
    let mut memo: Option<Rv> = None;
    for o in objs {
        memo = Some(match memo {
            None => heap.convert_value(s, o),
            Some(m) => heap
                .merge(s, m, o)
                .expect("the replay fails only where the value-level merge does"),
        });
    }
    memo.map(|m| heap.value(&m))
}

/// [`replayed`] with the `merge_debug` trace on: tracing must not change the result.
fn replayed_traced(s: &MergeStrategy, a: &Value, b: &Value) -> Value {
    let mut s = s.clone();
    if let MergeStrategy::Deep(o)
    | MergeStrategy::UnconstrainedDeep(o)
    | MergeStrategy::ReverseDeep(o) = &mut s
    {
        o.merge_debug = true;
    }
    let s = &s;
    let mut heap = Heap::new();
    let (x, y) = (heap.alloc(a), heap.alloc(b));
    let mut trace = String::new();
    let x = heap.convert_value(s, x);
    let r = heap.merge_traced(s, x, y, &mut trace).expect("replay");
    heap.value(&r)
}

proptest! {
    // No regression files: a failure prints its minimal input (add it to a table test).
    #![proptest_config(ProptestConfig {
        cases: 1024,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn both_ports_merge_alike(s in strategy(), vals in prop::collection::vec(value(), 1..5)) {
        let Ok(want) = pairwise(&s, vals.clone()) else {
            return Ok(());
        };
        prop_assert_eq!(replayed(&s, &vals), want, "strategy {:?}", s);
    }

    #[test]
    fn both_ports_merge_hashes_alike(
        s in strategy(),
        vals in prop::collection::vec(
            prop::collection::vec(("[abc]", value()), 0..4).prop_map(|kv| {
                let mut m = Map::default();
                for (k, v) in kv {
                    m.insert(Value::str(k.as_str()), v);
                }
                Value::Hash(m)
            }),
            2..5,
        ),
    ) {
        let Ok(want) = pairwise(&s, vals.clone()) else {
            return Ok(());
        };
        prop_assert_eq!(replayed(&s, &vals), want, "strategy {:?}", s);
    }

    #[test]
    fn tracing_changes_nothing(s in strategy(), a in value(), b in value()) {
        let Ok(Some(want)) = pairwise(&s, vec![a.clone(), b.clone()]) else {
            return Ok(());
        };
        prop_assert_eq!(replayed_traced(&s, &a, &b), want, "strategy {:?}", s);
    }
}
