//! `SemanticPuppet::Version` and `SemanticPuppet::VersionRange` (semantic_puppet 1.1.0, which
//! Puppet 8.10 bundles): parsing, ordering, range membership and the range algebra the
//! `SemVer[range, ...]` type and `SemVerRange` values use, quirks included (a merge of two
//! ranges with the same end raises Ruby's NameError, `^x` and `<=x` raise NoMethodError).

use hiera_value::value::{RubyObject, Value};
use std::cmp::Ordering;

/// `Version::MAX`'s major, `Float::INFINITY`.
const INF: u128 = u128::MAX;

/// One pre-release identifier: numeric ones order before alphanumeric ones.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Ident {
    /// A numeric identifier (compared as a number).
    Num(u128),
    /// An alphanumeric identifier (compared as text).
    Str(String),
}

/// A semantic version (`SemanticPuppet::Version`).
#[derive(Clone, Debug)]
pub struct Version {
    /// The major version.
    pub major: u128,
    /// The minor version.
    pub minor: u128,
    /// The patch version.
    pub patch: u128,
    /// The pre-release identifiers (`-rc.1`).
    pub pre: Option<Vec<Ident>>,
    /// The build metadata (`+build.5`).
    pub build: Option<Vec<String>>,
}

impl Version {
    fn new(major: u128, minor: u128, patch: u128) -> Version {
        Version {
            major,
            minor,
            patch,
            pre: None,
            build: None,
        }
    }
    /// `Version::MIN`: 0.0.0 with an empty pre-release list (lower than any 0.0.0-x).
    pub fn min() -> Version {
        Version {
            pre: Some(Vec::new()),
            ..Version::new(0, 0, 0)
        }
    }
    /// `Version::MAX`: major `Float::INFINITY`.
    pub fn max() -> Version {
        Version::new(INF, 0, 0)
    }

    /// `Version.parse`: `\A(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(-pre)?(\+build)?\Z`.
    pub fn parse(s: &str) -> Result<Version, String> {
        let fail = || format!("Unable to parse '{s}' as a semantic version identifier");
        let (parts, pre, build) = match_parts(s).ok_or_else(fail)?;
        let n = |p: &str| p.parse::<u128>().map_err(|_| fail());
        Ok(Version {
            major: n(parts[0])?,
            minor: n(parts[1])?,
            patch: n(parts[2])?,
            pre: parse_prerelease(pre)?,
            build: build.map(|b| b.split('.').map(str::to_string).collect()),
        })
    }

    /// Whether this is a release (no pre-release part).
    pub fn stable(&self) -> bool {
        self.pre.as_ref().is_none_or(Vec::is_empty)
    }

    /// `next(:patch)`.
    fn next_patch(&self) -> Version {
        Version::new(self.major, self.minor, self.patch.saturating_add(1))
    }

    fn same_numbers(&self, o: &Version) -> bool {
        self.major == o.major && self.minor == o.minor && self.patch == o.patch
    }

    /// `eql?` (also `==`): every part, the build included, and nil differs from `[]`.
    pub fn eql(&self, o: &Version) -> bool {
        self.same_numbers(o) && self.pre == o.pre && self.build == o.build
    }

    /// `<=>`: numbers, then pre-release (the build is ignored).
    pub fn compare(&self, o: &Version) -> Ordering {
        (self.major, self.minor, self.patch)
            .cmp(&(o.major, o.minor, o.patch))
            .then_with(|| match (&self.pre, &o.pre) {
                (None, None) => Ordering::Equal,
                (None, Some(_)) => Ordering::Greater,
                (Some(_), None) => Ordering::Less,
                (Some(a), Some(b)) => {
                    for (i, x) in a.iter().enumerate() {
                        let Some(y) = b.get(i) else {
                            return Ordering::Greater;
                        };
                        let c = match (x, y) {
                            (Ident::Num(x), Ident::Num(y)) => x.cmp(y),
                            (Ident::Num(_), Ident::Str(_)) => Ordering::Less,
                            (Ident::Str(_), Ident::Num(_)) => Ordering::Greater,
                            (Ident::Str(x), Ident::Str(y)) => x.as_bytes().cmp(y.as_bytes()),
                        };
                        if c != Ordering::Equal {
                            return c;
                        }
                    }
                    a.len().cmp(&b.len())
                }
            })
    }

