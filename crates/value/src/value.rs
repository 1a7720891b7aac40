//! The value model: what a Hiera data file can hold, as Puppet sees it.

use indexmap::IndexMap;
use std::hash::{Hash, Hasher};

/// An ordered hash, as Ruby's: insertion order is kept and observable.
pub type Map = IndexMap<Value, Value, rustc_hash::FxBuildHasher>;

/// A Puppet value (Ruby object) that lookups can produce.
#[derive(Clone, Debug)]
pub enum Value {
    /// Ruby `nil` (Puppet `undef`).
    Null,
    /// `true` / `false`.
    Bool(bool),
    /// An Integer within 64 bits.
    Int(i64),
    /// An Integer beyond 64 bits (a Ruby Bignum): its decimal digits, with `-` when negative.
    BigInt(String),
    /// A Float.
    Float(f64),
    /// A String.
    String(String),
    /// An Array.
    Array(Vec<Value>),
    /// A Hash, in insertion order.
    Hash(Map),
    /// `Sensitive[T]`, produced by `convert_to: Sensitive`.
    Sensitive(Box<Value>),
    /// A Puppet runtime object made by `convert_to` (Timestamp, Timespan, SemVer).
    Object(Box<RubyObject>),
}

/// A Ruby object a lookup can produce: rendered by its `to_s`, and by `to_yaml` as a tagged
/// mapping of its instance variables.
#[derive(Clone, Debug, PartialEq)]
pub struct RubyObject {
    /// Puppet's type name: `Timestamp`, `Timespan`, `SemVer`.
    pub type_name: &'static str,
    /// The Ruby class `to_yaml` tags it with.
    pub class: &'static str,
    /// The instance variables, in the order `to_yaml` lists them.
    pub fields: Vec<(String, Value)>,
    /// Ruby's `to_s` (also what JSON and `--render-as s` print).
    pub to_s: String,
    /// Set when Psych dumps the object as one tagged scalar rather than a mapping of
    /// `fields`: a Regexp (`!ruby/regexp /a.b/`), a Symbol (`:name`), a binary String.
    pub scalar: Option<TaggedScalar>,
}

/// A scalar as Psych emits it for a Ruby object: its tag (None: untagged), its text, and
/// whether it is a literal block (`|`, binary data) rather than a style libyaml picks.
#[derive(Clone, Debug, PartialEq)]
pub struct TaggedScalar {
    /// The YAML tag (`!ruby/regexp`, `!binary`), None for an untagged plain scalar.
    pub tag: Option<&'static str>,
    /// The scalar's text.
    pub text: String,
    /// A literal block (`|-`) rather than a style libyaml picks.
    pub literal: bool,
}

impl RubyObject {
    /// The bytes of a binary (ASCII-8BIT) String, as YAML's `!!binary` makes it.
    pub fn binary_bytes(&self) -> Option<Vec<u8>> {
        match &self.scalar {
            Some(TaggedScalar {
                tag: Some(BINARY_TAG),
                text,
                ..
            }) if self.type_name == "String" => crate::ruby::base64::strict_decode64(text),
            _ => None,
        }
    }
}

/// The YAML tag Psych gives a binary String.
pub const BINARY_TAG: &str = "!binary";

/// A Ruby String of `bytes` in ASCII-8BIT (Psych's `!!binary`): ASCII-only bytes are an
/// ordinary String (they render alike everywhere); others a String object that Psych dumps as
/// `!binary` base64, JSON writes only when the bytes are UTF-8, and `inspect` shows as `\xHH`.
pub fn binary_string(bytes: &[u8]) -> Value {
    if bytes.is_ascii() {
        return Value::String(String::from_utf8_lossy(bytes).into_owned());
    }
    let b64 = crate::ruby::base64::strict_encode64(bytes);
    Value::Object(Box::new(RubyObject {
        type_name: "String",
        class: "String",
        fields: Vec::new(),
        to_s: String::from_utf8_lossy(bytes).into_owned(),
        scalar: Some(TaggedScalar {
            tag: Some(BINARY_TAG),
            text: b64,
            literal: true,
        }),
    }))
}

