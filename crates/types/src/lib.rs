//! Puppet's type system, as far as lookups touch it (Puppet 7.23 `pops/types`):
//! parsing type expressions (`--type`, `convert_to`), instance checks, Puppet's
//! type formatting, inferred types and mismatch descriptions, and `new` conversions.
#![warn(missing_docs)]

mod calc;
mod convert;
mod describe;
mod parser;
pub mod semver;
mod strptime;
mod timestamp;
pub(crate) mod uri;
mod zonetab;

pub use convert::{convert, convert_args_string};
#[cfg(test)]
pub(crate) use convert::{convert_with_type, ConvertError};
pub use describe::{describe_mismatch, describe_parameter_mismatch};
pub use parser::{parse, parse_cli, TypeError};

use hiera_value::value::Value;

/// A numeric type bound as written: an Integer or a Float.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Num {
    /// An Integer bound.
    Int(i64),
    /// A Float bound.
    Float(f64),
}

impl Num {
    pub(crate) fn as_f64(self) -> f64 {
        match self {
            Num::Int(i) => i as f64,
            Num::Float(f) => f,
        }
    }
    /// Ruby's `to_s`.
    pub(crate) fn to_ruby(self) -> String {
        match self {
            Num::Int(i) => i.to_string(),
            Num::Float(f) => ruby_float(f),
        }
    }
}

/// An integer range `[from, to]`; `None` is unbounded (Ruby's ±Infinity).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Range {
    /// The lower bound (`None`: unbounded).
    pub from: Option<i64>,
    /// The upper bound (`None`: unbounded).
    pub to: Option<i64>,
    /// A size given as an `Integer[2.0, 3.0]` type: Puppet keeps the Float bounds, and prints
    /// them as Floats (integral ones only are kept exactly).
    pub float: bool,
}

impl Range {
    pub(crate) const ANY: Range = Range {
        from: None,
        to: None,
        float: false,
    };
    pub(crate) fn new(from: Option<i64>, to: Option<i64>) -> Range {
        Range {
            from,
            to,
            float: false,
        }
    }
    pub(crate) fn exact(n: i64) -> Range {
        Range {
            from: Some(n),
            to: Some(n),
            float: false,
        }
    }
    fn lo(&self) -> i128 {
        self.from.map_or(i128::MIN, i128::from)
    }
    fn hi(&self) -> i128 {
        self.to.map_or(i128::MAX, i128::from)
    }
    /// For an integer beyond 64 bits (its digits): inside only a range open on that side.
    pub(crate) fn contains_big(&self, digits: &str) -> bool {
        if digits.starts_with('-') {
            self.from.is_none()
        } else {
            self.to.is_none()
        }
    }
    pub(crate) fn contains(&self, n: i64) -> bool {
        let n = i128::from(n);
        n >= self.lo() && n <= self.hi()
    }
    /// `r2` lies within `self` (PIntegerType#assignable?).
    pub(crate) fn covers(&self, r2: &Range) -> bool {
        self.lo() <= r2.lo() && self.hi() >= r2.hi()
    }
    pub(crate) fn unbounded(&self) -> bool {
        self.from.is_none() && self.to.is_none()
    }
    /// PIntegerType#to_size: a size range never goes below zero.
    pub(crate) fn to_size(self) -> Range {
        if self.from.is_some_and(|f| f >= 0) {
            return self;
        }
        Range {
            from: Some(0),
            to: self.to.map(|t| t.max(0)),
            float: false,
        }
    }
    /// The range a collection size type means when absent (`Integer[0]`).
    pub(crate) const DEFAULT_SIZE: Range = Range {
        from: Some(0),
        to: None,
        float: false,
    };
}

/// A float range; `None` is unbounded.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FRange {
    /// The lower bound (`None`: unbounded).
    pub from: Option<f64>,
    /// The upper bound (`None`: unbounded).
    pub to: Option<f64>,
}

impl FRange {
    fn lo(&self) -> f64 {
        self.from.unwrap_or(f64::NEG_INFINITY)
    }
    fn hi(&self) -> f64 {
        self.to.unwrap_or(f64::INFINITY)
    }
}

thread_local! {
    /// The first backtracking-limit overrun of a `Pattern` match on this thread since the
    /// last [`take_regex_limit_error`].
    static REGEX_LIMIT: std::cell::RefCell<Option<String>> = const { std::cell::RefCell::new(None) };
}

/// Takes the message of a `Pattern` match that exceeded the backtracking limit since the last
/// call, if one did: a type check that met one has no answer and must fail with it.
pub fn take_regex_limit_error() -> Option<String> {
    REGEX_LIMIT.with(|l| l.borrow_mut().take())
}

/// A regular expression as Puppet keeps it: the Ruby source and a compiled Rust
/// equivalent (None when Rust's engine cannot express it; such a pattern matches nothing).
#[derive(Clone, Debug)]
pub struct Regex {
    /// The regexp's source, as written.
    pub source: String,
    /// The compiled regexp, when `regex` can run it (else fancy-regex is used at match time).
    pub compiled: Option<regex::Regex>,
    /// What `regex` cannot express (lookaround, backreferences, atomic groups).
    pub fancy: Option<fancy_regex::Regex>,
}

impl PartialEq for Regex {
    fn eq(&self, o: &Regex) -> bool {
        self.source == o.source
    }
}

