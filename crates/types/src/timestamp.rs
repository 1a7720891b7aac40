//! Puppet's `Timestamp.parse(string, format, timezone)` (puppet/pops/time/timestamp.rb,
//! Puppet 8.10): each format through Ruby's `DateTime._strptime` ([`super::strptime`]), then
//! Ruby's `Time.utc(year, mon, mday, hour, min, sec, usec)` and the zone's offset.
//!
//! Our own code, as Puppet's exact rules decide the answer: which of several formats wins (the
//! first without leftover text, and without a zone when a timezone argument is given), its
//! messages, `Time.utc`'s defaults and roll-overs (February 30 is March 2, hour 24 the next
//! day), and `timezone` read as `%z` reads it (`current` is this machine's offset). Also
//! `new_timestamp`'s dispatch (seconds, string with format and timezone, hash), with Puppet's
//! listing of rejected signatures.

use super::strptime::{strptime, Parsed};
use hiera_value::value::Value;

/// Puppet's default formats, with and without a zone.
const DEFAULT_FORMATS_WO_TZ: [&str; 5] = ["%FT%T.%N", "%FT%T", "%F %T.%N", "%F %T", "%F"];
const DEFAULT_FORMATS: [&str; 10] = [
    "%FT%T.%N %Z",
    "%FT%T %Z",
    "%F %T.%N %Z",
    "%F %T %Z",
    "%F %Z",
    "%FT%T.%N",
    "%FT%T",
    "%F %T.%N",
    "%F %T",
    "%F",
];

