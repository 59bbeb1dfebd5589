//! The MCP server's transport: JSON-RPC 2.0 messages, one per line, over
//! standard input and output. Every line is answered as JSON-RPC 2.0 says,
//! before the protocol layer sees it: a line that is not JSON gets a Parse
//! error (-32700, id null); JSON that is not a request, notification or
//! response gets an Invalid Request error (-32600) with the line's id when
//! it has a usable one (else null); a request whose method is known but
//! whose parameters do not fit gets Invalid params (-32602). Notifications
//! are never answered, so a malformed line without an id that is still an
//! object with a method is dropped.

use futures::{Sink, Stream};
use rmcp::RoleServer;
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use serde_json::{Value, json};
use std::sync::Arc;
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncWrite, AsyncWriteExt};
use tokio::sync::Mutex;

/// JSON-RPC's error codes for what a line can be wrong in.
const PARSE_ERROR: i64 = -32700;
const INVALID_REQUEST: i64 = -32600;
const INVALID_PARAMS: i64 = -32602;

/// What a line of input is.
#[derive(Debug)]
enum Incoming {
    /// A message for the protocol layer.
    Message(Box<RxJsonRpcMessage<RoleServer>>),
    /// An error response to write back at once.
    Reply(Value),
    /// Nothing to do (a blank line, a malformed notification).
    Skip,
}

/// An error response with `id`.
fn error(code: i64, message: &str, id: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}

/// Tells what `line` is.
fn classify(line: &str) -> Incoming {
    if line.trim().is_empty() {
        return Incoming::Skip;
    }
    let value: Value = match serde_json::from_str(line) {
        Ok(v) => v,
        Err(_) => return Incoming::Reply(error(PARSE_ERROR, "Parse error", Value::Null)),
    };
    let Some(object) = value.as_object() else {
        return Incoming::Reply(error(INVALID_REQUEST, "Invalid Request", Value::Null));
    };
    // An id is a string, a number or null; any other is no id to answer to.
    let id = match object.get("id") {
        Some(id @ (Value::String(_) | Value::Number(_) | Value::Null)) => Some(id.clone()),
        Some(_) => None,
        None => None,
    };
    let has_id = object.contains_key("id");
    let invalid = |why: &str| {
        let message = format!("Invalid Request: {why}");
        Incoming::Reply(error(INVALID_REQUEST, &message, id.clone().unwrap_or(Value::Null)))
    };
    if object.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return invalid("\"jsonrpc\" must be \"2.0\"");
    }
    if has_id && id.is_none() {
        return invalid("\"id\" must be a string, a number or null");
    }
    let method = object.get("method");
    match method {
        Some(Value::String(_)) => {}
        Some(_) => return invalid("\"method\" must be a string"),
        // A response to a request of the server's.
        None if has_id && (object.contains_key("result") || object.contains_key("error")) => {}
        None => return invalid("no \"method\""),
    }
    match serde_json::from_value::<RxJsonRpcMessage<RoleServer>>(value.clone()) {
        Ok(message) => Incoming::Message(Box::new(message)),
        // A notification is never answered, even when malformed.
        Err(_) if !has_id => Incoming::Skip,
        Err(e) if method.is_some() => Incoming::Reply(error(
            INVALID_PARAMS,
            &format!("Invalid params: {e}"),
            id.unwrap_or(Value::Null),
        )),
        Err(e) => invalid(&e.to_string()),
    }
}

/// Writes one message as a line, whole, and flushes it.
async fn write_line<W: AsyncWrite + Unpin>(
    out: &Mutex<W>,
    value: &impl serde::Serialize,
) -> std::io::Result<()> {
    let mut line = serde_json::to_vec(value).map_err(std::io::Error::other)?;
    line.push(b'\n');
    let mut out = out.lock().await;
    out.write_all(&line).await?;
    out.flush().await
}

/// The transport over `input` and `output`: a sink of the server's
/// messages and a stream of the client's, answering malformed lines
/// itself.
pub(crate) fn transport<R, W>(
    input: R,
    output: W,
) -> (
    impl Sink<TxJsonRpcMessage<RoleServer>, Error = std::io::Error> + Send + Unpin + 'static,
    impl Stream<Item = RxJsonRpcMessage<RoleServer>> + Send + Unpin + 'static,
)
where
    R: AsyncBufRead + Send + Unpin + 'static,
    W: AsyncWrite + Send + Unpin + 'static,
{
    let output = Arc::new(Mutex::new(output));
    let sink = Box::pin(futures::sink::unfold(
        output.clone(),
        |out, message: TxJsonRpcMessage<RoleServer>| async move {
            write_line(&out, &message).await?;
            Ok::<_, std::io::Error>(out)
        },
    ));
    let lines = input.lines();
    let stream =
        Box::pin(futures::stream::unfold((lines, output), |(mut lines, out)| async move {
            loop {
                // The end of input, or input that cannot be read, ends the
                // session.
                let line = lines.next_line().await.ok()??;
                match classify(&line) {
                    Incoming::Message(message) => return Some((*message, (lines, out))),
                    Incoming::Reply(reply) => {
                        if write_line(&out, &reply).await.is_err() {
                            return None;
                        }
                    }
                    Incoming::Skip => {}
                }
            }
        }));
    (sink, stream)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reply(line: &str) -> Value {
        match classify(line) {
            Incoming::Reply(v) => v,
            other => panic!("{line}: {other:?}"),
        }
    }

    #[test]
    fn every_malformed_line_is_answered_as_json_rpc_says() {
        let r = reply("this is not JSON");
        assert_eq!(r["error"]["code"], PARSE_ERROR);
        assert_eq!(r["id"], Value::Null);
        assert_eq!(r["jsonrpc"], "2.0");
        let r = reply(r#"{"jsonrpc":"2.0","id":7}"#);
        assert_eq!((r["error"]["code"].as_i64(), &r["id"]), (Some(INVALID_REQUEST), &json!(7)));
        let r = reply(r#"{"jsonrpc":"2.0","id":"a","method":3}"#);
        assert_eq!((r["error"]["code"].as_i64(), &r["id"]), (Some(INVALID_REQUEST), &json!("a")));
        let r = reply(r#"{"jsonrpc":"1.0","id":8,"method":"ping"}"#);
        assert_eq!((r["error"]["code"].as_i64(), &r["id"]), (Some(INVALID_REQUEST), &json!(8)));
        let r = reply(r#"{"jsonrpc":"2.0","id":{"x":1},"method":"ping"}"#);
        assert_eq!((r["error"]["code"].as_i64(), &r["id"]), (Some(INVALID_REQUEST), &Value::Null));
        let r = reply("[1, 2]");
        assert_eq!(r["error"]["code"], INVALID_REQUEST);
        let r = reply(r#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":7}"#);
        assert_eq!((r["error"]["code"].as_i64(), &r["id"]), (Some(INVALID_PARAMS), &json!(9)));
    }

    #[test]
    fn requests_notifications_and_blank_lines_pass() {
        assert!(matches!(
            classify(r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#),
            Incoming::Message(_)
        ));
        assert!(matches!(
            classify(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#),
            Incoming::Message(_)
        ));
        assert!(matches!(classify("   "), Incoming::Skip));
        // A malformed notification has no one to answer.
        assert!(matches!(
            classify(r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":7}"#),
            Incoming::Skip | Incoming::Message(_)
        ));
    }
}
