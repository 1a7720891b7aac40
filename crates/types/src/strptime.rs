//! Ruby's `Date._strptime` / `DateTime._strptime` (ext/date/date_strptime.c and
//! `date_zone_to_diff` in date_parse.c, Ruby 3.3), which Puppet's `Timestamp.parse` runs for
//! every format it tries.
//!
//! Our own code: no crate parses strptime formats with Ruby's rules (a space in the format
//! matches any run of whitespace, including none; `%Y` takes a sign and as many digits as it
//! likes unless a number follows; `%d` accepts a leading space; unknown directives match
//! themselves; `%Z` takes Ruby's zone pattern and its zone table), and Puppet's answers (which
//! format matched, what is left over, the offset) depend on exactly those rules.
//!
//! [`strptime`] returns the fields Ruby's hash holds (`year`, `mon`, `mday`, `hour`, `min`,
//! `sec`, `sec_fraction`, `zone`, `offset`, `leftover`, ...), `None` where Ruby returns nil.

use crate::zonetab::ZONES;
use regex::Regex;
use std::sync::OnceLock;

/// What `_strptime` found (the keys of Ruby's hash that Puppet reads, plus those that only
/// take part in the matching).
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Parsed {
    pub year: Option<i128>,
    pub mon: Option<i128>,
    pub mday: Option<i128>,
    pub hour: Option<i128>,
    pub min: Option<i128>,
    pub sec: Option<i128>,
    /// `sec_fraction` in whole nanoseconds (floored; Ruby keeps the exact Rational, of which
    /// Puppet keeps the nanoseconds), negative when a `-` preceded the digits.
    pub sec_fraction: Option<i128>,
    /// The zone text `%Z`/`%z` matched.
    pub zone: Option<String>,
    /// Its offset from UTC in nanoseconds (`date_zone_to_diff`), None when unknown.
    pub offset: Option<i128>,
    /// The unparsed rest of the string.
    pub leftover: Option<String>,
    cent: Option<i128>,
    merid: Option<i128>,
}

/// `DateTime._strptime(s, fmt)`: None where Ruby returns nil (the format did not match).
pub(crate) fn strptime(s: &str, fmt: &str) -> Option<Parsed> {
    let mut p = Parsed::default();
    let s = s.as_bytes();
    let si = internal(s, fmt.as_bytes(), &mut p)?;
    if si < s.len() {
        p.leftover = Some(String::from_utf8_lossy(&s[si..]).into_owned());
    }
    if let Some(c) = p.cent.take() {
        if let Some(y) = p.year {
            p.year = Some(y.saturating_add(c.saturating_mul(100)));
        }
    }
    if let Some(m) = p.merid.take() {
        if let Some(h) = p.hour {
            p.hour = Some(h.rem_euclid(12) + m);
        }
    }
    Some(p)
}

const DAY_NAMES: [&str; 14] = [
    "sunday",
    "monday",
    "tuesday",
    "wednesday",
    "thursday",
    "friday",
    "saturday",
    "sun",
    "mon",
    "tue",
    "wed",
    "thu",
    "fri",
    "sat",
];

const MONTH_NAMES: [&str; 24] = [
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
    "jan",
    "feb",
    "mar",
    "apr",
    "may",
    "jun",
    "jul",
    "aug",
    "sep",
    "oct",
    "nov",
    "dec",
];

const MERID_NAMES: [&str; 4] = ["am", "pm", "a.m.", "p.m."];

fn starts_with_ci(s: &[u8], word: &str) -> bool {
    s.len() >= word.len() && s[..word.len()].eq_ignore_ascii_case(word.as_bytes())
}

/// C's isspace.
fn space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r')
}

/// `num_pattern_p`: the format goes on with a number (a digit or a numeric directive), so a
/// number directive reads a fixed width.
fn num_pattern(rest: &[u8]) -> bool {
    match rest.first() {
        Some(c) if c.is_ascii_digit() => true,
        Some(b'%') => {
            let mut r = &rest[1..];
            if matches!(r.first(), Some(b'E' | b'O')) {
                r = &r[1..];
            }
            r.first().is_some_and(|&c| {
                b"CDdeFGgHIjkLlMmNQRrSsTUuVvWwXxYy".contains(&c) || c.is_ascii_digit()
            })
        }
        _ => false,
    }
}

