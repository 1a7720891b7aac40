//! Ruby's base64 library (`Base64.strict_encode64`, `.strict_decode64`, `.decode64`,
//! `.urlsafe_decode64`): a room of its own below the value types, which keep a binary
//! String's bytes as base64 (`value::binary_string`). Re-exported by [`crate::ruby`].

const B64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// `Base64.strict_encode64`.
pub fn strict_encode64(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, b)| n | (u32::from(*b) << (16 - 8 * i)));
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(B64[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

fn b64_value(c: u8) -> Option<u32> {
    Some(u32::from(match c {
        b'A'..=b'Z' => c - b'A',
        b'a'..=b'z' => c - b'a' + 26,
        b'0'..=b'9' => c - b'0' + 52,
        b'+' => 62,
        b'/' => 63,
        _ => return None,
    }))
}

/// `Base64.strict_decode64` (`unpack1("m0")`): None where Ruby raises `invalid base64`.
pub fn strict_decode64(s: &str) -> Option<Vec<u8>> {
    let b = s.as_bytes();
    if !b.len().is_multiple_of(4) {
        return None;
    }
    let mut out = Vec::with_capacity(b.len() / 4 * 3);
    for (k, q) in b.chunks(4).enumerate() {
        let last = k == b.len() / 4 - 1;
        let pads = q.iter().rev().take_while(|&&c| c == b'=').count();
        if pads > 2 || (pads > 0 && !last) {
            return None;
        }
        let mut n = 0u32;
        for (i, &c) in q[..4 - pads].iter().enumerate() {
            n |= b64_value(c)? << (18 - 6 * i);
        }
        // Bits beyond the decoded bytes must be zero.
        let keep = 3 - pads;
        if pads > 0 && n & ((1 << (8 * (3 - keep))) - 1) != 0 {
            return None;
        }
        for i in 0..keep {
            out.push((n >> (16 - 8 * i)) as u8);
        }
    }
    Some(out)
}

/// `Base64.decode64` (`unpack1("m")`, Ruby's pack.c): lenient. Characters outside the
/// alphabet are skipped; a `=` (or the end) where the third or fourth character of a quantum is
/// due ends the data, keeping the bytes the quantum's first two or three characters make, while a
/// `=` where its first or second is due is skipped like any other character. So `QUJD=RA==` is
/// `ABCD` and `QU=JD` is `A`. The one port: YAML's `!!binary`, eyaml's ciphertexts and
/// `Binary.new(s, '%b')` all decode through it.
pub fn decode64(s: &str) -> Vec<u8> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len() / 4 * 3 + 2);
    let mut i = 0;
    // The next alphabet character's value; None at the end, or at a `=` when `pad_ends`.
    let mut next = |pad_ends: bool| -> Option<u32> {
        while let Some(&c) = b.get(i) {
            if pad_ends && c == b'=' {
                return None;
            }
            i += 1;
            if let Some(v) = b64_value(c) {
                return Some(v);
            }
        }
        None
    };
    while let Some(a) = next(false) {
        let Some(b1) = next(false) else { break };
        let Some(c) = next(true) else {
            out.push((a << 2 | b1 >> 4) as u8);
            break;
        };
        let Some(d) = next(true) else {
            out.extend_from_slice(&[(a << 2 | b1 >> 4) as u8, (b1 << 4 | c >> 2) as u8]);
            break;
        };
        out.extend_from_slice(&[
            (a << 2 | b1 >> 4) as u8,
            (b1 << 4 | c >> 2) as u8,
            (c << 6 | d) as u8,
        ]);
    }
    out
}

/// `Base64.urlsafe_decode64`: padding added when missing, `-_` read as `+/`, then strict.
pub fn urlsafe_decode64(s: &str) -> Option<Vec<u8>> {
    let mut t: String = s
        .chars()
        .map(|c| match c {
            '-' => '+',
            '_' => '/',
            c => c,
        })
        .collect();
    if !s.ends_with('=') && !s.len().is_multiple_of(4) {
        while !t.len().is_multiple_of(4) {
            t.push('=');
        }
    }
    strict_decode64(&t)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_like_ruby() {
        assert_eq!(strict_encode64(b"hello"), "aGVsbG8=");
        assert_eq!(strict_encode64(b""), "");
        assert_eq!(strict_encode64(b"ab"), "YWI=");
        assert_eq!(strict_decode64("aGVsbG8=").unwrap(), b"hello");
        assert_eq!(strict_decode64("aGVsbG8"), None);
        assert_eq!(strict_decode64("aGVsbG9="), None);
        assert_eq!(strict_decode64("aGV sbG8="), None);
        assert_eq!(urlsafe_decode64("aGVsbG8").unwrap(), b"hello");
    }

    #[test]
    fn decode64_is_rubys() {
        // Every row checked with Ruby 3.3's `Base64.decode64` (Puppet 8.10's Ruby).
        let rows: &[(&str, &[u8])] = &[
            ("QUJD=RA==", b"ABCD"),
            ("QUJDRA==", b"ABCD"),
            ("QUJDRA", b"ABCD"),
            ("QUJDR", b"ABC"),
            ("QUJDRA=", b"ABCD"),
            ("Q=UJD", b"ABC"),
            ("QU=JD", b"A"),
            ("QUJ=D", b"AB"),
            ("", b""),
            ("=", b""),
            ("==QUJD", b"ABC"),
            ("QU JD\nRA", b"ABCD"),
            ("QU!J@D#", b"ABC"),
            ("aGVsbG8", b"hello"),
            ("aGVsbG8=", b"hello"),
            ("aGVsbG9=", b"hello"),
            ("QUJDRA==QUJD", b"ABCD"),
            ("QUI=QUI=", b"AB"),
            ("Q", b""),
            ("QQ", b"A"),
            ("QQ=", b"A"),
            ("QQ==", b"A"),
            ("QUI", b"AB"),
            ("QUI=", b"AB"),
            ("QUJD\0RA", b"ABCD"),
            ("=Q=U=J=D=", b"A"),
            ("QU=", b"A"),
            ("Q=U=JD", b"A"),
            ("-_-_", b""),
            ("QUJDRA=x", b"ABCD"),
            ("/w==", &[0xff]),
            ("aGVs\nbG8=", b"hello"),
        ];
        for (text, bytes) in rows {
            assert_eq!(decode64(text), *bytes, "{text:?}");
        }
    }
}
