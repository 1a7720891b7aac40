//! Type-to-type rules (`assignable?`, `normalize`, `generalize`), as in Puppet's types.rb.
//! Used by the mismatch describer, where the "actual" side is an inferred type.

use super::{FRange, Range, StructElem, Type};

/// `PVariantType.maybe_create`: flatten nested variants, drop duplicates, unwrap singletons.
pub(crate) fn variant_maybe(types: Vec<Type>) -> Type {
    let mut flat: Vec<Type> = Vec::new();
    for t in flatten(types) {
        if !flat.contains(&t) {
            flat.push(t);
        }
    }
    if flat.len() == 1 {
        flat.pop().unwrap_or(Type::Any)
    } else {
        Type::Variant(flat)
    }
}

fn flatten(types: Vec<Type>) -> Vec<Type> {
    let mut out = Vec::new();
    for t in types {
        match t {
            Type::Variant(ts) => out.extend(ts),
            t => out.push(t),
        }
    }
    out
}

fn data_alias() -> Type {
    // Data = Variant[ScalarData, Undef, Hash[String, Data], Array[Data]]; the recursion is
    // cut one level down (Data inside stays the alias, which `assignable` resolves lazily).
    Type::Variant(vec![
        Type::ScalarData,
        Type::Undef,
        Type::Hash(Box::new(Type::string()), Box::new(Type::Data), None),
        Type::Array(Box::new(Type::Data), None),
    ])
}

fn rich_data_alias() -> Type {
    Type::Variant(vec![
        Type::Scalar,
        Type::SemVerRange,
        Type::Other("Binary".into()),
        Type::Sensitive(Box::new(Type::Any)),
        Type::Type(None),
        Type::Undef,
        Type::Default,
        Type::Hash(
            Box::new(Type::Variant(vec![Type::string(), Type::Numeric])),
            Box::new(Type::RichData),
            None,
        ),
        Type::Array(Box::new(Type::RichData), None),
    ])
}

/// The resolved type of an alias (Data, RichData), or None.
pub(crate) fn resolved_alias(t: &Type) -> Option<Type> {
    match t {
        Type::Data => Some(data_alias()),
        Type::RichData => Some(rich_data_alias()),
        _ => None,
    }
}

fn size_of(size: &Option<Range>) -> Range {
    size.unwrap_or(Range::DEFAULT_SIZE)
}

fn tuple_size_range(types: &[Type], size: &Option<Range>) -> Range {
    match size {
        Some(r) => *r,
        None if types.is_empty() => Range::DEFAULT_SIZE,
        None => Range::exact(i64::try_from(types.len()).unwrap_or(i64::MAX)),
    }
}

/// `a.assignable?(b)`.
pub(crate) fn assignable(a: &Type, b: &Type) -> bool {
    assignable_depth(a, b, 0)
}

fn assignable_depth(a: &Type, b: &Type, depth: u32) -> bool {
    // Aliases are recursive; a depth cap replaces Ruby's RecursionGuard.
    if depth > 40 {
        return true;
    }
    let d = depth + 1;
    if let Some(r) = resolved_alias(a) {
        if a == b {
            return true;
        }
        return assignable_depth(&r, b, d);
    }
    match b {
        Type::Unit => return true,
        Type::Data | Type::RichData => {
            if a == b {
                return true;
            }
            let r = resolved_alias(b).unwrap_or(Type::Any);
            return assignable_depth(a, &r, d);
        }
        Type::Variant(bts) => {
            if let Type::Variant(ats) = a {
                if ats.is_empty() {
                    return true;
                }
                return !bts.is_empty() && bts.iter().all(|bt| assignable_inner(a, bt, d));
            }
            if *a == Type::Any {
                return true;
            }
            if matches!(a, Type::NotUndef(_)) && bts.is_empty() {
                return assignable_inner(a, b, d);
            }
            return !bts.is_empty() && bts.iter().all(|bt| assignable_depth(a, bt, d));
        }
        Type::Optional(bt) => {
            if let Type::Variant(ats) = a {
                if ats.is_empty() {
                    return true;
                }
                return assignable_inner(a, b, d);
            }
            return assignable_depth(a, &Type::Undef, d)
                && bt.as_ref().is_none_or(|bt| assignable_depth(a, bt, d));
        }
        Type::NotUndef(bt) => {
            if let Some(bt) = bt {
                if !assignable_depth(bt, &Type::Undef, d) && !matches!(a, Type::Variant(_)) {
                    return assignable_depth(a, bt, d);
                }
            }
            return assignable_inner(a, b, d);
        }
        _ => {}
    }
    if let Type::Variant(ats) = a {
        if matches!(b, Type::Undef) && ats.is_empty() {
            return false;
        }
    }
    assignable_inner(a, b, d)
}

