//! `lookup_options` `convert_to`: Puppet's `new(Type, value, args...)` for the types data uses.
//!
//! Timestamp, Timespan, SemVer and URI results are `Value::Object`s: their `to_s` for JSON and
//! `--render-as s`, their instance variables for YAML, as Ruby renders them. Timestamp strings
//! are parsed in [`super::timestamp`], URIs in [`super::uri`].

use super::timestamp::{parse_timespan_with, timespan_format, TIMESPAN_FORMATS};
use super::{parse, puppet_quote, ruby_float, Type};
use hiera_value::value::Value;

/// Why a `convert_to` failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ConvertError {
    /// The type string did not parse: TypeParser's message.
    Parse { source: String, message: String },
    /// `new` failed: its message.
    New(String),
}

impl ConvertError {
    /// The LookupError text Puppet reports for key `key`.
    pub fn lookup_message(&self, key: &str) -> String {
        match self {
            ConvertError::Parse { source, message } => format!(
                "Invalid data type in lookup_options for key '{key}' could not parse '{source}', error: '{message}"
            ),
            ConvertError::New(m) => format!("The convert_to lookup_option for key '{key}' raised error: {m}"),
        }
    }
}

/// Apply a `convert_to` option (`"Type"` or `["Type", args...]`) to a looked-up value
/// (`LookupAdapter#convert_result`).
pub fn convert(value: Value, target: &Value) -> Result<Value, ConvertError> {
    let (type_str, args): (&Value, &[Value]) = match target {
        Value::Array(a) if !a.is_empty() => (&a[0], &a[1..]),
        // `new(*[])`: the type parameter is missing, so it is undef.
        Value::Array(_) => {
            return Err(ConvertError::New(
                "'new' parameter 'type' expects a Type value, got Undef".into(),
            ))
        }
        t => (t, &[]),
    };
    let ty = match type_str {
        Value::String(s) => match parse(s) {
            Ok(t) => t,
            Err(super::TypeError::Unknown(name)) => {
                // An unknown name is a TypeReference, which has no `new`.
                return Err(ConvertError::New(format!(
                    "Creation of new instance of type 'TypeReference[{}]' is not supported",
                    puppet_quote(&name)
                )));
            }
            Err(e) => {
                return Err(ConvertError::Parse {
                    source: s.clone(),
                    message: e.message(),
                })
            }
        },
        other => {
            return Err(ConvertError::New(format!(
                "'new' parameter 'type' expects a Type value, got {}",
                type_name_of(other)
            )))
        }
    };
    // `new_instance`: the value itself when it is the only argument, the type is not an Init
    // type and the value is already an instance of it.
    let init = matches!(&ty, Type::Other(t) if t == "Init" || t.starts_with("Init["));
    if args.is_empty() && !init && ty.is_instance(&value) {
        return Ok(value);
    }
    let result = convert_with_type(value, &ty, args).map_err(ConvertError::New)?;
    // `new` of a parameterised type asserts its result against the type.
    if !ty.is_instance(&result) {
        let subject = format!("Converted value from {ty}.new()");
        return Err(ConvertError::New(super::describe::describe_mismatch(
            &subject, &ty, &result,
        )));
    }
    Ok(result)
}

/// The `Applying convert_to lookup_option with arguments ...` text (StringConverter of the option).
pub fn convert_args_string(target: &Value) -> String {
    let items: Vec<Value> = match target {
        Value::Array(a) => a.clone(),
        t => vec![t.clone()],
    };
    let parts: Vec<String> = items
        .iter()
        .enumerate()
        .map(|(i, v)| match (i, v) {
            (0, Value::String(s)) => parse(s)
                .map(|t| t.to_string())
                .unwrap_or_else(|_| s.clone()),
            (_, v) => puppet_string(v, true),
        })
        .collect();
    format!("[{}]", parts.join(", "))
}

/// The `new` function of a type and the most arguments any of its dispatches takes (the
/// value counts): more is an arity error before any dispatch is tried.
fn new_arity(ty: &Type) -> Option<(&'static str, usize)> {
    Some(match ty {
        Type::String { .. } => ("new_string", 2),
        Type::Integer(_) | Type::IntegerF(..) => ("new", 3),
        Type::Float(_) => ("new_float", 2),
        Type::Numeric => ("new_numeric", 2),
        Type::Boolean(_) => ("new_boolean", 1),
        Type::Array(..) | Type::Tuple(..) => ("new_array", 2),
        Type::Hash(..) | Type::Struct(_) => ("new_hash", 2),
        Type::Sensitive(_) => ("new_Sensitive", 1),
        // PRegexpType's new function is created under the name `new_float`.
        Type::Regexp(_) => ("new_float", 2),
        Type::Other(t) if t == "Binary" => ("new_Binary", 2),
        // PURIType's new function is created under the name `new_error`.
        Type::Uri(_) => ("new_error", 1),
        _ => return None,
    })
}

/// `new(type, value, *args)`.
pub(crate) fn convert_with_type(value: Value, ty: &Type, args: &[Value]) -> Result<Value, String> {
    if let Some((func, max)) = new_arity(ty) {
        let got = args.len() + 1;
        if got > max {
            return Err(if max == 1 {
                format!("'{func}' expects 1 argument, got {got}")
            } else {
                format!("'{func}' expects between 1 and {max} arguments, got {got}")
            });
        }
    }
    match ty {
        Type::Sensitive(_) => Ok(match value {
            Value::Sensitive(_) => value,
            v => Value::Sensitive(Box::new(v)),
        }),
        Type::String { .. } => to_string(value, args.first()),
        Type::Integer(_) | Type::IntegerF(..) => to_integer(value, args),
        Type::Float(_) => to_float(value, args.first()).map_err(|e| prefixed("new_float", e)),
        Type::Numeric => to_numeric(value, args.first()).map_err(|e| prefixed("new_numeric", e)),
        Type::Boolean(_) => to_boolean(value).map_err(|e| format!("'new_boolean' {e}")),
        Type::Array(..) | Type::Tuple(..) => to_array(value, args.first()),
        Type::Hash(..) | Type::Struct(_) => match (args.first(), tree_entries(&value)) {
            (Some(Value::String(opt)), true) if opt == "tree" || opt == "hash_tree" => {
                hash_from_tree(value, opt == "hash_tree")
            }
            (None, _) => to_hash(value),
            // No dispatch takes this pair: Puppet lists each signature and why it was
            // rejected, over several lines.
            (Some(opt), _) => Err(new_hash_rejected(&value, opt)),
        },
        Type::Timestamp(..) => to_timestamp(value, args.first(), args.get(1)),
        Type::Timespan(..) => to_timespan(value, args.first()),
        Type::SemVer(_) => to_semver(value, args),
        Type::SemVerRange => to_semver_range(value, args),
        Type::Regexp(_) => to_regexp(value, args.first()),
        Type::Other(t) if t == "Binary" => to_binary(value, args.first()),
        Type::Uri(_) => to_uri(value),
        Type::Optional(_) if value.is_null() => Ok(Value::Null),
        Type::Optional(Some(inner)) | Type::NotUndef(Some(inner)) => {
            convert_with_type(value, inner, args)
        }
        // PUnitType's "null" new: the value as is.
        Type::RichData | Type::Any | Type::NotUndef(None) => Ok(value),
        // An alias: its resolved type's new, which a Variant does not have.
        Type::Data => Err(
            "Creation of new instance of type 'Variant[ScalarData, Undef, Hash[String, Data], Array[Data]]' is not supported"
                .to_string(),
        ),
        // POptionalType#new_function: `optional_type.new_function`, on nil.
        Type::Optional(None) => Err("undefined method `new_function' for nil".to_string()),
        // PInitType: the type's own new.
        Type::Other(t) if t.starts_with("Init[") => match super::init_inner(t).map(super::parse) {
            Some(Ok(inner)) => convert_with_type(value, &inner, args),
            _ => Err(format!("Creation of new instance of type '{t}' is not supported")),
        },
        t => Err(format!(
            "Creation of new instance of type '{}' is not supported",
            t
        )),
    }
}

/// `new_hash(from, build_option)` that no signature accepts: Puppet's list of the signatures,
/// each with why it rejected the arguments.
fn new_hash_rejected(from: &Value, opt: &Value) -> String {
    const TREE_ARRAY: &str = "TreeArray = Array[Tuple[Array, Any], 1]";
    const OPTION: &str = "NewHashOption = Enum['hash_tree', 'tree']";
    let tree_array = Type::Array(
        Box::new(Type::Tuple(
            vec![Type::Array(Box::new(Type::Any), None), Type::Any],
            None,
        )),
        Some(super::Range::new(Some(1), None)),
    );
    let mut first: Vec<String> = match from {
        Value::Array(_) => super::describe::describe_lines("parameter 'from'", &tree_array, from),
        other => vec![format!(
            "parameter 'from' expects a {TREE_ARRAY} value, got {}",
            super::describe::simple_type_name(other)
        )],
    };
    if first.is_empty() {
        let got = match opt {
            Value::String(s) => format!("'{s}'"),
            other => super::describe::simple_type_name(other),
        };
        first.push(format!(
            "parameter 'build_option' expects a match for {OPTION}, got {got}"
        ));
    }
    let mut out = String::from(
        "The function 'new_hash' was called with arguments it does not accept. It expects one of:",
    );
    out.push_str(&format!("\n  ({TREE_ARRAY} from, {OPTION} build_option?)"));
    for line in first {
        out.push_str(&format!("\n    rejected: {line}"));
    }
    out.push_str("\n  (KeyValueArray = Array[Tuple[Any, Any], 1] from)\n    rejected: expects 1 argument, got 2");
    out.push_str("\n  (Any from)\n    rejected: expects 1 argument, got 2");
    out
}

/// Dispatch failures (argument_mismatch handlers) carry the function name; conversion errors not.
fn prefixed(func: &str, e: String) -> String {
    if e.starts_with("The string '") || e.starts_with("Value of type ") {
        format!("'{func}' {e}")
    } else {
        e
    }
}

fn type_name_of(v: &Value) -> String {
    super::calc::generalize(&super::infer_plain(v)).to_string()
}

fn cannot(v: &Value, target: &str) -> String {
    match v {
        Value::String(s) => format!("The string '{s}' cannot be converted to {target}"),
        v => format!(
            "Value of type {} cannot be converted to {target}",
            type_name_of(v)
        ),
    }
}

/// INTEGER_PATTERN_LENIENT: `\A[+-]?\s*(?:\d+|0[xX][0-9A-Fa-f]+|0[bB][01]+)\z`.
fn integer_lenient(s: &str) -> bool {
    let b = s
        .strip_prefix(['+', '-'])
        .unwrap_or(s)
        .trim_start_matches([' ', '\t', '\n', '\r', '\x0c', '\x0b']);
    let hex = b.len() > 2
        && (b.starts_with("0x") || b.starts_with("0X"))
        && b[2..].bytes().all(|c| c.is_ascii_hexdigit());
    let bin = b.len() > 2
        && (b.starts_with("0b") || b.starts_with("0B"))
        && b[2..].bytes().all(|c| c == b'0' || c == b'1');
    let dec = !b.is_empty() && b.bytes().all(|c| c.is_ascii_digit());
    hex || bin || dec
}

/// FLOAT_PATTERN: sign, then decimal float, hex, octal or binary integer.
fn float_pattern(s: &str) -> bool {
    let b = s
        .strip_prefix(['+', '-'])
        .unwrap_or(s)
        .trim_start_matches([' ', '\t', '\n', '\r', '\x0c', '\x0b']);
    let bytes = b.as_bytes();
    let hex = b.len() > 2
        && (b.starts_with("0x") || b.starts_with("0X"))
        && b[2..].bytes().all(|c| c.is_ascii_hexdigit());
    let bin = b.len() > 2
        && (b.starts_with("0b") || b.starts_with("0B"))
        && b[2..].bytes().all(|c| c == b'0' || c == b'1');
    let oct =
        b.len() > 1 && b.starts_with('0') && b[1..].bytes().all(|c| (b'0'..=b'7').contains(&c));
    // (?:0|[1-9]\d*)(?:\.\d+)?(?:[eE]-?\d+)?
    let mut i = 0;
    let dec = (|| {
        if bytes.first() == Some(&b'0') {
            i = 1;
        } else if bytes.first().is_some_and(|c| (b'1'..=b'9').contains(c)) {
            while i < bytes.len() && bytes[i].is_ascii_digit() {
                i += 1;
            }
        } else {
            return false;
        }
        if bytes.get(i) == Some(&b'.') {
            let s = i + 1;
            i += 1;
            while i < bytes.len() && bytes[i].is_ascii_digit() {
                i += 1;
            }
            if i == s {
                return false;
            }
        }
        if matches!(bytes.get(i), Some(b'e' | b'E')) {
            i += 1;
            if bytes.get(i) == Some(&b'-') {
                i += 1;
            }
            let s = i;
            while i < bytes.len() && bytes[i].is_ascii_digit() {
                i += 1;
            }
            if i == s {
                return false;
            }
        }
        i == bytes.len()
    })();
    dec || hex || oct || bin
}

