//! Parsing of `/v1/chat/completions` and `/v1/embeddings` reply bodies.
//!
//! Every function takes untrusted bytes and returns a typed [`LlmError`] naming the JSON
//! field (`choices[0].message.content`, `data[3].embedding[17]`) or the byte offset of the
//! problem; none can panic. serde_json's recursion limit bounds nesting depth.

use serde_json::Value;

use super::LlmError;
use memforest::memory::model::{estimate_tokens, Usage};

/// The useful part of a chat completion.
#[derive(Debug, Clone, PartialEq)]
pub struct ChatReply {
    /// `choices[0].message.content`.
    pub content: String,
    /// `choices[0].finish_reason` when present; `"length"` means the model hit
    /// `max_tokens` and the content is cut off.
    pub finish_reason: Option<String>,
    /// Reported or estimated token usage.
    pub usage: Usage,
}

/// The vectors of an embeddings reply, in input order.
#[derive(Debug, Clone, PartialEq)]
pub struct EmbeddingReply {
    /// One vector per input, all of the same dimension.
    pub vectors: Vec<Vec<f32>>,
    /// Reported (`usage.prompt_tokens`) or estimated token usage; completion is 0.
    pub usage: Usage,
}

/// Parses a chat completion body. `prompt_tokens` (the estimate for all messages, see
/// [`estimate_tokens`]) is used when the body has no usable `usage`; the completion is
/// then estimated from `content`.
///
/// # Errors
/// [`LlmError::NotUtf8`], [`LlmError::MalformedJson`], [`LlmError::MissingField`] or
/// [`LlmError::WrongType`] for `choices`, `choices[0].message.content` and
/// `choices[0].finish_reason`. A malformed `usage` is not an error: it falls back to the
/// estimate.
pub fn parse_chat_reply(body: &[u8], prompt_tokens: u64) -> Result<ChatReply, LlmError> {
    let root = parse_json(body)?;
    let choice = field(&root, "choices")?
        .as_array()
        .ok_or_else(|| wrong("choices", "an array"))?
        .first()
        .ok_or_else(|| missing("choices[0]"))?;
    let message = field(choice, "message").map_err(|_| missing("choices[0].message"))?;
    let content = field(message, "content")
        .map_err(|_| missing("choices[0].message.content"))?
        .as_str()
        .ok_or_else(|| wrong("choices[0].message.content", "a string"))?
        .to_owned();
    let finish_reason = match choice.get("finish_reason") {
        None | Some(Value::Null) => None,
        Some(Value::String(reason)) => Some(reason.clone()),
        Some(_) => return Err(wrong("choices[0].finish_reason", "a string")),
    };
    let usage = reported_usage(&root, true).unwrap_or_else(|| Usage {
        prompt_tokens,
        completion_tokens: estimate_tokens(&content),
        reported: false,
    });
    Ok(ChatReply {
        content,
        finish_reason,
        usage,
    })
}

/// Parses an embeddings body for a request of `inputs` inputs whose estimated size is
/// `prompt_tokens` (used when the body has no usable `usage`). `dims`, when given, is the dimension every vector must have; otherwise all
/// must match the first.
///
/// # Errors
/// As [`parse_chat_reply`] for the body and the fields `data`, `data[i].embedding[j]`
/// (finite numbers within `f32` range) and `data[i].index` (distinct, below the count);
/// [`LlmError::EmbeddingCount`] and [`LlmError::EmbeddingDimension`] for shape mismatches.
pub fn parse_embedding_reply(
    body: &[u8],
    inputs: usize,
    prompt_tokens: u64,
    dims: Option<usize>,
) -> Result<EmbeddingReply, LlmError> {
    let root = parse_json(body)?;
    let data = field(&root, "data")?
        .as_array()
        .ok_or_else(|| wrong("data", "an array"))?;
    if data.len() != inputs {
        return Err(LlmError::EmbeddingCount {
            expected: inputs,
            got: data.len(),
        });
    }
    let mut slots: Vec<Option<Vec<f32>>> = vec![None; inputs];
    for (i, item) in data.iter().enumerate() {
        let index = match item.get("index") {
            None | Some(Value::Null) => i,
            Some(v) => v
                .as_u64()
                .and_then(|n| usize::try_from(n).ok())
                .filter(|&n| n < inputs)
                .ok_or_else(|| wrong(&format!("data[{i}].index"), "an input index"))?,
        };
        let vector = parse_vector(item, i)?;
        let slot = slots
            .get_mut(index)
            .ok_or_else(|| wrong(&format!("data[{i}].index"), "an input index"))?;
        if slot.replace(vector).is_some() {
            return Err(wrong(&format!("data[{i}].index"), "a distinct input index"));
        }
    }
    let vectors: Vec<Vec<f32>> = slots.into_iter().flatten().collect();
    let expected = dims.or_else(|| vectors.first().map(Vec::len)).unwrap_or(0);
    for (index, vector) in vectors.iter().enumerate() {
        if vector.len() != expected || expected == 0 {
            return Err(LlmError::EmbeddingDimension {
                index,
                expected,
                got: vector.len(),
            });
        }
    }
    let usage = reported_usage(&root, false).unwrap_or(Usage {
        prompt_tokens,
        completion_tokens: 0,
        reported: false,
    });
    Ok(EmbeddingReply { vectors, usage })
}

