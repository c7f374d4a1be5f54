//! Values between Rust and Python: results (anything `Serialize`) as plain dicts and lists
//! with `datetime` objects, and the `datetime` arguments.

use chrono::{DateTime, NaiveDateTime, Utc};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyDateTime, PyDict, PyList, PyTzInfo};
use pyo3::IntoPyObjectExt;
use serde::Serialize;
use serde_json::Value;

use crate::error::Kind;

/// The keys whose values are times (RFC 3339 strings in the serialized results); they
/// become timezone-aware `datetime` objects in UTC.
const TIME_KEYS: [&str; 4] = ["start", "end", "valid_until", "since"];

/// `value` as plain Python objects: structs and maps as `dict`, sequences as `list`, the
/// times of [`TIME_KEYS`] as `datetime`.
pub(crate) fn to_py<'py>(py: Python<'py>, value: &impl Serialize) -> PyResult<Bound<'py, PyAny>> {
    let json = serde_json::to_value(value)
        .map_err(|e| Kind::Base.err(format!("result not representable: {e}")))?;
    json_to_py(py, &json, false)
}

fn json_to_py<'py>(py: Python<'py>, v: &Value, time: bool) -> PyResult<Bound<'py, PyAny>> {
    Ok(match v {
        Value::Null => py.None().into_bound(py),
        Value::Bool(b) => b.into_bound_py_any(py)?,
        Value::Number(n) => match (n.as_u64(), n.as_i64()) {
            (Some(u), _) => u.into_bound_py_any(py)?,
            (None, Some(i)) => i.into_bound_py_any(py)?,
            (None, None) => n.as_f64().unwrap_or(f64::NAN).into_bound_py_any(py)?,
        },
        Value::String(s) if time => match DateTime::parse_from_rfc3339(s) {
            Ok(t) => t.to_utc().into_bound_py_any(py)?,
            Err(_) => s.into_bound_py_any(py)?,
        },
        Value::String(s) => s.into_bound_py_any(py)?,
        Value::Array(items) => {
            let list = PyList::empty(py);
            for item in items {
                list.append(json_to_py(py, item, false)?)?;
            }
            list.into_any()
        }
        Value::Object(map) => {
            let dict = PyDict::new(py);
            for (k, item) in map {
                dict.set_item(k, json_to_py(py, item, TIME_KEYS.contains(&k.as_str()))?)?;
            }
            dict.into_any()
        }
    })
}

/// A `datetime` argument in UTC: an aware one (any `tzinfo`: `datetime.timezone`,
/// `zoneinfo.ZoneInfo`, a custom one) converted with its `astimezone`, a naive one (no
/// `tzinfo`, or one whose `utcoffset()` is `None`) read as UTC.
///
/// # Errors
/// `TypeError` for anything but a `datetime` (naming the type it got); the `datetime`'s
/// own errors (e.g. `OverflowError` out of its range in UTC).
pub(crate) fn time(value: &Bound<'_, PyAny>, what: &str) -> PyResult<DateTime<Utc>> {
    if !value.is_instance_of::<PyDateTime>() {
        return Err(PyTypeError::new_err(format!(
            "{what}: expected a datetime.datetime, got {}",
            value.get_type().name()?
        )));
    }
    let py = value.py();
    if value.call_method0("utcoffset")?.is_none() {
        let kwargs = PyDict::new(py);
        kwargs.set_item("tzinfo", py.None())?;
        let naive = value.call_method("replace", (), Some(&kwargs))?;
        return Ok(naive.extract::<NaiveDateTime>()?.and_utc());
    }
    let utc = value.call_method1("astimezone", (PyTzInfo::utc(py)?,))?;
    utc.extract::<DateTime<Utc>>()
}

/// An optional `datetime` argument ([`time`]).
pub(crate) fn opt_time(
    value: Option<&Bound<'_, PyAny>>,
    what: &str,
) -> PyResult<Option<DateTime<Utc>>> {
    value
        .filter(|v| !v.is_none())
        .map(|v| time(v, what))
        .transpose()
}