impl Regex {
    pub(crate) fn new(source: &str) -> Regex {
        // Ruby: ^ and $ are always line anchors, \Z allows a final newline.
        let translated = source
            .replace("\\Z", "(?:\\n?\\z)")
            .replace("\\h", "[0-9a-fA-F]");
        let compiled = regex::RegexBuilder::new(&translated)
            .multi_line(true)
            .size_limit(hiera_value::limits::REGEX_SIZE_LIMIT)
            .build()
            .ok();
        let fancy = match compiled {
            Some(_) => None,
            None => fancy_regex::Regex::new(&format!("(?m){translated}")).ok(),
        };
        Regex {
            source: source.to_string(),
            compiled,
            fancy,
        }
    }
    pub(crate) fn is_match(&self, s: &str) -> bool {
        match (&self.compiled, &self.fancy) {
            (Some(r), _) => r.is_match(s),
            // A match that exceeds the backtracking limit is no answer: it is recorded for
            // the type check to report (see `take_regex_limit_error`), never a silent miss.
            (None, Some(f)) => f.is_match(s).unwrap_or_else(|_| {
                REGEX_LIMIT.with(|l| {
                    l.borrow_mut().get_or_insert_with(|| {
                        format!(
                            "Pattern {} exceeded the regex engine's backtracking limit ({} steps) on a {}-character string",
                            self.inspect(),
                            hiera_value::limits::REGEX_BACKTRACK_LIMIT,
                            s.chars().count()
                        )
                    });
                });
                false
            }),
            (None, None) => false,
        }
    }

    /// Why neither regexp engine could compile the pattern because of a limit (the compiled
    /// program would exceed the size limit), if that is why.
    pub(crate) fn limit_error(&self) -> Option<String> {
        if self.compiled.is_some() || self.fancy.is_some() {
            return None;
        }
        let translated = self
            .source
            .replace("\\Z", "(?:\\n?\\z)")
            .replace("\\h", "[0-9a-fA-F]");
        match regex::RegexBuilder::new(&translated)
            .multi_line(true)
            .size_limit(hiera_value::limits::REGEX_SIZE_LIMIT)
            .build()
        {
            Err(regex::Error::CompiledTooBig(_)) => Some(format!(
                "Pattern {} exceeds the regex engine's size limit ({} MiB compiled)",
                self.inspect(),
                hiera_value::limits::REGEX_SIZE_LIMIT >> 20
            )),
            _ => None,
        }
    }
    /// Ruby `Regexp#inspect`: `/source/` with unescaped slashes escaped.
    pub(crate) fn inspect(&self) -> String {
        let mut out = String::from("/");
        let mut escaped = false;
        for c in self.source.chars() {
            if escaped {
                out.push(c);
                escaped = false;
            } else if c == '\\' {
                out.push(c);
                escaped = true;
            } else if c == '/' {
                out.push_str("\\/");
            } else {
                out.push(c);
            }
        }
        out.push('/');
        out
    }
}

/// One `Struct` member: the key type is `String['name']` or `Optional[String['name']]`.
#[derive(Clone, Debug, PartialEq)]
pub struct StructElem {
    /// The key's name.
    pub name: String,
    /// Whether the key may be missing (`Optional[...]`/`NotUndef` keys as Puppet reads them).
    pub optional_key: bool,
    /// The type of the key's value.
    pub value: Type,
}

/// A Puppet type.
#[derive(Clone, Debug, PartialEq)]
// `Type[T]` is Puppet's own name for the type of types.
#[allow(clippy::enum_variant_names)]
pub enum Type {
    /// `Any`: every value.
    Any,
    /// Internal: the element type of empty collections (`Array[0, 0]`).
    Unit,
    /// `Undef`: only `undef`.
    Undef,
    /// `Default`: only `default`.
    Default,
    /// `Scalar`: strings, numbers, booleans, regexps, time types, SemVers.
    Scalar,
    /// `ScalarData`: strings, numbers and booleans.
    ScalarData,
    /// `Numeric`: integers and floats.
    Numeric,
    /// The built-in alias `Data` (kept as an alias for formatting, like Puppet).
    Data,
    /// `RichData`: what Puppet's catalog can carry.
    RichData,
    /// `Boolean`, or `Boolean[true]`/`Boolean[false]`.
    Boolean(Option<bool>),
    /// `Integer[from, to]`.
    Integer(Range),
    /// `Integer[...]` with a Float bound, which Puppet 8 keeps as written (`Integer[1.0, 50]`):
    /// compared numerically, printed with Ruby's Float#to_s.
    IntegerF(Option<Num>, Option<Num>),
    /// The type inferred for an Integer beyond 64 bits: `Integer[n, n]` (digits of n).
    BigInteger(String),
    /// `Float[from, to]`.
    Float(FRange),
    /// `String[min, max]` (`size`) or, for inferred types and `Optional['x']`, one value.
    String {
        /// The length range, `String[min, max]`.
        size: Option<Range>,
        /// The one string `String['text']` allows.
        value: Option<String>,
    },
    /// Sorted, unique values and the case-insensitive flag.
    Enum(Vec<String>, bool),
    /// `Pattern[/re/, ...]`: strings any regexp matches.
    Pattern(Vec<Regex>),
    /// `Regexp`, or `Regexp[/re/]`.
    Regexp(Option<String>),
    /// `NotUndef[T]`.
    NotUndef(Option<Box<Type>>),
    /// `Optional[T]`: `T` or `undef`.
    Optional(Option<Box<Type>>),
    /// `Variant[T, ...]`: any of the types.
    Variant(Vec<Type>),
    /// `Array[T, min, max]`.
    Array(Box<Type>, Option<Range>),
    /// `Tuple[T, ..., min, max]`.
    Tuple(Vec<Type>, Option<Range>),
    /// `Hash[K, V, min, max]`.
    Hash(Box<Type>, Box<Type>, Option<Range>),
    /// `Struct[{key => T, ...}]`.
    Struct(Vec<StructElem>),
    /// `Collection[min, max]`: arrays and hashes of that size.
    Collection(Option<Range>),
    /// `Iterable[T]`.
    Iterable(Option<Box<Type>>),
    /// `Sensitive[T]`.
    Sensitive(Box<Type>),
    /// Timestamp/Timespan bounds, already in Puppet's formatted (quoted) form.
    Timestamp(Option<String>, Option<String>),
    /// `Timespan[from, to]`.
    Timespan(Option<String>, Option<String>),
    /// `SemVer[range, ...]`: the ranges, merged as Puppet merges them.
    SemVer(Vec<semver::VersionRange>),
    /// `SemVerRange`.
    SemVerRange,
    /// `Type[T]`.
    Type(Option<Box<Type>>),
    /// `URI[{member => match, ...}]` (PURIType): None for no parameters.
    Uri(Option<Vec<(String, UriParam)>>),
    /// Types no lookup value can be an instance of (Binary, Callable, ...): their text.
    Other(String),
}