fn is_scalar_data_kind(b: &Type) -> bool {
    matches!(
        b,
        Type::ScalarData
            | Type::String { .. }
            | Type::Enum(..)
            | Type::Pattern(_)
            | Type::Integer(_)
            | Type::BigInteger(_)
            | Type::Float(_)
            | Type::Numeric
            | Type::Boolean(_)
    )
}

/// `_assignable?` of each type class.
fn assignable_inner(a: &Type, b: &Type, d: u32) -> bool {
    use Type as T;
    let asg = |x: &Type, y: &Type| assignable_depth(x, y, d);
    match a {
        T::Any => true,
        T::Unit => true,
        T::Undef => matches!(b, T::Undef),
        T::Default => matches!(b, T::Default),
        T::Scalar => {
            matches!(
                b,
                T::Scalar
                    | T::Regexp(_)
                    | T::SemVer(_)
                    | T::SemVerRange
                    | T::Timespan(..)
                    | T::Timestamp(..)
            ) || is_scalar_data_kind(b)
        }
        T::ScalarData => is_scalar_data_kind(b),
        T::Numeric => matches!(
            b,
            T::Numeric | T::Integer(_) | T::BigInteger(_) | T::IntegerF(..) | T::Float(_)
        ),
        T::Data | T::RichData => false, // handled through resolved_alias
        T::Boolean(v) => matches!(b, T::Boolean(w) if v.is_none() || v == w),
        T::Integer(r) => match b {
            T::Integer(r2) => r.covers(r2),
            T::BigInteger(d) => r.contains_big(d),
            _ => false,
        },
        T::BigInteger(d) => matches!(b, T::BigInteger(e) if d == e),
        T::IntegerF(from, to) => {
            let (lo, hi) = (
                from.map_or(f64::NEG_INFINITY, |f| f.as_f64()),
                to.map_or(f64::INFINITY, |t| t.as_f64()),
            );
            let (lo2, hi2) = match b {
                T::Integer(r2) => (
                    r2.from.map_or(f64::NEG_INFINITY, |f| f as f64),
                    r2.to.map_or(f64::INFINITY, |t| t as f64),
                ),
                T::IntegerF(f2, t2) => (
                    f2.map_or(f64::NEG_INFINITY, |f| f.as_f64()),
                    t2.map_or(f64::INFINITY, |t| t.as_f64()),
                ),
                _ => return false,
            };
            lo <= lo2 && hi >= hi2
        }
        T::Float(r) => match b {
            T::Float(r2) => r.lo() <= r2.lo() && r.hi() >= r2.hi(),
            _ => false,
        },
        T::String { size, value } => {
            let sz = match value {
                Some(_) => None,
                None => *size,
            };
            match sz {
                Some(st) => match b {
                    T::String {
                        size: s2,
                        value: v2,
                    } => {
                        let derived = match v2 {
                            Some(v) => Range::exact(super::ruby_len(v)),
                            None => size_of(s2),
                        };
                        st.covers(&derived)
                    }
                    T::Enum(vals, _) => {
                        if vals.is_empty() {
                            st.covers(&Range::DEFAULT_SIZE)
                        } else {
                            let lens: Vec<i64> = vals.iter().map(|v| super::ruby_len(v)).collect();
                            let min = lens.iter().copied().min().unwrap_or(0);
                            let max = lens.iter().copied().max().unwrap_or(0);
                            st.covers(&Range::new(Some(min), Some(max)))
                        }
                    }
                    T::Pattern(_) => st.covers(&Range::DEFAULT_SIZE),
                    _ => false,
                },
                None => match b {
                    T::String {
                        size: s2,
                        value: v2,
                    } => {
                        value.is_none() && size.is_none()
                            || (value.is_some() && value == v2)
                            || (value.is_none() && *size == *s2 && v2.is_none())
                    }
                    T::Enum(vals, ci) => match value {
                        None => true,
                        Some(v) => vals.len() == 1 && !ci && vals.first() == Some(v),
                    },
                    T::Pattern(_) => value.is_none(),
                    _ => false,
                },
            }
        }
        T::Enum(vals, ci) => {
            if a == b {
                return true;
            }
            if vals.is_empty() && matches!(b, T::String { .. } | T::Enum(..) | T::Pattern(_)) {
                return true;
            }
            match b {
                T::String { value, .. } => value
                    .as_ref()
                    .is_some_and(|v| a.is_instance(&hiera_value::value::Value::String(v.clone()))),
                T::Enum(v2, ci2) => {
                    !v2.is_empty()
                        && (*ci || !ci2)
                        && v2
                            .iter()
                            .all(|s| a.is_instance(&hiera_value::value::Value::String(s.clone())))
                }
                _ => {
                    let _ = vals;
                    false
                }
            }
        }
        T::Pattern(pats) => {
            if a == b {
                return true;
            }
            match b {
                T::String { value: None, .. } => pats.is_empty(),
                T::String { value: Some(v), .. } => {
                    pats.is_empty() || pats.iter().any(|p| p.is_match(v))
                }
                T::Enum(vals, _) => {
                    if vals.is_empty() {
                        pats.is_empty()
                    } else {
                        pats.is_empty() || vals.iter().all(|s| pats.iter().any(|p| p.is_match(s)))
                    }
                }
                T::Pattern(_) => pats.is_empty(),
                _ => false,
            }
        }
        T::Regexp(p) => matches!(b, T::Regexp(q) if p.is_none() || p == q),
        T::NotUndef(t) => !asg(b, &T::Undef) && t.as_ref().is_none_or(|t| asg(t, b)),
        T::Optional(t) => {
            if matches!(b, T::Undef) {
                return true;
            }
            match t {
                None => true,
                Some(t) => match b {
                    T::Optional(bt) => bt.as_ref().is_none_or(|bt| asg(t, bt)),
                    _ => asg(t, b),
                },
            }
        }
        T::Variant(ts) => ts.iter().any(|t| asg(t, b)),
        T::Collection(size) => {
            let s = size_of(size);
            match b {
                T::Array(_, s2) | T::Hash(_, _, s2) | T::Collection(s2) => s.covers(&size_of(s2)),
                T::Tuple(ts, s2) => s.covers(&s2.unwrap_or(Range::exact(len(ts.len())))),
                T::Struct(es) => s.covers(&Range::exact(len(es.len()))),
                _ => false,
            }
        }
        T::Array(e, size) => match b {
            T::Tuple(ts, s2) => {
                let s = size_of(size);
                let so = s2.unwrap_or(Range::exact(len(ts.len())));
                s.covers(&so) && ts.iter().all(|t| asg(e, t))
            }
            T::Array(e2, s2) => size_of(size).covers(&size_of(s2)) && asg(e, e2),
            _ => false,
        },
        T::Hash(k, v, size) => match b {
            T::Hash(k2, v2, s2) => {
                let empty_b = **k2 == T::Unit && **v2 == T::Unit && *s2 == Some(Range::exact(0));
                if size.is_none_or(|s| s.from == Some(0)) && empty_b {
                    return true;
                }
                asg(k, k2) && asg(v, v2) && size_of(size).covers(&size_of(s2))
            }
            T::Struct(es) => {
                size_of(size).contains(len(es.len()))
                    && es.iter().all(|e| {
                        k.is_instance(&hiera_value::value::Value::String(e.name.clone()))
                            && asg(v, &e.value)
                    })
            }
            _ => false,
        },
        T::Tuple(ts, size) => {
            if a == b {
                return true;
            }
            let size_s = tuple_size_range(ts, size);
            match b {
                T::Tuple(ots, osize) => {
                    let size_o = tuple_size_range(ots, osize);
                    if !size_s.covers(&size_o) {
                        return false;
                    }
                    if !ts.is_empty() {
                        if ots.is_empty() {
                            return size_s.from == Some(0);
                        }
                        for (i, ot) in ots.iter().enumerate() {
                            let st = ts.get(i).or(ts.last());
                            if !st.is_some_and(|st| asg(st, ot)) {
                                return false;
                            }
                        }
                    }
                    true
                }
                T::Array(oe, osize) => {
                    let size_o = size_of(osize);
                    if !size_s.covers(&size_o) {
                        return false;
                    }
                    if !ts.is_empty() {
                        let n = match size_o.to {
                            Some(t) => (ts.len() as i128).min(i128::from(t)),
                            None => ts.len() as i128,
                        };
                        for i in 0..n.max(0) as usize {
                            let st = ts.get(i).or(ts.last());
                            if !st.is_some_and(|st| asg(st, oe)) {
                                return false;
                            }
                        }
                    }
                    true
                }
                _ => false,
            }
        }
        T::Struct(es) => match b {
            T::Struct(oes) => {
                let mut matched = 0;
                for e1 in es {
                    match oes.iter().find(|e2| e2.name == e1.name) {
                        None => {
                            if !e1.optional_key {
                                return false;
                            }
                        }
                        Some(e2) => {
                            matched += 1;
                            if !(key_assignable(e1, e2) && asg(&e1.value, &e2.value)) {
                                return false;
                            }
                        }
                    }
                }
                matched == oes.len()
            }
            T::Hash(k2, v2, s2) => {
                let mut required = 0;
                for e in es {
                    if !e.optional_key {
                        required += 1;
                        if !(asg(&e.value, v2) && asg(&Type::string(), k2)) {
                            return false;
                        }
                    }
                }
                Range::new(Some(required), Some(len(es.len()))).covers(&size_of(s2))
            }
            _ => false,
        },
        T::Iterable(t) => {
            if t.as_ref().is_none_or(|t| asg(t, &T::Any)) {
                iterable(b)
            } else {
                match iterable_type(b) {
                    Some(et) => t.as_ref().is_some_and(|t| asg(t, &et)),
                    None => false,
                }
            }
        }
        T::Sensitive(t) => matches!(b, T::Sensitive(t2) if asg(t, t2)),
        T::Timestamp(f, t) => match b {
            T::Timestamp(f2, t2) => super::timestamp::time_range_covers(false, [f, t], [f2, t2]),
            _ => false,
        },
        T::Timespan(f, t) => match b {
            T::Timespan(f2, t2) => super::timestamp::time_range_covers(true, [f, t], [f2, t2]),
            _ => false,
        },
        // PSemVerType#_assignable?: each of b's ranges covered by one of a's.
        T::SemVer(ra) => match b {
            T::SemVer(rb) => {
                ra.is_empty()
                    || (!rb.is_empty() && rb.iter().all(|o| ra.iter().any(|r| o.covered_by(r))))
            }
            _ => false,
        },
        T::SemVerRange => matches!(b, T::SemVerRange),
        T::Type(t) => match b {
            T::Type(t2) => match (t, t2) {
                (None, _) => true,
                (Some(_), None) => false,
                (Some(t), Some(t2)) => asg(t, t2),
            },
            _ => false,
        },
        // PURIType#_assignable?: b has each of a's parameters, equal (or matching).
        T::Uri(pa) => match (pa, b) {
            (None, T::Uri(_)) => true,
            (Some(pa), T::Uri(Some(pb))) => pa
                .iter()
                .all(|(k, p)| pb.iter().any(|(k2, q)| k2 == k && (p == q || matches!((p, q), (super::UriParam::Type(t), super::UriParam::Value(v)) if t.is_instance(v))))),
            _ => false,
        },
        T::Other(n) => matches!(b, T::Other(m) if m == n),
    }
}

