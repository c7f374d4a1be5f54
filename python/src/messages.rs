//! The `messages` argument of `Memory.add`: a string (one user message), a message dict, or
//! a list of message dicts and strings.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use memforest::{Message, Role};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString, PyTuple};

use crate::convert;

/// `messages` as [`Message`]s. Each dict has `role` (`"user"`, `"assistant"` or
/// `"system"`) and `content` (a string: an OpenAI-style list of content parts is refused),
/// optionally `name` (the speaker), `id` (the caller's message id) and `timestamp` (a
/// `datetime`); other keys (e.g. OpenAI's `tool_calls`) are ignored. `timestamp` and `metadata` apply to every message without
/// its own.
///
/// # Errors
/// `TypeError` for a value of the wrong type; `ValueError` for an unknown role, a missing
/// key or no message at all. Each names the message and key (`messages[1].name: expected
/// str, got dict`).
pub(crate) fn parse(
    messages: &Bound<'_, PyAny>,
    timestamp: Option<DateTime<Utc>>,
    metadata: &BTreeMap<String, String>,
) -> PyResult<Vec<Message>> {
    let items: Vec<Bound<'_, PyAny>> =
        if messages.is_instance_of::<PyString>() || messages.is_instance_of::<PyDict>() {
            vec![messages.clone()]
        } else if messages.is_instance_of::<PyList>() || messages.is_instance_of::<PyTuple>() {
            messages.try_iter()?.collect::<PyResult<_>>()?
        } else {
            return Err(PyTypeError::new_err(format!(
                "messages must be a str, a dict or a list of them, not {}",
                messages.get_type().name()?
            )));
        };
    if items.is_empty() {
        return Err(PyValueError::new_err("messages is empty"));
    }
    items
        .iter()
        .enumerate()
        .map(|(i, item)| {
            let mut m = one(item, i)?;
            if m.time.is_none() {
                m.time = timestamp;
            }
            for (k, v) in metadata {
                m.metadata.entry(k.clone()).or_insert_with(|| v.clone());
            }
            Ok(m)
        })
        .collect()
}

/// Message `i` of the argument.
fn one(item: &Bound<'_, PyAny>, i: usize) -> PyResult<Message> {
    if let Ok(text) = item.cast::<PyString>() {
        return Ok(Message::user(string(text, &format!("messages[{i}]"))?));
    }
    let Ok(dict) = item.cast::<PyDict>() else {
        return Err(PyTypeError::new_err(format!(
            "messages[{i}]: expected str or dict, got {}",
            item.get_type().name()?
        )));
    };
    let role = match required(dict, "role", i)?.as_str() {
        "user" => Role::User,
        "assistant" => Role::Assistant,
        "system" => Role::System,
        other => {
            return Err(PyValueError::new_err(format!(
                "messages[{i}].role: expected \"user\", \"assistant\" or \"system\", got \
                 {other:?}"
            )))
        }
    };
    let mut m = Message::new(role, required(dict, "content", i)?);
    if let Some(name) = text(dict, "name", i)? {
        m = m.by(name);
    }
    if let Some(id) = text(dict, "id", i)? {
        m = m.with_id(id);
    }
    m.time = convert::opt_time(
        optional(dict, "timestamp")?.as_ref(),
        &format!("messages[{i}].timestamp"),
    )?;
    Ok(m)
}

/// The string under `key` of message `i`, which must be there.
fn required(dict: &Bound<'_, PyDict>, key: &str, i: usize) -> PyResult<String> {
    text(dict, key, i)?
        .ok_or_else(|| PyValueError::new_err(format!("messages[{i}]: {key:?} is missing")))
}

/// The string under `key` of message `i`, if there (and not `None`).
///
/// # Errors
/// `TypeError` naming the message and key for anything but a `str` (a content list of
/// OpenAI-style parts included: only text strings are taken); `ValueError` naming them for
/// a lone surrogate ([`string`]).
fn text(dict: &Bound<'_, PyDict>, key: &str, i: usize) -> PyResult<Option<String>> {
    let Some(value) = optional(dict, key)? else {
        return Ok(None);
    };
    if let Ok(value) = value.cast::<PyString>() {
        return string(value, &format!("messages[{i}].{key}")).map(Some);
    }
    let parts = if key == "content" && value.is_instance_of::<PyList>() {
        " (only text strings are accepted: join the text parts of a content list into one \
         string)"
    } else {
        ""
    };
    Err(PyTypeError::new_err(format!(
        "messages[{i}].{key}: expected str, got {}{parts}",
        value.get_type().name()?
    )))
}

/// `value` as UTF-8.
///
/// # Errors
/// `ValueError` naming `what` for a string that has none (a lone surrogate), with the
/// codec's message.
fn string(value: &Bound<'_, PyString>, what: &str) -> PyResult<String> {
    value
        .extract()
        .map_err(|e| PyValueError::new_err(format!("{what}: {e}")))
}

fn optional<'py>(dict: &Bound<'py, PyDict>, key: &str) -> PyResult<Option<Bound<'py, PyAny>>> {
    Ok(dict.get_item(key)?.filter(|v| !v.is_none()))
}
