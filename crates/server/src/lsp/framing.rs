//! The input side of the transport: messages are framed from the client's bytes and checked
//! before tower-lsp reads them, so one bad message is answered as an error instead of ending the
//! session.
//!
//! tower-lsp 0.20 stops reading at the first message it cannot decode (tokio-util's `FramedRead`
//! ends its stream after a decoder error, tokio-rs/tokio#3976), and the session ends with it: one
//! stray frame from a client, an extension or a proxy would take every open document's
//! completions along. Here each body is checked the way tower-lsp will read it. A body that is
//! not UTF-8 or not JSON is replaced by a [`MALFORMED`] request with `id: null` and code -32700
//! (parse error); JSON that is no JSON-RPC message (not an object, no `"jsonrpc": "2.0"`, a
//! request without a method, an `id` that is neither a number nor a string) by one with code
//! -32600 (invalid request), carrying the message's `id` when it has a usable one. The edge
//! (`service.rs`, which reads this module) answers those requests, so every answer still goes out through
//! tower-lsp's one writer. A header block without a usable `Content-Length` is skipped up to the
//! next `Content-Length`, as tower-lsp's codec does; valid messages pass through byte for byte,
//! re-framed with a plain `Content-Length` header.

use serde::Deserialize;
use serde_json::{Value, json};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tower_lsp::jsonrpc::{self, ErrorCode, Id, Request, Response};

/// The method of the request that stands for a message that could not be decoded.
pub const MALFORMED: &str = "$/crossfile/malformed";

/// The header name that starts a message.
const CONTENT_LENGTH: &[u8] = b"Content-Length";
/// The longest header block looked at; bytes that never end one are skipped.
const MAX_HEADER_BYTES: usize = 64 * 1024;
/// Bytes read from the client at a time.
const READ_BYTES: usize = 64 * 1024;
/// The largest message body taken (a `didOpen` of a file many times `workspace.max_file_bytes`
/// fits); a longer one is read past without being kept, and answered as an invalid request.
pub const MAX_MESSAGE_BYTES: usize = 64 << 20;

/// Copies messages from `input` (the client) to `output` (tower-lsp's end of a pipe) until the
/// input ends or the pipe closes, replacing each undecodable one with a [`MALFORMED`] request.
pub async fn check_frames<I, O>(mut input: I, mut output: O)
where
    I: AsyncRead + Unpin,
    O: AsyncWrite + Unpin,
{
    let mut buffer = Vec::new();
    let mut chunk = vec![0; READ_BYTES];
    loop {
        let header_end = loop {
            if let Some(end) = find(&buffer, b"\r\n\r\n") {
                break end;
            }
            if buffer.len() > MAX_HEADER_BYTES {
                tracing::warn!("skipped {} bytes that start no message", buffer.len());
                // Keep a tail that may be the start of the next header.
                let skip = resync(&buffer).unwrap_or(buffer.len() - CONTENT_LENGTH.len());
                buffer.drain(..skip);
            }
            match input.read(&mut chunk).await {
                Ok(0) | Err(_) => return,
                Ok(n) => buffer.extend_from_slice(&chunk[..n]),
            }
        };
        let Some(length) = content_length(&buffer[..header_end]) else {
            tracing::warn!("skipped a message header without a usable Content-Length");
            let skip = resync(&buffer).unwrap_or(header_end + 4);
            buffer.drain(..skip);
            continue;
        };
        buffer.drain(..header_end + 4);
        if length > MAX_MESSAGE_BYTES {
            tracing::warn!(length, "skipping a message over {MAX_MESSAGE_BYTES} bytes");
            let mut left = length;
            let kept = left.min(buffer.len());
            buffer.drain(..kept);
            left -= kept;
            while left > 0 {
                match input.read(&mut chunk).await {
                    Ok(0) | Err(_) => return,
                    Ok(n) => {
                        let used = n.min(left);
                        left -= used;
                        buffer.extend_from_slice(&chunk[used..n]);
                    }
                }
            }
            let refused = json!({"jsonrpc": "2.0", "id": null, "method": MALFORMED,
                "params": {"code": -32600, "message": format!(
                    "a message of {length} bytes, over the limit of {MAX_MESSAGE_BYTES} bytes: skipped")}});
            if !forward(&mut output, refused.to_string().as_bytes()).await {
                return;
            }
            continue;
        }
        while buffer.len() < length {
            match input.read(&mut chunk).await {
                Ok(0) | Err(_) => return,
                Ok(n) => buffer.extend_from_slice(&chunk[..n]),
            }
        }
        let body: Vec<u8> = buffer.drain(..length).collect();
        let body = match check(&body) {
            Ok(()) => body,
            Err(replacement) => replacement.to_string().into_bytes(),
        };
        if !forward(&mut output, &body).await {
            return;
        }
    }
}