fn key_assignable(e1: &StructElem, e2: &StructElem) -> bool {
    // Key types are String['n'] or Optional[String['n']] with equal names here.
    e1.optional_key || !e2.optional_key
}

fn len(n: usize) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

fn iterable(t: &Type) -> bool {
    match t {
        T::String { .. }
        | T::Enum(..)
        | T::Array(..)
        | T::Hash(..)
        | T::Tuple(..)
        | T::Struct(_) => true,
        T::Collection(_) | T::Iterable(_) => true,
        T::Integer(r) => r.from.is_some() && r.to.is_some(),
        T::Type(Some(inner)) => {
            matches!(**inner, T::Enum(..))
                || matches!(**inner, T::Integer(r) if r.from.is_some() && r.to.is_some())
        }
        _ => false,
    }
}

use Type as T;

fn iterable_type(t: &Type) -> Option<Type> {
    match t {
        T::String { .. } | T::Enum(..) => Some(T::String {
            size: Some(Range::exact(1)),
            value: None,
        }),
        T::Array(e, _) => Some((**e).clone()),
        T::Tuple(ts, _) => Some(variant_maybe(ts.clone())),
        T::Integer(_) => Some(T::integer()),
        T::Iterable(e) => e.as_deref().cloned(),
        // PHashType/PStructType#iterable_type: [key, value] pairs.
        T::Hash(k, v, _) => Some(T::Tuple(
            vec![(**k).clone(), (**v).clone()],
            Some(Range::exact(2)),
        )),
        T::Struct(elems) => Some(T::Tuple(
            vec![
                variant_maybe(elems.iter().map(|e| Type::str_value(&e.name)).collect()),
                variant_maybe(elems.iter().map(|e| e.value.clone()).collect()),
            ],
            Some(Range::exact(2)),
        )),
        _ => None,
    }
}