/// `read_digits`: up to `width` digits at `s[si..]`; None when there is none. Beyond i128
/// (where Ruby makes a Bignum) the value saturates: no date needs it, and it is refused later.
fn digits(s: &[u8], si: &mut usize, width: usize) -> Option<i128> {
    let mut n: i128 = 0;
    let mut l = 0;
    while l < width {
        match s.get(*si + l) {
            Some(c) if c.is_ascii_digit() => {
                n = n.saturating_mul(10).saturating_add(i128::from(c - b'0'));
                l += 1;
            }
            _ => break,
        }
    }
    if l == 0 {
        return None;
    }
    *si += l;
    Some(n)
}

fn ranged(n: i128, lo: i128, hi: i128) -> Option<i128> {
    (lo..=hi).contains(&n).then_some(n)
}

/// An optional sign: -1 for `-`, 1 otherwise (consumed when present).
fn sign(s: &[u8], si: &mut usize, plus_too: bool) -> i128 {
    match s.get(*si) {
        Some(b'-') => {
            *si += 1;
            -1
        }
        Some(b'+') if plus_too => {
            *si += 1;
            1
        }
        _ => 1,
    }
}

/// `date__strptime_internal`: the index in `s` where matching stopped, None on failure.
fn internal(s: &[u8], fmt: &[u8], p: &mut Parsed) -> Option<usize> {
    let (mut si, mut fi) = (0usize, 0usize);
    let at = |i: usize| s.get(i).copied().unwrap_or(0);
    while fi < fmt.len() {
        let f = fmt[fi];
        if space(f) {
            while space(at(si)) {
                si += 1;
            }
            fi += 1;
            continue;
        }
        if f != b'%' {
            // A literal.
            if at(si) != f {
                return None;
            }
            si += 1;
            fi += 1;
            continue;
        }
        // A directive: skip the E/O modifiers and the colons of %:z.
        let mut d = fi + 1;
        loop {
            match fmt.get(d) {
                Some(b'E') if fmt.get(d + 1).is_some_and(|c| b"cCxXyY".contains(c)) => d += 1,
                Some(b'O') if fmt.get(d + 1).is_some_and(|c| b"deHImMSuUVwWy".contains(c)) => {
                    d += 1
                }
                Some(b':') => {
                    let n = fmt[d..].iter().take_while(|&&c| c == b':').count();
                    if n <= 3 && fmt.get(d + n) == Some(&b'z') {
                        d += n;
                    } else {
                        return None;
                    }
                }
                _ => break,
            }
        }
        let Some(&c) = fmt.get(d) else {
            // A lone `%` at the end matches a `%`.
            if at(si) != b'%' {
                return None;
            }
            si += 1;
            fi = d;
            continue;
        };
        let fixed = num_pattern(&fmt[d + 1..]);
        let recur = |sub: &str, si: &mut usize, p: &mut Parsed| -> Option<()> {
            let n = internal(&s[*si..], sub.as_bytes(), p)?;
            *si += n;
            Some(())
        };
        match c {
            b'A' | b'a' => {
                let i = DAY_NAMES.iter().position(|n| starts_with_ci(&s[si..], n))?;
                si += DAY_NAMES[i].len();
            }
            b'B' | b'b' | b'h' => {
                let i = MONTH_NAMES
                    .iter()
                    .position(|n| starts_with_ci(&s[si..], n))?;
                si += MONTH_NAMES[i].len();
                p.mon = Some(i as i128 % 12 + 1);
            }
            b'C' => {
                let sg = sign(s, &mut si, true);
                let n = digits(s, &mut si, if fixed { 2 } else { usize::MAX })?;
                p.cent = Some(sg * n);
            }
            b'c' => recur("%a %b %e %H:%M:%S %Y", &mut si, p)?,
            b'D' | b'x' => recur("%m/%d/%y", &mut si, p)?,
            b'd' | b'e' => {
                let n = if at(si) == b' ' {
                    si += 1;
                    digits(s, &mut si, 1)?
                } else {
                    digits(s, &mut si, 2)?
                };
                p.mday = Some(ranged(n, 1, 31)?);
            }
            b'F' => recur("%Y-%m-%d", &mut si, p)?,
            b'G' => {
                let _ = sign(s, &mut si, true);
                digits(s, &mut si, if fixed { 4 } else { usize::MAX })?;
            }
            b'g' => {
                ranged(digits(s, &mut si, 2)?, 0, 99)?;
            }
            b'H' | b'k' | b'I' | b'l' => {
                let n = if at(si) == b' ' {
                    si += 1;
                    digits(s, &mut si, 1)?
                } else {
                    digits(s, &mut si, 2)?
                };
                p.hour = Some(if matches!(c, b'H' | b'k') {
                    ranged(n, 0, 24)?
                } else {
                    ranged(n, 1, 12)?
                });
            }
            b'j' => {
                ranged(digits(s, &mut si, 3)?, 1, 366)?;
            }
            b'L' | b'N' => {
                let sg = sign(s, &mut si, true);
                let start = si;
                let w = match (fixed, c) {
                    (true, b'L') => 3,
                    (true, _) => 9,
                    _ => usize::MAX,
                };
                digits(s, &mut si, w)?;
                // The first nine digits are the nanoseconds.
                let ns = s[start..si]
                    .iter()
                    .chain(std::iter::repeat(&b'0'))
                    .take(9)
                    .fold(0i128, |a, &c| a * 10 + i128::from(c - b'0'));
                p.sec_fraction = Some(sg * ns);
            }
            b'M' => p.min = Some(ranged(digits(s, &mut si, 2)?, 0, 59)?),
            b'm' => p.mon = Some(ranged(digits(s, &mut si, 2)?, 1, 12)?),
            b'n' | b't' => recur(" ", &mut si, p)?,
            b'P' | b'p' => {
                let i = MERID_NAMES
                    .iter()
                    .position(|n| starts_with_ci(&s[si..], n))?;
                si += MERID_NAMES[i].len();
                p.merid = Some(if i % 2 == 0 { 0 } else { 12 });
            }
            b'Q' | b's' => {
                let _ = sign(s, &mut si, false);
                digits(s, &mut si, usize::MAX)?;
            }
            b'R' => recur("%H:%M", &mut si, p)?,
            b'r' => recur("%I:%M:%S %p", &mut si, p)?,
            b'S' => p.sec = Some(ranged(digits(s, &mut si, 2)?, 0, 60)?),
            b'T' | b'X' => recur("%H:%M:%S", &mut si, p)?,
            b'U' | b'W' => {
                ranged(digits(s, &mut si, 2)?, 0, 53)?;
            }
            b'u' => {
                ranged(digits(s, &mut si, 1)?, 1, 7)?;
            }
            b'V' => {
                ranged(digits(s, &mut si, 2)?, 1, 53)?;
            }
            b'v' => recur("%e-%b-%Y", &mut si, p)?,
            b'w' => {
                ranged(digits(s, &mut si, 1)?, 0, 6)?;
            }
            b'Y' => {
                let sg = sign(s, &mut si, true);
                let n = digits(s, &mut si, if fixed { 4 } else { usize::MAX })?;
                p.year = Some(sg * n);
            }
            b'y' => {
                let n = ranged(digits(s, &mut si, 2)?, 0, 99)?;
                p.year = Some(n);
                if p.cent.is_none() {
                    p.cent = Some(if n >= 69 { 19 } else { 20 });
                }
            }
            b'Z' | b'z' => {
                let rest = std::str::from_utf8(&s[si..]).ok()?;
                let m = zone_pattern().captures(rest)?.get(1)?;
                let zone = m.as_str().to_string();
                si += zone.len();
                p.offset = zone_to_diff(&zone);
                p.zone = Some(zone);
            }
            b'+' => recur("%a %b %e %H:%M:%S %Z %Y", &mut si, p)?,
            b'%' => {
                if at(si) != b'%' {
                    return None;
                }
                si += 1;
            }
            // Anything else matches itself, `%` included.
            other => {
                if at(si) != b'%' || at(si + 1) != other {
                    return None;
                }
                si += 2;
            }
        }
        fi = d + 1;
    }
    Some(si)
}