/// Writes `body` as one framed message; `false` when the pipe is closed.
async fn forward<O: AsyncWrite + Unpin>(output: &mut O, body: &[u8]) -> bool {
    let header = format!("Content-Length: {}\r\n\r\n", body.len());
    let written = async {
        output.write_all(header.as_bytes()).await?;
        output.write_all(body).await?;
        output.flush().await
    };
    written.await.is_ok()
}

/// The answer to a [`MALFORMED`] request: the error it carries, for the id it carries.
pub fn answer(request: Request) -> Option<Response> {
    let (_, id, params) = request.into_parts();
    let params = params.unwrap_or(Value::Null);
    let code = match params.get("code").and_then(Value::as_i64) {
        Some(-32700) => ErrorCode::ParseError,
        _ => ErrorCode::InvalidRequest,
    };
    let message = params
        .get("message")
        .and_then(Value::as_str)
        .unwrap_or("an undecodable message")
        .to_string();
    tracing::warn!(code = code.code(), "{message}");
    let error = jsonrpc::Error {
        code,
        message: format!("crossfile: {message}").into(),
        data: None,
    };
    Some(Response::from_error(id.unwrap_or(Id::Null), error))
}

/// `Ok` if tower-lsp decodes `body` as a message; else the [`MALFORMED`] request that replaces
/// it.
fn check(body: &[u8]) -> Result<(), Value> {
    let malformed = |code: i64, id: Value, message: String| {
        json!({"jsonrpc": "2.0", "id": id, "method": MALFORMED,
               "params": {"code": code, "message": message}})
    };
    let text = std::str::from_utf8(body).map_err(|e| {
        malformed(
            -32700,
            Value::Null,
            format!("a message body that is not UTF-8 ({e})"),
        )
    })?;
    if let Ok(request) = serde_json::from_str::<Request>(text)
        && !request.method().is_empty()
    {
        return Ok(());
    }
    if serde_json::from_str::<Response>(text).is_ok() {
        return Ok(());
    }
    let value: Value = serde_json::from_str(text).map_err(|e| {
        malformed(
            -32700,
            Value::Null,
            format!("a message body that is not JSON ({e})"),
        )
    })?;
    // An id is kept only if it is one (a number or a string); otherwise the answer says `null`.
    let id = value
        .get("id")
        .filter(|id| Id::deserialize(*id).is_ok() && !id.is_null())
        .cloned()
        .unwrap_or(Value::Null);
    Err(malformed(
        -32600,
        id,
        "a message that is not a JSON-RPC 2.0 request, notification or response".into(),
    ))
}

/// The value of the `Content-Length` header (any letter case) in a header block.
fn content_length(header: &[u8]) -> Option<usize> {
    let header = std::str::from_utf8(header).ok()?;
    header.split("\r\n").find_map(|line| {
        let (name, value) = line.split_once(':')?;
        name.trim()
            .eq_ignore_ascii_case("content-length")
            .then(|| value.trim().parse().ok())?
    })
}