/// `normalize`.
pub(crate) fn normalize(t: &Type) -> Type {
    normalized(t).0
}

/// Ruby's `Type#normalize` with its object identity: the bool says whether Ruby returns a new
/// object rather than `self`. It matters because a Variant whose members are all unchanged and
/// that merges nothing returns `self`, in its original member order, even where merging ranges
/// reordered them.
fn normalized(t: &Type) -> (Type, bool) {
    match t {
        T::Variant(ts) => normalize_variant(ts),
        T::NotUndef(Some(inner)) => {
            let (n, changed) = normalized(inner);
            match n {
                T::Optional(x) => (normalize(&T::NotUndef(x)), true),
                n if !assignable(&n, &T::Undef) => (n, true),
                n => (T::NotUndef(Some(Box::new(n))), changed),
            }
        }
        T::Optional(Some(inner)) => {
            let (n, changed) = normalized(inner);
            match n {
                T::NotUndef(x) => (normalize(&T::Optional(x)), true),
                n if assignable(&n, &T::Undef) => (n, true),
                n => (T::Optional(Some(Box::new(n))), changed),
            }
        }
        T::Array(e, s) => {
            if **e == T::Any {
                (T::Array(Box::new(T::Any), None), s.is_some())
            } else {
                let (n, changed) = normalized(e);
                (T::Array(Box::new(n), *s), changed)
            }
        }
        T::Hash(k, v, s) => {
            let default = **k == T::Any && **v == T::Any && s.is_none();
            if default || *t == Type::hash_empty() {
                return (t.clone(), false);
            }
            let (nk, ck) = normalized(k);
            let (nv, cv) = normalized(v);
            (
                T::Hash(Box::new(nk), Box::new(nv), *s),
                s.is_some() || ck || cv,
            )
        }
        T::Tuple(ts, s) => {
            let (ts, changed) = normalized_all(ts);
            (T::Tuple(ts, *s), changed)
        }
        T::Struct(es) => {
            let mut changed = false;
            let es = es
                .iter()
                .map(|e| {
                    let (value, c) = normalized(&e.value);
                    changed |= c;
                    StructElem {
                        name: e.name.clone(),
                        optional_key: e.optional_key,
                        value,
                    }
                })
                .collect();
            (T::Struct(es), changed)
        }
        T::Collection(s) => (T::Collection(None), s.is_some()),
        T::Sensitive(x) => {
            let (n, changed) = normalized(x);
            (T::Sensitive(Box::new(n)), changed)
        }
        T::Iterable(Some(x)) => {
            let (n, changed) = normalized(x);
            (T::Iterable(Some(Box::new(n))), changed)
        }
        T::Type(Some(x)) => {
            let (n, changed) = normalized(x);
            (T::Type(Some(Box::new(n))), changed)
        }
        t => (t.clone(), false),
    }
}