impl Value {
    /// The bytes of a binary String made by [`binary_string`] (None for anything else).
    pub fn binary_bytes(&self) -> Option<Vec<u8>> {
        match self {
            Value::Object(o) => o.binary_bytes(),
            _ => None,
        }
    }

    /// True when arrays and hashes nest more than `limit` deep in this value (counted without
    /// recursion, so any value can be asked).
    pub fn deeper_than(&self, limit: usize) -> bool {
        let mut stack: Vec<(&Value, usize)> = vec![(self, 0)];
        while let Some((v, d)) = stack.pop() {
            let children: Box<dyn Iterator<Item = &Value>> = match v {
                Value::Array(a) => Box::new(a.iter()),
                Value::Hash(h) => Box::new(h.iter().flat_map(|(k, v)| [k, v])),
                Value::Sensitive(b) => Box::new(std::iter::once(&**b)),
                _ => continue,
            };
            if d + 1 > limit {
                return true;
            }
            stack.extend(children.map(|c| (c, d + 1)));
        }
        false
    }

    /// A String value.
    pub fn str(s: impl Into<String>) -> Value {
        Value::String(s.into())
    }
    /// The text of a String value.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::String(s) => Some(s),
            _ => None,
        }
    }
    /// The entries of a Hash; `None` for any other value.
    pub fn as_hash(&self) -> Option<&Map> {
        match self {
            Value::Hash(h) => Some(h),
            _ => None,
        }
    }
    /// Whether this is `nil` (Puppet's `undef`).
    pub fn is_null(&self) -> bool {
        matches!(self, Value::Null)
    }
    /// Ruby truthiness: only nil and false are falsy.
    pub fn truthy(&self) -> bool {
        !matches!(self, Value::Null | Value::Bool(false))
    }
    /// The Ruby class name Puppet's messages use for this value.
    pub fn ruby_class(&self) -> &'static str {
        match self {
            Value::Null => "NilClass",
            Value::Bool(true) => "TrueClass",
            Value::Bool(false) => "FalseClass",
            Value::Int(_) | Value::BigInt(_) => "Integer",
            Value::Float(_) => "Float",
            Value::String(_) => "String",
            Value::Array(_) => "Array",
            Value::Hash(_) => "Hash",
            Value::Sensitive(_) => "Puppet::Pops::Types::PSensitiveType::Sensitive",
            Value::Object(o) => o.class,
        }
    }
    /// Look up a string key in a hash value.
    pub fn get(&self, key: &str) -> Option<&Value> {
        match self {
            Value::Hash(h) => h.get(&StrKey(key)),
            _ => None,
        }
    }
}

// Ruby `eql?` semantics for hash keys and `==` for uniqueness: 1 and 1.0 differ,
// floats compare by bit pattern so that a Value can be a map key.
impl PartialEq for Value {
    fn eq(&self, other: &Value) -> bool {
        use Value::*;
        match (self, other) {
            (Null, Null) => true,
            (Bool(a), Bool(b)) => a == b,
            (Int(a), Int(b)) => a == b,
            (BigInt(a), BigInt(b)) => a == b,
            (Float(a), Float(b)) => a.to_bits() == b.to_bits() || a == b,
            (String(a), String(b)) => a == b,
            (Array(a), Array(b)) => a == b,
            (Hash(a), Hash(b)) => a.len() == b.len() && a.iter().all(|(k, v)| b.get(k) == Some(v)),
            (Sensitive(a), Sensitive(b)) => a == b,
            (Object(a), Object(b)) => a == b,
            _ => false,
        }
    }
}
impl Eq for Value {}