fn to_integer(v: Value, args: &[Value]) -> Result<Value, String> {
    if let Value::Hash(h) = &v {
        return integer_from_hash(h);
    }
    to_integer_args(v, args).map_err(|e| prefixed("new", e))
}

/// `Integer.new({from => ..., radix => ..., abs => ...})`.
fn integer_from_hash(h: &hiera_value::value::Map) -> Result<Value, String> {
    let get = |k: &str| h.get(&Value::String(k.to_string())).cloned();
    let allowed = ["from", "radix", "abs"];
    if let Some(from) = get("from") {
        if h.keys()
            .all(|k| matches!(k, Value::String(s) if allowed.contains(&s.as_str())))
        {
            if let Value::Hash(h) = &from {
                return integer_from_hash(h);
            }
            // A missing radix is `default`, which data cannot spell (it reads as a String).
            let radix = match get("radix") {
                None => None,
                Some(r) => Some(radix_of(&from, &r, 2)?),
            }
            .flatten();
            let abs = matches!(get("abs"), Some(Value::Bool(true)));
            return integer_of(from, radix, abs).map_err(|e| prefixed("new", e));
        }
    }
    let mut errs = Vec::new();
    if get("from").is_none() {
        errs.push(" Integer.new has wrong type, expects a value for key 'from'".to_string());
    }
    for k in h.keys() {
        match k {
            Value::String(s) if allowed.contains(&s.as_str()) => {}
            k => errs.push(format!(
                " Integer.new has wrong type, unrecognized key '{}'",
                puppet_string(k, false)
            )),
        }
    }
    Err(if errs.len() == 1 {
        errs.remove(0).trim().to_string()
    } else {
        errs.join("\n ")
    })
}

/// The radix argument of `Integer.new` (`None`: default), or Puppet's rejection of it.
fn radix_of(v: &Value, radix: &Value, n_args: usize) -> Result<Option<i64>, String> {
    match radix {
        Value::Int(r) => Ok(Some(*r)),
        // A radix no signature takes, with a value the first one would: Puppet's rejection.
        other if integer_convertible(v) => Err(new_integer_rejected(other, n_args)),
        _ => Err(cannot(v, "Integer")),
    }
}

fn to_integer_args(v: Value, args: &[Value]) -> Result<Value, String> {
    let radix = match args.first() {
        None => None,
        Some(r) => radix_of(&v, r, args.len() + 1)?,
    };
    let abs = matches!(args.get(1), Some(Value::Bool(true)));
    integer_of(v, radix, abs)
}

fn integer_of(v: Value, radix: Option<i64>, abs: bool) -> Result<Value, String> {
    if let Some(r) = radix {
        if ![2, 8, 10, 16].contains(&r) {
            return Err(format!(
                "Illegal radix: {r}, expected 2, 8, 10, 16, or default"
            ));
        }
    }
    let n = match &v {
        Value::Int(_) | Value::BigInt(_) => v.clone(),
        Value::Float(f) => hiera_value::value::integer_from_f64(*f),
        Value::Bool(b) => Value::Int(i64::from(*b)),
        Value::String(s) if integer_lenient(s) => integer_from_string(s, radix.map(|r| r as u32))?,
        other => return Err(cannot(other, "Integer")),
    };
    Ok(if abs {
        hiera_value::value::integer_abs(n)
    } else {
        n
    })
}

/// `Convertible = Variant[Numeric, Boolean, Pattern[INTEGER_PATTERN_LENIENT], Timespan, Timestamp]`.
fn integer_convertible(v: &Value) -> bool {
    match v {
        Value::Int(_) | Value::BigInt(_) | Value::Float(_) | Value::Bool(_) => true,
        Value::String(s) => integer_lenient(s),
        Value::Object(o) => matches!(o.type_name, "Timespan" | "Timestamp"),
        _ => false,
    }
}

/// `Integer.new(from, radix, ...)` with a radix `Radix` does not accept.
fn new_integer_rejected(radix: &Value, n: usize) -> String {
    const CONVERTIBLE: &str = r"Convertible = Variant[Numeric, Boolean, Pattern[/\A[+-]?\s*(?:(?:\d+)|(?:0[xX][0-9A-Fa-f]+)|(?:0[bB][01]+))\z/], Timespan, Timestamp]";
    const RADIX: &str =
        "Radix = Variant[Default, Integer[2, 2], Integer[8, 8], Integer[10, 10], Integer[16, 16]]";
    format!(
        "The function 'new' was called with arguments it does not accept. It expects one of:\n  ({CONVERTIBLE} from, {RADIX} radix?, Boolean abs?)\n    rejected: parameter 'radix' expects a {RADIX} value, got {}\n  (NamedArgs = Struct[{{'from' => {CONVERTIBLE}, Optional['radix'] => {RADIX}, Optional['abs'] => Boolean}}] hash_args)\n    rejected: expects 1 argument, got {n}",
        super::describe::simple_type_name(radix)
    )
}

fn ruby_inspect_str(s: &str) -> String {
    hiera_value::ruby::inspect(&Value::String(s.to_string()))
}

/// Puppet's WS_BETWEEN_SIGN_AND_NUMBER (`/\A([+-])[[:blank:]]+(.*)\z/`): the sign joined to
/// what follows the spaces or tabs after it, for the retry `Integer.new` and `Float.new` make
/// when Ruby rejects the text (`"- 5"` is tried again as `"-5"`).
fn sign_joined(s: &str) -> Option<String> {
    let rest = s.strip_prefix(['+', '-'])?;
    let number = rest.trim_start_matches([' ', '\t']);
    (number.len() < rest.len() && !number.contains('\n')).then(|| format!("{}{number}", &s[..1]))
}

/// `Integer.new(String, radix)`: Ruby's `Integer(s)` or `Integer(s, radix)`, retried with the
/// sign joined when it fails; the first failure's message stands.
fn integer_from_string(s: &str, radix: Option<u32>) -> Result<Value, String> {
    hiera_value::ruby::integer(s, radix)
        .or_else(|| integer_from_string(&sign_joined(s)?, radix).ok())
        .ok_or_else(|| format!("invalid value for Integer(): {}", ruby_inspect_str(s)))
}

/// `Float.new(String)` (PFloatType's `from_convertible`): text starting `0b` or `0B` through
/// `Integer()`, all else through Ruby's `Float()`, retried with the sign joined when that fails
/// (the first failure's message stands). Puppet looks at the second character with
/// `from[1].casecmp('b')`, which fails on a lone `"0"`.
fn float_from_string(s: &str) -> Result<f64, String> {
    let b = s.as_bytes();
    let direct = if b.first() == Some(&b'0') {
        match b.get(1) {
            None => return Err("undefined method `casecmp' for nil".into()),
            Some(b'b' | b'B') => hiera_value::ruby::integer(s, None)
                .map(|n| hiera_value::value::int_to_f64(&n))
                .ok_or_else(|| format!("invalid value for Integer(): {}", ruby_inspect_str(s))),
            Some(_) => hiera_value::ruby::float(s),
        }
    } else {
        hiera_value::ruby::float(s)
    };
    direct.or_else(|e| {
        sign_joined(s)
            .and_then(|joined| float_from_string(&joined).ok())
            .ok_or(e)
    })
}

fn to_float(v: Value, abs: Option<&Value>) -> Result<Value, String> {
    let abs = matches!(abs, Some(Value::Bool(true)));
    let f = match &v {
        Value::Float(f) => *f,
        Value::Int(i) => *i as f64,
        Value::BigInt(_) => hiera_value::value::int_to_f64(&v),
        Value::Bool(b) => f64::from(u8::from(*b)),
        Value::String(s) if float_pattern(s) => float_from_string(s)?,
        other => return Err(cannot(other, "Float")),
    };
    Ok(Value::Float(if abs { f.abs() } else { f }))
}

fn to_numeric(v: Value, abs: Option<&Value>) -> Result<Value, String> {
    let abs = matches!(abs, Some(Value::Bool(true)));
    let r = match &v {
        Value::Float(_) | Value::Int(_) | Value::BigInt(_) => v.clone(),
        Value::Bool(b) => Value::Int(i64::from(*b)),
        // PNumericType's `from_convertible`: `0b` and `0x` text through `Integer()`, all else
        // through `Utils.to_n`, whose nil (text it does not read) is the result: undef, which
        // `new` then rejects as no Numeric, or whose `abs` fails.
        Value::String(s) if float_pattern(s) => {
            let lower = s.to_ascii_lowercase();
            if lower.starts_with("0b") || lower.starts_with("0x") {
                hiera_value::ruby::integer(s, None).ok_or_else(|| cannot(&v, "Numeric"))?
            } else {
                match to_n(s) {
                    Some(n) => n,
                    None if abs => return Err("undefined method `abs' for nil".into()),
                    None => Value::Null,
                }
            }
        }
        other => return Err(cannot(other, "Numeric")),
    };
    Ok(match r {
        Value::Int(_) | Value::BigInt(_) if abs => hiera_value::value::integer_abs(r),
        Value::Float(f) if abs => Value::Float(f.abs()),
        r => r,
    })
}

/// `Puppet::Pops::Utils.to_n`: text matching its NUMERIC pattern as an Integer (hexadecimal,
/// octal with a leading 0, decimal) or a Float, else None (nil). Its `match_to_fp` gives nil for
/// a zero with an exponent (`0e5`, `0.0e1`) and for Infinity, and an integer part Ruby's
/// `Integer()` rejects (`09.5`) is nil too.
fn to_n(s: &str) -> Option<Value> {
    static NUMERIC: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    static ZERO_EXPONENT: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    let numeric = NUMERIC.get_or_init(|| {
        regex::Regex::new(
            r"\A[[:blank:]]*([-+]?)[[:blank:]]*((0[xX][0-9A-Fa-f]+)|(0?[0-9]+)((?:\.[0-9]+)?(?:[eE]-?[0-9]+)?))[[:blank:]]*\z",
        )
        .expect("a valid pattern")
    });
    let c = numeric.captures(s)?;
    let neg = &c[1] == "-";
    let body = &c[2];
    match c.get(5).map(|m| m.as_str()).filter(|f| !f.is_empty()) {
        Some(fraction) => {
            let int = hiera_value::ruby::integer(&c[4], None)?;
            let zero_exponent = ZERO_EXPONENT
                .get_or_init(|| regex::Regex::new(r"\A\.?0*[eE]").expect("a valid pattern"));
            if int == Value::Int(0) && zero_exponent.is_match(fraction) {
                return None;
            }
            let f = hiera_value::ruby::float(body).ok()?;
            (f != f64::INFINITY).then_some(Value::Float(if neg { -f } else { f }))
        }
        // `-Integer(match[2])`.
        None => hiera_value::ruby::integer(&format!("{}{body}", &c[1]), None),
    }
}

fn to_boolean(v: Value) -> Result<Value, String> {
    Ok(Value::Bool(match &v {
        Value::Bool(b) => *b,
        Value::Int(i) => *i != 0,
        Value::BigInt(_) => true,
        Value::Float(f) => *f != 0.0,
        Value::String(s) => match s.to_ascii_lowercase().as_str() {
            "true" | "yes" | "y" => true,
            "false" | "no" | "n" => false,
            _ => return Err(cannot(&v, "Boolean")),
        },
        other => return Err(cannot(other, "Boolean")),
    }))
}