/// `alter_type_array(types, :normalize)`: each member normalized, and whether any changed.
fn normalized_all(ts: &[Type]) -> (Vec<Type>, bool) {
    let mut changed = false;
    let out = ts
        .iter()
        .map(|t| {
            let (n, c) = normalized(t);
            changed |= c;
            n
        })
        .collect();
    (out, changed)
}

fn normalize_variant(ts: &[Type]) -> (Type, bool) {
    if ts.is_empty() {
        return (T::Variant(vec![]), false);
    }
    let (types, modified) = normalized_all(ts);
    if types.len() == 1 {
        return (types.into_iter().next().unwrap_or(T::Any), true);
    }
    if types.iter().any(|t| matches!(t, T::Undef | T::Optional(_))) {
        let inner: Vec<Type> = types
            .into_iter()
            .filter(|t| !matches!(t, T::Undef))
            .map(|t| match t {
                T::Optional(Some(x)) => *x,
                T::Optional(None) => T::Any,
                t => t,
            })
            .collect();
        return (
            normalize(&T::Optional(Some(Box::new(variant_maybe(inner))))),
            true,
        );
    }
    let mut types = flatten(types);
    let size_before_merge = types.len();
    // Each merge step below keeps the order unless it merges (Ruby partitions and only
    // reassembles when more than one member is merged).
    let count = |ts: &[Type], f: &dyn Fn(&Type) -> bool| ts.iter().filter(|t| f(t)).count();
    // swap_not_undefs
    let is_nu = |t: &Type| matches!(t, T::NotUndef(_));
    let (nus, mut others): (Vec<Type>, Vec<Type>) = if count(&types, &is_nu) > 1 {
        types.into_iter().partition(|t| is_nu(t))
    } else {
        (Vec::new(), types)
    };
    if nus.len() > 1 {
        let inner: Vec<Type> = nus
            .into_iter()
            .map(|t| match t {
                T::NotUndef(Some(x)) => *x,
                _ => T::Any,
            })
            .collect();
        others.push(T::NotUndef(Some(Box::new(normalize(&variant_maybe(
            inner,
        ))))));
    } else {
        others.extend(nus);
    }
    types = others;
    // merge_enums (case sensitive)
    let is_enum = |t: &Type| {
        matches!(t, T::Enum(v, false) if !v.is_empty())
            || matches!(t, T::String { value: Some(_), .. })
    };
    let (enums, mut others): (Vec<Type>, Vec<Type>) = if count(&types, &is_enum) > 1 {
        types.into_iter().partition(|t| is_enum(t))
    } else {
        (Vec::new(), types)
    };
    if enums.len() > 1 {
        let mut vals: Vec<String> = Vec::new();
        for e in enums {
            match e {
                T::Enum(v, _) => vals.extend(v),
                T::String { value: Some(v), .. } => vals.push(v),
                _ => {}
            }
        }
        others.push(make_enum(vals, false));
    } else {
        others.extend(enums);
    }
    types = others;
    let is_ci = |t: &Type| matches!(t, T::Enum(v, true) if !v.is_empty());
    let (enums, mut others): (Vec<Type>, Vec<Type>) = if count(&types, &is_ci) > 1 {
        types.into_iter().partition(|t| is_ci(t))
    } else {
        (Vec::new(), types)
    };
    if enums.len() > 1 {
        let mut vals = Vec::new();
        for e in enums {
            if let T::Enum(v, _) = e {
                vals.extend(v.into_iter().map(|s| s.to_lowercase()));
            }
        }
        others.push(make_enum(vals, true));
    } else {
        others.extend(enums);
    }
    types = others;
    // merge_patterns
    let is_pat = |t: &Type| matches!(t, T::Pattern(_));
    let (pats, mut others): (Vec<Type>, Vec<Type>) = if count(&types, &is_pat) > 1 {
        types.into_iter().partition(|t| is_pat(t))
    } else {
        (Vec::new(), types)
    };
    if pats.len() > 1 {
        let mut all: Vec<super::Regex> = Vec::new();
        for p in pats {
            if let T::Pattern(ps) = p {
                for r in ps {
                    if !all.contains(&r) {
                        all.push(r);
                    }
                }
            }
        }
        others.push(T::Pattern(all));
    } else {
        others.extend(pats);
    }
    types = others;
    // merge_numbers(Integer), (Float)
    types = merge_ranges_int(types);
    types = merge_ranges_float(types);
    if types.len() == 1 {
        (types.pop().unwrap_or(T::Any), true)
    } else if modified || types.len() != size_before_merge {
        (variant_maybe(types), true)
    } else {
        // Ruby returns `self`: the original members in their original order.
        (T::Variant(ts.to_vec()), false)
    }
}

