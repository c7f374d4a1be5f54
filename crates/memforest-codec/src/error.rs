//! The one decode error type of this crate.

/// Bytes that could not be decoded.
///
/// `offset` is relative to the start of the slice handed to the decoder; callers that know
/// the file and the slice's position add both when they wrap this into their own error.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("at byte offset {offset}: {reason}")]
pub struct DecodeError {
    /// Byte offset, within the decoded slice, where decoding failed.
    pub offset: usize,
    /// What was expected there (static, so building the error never allocates).
    pub reason: &'static str,
}

impl DecodeError {
    /// An error at `offset` with the given `reason`.
    #[must_use]
    pub fn new(offset: usize, reason: &'static str) -> Self {
        Self { offset, reason }
    }
}