/// What a `URI` type parameter matches a URI member against (the evaluator's `match?`): a
/// value (a String compared case-insensitively, an Integer, undef, a Regexp) or a type.
#[derive(Clone, Debug, PartialEq)]
pub enum UriParam {
    /// A parameter given as a value.
    Value(Value),
    /// A parameter given as a type.
    Type(Type),
}

impl UriParam {
    /// `CompareOperator#match(member, self)`.
    fn matches(&self, member: &Value) -> bool {
        match self {
            UriParam::Type(t) => t.is_instance(member),
            UriParam::Value(p) => match (member, p) {
                (Value::String(m), Value::Object(_)) => convert::regexp_source(p)
                    .and_then(|src| hiera_value::ruby::pattern(src).ok())
                    .is_some_and(|re| re.is_match(m)),
                // equals_String: case-insensitive.
                (Value::String(m), Value::String(s)) => m.to_lowercase() == s.to_lowercase(),
                (Value::Int(m), Value::Int(n)) => m == n,
                (Value::Null, Value::Null) => true,
                _ => false,
            },
        }
    }
}

impl Type {
    pub(crate) fn string() -> Type {
        Type::String {
            size: None,
            value: None,
        }
    }
    pub(crate) fn integer() -> Type {
        Type::Integer(Range::ANY)
    }
    fn str_value(s: &str) -> Type {
        Type::String {
            size: None,
            value: Some(s.to_string()),
        }
    }
    pub(crate) fn array_empty() -> Type {
        Type::Array(Box::new(Type::Unit), Some(Range::exact(0)))
    }
    pub(crate) fn hash_empty() -> Type {
        Type::Hash(
            Box::new(Type::Unit),
            Box::new(Type::Unit),
            Some(Range::exact(0)),
        )
    }

