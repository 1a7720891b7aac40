//! The wire: LSP's `Content-Length` framing over a byte stream, read on a thread of its own
//! and bounded, so that no input can make the server allocate without limit, stop reading or
//! crash. lsp-server's own stdio transport reads a message of any announced length and ends
//! at the first malformed one; this reader skips what it cannot use and says why, as a
//! JSON-RPC error, then reads on. Messages are lsp-server's types, written by its
//! [`Message::write`].

use lsp_server::{ErrorCode, Message};
use serde_json::{json, Value as Json};
use std::io::{self, BufRead, BufReader, Read, Write};
use std::sync::mpsc::SyncSender;

/// The largest message read, in bytes: an editor buffer of the largest data file the engine
/// reads ([`hiera_value::limits`]), JSON-escaped, fits.
pub const MAX_MESSAGE: usize = 64 << 20;
/// The longest header line read.
const MAX_HEADER_LINE: usize = 8 << 10;
/// The most header lines of one message.
const MAX_HEADERS: usize = 32;

/// What the reader hands the server.
#[derive(Debug)]
pub enum Incoming {
    /// A well-formed message.
    Message(Message),
    /// An input that is not one: the error response to send (`id` null when unknown).
    Invalid(Json),
}

/// Reads messages from `input` until it ends, sending each to `tx`; stops when the server
/// is gone.
pub fn read_loop(input: impl Read, tx: SyncSender<Incoming>) {
    let mut r = BufReader::with_capacity(64 << 10, input);
    loop {
        let next = match read_one(&mut r) {
            Ok(Some(m)) => m,
            Ok(None) => return,
            Err(e) => {
                // The stream itself failed (a closed pipe): nothing more to read.
                let _ = tx.send(Incoming::Invalid(error(
                    Json::Null,
                    ErrorCode::ParseError,
                    &format!("cannot read the input: {e}"),
                )));
                return;
            }
        };
        let exit =
            matches!(&next, Incoming::Message(Message::Notification(n)) if n.method == "exit");
        if tx.send(next).is_err() || exit {
            return;
        }
    }
}

/// One message, or the error it earns; `None` at the end of the input.
fn read_one(r: &mut impl BufRead) -> io::Result<Option<Incoming>> {
    let mut length: Option<usize> = None;
    let mut bad_length = false;
    let mut headers = 0;
    loop {
        let Some(line) = read_line(r)? else {
            return Ok(None);
        };
        let line = line.trim_end_matches(['\r', '\n']);
        if line.is_empty() {
            if headers == 0 {
                // Blank lines between messages: skipped.
                continue;
            }
            break;
        }
        headers += 1;
        if headers > MAX_HEADERS {
            return Ok(Some(Incoming::Invalid(error(
                Json::Null,
                ErrorCode::InvalidRequest,
                "too many header lines",
            ))));
        }
        if let Some((name, value)) = line.split_once(':') {
            if name.trim().eq_ignore_ascii_case("content-length") {
                match value.trim().parse::<usize>() {
                    Ok(n) => length = Some(n),
                    Err(_) => bad_length = true,
                }
            }
        }
    }
    let Some(length) = length.filter(|_| !bad_length) else {
        return Ok(Some(Incoming::Invalid(error(
            Json::Null,
            ErrorCode::InvalidRequest,
            "a message without a valid Content-Length header",
        ))));
    };
    if length > MAX_MESSAGE {
        // Read past it without keeping it.
        let skipped = io::copy(&mut r.take(length as u64), &mut io::sink())?;
        if (skipped as usize) < length {
            return Ok(None);
        }
        return Ok(Some(Incoming::Invalid(error(
            Json::Null,
            ErrorCode::InvalidRequest,
            &format!("a message of {length} bytes is larger than the {MAX_MESSAGE} bytes read"),
        ))));
    }
    let mut body = Vec::with_capacity(length.min(1 << 20));
    r.take(length as u64).read_to_end(&mut body)?;
    if body.len() < length {
        return Ok(None);
    }
    Ok(Some(parse(&body)))
}