    /// The `SemanticPuppet::Version` object Psych dumps.
    pub fn to_value(&self) -> Value {
        let num = |n: u128| {
            if n == INF {
                Value::Float(f64::INFINITY)
            } else {
                i64::try_from(n)
                    .map(Value::Int)
                    .unwrap_or_else(|_| Value::BigInt(n.to_string()))
            }
        };
        let pre = self.pre.as_ref().map_or(Value::Null, |p| {
            Value::Array(
                p.iter()
                    .map(|i| match i {
                        Ident::Num(n) => num(*n),
                        Ident::Str(s) => Value::String(s.clone()),
                    })
                    .collect(),
            )
        });
        let build = self.build.as_ref().map_or(Value::Null, |b| {
            Value::Array(b.iter().map(|s| Value::String(s.clone())).collect())
        });
        Value::Object(Box::new(RubyObject {
            type_name: "SemVer",
            class: "SemanticPuppet::Version",
            fields: vec![
                ("major".into(), num(self.major)),
                ("minor".into(), num(self.minor)),
                ("patch".into(), num(self.patch)),
                ("prerelease".into(), pre),
                ("build".into(), build),
            ],
            to_s: self.to_string(),
            scalar: None,
        }))
    }
}

impl std::fmt::Display for Version {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.major == INF {
            f.write_str("Infinity")?;
        } else {
            write!(f, "{}", self.major)?;
        }
        write!(f, ".{}.{}", self.minor, self.patch)?;
        if let Some(p) = &self.pre {
            // Ruby appends `@prerelease[0].to_s` even for MIN's empty list: "0.0.0-".
            f.write_str("-")?;
            let parts: Vec<String> = p
                .iter()
                .map(|i| match i {
                    Ident::Num(n) => n.to_string(),
                    Ident::Str(s) => s.clone(),
                })
                .collect();
            f.write_str(&parts.join("."))?;
        }
        if let Some(b) = &self.build {
            write!(f, "+{}", b.join("."))?;
        }
        Ok(())
    }
}

/// `NR`: `0|[1-9][0-9]*`.
fn nr(p: &str) -> bool {
    !p.is_empty() && p.bytes().all(|c| c.is_ascii_digit()) && (p == "0" || !p.starts_with('0'))
}

/// The numbers, pre-release and build of `s` when it matches Puppet's `SemVerPattern`,
/// `\A(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(-PARTS)?(\+PARTS)?\Z` (`\Z`: a final
/// newline is allowed).
pub(super) type Parts<'a> = ([&'a str; 3], Option<&'a str>, Option<&'a str>);

/// See [`Parts`]; `None` when `s` does not match.
pub(super) fn match_parts(s: &str) -> Option<Parts<'_>> {
    let body = s.strip_suffix('\n').unwrap_or(s);
    let (core, build) = match body.split_once('+') {
        Some((c, b)) => (c, Some(b)),
        None => (body, None),
    };
    let (nums, pre) = match core.split_once('-') {
        Some((n, p)) => (n, Some(p)),
        None => (core, None),
    };
    let mut it = nums.split('.');
    let parts = [it.next()?, it.next()?, it.next()?];
    let ok = it.next().is_none()
        && parts.iter().all(|p| nr(p))
        && pre.is_none_or(valid_parts)
        && build.is_none_or(valid_parts);
    ok.then_some((parts, pre, build))
}

/// `PARTS`: `[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*`.
fn valid_parts(s: &str) -> bool {
    s.split('.')
        .all(|p| !p.is_empty() && p.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'-'))
}

/// `Version.parse_prerelease`.
fn parse_prerelease(pre: Option<&str>) -> Result<Option<Vec<Ident>>, String> {
    let Some(pre) = pre else { return Ok(None) };
    pre.split('.')
        .map(|x| {
            if !x.is_empty() && x.bytes().all(|c| c.is_ascii_digit()) {
                if x.len() > 1 && x.starts_with('0') {
                    return Err(
                        "Numeric pre-release identifiers MUST NOT contain leading zeroes".into(),
                    );
                }
                x.parse::<u128>()
                    .map(Ident::Num)
                    .map_err(|_| format!("Unable to parse '{x}' as a number"))
            } else {
                Ok(Ident::Str(x.to_string()))
            }
        })
        .collect::<Result<Vec<_>, _>>()
        .map(Some)
}

/// One of `VersionRange`'s ranges.
#[derive(Clone, Debug)]
pub enum Range {
    /// Every version (`*`).
    All,
    /// `>v`.
    Gt(Version),
    /// `>=v`.
    GtEq(Version),
    /// `<v`.
    Lt(Version),
    /// `LtRange::MATCH_NOTHING`: `<` MIN, printed `<0.0.0`.
    Nothing,
    /// `<=v`.
    LtEq(Version),
    /// Exactly `v`.
    Eq(Version),
    /// Both ranges (`>=1.0 <2.0`).
    MinMax(Box<Range>, Box<Range>),
}