/// Ruby's `<=>` of two integers (Int or BigInt).
pub fn int_cmp(a: &Value, b: &Value) -> std::cmp::Ordering {
    use std::cmp::Ordering;
    fn digits(v: &Value) -> (bool, String) {
        let t = match v {
            Value::Int(i) => i.to_string(),
            Value::BigInt(d) => d.clone(),
            _ => String::from("0"),
        };
        match t.strip_prefix('-') {
            Some(m) => (true, m.to_string()),
            None => (false, t),
        }
    }
    let ((na, ma), (nb, mb)) = (digits(a), digits(b));
    // Canonical digits: a longer magnitude is larger.
    let mag = ma.len().cmp(&mb.len()).then_with(|| ma.cmp(&mb));
    match (na, nb) {
        (false, false) => mag,
        (true, true) => mag.reverse(),
        (true, false) => Ordering::Less,
        (false, true) => Ordering::Greater,
    }
}

/// An integer (Int or BigInt) as the nearest Float, as Ruby converts it to compare.
pub fn int_to_f64(v: &Value) -> f64 {
    match v {
        Value::Int(i) => *i as f64,
        Value::BigInt(d) => d.parse().unwrap_or(0.0),
        _ => 0.0,
    }
}

/// Hash tags of the variants; `StrKey` must hash like `Value::String`.
const TAG_STRING: u8 = 4;

impl Hash for Value {
    fn hash<H: Hasher>(&self, state: &mut H) {
        use Value::*;
        let tag: u8 = match self {
            Null => 0,
            Bool(_) => 1,
            Int(_) => 2,
            Float(_) => 3,
            String(_) => TAG_STRING,
            Array(_) => 5,
            Hash(_) => 6,
            Sensitive(_) => 7,
            Object(_) => 8,
            BigInt(_) => 9,
        };
        tag.hash(state);
        match self {
            Null => {}
            Bool(b) => b.hash(state),
            Int(i) => i.hash(state),
            BigInt(d) => d.hash(state),
            Float(f) => {
                // 0.0 == -0.0 must hash alike.
                let f = if *f == 0.0 { 0.0f64 } else { *f };
                f.to_bits().hash(state)
            }
            String(s) => s.hash(state),
            Array(a) => a.hash(state),
            // Order-independent, like Ruby's Hash#hash.
            Hash(h) => h.len().hash(state),
            Sensitive(v) => v.hash(state),
            Object(o) => o.to_s.hash(state),
        }
    }
}

/// A borrowed string key: finds `Value::String` keys in a [`Map`] without allocating.
#[derive(Debug, Clone, Copy)]
pub struct StrKey<'a>(pub &'a str);

impl Hash for StrKey<'_> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        TAG_STRING.hash(state);
        self.0.hash(state);
    }
}

impl indexmap::Equivalent<Value> for StrKey<'_> {
    fn equivalent(&self, key: &Value) -> bool {
        matches!(key, Value::String(s) if s == self.0)
    }
}

impl From<&str> for Value {
    fn from(s: &str) -> Value {
        Value::String(s.to_string())
    }
}
impl From<String> for Value {
    fn from(s: String) -> Value {
        Value::String(s)
    }
}

/// The integer written with `digits` (valid digits of `radix`, no sign or separators) as an
/// Int, or as a BigInt's decimal digits when it does not fit 64 bits (Ruby's Integer of any
/// size).
pub fn integer_from_digits(neg: bool, radix: u32, digits: &str) -> Value {
    let mut small: Option<u128> = Some(0);
    for c in digits.chars() {
        let d = c.to_digit(radix).unwrap_or(0) as u128;
        small = small
            .and_then(|v| v.checked_mul(radix as u128))
            .and_then(|v| v.checked_add(d));
    }
    if let Some(v) = small.and_then(|v| i128::try_from(v).ok()) {
        return integer_from_i128(if neg { -v } else { v });
    }
    // Arbitrary precision: little-endian limbs in base 1e9.
    let mut limbs: Vec<u64> = vec![0];
    for c in digits.chars() {
        let mut carry = c.to_digit(radix).unwrap_or(0) as u64;
        for l in limbs.iter_mut() {
            let v = *l * radix as u64 + carry;
            *l = v % 1_000_000_000;
            carry = v / 1_000_000_000;
        }
        while carry > 0 {
            limbs.push(carry % 1_000_000_000);
            carry /= 1_000_000_000;
        }
    }
    let mut out = String::from(if neg { "-" } else { "" });
    let mut it = limbs.iter().rev();
    if let Some(first) = it.next() {
        out.push_str(&first.to_string());
    }
    for l in it {
        out.push_str(&format!("{l:09}"));
    }
    Value::BigInt(out)
}