fn parse_vector(item: &Value, i: usize) -> Result<Vec<f32>, LlmError> {
    let name = format!("data[{i}].embedding");
    let values = field(item, "embedding")
        .map_err(|_| missing(&name))?
        .as_array()
        .ok_or_else(|| wrong(&name, "an array of numbers"))?;
    values
        .iter()
        .enumerate()
        .map(|(j, v)| {
            #[expect(clippy::cast_possible_truncation, reason = "range checked just below")]
            let x = v.as_f64().map(|x| x as f32);
            x.filter(|x| x.is_finite())
                .ok_or_else(|| wrong(&format!("{name}[{j}]"), "a finite f32"))
        })
        .collect()
}

/// `usage` as the server reports it, if it is well-formed.
fn reported_usage(root: &Value, with_completion: bool) -> Option<Usage> {
    let usage = root.get("usage")?;
    let prompt_tokens = usage.get("prompt_tokens")?.as_u64()?;
    let completion_tokens = if with_completion {
        usage.get("completion_tokens")?.as_u64()?
    } else {
        0
    };
    Some(Usage {
        prompt_tokens,
        completion_tokens,
        reported: true,
    })
}

/// Decodes UTF-8 and JSON, reporting the byte offset of the first problem.
pub(crate) fn parse_json(body: &[u8]) -> Result<Value, LlmError> {
    let text = std::str::from_utf8(body).map_err(|e| LlmError::NotUtf8 {
        offset: e.valid_up_to(),
    })?;
    serde_json::from_str(text).map_err(|e| LlmError::MalformedJson {
        offset: byte_offset(text, e.line(), e.column()),
        message: e.to_string(),
    })
}

/// Converts serde_json's 1-based line / column (bytes) into a byte offset, clamped to the text.
pub(crate) fn byte_offset(text: &str, line: usize, column: usize) -> usize {
    let line_start: usize = text
        .split_inclusive('\n')
        .take(line.saturating_sub(1))
        .map(str::len)
        .sum();
    line_start
        .saturating_add(column.saturating_sub(1))
        .min(text.len())
}

fn field<'a>(value: &'a Value, name: &str) -> Result<&'a Value, LlmError> {
    match value.get(name) {
        None | Some(Value::Null) => Err(missing(name)),
        Some(v) => Ok(v),
    }
}

fn missing(field: &str) -> LlmError {
    LlmError::MissingField {
        field: field.to_owned(),
    }
}