/// The `format` argument: one format, a list of them, or Puppet's defaults.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Formats<'a> {
    Default,
    One(&'a str),
    Many(&'a [String]),
}

const NANOS: i128 = 1_000_000_000;

/// `Formats = Variant[String[2], Array[String[2], 1]]`, as Puppet prints it.
const FORMATS_TYPE: &str = "Formats = Variant[String[2], Array[String[2], 1]]";

/// Puppet's `new_timestamp` function (PTimestampType.new_function) for `new(Timestamp,
/// value, format?, timezone?)`: its dispatches in order — seconds (Integer or Float), a
/// string with an optional format and timezone, a `{string, format, timezone}` hash — and,
/// when none takes the arguments, Puppet's message listing each with why it was rejected.
/// `type_name` names a value's type as mismatch messages do. Nanoseconds since the epoch.
pub(crate) fn new_timestamp(
    value: &Value,
    format: Option<&Value>,
    timezone: Option<&Value>,
    type_name: fn(&Value) -> String,
) -> Result<i128, String> {
    let args: Vec<&Value> = [Some(value), format, timezone]
        .into_iter()
        .flatten()
        .collect();
    let n = args.len();
    let string1 = |v: &Value| matches!(v, Value::String(s) if !s.is_empty());
    let formats = |v: &Value| match v {
        Value::String(s) => s.chars().count() >= 2,
        Value::Array(a) => {
            !a.is_empty()
                && a.iter()
                    .all(|f| matches!(f, Value::String(s) if s.chars().count() >= 2))
        }
        _ => false,
    };
    // from_seconds: `(seconds * NSECS_PER_SEC).to_i`, truncated toward zero.
    match (n, value) {
        (1, Value::Int(i)) => return Ok(i128::from(*i) * NANOS),
        (1, Value::Float(f)) => return Ok((f * 1e9) as i128),
        _ => {}
    }
    // from_string.
    let string_rejection = if n > 3 {
        Some(format!("expects between 1 and 3 arguments, got {n}"))
    } else if !string1(value) {
        Some(format!(
            "parameter 'string' expects a String[1] value, got {}",
            type_name(value)
        ))
    } else if let Some(f) = format.filter(|f| !formats(f)) {
        Some(format!(
            "parameter 'format' expects a {FORMATS_TYPE} value, got {}",
            type_name(f)
        ))
    } else {
        timezone.filter(|t| !string1(t)).map(|t| {
            format!(
                "parameter 'timezone' expects a String[1] value, got {}",
                type_name(t)
            )
        })
    };
    if string_rejection.is_none() {
        return parse_args(value.as_str().unwrap_or_default(), format, timezone);
    }
    // from_string_hash: Timestamp.from_hash.
    let hash_rejection = match (n, value) {
        (1, Value::Hash(h)) => {
            let get = |k: &str| value.get(k);
            let unknown = h
                .keys()
                .find(|k| !matches!(k.as_str(), Some("string" | "format" | "timezone")));
            let problem = if let Some(k) = unknown {
                Some(format!(
                    "unrecognized key {}",
                    super::puppet_quote(&hiera_value::ruby::to_s(k))
                ))
            } else {
                match (get("string"), get("format"), get("timezone")) {
                    (None, _, _) => Some("expects a value for key 'string'".to_string()),
                    (Some(s), _, _) if !string1(s) => Some(format!(
                        "entry 'string' expects a String[1] value, got {}",
                        type_name(s)
                    )),
                    (_, Some(f), _) if !formats(f) => Some(format!(
                        "entry 'format' expects a {FORMATS_TYPE} value, got {}",
                        type_name(f)
                    )),
                    (_, _, Some(t)) if !string1(t) => Some(format!(
                        "entry 'timezone' expects a String[1] value, got {}",
                        type_name(t)
                    )),
                    _ => None,
                }
            };
            let Some(problem) = problem else {
                let s = get("string").and_then(Value::as_str).unwrap_or_default();
                return parse_args(s, get("format"), get("timezone"));
            };
            format!("parameter 'hash_arg' {problem}")
        }
        (1, v) => format!(
            "parameter 'hash_arg' expects a Struct value, got {}",
            type_name(v)
        ),
        _ => format!("expects 1 argument, got {n}"),
    };
    let seconds_rejection = if n == 1 {
        format!(
            "parameter 'seconds' expects a value of type Integer or Float, got {}",
            type_name(value)
        )
    } else {
        format!("expects 1 argument, got {n}")
    };
    Err(format!(
        "The function 'new_timestamp' was called with arguments it does not accept. It expects one of:\n  ()\n    rejected: expects no arguments, got {n}\n  (Variant[Integer, Float] seconds)\n    rejected: {seconds_rejection}\n  (String[1] string, {FORMATS_TYPE} format?, String[1] timezone?)\n    rejected: {}\n  (Struct[{{'string' => String[1], Optional['format'] => Formats, Optional['timezone'] => String[1]}}] hash_arg)\n    rejected: {hash_rejection}",
        string_rejection.unwrap_or_default()
    ))
}

/// `from_string(string, format, timezone)` with arguments already checked: a format string
/// or list, or Puppet's defaults.
fn parse_args(s: &str, format: Option<&Value>, timezone: Option<&Value>) -> Result<i128, String> {
    let list: Vec<String>;
    let f = match format {
        Some(Value::String(f)) => Formats::One(f),
        Some(Value::Array(a)) => {
            list = a.iter().map(hiera_value::ruby::to_s).collect();
            Formats::Many(&list)
        }
        _ => Formats::Default,
    };
    parse(s, f, timezone.and_then(Value::as_str))
}

/// Nanoseconds since the epoch of `s`, or Puppet's error message.
pub fn parse(s: &str, format: Formats<'_>, timezone: Option<&str>) -> Result<i128, String> {
    let mut has_timezone = timezone.is_some_and(|t| !t.is_empty());
    let parsed = match format {
        Formats::Default if has_timezone => first_match(s, &DEFAULT_FORMATS_WO_TZ, true)?,
        Formats::Default => first_match(s, &DEFAULT_FORMATS, false)?,
        Formats::Many(list) => first_match(s, list, has_timezone)?,
        Formats::One(f) => {
            let p = strptime(s, f)
                .filter(|p| p.leftover.is_none())
                .ok_or_else(|| format!("Unable to parse '{s}' using format '{f}'"))?;
            if has_timezone && p.zone.is_some() {
                return Err("Using a Timezone designator in format specification is mutually exclusive to providing an explicit timezone argument".into());
            }
            p
        }
    };
    let mut zone = timezone.map(str::to_string);
    if !has_timezone {
        zone = parsed.zone.clone();
        has_timezone = zone.is_some();
    }
    let mut t = time_utc(&parsed)?;
    if has_timezone {
        t -= utc_offset(zone.as_deref().unwrap_or_default())?;
    }
    Ok(t)
}

/// The first format of `list` that reads all of `s` (and no zone when a timezone is given).
fn first_match<F: AsRef<str>>(s: &str, list: &[F], has_timezone: bool) -> Result<Parsed, String> {
    list.iter()
        .filter_map(|f| strptime(s, f.as_ref()))
        .find(|p| p.leftover.is_none() && !(has_timezone && p.zone.is_some()))
        .ok_or_else(|| {
            let names: Vec<&str> = list.iter().map(AsRef::as_ref).collect();
            format!(
                "Unable to parse '{s}' using any of the formats {}",
                names.join(", ")
            )
        })
}

/// `Time.utc(year, mon, mday, hour, min, sec, sec_fraction * 1_000_000)` in nanoseconds.
fn time_utc(p: &Parsed) -> Result<i128, String> {
    let year = p
        .year
        .ok_or_else(|| "no implicit conversion of nil into Integer".to_string())?;
    let (mon, mday) = (p.mon.unwrap_or(1), p.mday.unwrap_or(1));
    let (hour, min, sec) = (p.hour.unwrap_or(0), p.min.unwrap_or(0), p.sec.unwrap_or(0));
    if hour == 24 && (min > 0 || sec > 0) {
        return Err("argument out of range".into());
    }
    let frac = match p.sec_fraction {
        Some(n) if n < 0 => return Err("subsecx out of range".into()),
        Some(n) => n,
        None => 0,
    };
    // Ruby takes any year; beyond a billion years no date arithmetic here is meaningful, and
    // it must not overflow.
    if year.abs() > 1_000_000_000 {
        return Err("the year is out of the range hiera-lookup supports (a billion years)".into());
    }
    let year = year as i64;
    // Days beyond the month's end roll over (timegm normalizes them).
    let days = i128::from(days_from_civil(year, mon as i64, 1)) + mday - 1;
    Ok((days * 86400 + hour * 3600 + min * 60 + sec) * NANOS + frac)
}

/// `Timestamp.utc_offset(timezone)` in nanoseconds.
fn utc_offset(timezone: &str) -> Result<i128, String> {
    if timezone.eq_ignore_ascii_case("current") {
        return Ok(local_offset());
    }
    strptime(timezone, "%z")
        .and_then(|p| p.offset)
        .ok_or_else(|| format!("Illegal timezone '{timezone}'"))
}

/// `Time.now.utc_offset`: this machine's offset from UTC now, in nanoseconds.
fn local_offset() -> i128 {
    // SAFETY: time(NULL) and localtime_r with valid pointers to owned values.
    let gmtoff = unsafe {
        let now = libc::time(std::ptr::null_mut());
        let mut tm: libc::tm = std::mem::zeroed();
        if libc::localtime_r(&now, &mut tm).is_null() {
            0
        } else {
            tm.tm_gmtoff
        }
    };
    i128::from(gmtoff) * NANOS
}

/// Days since 1970-01-01 of a proleptic Gregorian date.
pub(super) fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = if y >= 0 { y } else { y - 399 } / 400;
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146097 + doe - 719468
}