pub(crate) fn make_enum(mut vals: Vec<String>, ci: bool) -> Type {
    vals.sort();
    vals.dedup();
    T::Enum(vals, ci)
}

fn merge_ranges_int(types: Vec<Type>) -> Vec<Type> {
    let range = |t: &Type| match t {
        T::Integer(r) => Some(*r),
        _ => None,
    };
    merge_ranges(types, range, T::Integer, |memo, y| {
        let intersect = !(memo.hi() < y.lo() || y.hi() < memo.lo());
        let adjacent =
            memo.hi().checked_add(1) == Some(y.lo()) || y.hi().checked_add(1) == Some(memo.lo());
        (intersect || adjacent).then(|| {
            Range::new(
                if memo.lo() <= y.lo() {
                    memo.from
                } else {
                    y.from
                },
                if memo.hi() >= y.hi() { memo.to } else { y.to },
            )
        })
    })
}

fn merge_ranges_float(types: Vec<Type>) -> Vec<Type> {
    let range = |t: &Type| match t {
        T::Float(r) => Some(*r),
        _ => None,
    };
    merge_ranges(types, range, T::Float, |memo, y| {
        (!(memo.hi() < y.lo() || y.hi() < memo.lo())).then(|| FRange {
            from: if memo.lo() <= y.lo() {
                memo.from
            } else {
                y.from
            },
            to: if memo.hi() >= y.hi() { memo.to } else { y.to },
        })
    })
}