/// A line of at most [`MAX_HEADER_LINE`] bytes (a longer one is cut, its rest skipped).
fn read_line(r: &mut impl BufRead) -> io::Result<Option<String>> {
    let mut buf = Vec::new();
    let mut total = 0usize;
    loop {
        let available = r.fill_buf()?;
        if available.is_empty() {
            return Ok(if total == 0 {
                None
            } else {
                Some(String::from_utf8_lossy(&buf).into_owned())
            });
        }
        let (chunk, done) = match memchr_nl(available) {
            Some(i) => (&available[..=i], true),
            None => (available, false),
        };
        let n = chunk.len();
        if buf.len() < MAX_HEADER_LINE {
            let room = MAX_HEADER_LINE - buf.len();
            buf.extend_from_slice(&chunk[..n.min(room)]);
        }
        total += n;
        r.consume(n);
        if done {
            return Ok(Some(String::from_utf8_lossy(&buf).into_owned()));
        }
    }
}

fn memchr_nl(b: &[u8]) -> Option<usize> {
    b.iter().position(|&c| c == b'\n')
}

/// A body as a message, or the JSON-RPC error for it.
fn parse(body: &[u8]) -> Incoming {
    let value: Json = match serde_json::from_slice(body) {
        Ok(v) => v,
        Err(e) => {
            return Incoming::Invalid(error(
                Json::Null,
                ErrorCode::ParseError,
                &format!("not JSON: {e}"),
            ))
        }
    };
    let id = value.get("id").cloned().unwrap_or(Json::Null);
    let id = match id {
        Json::Number(_) | Json::String(_) => id,
        _ => Json::Null,
    };
    if !value.is_object() || value.get("method").is_some_and(|m| !m.is_string()) {
        return Incoming::Invalid(error(
            id,
            ErrorCode::InvalidRequest,
            "not a JSON-RPC message",
        ));
    }
    match serde_json::from_value::<Message>(value) {
        Ok(m) => Incoming::Message(m),
        Err(e) => Incoming::Invalid(error(
            id,
            ErrorCode::InvalidRequest,
            &format!("not a JSON-RPC message: {e}"),
        )),
    }
}

/// A JSON-RPC error response.
pub fn error(id: Json, code: ErrorCode, message: &str) -> Json {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code as i32, "message": message}})
}

/// Writes a message.
pub fn write_message(out: &mut dyn Write, m: &Message) -> io::Result<()> {
    let mut buf = Vec::new();
    m.write(&mut buf)?;
    out.write_all(&buf)?;
    out.flush()
}

/// Writes a raw JSON-RPC document.
pub fn write_json(out: &mut dyn Write, doc: &Json) -> io::Result<()> {
    let text = doc.to_string();
    write!(out, "Content-Length: {}\r\n\r\n{text}", text.len())?;
    out.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(input: &[u8]) -> Vec<Incoming> {
        let (tx, rx) = std::sync::mpsc::sync_channel(64);
        read_loop(input, tx);
        rx.into_iter().collect()
    }

    fn frame(body: &str) -> String {
        format!("Content-Length: {}\r\n\r\n{body}", body.len())
    }

    #[test]
    fn bad_input_is_answered_and_reading_goes_on() {
        let good = r#"{"jsonrpc":"2.0","id":1,"method":"shutdown"}"#;
        let mut input = String::new();
        input += &frame("{not json");
        input += &frame(r#"{"jsonrpc":"2.0","id":7,"method":3}"#);
        input += "Content-Length: nope\r\n\r\n";
        input += &format!("Content-Length: {}\r\n\r\n", MAX_MESSAGE + 1);
        let mut bytes = input.into_bytes();
        bytes.extend(std::iter::repeat_n(b' ', MAX_MESSAGE + 1));
        bytes.extend(frame(good).bytes());
        let got = all(&bytes);
        assert_eq!(got.len(), 5, "{got:?}");
        let codes: Vec<i64> = got[..4]
            .iter()
            .map(|i| match i {
                Incoming::Invalid(j) => j["error"]["code"].as_i64().unwrap(),
                other => panic!("{other:?}"),
            })
            .collect();
        assert_eq!(codes, [-32700, -32600, -32600, -32600]);
        match &got[1] {
            Incoming::Invalid(j) => assert_eq!(j["id"], 7),
            _ => unreachable!(),
        }
        assert!(
            matches!(&got[4], Incoming::Message(Message::Request(r)) if r.method == "shutdown")
        );
    }

    #[test]
    fn a_truncated_message_ends_the_input() {
        assert!(all(b"Content-Length: 100\r\n\r\n{}").is_empty());
        assert!(all(b"").is_empty());
    }
}