/// The zone `%Z`/`%z` accept (case-insensitive).
fn zone_pattern() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(
            r"(?i)\A((?:gmt|utc?)?[-+]\d+(?:[,.:]\d+(?::\d+)?)?|[\p{Alphabetic}.\s]+(?:standard|daylight)\s+time\b|\p{Alphabetic}+(?:\s+dst)?\b)",
        )
        .expect("the zone pattern compiles")
    })
}

const NANOS: i128 = 1_000_000_000;

/// `date_zone_to_diff`: a zone name (Ruby's zone table, with `standard time`, `daylight
/// time` or `dst` after it) or a numeric offset (`+hh`, `+hhmm[ss]`, `+hh:mm[:ss]`, `+h.frac`,
/// optionally after `gmt`/`utc`), in nanoseconds; None when Ruby gives nil.
pub(crate) fn zone_to_diff(zone: &str) -> Option<i128> {
    let lower = zone.to_ascii_lowercase();
    let words: Vec<&str> = lower.split_ascii_whitespace().collect();
    let (name, dst) = match words.as_slice() {
        [rest @ .., "standard", "time"] if !rest.is_empty() => (rest.join(" "), false),
        [rest @ .., "daylight", "time"] if !rest.is_empty() => (rest.join(" "), true),
        [rest @ .., "dst"] if !rest.is_empty() => (rest.join(" "), true),
        all => (all.join(" "), false),
    };
    if let Ok(i) = ZONES.binary_search_by(|(n, _)| n.cmp(&name.as_str())) {
        let secs = i128::from(ZONES[i].1) + if dst { 3600 } else { 0 };
        return Some(secs * NANOS);
    }
    numeric_offset(zone)
}

