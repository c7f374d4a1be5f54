//! [`InputError`]: why a caller-supplied name or text was refused before anything was
//! written, and [`check_name`], the one check every name that becomes part of a key or a
//! record goes through (tenant names here; session ids, turn ids and speakers in
//! `memory::limits`).

/// A caller-supplied value the store refuses, naming the field and the limit it breaks.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum InputError {
    /// The field is empty where a value is required.
    #[error("{field} is empty")]
    Empty {
        /// Which field (`tenant name`, `session id`, ...).
        field: &'static str,
    },
    /// The field is longer than its limit.
    #[error("{field} of {len} bytes exceeds the {limit}-byte limit")]
    TooLong {
        /// Which field.
        field: &'static str,
        /// Its length, in bytes (UTF-8 for text).
        len: usize,
        /// The limit, in bytes.
        limit: usize,
    },
    /// The field holds more entries than its limit.
    #[error("{field}: {count} entries exceed the limit of {limit}")]
    TooMany {
        /// Which field.
        field: &'static str,
        /// Its entries.
        count: usize,
        /// The limit, in entries.
        limit: usize,
    },
    /// The field is only whitespace where a name is required: it would name a user or
    /// session no caller could tell apart from an empty one.
    #[error("{field} is only whitespace")]
    Blank {
        /// Which field.
        field: &'static str,
    },
    /// The field holds a NUL byte, which a name may not (it could not be typed on a
    /// command line, so the data would be unreachable there).
    #[error("{field} contains a NUL byte at byte offset {at}")]
    Nul {
        /// Which field.
        field: &'static str,
        /// Byte offset of the first NUL.
        at: usize,
    },
}

/// Checks a name: 1..=`limit` bytes with no NUL byte.
///
/// # Errors
/// [`InputError::Empty`], [`InputError::TooLong`] or [`InputError::Nul`], naming `field`.
pub fn check_name(field: &'static str, name: &[u8], limit: usize) -> Result<(), InputError> {
    if name.is_empty() {
        return Err(InputError::Empty { field });
    }
    check_len(field, name.len(), limit)?;
    match name.iter().position(|&b| b == 0) {
        Some(at) => Err(InputError::Nul { field, at }),
        None => Ok(()),
    }
}

/// Checks that a value of `len` bytes is within `limit` bytes.
///
/// # Errors
/// [`InputError::TooLong`] naming `field`.
pub fn check_len(field: &'static str, len: usize, limit: usize) -> Result<(), InputError> {
    if len > limit {
        return Err(InputError::TooLong { field, len, limit });
    }
    Ok(())
}

impl From<InputError> for crate::Error {
    /// The engine's [`crate::Error::InvalidArgument`] for callers that return the engine's
    /// error; the typed [`InputError`] (with the length) is what `TenantId::new` returns.
    fn from(e: InputError) -> Self {
        Self::InvalidArgument(match e {
            InputError::Empty { .. } => "empty name",
            InputError::Blank { .. } => "name is only whitespace",
            InputError::TooLong { .. } => "name over its byte limit",
            InputError::TooMany { .. } => "more entries than the limit",
            InputError::Nul { .. } => "name contains a NUL byte",
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_checked_for_empty_length_and_nul() {
        assert_eq!(check_name("x", b"ab", 2), Ok(()));
        assert_eq!(
            check_name("x", b"", 2),
            Err(InputError::Empty { field: "x" })
        );
        assert_eq!(
            check_name("x", b"abc", 2),
            Err(InputError::TooLong {
                field: "x",
                len: 3,
                limit: 2
            })
        );
        assert_eq!(
            check_name("x", b"a\0", 2),
            Err(InputError::Nul { field: "x", at: 1 })
        );
        assert_eq!(
            check_name("tenant name", b"a\0", 9)
                .unwrap_err()
                .to_string(),
            "tenant name contains a NUL byte at byte offset 1"
        );
    }
}