    /// Is `v` an instance of this type (`PAnyType#instance?`)?
    pub fn is_instance(&self, v: &Value) -> bool {
        use Type as T;
        // A binary (ASCII-8BIT) String is a String to every type.
        if let Value::Object(o) = v {
            if o.binary_bytes().is_some() {
                return self.is_instance(&Value::String(o.to_s.clone()));
            }
        }
        match self {
            T::Any | T::Unit => true,
            T::Undef => v.is_null(),
            // Runtime objects by kind (their range parameters are not checked).
            // PAbstractTimeDataType#instance?: the kind, then `from <= v <= to`.
            T::Timestamp(a, b) => timestamp::time_within(v, false, a.as_deref(), b.as_deref()),
            T::Timespan(a, b) => timestamp::time_within(v, true, a.as_deref(), b.as_deref()),
            // PSemVerType#instance?: a version inside one of the ranges (if any).
            T::SemVer(ranges) => match v {
                Value::Object(o) if o.type_name == "SemVer" => {
                    ranges.is_empty()
                        || semver::Version::parse(&o.to_s)
                            .is_ok_and(|ver| ranges.iter().any(|r| r.include(&ver)))
                }
                _ => false,
            },
            T::Default => false,
            // PRegexpType#instance?: a Regexp, equal to the type's (same source) if it has one.
            T::Regexp(p) => {
                convert::regexp_source(v).is_some_and(|s| p.as_ref().is_none_or(|p| p == s))
            }
            T::Other(text) if text == "Binary" => {
                matches!(v, Value::Object(o) if o.type_name == "Binary")
            }
            // Init[T] (PInitType#instance?): a T, or what T's new() accepts; Init is RichData.
            T::Other(text) if text == "Init" => is_rich_data(v),
            T::Other(text) => match init_inner(text) {
                Some(inner) => parse(inner).is_ok_and(|t| {
                    t.is_instance(v)
                        || convert(v.clone(), &Value::String(inner.to_string())).is_ok()
                }),
                None => false,
            },
            T::SemVerRange => matches!(v, Value::Object(o) if o.type_name == "SemVerRange"),
            // PURIType#instance?: a URI whose members match every parameter.
            T::Uri(params) => uri::Uri::of(v).is_some_and(|u| {
                params
                    .iter()
                    .flatten()
                    .all(|(name, p)| p.matches(&u.member(name)))
            }),
            T::Type(_) => false,
            T::Scalar | T::ScalarData => {
                matches!(
                    v,
                    Value::String(_)
                        | Value::Int(_)
                        | Value::BigInt(_)
                        | Value::Float(_)
                        | Value::Bool(_)
                )
            }
            T::Numeric => matches!(v, Value::Int(_) | Value::BigInt(_) | Value::Float(_)),
            T::Data => is_data(v),
            T::RichData => is_rich_data(v),
            T::Boolean(b) => matches!(v, Value::Bool(x) if b.is_none_or(|b| b == *x)),
            T::BigInteger(d) => matches!(v, Value::BigInt(e) if e == d),
            T::Integer(r) => match v {
                Value::Int(i) => r.contains(*i),
                Value::BigInt(d) => r.contains_big(d),
                _ => false,
            },
            T::Float(r) => matches!(v, Value::Float(f) if *f >= r.lo() && *f <= r.hi()),
            T::IntegerF(from, to) => {
                let n = match v {
                    Value::Int(i) => *i as f64,
                    Value::BigInt(d) => d.parse::<f64>().unwrap_or(f64::NAN),
                    _ => return false,
                };
                from.is_none_or(|f| n >= f.as_f64()) && to.is_none_or(|t| n <= t.as_f64())
            }
            T::String { size, value } => match v {
                Value::String(s) => match (size, value) {
                    (_, Some(val)) => s == val,
                    (Some(r), None) => r.contains(ruby_len(s)),
                    (None, None) => true,
                },
                _ => false,
            },
            T::Enum(vals, ci) => match v {
                Value::String(s) => {
                    if *ci {
                        vals.iter().any(|p| casecmp_eq(p, s))
                    } else {
                        vals.iter().any(|p| p == s)
                    }
                }
                _ => false,
            },
            T::Pattern(pats) => match v {
                Value::String(s) => pats.is_empty() || pats.iter().any(|p| p.is_match(s)),
                _ => false,
            },
            T::NotUndef(t) => !v.is_null() && t.as_ref().is_none_or(|t| t.is_instance(v)),
            T::Optional(t) => v.is_null() || t.as_ref().is_some_and(|t| t.is_instance(v)),
            T::Variant(ts) => ts.iter().any(|t| t.is_instance(v)),
            T::Array(e, size) => match v {
                Value::Array(a) => {
                    a.iter().all(|x| e.is_instance(x))
                        && size.is_none_or(|r| r.contains(len_i64(a.len())))
                }
                _ => false,
            },
            T::Tuple(types, size) => match v {
                Value::Array(a) => {
                    match size {
                        Some(r) if !r.contains(len_i64(a.len())) => return false,
                        None if !types.is_empty() && types.len() != a.len() => return false,
                        _ => {}
                    }
                    types.is_empty()
                        || a.iter().enumerate().all(|(i, x)| {
                            types
                                .get(i)
                                .or(types.last())
                                .is_some_and(|t| t.is_instance(x))
                        })
                }
                _ => false,
            },
            T::Hash(k, val, size) => match v {
                Value::Hash(h) => {
                    h.keys().all(|x| k.is_instance(x))
                        && h.values().all(|x| val.is_instance(x))
                        && size.is_none_or(|r| r.contains(len_i64(h.len())))
                }
                _ => false,
            },
            T::Struct(elems) => match v {
                Value::Hash(h) => {
                    let mut matched = 0usize;
                    for e in elems {
                        match h.get(&Value::String(e.name.clone())) {
                            None => {
                                if !e.key_accepts_undef() {
                                    return false;
                                }
                            }
                            Some(x) => {
                                matched += 1;
                                if !e.value.is_instance(x) {
                                    return false;
                                }
                            }
                        }
                    }
                    matched == h.len()
                }
                _ => false,
            },
            T::Collection(size) => match v {
                Value::Array(a) => size.is_none_or(|r| r.contains(len_i64(a.len()))),
                Value::Hash(h) => size.is_none_or(|r| r.contains(len_i64(h.len()))),
                _ => false,
            },
            T::Iterable(t) => {
                if t.as_ref().is_none_or(|t| calc::assignable(t, &Type::Any)) {
                    match v {
                        Value::String(_) | Value::Array(_) | Value::Hash(_) => true,
                        Value::Int(i) => *i >= 0,
                        _ => false,
                    }
                } else {
                    calc::assignable(self, &infer(v))
                }
            }
            T::Sensitive(t) => match v {
                Value::Sensitive(inner) => t.is_instance(inner),
                _ => false,
            },
        }
    }
}

/// The type parameter of `Init[T, ...]` as written (None for other types).
pub(crate) fn init_inner(text: &str) -> Option<&str> {
    let rest = text
        .trim()
        .strip_prefix("Init")?
        .trim_start()
        .strip_prefix('[')?;
    let mut depth = 0usize;
    let mut quote = None;
    for (i, c) in rest.char_indices() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '"' | '\'') => quote = Some(c),
            (None, '[' | '{' | '(') => depth += 1,
            (None, ']' | '}' | ')') if depth > 0 => depth -= 1,
            (None, ',' | ']') if depth == 0 => return Some(rest[..i].trim()),
            _ => {}
        }
    }
    None
}