/// The numeric forms of `date_zone_to_diff`.
fn numeric_offset(zone: &str) -> Option<i128> {
    let mut s = zone.as_bytes();
    if s.len() > 3 && (starts_with_ci(s, "gmt") || starts_with_ci(s, "utc")) {
        s = &s[3..];
    }
    let negative = match s.first() {
        Some(b'-') => true,
        Some(b'+') => false,
        _ => return None,
    };
    s = &s[1..];
    let l = s.len();
    let lead = |t: &[u8]| -> (i128, usize) {
        let n = t.iter().take_while(|c| c.is_ascii_digit()).count();
        let v = t[..n].iter().fold(0i128, |a, &c| {
            a.saturating_mul(10).saturating_add(i128::from(c - b'0'))
        });
        (v, n)
    };
    let (hour, n) = lead(s);
    let rest = &s[n..];
    let nanos = match rest.first() {
        Some(b':') => {
            if hour > 23 {
                return None;
            }
            let (min, m) = lead(&rest[1..]);
            if min > 59 {
                return None;
            }
            let after = &rest[1 + m..];
            let sec = if after.first() == Some(&b':') {
                let (sec, _) = lead(&after[1..]);
                if sec > 59 {
                    return None;
                }
                sec
            } else {
                0
            };
            (hour * 3600 + min * 60 + sec) * NANOS
        }
        Some(b',' | b'.') => {
            if hour > 23 {
                return None;
            }
            // At most 7 digits of the fraction count (10**-7 hour is 0.36 ms).
            let frac: Vec<u8> = rest[1..]
                .iter()
                .take_while(|c| c.is_ascii_digit())
                .take(7)
                .copied()
                .collect();
            let (f, k) = lead(&frac);
            hour * 3600 * NANOS + f * 3600 * NANOS / 10i128.pow(k as u32)
        }
        _ if l > 2 => {
            // hhmm[ss], or hmm[ss] when the length is odd.
            let two = |from: usize, w: usize| -> i128 {
                s.get(from..(from + w).min(l))
                    .map(|t| lead(t).0)
                    .unwrap_or(0)
            };
            let o = l % 2;
            let hour = two(0, 2 - o);
            let min = if l >= 3 { two(2 - o, 2) } else { 0 };
            let sec = if l >= 5 { two(4 - o, 2) } else { 0 };
            (hour * 3600 + min * 60 + sec) * NANOS
        }
        _ => hour * 3600 * NANOS,
    };
    Some(if negative { -nanos } else { nanos })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zone_offsets_as_ruby_computes_them() {
        // Date._strptime(s, '%z')[:offset] in Ruby 3.3.
        let cases: &[(&str, Option<i64>)] = &[
            ("EST", Some(-18000)),
            ("CEST", Some(7200)),
            ("utc", Some(0)),
            ("UTC+1", Some(3600)),
            ("gmt-5", Some(-18000)),
            ("+1", Some(3600)),
            ("+0130", Some(5400)),
            ("+130", Some(5400)),
            ("+01:30:15", Some(5415)),
            ("+1.5", Some(5400)),
            ("+01,25", Some(4500)),
            ("-24", Some(-86400)),
            ("+24:00", None),
            ("+2400", Some(86400)),
            ("+0160", Some(7200)),
            ("+12345", Some(5025)),
            ("+1234567", Some(5025)),
            ("Z", Some(0)),
            ("West Pacific Standard Time", Some(36000)),
            ("west  pacific standard time", Some(36000)),
            ("EST DST", Some(-14400)),
            ("cet dst", Some(7200)),
            ("GMT+01:00", Some(3600)),
            ("utc+0530", Some(19800)),
            ("foo", None),
            ("+99", Some(356400)),
            ("+23:60", None),
            ("+1:5", Some(3900)),
            ("-0:30", Some(-1800)),
            ("UT", Some(0)),
        ];
        for (z, want) in cases {
            let got = zone_to_diff(z).map(|n| (n / NANOS) as i64);
            assert_eq!(got, *want, "{z}");
        }
    }

    #[test]
    fn directives_as_ruby_reads_them() {
        let p = strptime("2021-01-05 10:00 foo", "%F %R %Z").unwrap();
        assert_eq!(p.zone.as_deref(), Some("foo"));
        assert_eq!(p.offset, None);
        let p = strptime("Europe/Stockholm", "%z").unwrap();
        assert_eq!(p.zone.as_deref(), Some("Europe"));
        assert_eq!(p.leftover.as_deref(), Some("/Stockholm"));
        // A space in the format matches no space too; %Y reads 4 digits before a number.
        let p = strptime("20210105", "%Y%m%d").unwrap();
        assert_eq!((p.year, p.mon, p.mday), (Some(2021), Some(1), Some(5)));
        let p = strptime("+12021-01-05", "%Y-%m-%d").unwrap();
        assert_eq!(p.year, Some(12021));
        let p = strptime("69-1-5", "%y-%m-%d").unwrap();
        assert_eq!(p.year, Some(1969));
        let p = strptime("2021-01-05 12 p.m.", "%F %I %P").unwrap();
        assert_eq!(p.hour, Some(12));
        let p = strptime("2021-01-05 12 AM", "%F %I %p").unwrap();
        assert_eq!(p.hour, Some(0));
        let p = strptime("2021-1- 5", "%Y-%m-%e").unwrap();
        assert_eq!(p.mday, Some(5));
        let p = strptime("2021-01-05 01:02:03.123456789123", "%F %T.%N").unwrap();
        assert_eq!(p.sec_fraction, Some(123456789));
        assert!(strptime("2021-02-32", "%Y-%m-%d").is_none());
        assert!(strptime("2021-01-05", "%Y-%q").is_none());
        assert!(strptime("2021 %q", "%Y %q").is_some());
        assert_eq!(
            strptime("2021-01-05 junk", "%Y-%m-%d")
                .unwrap()
                .leftover
                .as_deref(),
            Some(" junk")
        );
    }
}
