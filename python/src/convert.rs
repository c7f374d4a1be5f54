//! Values between Rust and Python: results (anything `Serialize`) as plain dicts and lists
//! with `datetime` objects, and the `datetime` arguments.

use chrono::{DateTime, NaiveDateTime, Utc};
use pyo3::exceptions::{PyOverflowError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDateTime, PyDict, PyList, PyTzInfo};
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
/// `TypeError` for anything but a `datetime` (naming the type it got); `ValueError` naming
/// `what` for one out of the `datetime` range once in UTC (year 1 or 9999 with an offset).
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
    let utc = value
        .call_method1("astimezone", (PyTzInfo::utc(py)?,))
        .map_err(|e| {
            if e.is_instance_of::<PyOverflowError>(py) {
                PyValueError::new_err(format!("{what}: out of range in UTC ({e})"))
            } else {
                e
            }
        })?;
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

/// An integer argument `name` checked to be in `min..=max`: an `int` or an object with
/// `__index__`, not a `bool`.
///
/// # Errors
/// `TypeError` naming the type for a `bool` or a non-integer; `InvalidInputError` naming
/// the range for an integer outside it.
pub(crate) fn int_arg(
    value: &Bound<'_, PyAny>,
    name: &str,
    min: usize,
    max: usize,
) -> PyResult<usize> {
    let not_int = || -> PyResult<PyErr> {
        Ok(PyTypeError::new_err(format!(
            "{name} must be an int, not {}",
            value.get_type().name()?
        )))
    };
    if value.is_instance_of::<PyBool>() {
        return Err(not_int()?);
    }
    let Ok(int) = value
        .py()
        .import("operator")?
        .call_method1("index", (value,))
    else {
        return Err(not_int()?);
    };
    if let Ok(n) = int.extract::<usize>() {
        if (min..=max).contains(&n) {
            return Ok(n);
        }
    }
    let max = if max == usize::MAX {
        format!("2**{}-1", usize::BITS)
    } else {
        max.to_string()
    };
    // Past 4300 digits `str` raises; the digits of a huge one say nothing anyway.
    let shown = match int.str() {
        Ok(s) if s.len()? <= 40 => s.to_string(),
        _ => {
            let bits: usize = int.call_method0("bit_length")?.extract()?;
            let sign = if int.lt(0)? { "a negative" } else { "an" };
            format!("{sign} int of {bits} bits")
        }
    };
    Err(Kind::InvalidInput.err(format!(
        "{name} must be an int from {min} to {max}, got {shown}"
    )))
}

/// An integer argument as given, checked by [`IntArg::get`] (which names it), or its
/// default: extracting it never fails, so a bad value is not reported without its name.
pub(crate) enum IntArg<'py> {
    /// The caller's value.
    Given(Bound<'py, PyAny>),
    /// Not given: the default.
    Default(usize),
}

impl<'a, 'py> FromPyObject<'a, 'py> for IntArg<'py> {
    type Error = PyErr;

    fn extract(obj: Borrowed<'a, 'py, PyAny>) -> PyResult<Self> {
        Ok(Self::Given(obj.to_owned()))
    }
}

impl IntArg<'_> {
    /// The value of argument `name`, checked as [`int_arg`] checks it.
    ///
    /// # Errors
    /// As [`int_arg`].
    pub(crate) fn get(&self, name: &str, min: usize, max: usize) -> PyResult<usize> {
        match self {
            Self::Given(v) => int_arg(v, name, min, max),
            Self::Default(n) => Ok(*n),
        }
    }
}