// Timespans as Puppet reads them from strings, and the time types' range checks.

/// Timespan's default parse formats, tried in order.
pub(crate) const TIMESPAN_FORMATS: [&str; 8] = [
    "%D-%H:%M:%S.%-N",
    "%H:%M:%S.%-N",
    "%M:%S.%-N",
    "%S.%-N",
    "%D-%H:%M:%S",
    "%H:%M:%S",
    "%D-%H:%M",
    "%S",
];

/// One piece of a Timespan format (`Puppet::Pops::Time::Timespan::Format`).
pub(crate) enum SpanSeg {
    Literal(String),
    /// Nanoseconds per unit (0 for a fraction), pad char (None for `-`), width, default width,
    /// and whether it holds the total (the highest unit of the format).
    Value {
        unit: i128,
        fraction: bool,
        pad: Option<char>,
        width: Option<usize>,
        default_width: usize,
        total: bool,
    },
}

/// `FormatParser#internal_parse`; the error is Ruby's ArgumentError text.
pub(crate) fn timespan_format(fmt: &str) -> Result<Vec<SpanSeg>, String> {
    let bad = |start: usize, pos: usize| {
        let expr: String = fmt.chars().skip(start).take(pos - start).collect();
        format!("Bad format specifier '{expr}' in '{fmt}', at position {pos}")
    };
    let mut segs: Vec<SpanSeg> = Vec::new();
    // (unit order: 0 ns, 1 ms, 2 s, 3 min, 4 h, 5 d)
    let mut highest: i32 = -1;
    let mut orders: Vec<i32> = Vec::new();
    let (mut in_spec, mut pad_state, mut pad, mut width) = (false, false, Some('0'), None::<usize>);
    let mut fstart = 0;
    let mut pos = 0;
    for (i, c) in fmt.chars().enumerate() {
        pos = i;
        if !in_spec {
            if c == '%' {
                (in_spec, pad_state, pad, width, fstart) = (true, true, Some('0'), None, i);
            } else if let Some(SpanSeg::Literal(l)) = segs.last_mut() {
                l.push(c);
            } else {
                segs.push(SpanSeg::Literal(c.to_string()));
                orders.push(-1);
            }
            continue;
        }
        let spec = match c {
            '%' => {
                if let Some(SpanSeg::Literal(l)) = segs.last_mut() {
                    l.push('%');
                } else {
                    segs.push(SpanSeg::Literal("%".into()));
                    orders.push(-1);
                }
                in_spec = false;
                continue;
            }
            '-' | '_' if pad_state => {
                pad = if c == '-' { None } else { Some(' ') };
                pad_state = false;
                continue;
            }
            'D' => (5, 86_400_000_000_000i128, 1, false),
            'H' => (4, 3_600_000_000_000, 2, false),
            'M' => (3, 60_000_000_000, 2, false),
            'S' => (2, 1_000_000_000, 2, false),
            'L' => (1, 0, 3, true),
            'N' => (0, 0, 9, true),
            d if d.is_ascii_digit() => {
                let n = d as usize - '0' as usize;
                if pad_state && n == 0 {
                    pad = Some('0');
                } else {
                    width = Some(width.unwrap_or(0) * 10 + n);
                }
                pad_state = false;
                continue;
            }
            _ => return Err(bad(fstart, i)),
        };
        let (order, unit, default_width, fraction) = spec;
        highest = highest.max(order);
        segs.push(SpanSeg::Value {
            unit,
            fraction,
            pad,
            width,
            default_width,
            total: false,
        });
        orders.push(order);
        in_spec = false;
    }
    if in_spec {
        return Err(bad(fstart, pos + 1));
    }
    if highest >= 0 {
        if let Some(k) = orders.iter().position(|&o| o == highest) {
            if let Some(SpanSeg::Value { total, .. }) = segs.get_mut(k) {
                *total = true;
            }
        }
    }
    Ok(segs)
}