fn to_array(v: Value, wrap: Option<&Value>) -> Result<Value, String> {
    if matches!(wrap, Some(Value::Bool(true))) {
        return Ok(match v {
            Value::Array(_) => v,
            v => Value::Array(vec![v]),
        });
    }
    match v {
        Value::Array(_) => Ok(v),
        Value::Hash(h) => Ok(Value::Array(
            h.into_iter()
                .map(|(k, x)| Value::Array(vec![k, x]))
                .collect(),
        )),
        Value::String(s) => Ok(Value::Array(
            s.chars().map(|c| Value::String(c.to_string())).collect(),
        )),
        Value::Int(n) if n >= 0 => Ok(Value::Array((0..n.min(1 << 24)).map(Value::Int).collect())),
        other => Err(format!(
            "Value of type {} cannot be converted to Array",
            type_name_of(&other)
        )),
    }
}

/// `TreeArray = Array[Tuple[Array, Any], 1]`: what `new_hash`'s `from_tree` dispatch takes.
fn tree_entries(v: &Value) -> bool {
    matches!(v, Value::Array(a) if !a.is_empty()
        && a.iter().all(|e| matches!(e, Value::Array(p) if p.len() == 2 && matches!(p[0], Value::Array(_)))))
}

/// `PHashType.array_as_hash`: arrays (nested ones too) become index-keyed hashes.
fn array_as_hash(v: Value) -> Value {
    match v {
        Value::Array(a) => Value::Hash(
            a.into_iter()
                .enumerate()
                .map(|(i, x)| (Value::Int(i as i64), array_as_hash(x)))
                .collect(),
        ),
        other => other,
    }
}

/// Ruby's NoMethodError receiver wording (Ruby 3.3).
fn no_method(method: &str, recv: &Value) -> String {
    let who = match recv {
        Value::Null => "nil".to_string(),
        Value::Bool(b) => b.to_string(),
        other => format!("an instance of {}", other.ruby_class()),
    };
    format!("undefined method `{method}' for {who}")
}

/// `new_hash`'s `from_tree`: each `[path, value]` is stored at its path, missing hashes made
/// on the way (`hash_tree`: array values become index-keyed hashes).
fn hash_from_tree(v: Value, all_hashes: bool) -> Result<Value, String> {
    let Value::Array(entries) = v else {
        return Err("not a tree".into());
    };
    let mut result = Value::Hash(hiera_value::value::Map::default());
    for e in entries {
        let Value::Array(mut pair) = e else { continue };
        let value = pair.pop().unwrap_or(Value::Null);
        let Some(Value::Array(path)) = pair.pop() else {
            continue;
        };
        let Some((last, init)) = path.split_last() else {
            // The root: an array's items by index, a hash merged in.
            let Value::Hash(r) = &mut result else {
                unreachable!()
            };
            match value {
                Value::Array(a) => {
                    for (i, x) in a.into_iter().enumerate() {
                        r.insert(Value::Int(i as i64), x);
                    }
                }
                Value::Hash(h) => r.extend(h),
                other => {
                    return Err(format!(
                        "no implicit conversion of {} into Hash",
                        other.ruby_class()
                    ))
                }
            }
            continue;
        };
        let mut node = &mut result;
        for idx in init {
            node = match node {
                Value::Array(a) => {
                    let i = array_index(a.len(), idx)?;
                    match i {
                        Some(i) => &mut a[i],
                        None => return Err(no_method("has_key?", &Value::Null)),
                    }
                }
                Value::Hash(h) => h
                    .entry(idx.clone())
                    .or_insert_with(|| Value::Hash(hiera_value::value::Map::default())),
                other => return Err(no_method("has_key?", other)),
            };
        }
        let value = if all_hashes {
            array_as_hash(value)
        } else {
            value
        };
        match node {
            Value::Hash(h) => {
                h.insert(last.clone(), value);
            }
            Value::Array(a) => match array_index(a.len(), last)? {
                Some(i) => a[i] = value,
                None => {
                    let Value::Int(i) = last else { unreachable!() };
                    let i = usize::try_from(*i).map_err(|_| "index out of array".to_string())?;
                    if i > 1 << 20 {
                        return Err("index too big".into());
                    }
                    a.resize(i, Value::Null);
                    a.push(value);
                }
            },
            other => return Err(no_method("[]=", other)),
        }
    }
    Ok(result)
}

/// Ruby's `array[idx]` index: `Some(i)` inside the array, `None` past its end; a non-Integer
/// index is Ruby's TypeError.
fn array_index(len: usize, idx: &Value) -> Result<Option<usize>, String> {
    let Value::Int(i) = idx else {
        return Err(format!(
            "no implicit conversion of {} into Integer",
            idx.ruby_class()
        ));
    };
    let i = if *i < 0 { len as i64 + i } else { *i };
    Ok((0..len as i64).contains(&i).then_some(i as usize))
}

fn to_hash(v: Value) -> Result<Value, String> {
    match v {
        Value::Hash(_) => Ok(v),
        Value::Array(a) => {
            let pairs = !a.is_empty()
                && a.iter()
                    .all(|e| matches!(e, Value::Array(p) if p.len() == 2));
            let mut h = hiera_value::value::Map::default();
            if pairs {
                for e in a {
                    if let Value::Array(mut p) = e {
                        let x = p.pop().unwrap_or(Value::Null);
                        let k = p.pop().unwrap_or(Value::Null);
                        h.insert(k, x);
                    }
                }
                return Ok(Value::Hash(h));
            }
            if a.len() % 2 != 0 {
                return Err("odd number of arguments for Hash".into());
            }
            let mut it = a.into_iter();
            while let (Some(k), Some(x)) = (it.next(), it.next()) {
                h.insert(k, x);
            }
            Ok(Value::Hash(h))
        }
        Value::String(s) => {
            let chars: Vec<Value> = s.chars().map(|c| Value::String(c.to_string())).collect();
            if !chars.len().is_multiple_of(2) {
                return Err("odd number of arguments for Hash".into());
            }
            to_hash(Value::Array(chars))
        }
        // Hash[*Array(v)]: one element is always an odd number.
        other if !other.is_null() => Err("odd number of arguments for Hash".into()),
        other => Err(format!(
            "Value of type {} cannot be converted to Hash",
            type_name_of(&other)
        )),
    }
}

// ---- String conversion (StringConverter, default formats) ----

