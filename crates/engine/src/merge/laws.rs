//! Property tests of the merge laws (proptest): what holds for every input, beside the
//! example tables of Ruby's answers in `super::tests`.
//!
//! * No strategy, with any options, panics on any values; errors are errors.
//! * The linear fold ([`super::fold`]) gives the pairwise fold's result (or error), for every
//!   strategy, whether it turns lazy at once or after a few levels.
//! * `first` is the first found value; `unique` holds no duplicates (`eql?`) and every
//!   flattened element of its inputs; `hash` has every key, with the highest-priority value.
//! * Identities: `deep({}, x) == x`; `hash(x, {}) == x`; `unique` of one array is its `uniq`.
//! * Associativity where Puppet's merges have it: `hash`, `unique`, and `deep` (plain options)
//!   on hashes whose sides agree on each key's kind (a scalar overwrites an array, an array
//!   merges with an array) and whose arrays are already deduplicated (deep_merge! does that on
//!   one side only).
//! * deep_merge's knockout: a `--x` item in a higher array removes `x` from the lower one.

use super::fold::{folded_after, pairwise};
use super::MergeStrategy;
use hiera_value::value::{Map, Value};
use proptest::prelude::*;

fn scalar() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        (-3i64..4).prop_map(Value::Int),
        prop_oneof![Just(1.0f64), Just(2.5), Just(-0.0)].prop_map(Value::Float),
        "[abc]{0,2}".prop_map(|s| Value::str(s.as_str())),
        prop_oneof![Just("--a"), Just("--b"), Just("--")].prop_map(Value::str),
    ]
}

/// Values with few distinct keys and elements, so that merges meet the same ones often.
fn value() -> impl Strategy<Value = Value> {
    scalar().prop_recursive(4, 48, 5, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
            prop::collection::vec(("[abcd]", inner), 0..5).prop_map(|kv| {
                let mut m = Map::default();
                for (k, v) in kv {
                    m.insert(Value::str(k.as_str()), v);
                }
                Value::Hash(m)
            }),
        ]
    })
}

/// Like [`value`] without nil and false (and without knockout-looking strings).
fn plain_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Bool(true)),
        (-3i64..4).prop_map(Value::Int),
        "[abc]{1,2}".prop_map(|s| Value::str(s.as_str())),
    ];
    leaf.prop_recursive(3, 32, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            plain_hash_of(inner),
        ]
    })
}

fn plain_hash_of(inner: impl Strategy<Value = Value>) -> impl Strategy<Value = Value> {
    prop::collection::vec(("[abcd]", inner), 0..4).prop_map(|kv| {
        let mut m = Map::default();
        for (k, v) in kv {
            m.insert(Value::str(k.as_str()), v);
        }
        Value::Hash(m)
    })
}

fn plain_hash() -> impl Strategy<Value = Value> {
    plain_hash_of(plain_value())
}

/// Hashes whose keys decide their values' kind (`a`, `b`: arrays of scalars; `c`, `d`:
/// hashes): deep_merge! lets a scalar overwrite an array but an array merge with an array, so
/// it is associative only where the three sides agree on kinds.
fn shaped_hash() -> impl Strategy<Value = Value> {
    let arr = prop::collection::vec(
        prop_oneof![
            (-2i64..3).prop_map(Value::Int),
            "[xy]".prop_map(|s| Value::str(s.as_str()))
        ],
        0..4,
    )
    .prop_map(Value::Array);
    let leaf = prop::collection::vec(("[ab]", arr.clone()), 0..3).prop_map(to_hash);
    leaf.prop_recursive(3, 24, 4, move |inner| {
        (
            prop::collection::vec(("[ab]", arr.clone()), 0..3),
            prop::collection::vec(("[cd]", inner), 0..3),
        )
            .prop_map(|(x, y)| {
                let mut kv = x;
                kv.extend(y);
                to_hash(kv)
            })
    })
}