/// `Format#parse`: nanoseconds, or `None` where Ruby raises.
pub(crate) fn parse_timespan_with(s: &str, segs: &[SpanSeg]) -> Option<i128> {
    let mut re = String::from(r"\A-?");
    for seg in segs {
        match seg {
            SpanSeg::Literal(l) => re.push_str(&format!("({})", regex::escape(l))),
            SpanSeg::Value {
                pad,
                width,
                default_width,
                total,
                ..
            } => re.push_str(&match (width, pad) {
                (None, Some(' ')) if *total => r"\s*([0-9]+)".to_string(),
                (None, Some(' ')) => format!(r"([0-9\s]{{1,{default_width}}})"),
                (None, _) if *total => "([0-9]+)".to_string(),
                (None, _) => format!("([0-9]{{1,{default_width}}})"),
                (Some(w), None) => format!("([0-9]{{1,{w}}})"),
                (Some(w), Some('0')) => format!("([0-9]{{{w}}})"),
                (Some(w), Some(_)) => format!(r"([0-9\s]{{{w}}})"),
            }),
        }
    }
    re.push_str(r"\z");
    let caps = regex::Regex::new(&re).ok()?.captures(s)?;
    let mut nanos: i128 = 0;
    for (k, seg) in segs.iter().enumerate() {
        let SpanSeg::Value {
            unit,
            fraction,
            total,
            ..
        } = seg
        else {
            continue;
        };
        let g = caps.get(k + 1)?.as_str().trim_start();
        if g.is_empty() || !g.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        let n: i128 = g.parse().ok()?;
        nanos += if *fraction {
            if *total {
                return None;
            }
            let p = 9 - g.len() as i32;
            if p <= 0 {
                n
            } else {
                n * 10i128.pow(p as u32)
            }
        } else {
            n.checked_mul(*unit)?
        };
    }
    Some(if s.starts_with('-') { -nanos } else { nanos })
}