/// Puppet's default string form of a value; `quoted` for values nested in containers.
pub(crate) fn puppet_string(v: &Value, quoted: bool) -> String {
    match v {
        Value::Null => {
            if quoted {
                "undef".into()
            } else {
                String::new()
            }
        }
        Value::Bool(b) => b.to_string(),
        Value::Int(i) => i.to_string(),
        Value::BigInt(d) => d.clone(),
        Value::Float(f) => float_p(*f),
        Value::String(s) => {
            if quoted {
                puppet_quote(s)
            } else {
                s.clone()
            }
        }
        Value::Array(a) => format!(
            "[{}]",
            a.iter()
                .map(|x| puppet_string(x, true))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        Value::Hash(h) => format!(
            "{{{}}}",
            h.iter()
                .map(|(k, x)| format!("{} => {}", puppet_string(k, true), puppet_string(x, true)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        Value::Sensitive(_) => "Sensitive [value redacted]".into(),
        Value::Object(o) => o.to_s.clone(),
    }
}

/// Float `%p`: Ruby's shortest round-trip form.
fn float_p(f: f64) -> String {
    ruby_float(f)
}

fn to_string(v: Value, fmt: Option<&Value>) -> Result<Value, String> {
    let fmt = match fmt {
        // StringConverter's default for a top-level Float is '%f'.
        None if matches!(v, Value::Float(_)) => return format_value(&v, "%f").map(Value::String),
        None => return Ok(Value::String(puppet_string(&v, false))),
        Some(Value::String(f)) => f.clone(),
        // An empty TypeMap formats nothing differently.
        Some(Value::Hash(h)) if h.is_empty() => return to_string(v, None),
        Some(other) => return Err(new_string_rejected(other)),
    };
    format_value(&v, &fmt).map(Value::String)
}

/// `Format`, as Puppet prints the local type.
const FORMAT: &str =
    r"Format = Pattern[/^%([\s\[+#0{<(|-]*)([1-9][0-9]*)?(?:\.([0-9]+))?([a-zA-Z])$/]";

/// `new_string(from, string_formats)` with formats no variant of `Formats` accepts: a hash
/// from data has String keys where a TypeMap needs types.
fn new_string_rejected(formats: &Value) -> String {
    let got = super::describe::simple_type_name(formats);
    let map_line = match formats {
        Value::Hash(h) => {
            let key = h.keys().next().cloned().unwrap_or(Value::Null);
            format!(
                "variant 2 key of entry {} expects a Type value, got {}",
                puppet_string(&key, true),
                super::describe::simple_type_name(&key)
            )
        }
        _ => format!(
            "variant 2 expects a TypeMap = Hash[Type, Variant[{FORMAT}, ContainerFormat = Struct[{{Optional['format'] => {FORMAT}, Optional['separator'] => String, Optional['separator2'] => String, Optional['string_formats'] => Hash[Type, {FORMAT}]}}]]] value, got {got}"
        ),
    };
    format!(
        "'new_string' expects (Convertible = Any from, Formats = Variant[Default, String[1], TypeMap = Hash[Type, Variant[{FORMAT}, ContainerFormat = Struct[{{Optional['format'] => {FORMAT}, Optional['separator'] => String, Optional['separator2'] => String, Optional['string_formats'] => Hash[Type, {FORMAT}]}}]]]] string_formats?)\n  rejected: parameter 'string_formats' variant 0 expects a Default value, got {got}\n  rejected: parameter 'string_formats' variant 1 expects a String value, got {got}\n  rejected: parameter 'string_formats' {map_line}"
    )
}

struct Spec {
    flags: String,
    width: Option<usize>,
    prec: Option<usize>,
    conv: char,
}

fn parse_spec(f: &str) -> Option<Spec> {
    let rest = f.strip_prefix('%')?;
    let mut chars = rest.chars().peekable();
    let mut flags = String::new();
    while let Some(&c) = chars.peek() {
        if " +-#0<>[{(|".contains(c) {
            flags.push(c);
            chars.next();
        } else {
            break;
        }
    }
    let mut width = String::new();
    while let Some(&c) = chars.peek() {
        if c.is_ascii_digit() {
            width.push(c);
            chars.next();
        } else {
            break;
        }
    }
    let mut prec = None;
    if chars.peek() == Some(&'.') {
        chars.next();
        let mut p = String::new();
        while let Some(&c) = chars.peek() {
            if c.is_ascii_digit() {
                p.push(c);
                chars.next();
            } else {
                break;
            }
        }
        prec = Some(p.parse().unwrap_or(0));
    }
    let conv = chars.next()?;
    if chars.next().is_some() || !conv.is_ascii_alphabetic() {
        return None;
    }
    Some(Spec {
        flags,
        width: width.parse().ok(),
        prec,
        conv,
    })
}

fn pad(s: String, spec: &Spec) -> String {
    let w = spec.width.unwrap_or(0);
    let len = s.chars().count();
    if len >= w {
        return s;
    }
    if spec.flags.contains('-') {
        format!("{}{}", s, " ".repeat(w - len))
    } else if spec.flags.contains('0') && !matches!(spec.conv, 's' | 'p') {
        let (sign, digits) = if s.starts_with(['-', '+']) {
            s.split_at(1)
        } else {
            ("", s.as_str())
        };
        format!("{}{}{}", sign, "0".repeat(w - len), digits)
    } else {
        format!("{}{}", " ".repeat(w - len), s)
    }
}

/// C's (and Ruby's `Kernel.format`) `%f`, `%e`, `%E`, `%g`, `%G` of a non-negative float,
/// without the sign: precision 6 unless given; `%g` picks `%e` for exponents below -4 or from
/// the precision up, and drops trailing zeros unless `alt` (`#`).
fn c_float(x: f64, conv: char, prec: Option<usize>, alt: bool) -> String {
    let upper = conv.is_ascii_uppercase();
    if !x.is_finite() {
        let s = if x.is_nan() { "NaN" } else { "Inf" };
        return s.to_string();
    }
    let exp_form = |p: usize| {
        let s = format!("{:.*e}", p, x);
        let (m, e) = s.split_once('e').unwrap_or((&s, "0"));
        let e: i32 = e.parse().unwrap_or(0);
        let m = if alt && p == 0 {
            format!("{m}.")
        } else {
            m.to_string()
        };
        let r = format!("{}e{}{:02}", m, if e < 0 { '-' } else { '+' }, e.abs());
        (r, e)
    };
    let p = prec.unwrap_or(6);
    let out = match conv {
        'f' | 'F' => {
            let s = format!("{:.*}", p, x);
            if alt && p == 0 {
                s + "."
            } else {
                s
            }
        }
        'e' | 'E' => exp_form(p).0,
        _ => {
            let p = p.max(1);
            let (e_form, x_exp) = exp_form(p - 1);
            let mut s = if x_exp < -4 || x_exp >= p as i32 {
                e_form
            } else {
                let s = format!("{:.*}", (p as i32 - 1 - x_exp) as usize, x);
                if alt && !s.contains('.') {
                    s + "."
                } else {
                    s
                }
            };
            if !alt {
                // Trailing zeros of the fraction, and a bare point.
                let (num, exp) = match s.find('e') {
                    Some(i) => (s[..i].to_string(), s[i..].to_string()),
                    None => (s.clone(), String::new()),
                };
                let num = if num.contains('.') {
                    num.trim_end_matches('0').trim_end_matches('.').to_string()
                } else {
                    num
                };
                s = num + &exp;
            }
            s
        }
    };
    if upper {
        out.to_uppercase()
    } else {
        out
    }
}

/// Ruby's `Kernel.format` of an Integer with `d i x X o b B`: C's rules (precision is a
/// minimum digit count and turns off `0`; `#` prefixes non-zero values), and Ruby's own for a
/// negative number in base 2, 8 or 16 without `+` or space: its two's complement after `..`,
/// extended with the radix's top digit (`..f01` for -255).
fn format_integer(v: &Value, spec: &Spec) -> String {
    use hiera_value::value::integer_digits;
    let radix = match spec.conv {
        'x' | 'X' => 16,
        'o' => 8,
        'b' | 'B' => 2,
        _ => 10,
    };
    let flag = |c: char| spec.flags.contains(c);
    let (neg, mag) = integer_digits(v, radix);
    let zero = mag == "0";
    let dots = neg && radix != 10 && !flag('+') && !flag(' ');
    let top = std::char::from_digit(radix - 1, radix).unwrap_or('0');
    let mut digits = if dots {
        twos_complement(&mag, radix)
    } else {
        mag
    };
    let sign = if dots {
        ""
    } else if neg {
        "-"
    } else if flag('+') {
        "+"
    } else if flag(' ') {
        " "
    } else {
        ""
    };
    let mut prefix = match (flag('#') && !zero, spec.conv) {
        (true, 'x') => "0x",
        (true, 'X') => "0X",
        (true, 'b') => "0b",
        (true, 'B') => "0B",
        (true, 'o') if !dots => "0",
        _ => "",
    };
    let width = spec.width.unwrap_or(0);
    let zero_pad = flag('0') && !flag('-') && spec.prec.is_none();
    let fill_to = |digits: &mut String, n: usize, c: char| {
        let len = digits.chars().count();
        if len < n {
            digits.insert_str(0, &c.to_string().repeat(n - len));
        }
    };
    if dots {
        let room = match spec.prec {
            Some(p) => p.saturating_sub(2),
            None if zero_pad => width.saturating_sub(prefix.len() + 2),
            None => 0,
        };
        fill_to(&mut digits, room, top);
        digits.insert_str(0, "..");
    } else {
        match spec.prec {
            // `%.0d` of 0 prints no digit.
            Some(0) if zero => digits.clear(),
            Some(p) => fill_to(&mut digits, p, '0'),
            None if zero_pad => fill_to(
                &mut digits,
                width.saturating_sub(sign.len() + prefix.len()),
                '0',
            ),
            None => {}
        }
        // Octal's `#` only ensures a leading zero.
        if prefix == "0" && digits.starts_with('0') {
            prefix = "";
        }
    }
    if spec.conv == 'X' {
        digits = digits.to_uppercase();
    }
    let s = format!("{sign}{prefix}{digits}");
    let len = s.chars().count();
    if len >= width {
        s
    } else if flag('-') {
        format!("{s}{}", " ".repeat(width - len))
    } else {
        format!("{}{s}", " ".repeat(width - len))
    }
}

/// The two's complement digits (in `radix`, 2, 8 or 16) of minus the magnitude `mag`: the
/// fewest digits whose first is the radix's top digit.
fn twos_complement(mag: &str, radix: u32) -> String {
    // radix^k - mag, for growing k, until its first digit is radix - 1.
    let m: Vec<u32> = mag
        .chars()
        .map(|c| c.to_digit(radix).unwrap_or(0))
        .collect();
    let mut k = m.len();
    loop {
        // Subtract m from radix^k: digits of (radix^k - 1) - m, plus one.
        let mut out: Vec<u32> = vec![radix - 1; k];
        let off = k - m.len();
        for (i, d) in m.iter().enumerate() {
            out[off + i] -= d;
        }
        let mut i = k;
        while i > 0 {
            i -= 1;
            if out[i] + 1 < radix {
                out[i] += 1;
                break;
            }
            out[i] = 0;
        }
        if out.first() == Some(&(radix - 1)) {
            return out
                .into_iter()
                .map(|d| std::char::from_digit(d, radix).unwrap_or('0'))
                .collect();
        }
        k += 1;
    }
}

fn format_value(v: &Value, fmt: &str) -> Result<String, String> {
    let bad = || {
        format!(
            "The format '{}' is not a valid format on the form '%<flags><width>.<prec><format>'",
            fmt
        )
    };
    let spec = parse_spec(fmt).ok_or_else(bad)?;
    let sign = |neg: bool| {
        if neg {
            "-"
        } else if spec.flags.contains('+') {
            "+"
        } else if spec.flags.contains(' ') {
            " "
        } else {
            ""
        }
    };
    let s = match (v, spec.conv) {
        (Value::Int(_) | Value::BigInt(_), 'd' | 'i' | 'x' | 'X' | 'o' | 'b' | 'B') => {
            return Ok(format_integer(v, &spec))
        }
        (Value::BigInt(_), 'e' | 'E' | 'f' | 'g' | 'G' | 'a' | 'A') => {
            return format_value(&Value::Float(hiera_value::value::int_to_f64(v)), fmt)
        }
        (Value::Int(i), 'e' | 'E' | 'f' | 'g' | 'G' | 'a' | 'A') => return format_value(&Value::Float(*i as f64), fmt),
        (Value::Float(f), 'f' | 'e' | 'E' | 'g' | 'G') => {
            // Kernel.format: the sign of -0.0 is kept.
            let body = c_float(f.abs(), spec.conv, spec.prec, spec.flags.contains('#'));
            format!("{}{}", sign(f.is_sign_negative() && !f.is_nan()), body)
        }
        (Value::Float(f), 'd' | 'x' | 'X' | 'o' | 'b' | 'B') => {
            return format_value(&hiera_value::value::integer_from_f64(*f), fmt)
        }
        (Value::Bool(b), 't' | 's') => b.to_string(),
        (Value::Bool(b), 'T') => if *b { "True" } else { "False" }.into(),
        (Value::Bool(b), 'y') => if *b { "yes" } else { "no" }.into(),
        (Value::Bool(b), 'Y') => if *b { "Yes" } else { "No" }.into(),
        (Value::Bool(b), 'p') => b.to_string(),
        (Value::String(s), 's') => s.clone(),
        (Value::String(s), 'p') => puppet_quote(s),
        (Value::String(s), 'C' | 'c' | 'u' | 'd') => match spec.conv {
            'C' => s.split("::").map(capitalize).collect::<Vec<_>>().join("::"),
            'c' => capitalize(s),
            'u' => s.to_uppercase(),
            _ => s.to_lowercase(),
        },
        (v, 's') => puppet_string(v, false),
        (v, 'p') => puppet_string(v, true),
        (Value::Array(_) | Value::Hash(_), 'a' | 'h') => {
            let s = puppet_string(v, true);
            // A delimiter flag replaces the outer brackets.
            let delims = spec.flags.chars().find_map(|c| match c {
                '(' => Some(('(', ')')),
                '[' => Some(('[', ']')),
                '{' => Some(('{', '}')),
                '<' => Some(('<', '>')),
                '|' => Some(('|', '|')),
                _ => None,
            });
            match delims {
                Some((open, close)) if s.len() >= 2 => format!("{open}{}{close}", &s[1..s.len() - 1]),
                _ => s,
            }
        }
        _ => {
            return Err(format!(
                "Illegal format '{}' specified for value of {} type - expected one of the characters '{}'",
                spec.conv,
                type_name_of(v),
                valid_chars(v)
            ))
        }
    };
    let s = match spec.prec {
        Some(p) if matches!(spec.conv, 's' | 'p') => s.chars().take(p).collect(),
        _ => s,
    };
    Ok(pad(s, &spec))
}

fn valid_chars(v: &Value) -> &'static str {
    match v {
        Value::Int(_) | Value::BigInt(_) => "dxXobBeEfgGaAspc",
        Value::Float(_) => "dxXobBeEfgGaAsp",
        Value::String(_) => "cCudspt",
        Value::Bool(_) => "tTyYdxXobBeEfgGaAsp",
        Value::Array(_) => "asp",
        Value::Hash(_) => "hasp",
        _ => "sp",
    }
}

fn capitalize(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().collect::<String>() + &c.as_str().to_lowercase(),
        None => String::new(),
    }
}

// ---- Time and version types ----

fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719468;
    let era = if z >= 0 { z } else { z - 146096 } / 146097;
    let doe = z - era * 146097;
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (if m <= 2 { y + 1 } else { y }, m, d)
}

/// Timestamp `to_s`: `%FT%T.%N UTC`.
fn timestamp_to_s(secs: i64, nanos: u32) -> String {
    let days = secs.div_euclid(86400);
    let rem = secs.rem_euclid(86400);
    let (y, m, d) = civil_from_days(days);
    // strftime's %Y: at least four digits, the sign counting as a fifth (`-0005`).
    let year = if y < 0 {
        format!("{y:05}")
    } else {
        format!("{y:04}")
    };
    format!(
        "{}-{:02}-{:02}T{:02}:{:02}:{:02}.{:09} UTC",
        year,
        m,
        d,
        rem / 3600,
        rem % 3600 / 60,
        rem % 60,
        nanos
    )
}

/// `new(Timestamp, value, format, timezone)`: dispatched as Puppet's `new_timestamp` does
/// (see [`super::timestamp::new_timestamp`]).
fn to_timestamp(v: Value, fmt: Option<&Value>, tz: Option<&Value>) -> Result<Value, String> {
    let total = super::timestamp::new_timestamp(&v, fmt, tz, type_name_of)?;
    let (secs, nanos) = (
        total.div_euclid(1_000_000_000),
        total.rem_euclid(1_000_000_000),
    );
    Ok(object(
        "Timestamp",
        "Puppet::Pops::Time::Timestamp",
        total,
        timestamp_to_s(secs as i64, nanos as u32),
    ))
}

/// `new(URI, string)`: `URI.parse(string)` (see [`super::uri`]). Building one from a hash of
/// members (`URI::Generic.build`) is not supported.
fn to_uri(v: Value) -> Result<Value, String> {
    const INIT_HASH: &str = "Struct[{Optional['scheme'] => String[1], Optional['userinfo'] => String[1], Optional['host'] => String[1], Optional['port'] => Integer[0], Optional['path'] => String[1], Optional['query'] => String[1], Optional['fragment'] => String[1], Optional['opaque'] => String[1]}]";
    let init_hash = super::parse(INIT_HASH).expect("TYPE_URI_INIT_HASH");
    match &v {
        // dispatch :create (String[1] uri): URI.parse.
        Value::String(s) if !s.is_empty() => super::uri::Uri::parse(s).map(|u| u.to_value()),
        // dispatch :from_hash (TYPE_URI_INIT_HASH hash): the class's build.
        Value::Hash(h) if init_hash.is_instance(&v) => {
            super::uri::Uri::build(h).map(|u| u.to_value())
        }
        // Neither signature takes it: Puppet lists both, each with why it was rejected.
        other => {
            let uri_line = match other {
                Value::String(_) => {
                    "parameter 'uri' expects a String[1] value, got String".to_string()
                }
                _ => format!(
                    "parameter 'uri' expects a String value, got {}",
                    super::describe::simple_type_name(other)
                ),
            };
            let hash_lines = match other {
                Value::Hash(_) => {
                    super::describe::describe_lines("parameter 'hash'", &init_hash, other)
                }
                _ => vec![format!(
                    "parameter 'hash' expects a Struct value, got {}",
                    super::describe::simple_type_name(other)
                )],
            };
            let mut out = format!(
                "The function 'new_error' was called with arguments it does not accept. It expects one of:\n  (String[1] uri)\n    rejected: {uri_line}\n  ({INIT_HASH} hash)"
            );
            for l in hash_lines {
                out.push_str(&format!("\n    rejected: {l}"));
            }
            Err(out)
        }
    }
}

/// A Timestamp or Timespan: Ruby objects holding `@nsecs`.
fn object(type_name: &'static str, class: &'static str, nsecs: i128, to_s: String) -> Value {
    // Ruby's Integer: a Bignum beyond 64 bits.
    let n = i64::try_from(nsecs)
        .map(Value::Int)
        .unwrap_or_else(|_| Value::BigInt(nsecs.to_string()));
    Value::Object(Box::new(hiera_value::value::RubyObject {
        type_name,
        class,
        fields: vec![("nsecs".to_string(), n)],
        to_s,
        scalar: None,
    }))
}

/// Timespan `to_s`: `%D-%H:%M:%S.%N` with trailing zeros of the fraction removed (at least one digit).
fn timespan_to_s(total_nanos: i128) -> String {
    let neg = total_nanos < 0;
    let n = total_nanos.abs();
    let secs = n / 1_000_000_000;
    let frac = n % 1_000_000_000;
    let mut f = format!("{:09}", frac);
    while f.len() > 1 && f.ends_with('0') {
        f.pop();
    }
    format!(
        "{}{}-{:02}:{:02}:{:02}.{}",
        if neg { "-" } else { "" },
        secs / 86400,
        secs % 86400 / 3600,
        secs % 3600 / 60,
        secs % 60,
        f
    )
}

fn to_timespan(v: Value, fmt: Option<&Value>) -> Result<Value, String> {
    let nanos = match &v {
        Value::Int(i) => i128::from(*i) * 1_000_000_000,
        Value::Float(f) => (f * 1e9).round() as i128,
        Value::String(s) => match fmt {
            // One format: its own error.
            Some(Value::String(f)) => {
                let segs = timespan_format(f)?;
                parse_timespan_with(s, &segs)
                    .ok_or_else(|| format!("Unable to parse '{s}' using format '{f}'"))?
            }
            _ => {
                let list: Vec<String> = match fmt {
                    Some(Value::Array(a)) => a.iter().map(hiera_value::ruby::to_s).collect(),
                    _ => TIMESPAN_FORMATS.iter().map(|f| f.to_string()).collect(),
                };
                let mut found = None;
                for f in &list {
                    let segs = timespan_format(f)?;
                    if let Some(n) = parse_timespan_with(s, &segs) {
                        found = Some(n);
                        break;
                    }
                }
                found.ok_or_else(|| {
                    format!(
                        "Unable to parse '{s}' using any of the formats {}",
                        list.join(", ")
                    )
                })?
            }
        },
        other => {
            return Err(format!(
                "Value of type {} cannot be converted to Timespan",
                type_name_of(other)
            ))
        }
    };
    Ok(object(
        "Timespan",
        "Puppet::Pops::Time::Timespan",
        nanos,
        timespan_to_s(nanos),
    ))
}

/// Used by the parser for `Timestamp[...]` / `Timespan[...]` parameters.
pub(crate) fn time_param_to_s(span: bool, v: Value) -> Result<String, super::TypeError> {
    let r = if span {
        to_timespan(v, None)
    } else {
        to_timestamp(v, None, None)
    };
    match r {
        Ok(Value::Object(o)) => Ok(o.to_s),
        Ok(Value::String(s)) => Ok(s),
        Ok(_) => Err(super::TypeError::Invalid("invalid time parameter".into())),
        Err(e) => Err(super::TypeError::Invalid(e)),
    }
}

/// A Ruby Regexp made by `Regexp.new(source)`: `to_s` `(?-mix:...)`, dumped as
/// `!ruby/regexp /source/`. Its source is kept as the `source` field (for `Regexp[...]` checks).
pub(crate) fn regexp_value(source: &str) -> Value {
    Value::Object(Box::new(hiera_value::value::RubyObject {
        type_name: "Regexp",
        class: "Regexp",
        fields: vec![("source".to_string(), Value::String(source.to_string()))],
        to_s: hiera_value::ruby::regexp_to_s(source),
        scalar: Some(hiera_value::value::TaggedScalar {
            tag: Some("!ruby/regexp"),
            text: format!("/{}/", hiera_value::ruby::regexp_expr(source)),
            literal: false,
        }),
    }))
}

/// The source of a Regexp value.
pub(crate) fn regexp_source(v: &Value) -> Option<&str> {
    match v {
        Value::Object(o) if o.type_name == "Regexp" => o
            .fields
            .iter()
            .find(|(k, _)| k == "source")
            .and_then(|(_, s)| s.as_str()),
        _ => None,
    }
}

/// `new(Regexp, pattern, escape = false)`: `Regexp.new(escape ? Regexp.escape(pattern) : pattern)`.
fn to_regexp(v: Value, escape: Option<&Value>) -> Result<Value, String> {
    let escape = match escape {
        None | Some(Value::Bool(false)) => false,
        Some(Value::Bool(true)) => true,
        Some(other) => {
            return Err(format!(
                "'new_float' parameter 'escape' expects a Boolean value, got {}",
                super::describe::simple_type_name(other)
            ))
        }
    };
    match &v {
        Value::String(s) => {
            let source = if escape {
                hiera_value::ruby::regexp_escape(s)
            } else {
                s.clone()
            };
            // An invalid pattern is Ruby's RegexpError.
            hiera_value::ruby::pattern_source(&source)?;
            Ok(regexp_value(&source))
        }
        other => Err(format!(
            "'new_float' parameter 'pattern' expects a String value, got {}",
            super::describe::simple_type_name(other)
        )),
    }
}

/// A `Puppet::Pops::Types::PBinaryType::Binary` holding `bytes`: `to_s` is their strict
/// base64; Psych dumps the buffer as a String (ASCII) or a `!binary` literal.
fn binary_value(bytes: &[u8]) -> Value {
    let b64 = hiera_value::ruby::strict_encode64(bytes);
    let buffer = match std::str::from_utf8(bytes) {
        Ok(s) if s.is_ascii() => Value::String(s.to_string()),
        _ => Value::Object(Box::new(hiera_value::value::RubyObject {
            type_name: "String",
            class: "String",
            fields: Vec::new(),
            to_s: b64.clone(),
            scalar: Some(hiera_value::value::TaggedScalar {
                tag: Some("!binary"),
                text: b64.clone(),
                literal: true,
            }),
        })),
    };
    Value::Object(Box::new(hiera_value::value::RubyObject {
        type_name: "Binary",
        class: "Puppet::Pops::Types::PBinaryType::Binary",
        fields: vec![("binary_buffer".to_string(), buffer)],
        to_s: b64,
        scalar: None,
    }))
}

const BASE64_FORMAT: &str = "Base64Format = Enum['%B', '%b', '%r', '%s', '%u']";
const BYTE_INTEGER: &str = "ByteInteger = Integer[0, 255]";

/// `BinaryArgsHash`, as Puppet prints the local type.
fn binary_args_hash() -> String {
    format!(
        "BinaryArgsHash = Variant[StringHash = Struct[{{'value' => String, 'format' => Optional[{BASE64_FORMAT}]}}], ArrayHash = Struct[{{'value' => Array[{BYTE_INTEGER}]}}]]"
    )
}

/// `from_string(str, format)`.
fn binary_from_string(s: &str, format: &str) -> Result<Vec<u8>, String> {
    Ok(match format {
        "%B" => {
            hiera_value::ruby::strict_decode64(s).ok_or_else(|| "invalid base64".to_string())?
        }
        "%b" => {
            let padded = format!("{s}{}", "=".repeat(s.chars().count() % 3));
            hiera_value::ruby::decode64(&padded)
        }
        "%u" => {
            hiera_value::ruby::urlsafe_decode64(s).ok_or_else(|| "invalid base64".to_string())?
        }
        _ => s.as_bytes().to_vec(),
    })
}

/// The bytes of an `Array[ByteInteger]`, or None.
fn byte_array(a: &[Value]) -> Option<Vec<u8>> {
    a.iter()
        .map(|x| match x {
            Value::Int(n) => u8::try_from(*n).ok(),
            _ => None,
        })
        .collect()
}

/// `new(Binary, ...)`: a base64 string (`%B` strict by default, `%b` lenient, `%u` URL-safe),
/// a string's own bytes (`%s`, `%r`), an array of bytes, or a hash of `value` (and `format`).
fn to_binary(v: Value, format: Option<&Value>) -> Result<Value, String> {
    let is_format = |f: &str| ["%B", "%b", "%r", "%s", "%u"].contains(&f);
    let bytes = match (&v, format) {
        (Value::String(s), None) => binary_from_string(s, "%B")?,
        (Value::String(s), Some(Value::String(f))) if is_format(f) => binary_from_string(s, f)?,
        (Value::Array(a), None) if byte_array(a).is_some() => byte_array(a).unwrap_or_default(),
        (Value::Hash(h), None) => {
            let value = h.get(&Value::String("value".into()));
            let fmt = h.get(&Value::String("format".into()));
            let known = h
                .keys()
                .all(|k| matches!(k, Value::String(k) if k == "value" || k == "format"));
            match (value, fmt) {
                (Some(Value::String(s)), None | Some(Value::Null)) if known => {
                    binary_from_string(s, "%B")?
                }
                (Some(Value::String(s)), Some(Value::String(f))) if known && is_format(f) => {
                    binary_from_string(s, f)?
                }
                (Some(Value::Array(a)), None) if known && byte_array(a).is_some() => {
                    byte_array(a).unwrap_or_default()
                }
                _ => return Err(new_binary_rejected(&v, format)),
            }
        }
        _ => return Err(new_binary_rejected(&v, format)),
    };
    Ok(binary_value(&bytes))
}

/// No `new_Binary` signature accepts the arguments: Puppet lists each with why it rejected them.
fn new_binary_rejected(v: &Value, format: Option<&Value>) -> String {
    let got = super::describe::simple_type_name(v);
    let str_line = match (v, format) {
        (Value::String(_), Some(f)) => {
            let got_f = match f {
                Value::String(s) => format!("'{s}'"),
                other => super::describe::simple_type_name(other),
            };
            format!("parameter 'format' expects a match for {BASE64_FORMAT}, got {got_f}")
        }
        _ => format!("parameter 'str' expects a String value, got {got}"),
    };
    let byte_type = Type::Array(
        Box::new(Type::Integer(super::Range::new(Some(0), Some(255)))),
        None,
    );
    let arr_lines: Vec<String> = match (v, format) {
        (_, Some(_)) => vec!["expects 1 argument, got 2".to_string()],
        (Value::Array(_), None) => {
            super::describe::describe_lines("parameter 'byte_array'", &byte_type, v)
                .into_iter()
                .map(|l| {
                    l.replace(
                        "expects an Integer[0, 255] value",
                        &format!("expects a {BYTE_INTEGER} value"),
                    )
                })
                .collect()
        }
        _ => vec![format!(
            "parameter 'byte_array' expects an Array value, got {got}"
        )],
    };
    let hash_line = match format {
        Some(_) => "expects 1 argument, got 2".to_string(),
        None => format!(
            "parameter 'hash_args' expects a {} value, got {got}",
            binary_args_hash()
        ),
    };
    let mut out = String::from(
        "The function 'new_Binary' was called with arguments it does not accept. It expects one of:",
    );
    out.push_str(&format!(
        "\n  (String str, {BASE64_FORMAT} format?)\n    rejected: {str_line}"
    ));
    out.push_str("\n  (Array[ByteInteger] byte_array)");
    for l in arr_lines {
        out.push_str(&format!("\n    rejected: {l}"));
    }
    out.push_str(&format!(
        "\n  ({} hash_args)\n    rejected: {hash_line}",
        binary_args_hash()
    ));
    out
}

/// `new_VersionRange` from a string (`SemVerRangeString = String[1]`). Its other signatures
/// take SemVer values, which data cannot hold: anything else is rejected by all three.
fn to_semver_range(v: Value, args: &[Value]) -> Result<Value, String> {
    match &v {
        Value::String(s) if !s.is_empty() && args.is_empty() => {
            super::semver::VersionRange::parse(s).map(|r| r.to_value())
        }
        other => {
            const HASH: &str = "SemVerRangeHash = Struct[{'min' => Variant[Default, SemVer], Optional['max'] => Variant[Default, SemVer], Optional['exclude_max'] => Boolean}]";
            let got = super::describe::simple_type_name(other);
            let n = args.len() + 1;
            let (str_line, hash_line) = if n == 1 {
                (
                    format!(
                        "parameter 'str' expects a SemVerRangeString = String[1] value, got {got}"
                    ),
                    format!("parameter 'hash_args' expects a {HASH} value, got {got}"),
                )
            } else {
                (
                    format!("expects 1 argument, got {n}"),
                    format!("expects 1 argument, got {n}"),
                )
            };
            let versions_line = if (2..=3).contains(&n) {
                format!("parameter 'min' expects a value of type Default or SemVer, got {got}")
            } else {
                format!("expects between 2 and 3 arguments, got {n}")
            };
            Err(format!(
                "The function 'new_VersionRange' was called with arguments it does not accept. It expects one of:\n  (SemVerRangeString = String[1] str)\n    rejected: {str_line}\n  (Variant[Default, SemVer] min, Variant[Default, SemVer] max, Boolean exclude_max?)\n    rejected: {versions_line}\n  ({HASH} hash_args)\n    rejected: {hash_line}"
            ))
        }
    }
}

/// `new(SemVer, ...)`: a version string, `major, minor, patch[, prerelease[, build]]`, or a
/// hash of those (a qualifier given this way is one identifier, as Puppet wraps it).
fn to_semver(v: Value, args: &[Value]) -> Result<Value, String> {
    use super::semver::{Ident, Version};
    let positive = |x: &Value| match x {
        Value::Int(n) => u128::try_from(*n).ok(),
        _ => None,
    };
    let qualifier = |x: Option<&Value>| -> Result<Option<Option<Vec<String>>>, ()> {
        match x {
            None | Some(Value::Null) => Ok(Some(None)),
            Some(Value::String(q))
                if q.split('.').all(|p| {
                    !p.is_empty() && p.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'-')
                }) =>
            {
                Ok(Some(Some(vec![q.clone()])))
            }
            _ => Err(()),
        }
    };
    let build = |nums: [Option<u128>; 3], pre: Option<&Value>, b: Option<&Value>| {
        let [Some(major), Some(minor), Some(patch)] = nums else {
            return None;
        };
        let pre = qualifier(pre).ok()??;
        let b = qualifier(b).ok()??;
        Some(Version {
            major,
            minor,
            patch,
            pre: pre.map(|p| p.into_iter().map(Ident::Str).collect()),
            build: b,
        })
    };
    match (&v, args.len()) {
        (Value::String(s), 0) => {
            if !semver_pattern(s) {
                return Err(format!(
                    "'new_Version' The string '{s}' cannot be converted to a SemVer"
                ));
            }
            Version::parse(s).map(|v| v.to_value())
        }
        (Value::Hash(h), 0) => {
            let get = |k: &str| h.get(&Value::String(k.to_string()));
            let known = h.keys().all(|k| {
                matches!(k, Value::String(k) if ["major", "minor", "patch", "prerelease", "build"].contains(&k.as_str()))
            });
            let nums = [get("major"), get("minor"), get("patch")].map(|x| x.and_then(positive));
            match build(nums, get("prerelease"), get("build")) {
                Some(ver) if known => Ok(ver.to_value()),
                _ => Err(new_version_rejected(&v, 1)),
            }
        }
        (_, 2..=4) => {
            let nums = [Some(&v), args.first(), args.get(1)].map(|x| x.and_then(positive));
            build(nums, args.get(2), args.get(3))
                .map(|ver| ver.to_value())
                .ok_or_else(|| new_version_rejected(&v, args.len() + 1))
        }
        (_, n) if n > 4 => Err(format!(
            "'new_Version' expects between 1 and 5 arguments, got {}",
            n + 1
        )),
        _ => Err(new_version_rejected(&v, args.len() + 1)),
    }
}

