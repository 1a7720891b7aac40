//! Would a string read back as something other than a String (`YAMLTree#visit_String`)?
//! The reader's scanner (`crate::yaml::scan_plain_scalar`) answers, except for strings shaped
//! like dates and times: the dumper only quotes real ones, which the rules below decide.
//!
//! Ruby regexps here are ported with Ruby's meaning: `^`/`$` are line anchors, `\d` and `\s` are
//! ASCII, `[[:alpha:]]` is Unicode Alphabetic.

use regex::Regex;
use std::sync::OnceLock;

struct Res {
    stringish: Regex,
    not_ytonf: Regex,
    null: Regex,
    truthy: Regex,
    falsy: Regex,
    time: Regex,
    date: Regex,
    special_float: Regex,
    sexagesimal_int: Regex,
    sexagesimal_float: Regex,
    float: Regex,
    integer: Regex,
    time_part: Regex,
    date_part: Regex,
    tz: Regex,
}

fn res() -> &'static Res {
    static RES: OnceLock<Res> = OnceLock::new();
    RES.get_or_init(|| {
        let re = |s: &str| Regex::new(s).expect("static regex");
        Res {
            stringish: re(
                r"(?m)^[^0-9.:\-]?[\p{Alphabetic}_ \t\n\x0B\x0C\r!@#$%\^&*(){}<>|/\\~;=]+",
            ),
            not_ytonf: re(r"(?mi)^[^ytonf~]"),
            null: re(r"(?mi)^null$"),
            truthy: re(r"(?mi)^(?:yes|true|on)$"),
            falsy: re(r"(?mi)^(?:no|false|off)$"),
            time: re(concat!(
                r"(?m)^-?[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}(?:[Tt]|[ \t\n\x0B\x0C\r]+)",
                r"[0-9]{1,2}:[0-9][0-9]:[0-9][0-9](?:\.[0-9]*)?",
                r"(?:[ \t\n\x0B\x0C\r]*(?:Z|[-+][0-9]{1,2}:?(?:[0-9][0-9])?))?$"
            )),
            date: re(r"(?m)^([0-9]{4})-(1[012]|0[0-9]|[0-9])-([12][0-9]|3[01]|0[0-9]|[0-9])$"),
            special_float: re(r"(?mi)^(?:\+?\.inf|-\.inf|\.nan)$"),
            sexagesimal_int: re(r"(?m)^[-+]?[0-9][0-9_]*(?::[0-5]?[0-9]){1,2}$"),
            sexagesimal_float: re(r"(?m)^[-+]?[0-9][0-9_]*(?::[0-5]?[0-9]){1,2}\.[0-9_]*$"),
            float: re(r"(?m)^(?:[-+]?(?:[0-9][0-9_,]*)?\.[0-9]*(?:[eE][-+][0-9]+)?)$"),
            integer: re(concat!(
                r"(?m)^(?:[-+]?0b[0-1_,]+|[-+]?0[0-7_,]+",
                r"|[-+]?(?:0|[1-9](?:[0-9]|,[0-9]|_[0-9])*)|[-+]?0x[0-9a-fA-F_,]+)$"
            )),
            time_part: re(
                r"([0-9]+:[0-9]+:[0-9]+)(?:\.([0-9]*))?[ \t\n\x0B\x0C\r]*(Z|[-+][0-9]+(?::[0-9][0-9])?)?",
            ),
            date_part: re(r"^(-?[0-9]{4})-([0-9]{1,2})-([0-9]{1,2})"),
            tz: re(r"^([+\-]?[0-9]{1,2}):?([0-9]{1,2})?$"),
        }
    })
}

/// `Ok(true)` when `tokenize(s)` returns a non-String (nil, bool, number, Date, Time, Symbol);
/// `Err(message)` when it raises, as Psych's `to_yaml` then does.
pub(crate) fn would_be_non_string(s: &str) -> Result<bool, String> {
    use crate::yaml::Scalar;
    match crate::yaml::scan_plain_scalar(s) {
        Scalar::Str => Ok(false),
        Scalar::Value(_) | Scalar::BigInt(_) | Scalar::Symbol(_) => Ok(true),
        Scalar::Invalid(m) => Err(m),
        Scalar::Date | Scalar::Time => date_or_time_is_real(s),
    }
}

