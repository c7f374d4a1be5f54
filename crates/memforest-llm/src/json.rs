//! Recovering the JSON payload from a model's free-form reply.
//!
//! Models wrap JSON in code fences, put prose before or after it, and stop mid-array when
//! they hit `max_tokens`. [`extract_json`] handles all three, deterministically (no
//! randomness, no allocation beyond the input's size times a small constant, bounded work:
//! at most [`MAX_CANDIDATES`] start positions are tried, each in linear time).

use serde_json::Value;

use super::reply::byte_offset;

/// Start positions (`{` or `[`) tried before giving up.
pub const MAX_CANDIDATES: usize = 16;

/// The JSON found in a reply.
#[derive(Debug, Clone, PartialEq)]
pub struct JsonPayload {
    /// The parsed value (for a truncated reply: the value with the cut array closed).
    pub value: Value,
    /// Byte offset in the reply where the JSON starts.
    pub start: usize,
    /// Set when the reply ended inside the JSON and its complete parts were salvaged.
    pub truncated: Option<Truncation>,
}

/// Where a reply was cut and what survived.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Truncation {
    /// Byte offset in the reply where the JSON text ends unfinished.
    pub at: usize,
    /// Complete elements kept from the outermost open array (or, when no array was open,
    /// complete members of the outermost object); anything after them was dropped.
    pub kept: usize,
}

/// Why no JSON payload could be recovered.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum JsonExtractError {
    /// The reply contains no `{` or `[`.
    #[error("no JSON object or array in the reply")]
    NoJson,
    /// The first candidate is syntactically wrong (not merely cut short).
    #[error("malformed JSON at byte {offset}: {message}")]
    Malformed {
        /// Byte offset in the reply.
        offset: usize,
        /// serde_json's description.
        message: String,
    },
    /// The reply ends inside a JSON value that has no open array to salvage items from.
    #[error("JSON cut off at byte {offset} with nothing salvageable")]
    Truncated {
        /// Byte offset in the reply where the text ends.
        offset: usize,
    },
}

/// Finds and parses the JSON object or array in `reply`.
///
/// Looks inside the first ```` ``` ```` code fence first (an unterminated fence runs to the
/// end), then in the whole reply. Within that text it tries each `{` / `[` in order (prose
/// before the JSON, or braces inside the prose, are skipped) and returns the first complete
/// value; text after it is ignored. If the text ends inside the value, the outermost array
/// still open is cut after its last complete element (with no array open: the outermost
/// object after its last complete member), every container around the cut is closed, and
/// the result is returned with [`JsonPayload::truncated`] set.
///
/// # Errors
/// [`JsonExtractError::NoJson`] when no candidate exists; otherwise the error of the first
/// candidate ([`Malformed`](JsonExtractError::Malformed) or
/// [`Truncated`](JsonExtractError::Truncated)).
pub fn extract_json(reply: &str) -> Result<JsonPayload, JsonExtractError> {
    let fenced = fenced_region(reply);
    let mut first_error = None;
    for (base, text) in fenced.into_iter().chain(std::iter::once((0, reply))) {
        match scan_candidates(base, text) {
            Ok(payload) => return Ok(payload),
            // An empty fence says nothing about the rest of the reply.
            Err(JsonExtractError::NoJson) => {}
            Err(e) => {
                first_error.get_or_insert(e);
            }
        }
    }
    Err(first_error.unwrap_or(JsonExtractError::NoJson))
}

/// The body of the first code fence: `(offset, text)`, skipping the info string line.
fn fenced_region(reply: &str) -> Option<(usize, &str)> {
    let open = reply.find("```")?;
    let after = open + 3;
    let body_start = after
        + reply
            .get(after..)?
            .find('\n')
            .map_or(reply.len() - after, |i| i + 1);
    let body = reply.get(body_start..)?;
    let body = body
        .find("```")
        .and_then(|end| body.get(..end))
        .unwrap_or(body);
    Some((body_start, body))
}

fn scan_candidates(base: usize, text: &str) -> Result<JsonPayload, JsonExtractError> {
    let mut first_error = None;
    let starts = text
        .char_indices()
        .filter(|&(_, c)| c == '{' || c == '[')
        .take(MAX_CANDIDATES);
    for (start, _) in starts {
        let Some(candidate) = text.get(start..) else {
            continue;
        };
        let offset = base + start;
        let result = match serde_json::Deserializer::from_str(candidate)
            .into_iter::<Value>()
            .next()
        {
            Some(Ok(value)) => {
                return Ok(JsonPayload {
                    value,
                    start: offset,
                    truncated: None,
                })
            }
            Some(Err(e)) if e.is_eof() => salvage(candidate, offset),
            Some(Err(e)) => Err(JsonExtractError::Malformed {
                offset: offset + byte_offset(candidate, e.line(), e.column()),
                message: e.to_string(),
            }),
            None => Err(JsonExtractError::Truncated { offset }),
        };
        match result {
            Ok(payload) => return Ok(payload),
            Err(e) => {
                first_error.get_or_insert(e);
            }
        }
    }
    Err(first_error.unwrap_or(JsonExtractError::NoJson))
}