impl Range {
    fn class(&self) -> &'static str {
        match self {
            Range::All => "AllRange",
            Range::Gt(_) => "GtRange",
            Range::GtEq(_) => "GtEqRange",
            Range::Lt(_) | Range::Nothing => "LtRange",
            Range::LtEq(_) => "LtEqRange",
            Range::Eq(_) => "EqRange",
            Range::MinMax(..) => "MinMaxRange",
        }
    }
    fn version(&self) -> Option<Version> {
        match self {
            Range::Gt(v) | Range::GtEq(v) | Range::Lt(v) | Range::LtEq(v) | Range::Eq(v) => {
                Some(v.clone())
            }
            Range::Nothing => Some(Version::min()),
            _ => None,
        }
    }
    /// `MinMaxRange.new`: a MinMaxRange given as a bound contributes its own bound.
    fn min_max(min: Range, max: Range) -> Range {
        let min = match min {
            Range::MinMax(m, _) => *m,
            m => m,
        };
        let max = match max {
            Range::MinMax(_, m) => *m,
            m => m,
        };
        Range::MinMax(Box::new(min), Box::new(max))
    }
    /// `MinMaxRange.create(a, b)`: their intersection (nil when they do not meet).
    fn create(a: Range, b: Range) -> Option<Range> {
        a.intersection(&b)
    }

    fn begin(&self) -> Version {
        match self {
            Range::Gt(v) | Range::GtEq(v) | Range::Eq(v) => v.clone(),
            Range::MinMax(m, _) => m.begin(),
            _ => Version::min(),
        }
    }
    fn end(&self) -> Version {
        match self {
            Range::Lt(v) | Range::LtEq(v) | Range::Eq(v) => v.clone(),
            Range::Nothing => Version::min(),
            Range::MinMax(_, m) => m.end(),
            _ => Version::max(),
        }
    }
    fn exclude_begin(&self) -> bool {
        match self {
            Range::Gt(_) => true,
            Range::MinMax(m, _) => m.exclude_begin(),
            _ => false,
        }
    }
    fn exclude_end(&self) -> bool {
        match self {
            Range::Lt(_) | Range::Nothing => true,
            Range::MinMax(_, m) => m.exclude_end(),
            _ => false,
        }
    }
    fn lower_bound(&self) -> bool {
        match self {
            Range::Gt(_) => true,
            Range::GtEq(v) | Range::Eq(v) => !v.eql(&Version::min()),
            Range::MinMax(m, _) => m.lower_bound(),
            _ => false,
        }
    }
    fn upper_bound(&self) -> bool {
        match self {
            Range::Lt(_) | Range::Nothing => true,
            Range::LtEq(v) | Range::Eq(v) => !v.eql(&Version::max()),
            Range::MinMax(_, m) => m.upper_bound(),
            _ => false,
        }
    }
    /// Whether version `x` lies in the range.
    pub fn include(&self, x: &Version) -> bool {
        match self {
            Range::All => true,
            Range::Gt(v) => x.compare(v) == Ordering::Greater,
            Range::GtEq(v) => x.compare(v) != Ordering::Less,
            Range::Lt(v) => x.compare(v) == Ordering::Less,
            Range::Nothing => x.compare(&Version::min()) == Ordering::Less,
            Range::LtEq(v) => x.compare(v) != Ordering::Greater,
            Range::Eq(v) => x.eql(v),
            Range::MinMax(a, b) => a.include(x) && b.include(x),
        }
    }
    fn test_prerelease(&self, x: &Version) -> bool {
        match self {
            Range::All => true,
            Range::MinMax(a, b) => a.test_prerelease(x) || b.test_prerelease(x),
            r => r
                .version()
                .is_some_and(|v| !v.stable() && v.same_numbers(x)),
        }
    }
    /// `eql?`: the same class and versions.
    pub fn eql(&self, o: &Range) -> bool {
        if self.class() != o.class() {
            return false;
        }
        match (self, o) {
            (Range::MinMax(a, b), Range::MinMax(c, d)) => a.eql(c) && b.eql(d),
            (Range::All, Range::All) => true,
            _ => match (self.version(), o.version()) {
                (Some(a), Some(b)) => a.eql(&b),
                _ => false,
            },
        }
    }

    /// `AbstractRange#intersection` (AllRange: the other range).
    fn intersection(&self, range: &Range) -> Option<Range> {
        if let Range::All = self {
            return Some(range.clone());
        }
        match self.begin().compare(&range.end()) {
            Ordering::Greater => return None,
            Ordering::Equal => {
                return if self.exclude_begin() || range.exclude_end() {
                    None
                } else {
                    Some(Range::Eq(self.begin()))
                }
            }
            Ordering::Less => {}
        }
        match range.begin().compare(&self.end()) {
            Ordering::Greater => return None,
            Ordering::Equal => {
                return if range.exclude_begin() || self.exclude_end() {
                    None
                } else {
                    Some(Range::Eq(range.begin()))
                }
            }
            Ordering::Less => {}
        }
        let min = match self.begin().compare(&range.begin()) {
            Ordering::Less => range,
            Ordering::Greater => self,
            Ordering::Equal => {
                if self.exclude_begin() {
                    self
                } else {
                    range
                }
            }
        };
        let max = match self.end().compare(&range.end()) {
            Ordering::Greater => range,
            Ordering::Less => self,
            Ordering::Equal => {
                if self.exclude_end() {
                    self
                } else {
                    range
                }
            }
        };
        Some(if !max.upper_bound() {
            min.clone()
        } else if !min.lower_bound() {
            max.clone()
        } else {
            Range::min_max(min.clone(), max.clone())
        })
    }

    /// `AbstractRange#merge` (AllRange: itself). `Err` is the Ruby exception semantic_puppet
    /// raises where both ends are equal (it reads an undefined `exclude_end`).
    fn merge(&self, other: &Range) -> Result<Option<Range>, String> {
        if let Range::All = self {
            return Ok(Some(Range::All));
        }
        let bound = |excl: bool, v: Version, lower: bool| match (lower, excl) {
            (true, true) => Range::Gt(v),
            (true, false) => Range::GtEq(v),
            (false, true) => Range::Lt(v),
            (false, false) => Range::LtEq(v),
        };
        let from_to = |a: &Range, b: &Range| {
            Range::create(
                bound(a.exclude_begin(), a.begin(), true),
                bound(b.exclude_end(), b.end(), false),
            )
        };
        if self.include(&other.begin()) || other.include(&self.begin()) {
            let (min, excl_begin) = match self.begin().compare(&other.begin()) {
                Ordering::Less => (self.begin(), self.exclude_begin()),
                Ordering::Greater => (other.begin(), other.exclude_begin()),
                Ordering::Equal => (self.begin(), self.exclude_begin() && other.exclude_begin()),
            };
            let (max, excl_end) = match self.end().compare(&other.end()) {
                Ordering::Greater => (self.end(), self.exclude_end()),
                Ordering::Less => (other.end(), other.exclude_end()),
                Ordering::Equal => {
                    return Err(format!(
                        "undefined local variable or method `exclude_end' for an instance of SemanticPuppet::VersionRange::{}",
                        self.class()
                    ))
                }
            };
            Ok(Range::create(
                bound(excl_begin, min, true),
                bound(excl_end, max, false),
            ))
        } else if self.exclude_end() && !other.exclude_begin() && self.end().eql(&other.begin()) {
            Ok(from_to(self, other))
        } else if other.exclude_end() && !self.exclude_begin() && other.end().eql(&self.begin()) {
            Ok(from_to(other, self))
        } else if !self.exclude_end()
            && !other.exclude_begin()
            && self.end().next_patch().eql(&other.begin())
        {
            Ok(from_to(self, other))
        } else if !other.exclude_end()
            && !self.exclude_begin()
            && other.end().next_patch().eql(&self.begin())
        {
            Ok(from_to(other, self))
        } else {
            Ok(None)
        }
    }

    fn to_value(&self) -> Value {
        let fields = match self {
            Range::All => Vec::new(),
            Range::MinMax(a, b) => vec![("min".into(), a.to_value()), ("max".into(), b.to_value())],
            r => vec![(
                "version".into(),
                r.version().unwrap_or_else(Version::min).to_value(),
            )],
        };
        let class = match self {
            Range::All => "SemanticPuppet::VersionRange::AllRange",
            Range::Gt(_) => "SemanticPuppet::VersionRange::GtRange",
            Range::GtEq(_) => "SemanticPuppet::VersionRange::GtEqRange",
            Range::Lt(_) | Range::Nothing => "SemanticPuppet::VersionRange::LtRange",
            Range::LtEq(_) => "SemanticPuppet::VersionRange::LtEqRange",
            Range::Eq(_) => "SemanticPuppet::VersionRange::EqRange",
            Range::MinMax(..) => "SemanticPuppet::VersionRange::MinMaxRange",
        };
        Value::Object(Box::new(RubyObject {
            type_name: "Runtime",
            class,
            fields,
            to_s: self.to_string(),
            scalar: None,
        }))
    }
}

