//! Facts files at disk speed: serde_json decodes the JSON that Facter and PuppetDB write (and
//! everything else that is plain RFC 8259) into the values [`parse`](super::parse) gives, and
//! the gem's parser reads the rest.
//!
//! The two agree on every document serde_json accepts, because where they could differ the
//! fast path gives up and the gem's parser answers (and words its errors):
//!
//! * anything serde_json refuses: the gem's extensions (comments, `\x` escapes, lone
//!   surrogates, `NaN`), malformed input, control characters, a BOM, trailing text;
//! * nesting beyond the gem's 100 levels;
//! * a document that is not a hash or an array (the gem's own rules decide);
//! * a key spelled like serde_json's private number token (which it uses to hand a number's
//!   text over).
//!
//! Numbers are taken as written (serde_json's `arbitrary_precision`) and converted by the
//! gem's rules: a fraction or exponent makes a Float (Rust's correctly rounded parse, as the
//! port's), an Integer keeps all its digits beyond 64 bits (a Bignum), and `-0` is 0.

use hiera_value::value::{Map, Value};
use serde::de::{DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use std::fmt;

/// The key serde_json's deserializer uses to pass a number's text (see the module).
const NUMBER_TOKEN: &str = "$serde_json::private::Number";

/// [`parse`](super::parse)'s value when serde_json decodes `text` (see the module); `None`
/// when the gem's parser must answer.
pub(super) fn parse(text: &str) -> Option<Value> {
    if text.contains(NUMBER_TOKEN) {
        return None;
    }
    let mut de = serde_json::Deserializer::from_str(text);
    let v = Seed { depth: 0 }.deserialize(&mut de).ok()?;
    de.end().ok()?;
    matches!(v, Value::Hash(_) | Value::Array(_)).then_some(v)
}

/// A value nested `depth` arrays and hashes deep.
struct Seed {
    depth: usize,
}

impl<'de> DeserializeSeed<'de> for Seed {
    type Value = Value;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl Seed {
    /// The seed of a container's elements, within the gem's nesting limit.
    fn inner<E: serde::de::Error>(&self) -> Result<Seed, E> {
        if self.depth >= hiera_value::limits::MAX_JSON_NESTING {
            return Err(E::custom("nesting: the gem's parser decides"));
        }
        Ok(Seed {
            depth: self.depth + 1,
        })
    }
}

/// A number as written, by the gem's rules.
fn number<E: serde::de::Error>(text: &str) -> Result<Value, E> {
    if text.contains(['.', 'e', 'E']) {
        return text
            .parse::<f64>()
            .map(Value::Float)
            .map_err(|_| E::custom("float"));
    }
    Ok(match text.parse::<i64>() {
        Ok(n) => Value::Int(n),
        Err(_) => Value::BigInt(text.to_string()),
    })
}

impl<'de> Visitor<'de> for Seed {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::Int(v))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(match i64::try_from(v) {
            Ok(n) => Value::Int(n),
            Err(_) => Value::BigInt(v.to_string()),
        })
    }
    fn visit_f64<E: serde::de::Error>(self, _: f64) -> Result<Value, E> {
        // With arbitrary_precision every float comes as its text (visit_map).
        Err(E::custom("float without its text"))
    }
    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_string()))
    }
    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut a = Vec::new();
        while let Some(v) = seq.next_element_seed(self.inner()?)? {
            a.push(v);
        }
        Ok(Value::Array(a))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut m = Map::default();
        let mut first = true;
        while let Some(k) = map.next_key::<String>()? {
            if first && k == NUMBER_TOKEN {
                // A number serde_json does not fit in 64 bits, a Float, or `-0`: its text.
                // (A key spelled so in the document was ruled out before parsing.)
                let text: String = map.next_value()?;
                return number(&text);
            }
            first = false;
            let v = map.next_value_seed(self.inner()?)?;
            // A repeated key keeps its first place and takes the last value (Ruby's Hash).
            m.insert(Value::String(k), v);
        }
        Ok(Value::Hash(m))
    }
}

impl fmt::Debug for Seed {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "Seed({})", self.depth)
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn numbers_come_as_the_gem_reads_them() {
        let cases = [
            "[0, -0, 1, -1, 9223372036854775807, 9223372036854775808, -9223372036854775808, \
              -9223372036854775809, 18446744073709551616, 123456789012345678901234567890]",
            "[1.5, -0.0, 1e5, 1E+5, 2.5e-3, 1e400, -1e400, 0.1, 1.7976931348623157e308, 5e-324, \
              4.9e-324, 2.2250738585072011e-308, 0.30000000000000004]",
        ];
        for text in cases {
            let fast = super::parse(text).expect("plain JSON");
            let port = super::super::parse(text).unwrap();
            assert_eq!(format!("{fast:?}"), format!("{port:?}"), "{text}");
        }
    }

    #[test]
    fn what_serde_json_refuses_or_might_read_otherwise_is_left_to_the_gem() {
        for text in [
            "",
            "   ",
            "1",
            "\"s\"",
            "null",
            "[1] x",
            "/* c */ [1]",
            "[1] // c\n",
            "[\"\\x\"]",
            "[\"\\ud800\"]",
            "[\"\\udc00\"]",
            "[NaN]",
            "[Infinity]",
            "[01]",
            "[1.]",
            "\u{feff}[1]",
            "[\"a\u{1}b\"]",
            "{\"$serde_json::private::Number\": \"1\"}",
            "{\"a\": {\"$serde_json::private::Number\": \"1\"}}",
            &format!("{}{}", "[".repeat(101), "]".repeat(101)),
        ] {
            assert!(super::parse(text).is_none(), "{text:?}");
        }
        let deep = format!("{}{}", "[".repeat(100), "]".repeat(100));
        assert!(super::parse(&deep).is_some());
    }
}
