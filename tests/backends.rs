//! Custom backends through the library's public API: an embedder's lookup_key and data_dig
//! backends, registered and called.

use hiera_engine::backend::custom;
use hiera_value::{Map, Value};
use std::sync::Arc;

fn map(pairs: &[(&str, Value)]) -> Map {
    pairs
        .iter()
        .map(|(k, v)| (Value::str(*k), v.clone()))
        .collect()
}

struct Doubler;
impl custom::LookupKeyBackend for Doubler {
    fn lookup_key(&self, key: &str, options: &Map) -> Result<Option<Value>, String> {
        let factor = match options.get(&Value::str("factor")) {
            Some(Value::Int(n)) => *n,
            _ => 2,
        };
        Ok(key.parse::<i64>().ok().map(|n| Value::Int(n * factor)))
    }
}

struct Dig;
impl custom::DataDigBackend for Dig {
    fn data_dig(&self, segments: &[Value], _: &Map) -> Result<Option<Value>, String> {
        Ok(Some(Value::Array(segments.to_vec())))
    }
}

#[test]
fn custom_backends_register_and_answer() {
    let mut b = custom::Backends::default();
    b.register_lookup_key("doubler", Arc::new(Doubler))
        .register_data_dig("dig", Arc::new(Dig));
    let shared = b.clone();
    let lk = shared.lookup_key("doubler").unwrap();
    assert_eq!(
        lk.lookup_key("21", &Map::default()),
        Ok(Some(Value::Int(42)))
    );
    assert_eq!(lk.lookup_key("x", &Map::default()), Ok(None));
    let o = map(&[("factor", Value::Int(3))]);
    assert_eq!(lk.lookup_key("2", &o), Ok(Some(Value::Int(6))));
    let segs = [Value::str("a"), Value::Int(0)];
    assert_eq!(
        shared
            .data_dig("dig")
            .unwrap()
            .data_dig(&segs, &Map::default()),
        Ok(Some(Value::Array(segs.to_vec())))
    );
    assert!(shared.data_hash("doubler").is_none());
}

// ---------------------------------------------------------------- hocon