impl std::fmt::Display for Range {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Range::All => f.write_str("*"),
            Range::Gt(v) => write!(f, ">{v}"),
            Range::GtEq(v) => write!(f, ">={v}"),
            Range::Lt(v) => write!(f, "<{v}"),
            Range::Nothing => f.write_str("<0.0.0"),
            Range::LtEq(v) => write!(f, "<={v}"),
            Range::Eq(v) => write!(f, "{v}"),
            Range::MinMax(a, b) => write!(f, "{a} {b}"),
        }
    }
}

/// A `SemanticPuppet::VersionRange`: its ranges (merged) and the string it was made from.
#[derive(Clone, Debug)]
pub struct VersionRange {
    /// The alternatives (`||`).
    pub ranges: Vec<Range>,
    /// The range as written.
    pub string: String,
}

impl PartialEq for VersionRange {
    fn eq(&self, o: &VersionRange) -> bool {
        self.ranges.len() == o.ranges.len()
            && self.ranges.iter().zip(&o.ranges).all(|(a, b)| a.eql(b))
    }
}

fn unparsable(s: &str) -> String {
    format!("Unparsable version range: \"{s}\"")
}

const NO_SINGLETON: &str =
    "undefined method `SINGLETON' for class SemanticPuppet::VersionRange::AllRange";

