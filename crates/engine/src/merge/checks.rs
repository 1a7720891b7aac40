//! The type assertions Puppet's merge strategies make (`assert_type` in
//! `puppet/pops/merge_strategy.rb`), through the one type checker in [`hiera_types`]: the
//! expected types are Puppet's own, written as type expressions and parsed once.

use crate::error::MergeError;
use hiera_types::{self as types, Type};
use hiera_value::value::{Map, Value};
use std::sync::OnceLock;

type R<T> = Result<T, MergeError>;

/// `HashMergeStrategy#expected_type`: `Hash[String, Data]`.
const HASH: &str = "Hash[String, Data]";
/// `UniqueMergeStrategy#expected_type`: `Variant[Scalar, Array[Data]]`.
const UNIQUE: &str = "Variant[Scalar, Array[Data]]";
/// The options of the unconstrained strategies (`reverse_deep`, `unconstrained_deep`).
const OPEN_OPTIONS: &str = "Hash[String[1], Any]";
/// `MergeStrategy#options_t` for the strategies without options.
const PLAIN_OPTIONS: [&str; 4] = [
    "Struct[{'strategy' => Optional[Pattern[/first/]]}]",
    "Struct[{'strategy' => Optional[Pattern[/default/]]}]",
    "Struct[{'strategy' => Optional[Pattern[/hash/]]}]",
    "Struct[{'strategy' => Optional[Pattern[/unique/]]}]",
];
/// `DeepMergeStrategy#options_t`.
const DEEP_OPTIONS: &str = "Struct[{'strategy' => Optional[Pattern[/deep/]], \
    'knockout_prefix' => Optional[String], 'merge_debug' => Optional[Boolean], \
    'merge_hash_arrays' => Optional[Boolean], 'sort_merged_arrays' => Optional[Boolean]}]";

/// The parsed form of one of the constant expressions above.
fn parsed(expr: &'static str) -> &'static Type {
    static CACHE: OnceLock<Vec<(&'static str, Type)>> = OnceLock::new();
    let all = CACHE.get_or_init(|| {
        [HASH, UNIQUE, OPEN_OPTIONS, DEEP_OPTIONS]
            .into_iter()
            .chain(PLAIN_OPTIONS)
            // The expressions are constants checked by a unit test; `Any` keeps a build
            // that broke one from panicking.
            .map(|e| (e, types::parse(e).unwrap_or(Type::Any)))
            .collect()
    });
    all.iter()
        .find(|(e, _)| *e == expr)
        .map(|(_, t)| t)
        .unwrap_or(&all[0].1)
}

/// Puppet's `Types::TypeAsserter.assert_instance_of(subject, type, value)`.
fn assert(subject: &str, expr: &'static str, v: &Value) -> Result<(), String> {
    let t = parsed(expr);
    if t.is_instance(v) {
        Ok(())
    } else {
        Err(types::describe_mismatch(subject, t, v))
    }
}

/// The `hash` strategy's check of each element it merges.
pub(super) fn hash_element(subject: &str, v: &Value) -> R<()> {
    assert(subject, HASH, v).map_err(MergeError::lookup)
}

/// The `unique` strategy's check of each element it merges.
pub(super) fn unique_element(subject: &str, v: &Value) -> R<()> {
    assert(subject, UNIQUE, v).map_err(MergeError::lookup)
}

/// The options hash given with strategy `key` (`first`, `default`, `hash`, `unique`, `deep`,
/// or one of the unconstrained ones).
pub(super) fn options(key: &str, opts: &Map) -> R<()> {
    let expr = match key {
        "first" => PLAIN_OPTIONS[0],
        "default" => PLAIN_OPTIONS[1],
        "hash" => PLAIN_OPTIONS[2],
        "unique" => PLAIN_OPTIONS[3],
        "deep" => DEEP_OPTIONS,
        _ => OPEN_OPTIONS,
    };
    assert("The merge options", expr, &Value::Hash(opts.clone())).map_err(MergeError::raw)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_expected_type_parses() {
        for e in [HASH, UNIQUE, OPEN_OPTIONS, DEEP_OPTIONS]
            .into_iter()
            .chain(PLAIN_OPTIONS)
        {
            assert!(types::parse(e).is_ok(), "{e}");
            assert!(std::ptr::eq(parsed(e), parsed(e)));
        }
    }

    fn hash(entries: Vec<(Value, Value)>) -> Value {
        let mut m = Map::default();
        for (k, v) in entries {
            m.insert(k, v);
        }
        Value::Hash(m)
    }

    /// Messages recorded from Puppet 8.10 (`puppet lookup KEY --merge hash` over two levels).
    #[test]
    fn hash_element_messages_are_puppets() {
        let first = "The first element of the merge";
        let inner = |a: i64, b: i64| {
            hash(vec![(
                Value::Int(0),
                hash(vec![
                    (Value::str(""), Value::Int(a)),
                    (Value::Int(0), Value::Int(b)),
                ]),
            )])
        };
        // A Variant whose members merge nothing keeps their order (Ruby returns `self`).
        assert_eq!(
            hash_element(first, &inner(-1, 1)).unwrap_err().message,
            "The first element of the merge has wrong type, expects a Hash[String, Data] value, \
             got Hash[Integer[0, 0], Hash[Variant[String, Integer[0, 0]], Variant[Integer[-1, -1], Integer[1, 1]], 2, 2]]"
        );
        assert_eq!(
            hash_element(first, &inner(1, -1)).unwrap_err().message,
            "The first element of the merge has wrong type, expects a Hash[String, Data] value, \
             got Hash[Integer[0, 0], Hash[Variant[String, Integer[0, 0]], Variant[Integer[1, 1], Integer[-1, -1]], 2, 2]]"
        );
        let big = hash(vec![(
            Value::Int(0),
            hash(vec![(
                Value::str(""),
                Value::BigInt("123456789012345678901234".into()),
            )]),
        )]);
        assert_eq!(
            hash_element(first, &big).unwrap_err().message,
            "The first element of the merge has wrong type, expects a Hash[String, Data] value, \
             got Hash[Integer[0, 0], Hash[String, Integer[123456789012345678901234, 123456789012345678901234], 1, 1]]"
        );
        assert!(hash_element(first, &hash(vec![(Value::str("a"), Value::Int(1))])).is_ok());
    }

    #[test]
    fn unique_element_names_both_variants() {
        let v = Value::Array(vec![
            Value::BigInt("123456789012345678901234".into()),
            hash(vec![(Value::Int(0), Value::Int(1))]),
        ]);
        assert_eq!(
            unique_element("The first element of the merge", &v).unwrap_err().message,
            " The first element of the merge has wrong type, variant 0 expects a Scalar value, got Tuple\n  \
             The first element of the merge has wrong type, variant 1 index 1 expects a Data value, got Hash"
        );
    }
}