fn to_hash(kv: Vec<(String, Value)>) -> Value {
    let mut m = Map::default();
    for (k, v) in kv {
        m.insert(Value::str(k.as_str()), v);
    }
    Value::Hash(m)
}

fn strategy(name: &str, opts: &[(&str, Value)]) -> MergeStrategy {
    let mut m = Map::default();
    m.insert(Value::str("strategy"), Value::str(name));
    for (k, v) in opts {
        m.insert(Value::str(*k), v.clone());
    }
    MergeStrategy::from_value(&Value::Hash(m)).expect("valid merge options")
}

/// Every strategy and a spread of deep options (lazy-capable and not).
fn strategies() -> Vec<MergeStrategy> {
    let t = Value::Bool(true);
    vec![
        strategy("first", &[]),
        strategy("unique", &[]),
        strategy("hash", &[]),
        strategy("deep", &[]),
        strategy("deep", &[("sort_merged_arrays", t.clone())]),
        strategy("deep", &[("merge_hash_arrays", t.clone())]),
        strategy("deep", &[("knockout_prefix", Value::str("--"))]),
        strategy("unconstrained_deep", &[]),
        strategy("unconstrained_deep", &[("merge_nil_values", t.clone())]),
        strategy(
            "unconstrained_deep",
            &[("keep_array_duplicates", t.clone())],
        ),
        strategy(
            "unconstrained_deep",
            &[("preserve_unmergeables", t.clone())],
        ),
        strategy("reverse_deep", &[]),
    ]
}

fn deep() -> MergeStrategy {
    strategy("deep", &[])
}

fn merge2(s: &MergeStrategy, a: &Value, b: &Value) -> Value {
    s.merge(a.clone(), b.clone()).expect("merge")
}