/// `PARTIAL_EXPR`'s captures: major, minor, patch (x/X/* or a number), pre-release, build.
struct Partial<'a> {
    parts: [Option<&'a str>; 3],
    pre: Option<&'a str>,
    build: Option<&'a str>,
}

fn xr(p: &str) -> bool {
    matches!(p, "x" | "X" | "*") || nr(p)
}

/// `PARTIAL` / `PARTIAL_EXPR`: `XR(\.XR(\.XR QUALIFIER)?)?`.
fn parse_partial(expr: &str) -> Option<Partial<'_>> {
    let mut parts: [Option<&str>; 3] = [None; 3];
    let mut rest = expr;
    for (i, slot) in parts.iter_mut().enumerate() {
        let end = rest
            .find(|c: char| c == '.' || (i == 2 && (c == '-' || c == '+')))
            .unwrap_or(rest.len());
        let p = &rest[..end];
        if !xr(p) {
            return None;
        }
        *slot = Some(p);
        rest = &rest[end..];
        if i < 2 {
            match rest.strip_prefix('.') {
                Some(r) => rest = r,
                None if rest.is_empty() => break,
                None => return None,
            }
        }
    }
    let (mut pre, mut build) = (None, None);
    if parts[2].is_some() {
        let (q, b) = match rest.split_once('+') {
            Some((q, b)) => (q, Some(b)),
            None => (rest, None),
        };
        if let Some(p) = q.strip_prefix('-') {
            if !valid_parts(p) {
                return None;
            }
            pre = Some(p);
        } else if !q.is_empty() {
            return None;
        }
        if let Some(b) = b {
            if !valid_parts(b) {
                return None;
            }
            build = Some(b);
        }
    } else if !rest.is_empty() {
        return None;
    }
    Some(Partial { parts, pre, build })
}

fn digit(p: Option<&str>) -> Option<u128> {
    match p {
        None | Some("x" | "X" | "*") => None,
        Some(n) => n.parse().ok(),
    }
}

fn full_version(major: u128, minor: u128, patch: u128, m: &Partial) -> Result<Version, String> {
    Ok(Version {
        major,
        minor,
        patch,
        pre: parse_prerelease(m.pre)?,
        build: m.build.map(|b| b.split('.').map(str::to_string).collect()),
    })
}

fn partial_or_err(expr: &str) -> Result<Partial<'_>, String> {
    parse_partial(expr).ok_or_else(|| unparsable(expr))
}

/// `allow_patch_updates` (`~`, and `=`/bare with `tilde_or_caret` false).
fn allow_patch_updates(m: &Partial, tilde_or_caret: bool) -> Result<Range, String> {
    let Some(major) = digit(m.parts[0]) else {
        return Ok(Range::All);
    };
    let Some(minor) = digit(m.parts[1]) else {
        return Ok(Range::min_max(
            Range::GtEq(Version::new(major, 0, 0)),
            Range::Lt(Version::new(major.saturating_add(1), 0, 0)),
        ));
    };
    let Some(patch) = digit(m.parts[2]) else {
        return Ok(Range::min_max(
            Range::GtEq(Version::new(major, minor, 0)),
            Range::Lt(Version::new(major, minor.saturating_add(1), 0)),
        ));
    };
    let v = full_version(major, minor, patch, m)?;
    if !tilde_or_caret {
        return Ok(Range::Eq(v));
    }
    Ok(Range::min_max(
        Range::GtEq(v),
        Range::Lt(Version::new(major, minor.saturating_add(1), 0)),
    ))
}

fn allow_minor_updates(major: Option<u128>, m: &Partial) -> Result<Range, String> {
    let Some(major) = major else {
        return Err(NO_SINGLETON.into());
    };
    let upper = Range::Lt(Version::new(major.saturating_add(1), 0, 0));
    Ok(match digit(m.parts[1]) {
        None => Range::min_max(Range::GtEq(Version::new(major, 0, 0)), upper),
        Some(minor) => match digit(m.parts[2]) {
            None => Range::min_max(Range::GtEq(Version::new(major, minor, 0)), upper),
            Some(patch) => {
                Range::min_max(Range::GtEq(full_version(major, minor, patch, m)?), upper)
            }
        },
    })
}

/// `parse_version`: x parts read as 0.
fn parse_version(expr: &str) -> Result<Version, String> {
    let m = partial_or_err(expr)?;
    full_version(
        digit(m.parts[0]).unwrap_or(0),
        digit(m.parts[1]).unwrap_or(0),
        digit(m.parts[2]).unwrap_or(0),
        &m,
    )
}