impl std::fmt::Display for Type {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Puppet's `TypeFormatter#string` (the type's `to_s`).
        let mut out = String::new();
        fmt_type(self, &mut out);
        f.write_str(&out)
    }
}

impl StructElem {
    /// Does the key type accept undef (Optional key, or a value type accepting undef)?
    pub(crate) fn key_accepts_undef(&self) -> bool {
        self.optional_key
    }
}

fn len_i64(n: usize) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// Ruby `String#size`: characters, not bytes.
pub(crate) fn ruby_len(s: &str) -> i64 {
    len_i64(s.chars().count())
}

fn casecmp_eq(a: &str, b: &str) -> bool {
    // Ruby casecmp folds ASCII only.
    a.len() == b.len()
        && a.bytes()
            .zip(b.bytes())
            .all(|(x, y)| x.eq_ignore_ascii_case(&y))
}

/// `Data = Variant[ScalarData, Undef, Hash[String, Data], Array[Data]]`.
pub(crate) fn is_data(v: &Value) -> bool {
    match v {
        Value::Null
        | Value::Bool(_)
        | Value::Int(_)
        | Value::BigInt(_)
        | Value::Float(_)
        | Value::String(_) => true,
        Value::Array(a) => a.iter().all(is_data),
        Value::Hash(h) => h.iter().all(|(k, x)| {
            (matches!(k, Value::String(_)) || k.binary_bytes().is_some()) && is_data(x)
        }),
        Value::Object(o) => o.binary_bytes().is_some(),
        Value::Sensitive(_) => false,
    }
}

/// `RichData`: Scalar, Sensitive, Undef, Default, ..., `Hash[Variant[String, Numeric], RichData]`, `Array[RichData]`.
fn is_rich_data(v: &Value) -> bool {
    match v {
        Value::Null
        | Value::Bool(_)
        | Value::Int(_)
        | Value::BigInt(_)
        | Value::Float(_)
        | Value::String(_) => true,
        Value::Sensitive(_) | Value::Object(_) => true,
        Value::Array(a) => a.iter().all(is_rich_data),
        Value::Hash(h) => h.iter().all(|(k, x)| {
            matches!(
                k,
                Value::String(_) | Value::Int(_) | Value::BigInt(_) | Value::Float(_)
            ) && is_rich_data(x)
        }),
    }
}

/// The describer's `simple_name` of a value's type, without parameters (`Struct`, `Tuple`,
/// `Array` for an empty array …), as Puppet's "expects X, got Y" messages print it.
pub fn simple_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "Undef",
        Value::Bool(_) => "Boolean",
        Value::Int(_) | Value::BigInt(_) => "Integer",
        Value::Float(_) => "Float",
        Value::String(_) => "String",
        Value::Array(a) if a.is_empty() => "Array",
        Value::Array(_) => "Tuple",
        Value::Hash(h)
            if !h.is_empty()
                && h.keys()
                    .all(|k| matches!(k, Value::String(s) if !s.is_empty())) =>
        {
            "Struct"
        }
        Value::Hash(_) => "Hash",
        Value::Sensitive(_) => "Sensitive",
        Value::Object(o) => o.type_name,
    }
}

/// `TypeCalculator#infer_set`: the most specific type of a value, as shown in mismatch messages.
pub(crate) fn infer(v: &Value) -> Type {
    match v {
        Value::Null => Type::Undef,
        Value::Bool(b) => Type::Boolean(Some(*b)),
        Value::Int(i) => Type::Integer(Range::exact(*i)),
        Value::BigInt(d) => Type::BigInteger(d.clone()),
        Value::Float(f) => Type::Float(FRange {
            from: Some(*f),
            to: Some(*f),
        }),
        Value::String(s) => Type::str_value(s),
        Value::Array(a) if a.is_empty() => Type::array_empty(),
        Value::Array(a) => Type::Tuple(a.iter().map(infer).collect(), None),
        Value::Hash(h) if h.is_empty() => Type::hash_empty(),
        Value::Hash(h) => {
            if h.keys()
                .all(|k| matches!(k, Value::String(s) if !s.is_empty()))
            {
                Type::Struct(
                    h.iter()
                        .map(|(k, x)| StructElem {
                            name: k.as_str().unwrap_or_default().to_string(),
                            optional_key: false,
                            value: infer(x),
                        })
                        .collect(),
                )
            } else {
                let keys = calc::variant_maybe(h.keys().map(infer).collect());
                let vals = calc::variant_maybe(h.values().map(infer).collect());
                Type::Hash(
                    Box::new(keys),
                    Box::new(vals),
                    Some(Range::exact(len_i64(h.len()))),
                )
            }
        }
        Value::Sensitive(inner) => Type::Sensitive(Box::new(calc::generalize(&infer(inner)))),
        Value::Object(o) if o.binary_bytes().is_some() => Type::str_value(&o.to_s),
        Value::Object(o) => match o.type_name {
            "Symbol" => Type::Other("Runtime[ruby, 'Symbol']".into()),
            // `Timestamp['...']`: a range holding only the value, as Puppet infers it.
            "Timestamp" => {
                let v = format!("'{}'", o.to_s);
                Type::Timestamp(Some(v.clone()), Some(v))
            }
            "Timespan" => {
                let v = format!("'{}'", o.to_s);
                Type::Timespan(Some(v.clone()), Some(v))
            }
            // infer_Version: `SemVer[VersionRange.new(v, v)]`.
            "SemVer" => Type::SemVer(
                semver::Version::parse(&o.to_s)
                    .map(|v| vec![semver::VersionRange::exact(&v)])
                    .unwrap_or_default(),
            ),
            "SemVerRange" => Type::SemVerRange,
            "Regexp" => Type::Regexp(convert::regexp_source(v).map(str::to_string)),
            // PURIType.new(uri): its members as parameters.
            "URI" => Type::Uri(
                uri::Uri::of(v)
                    .map(|u| u.to_params())
                    .filter(|p| !p.is_empty())
                    .map(|p| {
                        p.into_iter()
                            .map(|(k, v)| (k, UriParam::Value(v)))
                            .collect()
                    }),
            ),
            _ => Type::Other(o.type_name.to_string()),
        },
    }
}