proptest! {
    // Tests write nothing outside a temp dir: no regression files (a failure prints its
    // minimal input; add it to the example tables in super::tests).
    #![proptest_config(ProptestConfig {
        cases: 256,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn fold_matches_pairwise(vals in prop::collection::vec(value(), 1..7), after in 0usize..3) {
        for s in strategies() {
            let want = pairwise(&s, vals.clone());
            let got = folded_after(&s, vals.clone(), after);
            prop_assert_eq!(&got, &want, "strategy {:?}", s.name());
        }
    }

    #[test]
    fn fold_matches_pairwise_on_many_plain_levels(
        vals in prop::collection::vec(plain_value(), 2..24),
    ) {
        for s in [deep(), strategy("unique", &[])] {
            prop_assert_eq!(folded_after(&s, vals.clone(), 1), pairwise(&s, vals.clone()));
        }
    }

    #[test]
    fn first_is_the_first_found(vals in prop::collection::vec(value(), 1..5)) {
        let s = strategy("first", &[]);
        let found: Vec<Option<Value>> = vals.iter().cloned().map(Some).collect();
        prop_assert_eq!(s.merge_found(found).unwrap(), Some(vals[0].clone()));
    }

    #[test]
    fn unique_has_no_duplicates_and_loses_nothing(
        vals in prop::collection::vec(prop::collection::vec(scalar(), 0..6).prop_map(Value::Array), 2..6),
    ) {
        let s = strategy("unique", &[]);
        let Some(Value::Array(out)) = s.merge_found(vals.iter().cloned().map(Some).collect()).unwrap() else {
            panic!("unique gives an array");
        };
        for (i, x) in out.iter().enumerate() {
            prop_assert!(!out[..i].contains(x), "duplicate {:?}", x);
        }
        for v in &vals {
            let Value::Array(a) = v else { unreachable!() };
            for x in a {
                prop_assert!(out.contains(x), "lost {:?}", x);
            }
        }
    }

    #[test]
    fn hash_keeps_every_key_with_the_highest_value(
        vals in prop::collection::vec(plain_hash(), 2..5),
    ) {
        let s = strategy("hash", &[]);
        let Some(Value::Hash(out)) = s.merge_found(vals.iter().cloned().map(Some).collect()).unwrap() else {
            panic!("hash gives a hash");
        };
        for (k, v) in &out {
            let first = vals.iter().find_map(|h| match h {
                Value::Hash(m) => m.get(k),
                _ => None,
            });
            prop_assert_eq!(Some(v), first);
        }
        for h in &vals {
            let Value::Hash(m) = h else { unreachable!() };
            for k in m.keys() {
                prop_assert!(out.contains_key(k));
            }
        }
    }

    #[test]
    fn identities(x in plain_hash(), a in prop::collection::vec(scalar(), 0..8)) {
        let empty = Value::Hash(Map::default());
        prop_assert_eq!(merge2(&deep(), &empty, &x), x.clone());
        prop_assert_eq!(merge2(&strategy("hash", &[]), &x, &empty), x.clone());
        let u = strategy("unique", &[]).merge_single(Value::Array(a.clone())).unwrap();
        let mut want: Vec<Value> = Vec::new();
        for v in a {
            if !want.contains(&v) {
                want.push(v);
            }
        }
        prop_assert_eq!(u, Value::Array(want));
    }

    #[test]
    fn associativity(a in shaped_hash(), b in shaped_hash(), c in shaped_hash()) {
        // deep_merge! deduplicates the arrays it copies from one side only: deep is
        // associative on values already merged into themselves.
        let empty = Value::Hash(Map::default());
        let (a, b, c) = (merge2(&deep(), &a, &empty), merge2(&deep(), &b, &empty), merge2(&deep(), &c, &empty));
        for s in [strategy("hash", &[]), deep()] {
            let left = merge2(&s, &merge2(&s, &a, &b), &c);
            let right = merge2(&s, &a, &merge2(&s, &b, &c));
            prop_assert_eq!(left, right, "strategy {}", s.name());
        }
    }

    #[test]
    fn unique_is_associative(
        a in prop::collection::vec(scalar(), 0..5),
        b in prop::collection::vec(scalar(), 0..5),
        c in prop::collection::vec(scalar(), 0..5),
    ) {
        let s = strategy("unique", &[]);
        let (a, b, c) = (Value::Array(a), Value::Array(b), Value::Array(c));
        let left = merge2(&s, &merge2(&s, &a, &b), &c);
        let right = merge2(&s, &a, &merge2(&s, &b, &c));
        prop_assert_eq!(left, right);
    }

    #[test]
    fn knockout_removes_lower_items(
        lower in prop::collection::vec("[abc]", 0..6),
        knock in prop::collection::vec("[abc]", 1..3),
    ) {
        let s = strategy("deep", &[("knockout_prefix", Value::str("--"))]);
        let arr = |v: &[String], pre: &str| {
            Value::Array(v.iter().map(|x| Value::str(format!("{pre}{x}"))).collect())
        };
        let mut hi = Map::default();
        hi.insert(Value::str("k"), arr(&knock, "--"));
        let mut lo = Map::default();
        lo.insert(Value::str("k"), arr(&lower, ""));
        let out = merge2(&s, &Value::Hash(hi), &Value::Hash(lo));
        let Value::Hash(out) = out else { panic!("a hash") };
        let Some(Value::Array(k)) = out.get(&Value::str("k")) else { panic!("an array") };
        for x in &knock {
            prop_assert!(!k.contains(&Value::str(x.as_str())), "{} survived", x);
        }
        for x in &lower {
            if !knock.contains(x) {
                prop_assert!(k.contains(&Value::str(x.as_str())), "{} lost", x);
            }
        }
    }

    #[test]
    fn no_panic_on_any_input(vals in prop::collection::vec(value(), 0..5)) {
        for s in strategies() {
            let _ = s.merge_found(vals.iter().cloned().map(Some).collect());
            for (a, b) in vals.iter().zip(vals.iter().skip(1)) {
                let _ = s.merge(a.clone(), b.clone());
            }
        }
    }
}