fn parse_simple(op: &str, operand: &str) -> Result<Range, String> {
    let m = partial_or_err(operand)?;
    let major = digit(m.parts[0]);
    match op {
        "~" | "~>" | "~=" => allow_patch_updates(&m, true),
        "^" => {
            if major == Some(0) {
                allow_patch_updates(&m, true)
            } else {
                allow_minor_updates(major, &m)
            }
        }
        ">" => {
            let Some(major) = major else {
                return Ok(Range::Nothing);
            };
            let Some(minor) = digit(m.parts[1]) else {
                return Ok(Range::GtEq(Version::new(major.saturating_add(1), 0, 0)));
            };
            let Some(patch) = digit(m.parts[2]) else {
                return Ok(Range::GtEq(Version::new(major, minor.saturating_add(1), 0)));
            };
            Ok(Range::Gt(full_version(major, minor, patch, &m)?))
        }
        ">=" => Ok(Range::GtEq(parse_version(operand)?)),
        "<" => Ok(Range::Lt(parse_version(operand)?)),
        "<=" => {
            let Some(major) = major else {
                return Err(NO_SINGLETON.into());
            };
            let Some(minor) = digit(m.parts[1]) else {
                return Ok(Range::Lt(Version::new(major.saturating_add(1), 0, 0)));
            };
            let Some(patch) = digit(m.parts[2]) else {
                return Ok(Range::Lt(Version::new(major, minor.saturating_add(1), 0)));
            };
            Ok(Range::LtEq(full_version(major, minor, patch, &m)?))
        }
        _ => allow_patch_updates(&m, false),
    }
}

/// `SIMPLE_EXPR`: `\A([<>=~^]|<=|>=|~>|~=)?(PARTIAL)\z`, the operator alternatives in order.
fn split_simple(s: &str) -> Option<(&str, &str)> {
    for op in ["<", ">", "=", "~", "^", "<=", ">=", "~>", "~="] {
        if let Some(rest) = s.strip_prefix(op) {
            if parse_partial(rest).is_some() {
                return Some((op, rest));
            }
        }
    }
    parse_partial(s).map(|_| ("", s))
}

/// `gsub(/([><=~^])(?:\s+|\s*v)/, '\1')`.
fn squeeze_operators(s: &str) -> String {
    let chars: Vec<char> = s.chars().collect();
    let mut out = String::with_capacity(s.len());
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        out.push(c);
        i += 1;
        if !"><=~^".contains(c) {
            continue;
        }
        let mut j = i;
        while j < chars.len() && chars[j].is_ascii_whitespace() {
            j += 1;
        }
        if j > i {
            i = j;
        } else if chars.get(i) == Some(&'v') {
            i += 1;
        }
    }
    out
}

/// Ruby `str.split(regex)`: trailing empty fields dropped.
fn ruby_split(parts: Vec<&str>) -> Vec<&str> {
    let mut parts = parts;
    while parts.last() == Some(&"") {
        parts.pop();
    }
    parts
}

/// `split(/\s*\|\|\s*/)`.
fn split_or(s: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = s;
    loop {
        match rest.find("||") {
            Some(k) => {
                let before = rest[..k].trim_end_matches(|c: char| c.is_ascii_whitespace());
                out.push(before);
                rest = rest[k + 2..].trim_start_matches(|c: char| c.is_ascii_whitespace());
            }
            None => {
                out.push(rest);
                break;
            }
        }
    }
    ruby_split(out)
}

/// `split(/\s+/)`: a leading separator gives an empty first field.
fn split_ws(s: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i].is_ascii_whitespace() {
            out.push(&s[start..i]);
            while i < b.len() && b[i].is_ascii_whitespace() {
                i += 1;
            }
            start = i;
        } else {
            i += 1;
        }
    }
    out.push(&s[start..]);
    ruby_split(out)
}

/// `HYPHEN_EXPR`: `\A(PARTIAL)\s+-\s+(PARTIAL)\z`.
fn split_hyphen(s: &str) -> Option<(&str, &str)> {
    let ws = |c: char| c.is_ascii_whitespace();
    if s.starts_with(ws) || s.ends_with(ws) {
        return None;
    }
    match split_ws(s).as_slice() {
        [a, "-", b] if parse_partial(a).is_some() && parse_partial(b).is_some() => Some((a, b)),
        _ => None,
    }
}