/// An i128 as an Int, or a BigInt beyond 64 bits.
pub fn integer_from_i128(v: i128) -> Value {
    match i64::try_from(v) {
        Ok(i) => Value::Int(i),
        Err(_) => Value::BigInt(v.to_string()),
    }
}

/// Ruby's `Float#to_i` (truncation, any size) of a finite float.
pub fn integer_from_f64(f: f64) -> Value {
    let t = f.trunc();
    if t.abs() < 1e38 {
        return integer_from_i128(t as i128);
    }
    // |t| >= 2^126: an integral mantissa times a power of two, exactly.
    let bits = t.abs().to_bits();
    let exp = ((bits >> 52) & 0x7ff) as i32 - 1075;
    let mantissa = (bits & ((1u64 << 52) - 1)) | (1u64 << 52);
    let mut digits = format!("{mantissa:b}");
    digits.extend(std::iter::repeat_n('0', exp.max(0) as usize));
    integer_from_digits(t < 0.0, 2, &digits)
}

/// The absolute value of an Int or BigInt (Ruby `Integer#abs`).
pub fn integer_abs(v: Value) -> Value {
    match v {
        Value::Int(i) => integer_from_i128((i as i128).abs()),
        Value::BigInt(d) => Value::BigInt(d.trim_start_matches('-').to_string()),
        other => other,
    }
}

/// The sign and the magnitude's digits in `radix` (2 to 36, lowercase) of an Int or BigInt.
pub fn integer_digits(v: &Value, radix: u32) -> (bool, String) {
    let (neg, dec) = match v {
        Value::Int(i) => (*i < 0, i.unsigned_abs().to_string()),
        Value::BigInt(d) => match d.strip_prefix('-') {
            Some(m) => (true, m.to_string()),
            None => (false, d.clone()),
        },
        _ => (false, "0".to_string()),
    };
    if radix == 10 {
        return (neg, dec);
    }
    // Base 1e9 limbs, most significant first, divided by the radix until zero.
    let mut limbs: Vec<u64> = Vec::new();
    let head = dec.len() % 9;
    if head > 0 {
        limbs.push(dec[..head].parse().unwrap_or(0));
    }
    for i in (head..dec.len()).step_by(9) {
        limbs.push(dec[i..i + 9].parse().unwrap_or(0));
    }
    let mut out = Vec::new();
    while limbs.iter().any(|&l| l != 0) {
        let mut rem = 0u64;
        for l in limbs.iter_mut() {
            let cur = rem * 1_000_000_000 + *l;
            *l = cur / radix as u64;
            rem = cur % radix as u64;
        }
        out.push(std::char::from_digit(rem as u32, radix).unwrap_or('0'));
    }
    if out.is_empty() {
        out.push('0');
    }
    (neg, out.into_iter().rev().collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn str_key_finds_string_keys_only() {
        let mut m = Map::default();
        m.insert(Value::str("a"), Value::Int(1));
        m.insert(Value::Int(1), Value::Int(2));
        assert_eq!(m.get(&StrKey("a")), Some(&Value::Int(1)));
        assert_eq!(m.get(&StrKey("1")), None);
    }

    #[test]
    fn ruby_key_equality() {
        assert_ne!(Value::Int(1), Value::Float(1.0));
        assert_eq!(Value::Float(0.0), Value::Float(-0.0));
        let a: Map = [
            (Value::str("x"), Value::Int(1)),
            (Value::str("y"), Value::Int(2)),
        ]
        .into_iter()
        .collect();
        let b: Map = [
            (Value::str("y"), Value::Int(2)),
            (Value::str("x"), Value::Int(1)),
        ]
        .into_iter()
        .collect();
        assert_eq!(Value::Hash(a), Value::Hash(b));
    }
}
