//! `TypeMismatchDescriber#describe_mismatch`: Puppet's wording of why a value does not match.

use super::calc::{assignable, generalize, normalize, resolved_alias, variant_maybe};
use super::{infer, Range, Type};
use hiera_value::value::Value;

#[derive(Clone, Debug, PartialEq)]
enum PathElem {
    Subject(String),
    Variant(usize),
    Index(usize),
    EntryValue(String),
    EntryKey(String),
}

impl PathElem {
    fn text(&self) -> String {
        match self {
            PathElem::Subject(s) => s.clone(),
            PathElem::Variant(i) => format!("variant {i}"),
            PathElem::Index(i) => format!("index {i}"),
            PathElem::EntryValue(k) => format!("entry '{k}'"),
            PathElem::EntryKey(k) => format!("key of entry '{k}'"),
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
enum Kind {
    Type { expected: Type, actual: Type },
    Pattern { expected: Type, actual: Type },
    Size { expected: Range, actual: Range },
    MissingKey(String),
    ExtraKey(String),
}

#[derive(Clone, Debug, PartialEq)]
struct Mismatch {
    path: Vec<PathElem>,
    kind: Kind,
}

impl Mismatch {
    fn canonical(&self) -> Vec<&PathElem> {
        self.path
            .iter()
            .filter(|p| !matches!(p, PathElem::Variant(_)))
            .collect()
    }
    fn same(&self, o: &Mismatch) -> bool {
        if self.canonical() != o.canonical() {
            return false;
        }
        match (&self.kind, &o.kind) {
            (
                Kind::Type {
                    expected: e1,
                    actual: a1,
                },
                Kind::Type {
                    expected: e2,
                    actual: a2,
                },
            )
            | (
                Kind::Pattern {
                    expected: e1,
                    actual: a1,
                },
                Kind::Pattern {
                    expected: e2,
                    actual: a2,
                },
            ) => e1 == e2 && a1 == a2,
            (
                Kind::Size {
                    expected: e1,
                    actual: a1,
                },
                Kind::Size {
                    expected: e2,
                    actual: a2,
                },
            ) => e1 == e2 && a1 == a2,
            (Kind::MissingKey(a), Kind::MissingKey(b)) | (Kind::ExtraKey(a), Kind::ExtraKey(b)) => {
                a == b
            }
            _ => false,
        }
    }
    fn format(&self) -> String {
        let position = if self.path.is_empty() {
            String::new()
        } else {
            format!(
                " {}",
                self.path
                    .iter()
                    .map(PathElem::text)
                    .collect::<Vec<_>>()
                    .join(" ")
            )
        };
        match &self.kind {
            Kind::Type { expected, actual } => type_message(expected, actual, &position),
            Kind::Pattern { expected, actual } => {
                let (e, pfx) = match expected {
                    Type::Optional(Some(inner)) => ((**inner).clone(), "an undef value or "),
                    e => (e.clone(), ""),
                };
                let a = match actual {
                    Type::String { value: Some(v), .. } => format!("'{v}'"),
                    a => short_name(a),
                };
                format!(
                    "{position} expects {pfx}a match for {}, got {a}",
                    alias_expanded(&e)
                )
            }
            Kind::Size { expected, actual } => format!(
                "{position} expects size to be {}, got {}",
                range_to_s(expected, "0"),
                range_to_s(actual, "0")
            ),
            Kind::MissingKey(k) => format!("{position} expects a value for key '{k}'"),
            Kind::ExtraKey(k) => format!("{position} unrecognized key '{k}'"),
        }
    }
}

fn range_to_s(r: &Range, zero: &str) -> String {
    let min = r.from.unwrap_or(0);
    // Float bounds (a size given as `Integer[2.0, 3.0]`) print as Floats.
    let n = |v: i64| {
        if r.float {
            super::ruby_float(v as f64)
        } else {
            v.to_string()
        }
    };
    match r.to {
        Some(max) if max == min => {
            if min == 0 {
                zero.to_string()
            } else {
                n(min)
            }
        }
        None if min == 0 => "unlimited".to_string(),
        Some(max) if min == 0 => format!("at most {}", n(max)),
        None => format!("at least {}", n(min)),
        Some(max) => format!("between {} and {}", n(min), n(max)),
    }
}

/// `to_alias_expanded_s`: Data/RichData are built-in aliases, printed by name.
fn alias_expanded(t: &Type) -> String {
    t.to_string()
}

fn short_name(t: &Type) -> String {
    match t {
        Type::Optional(Some(inner)) | Type::NotUndef(Some(inner)) | Type::Type(Some(inner))
            if **inner != Type::Any =>
        {
            format!("{}[{}]", simple_name(t), simple_name(inner))
        }
        Type::Sensitive(inner) if **inner != Type::Any => {
            format!("Sensitive[{}]", simple_name(inner))
        }
        // Init and Iterator contain a type too (PTypeWithContainedType).
        Type::Other(text) if text.starts_with("Init[") || text.starts_with("Iterator[") => {
            let (base, rest) = text.split_once('[').unwrap_or((text, ""));
            let inner: String = rest
                .trim_start()
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == ':' || *c == '_')
                .collect();
            format!("{base}[{inner}]")
        }
        _ => simple_name(t),
    }
}

/// The type's class name (`simple_name`), or the alias name.
fn simple_name(t: &Type) -> String {
    use Type as T;
    match t {
        T::Any => "Any",
        T::Unit => "Unit",
        T::Undef => "Undef",
        T::Default => "Default",
        T::Scalar => "Scalar",
        T::ScalarData => "ScalarData",
        T::Numeric => "Numeric",
        T::Data => "Data",
        T::RichData => "RichData",
        T::Boolean(_) => "Boolean",
        T::Integer(_) | T::BigInteger(_) | T::IntegerF(..) => "Integer",
        T::Float(_) => "Float",
        T::String { .. } => "String",
        T::Enum(..) => "Enum",
        T::Pattern(_) => "Pattern",
        T::Regexp(_) => "Regexp",
        T::NotUndef(_) => "NotUndef",
        T::Optional(_) => "Optional",
        T::Variant(_) => "Variant",
        T::Array(..) => "Array",
        T::Tuple(..) => "Tuple",
        T::Hash(..) => "Hash",
        T::Struct(_) => "Struct",
        T::Collection(_) => "Collection",
        T::Iterable(_) => "Iterable",
        T::Sensitive(_) => "Sensitive",
        T::Timestamp(..) => "Timestamp",
        T::Timespan(..) => "Timespan",
        T::SemVer(_) => "SemVer",
        T::SemVerRange => "SemVerRange",
        T::Type(_) => "Type",
        T::Uri(_) => "URI",
        // A bare TypeSet is Puppet's default type set.
        T::Other(n) if n == "TypeSet" => "DefaultTypeSet",
        T::Other(n) => return n.split('[').next().unwrap_or(n).to_string(),
    }
    .to_string()
}

fn a_an(s: &str) -> String {
    let first = s.chars().next().unwrap_or('x');
    if "AEIOUaeiou".contains(first) {
        format!("an {s}")
    } else {
        format!("a {s}")
    }
}

/// Same type class (Ruby `e.class == a.class`).
fn same_class(e: &Type, a: &Type) -> bool {
    use Type as T;
    match (e, a) {
        (
            T::Integer(_) | T::BigInteger(_) | T::IntegerF(..),
            T::Integer(_) | T::BigInteger(_) | T::IntegerF(..),
        ) => true,
        _ => std::mem::discriminant(e) == std::mem::discriminant(a),
    }
}

fn is_alias(t: &Type) -> bool {
    matches!(t, Type::Data | Type::RichData)
}

fn always_fully_detailed(es: &[Type], a: &Type) -> bool {
    es.iter().any(|e| {
        same_class(e, a)
            || is_alias(e)
            || is_alias(a)
            || matches!(
                (e, a),
                (Type::Struct(_), Type::Hash(..)) | (Type::Tuple(..), Type::Array(..))
            )
    })
}

/// `e.class::DEFAULT`.
fn class_default(e: &Type) -> Type {
    use Type as T;
    match e {
        T::Boolean(_) => T::Boolean(None),
        T::Integer(_) | T::IntegerF(..) => T::integer(),
        T::Float(_) => T::Float(super::FRange {
            from: None,
            to: None,
        }),
        T::String { .. } => T::string(),
        T::Enum(..) => T::Enum(vec![], false),
        T::Pattern(_) => T::Pattern(vec![]),
        T::Regexp(_) => T::Regexp(None),
        T::NotUndef(_) => T::NotUndef(None),
        T::Optional(_) => T::Optional(None),
        T::Variant(_) => T::Variant(vec![]),
        T::Array(..) => T::Array(Box::new(T::Any), None),
        T::Tuple(..) => T::Tuple(vec![], None),
        T::Hash(..) => T::Hash(Box::new(T::Any), Box::new(T::Any), None),
        T::Struct(_) => T::Struct(vec![]),
        T::Collection(_) => T::Collection(None),
        T::Iterable(_) => T::Iterable(None),
        T::Sensitive(_) => T::Sensitive(Box::new(T::Any)),
        T::Timestamp(..) => T::Timestamp(None, None),
        T::Timespan(..) => T::Timespan(None, None),
        T::SemVer(_) => T::SemVer(vec![]),
        T::Type(_) => T::Type(None),
        T::Uri(_) => T::Uri(None),
        t => t.clone(),
    }
}

fn report_detailed(es: &[Type], a: &Type) -> bool {
    always_fully_detailed(es, a)
        || es.iter().any(|e| {
            let e = resolved_alias(e).unwrap_or_else(|| e.clone());
            assignable(&class_default(&e), a)
        })
}

fn detailed_actual_to_s(es: &[Type], a: &Type) -> String {
    let es: Vec<Type> = es
        .iter()
        .map(|e| resolved_alias(e).unwrap_or_else(|| e.clone()))
        .collect();
    if always_fully_detailed(&es, a) {
        return alias_expanded(a);
    }
    let g = generalize(a);
    if es.iter().any(|e| assignable(e, &g)) {
        alias_expanded(a)
    } else {
        simple_name(a)
    }
}

fn type_message(expected: &Type, actual: &Type, position: &str) -> String {
    let mut e = expected.clone();
    let mut optional = false;
    if let Type::Optional(Some(inner)) = &e {
        e = (**inner).clone();
        optional = true;
    }
    let mut multi = false;
    let (e_s, a_s) = if let Type::Variant(ts) = &e {
        let (mut names, a) = if report_detailed(ts, actual) {
            (
                ts.iter().map(alias_expanded).collect::<Vec<_>>(),
                detailed_actual_to_s(ts, actual),
            )
        } else {
            let mut n: Vec<String> = Vec::new();
            for t in ts {
                let s = short_name(t);
                if !n.contains(&s) {
                    n.push(s);
                }
            }
            (n, short_name(actual))
        };
        if optional {
            names.insert(0, "Undef".into());
        }
        let s = match names.len() {
            1 => names.remove(0),
            2 => {
                multi = true;
                format!("{} or {}", names[0], names[1])
            }
            _ => {
                multi = true;
                let last = names.pop().unwrap_or_default();
                format!("{}, or {}", names.join(", "), last)
            }
        };
        (s, a)
    } else {
        let one = [e.clone()];
        let (mut s, a) = if report_detailed(&one, actual) {
            (alias_expanded(&e), detailed_actual_to_s(&one, actual))
        } else {
            (short_name(&e), short_name(actual))
        };
        if optional {
            s = format!("Undef or {s}");
            multi = true;
        }
        (s, a)
    };
    if multi {
        format!("{position} expects a value of type {e_s}, got {a_s}")
    } else {
        format!("{position} expects {} value, got {a_s}", a_an(&e_s))
    }
}

fn size_mm(path: &[PathElem], expected: Range, actual: Range) -> Mismatch {
    Mismatch {
        path: path.to_vec(),
        kind: Kind::Size { expected, actual },
    }
}

fn type_mm(path: &[PathElem], expected: &Type, actual: &Type) -> Mismatch {
    Mismatch {
        path: path.to_vec(),
        kind: Kind::Type {
            expected: normalize(expected),
            actual: normalize(actual),
        },
    }
}

fn with(path: &[PathElem], e: PathElem) -> Vec<PathElem> {
    let mut p = path.to_vec();
    p.push(e);
    p
}

fn describe(expected: &Type, actual: &Type, path: &[PathElem]) -> Vec<Mismatch> {
    internal(&normalize(expected), expected, actual, path, 0)
}

fn internal(
    expected: &Type,
    original: &Type,
    actual: &Type,
    path: &[PathElem],
    depth: u32,
) -> Vec<Mismatch> {
    if depth > 40 {
        return vec![type_mm(path, original, actual)];
    }
    let d = depth + 1;
    let desc = |e: &Type, a: &Type, p: &[PathElem]| internal(&normalize(e), e, a, p, d);
    match expected {
        Type::Data | Type::RichData => {
            let r = resolved_alias(expected).unwrap_or(Type::Any);
            internal(&normalize(&r), expected, actual, path, d)
        }
        Type::Variant(ts) => {
            let mut types = ts.clone();
            if matches!(original, Type::Optional(_)) {
                types.insert(0, Type::Undef);
            }
            let mut all = Vec::new();
            for (i, vt) in types.iter().enumerate() {
                let dd = desc(vt, actual, &with(path, PathElem::Variant(i)));
                if dd.is_empty() {
                    return vec![];
                }
                all.push(dd);
            }
            let merged = merge_descriptions(path.len(), all);
            if is_alias(original) && merged.len() == 1 {
                vec![type_mm(path, original, actual)]
            } else {
                merged
            }
        }
        Type::Struct(elems) => match actual {
            Type::Struct(aes) => {
                let mut out = Vec::new();
                let mut rest: Vec<&super::StructElem> = aes.iter().collect();
                for e1 in elems {
                    match rest.iter().position(|e2| e2.name == e1.name) {
                        None => {
                            if !e1.optional_key {
                                out.push(Mismatch {
                                    path: path.to_vec(),
                                    kind: Kind::MissingKey(e1.name.clone()),
                                });
                            }
                        }
                        Some(i) => {
                            let e2 = rest.remove(i);
                            if !assignable(&e1.value, &e2.value) {
                                out.extend(desc(
                                    &e1.value,
                                    &e2.value,
                                    &with(path, PathElem::EntryValue(e1.name.clone())),
                                ));
                            }
                        }
                    }
                }
                for e2 in rest {
                    out.push(Mismatch {
                        path: path.to_vec(),
                        kind: Kind::ExtraKey(e2.name.clone()),
                    });
                }
                out
            }
            Type::Hash(k, v, s) => {
                let actual_size = s.unwrap_or(Range::DEFAULT_SIZE);
                let required = elems.iter().filter(|e| !e.optional_key).count();
                let expected_size = Range::new(Some(required as i64), Some(elems.len() as i64));
                if expected_size.covers(&actual_size) {
                    vec![type_mm(
                        path,
                        original,
                        &Type::Hash(k.clone(), v.clone(), None),
                    )]
                } else {
                    vec![size_mm(path, expected_size, actual_size)]
                }
            }
            _ => vec![type_mm(path, original, actual)],
        },
        Type::Hash(kt, vt, size) => match actual {
            Type::Struct(aes) => {
                let expected_size = size.unwrap_or(Range::DEFAULT_SIZE);
                let req = aes.iter().filter(|e| !e.optional_key).count() as i64;
                let actual_size = Range::new(Some(req), Some(aes.len() as i64));
                if expected_size.covers(&actual_size) {
                    let mut out = Vec::new();
                    for a in aes {
                        let akey = Type::String {
                            size: None,
                            value: Some(a.name.clone()),
                        };
                        if !assignable(kt, &akey) {
                            out.extend(desc(
                                kt,
                                &akey,
                                &with(path, PathElem::EntryKey(a.name.clone())),
                            ));
                        }
                        if !assignable(vt, &a.value) {
                            out.extend(desc(
                                vt,
                                &a.value,
                                &with(path, PathElem::EntryValue(a.name.clone())),
                            ));
                        }
                    }
                    out
                } else {
                    vec![size_mm(path, expected_size, actual_size)]
                }
            }
            Type::Hash(ak, av, asize) => {
                let actual_size = asize.unwrap_or(Range::DEFAULT_SIZE);
                match size {
                    Some(es) if !es.covers(&actual_size) => {
                        vec![size_mm(path, *es, actual_size)]
                    }
                    _ => vec![type_mm(
                        path,
                        original,
                        &Type::Hash(ak.clone(), av.clone(), None),
                    )],
                }
            }
            _ => vec![type_mm(path, original, actual)],
        },
        Type::Tuple(ets, esize) => describe_tuple(ets, esize, original, actual, path, d),
        Type::Array(et, esize) => match actual {
            Type::Tuple(ats, asize) => {
                let expected_size = esize.unwrap_or(Range::DEFAULT_SIZE);
                let actual_size = asize.unwrap_or(Range::exact(ats.len() as i64));
                if expected_size.covers(&actual_size) {
                    let mut out = Vec::new();
                    for (i, t) in ats.iter().enumerate() {
                        if !assignable(et, t) {
                            out.extend(desc(et, t, &with(path, PathElem::Index(i))));
                        }
                    }
                    out
                } else {
                    vec![size_mm(path, expected_size, actual_size)]
                }
            }
            Type::Array(ae, asize) => {
                let actual_size = asize.unwrap_or(Range::DEFAULT_SIZE);
                match esize {
                    Some(es) if !es.covers(&actual_size) => {
                        vec![size_mm(path, *es, actual_size)]
                    }
                    _ => vec![type_mm(path, original, &Type::Array(ae.clone(), None))],
                }
            }
            _ => vec![type_mm(path, original, actual)],
        },
        Type::Optional(inner) => {
            if matches!(actual, Type::Undef) {
                return vec![];
            }
            match inner {
                None => vec![],
                Some(inner) => {
                    let orig = if is_alias(original) {
                        original
                    } else {
                        expected
                    };
                    internal(inner, orig, actual, path, d)
                }
            }
        }
        Type::Pattern(_) | Type::Enum(..) => {
            vec![Mismatch {
                path: path.to_vec(),
                kind: Kind::Pattern {
                    expected: normalize(original),
                    actual: normalize(actual),
                },
            }]
        }
        _ => {
            if assignable(expected, actual) {
                vec![]
            } else {
                vec![type_mm(path, original, actual)]
            }
        }
    }
}

fn tuple_range(ts: &[Type], size: &Option<Range>) -> Range {
    match size {
        Some(r) => *r,
        None if ts.is_empty() => Range::DEFAULT_SIZE,
        None => Range::exact(ts.len() as i64),
    }
}

fn describe_tuple(
    ets: &[Type],
    esize: &Option<Range>,
    original: &Type,
    actual: &Type,
    path: &[PathElem],
    d: u32,
) -> Vec<Mismatch> {
    let expected = Type::Tuple(ets.to_vec(), *esize);
    if expected == *actual || (ets.is_empty() && matches!(actual, Type::Array(..))) {
        return vec![];
    }
    let expected_size = tuple_range(ets, esize);
    let desc = |e: &Type, a: &Type, p: &[PathElem]| internal(&normalize(e), e, a, p, d);
    match actual {
        Type::Tuple(ats, asize) => {
            let actual_size = tuple_range(ats, asize);
            if expected_size.covers(&actual_size) {
                let mut out = Vec::new();
                if !ets.is_empty() {
                    for (i, at) in ats.iter().enumerate() {
                        let adx = i.min(ets.len() - 1);
                        out.extend(desc(&ets[adx], at, &with(path, PathElem::Index(adx))));
                    }
                }
                out
            } else {
                vec![size_mm(path, expected_size, actual_size)]
            }
        }
        Type::Array(ae, asize) => {
            if **ae == Type::Any {
                return vec![type_mm(path, original, actual)];
            }
            let actual_size = asize.unwrap_or(Range::DEFAULT_SIZE);
            if expected_size.covers(&actual_size) {
                let mut out = Vec::new();
                for (i, et) in ets.iter().enumerate() {
                    out.extend(desc(et, ae, &with(path, PathElem::Index(i))));
                }
                out
            } else {
                vec![size_mm(path, expected_size, actual_size)]
            }
        }
        _ => vec![type_mm(path, original, actual)],
    }
}

fn chop_path(mut m: Mismatch, idx: usize) -> Mismatch {
    if idx < m.path.len() {
        m.path.remove(idx);
    }
    m
}

fn merge_descriptions(varying: usize, variant_descriptions: Vec<Vec<Mismatch>>) -> Vec<Mismatch> {
    let n = variant_descriptions.len();
    let mut descriptions: Vec<Mismatch> = variant_descriptions.into_iter().flatten().collect();
    // Size mismatches first, then type mismatches (Ruby's class order; PatternMismatch is a TypeMismatch).
    for pass in 0..2 {
        let ms: Vec<&Mismatch> = descriptions
            .iter()
            .filter(|m| {
                matches!(
                    (&m.kind, pass),
                    (Kind::Size { .. }, 0) | (Kind::Type { .. } | Kind::Pattern { .. }, 1)
                )
            })
            .collect();
        if ms.len() == n && n > 0 {
            let mut acc: Option<Mismatch> = Some(ms[0].clone());
            for cur in &ms[1..] {
                let prev = match acc {
                    Some(p) => p,
                    None => break,
                };
                if prev.canonical() != cur.canonical() {
                    acc = None;
                    break;
                }
                acc = Some(merge_two(prev, cur));
            }
            if let Some(g) = acc {
                descriptions = vec![g];
                break;
            }
        }
    }
    let mut uniq: Vec<Mismatch> = Vec::new();
    for d in descriptions {
        if !uniq.iter().any(|u| u.same(&d)) {
            uniq.push(d);
        }
    }
    if uniq.len() == 1 {
        let only = uniq.remove(0);
        vec![chop_path(only, varying)]
    } else {
        uniq
    }
}

fn merge_two(prev: Mismatch, cur: &Mismatch) -> Mismatch {
    match (&prev.kind, &cur.kind) {
        (
            Kind::Size {
                expected: e1,
                actual,
            },
            Kind::Size { expected: e2, .. },
        ) => {
            let from = if e1.from.unwrap_or(0) < e2.from.unwrap_or(0) {
                e1.from
            } else {
                e2.from
            };
            let to = match (e1.to, e2.to) {
                (Some(a), Some(b)) => Some(a.max(b)),
                _ => None,
            };
            Mismatch {
                path: prev.path.clone(),
                kind: Kind::Size {
                    expected: Range::new(from, to),
                    actual: *actual,
                },
            }
        }
        (
            Kind::Type {
                expected: e1,
                actual,
            }
            | Kind::Pattern {
                expected: e1,
                actual,
            },
            Kind::Type { expected: e2, .. } | Kind::Pattern { expected: e2, .. },
        ) => {
            // [expected, o.expected].flatten.uniq, then PVariantType.maybe_create + normalize.
            let mut list: Vec<Type> = Vec::new();
            for t in [e1.clone(), e2.clone()] {
                if !list.contains(&t) {
                    list.push(t);
                }
            }
            let expected = normalize(&variant_maybe(list));
            let kind = match prev.kind {
                Kind::Pattern { .. } => Kind::Pattern {
                    expected,
                    actual: actual.clone(),
                },
                _ => Kind::Type {
                    expected,
                    actual: actual.clone(),
                },
            };
            Mismatch {
                path: prev.path.clone(),
                kind,
            }
        }
        _ => prev,
    }
}

/// Puppet's message for a value that is not an instance of `expected`, e.g.
/// `describe_mismatch("Found value", Integer, "x")` =
/// "Found value has wrong type, expects an Integer value, got String".
/// One line per mismatch of `actual` against `expected`, each starting with `subject`
/// (a function's "rejected:" lines).
pub(crate) fn describe_lines(subject: &str, expected: &Type, actual: &Value) -> Vec<String> {
    describe(
        expected,
        &infer(actual),
        &[PathElem::Subject(subject.to_string())],
    )
    .iter()
    .map(|m| m.format().trim().to_string())
    .collect()
}

/// Puppet's mismatch lines for a parameter (`TypeMismatchDescriber#validate_parameters`):
/// `describe_parameter_mismatch("Class[Ntp]: parameter 'iburst'", Boolean, "yes")` =
/// `["Class[Ntp]: parameter 'iburst' expects a Boolean value, got String"]`, one line per
/// mismatch (no "has wrong type," as a lookup's `--type` says). Empty when `actual` matches.
pub fn describe_parameter_mismatch(subject: &str, expected: &Type, actual: &Value) -> Vec<String> {
    describe_lines(subject, expected, actual)
}

/// The generalized type name of a value (`String`, `Struct`, ...).
pub(crate) fn simple_type_name(v: &Value) -> String {
    simple_name(&infer(v))
}

/// Puppet's type mismatch message for `actual` against `expected` (`subject expects ..., got ...`).
pub fn describe_mismatch(subject: &str, expected: &Type, actual: &Value) -> String {
    let name = format!("{subject} has wrong type,");
    let errors = describe(expected, &infer(actual), &[PathElem::Subject(name)]);
    match errors.len() {
        0 => String::new(),
        1 => errors[0].format().trim().to_string(),
        _ => errors
            .iter()
            .map(Mismatch::format)
            .collect::<Vec<_>>()
            .join("\n "),
    }
}