impl VersionRange {
    /// `VersionRange.parse`.
    pub fn parse(range_string: &str) -> Result<VersionRange, String> {
        let set = squeeze_operators(range_string);
        let parts = split_or(&set);
        if parts.is_empty() {
            return Ok(VersionRange {
                ranges: vec![Range::All],
                string: "*".into(),
            });
        }
        let mut ranges: Vec<Range> = Vec::new();
        for range in parts {
            let r = if let Some((a, b)) = split_hyphen(range) {
                Range::create(
                    Range::GtEq(parse_version(a)?),
                    Range::LtEq(parse_version(b)?),
                )
            } else {
                let mut simples = Vec::new();
                for simple in split_ws(range) {
                    let (op, operand) =
                        split_simple(simple).ok_or_else(|| unparsable(range_string))?;
                    simples.push(parse_simple(op, operand)?);
                }
                let mut it = simples.into_iter();
                match it.next() {
                    None => None,
                    Some(first) => {
                        let mut acc = Some(first);
                        for r in it {
                            acc = match acc {
                                Some(a) => a.intersection(&r),
                                // nil.intersection: Ruby's NoMethodError.
                                None => {
                                    return Err(
                                        "undefined method `intersection' for nil".to_string()
                                    )
                                }
                            };
                        }
                        acc
                    }
                }
            };
            // `.uniq` (by eql?), then `compact!` in new().
            if let Some(r) = r {
                if !ranges.iter().any(|x| x.eql(&r)) {
                    ranges.push(r);
                }
            }
        }
        VersionRange::from_ranges(ranges, Some(range_string.to_string()))
    }

    /// `VersionRange.new(ranges, string)`: merges overlapping and adjacent ranges.
    fn from_ranges(mut ranges: Vec<Range>, string: Option<String>) -> Result<VersionRange, String> {
        let mut merge_happened = true;
        while ranges.len() > 1 && merge_happened {
            merge_happened = false;
            let mut result = Vec::new();
            while let Some(x) = ranges.pop() {
                let mut unmerged = Vec::new();
                let mut memo = x;
                for y in ranges.drain(..) {
                    match memo.merge(&y)? {
                        Some(m) => {
                            merge_happened = true;
                            memo = m;
                        }
                        None => unmerged.push(y),
                    }
                }
                result.push(memo);
                ranges = unmerged;
            }
            result.reverse();
            ranges = result;
        }
        if ranges.is_empty() {
            ranges.push(Range::Nothing);
        }
        let string = string.unwrap_or_else(|| {
            ranges
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(" || ")
        });
        Ok(VersionRange { ranges, string })
    }

    /// `VersionRange.new(min, max, exclude_end)` (its string reads `max` first, as Ruby's does).
    fn between(min: Version, max: Version, exclude_end: bool) -> VersionRange {
        let (ub, string) = if exclude_end {
            (Range::Lt(max.clone()), format!(">={max} <{min}"))
        } else {
            (Range::LtEq(max.clone()), format!("{max} - {min}"))
        };
        let ranges: Vec<Range> = Range::create(Range::GtEq(min), ub).into_iter().collect();
        VersionRange {
            ranges: if ranges.is_empty() {
                vec![Range::Nothing]
            } else {
                ranges
            },
            string,
        }
    }

    /// The range Puppet infers for a version: `VersionRange.new(v, v)`.
    pub fn exact(v: &Version) -> VersionRange {
        VersionRange::between(v.clone(), v.clone(), false)
    }

    fn single(&self) -> Option<&Range> {
        match self.ranges.as_slice() {
            [r] => Some(r),
            _ => None,
        }
    }

    /// `include?`: in a range, and a pre-release only where a bound names its numbers.
    pub fn include(&self, v: &Version) -> bool {
        self.ranges
            .iter()
            .any(|r| r.include(v) && (v.stable() || r.test_prerelease(v)))
    }

    /// `PSemVerRangeType.covered_by?(self, b)` (false where Ruby would fail on a nil bound).
    pub fn covered_by(&self, b: &VersionRange) -> bool {
        let (Some(a), Some(b)) = (self.single(), b.single()) else {
            return false;
        };
        b.begin().compare(&a.begin()) != Ordering::Greater
            && (b.end().compare(&a.end()) == Ordering::Greater
                || b.end().eql(&a.end()) && (!b.exclude_end() || a.exclude_end()))
    }

    /// `PSemVerRangeType.merge(a, b)`.
    fn merge_pair(a: &VersionRange, b: &VersionRange) -> Result<Option<VersionRange>, String> {
        let (Some(ra), Some(rb)) = (a.single(), b.single()) else {
            return Err("undefined method `>=' for nil".into());
        };
        if a.include(&rb.begin()) || b.include(&ra.begin()) {
            let max = if ra.end().compare(&rb.end()) == Ordering::Less {
                rb.end()
            } else {
                ra.end()
            };
            let mut exclude_end = false;
            if ra.exclude_end() {
                exclude_end = max.eql(&ra.end())
                    && (max.compare(&rb.end()) == Ordering::Greater || rb.exclude_end());
            } else if rb.exclude_end() {
                exclude_end = max.eql(&rb.end())
                    && (max.compare(&ra.end()) == Ordering::Greater || ra.exclude_end());
            }
            let min = if rb.begin().compare(&ra.begin()) == Ordering::Less {
                rb.begin()
            } else {
                ra.begin()
            };
            Ok(Some(VersionRange::between(min, max, exclude_end)))
        } else if ra.exclude_end() && ra.end().eql(&rb.begin()) {
            Ok(Some(VersionRange::between(
                ra.begin(),
                rb.end(),
                rb.exclude_end(),
            )))
        } else if rb.exclude_end() && rb.end().eql(&ra.begin()) {
            Ok(Some(VersionRange::between(
                rb.begin(),
                ra.end(),
                ra.exclude_end(),
            )))
        } else {
            Ok(None)
        }
    }