/// `SemVerPattern`: `\A` REGEX_FULL `\Z`.
fn semver_pattern(s: &str) -> bool {
    super::semver::match_parts(s).is_some()
}

/// No `new_Version` signature accepts the arguments (`n` of them, the value included).
fn new_version_rejected(v: &Value, n: usize) -> String {
    const PATTERN: &str = r"SemVerPattern = Pattern[/\A(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?(?:\+([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?\Z/]";
    const QUALIFIER: &str =
        r"SemVerQualifier = Pattern[/\A(?<part>[0-9A-Za-z-]+)(?:\.\g<part>)*\Z/]";
    const POSITIVE: &str = "PositiveInteger = Integer[0]";
    let hash = format!(
        "SemVerHash = Struct[{{'major' => {POSITIVE}, 'minor' => {POSITIVE}, 'patch' => {POSITIVE}, Optional['prerelease'] => {QUALIFIER}, Optional['build'] => {QUALIFIER}}}]"
    );
    let got = super::describe::simple_type_name(v);
    let (str_line, hash_line) = if n == 1 {
        (
            format!("parameter 'str' expects a match for {PATTERN}, got {got}"),
            format!("parameter 'hash_args' expects a {hash} value, got {got}"),
        )
    } else {
        (
            format!("expects 1 argument, got {n}"),
            format!("expects 1 argument, got {n}"),
        )
    };
    let args_line = if (3..=5).contains(&n) {
        format!("parameter 'major' expects a {POSITIVE} value, got {got}")
    } else {
        format!("expects between 3 and 5 arguments, got {n}")
    };
    format!(
        "The function 'new_Version' was called with arguments it does not accept. It expects one of:\n  ({PATTERN} str)\n    rejected: {str_line}\n  ({POSITIVE} major, {POSITIVE} minor, {POSITIVE} patch, {QUALIFIER} prerelease?, {QUALIFIER} build?)\n    rejected: {args_line}\n  ({hash} hash_args)\n    rejected: {hash_line}"
    )
}