/// `TypeCalculator#infer` (not `infer_set`): containers get one common element type.
pub(crate) fn infer_plain(v: &Value) -> Type {
    fn common(ts: Vec<Type>) -> Type {
        let gs: Vec<Type> = ts.iter().map(calc::generalize).collect();
        match gs.first() {
            None => Type::Unit,
            Some(f) if gs.iter().all(|g| g == f) => f.clone(),
            _ if gs.iter().all(|g| calc::assignable(&Type::ScalarData, g)) => Type::ScalarData,
            _ if gs.iter().all(|g| calc::assignable(&Type::Scalar, g)) => Type::Scalar,
            _ if gs.iter().all(|g| calc::assignable(&Type::Data, g)) => Type::Data,
            _ => Type::Any,
        }
    }
    match v {
        Value::Array(a) if a.is_empty() => Type::array_empty(),
        Value::Array(a) => Type::Array(Box::new(common(a.iter().map(infer_plain).collect())), None),
        Value::Hash(h) if h.is_empty() => Type::hash_empty(),
        Value::Hash(h) => Type::Hash(
            Box::new(common(h.keys().map(infer_plain).collect())),
            Box::new(common(h.values().map(infer_plain).collect())),
            None,
        ),
        Value::Sensitive(inner) => Type::Sensitive(Box::new(calc::generalize(&infer_plain(inner)))),
        v => infer(v),
    }
}

/// Ruby `Float#to_s`.
pub use hiera_value::ruby::float_to_s as ruby_float;

/// `StringConverter#puppet_quote`: single quotes unless control characters force double.
pub fn puppet_quote(s: &str) -> String {
    if s.chars().any(|c| (c as u32) < 0x20) {
        let mut b = String::from("\"");
        for c in s.chars() {
            match c {
                '\t' => b.push_str("\\t"),
                '\n' => b.push_str("\\n"),
                '\r' => b.push_str("\\r"),
                '"' => b.push_str("\\\""),
                '$' => b.push_str("\\$"),
                '\\' => b.push_str("\\\\"),
                c if (c as u32) < 0x20 => b.push_str(&format!("\\u{{{:X}}}", c as u32)),
                c => b.push(c),
            }
        }
        b.push('"');
        return b;
    }
    let mut b = String::from("'");
    let mut escaped = false;
    for c in s.chars() {
        if escaped {
            b.push('\\');
            b.push(c);
            escaped = false;
        } else if c == '\'' {
            b.push_str("\\'");
        } else if c == '\\' {
            escaped = true;
        } else {
            b.push(c);
        }
    }
    if escaped {
        b.push('\\');
    }
    b.push('\'');
    b
}

fn range_part(r: &Option<Range>) -> Vec<String> {
    match r {
        None => vec![],
        Some(r) if r.unbounded() => vec![],
        Some(r) => {
            let bound = |n: i64| {
                if r.float {
                    ruby_float(n as f64)
                } else {
                    n.to_string()
                }
            };
            let mut v = vec![r.from.map_or("default".to_string(), bound)];
            if let Some(t) = r.to {
                v.push(bound(t));
            }
            v
        }
    }
}

fn frange_part(r: &FRange) -> Vec<String> {
    if r.from.is_none() && r.to.is_none() {
        return vec![];
    }
    let mut v = vec![r.from.map_or("default".to_string(), ruby_float)];
    if let Some(t) = r.to {
        v.push(ruby_float(t));
    }
    v
}

fn fmt_params(name: &str, parts: &[String], out: &mut String) {
    out.push_str(name);
    if !parts.is_empty() {
        out.push('[');
        out.push_str(&parts.join(", "));
        out.push(']');
    }
}

fn has_empty_range(size: &Option<Range>) -> bool {
    matches!(
        size,
        Some(Range {
            from: Some(0),
            to: Some(0),
            ..
        })
    )
}