/// Ruby's `merge_numbers` + `merge_ranges`: ranges of one kind that meet are merged (the
/// merged ones first, then the other members); with at most one range the order is kept.
fn merge_ranges<R: Copy>(
    types: Vec<Type>,
    range: impl Fn(&Type) -> Option<R>,
    wrap: impl Fn(R) -> Type,
    merge: impl Fn(R, R) -> Option<R>,
) -> Vec<Type> {
    if types.iter().filter(|t| range(t).is_some()).count() <= 1 {
        return types;
    }
    let (rs, others): (Vec<Type>, Vec<Type>) = types.into_iter().partition(|t| range(t).is_some());
    let mut ranges: Vec<R> = rs.iter().filter_map(&range).collect();
    let mut result = Vec::new();
    while let Some(x) = ranges.pop() {
        let mut memo = x;
        let mut unmerged = Vec::new();
        for y in ranges.iter() {
            match merge(memo, *y) {
                Some(m) => memo = m,
                None => unmerged.push(*y),
            }
        }
        result.push(wrap(memo));
        ranges = unmerged;
    }
    result.extend(others);
    result
}

/// `generalize`: drop value-level detail (`Integer[1, 1]` → `Integer`).
pub(crate) fn generalize(t: &Type) -> Type {
    match t {
        T::Integer(_) => T::integer(),
        T::Float(_) => T::Float(FRange {
            from: None,
            to: None,
        }),
        T::String { .. } => T::string(),
        T::Boolean(_) => T::Boolean(None),
        T::Enum(vals, _) => {
            if vals.is_empty() {
                T::string()
            } else {
                let lens: Vec<i64> = vals.iter().map(|v| super::ruby_len(v)).collect();
                T::String {
                    size: Some(Range::new(
                        lens.iter().copied().min(),
                        lens.iter().copied().max(),
                    )),
                    value: None,
                }
            }
        }
        T::Variant(ts) => {
            if ts.is_empty() {
                t.clone()
            } else {
                variant_maybe(ts.iter().map(generalize).collect())
            }
        }
        T::Array(e, _) => {
            if **e == T::Any {
                T::Array(Box::new(T::Any), None)
            } else {
                T::Array(Box::new(generalize(e)), None)
            }
        }
        T::Hash(k, v, s) => {
            let empty = **k == T::Unit && **v == T::Unit && *s == Some(Range::exact(0));
            let default = **k == T::Any && **v == T::Any && s.is_none();
            if empty || default {
                t.clone()
            } else {
                T::Hash(Box::new(generalize(k)), Box::new(generalize(v)), None)
            }
        }
        T::Tuple(ts, s) => {
            if ts.is_empty() && s.is_none() {
                t.clone()
            } else {
                T::Tuple(ts.iter().map(generalize).collect(), *s)
            }
        }
        T::Struct(es) => T::Struct(
            es.iter()
                .map(|e| StructElem {
                    name: e.name.clone(),
                    optional_key: e.optional_key,
                    value: generalize(&e.value),
                })
                .collect(),
        ),
        T::Collection(_) => T::Collection(None),
        T::NotUndef(Some(x)) => T::NotUndef(Some(Box::new(generalize(x)))),
        T::Optional(Some(x)) => T::Optional(Some(Box::new(generalize(x)))),
        T::Iterable(Some(x)) => T::Iterable(Some(Box::new(generalize(x)))),
        T::Type(Some(x)) => T::Type(Some(Box::new(generalize(x)))),
        T::Sensitive(x) => T::Sensitive(Box::new(generalize(x))),
        t => t.clone(),
    }
}