#[cfg(test)]
mod format_tests {
    use super::*;

    /// Ruby 3.3's `Kernel.format` of integers (recorded in Puppet 8.10's Ruby).
    #[test]
    fn integers_format_as_ruby_does() {
        let cases: &[(&str, &str, &str)] = &[
            ("0", "%x", "0"),
            ("0", "%o", "0"),
            ("0", "%b", "0"),
            ("0", "%#x", "0"),
            ("0", "%#o", "0"),
            ("0", "%#b", "0"),
            ("0", "%X", "0"),
            ("0", "%#X", "0"),
            ("0", "%8x", "       0"),
            ("0", "%08x", "00000000"),
            ("0", "%.8x", "00000000"),
            ("0", "%-8x|", "0       |"),
            ("0", "%+x", "+0"),
            ("0", "% x", " 0"),
            ("0", "%#B", "0"),
            ("0", "%.3d", "000"),
            ("0", "%08.3d", "     000"),
            ("0", "%-08d|", "0       |"),
            ("0", "%+05d", "+0000"),
            ("0", "%#08x", "00000000"),
            ("0", "%#.5o", "00000"),
            ("0", "%5.1x", "    0"),
            ("0", "%d", "0"),
            ("0", "%#d", "0"),
            ("0", "%+.0d", "+"),
            ("0", "%.0d", ""),
            ("0", "%#010x", "0000000000"),
            ("0", "%010o", "0000000000"),
            ("0", "%.2x", "00"),
            ("5", "%x", "5"),
            ("5", "%o", "5"),
            ("5", "%b", "101"),
            ("5", "%#x", "0x5"),
            ("5", "%#o", "05"),
            ("5", "%#b", "0b101"),
            ("5", "%X", "5"),
            ("5", "%#X", "0X5"),
            ("5", "%8x", "       5"),
            ("5", "%08x", "00000005"),
            ("5", "%.8x", "00000005"),
            ("5", "%-8x|", "5       |"),
            ("5", "%+x", "+5"),
            ("5", "% x", " 5"),
            ("5", "%#B", "0B101"),
            ("5", "%.3d", "005"),
            ("5", "%08.3d", "     005"),
            ("5", "%-08d|", "5       |"),
            ("5", "%+05d", "+0005"),
            ("5", "%#08x", "0x000005"),
            ("5", "%#.5o", "00005"),
            ("5", "%5.1x", "    5"),
            ("5", "%d", "5"),
            ("5", "%#d", "5"),
            ("5", "%+.0d", "+5"),
            ("5", "%.0d", "5"),
            ("5", "%#010x", "0x00000005"),
            ("5", "%010o", "0000000005"),
            ("5", "%.2x", "05"),
            ("-1", "%x", "..f"),
            ("-1", "%o", "..7"),
            ("-1", "%b", "..1"),
            ("-1", "%#x", "0x..f"),
            ("-1", "%#o", "..7"),
            ("-1", "%#b", "0b..1"),
            ("-1", "%X", "..F"),
            ("-1", "%#X", "0X..F"),
            ("-1", "%8x", "     ..f"),
            ("-1", "%08x", "..ffffff"),
            ("-1", "%.8x", "..ffffff"),
            ("-1", "%-8x|", "..f     |"),
            ("-1", "%+x", "-1"),
            ("-1", "% x", "-1"),
            ("-1", "%#B", "0B..1"),
            ("-1", "%.3d", "-001"),
            ("-1", "%08.3d", "    -001"),
            ("-1", "%-08d|", "-1      |"),
            ("-1", "%+05d", "-0001"),
            ("-1", "%#08x", "0x..ffff"),
            ("-1", "%#.5o", "..777"),
            ("-1", "%5.1x", "  ..f"),
            ("-1", "%d", "-1"),
            ("-1", "%#d", "-1"),
            ("-1", "%+.0d", "-1"),
            ("-1", "%.0d", "-1"),
            ("-1", "%#010x", "0x..ffffff"),
            ("-1", "%010o", "..77777777"),
            ("-1", "%.2x", "..f"),
            ("-8", "%x", "..f8"),
            ("-8", "%o", "..70"),
            ("-8", "%b", "..1000"),
            ("-8", "%#x", "0x..f8"),
            ("-8", "%#o", "..70"),
            ("-8", "%#b", "0b..1000"),
            ("-8", "%X", "..F8"),
            ("-8", "%#X", "0X..F8"),
            ("-8", "%8x", "    ..f8"),
            ("-8", "%08x", "..fffff8"),
            ("-8", "%.8x", "..fffff8"),
            ("-8", "%-8x|", "..f8    |"),
            ("-8", "%+x", "-8"),
            ("-8", "% x", "-8"),
            ("-8", "%#B", "0B..1000"),
            ("-8", "%.3d", "-008"),
            ("-8", "%08.3d", "    -008"),
            ("-8", "%-08d|", "-8      |"),
            ("-8", "%+05d", "-0008"),
            ("-8", "%#08x", "0x..fff8"),
            ("-8", "%#.5o", "..770"),
            ("-8", "%5.1x", " ..f8"),
            ("-8", "%d", "-8"),
            ("-8", "%#d", "-8"),
            ("-8", "%+.0d", "-8"),
            ("-8", "%.0d", "-8"),
            ("-8", "%#010x", "0x..fffff8"),
            ("-8", "%010o", "..77777770"),
            ("-8", "%.2x", "..f8"),
            ("-255", "%x", "..f01"),
            ("-255", "%o", "..7401"),
            ("-255", "%b", "..100000001"),
            ("-255", "%#x", "0x..f01"),
            ("-255", "%#o", "..7401"),
            ("-255", "%#b", "0b..100000001"),
            ("-255", "%X", "..F01"),
            ("-255", "%#X", "0X..F01"),
            ("-255", "%8x", "   ..f01"),
            ("-255", "%08x", "..ffff01"),
            ("-255", "%.8x", "..ffff01"),
            ("-255", "%-8x|", "..f01   |"),
            ("-255", "%+x", "-ff"),
            ("-255", "% x", "-ff"),
            ("-255", "%#B", "0B..100000001"),
            ("-255", "%.3d", "-255"),
            ("-255", "%08.3d", "    -255"),
            ("-255", "%-08d|", "-255    |"),
            ("-255", "%+05d", "-0255"),
            ("-255", "%#08x", "0x..ff01"),
            ("-255", "%#.5o", "..7401"),
            ("-255", "%5.1x", "..f01"),
            ("-255", "%d", "-255"),
            ("-255", "%#d", "-255"),
            ("-255", "%+.0d", "-255"),
            ("-255", "%.0d", "-255"),
            ("-255", "%#010x", "0x..ffff01"),
            ("-255", "%010o", "..77777401"),
            ("-255", "%.2x", "..f01"),
            ("255", "%x", "ff"),
            ("255", "%o", "377"),
            ("255", "%b", "11111111"),
            ("255", "%#x", "0xff"),
            ("255", "%#o", "0377"),
            ("255", "%#b", "0b11111111"),
            ("255", "%X", "FF"),
            ("255", "%#X", "0XFF"),
            ("255", "%8x", "      ff"),
            ("255", "%08x", "000000ff"),
            ("255", "%.8x", "000000ff"),
            ("255", "%-8x|", "ff      |"),
            ("255", "%+x", "+ff"),
            ("255", "% x", " ff"),
            ("255", "%#B", "0B11111111"),
            ("255", "%.3d", "255"),
            ("255", "%08.3d", "     255"),
            ("255", "%-08d|", "255     |"),
            ("255", "%+05d", "+0255"),
            ("255", "%#08x", "0x0000ff"),
            ("255", "%#.5o", "00377"),
            ("255", "%5.1x", "   ff"),
            ("255", "%d", "255"),
            ("255", "%#d", "255"),
            ("255", "%+.0d", "+255"),
            ("255", "%.0d", "255"),
            ("255", "%#010x", "0x000000ff"),
            ("255", "%010o", "0000000377"),
            ("255", "%.2x", "ff"),
            ("98765432109876543210", "%x", "55aa54d38e5267eea"),
            ("98765432109876543210", "%o", "12552452323434511477352"),
            (
                "98765432109876543210",
                "%b",
                "1010101101010100101010011010011100011100101001001100111111011101010",
            ),
            ("98765432109876543210", "%#x", "0x55aa54d38e5267eea"),
            ("98765432109876543210", "%#o", "012552452323434511477352"),
            (
                "98765432109876543210",
                "%#b",
                "0b1010101101010100101010011010011100011100101001001100111111011101010",
            ),
            ("98765432109876543210", "%X", "55AA54D38E5267EEA"),
            ("98765432109876543210", "%#X", "0X55AA54D38E5267EEA"),
            ("98765432109876543210", "%8x", "55aa54d38e5267eea"),
            ("98765432109876543210", "%08x", "55aa54d38e5267eea"),
            ("98765432109876543210", "%.8x", "55aa54d38e5267eea"),
            ("98765432109876543210", "%-8x|", "55aa54d38e5267eea|"),
            ("98765432109876543210", "%+x", "+55aa54d38e5267eea"),
            ("98765432109876543210", "% x", " 55aa54d38e5267eea"),
            (
                "98765432109876543210",
                "%#B",
                "0B1010101101010100101010011010011100011100101001001100111111011101010",
            ),
            ("98765432109876543210", "%.3d", "98765432109876543210"),
            ("98765432109876543210", "%08.3d", "98765432109876543210"),
            ("98765432109876543210", "%-08d|", "98765432109876543210|"),
            ("98765432109876543210", "%+05d", "+98765432109876543210"),
            ("98765432109876543210", "%#08x", "0x55aa54d38e5267eea"),
            ("98765432109876543210", "%#.5o", "012552452323434511477352"),
            ("98765432109876543210", "%5.1x", "55aa54d38e5267eea"),
            ("98765432109876543210", "%d", "98765432109876543210"),
            ("98765432109876543210", "%#d", "98765432109876543210"),
            ("98765432109876543210", "%+.0d", "+98765432109876543210"),
            ("98765432109876543210", "%.0d", "98765432109876543210"),
            ("98765432109876543210", "%#010x", "0x55aa54d38e5267eea"),
            ("98765432109876543210", "%010o", "12552452323434511477352"),
            ("98765432109876543210", "%.2x", "55aa54d38e5267eea"),
            ("-98765432109876543210", "%x", "..faa55ab2c71ad98116"),
            ("-98765432109876543210", "%o", "..765225325454343266300426"),
            (
                "-98765432109876543210",
                "%b",
                "..10101010010101011010101100101100011100011010110110011000000100010110",
            ),
            ("-98765432109876543210", "%#x", "0x..faa55ab2c71ad98116"),
            ("-98765432109876543210", "%#o", "..765225325454343266300426"),
            (
                "-98765432109876543210",
                "%#b",
                "0b..10101010010101011010101100101100011100011010110110011000000100010110",
            ),
            ("-98765432109876543210", "%X", "..FAA55AB2C71AD98116"),
            ("-98765432109876543210", "%#X", "0X..FAA55AB2C71AD98116"),
            ("-98765432109876543210", "%8x", "..faa55ab2c71ad98116"),
            ("-98765432109876543210", "%08x", "..faa55ab2c71ad98116"),
            ("-98765432109876543210", "%.8x", "..faa55ab2c71ad98116"),
            ("-98765432109876543210", "%-8x|", "..faa55ab2c71ad98116|"),
            ("-98765432109876543210", "%+x", "-55aa54d38e5267eea"),
            ("-98765432109876543210", "% x", "-55aa54d38e5267eea"),
            (
                "-98765432109876543210",
                "%#B",
                "0B..10101010010101011010101100101100011100011010110110011000000100010110",
            ),
            ("-98765432109876543210", "%.3d", "-98765432109876543210"),
            ("-98765432109876543210", "%08.3d", "-98765432109876543210"),
            ("-98765432109876543210", "%-08d|", "-98765432109876543210|"),
            ("-98765432109876543210", "%+05d", "-98765432109876543210"),
            ("-98765432109876543210", "%#08x", "0x..faa55ab2c71ad98116"),
            (
                "-98765432109876543210",
                "%#.5o",
                "..765225325454343266300426",
            ),
            ("-98765432109876543210", "%5.1x", "..faa55ab2c71ad98116"),
            ("-98765432109876543210", "%d", "-98765432109876543210"),
            ("-98765432109876543210", "%#d", "-98765432109876543210"),
            ("-98765432109876543210", "%+.0d", "-98765432109876543210"),
            ("-98765432109876543210", "%.0d", "-98765432109876543210"),
            ("-98765432109876543210", "%#010x", "0x..faa55ab2c71ad98116"),
            (
                "-98765432109876543210",
                "%010o",
                "..765225325454343266300426",
            ),
            ("-98765432109876543210", "%.2x", "..faa55ab2c71ad98116"),
        ];
        for (n, f, want) in cases {
            let v = match n.parse::<i64>() {
                Ok(i) => Value::Int(i),
                Err(_) => Value::BigInt(n.to_string()),
            };
            // `|` marks the end of a left-justified field.
            let f = f.strip_suffix('|').unwrap_or(f);
            let want = want.strip_suffix('|').unwrap_or(want);
            let got = format_value(&v, f).unwrap_or_else(|e| e);
            assert_eq!(got, *want, "{f} of {n}");
        }
    }
    /// Ruby 3.3's `Kernel.format` of floats (recorded in Puppet 8.10's Ruby).
    #[test]
    fn floats_format_as_ruby_does() {
        let cases: &[(&str, &str, &str)] = &[
        ("0.0", "%f", "0.000000"),
        ("0.0", "%.2f", "0.00"),
        ("0.0", "%e", "0.000000e+00"),
        ("0.0", "%.0e", "0e+00"),
        ("0.0", "%#.0e", "0.e+00"),
        ("0.0", "%E", "0.000000E+00"),
        ("0.0", "%g", "0"),
        ("0.0", "%.3g", "0"),
        ("0.0", "%#g", "0.00000"),
        ("0.0", "%G", "0"),
        ("0.0", "%.0g", "0"),
        ("0.0", "%#.0f", "0."),
        ("0.0", "%10.3e", " 0.000e+00"),
        ("0.0", "%-12g", "0           "),
        ("0.0", "%+g", "+0"),
        ("0.0", "% g", " 0"),
        ("0.0", "%012.4f", "0000000.0000"),
        ("0.0", "%.10g", "0"),
        ("0.0", "%g", "0"),
        ("-0.0", "%f", "-0.000000"),
        ("-0.0", "%.2f", "-0.00"),
        ("-0.0", "%e", "-0.000000e+00"),
        ("-0.0", "%.0e", "-0e+00"),
        ("-0.0", "%#.0e", "-0.e+00"),
        ("-0.0", "%E", "-0.000000E+00"),
        ("-0.0", "%g", "-0"),
        ("-0.0", "%.3g", "-0"),
        ("-0.0", "%#g", "-0.00000"),
        ("-0.0", "%G", "-0"),
        ("-0.0", "%.0g", "-0"),
        ("-0.0", "%#.0f", "-0."),
        ("-0.0", "%10.3e", "-0.000e+00"),
        ("-0.0", "%-12g", "-0          "),
        ("-0.0", "%+g", "-0"),
        ("-0.0", "% g", "-0"),
        ("-0.0", "%012.4f", "-000000.0000"),
        ("-0.0", "%.10g", "-0"),
        ("-0.0", "%g", "-0"),
        ("1.5", "%f", "1.500000"),
        ("1.5", "%.2f", "1.50"),
        ("1.5", "%e", "1.500000e+00"),
        ("1.5", "%.0e", "2e+00"),
        ("1.5", "%#.0e", "2.e+00"),
        ("1.5", "%E", "1.500000E+00"),
        ("1.5", "%g", "1.5"),
        ("1.5", "%.3g", "1.5"),
        ("1.5", "%#g", "1.50000"),
        ("1.5", "%G", "1.5"),
        ("1.5", "%.0g", "2"),
        ("1.5", "%#.0f", "2."),
        ("1.5", "%10.3e", " 1.500e+00"),
        ("1.5", "%-12g", "1.5         "),
        ("1.5", "%+g", "+1.5"),
        ("1.5", "% g", " 1.5"),
        ("1.5", "%012.4f", "0000001.5000"),
        ("1.5", "%.10g", "1.5"),
        ("1.5", "%g", "1.5"),
        ("-2.25", "%f", "-2.250000"),
        ("-2.25", "%.2f", "-2.25"),
        ("-2.25", "%e", "-2.250000e+00"),
        ("-2.25", "%.0e", "-2e+00"),
        ("-2.25", "%#.0e", "-2.e+00"),
        ("-2.25", "%E", "-2.250000E+00"),
        ("-2.25", "%g", "-2.25"),
        ("-2.25", "%.3g", "-2.25"),
        ("-2.25", "%#g", "-2.25000"),
        ("-2.25", "%G", "-2.25"),
        ("-2.25", "%.0g", "-2"),
        ("-2.25", "%#.0f", "-2."),
        ("-2.25", "%10.3e", "-2.250e+00"),
        ("-2.25", "%-12g", "-2.25       "),
        ("-2.25", "%+g", "-2.25"),
        ("-2.25", "% g", "-2.25"),
        ("-2.25", "%012.4f", "-000002.2500"),
        ("-2.25", "%.10g", "-2.25"),
        ("-2.25", "%g", "-2.25"),
        ("100.0", "%f", "100.000000"),
        ("100.0", "%.2f", "100.00"),
        ("100.0", "%e", "1.000000e+02"),
        ("100.0", "%.0e", "1e+02"),
        ("100.0", "%#.0e", "1.e+02"),
        ("100.0", "%E", "1.000000E+02"),
        ("100.0", "%g", "100"),
        ("100.0", "%.3g", "100"),
        ("100.0", "%#g", "100.000"),
        ("100.0", "%G", "100"),
        ("100.0", "%.0g", "1e+02"),
        ("100.0", "%#.0f", "100."),
        ("100.0", "%10.3e", " 1.000e+02"),
        ("100.0", "%-12g", "100         "),
        ("100.0", "%+g", "+100"),
        ("100.0", "% g", " 100"),
        ("100.0", "%012.4f", "0000100.0000"),
        ("100.0", "%.10g", "100"),
        ("100.0", "%g", "100"),
        ("1.0e+20", "%f", "100000000000000000000.000000"),
        ("1.0e+20", "%.2f", "100000000000000000000.00"),
        ("1.0e+20", "%e", "1.000000e+20"),
        ("1.0e+20", "%.0e", "1e+20"),
        ("1.0e+20", "%#.0e", "1.e+20"),
        ("1.0e+20", "%E", "1.000000E+20"),
        ("1.0e+20", "%g", "1e+20"),
        ("1.0e+20", "%.3g", "1e+20"),
        ("1.0e+20", "%#g", "1.00000e+20"),
        ("1.0e+20", "%G", "1E+20"),
        ("1.0e+20", "%.0g", "1e+20"),
        ("1.0e+20", "%#.0f", "100000000000000000000."),
        ("1.0e+20", "%10.3e", " 1.000e+20"),
        ("1.0e+20", "%-12g", "1e+20       "),
        ("1.0e+20", "%+g", "+1e+20"),
        ("1.0e+20", "% g", " 1e+20"),
        ("1.0e+20", "%012.4f", "100000000000000000000.0000"),
        ("1.0e+20", "%.10g", "1e+20"),
        ("1.0e+20", "%g", "1e+20"),
        ("1.0e-05", "%f", "0.000010"),
        ("1.0e-05", "%.2f", "0.00"),
        ("1.0e-05", "%e", "1.000000e-05"),
        ("1.0e-05", "%.0e", "1e-05"),
        ("1.0e-05", "%#.0e", "1.e-05"),
        ("1.0e-05", "%E", "1.000000E-05"),
        ("1.0e-05", "%g", "1e-05"),
        ("1.0e-05", "%.3g", "1e-05"),
        ("1.0e-05", "%#g", "1.00000e-05"),
        ("1.0e-05", "%G", "1E-05"),
        ("1.0e-05", "%.0g", "1e-05"),
        ("1.0e-05", "%#.0f", "0."),
        ("1.0e-05", "%10.3e", " 1.000e-05"),
        ("1.0e-05", "%-12g", "1e-05       "),
        ("1.0e-05", "%+g", "+1e-05"),
        ("1.0e-05", "% g", " 1e-05"),
        ("1.0e-05", "%012.4f", "0000000.0000"),
        ("1.0e-05", "%.10g", "1e-05"),
        ("1.0e-05", "%g", "1e-05"),
        ("0.0001234", "%f", "0.000123"),
        ("0.0001234", "%.2f", "0.00"),
        ("0.0001234", "%e", "1.234000e-04"),
        ("0.0001234", "%.0e", "1e-04"),
        ("0.0001234", "%#.0e", "1.e-04"),
        ("0.0001234", "%E", "1.234000E-04"),
        ("0.0001234", "%g", "0.0001234"),
        ("0.0001234", "%.3g", "0.000123"),
        ("0.0001234", "%#g", "0.000123400"),
        ("0.0001234", "%G", "0.0001234"),
        ("0.0001234", "%.0g", "0.0001"),
        ("0.0001234", "%#.0f", "0."),
        ("0.0001234", "%10.3e", " 1.234e-04"),
        ("0.0001234", "%-12g", "0.0001234   "),
        ("0.0001234", "%+g", "+0.0001234"),
        ("0.0001234", "% g", " 0.0001234"),
        ("0.0001234", "%012.4f", "0000000.0001"),
        ("0.0001234", "%.10g", "0.0001234"),
        ("0.0001234", "%g", "0.0001234"),
        ("123456.0", "%f", "123456.000000"),
        ("123456.0", "%.2f", "123456.00"),
        ("123456.0", "%e", "1.234560e+05"),
        ("123456.0", "%.0e", "1e+05"),
        ("123456.0", "%#.0e", "1.e+05"),
        ("123456.0", "%E", "1.234560E+05"),
        ("123456.0", "%g", "123456"),
        ("123456.0", "%.3g", "1.23e+05"),
        ("123456.0", "%#g", "123456."),
        ("123456.0", "%G", "123456"),
        ("123456.0", "%.0g", "1e+05"),
        ("123456.0", "%#.0f", "123456."),
        ("123456.0", "%10.3e", " 1.235e+05"),
        ("123456.0", "%-12g", "123456      "),
        ("123456.0", "%+g", "+123456"),
        ("123456.0", "% g", " 123456"),
        ("123456.0", "%012.4f", "0123456.0000"),
        ("123456.0", "%.10g", "123456"),
        ("123456.0", "%g", "123456"),
        ("1234567.0", "%f", "1234567.000000"),
        ("1234567.0", "%.2f", "1234567.00"),
        ("1234567.0", "%e", "1.234567e+06"),
        ("1234567.0", "%.0e", "1e+06"),
        ("1234567.0", "%#.0e", "1.e+06"),
        ("1234567.0", "%E", "1.234567E+06"),
        ("1234567.0", "%g", "1.23457e+06"),
        ("1234567.0", "%.3g", "1.23e+06"),
        ("1234567.0", "%#g", "1.23457e+06"),
        ("1234567.0", "%G", "1.23457E+06"),
        ("1234567.0", "%.0g", "1e+06"),
        ("1234567.0", "%#.0f", "1234567."),
        ("1234567.0", "%10.3e", " 1.235e+06"),
        ("1234567.0", "%-12g", "1.23457e+06 "),
        ("1234567.0", "%+g", "+1.23457e+06"),
        ("1234567.0", "% g", " 1.23457e+06"),
        ("1234567.0", "%012.4f", "1234567.0000"),
        ("1234567.0", "%.10g", "1234567"),
        ("1234567.0", "%g", "1.23457e+06"),
        ("0.5", "%f", "0.500000"),
        ("0.5", "%.2f", "0.50"),
        ("0.5", "%e", "5.000000e-01"),
        ("0.5", "%.0e", "5e-01"),
        ("0.5", "%#.0e", "5.e-01"),
        ("0.5", "%E", "5.000000E-01"),
        ("0.5", "%g", "0.5"),
        ("0.5", "%.3g", "0.5"),
        ("0.5", "%#g", "0.500000"),
        ("0.5", "%G", "0.5"),
        ("0.5", "%.0g", "0.5"),
        ("0.5", "%#.0f", "0."),
        ("0.5", "%10.3e", " 5.000e-01"),
        ("0.5", "%-12g", "0.5         "),
        ("0.5", "%+g", "+0.5"),
        ("0.5", "% g", " 0.5"),
        ("0.5", "%012.4f", "0000000.5000"),
        ("0.5", "%.10g", "0.5"),
        ("0.5", "%g", "0.5"),
        ("2.5", "%f", "2.500000"),
        ("2.5", "%.2f", "2.50"),
        ("2.5", "%e", "2.500000e+00"),
        ("2.5", "%.0e", "2e+00"),
        ("2.5", "%#.0e", "2.e+00"),
        ("2.5", "%E", "2.500000E+00"),
        ("2.5", "%g", "2.5"),
        ("2.5", "%.3g", "2.5"),
        ("2.5", "%#g", "2.50000"),
        ("2.5", "%G", "2.5"),
        ("2.5", "%.0g", "2"),
        ("2.5", "%#.0f", "2."),
        ("2.5", "%10.3e", " 2.500e+00"),
        ("2.5", "%-12g", "2.5         "),
        ("2.5", "%+g", "+2.5"),
        ("2.5", "% g", " 2.5"),
        ("2.5", "%012.4f", "0000002.5000"),
        ("2.5", "%.10g", "2.5"),
        ("2.5", "%g", "2.5"),
        ("1.0e-300", "%f", "0.000000"),
        ("1.0e-300", "%.2f", "0.00"),
        ("1.0e-300", "%e", "1.000000e-300"),
        ("1.0e-300", "%.0e", "1e-300"),
        ("1.0e-300", "%#.0e", "1.e-300"),
        ("1.0e-300", "%E", "1.000000E-300"),
        ("1.0e-300", "%g", "1e-300"),
        ("1.0e-300", "%.3g", "1e-300"),
        ("1.0e-300", "%#g", "1.00000e-300"),
        ("1.0e-300", "%G", "1E-300"),
        ("1.0e-300", "%.0g", "1e-300"),
        ("1.0e-300", "%#.0f", "0."),
        ("1.0e-300", "%10.3e", "1.000e-300"),
        ("1.0e-300", "%-12g", "1e-300      "),
        ("1.0e-300", "%+g", "+1e-300"),
        ("1.0e-300", "% g", " 1e-300"),
        ("1.0e-300", "%012.4f", "0000000.0000"),
        ("1.0e-300", "%.10g", "1e-300"),
        ("1.0e-300", "%g", "1e-300"),
        ("1.7976931348623157e+308", "%f", "179769313486231570814527423731704356798070567525844996598917476803157260780028538760589558632766878171540458953514382464234321326889464182768467546703537516986049910576551282076245490090389328944075868508455133942304583236903222948165808559332123348274797826204144723168738177180919299881250404026184124858368.000000"),
        ("1.7976931348623157e+308", "%.2f", "179769313486231570814527423731704356798070567525844996598917476803157260780028538760589558632766878171540458953514382464234321326889464182768467546703537516986049910576551282076245490090389328944075868508455133942304583236903222948165808559332123348274797826204144723168738177180919299881250404026184124858368.00"),
        ("1.7976931348623157e+308", "%e", "1.797693e+308"),
        ("1.7976931348623157e+308", "%.0e", "2e+308"),
        ("1.7976931348623157e+308", "%#.0e", "2.e+308"),
        ("1.7976931348623157e+308", "%E", "1.797693E+308"),
        ("1.7976931348623157e+308", "%g", "1.79769e+308"),
        ("1.7976931348623157e+308", "%.3g", "1.8e+308"),
        ("1.7976931348623157e+308", "%#g", "1.79769e+308"),
        ("1.7976931348623157e+308", "%G", "1.79769E+308"),
        ("1.7976931348623157e+308", "%.0g", "2e+308"),
        ("1.7976931348623157e+308", "%#.0f", "179769313486231570814527423731704356798070567525844996598917476803157260780028538760589558632766878171540458953514382464234321326889464182768467546703537516986049910576551282076245490090389328944075868508455133942304583236903222948165808559332123348274797826204144723168738177180919299881250404026184124858368."),
        ("1.7976931348623157e+308", "%10.3e", "1.798e+308"),
        ("1.7976931348623157e+308", "%-12g", "1.79769e+308"),
        ("1.7976931348623157e+308", "%+g", "+1.79769e+308"),
        ("1.7976931348623157e+308", "% g", " 1.79769e+308"),
        ("1.7976931348623157e+308", "%012.4f", "179769313486231570814527423731704356798070567525844996598917476803157260780028538760589558632766878171540458953514382464234321326889464182768467546703537516986049910576551282076245490090389328944075868508455133942304583236903222948165808559332123348274797826204144723168738177180919299881250404026184124858368.0000"),
        ("1.7976931348623157e+308", "%.10g", "1.797693135e+308"),
        ("1.7976931348623157e+308", "%g", "1.79769e+308"),
        ("5.0e-324", "%f", "0.000000"),
        ("5.0e-324", "%.2f", "0.00"),
        ("5.0e-324", "%e", "4.940656e-324"),
        ("5.0e-324", "%.0e", "5e-324"),
        ("5.0e-324", "%#.0e", "5.e-324"),
        ("5.0e-324", "%E", "4.940656E-324"),
        ("5.0e-324", "%g", "4.94066e-324"),
        ("5.0e-324", "%.3g", "4.94e-324"),
        ("5.0e-324", "%#g", "4.94066e-324"),
        ("5.0e-324", "%G", "4.94066E-324"),
        ("5.0e-324", "%.0g", "5e-324"),
        ("5.0e-324", "%#.0f", "0."),
        ("5.0e-324", "%10.3e", "4.941e-324"),
        ("5.0e-324", "%-12g", "4.94066e-324"),
        ("5.0e-324", "%+g", "+4.94066e-324"),
        ("5.0e-324", "% g", " 4.94066e-324"),
        ("5.0e-324", "%012.4f", "0000000.0000"),
        ("5.0e-324", "%.10g", "4.940656458e-324"),
        ("5.0e-324", "%g", "4.94066e-324"),
        ];
        for (n, f, want) in cases {
            let v = Value::Float(n.parse().unwrap());
            assert_eq!(
                format_value(&v, f).unwrap_or_else(|e| e),
                *want,
                "{f} of {n}"
            );
        }
    }
}
