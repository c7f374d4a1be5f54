//! Validating batched replies: the items of several MemCells ("excerpts", [`excerpt_id`])
//! or the summaries of several tree nodes ([`node_id`]) from one chat call, each entry
//! named by its id.
//!
//! The reply is untrusted as a whole and per entry: a reply with no JSON fails the call
//! (every cell or node is retried), while an entry that is missing or unusable fails only
//! its own cell or node (retried on its own); a repeated id keeps its first entry. Each
//! excerpt's items are validated by [`parse_item_list`], against that excerpt's turn ids.

use serde_json::{Map, Value};

use super::items::{parse_item_list, ParsedItems};
use super::json::{extract_json, JsonPayload};
use super::LlmError;

/// The id of the `index`-th excerpt of a batched extraction prompt (0-based): `E1`, `E2`,
/// ...
#[must_use]
pub fn excerpt_id(index: usize) -> String {
    format!("{}{}", EXCERPTS.prefix, index + 1)
}

/// The id of the `index`-th node of a batched summary prompt (0-based): `N1`, `N2`, ...
#[must_use]
pub fn node_id(index: usize) -> String {
    format!("{}{}", NODES.prefix, index + 1)
}

/// How a batched reply names its entries: `{LIST: [{KEY: "<prefix>1", ...}, ...]}`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Shape {
    /// The array of entries.
    list: &'static str,
    /// The id field of an entry.
    key: &'static str,
    /// The letter before an id's number.
    prefix: char,
}

/// Batched extraction: `{"excerpts": [{"excerpt": "E1", "items": [...]}]}`.
const EXCERPTS: Shape = Shape {
    list: "excerpts",
    key: "excerpt",
    prefix: 'E',
};

/// Batched summaries: `{"summaries": [{"node": "N1", "summary": "..."}]}`.
pub(crate) const NODES: Shape = Shape {
    list: "summaries",
    key: "node",
    prefix: 'N',
};

/// The outcome of validating one batched extraction reply.
#[derive(Debug, Default)]
pub struct ParsedBatch {
    /// Per excerpt, in the prompt's order: its items, or why the reply had none usable.
    pub excerpts: Vec<Result<ParsedItems, LlmError>>,
    /// Notes about the reply as a whole (a cut-off reply, unknown or repeated ids).
    pub notes: Vec<String>,
}

/// Parses the model's message `content` for a prompt of `turn_ids.len()` excerpts, the
/// `i`-th with turn ids `turn_ids[i]`.
///
/// Accepted shapes: `{"excerpts": [{"excerpt": "E1", "items": [...]}, ...]}`, the bare
/// array of those entries, or an object keyed by excerpt id (`{"E1": {"items": [...]}}` or
/// `{"E1": [...]}`). Ids match without regard to case and surrounding space; a number `n`
/// stands for `En`. A reply cut off inside the excerpt list keeps its complete entries.
///
/// # Errors
/// [`LlmError::Payload`] when no JSON can be recovered; [`LlmError::Unusable`] when the JSON
/// holds no excerpt list.
pub fn parse_batch(content: &str, turn_ids: &[Vec<String>]) -> Result<ParsedBatch, LlmError> {
    let payload = extract_json(content)?;
    let mut notes = Vec::new();
    let found = answers(&payload, EXCERPTS, turn_ids.len(), &mut notes)?;
    let excerpts = found
        .into_iter()
        .zip(turn_ids)
        .enumerate()
        .map(|(i, (items, ids))| match items {
            Some(items) => parse_item_list(items, ids),
            None => Err(missing(EXCERPTS, i)),
        })
        .collect();
    Ok(ParsedBatch { excerpts, notes })
}

/// The error of an id the reply has no entry for.
pub(crate) fn missing(shape: Shape, index: usize) -> LlmError {
    LlmError::Unusable(format!(
        "the reply has no entry for {} {}{}",
        shape.key,
        shape.prefix,
        index + 1
    ))
}

/// The entry answering each of `n` ids (`None`: the reply has none) in a batched reply of
/// `shape`: the list of entries (or the bare array), or an object keyed by id. A repeated
/// id keeps its first entry; repeats, unknown ids and a cut-off reply are noted.
///
/// # Errors
/// [`LlmError::Unusable`] when the JSON is neither an object nor an array, or its list is
/// not an array.
pub(crate) fn answers<'a>(
    payload: &'a JsonPayload,
    shape: Shape,
    n: usize,
    notes: &mut Vec<String>,
) -> Result<Vec<Option<&'a Value>>, LlmError> {
    if let Some(cut) = payload.truncated {
        notes.push(format!(
            "reply cut off at byte {}: kept {} complete entries",
            cut.at, cut.kept
        ));
    }
    let entries = match &payload.value {
        Value::Object(map) => match map.get(shape.list) {
            Some(Value::Array(list)) => list.iter().filter_map(|e| listed(e, shape)).collect(),
            Some(_) => {
                return Err(LlmError::Unusable(format!(
                    "`{}` is not an array",
                    shape.list
                )))
            }
            None => keyed(map, shape),
        },
        Value::Array(list) => list.iter().filter_map(|e| listed(e, shape)).collect(),
        _ => {
            return Err(LlmError::Unusable(
                "the reply's JSON is not an object or array".into(),
            ))
        }
    };
    let mut found: Vec<Option<&Value>> = vec![None; n];
    for (index, id, value) in entries {
        match index.filter(|&i| i < n) {
            Some(i) if found[i].is_none() => found[i] = Some(value),
            Some(i) => notes.push(format!(
                "{} {}{} answered twice: first kept",
                shape.key,
                shape.prefix,
                i + 1
            )),
            None => notes.push(format!("entry for unknown {} {id} ignored", shape.key)),
        }
    }
    Ok(found)
}

/// An entry of a batched reply: the index its id names (`None`: no such id), the id as
/// written (for notes), and the entry.
type Entry<'a> = (Option<usize>, String, &'a Value);

/// An entry of an entry list: an object with the shape's id field (`id` is accepted for
/// it); `None` for anything else, which then counts as a missing entry.
fn listed(entry: &Value, shape: Shape) -> Option<Entry<'_>> {
    let map = entry.as_object()?;
    let id = map.get(shape.key).or_else(|| map.get("id"))?;
    let index = match id {
        Value::String(s) => index_of(s, shape),
        Value::Number(n) => n
            .as_u64()
            .and_then(|n| usize::try_from(n).ok())
            .and_then(|n| n.checked_sub(1)),
        _ => None,
    };
    Some((index, id.to_string(), entry))
}

/// The entries of an object keyed by id.
fn keyed(map: &Map<String, Value>, shape: Shape) -> Vec<Entry<'_>> {
    map.iter()
        .map(|(k, v)| (index_of(k, shape), k.clone(), v))
        .collect()
}

/// The 0-based index an id names: for prefix `E`, `E3`, `e3`, ` E3 ` and `3` name 2.
fn index_of(id: &str, shape: Shape) -> Option<usize> {
    let s = id.trim();
    let digits = s
        .strip_prefix(shape.prefix)
        .or_else(|| s.strip_prefix(shape.prefix.to_ascii_lowercase()))
        .unwrap_or(s);
    digits.parse::<usize>().ok()?.checked_sub(1)
}