/// Is `v` a Timespan (`span`) or Timestamp within the bounds a `Timespan[...]`/`Timestamp[...]`
/// type keeps (their quoted `to_s`, None for unbounded)?
pub(crate) fn time_within(v: &Value, span: bool, from: Option<&str>, to: Option<&str>) -> bool {
    let kind = if span { "Timespan" } else { "Timestamp" };
    let Value::Object(o) = v else { return false };
    if o.type_name != kind {
        return false;
    }
    let Some(n) = time_nsecs(v) else { return false };
    from.is_none_or(|f| time_bound(span, f).is_some_and(|f| n >= f))
        && to.is_none_or(|t| time_bound(span, t).is_some_and(|t| n <= t))
}

/// PAbstractTimeDataType#_assignable?: `a` (from, to) covers `b`.
pub(crate) fn time_range_covers(
    span: bool,
    a: [&Option<String>; 2],
    b: [&Option<String>; 2],
) -> bool {
    let n = |x: &Option<String>| x.as_deref().and_then(|s| time_bound(span, s));
    let (b_from, b_to) = (n(b[0]), n(b[1]));
    let from_ok = match (n(a[0]), b_from) {
        (None, _) => true,
        (Some(_), None) => false,
        (Some(x), Some(y)) => x <= y,
    };
    let to_ok = match (n(a[1]), b_to) {
        (None, _) => true,
        (Some(_), None) => false,
        (Some(x), Some(y)) => x >= y,
    };
    from_ok && to_ok
}

/// The nanoseconds of a quoted `Timespan`/`Timestamp` bound, read as `new` reads a string
/// without a format (Timespan's default formats, Timestamp's).
fn time_bound(span: bool, b: &str) -> Option<i128> {
    let text = b.trim_matches('\'');
    if span {
        TIMESPAN_FORMATS.iter().find_map(|f| {
            let segs = timespan_format(f).ok()?;
            parse_timespan_with(text, &segs)
        })
    } else {
        new_timestamp(&Value::str(text), None, None, |_| String::new()).ok()
    }
}