/// The full rules (with regexps, compiled on first use) for date- and time-shaped strings.
fn date_or_time_is_real(s: &str) -> Result<bool, String> {
    let r = res();
    if s.is_empty() {
        return Ok(true);
    }
    if r.stringish.is_match(s) || s.contains('\n') {
        if s.chars().count() > 5 || r.not_ytonf.is_match(s) {
            return Ok(false);
        }
        return Ok(s == "~" || r.null.is_match(s) || r.truthy.is_match(s) || r.falsy.is_match(s));
    }
    if r.time.is_match(s) {
        return parse_time_ok(s);
    }
    if let Some(c) = r.date.captures(s) {
        let num = |i: usize| {
            c.get(i)
                .and_then(|m| m.as_str().parse::<i64>().ok())
                .unwrap_or(0)
        };
        return Ok(valid_date(num(1), num(2), num(3)));
    }
    if r.special_float.is_match(s) {
        return Ok(true);
    }
    // Symbol (`:x`), needs one more char that is not a newline (there is none here).
    if s.len() > 1 && s.starts_with(':') {
        return Ok(true);
    }
    if r.sexagesimal_int.is_match(s) || r.sexagesimal_float.is_match(s) {
        return Ok(true);
    }
    if r.float.is_match(s) {
        // `Float()` of the cleaned text never fails for what reaches here except a lone dot.
        let t = s.trim_start_matches(['-', '+']);
        return Ok(t != ".");
    }
    if r.integer.is_match(s) {
        // `Integer(s.gsub(/[,_]/, ''))` raises when no digit is left after the base prefix.
        let cleaned: String = s.chars().filter(|c| *c != ',' && *c != '_').collect();
        let t = cleaned.trim_start_matches(['-', '+']);
        if t == "0b" || t == "0x" {
            return Err(format!("invalid value for Integer(): \"{cleaned}\""));
        }
        return Ok(true);
    }
    Ok(false)
}

/// Psych `parse_time`: `Ok(true)` if Ruby builds a Time, `Ok(false)` if it raises ArgumentError
/// (the string stays a String); other exceptions propagate as in Ruby.
fn parse_time_ok(s: &str) -> Result<bool, String> {
    let r = res();
    // date, time = *(string.split(/[ tT]/, 2))
    let Some(i) = s.find([' ', 't', 'T']) else {
        return Err("undefined method `match' for nil".into());
    };
    let (date, time) = (&s[..i], &s[i + 1..]);
    let num = |m: Option<regex::Match>| m.and_then(|m| m.as_str().parse::<i64>().ok());
    let Some(c) = r.time_part.captures(time) else {
        return Err("undefined method `[]' for nil".into());
    };
    let (Some(d), Some(hms)) = (r.date_part.captures(date), c.get(1)) else {
        return Ok(false);
    };
    let mut hms = hms.as_str().split(':').map(|t| t.parse::<i64>().ok());
    let (Some(Some(hour)), Some(Some(min)), Some(Some(sec))) = (hms.next(), hms.next(), hms.next())
    else {
        return Ok(false);
    };
    let (Some(mon), Some(mday)) = (num(d.get(2)), num(d.get(3))) else {
        return Ok(false);
    };
    if !valid_time_args(mon, mday, hour, min, sec) {
        return Ok(false);
    }
    let tz = match c.get(3) {
        None => return Ok(true),
        Some(m) if m.as_str() == "Z" => return Ok(true),
        Some(m) => m.as_str(),
    };
    let Some(t) = r.tz.captures(tz) else {
        return Err("undefined method `[]' for nil".into());
    };
    let hours = num(t.get(1)).map_or(0, i64::abs);
    let mins = num(t.get(2)).unwrap_or(0);
    // Time.new: the utc_offset must be strictly within a day.
    Ok(hours * 3600 + mins * 60 < 86400)
}

/// Ruby `Time.utc(y, mon, mday, hour, min, sec)` argument checks (time.c `time_arg` and
/// `validate_vtm`); a day past the end of February or of a 30-day month rolls over instead.
fn valid_time_args(mon: i64, mday: i64, hour: i64, min: i64, sec: i64) -> bool {
    let (max_min, max_sec) = if hour == 24 { (0, 0) } else { (59, 60) };
    (1..=12).contains(&mon)
        && (1..=31).contains(&mday)
        && (0..=24).contains(&hour)
        && (0..=max_min).contains(&min)
        && (0..=max_sec).contains(&sec)
}

fn gregorian_leap(y: i64) -> bool {
    (y % 4 == 0 && y % 100 != 0) || y % 400 == 0
}

/// Psych 5's `Date.strptime(s, '%F', Date::GREGORIAN)` validity: the proleptic Gregorian
/// calendar (Psych 4, under Ruby 3.1, used the Julian calendar before 1582-10-15).
fn valid_date(y: i64, m: i64, d: i64) -> bool {
    if !(1..=12).contains(&m) || d < 1 {
        return false;
    }
    let days = match m {
        2 if gregorian_leap(y) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    };
    d <= days
}