    /// `PSemVerType#merge_ranges` for a type with several ranges.
    pub fn merge_all(mut ranges: Vec<VersionRange>) -> Result<Vec<VersionRange>, String> {
        if ranges.len() < 2 {
            return Ok(ranges);
        }
        let mut result = Vec::new();
        while let Some(x) = ranges.pop() {
            let mut unmerged = Vec::new();
            let mut memo = x;
            for y in ranges.drain(..) {
                match VersionRange::merge_pair(&memo, &y)? {
                    Some(m) => memo = m,
                    None => unmerged.push(y),
                }
            }
            result.push(memo);
            ranges = unmerged;
        }
        result.reverse();
        Ok(result)
    }

    /// The `SemanticPuppet::VersionRange` object Psych dumps (`to_s` is its string).
    pub fn to_value(&self) -> Value {
        Value::Object(Box::new(RubyObject {
            type_name: "SemVerRange",
            class: "SemanticPuppet::VersionRange",
            fields: vec![
                (
                    "ranges".into(),
                    Value::Array(self.ranges.iter().map(Range::to_value).collect()),
                ),
                ("string".into(), Value::String(self.string.clone())),
            ],
            to_s: self.string.clone(),
            scalar: None,
        }))
    }
}

impl std::fmt::Display for VersionRange {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.string)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inspect(s: &str) -> String {
        let r = VersionRange::parse(s).unwrap();
        r.ranges
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(" || ")
    }

    // Each expectation is what semantic_puppet 1.1.0 (Puppet 8.10's) answers.
    #[test]
    fn parses_like_semantic_puppet() {
        assert_eq!(inspect("1.x || 2.x"), ">=1.0.0 <3.0.0");
        assert_eq!(inspect(">2 <1"), "<0.0.0");
        assert_eq!(inspect(""), "*");
        assert_eq!(inspect("|| 1.0.0"), "1.0.0");
        assert_eq!(inspect("1.0.0 ||"), "1.0.0");
        assert_eq!(inspect("~> 1.2"), ">=1.2.0 <1.3.0");
        assert_eq!(inspect("1.2.3 - 2"), ">=1.2.3 <=2.0.0");
        assert_eq!(inspect("=1.2"), ">=1.2.0 <1.3.0");
        assert_eq!(inspect("*"), "*");
        assert_eq!(inspect("x"), "*");
        assert_eq!(inspect("<1.0.0 || >=1.0.0"), "<=Infinity.0.0");
        assert_eq!(inspect("1.0.0 || 1.0.1"), ">=1.0.0 <=1.0.1");
        assert_eq!(inspect(">1.2.3-rc.1"), ">1.2.3-rc.1");
        assert_eq!(inspect("1.0.0+b || 1.0.0"), "1.0.0+b || 1.0.0");
        for bad in [" 1.0.0", ">= v1.2.3", "bogus"] {
            assert_eq!(
                VersionRange::parse(bad).unwrap_err(),
                format!("Unparsable version range: \"{bad}\"")
            );
        }
        assert!(VersionRange::parse("^x").unwrap_err().contains("SINGLETON"));
        assert!(VersionRange::parse("<=x")
            .unwrap_err()
            .contains("SINGLETON"));
        assert!(VersionRange::parse(">=1.0.0 || >=2.0.0")
            .unwrap_err()
            .contains("`exclude_end' for an instance of SemanticPuppet::VersionRange::GtEqRange"));
    }

    #[test]
    fn pre_releases_only_where_a_bound_names_them() {
        let v = |s: &str| Version::parse(s).unwrap();
        let r = VersionRange::parse(">=1.0.0").unwrap();
        assert!(r.include(&v("1.2.3")));
        assert!(!r.include(&v("2.0.0-rc.1")));
        let r = VersionRange::parse(">=2.0.0-rc.1").unwrap();
        assert!(r.include(&v("2.0.0-rc.2")));
        assert!(!r.include(&v("2.1.0-rc.1")));
        // covered_by: the inferred exact range of a pre-release is covered.
        let outer = VersionRange::parse(">=1.0.0").unwrap();
        assert!(VersionRange::exact(&v("2.0.0-rc.1")).covered_by(&outer));
        assert!(!VersionRange::exact(&v("0.9.0")).covered_by(&outer));
        assert_eq!(
            VersionRange::exact(&v("1.2.3")).to_string(),
            "1.2.3 - 1.2.3"
        );
    }
}