/// The `@nsecs` of a Timestamp or Timespan object.
fn time_nsecs(v: &Value) -> Option<i128> {
    let Value::Object(o) = v else { return None };
    o.fields
        .iter()
        .find(|(k, _)| k == "nsecs")
        .and_then(|(_, n)| match n {
            Value::Int(i) => Some(i128::from(*i)),
            Value::BigInt(d) => d.parse().ok(),
            Value::Float(f) => Some(*f as i128),
            _ => None,
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str, f: Formats<'_>, tz: Option<&str>) -> String {
        match parse(s, f, tz) {
            Ok(n) => n.to_string(),
            Err(e) => e,
        }
    }

    /// Each recorded from `Puppet::Pops::Time::Timestamp.parse` in Puppet 8.10: nsecs or the
    /// error message.
    #[test]
    fn parses_as_puppet() {
        use Formats::*;
        let list = |l: &[&str]| l.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let ymd = list(&["%Y-%m-%d", "%Y"]);
        let one = list(&["%Y-%m-%d"]);
        let cases: Vec<(&str, Formats, Option<&str>, &str)> = vec![
            ("31/12/2021", One("%d/%m/%Y"), None, "1640908800000000000"),
            ("2021", Many(&ymd), None, "1609459200000000000"),
            ("2021-06-01 12:00", One("%Y-%m-%d %H:%M"), Some("Europe/Stockholm"), "Illegal timezone 'Europe/Stockholm'"),
            ("2021-06-01 12:00", One("%Y-%m-%d %H:%M"), Some("+02:00"), "1622541600000000000"),
            ("2021-06-01 12:00", One("%Y-%m-%d %H:%M"), Some("CET"), "1622545200000000000"),
            ("2021-06-01 12:00 +0200", One("%Y-%m-%d %H:%M %z"), Some("UTC"), "Using a Timezone designator in format specification is mutually exclusive to providing an explicit timezone argument"),
            ("2021-06-01 12:00 +0200", One("%Y-%m-%d %H:%M %z"), None, "1622541600000000000"),
            ("12:00", One("%H:%M"), None, "no implicit conversion of nil into Integer"),
            ("Sat, 05 Jun 2021 10:11:12 GMT", One("%a, %d %b %Y %H:%M:%S %Z"), None, "1622887872000000000"),
            ("2021-02-30", One("%Y-%m-%d"), None, "1614643200000000000"),
            ("2021-02-32", One("%Y-%m-%d"), None, "Unable to parse '2021-02-32' using format '%Y-%m-%d'"),
            ("2021-01-01 24:00:00", One("%F %T"), None, "1609545600000000000"),
            ("2021-01-01 23:59:60", One("%F %T"), None, "1609545600000000000"),
            ("69-1-5", One("%y-%m-%d"), None, "-31190400000000000"),
            ("2021-01-05 01:02:03.123456789123", One("%F %T.%N"), None, "1609808523123456789"),
            ("2021-01-05 3pm", One("%F %I%p"), None, "1609858800000000000"),
            ("1609459200", One("%s"), None, "no implicit conversion of nil into Integer"),
            ("2021-01-05 junk", Many(&one), None, "Unable to parse '2021-01-05 junk' using any of the formats %Y-%m-%d"),
            ("-2021-01-05", One("%Y-%m-%d"), None, "-125943465600000000000"),
            ("Tue Jan  5 10:11:12 2021", One("%c"), None, "1609841472000000000"),
            ("2021-01-05 10:00 Central European Standard Time", One("%F %R %Z"), None, "1609837200000000000"),
            ("2021-01-05 10:00 foo", One("%F %R %Z"), None, "Illegal timezone 'foo'"),
            ("2021-01-05 10:00", One("%F %R"), Some(""), "1609840800000000000"),
            ("2021-01-05 10:00:00", Default, Some("+01:00"), "1609837200000000000"),
            ("2021-01-05 10:00:00 +01:00", Default, Some("+01:00"), "Unable to parse '2021-01-05 10:00:00 +01:00' using any of the formats %FT%T.%N, %FT%T, %F %T.%N, %F %T, %F"),
            ("2021-01-05 10:00:00.-5", One("%F %T.%N"), None, "subsecx out of range"),
            ("2021-01-05 10:00 +99", One("%F %R %z"), None, "1609484400000000000"),
            ("2021-01-05 10:00 +1.5", One("%F %R %z"), None, "1609835400000000000"),
            ("", One("%Y"), None, "Unable to parse '' using format '%Y'"),
            ("2021-01-05", One("%F"), Some("+25:00"), "Illegal timezone '+25:00'"),
            // Bounded, never overflowing: 40 fraction digits, a huge year.
            ("2021-01-05 01:02:03.1234567890123456789012345678901234567890", One("%F %T.%N"), None, "1609808523123456789"),
            ("99999999999999999999999999-01-01", One("%Y-%m-%d"), None, "the year is out of the range hiera-lookup supports (a billion years)"),
            ("99999999999999999999999999999999999999999 99", One("%C %y"), None, "the year is out of the range hiera-lookup supports (a billion years)"),
        ];
        for (s, f, tz, want) in cases {
            assert_eq!(p(s, f, tz), want, "{s:?} {f:?} {tz:?}");
        }
    }
}
