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
/// `"system"`) and `content` (a string), optionally `name` (the speaker), `id` (the
/// caller's message id) and `timestamp` (a `datetime`); other keys (e.g. OpenAI's
/// `tool_calls`) are ignored. `timestamp` and `metadata` apply to every message without
/// its own.
///
/// # Errors
/// `TypeError` for a value of the wrong type; `ValueError` for an unknown role, a missing
/// key or no message at all.
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
        .map(|item| {
            let mut m = one(item)?;
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

fn one(item: &Bound<'_, PyAny>) -> PyResult<Message> {
    if let Ok(text) = item.cast::<PyString>() {
        return Ok(Message::user(text.extract::<String>()?));
    }
    let Ok(dict) = item.cast::<PyDict>() else {
        return Err(PyTypeError::new_err(format!(
            "a message must be a str or a dict, not {}",
            item.get_type().name()?
        )));
    };
    let role: String = required(dict, "role")?.extract()?;
    let role = match role.as_str() {
        "user" => Role::User,
        "assistant" => Role::Assistant,
        "system" => Role::System,
        other => {
            return Err(PyValueError::new_err(format!(
                "message role must be \"user\", \"assistant\" or \"system\", not {other:?}"
            )))
        }
    };
    let content: String = required(dict, "content")?.extract()?;
    let mut m = Message::new(role, content);
    if let Some(name) = optional(dict, "name")? {
        m = m.by(name.extract::<String>()?);
    }
    if let Some(id) = optional(dict, "id")? {
        m = m.with_id(id.extract::<String>()?);
    }
    m.time = convert::opt_time(optional(dict, "timestamp")?.as_ref(), "message timestamp")?;
    Ok(m)
}

fn required<'py>(dict: &Bound<'py, PyDict>, key: &str) -> PyResult<Bound<'py, PyAny>> {
    optional(dict, key)?.ok_or_else(|| PyValueError::new_err(format!("a message needs {key:?}")))
}

fn optional<'py>(dict: &Bound<'py, PyDict>, key: &str) -> PyResult<Option<Bound<'py, PyAny>>> {
    Ok(dict.get_item(key)?.filter(|v| !v.is_none()))
}