fn fmt_type(t: &Type, out: &mut String) {
    use Type as T;
    let s = |t: &Type| t.to_string();
    match t {
        T::Any => out.push_str("Any"),
        T::Unit => out.push_str("Unit"),
        T::Undef => out.push_str("Undef"),
        T::Default => out.push_str("Default"),
        T::Scalar => out.push_str("Scalar"),
        T::ScalarData => out.push_str("ScalarData"),
        T::Numeric => out.push_str("Numeric"),
        T::Data => out.push_str("Data"),
        T::RichData => out.push_str("RichData"),
        T::Boolean(b) => fmt_params(
            "Boolean",
            &b.iter().map(|b| b.to_string()).collect::<Vec<_>>(),
            out,
        ),
        T::Integer(r) => fmt_params("Integer", &range_part(&Some(*r)), out),
        T::BigInteger(d) => fmt_params("Integer", &[d.clone(), d.clone()], out),
        T::Float(r) => fmt_params("Float", &frange_part(r), out),
        T::IntegerF(from, to) => {
            let mut parts = vec![from.map_or("default".to_string(), |f| f.to_ruby())];
            if let Some(t) = to {
                parts.push(t.to_ruby());
            }
            fmt_params("Integer", &parts, out)
        }
        T::String { size, .. } => fmt_params("String", &range_part(size), out),
        T::Enum(vals, ci) => {
            let mut p: Vec<String> = vals.iter().map(|v| puppet_quote(v)).collect();
            if *ci {
                p.push("true".into());
            }
            fmt_params("Enum", &p, out)
        }
        T::Pattern(pats) => fmt_params(
            "Pattern",
            &pats.iter().map(|p| p.inspect()).collect::<Vec<_>>(),
            out,
        ),
        T::Regexp(p) => fmt_params(
            "Regexp",
            &p.iter()
                .map(|p| Regex::new(p).inspect())
                .collect::<Vec<_>>(),
            out,
        ),
        T::NotUndef(inner) | T::Optional(inner) => {
            let name = if matches!(t, T::NotUndef(_)) {
                "NotUndef"
            } else {
                "Optional"
            };
            let p = match inner.as_deref() {
                None | Some(T::Any) if name == "NotUndef" => vec![],
                None => vec![],
                Some(T::String { value: Some(v), .. }) => vec![puppet_quote(v)],
                Some(x) => vec![s(x)],
            };
            fmt_params(name, &p, out)
        }
        T::Variant(ts) => fmt_params("Variant", &ts.iter().map(s).collect::<Vec<_>>(), out),
        T::Array(e, size) => {
            if has_empty_range(size) {
                out.push_str("Array[0, 0]")
            } else if **e == T::Any && size.is_none() {
                out.push_str("Array")
            } else {
                let mut p = vec![s(e)];
                p.extend(range_part(size));
                fmt_params("Array", &p, out)
            }
        }
        T::Hash(k, v, size) => {
            if has_empty_range(size) {
                out.push_str("Hash[0, 0]")
            } else if **k == T::Any && **v == T::Any && size.is_none() {
                out.push_str("Hash")
            } else {
                let mut p = vec![s(k), s(v)];
                p.extend(range_part(size));
                fmt_params("Hash", &p, out)
            }
        }
        T::Tuple(ts, size) => {
            let mut p: Vec<String> = ts.iter().map(s).collect();
            p.extend(range_part(size));
            if ts.is_empty() {
                out.push_str("Tuple")
            } else {
                fmt_params("Tuple", &p, out)
            }
        }
        T::Struct(elems) => {
            if elems.is_empty() {
                out.push_str("Struct");
                return;
            }
            let parts: Vec<String> = elems
                .iter()
                .map(|e| {
                    let value_optional = calc::assignable(&e.value, &T::Undef);
                    let key = if e.optional_key {
                        if value_optional {
                            puppet_quote(&e.name)
                        } else {
                            format!("Optional[{}]", puppet_quote(&e.name))
                        }
                    } else if value_optional {
                        format!("NotUndef[{}]", puppet_quote(&e.name))
                    } else {
                        puppet_quote(&e.name)
                    };
                    format!("{} => {}", key, s(&e.value))
                })
                .collect();
            out.push_str("Struct[{");
            out.push_str(&parts.join(", "));
            out.push_str("}]");
        }
        T::Collection(size) => fmt_params("Collection", &range_part(size), out),
        T::Iterable(e) => fmt_params("Iterable", &e.iter().map(|x| s(x)).collect::<Vec<_>>(), out),
        T::Sensitive(e) => {
            if **e == T::Any {
                out.push_str("Sensitive")
            } else {
                fmt_params("Sensitive", &[s(e)], out)
            }
        }
        T::Timestamp(a, b) | T::Timespan(a, b) => {
            let name = if matches!(t, T::Timestamp(..)) {
                "Timestamp"
            } else {
                "Timespan"
            };
            let mut p = vec![];
            if a.is_some() || b.is_some() {
                p.push(a.clone().unwrap_or_else(|| "default".into()));
                if let Some(b) = b {
                    if Some(b) != a.as_ref() {
                        p.push(b.clone());
                    }
                }
            }
            fmt_params(name, &p, out)
        }
        T::SemVer(r) => fmt_params(
            "SemVer",
            &r.iter()
                .map(|x| puppet_quote(&x.string))
                .collect::<Vec<_>>(),
            out,
        ),
        T::SemVerRange => out.push_str("SemVerRange"),
        T::Type(e) => fmt_params("Type", &e.iter().map(|x| s(x)).collect::<Vec<_>>(), out),
        T::Uri(None) => out.push_str("URI"),
        T::Uri(Some(params)) => {
            let entries: Vec<String> = params
                .iter()
                .map(|(k, p)| {
                    let v = match p {
                        UriParam::Type(t) => s(t),
                        UriParam::Value(Value::String(v)) => puppet_quote(v),
                        UriParam::Value(Value::Null) => "undef".to_string(),
                        UriParam::Value(v @ Value::Object(_)) => {
                            format!("/{}/", convert::regexp_source(v).unwrap_or_default())
                        }
                        UriParam::Value(v) => hiera_value::ruby::to_s(v),
                    };
                    format!("{} => {v}", puppet_quote(k))
                })
                .collect();
            out.push_str(&format!("URI[{{{}}}]", entries.join(", ")));
        }
        T::Other(name) => out.push_str(name),
    }
}