/// Where the next `Content-Length` after the first byte starts: the place to look for a message
/// after bytes that are none.
fn resync(buffer: &[u8]) -> Option<usize> {
    find(buffer.get(1..)?, CONTENT_LENGTH).map(|i| i + 1)
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(body: &[u8]) -> Vec<u8> {
        let mut bytes = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
        bytes.extend_from_slice(body);
        bytes
    }

    /// The bodies `input` becomes on tower-lsp's side.
    fn check_all(input: &[u8]) -> Vec<Value> {
        let runtime = tokio::runtime::Builder::new_current_thread().build();
        let Ok(runtime) = runtime else {
            return Vec::new();
        };
        let mut out = Vec::new();
        runtime.block_on(check_frames(input, &mut out));
        let mut bodies = Vec::new();
        let mut rest = out.as_slice();
        while let Some(end) = find(rest, b"\r\n\r\n") {
            let length = content_length(&rest[..end]).unwrap_or(0);
            let body = &rest[end + 4..end + 4 + length];
            bodies.push(serde_json::from_slice(body).unwrap_or(Value::Null));
            rest = &rest[end + 4 + length..];
        }
        bodies
    }

    #[test]
    fn undecodable_messages_become_malformed_requests() {
        let good = br#"{"jsonrpc":"2.0","id":1,"method":"shutdown"}"#;
        let rows: &[(&[u8], i64, Value)] = &[
            (b"{not json", -32700, Value::Null),
            (b"", -32700, Value::Null),
            (b"\xff\xfe{}", -32700, Value::Null),
            (b"[1, 2]", -32600, Value::Null),
            (br#"{"jsonrpc":"2.0","id":5}"#, -32600, json!(5)),
            (br#"{"jsonrpc":"2.0"}"#, -32600, Value::Null),
            (
                br#"{"jsonrpc":"1.0","id":"a","method":"x"}"#,
                -32600,
                json!("a"),
            ),
            (
                br#"{"jsonrpc":"2.0","id":[1],"method":"x"}"#,
                -32600,
                Value::Null,
            ),
            (br#"{"jsonrpc":"2.0","id":6,"method":42}"#, -32600, json!(6)),
        ];
        for (body, code, id) in rows {
            let mut input = frame(body);
            input.extend(frame(good));
            let bodies = check_all(&input);
            assert_eq!(bodies.len(), 2, "{:?}", String::from_utf8_lossy(body));
            assert_eq!(bodies[0]["method"], json!(MALFORMED));
            assert_eq!(bodies[0]["params"]["code"], json!(code), "{bodies:?}");
            assert_eq!(&bodies[0]["id"], id, "{bodies:?}");
            assert_eq!(
                bodies[1],
                serde_json::from_slice::<Value>(good).unwrap_or_default()
            );
        }
    }

    #[test]
    fn a_message_over_the_limit_is_read_past_and_refused() {
        let good = br#"{"jsonrpc":"2.0","method":"exit"}"#;
        let huge = vec![b' '; MAX_MESSAGE_BYTES + 10];
        let mut input = frame(&huge);
        input.extend(frame(good));
        let bodies = check_all(&input);
        assert_eq!(bodies.len(), 2, "{bodies:?}");
        assert_eq!(bodies[0]["method"], json!(MALFORMED));
        assert_eq!(bodies[0]["params"]["code"], json!(-32600));
        assert!(
            bodies[0]["params"]["message"]
                .as_str()
                .is_some_and(|m| m.contains("over the limit")),
            "{bodies:?}"
        );
        assert_eq!(
            bodies[1],
            serde_json::from_slice::<Value>(good).unwrap_or_default()
        );
    }

    #[test]
    fn decodable_messages_pass_unchanged() {
        let bodies: &[&[u8]] = &[
            br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"capabilities":{}}}"#,
            br#"{"jsonrpc":"2.0","method":"initialized","params":{}}"#,
            br#"{"jsonrpc":"2.0","id":"x","method":"textDocument/completion","params":"wrong"}"#,
            br#"{"jsonrpc":"2.0","id":7,"result":null}"#,
            br#"{"jsonrpc":"2.0","id":8,"error":{"code":-1,"message":"no"}}"#,
        ];
        let input: Vec<u8> = bodies.iter().flat_map(|b| frame(b)).collect();
        let expected: Vec<Value> = bodies
            .iter()
            .map(|b| serde_json::from_slice(b).unwrap_or_default())
            .collect();
        assert_eq!(check_all(&input), expected);
    }

    #[test]
    fn bad_headers_are_skipped_to_the_next_message() {
        let good = br#"{"jsonrpc":"2.0","method":"exit"}"#;
        let mut input = b"garbage\r\n\r\n".to_vec();
        input.extend(b"Content-Length: lots\r\n\r\n{}");
        input.extend(b"noise before ");
        input.extend(frame(good));
        input
            .extend(b"content-length: 2\r\nContent-Type: application/json; charset=latin1\r\n\r\n");
        input.extend(br#"{}"#);
        input.extend(frame(good));
        let bodies = check_all(&input);
        let good: Value = serde_json::from_slice(good).unwrap_or_default();
        // The lower-case header and the other charset are read; `{}` is an invalid request.
        assert_eq!(bodies.len(), 3, "{bodies:?}");
        assert_eq!(bodies[0], good);
        assert_eq!(bodies[1]["params"]["code"], json!(-32600));
        assert_eq!(bodies[2], good);
    }

    #[test]
    fn a_malformed_request_is_answered_with_its_error() {
        let request = |code: i64, id: Value| {
            let value = json!({"jsonrpc": "2.0", "id": id, "method": MALFORMED,
                               "params": {"code": code, "message": "bad"}});
            serde_json::from_value::<Request>(value).ok()
        };
        let parse = request(-32700, Value::Null).and_then(answer);
        let (id, result) = parse.expect("an answer").into_parts();
        assert_eq!(id, Id::Null);
        assert_eq!(result.err().map(|e| e.code), Some(ErrorCode::ParseError));
        let invalid = request(-32600, json!(4)).and_then(answer);
        let (id, result) = invalid.expect("an answer").into_parts();
        assert_eq!(id, Id::Number(4));
        assert_eq!(
            result.err().map(|e| e.code),
            Some(ErrorCode::InvalidRequest)
        );
    }
}