fn wrong(field: &str, expected: &'static str) -> LlmError {
    LlmError::WrongType {
        field: field.to_owned(),
        expected,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chat_reply_with_and_without_usage() {
        let body = br#"{"choices":[{"message":{"role":"assistant","content":"hi there"},"finish_reason":"stop"}],
            "usage":{"prompt_tokens":12,"completion_tokens":3,"total_tokens":15}}"#;
        let reply = parse_chat_reply(body, 100).unwrap();
        assert_eq!(reply.content, "hi there");
        assert_eq!(reply.finish_reason.as_deref(), Some("stop"));
        assert_eq!(
            reply.usage,
            Usage {
                prompt_tokens: 12,
                completion_tokens: 3,
                reported: true
            }
        );

        let body =
            br#"{"choices":[{"message":{"content":"12345678"}}],"usage":{"prompt_tokens":"x"}}"#;
        let reply = parse_chat_reply(body, 10).unwrap();
        assert_eq!(
            reply.usage,
            Usage {
                prompt_tokens: 10,
                completion_tokens: 2,
                reported: false
            }
        );
    }

    #[test]
    fn chat_reply_field_errors_name_the_field() {
        let cases: [(&[u8], &str); 6] = [
            (br#"{}"#, "choices"),
            (br#"{"choices":{}}"#, "choices"),
            (br#"{"choices":[]}"#, "choices[0]"),
            (br#"{"choices":[{}]}"#, "choices[0].message"),
            (
                br#"{"choices":[{"message":{"content":null}}]}"#,
                "choices[0].message.content",
            ),
            (
                br#"{"choices":[{"message":{"content":7}}]}"#,
                "choices[0].message.content",
            ),
        ];
        for (body, name) in cases {
            match parse_chat_reply(body, 0) {
                Err(LlmError::MissingField { field } | LlmError::WrongType { field, .. }) => {
                    assert_eq!(field, name, "{}", String::from_utf8_lossy(body))
                }
                other => panic!("{other:?}"),
            }
        }
    }

    #[test]
    fn malformed_bodies_report_offsets() {
        assert!(matches!(
            parse_chat_reply(b"{\"a\": \xff}", 0),
            Err(LlmError::NotUtf8 { offset: 6 })
        ));
        match parse_chat_reply(b"{\n  \"choices\": [tru", 0) {
            Err(LlmError::MalformedJson { offset, .. }) => {
                assert!((15..=19).contains(&offset), "{offset}")
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(byte_offset("ab\ncd\nef", 3, 2), 7);
        assert_eq!(byte_offset("ab", 9, 9), 2);
    }

    #[test]
    fn embeddings_are_ordered_by_index_and_checked() {
        let body = br#"{"data":[{"index":1,"embedding":[3,4]},{"index":0,"embedding":[1,2]}],"usage":{"prompt_tokens":5}}"#;
        let reply = parse_embedding_reply(body, 2, 8, Some(2)).unwrap();
        assert_eq!(reply.vectors, vec![vec![1.0, 2.0], vec![3.0, 4.0]]);
        assert_eq!(
            reply.usage,
            Usage {
                prompt_tokens: 5,
                completion_tokens: 0,
                reported: true
            }
        );

        let dup = br#"{"data":[{"index":0,"embedding":[1]},{"index":0,"embedding":[1]}]}"#;
        assert!(
            matches!(parse_embedding_reply(dup, 2, 0, None), Err(LlmError::WrongType { field, .. }) if field == "data[1].index")
        );
        let ragged = br#"{"data":[{"embedding":[1,2]},{"embedding":[1]}]}"#;
        assert!(matches!(
            parse_embedding_reply(ragged, 2, 0, None),
            Err(LlmError::EmbeddingDimension {
                index: 1,
                expected: 2,
                got: 1
            })
        ));
        let huge = br#"{"data":[{"embedding":[1e300]}]}"#;
        assert!(
            matches!(parse_embedding_reply(huge, 1, 0, None), Err(LlmError::WrongType { field, .. }) if field == "data[0].embedding[0]")
        );
        let empty = br#"{"data":[{"embedding":[]}]}"#;
        assert!(matches!(
            parse_embedding_reply(empty, 1, 0, None),
            Err(LlmError::EmbeddingDimension { .. })
        ));
        assert!(matches!(
            parse_embedding_reply(body, 3, 0, None),
            Err(LlmError::EmbeddingCount {
                expected: 3,
                got: 2
            })
        ));
        assert_eq!(
            parse_embedding_reply(body, 2, 8, None)
                .unwrap()
                .vectors
                .len(),
            2
        );
    }
}