#[cfg(test)]
mod tests;

/// `TypeCalculator#infer` (Puppet's own, as `validate_data_value` names a rejected value):
/// containers get the common type of their elements (`reduce_type`) and their size.
pub fn infer_reduced(v: &Value) -> Type {
    match v {
        Value::Array(a) if a.is_empty() => Type::array_empty(),
        Value::Array(a) => Type::Array(
            Box::new(reduce_types(a.iter().map(infer_reduced))),
            Some(Range::exact(len_i64(a.len()))),
        ),
        Value::Hash(h) if h.is_empty() => Type::hash_empty(),
        Value::Hash(h) => Type::Hash(
            Box::new(reduce_types(h.keys().map(infer_reduced))),
            Box::new(reduce_types(h.values().map(infer_reduced))),
            Some(Range::exact(len_i64(h.len()))),
        ),
        Value::Sensitive(inner) => Type::Sensitive(Box::new(infer_reduced(inner))),
        v => infer(v),
    }
}

fn reduce_types(ts: impl Iterator<Item = Type>) -> Type {
    let mut memo: Option<Type> = None;
    for t in ts {
        memo = Some(match memo {
            None => t,
            Some(m) => common_type(m, t),
        });
    }
    memo.unwrap_or(Type::Unit)
}

/// `f` of two range ends; an open end stays open.
fn both_ends<T>(a: Option<T>, b: Option<T>, f: fn(T, T) -> T) -> Option<T> {
    Some(f(a?, b?))
}

/// `TypeCalculator#common_type` for the types data values infer to.
fn common_type(t1: Type, t2: Type) -> Type {
    use Type as T;
    // `is_pnil?` counts Undef as no type at all.
    if matches!(t1, T::Unit | T::Undef) {
        return t2;
    }
    if matches!(t2, T::Unit | T::Undef) {
        return t1;
    }
    if t1 == t2 {
        return t1;
    }
    if calc::assignable(&t1, &t2) {
        return t1;
    }
    if calc::assignable(&t2, &t1) {
        return t2;
    }
    let sorted_union = |a: &[String], b: &[String]| {
        let mut v: Vec<String> = a.to_vec();
        for x in b {
            if !v.contains(x) {
                v.push(x.clone());
            }
        }
        v.sort();
        v
    };
    match (&t1, &t2) {
        (T::Array(e1, _), T::Array(e2, _)) => {
            return T::Array(Box::new(common_type((**e1).clone(), (**e2).clone())), None)
        }
        (T::Hash(k1, v1, _), T::Hash(k2, v2, _)) => {
            return T::Hash(
                Box::new(common_type((**k1).clone(), (**k2).clone())),
                Box::new(common_type((**v1).clone(), (**v2).clone())),
                None,
            )
        }
        // 64-bit ranges cannot hold a Bignum bound: the open Integer stands in.
        (T::Integer(_) | T::BigInteger(_), T::Integer(_) | T::BigInteger(_))
            if matches!(t1, T::BigInteger(_)) || matches!(t2, T::BigInteger(_)) =>
        {
            return T::Integer(Range::ANY)
        }
        (T::Integer(a), T::Integer(b)) => {
            let from = both_ends(a.from, b.from, i64::min);
            return T::Integer(Range::new(from, both_ends(a.to, b.to, i64::max)));
        }
        (T::Float(a), T::Float(b)) => {
            let from = both_ends(a.from, b.from, f64::min);
            return T::Float(FRange {
                from,
                to: both_ends(a.to, b.to, f64::max),
            });
        }
        (T::String { value: v1, .. }, T::String { value: v2, .. }) => {
            return match (v1, v2) {
                (Some(a), Some(b)) => T::Enum(
                    sorted_union(std::slice::from_ref(a), std::slice::from_ref(b)),
                    false,
                ),
                _ => T::String {
                    size: None,
                    value: None,
                },
            }
        }
        (T::String { value, .. }, T::Enum(vals, _))
        | (T::Enum(vals, _), T::String { value, .. }) => {
            return match value {
                Some(s) => T::Enum(sorted_union(vals, std::slice::from_ref(s)), false),
                None => T::Enum(Vec::new(), false),
            }
        }
        (T::Enum(a, _), T::Enum(b, _)) => return T::Enum(sorted_union(a, b), false),
        (T::Variant(a), T::Variant(b)) => {
            let mut v = a.clone();
            for x in b {
                if !v.contains(x) {
                    v.push(x.clone());
                }
            }
            return T::Variant(v);
        }
        _ => {}
    }
    let both = |t: &Type| calc::assignable(t, &t1) && calc::assignable(t, &t2);
    for general in [T::Numeric, T::ScalarData, T::Scalar, T::Data, T::RichData] {
        if both(&general) {
            return general;
        }
    }
    T::Any
}