/// An open container while scanning a cut-off value.
struct Frame {
    array: bool,
    /// Byte just after the opening bracket.
    open_end: usize,
    /// Byte just after the last complete element (array) or member (object).
    complete_end: Option<usize>,
    /// Complete elements or members seen.
    kept: usize,
    /// The last element was a container whose close was already counted.
    counted_close: bool,
}

/// Closes a value that `text` (a valid JSON prefix) ends inside: cut the outermost open array
/// after its last complete element (or, with no array open, the outermost object after its
/// last complete member) and close every container around the cut.
fn salvage(text: &str, offset: usize) -> Result<JsonPayload, JsonExtractError> {
    let cut_off = || JsonExtractError::Truncated {
        offset: offset + text.len(),
    };
    let mut stack: Vec<Frame> = Vec::new();
    let (mut in_string, mut escaped) = (false, false);
    for (i, byte) in text.bytes().enumerate() {
        if in_string {
            match (escaped, byte) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match byte {
            b'"' => in_string = true,
            b'{' | b'[' => stack.push(Frame {
                array: byte == b'[',
                open_end: i + 1,
                complete_end: None,
                kept: 0,
                counted_close: false,
            }),
            b'}' | b']' => {
                stack.pop();
                if let Some(parent) = stack.last_mut() {
                    parent.kept += 1;
                    parent.complete_end = Some(i + 1);
                    parent.counted_close = true;
                }
            }
            b',' => {
                if let Some(frame) = stack.last_mut() {
                    if !frame.counted_close {
                        frame.kept += 1;
                        frame.complete_end = Some(i);
                    }
                    frame.counted_close = false;
                }
            }
            _ => {}
        }
    }
    let outer = match stack.iter().position(|f| f.array) {
        Some(array) => array,
        None if stack
            .first()
            .is_some_and(|root| root.complete_end.is_some()) =>
        {
            0
        }
        None => return Err(cut_off()),
    };
    let frame = stack.get(outer).ok_or_else(cut_off)?;
    let cut = frame.complete_end.unwrap_or(frame.open_end);
    let mut closed = text.get(..cut).ok_or_else(cut_off)?.to_owned();
    for open in stack.iter().take(outer + 1).rev() {
        closed.push(if open.array { ']' } else { '}' });
    }
    let value = serde_json::from_str(&closed).map_err(|_| cut_off())?;
    Ok(JsonPayload {
        value,
        start: offset,
        truncated: Some(Truncation {
            at: offset + text.len(),
            kept: frame.kept,
        }),
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn value(reply: &str) -> Value {
        extract_json(reply).unwrap().value
    }

    #[test]
    fn plain_fenced_and_prose_wrapped() {
        assert_eq!(value(r#"{"a": 1}"#), json!({"a": 1}));
        assert_eq!(
            value("```json\n{\"a\": [1, 2]}\n```\nDone."),
            json!({"a": [1, 2]})
        );
        assert_eq!(
            value("Sure! Here it is {sort of}: [1, {\"b\": \"}\"}] trailing"),
            json!([1, {"b": "}"}])
        );
        let payload = extract_json("x ```\n[true]").unwrap();
        assert_eq!((payload.value, payload.start), (json!([true]), 6));
    }

    #[test]
    fn truncated_array_keeps_complete_items() {
        let reply = r#"{"items": [{"t": "a"}, {"t": "b, [c]"}, {"t": "d"#;
        let payload = extract_json(reply).unwrap();
        assert_eq!(
            payload.value,
            json!({"items": [{"t": "a"}, {"t": "b, [c]"}]})
        );
        assert_eq!(
            payload.truncated,
            Some(Truncation {
                at: reply.len(),
                kept: 2
            })
        );

        let payload = extract_json("```json\n[1, 22, 33").unwrap();
        assert_eq!(
            payload.value,
            json!([1, 22]),
            "a scalar cut at the end may be partial"
        );
        assert_eq!(payload.truncated.map(|t| t.kept), Some(2));

        let payload = extract_json(r#"[{"a": [1, 2"#).unwrap();
        assert_eq!(payload.value, json!([]));
        assert_eq!(payload.truncated.map(|t| t.kept), Some(0));

        let payload = extract_json(r#"{"items": [{"t": "a"}], "note": "cut"#).unwrap();
        assert_eq!(payload.value, json!({"items": [{"t": "a"}]}));
        assert_eq!(payload.truncated.map(|t| t.kept), Some(1));
    }

    #[test]
    fn errors() {
        assert_eq!(extract_json("no json here"), Err(JsonExtractError::NoJson));
        // A fence with nothing after its info line, then a cut-off object in the prose.
        assert_eq!(
            extract_json("{\"a\": \"```json"),
            Err(JsonExtractError::Truncated { offset: 14 })
        );
        assert_eq!(
            extract_json(r#"{"a": "b"#),
            Err(JsonExtractError::Truncated { offset: 8 })
        );
        assert!(matches!(
            extract_json("ok {\"a\" 1}"),
            Err(JsonExtractError::Malformed { offset: 8, .. })
        ));
    }
}
