//! What every model-backed trait shares: [`Usage`] (token counts) and [`ModelError`];
//! `guarded`, how the store calls them.

use std::time::Duration;

/// Tokens one model call spent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Usage {
    /// Prompt (input) tokens.
    pub prompt_tokens: u64,
    /// Completion (output) tokens.
    pub completion_tokens: u64,
    /// True when the backend reported the counts; false when they are estimated
    /// ([`estimate_tokens`]).
    pub reported: bool,
}

impl Usage {
    /// An estimated usage for a call that read `prompt` and wrote `completion`.
    #[must_use]
    pub fn estimated(prompt: &str, completion: &str) -> Self {
        Self {
            prompt_tokens: estimate_tokens(prompt),
            completion_tokens: estimate_tokens(completion),
            reported: false,
        }
    }
}

/// A token estimate for `text`: one token per 4 bytes, rounded up (the usual rule of thumb
/// for English with BPE tokenizers).
#[must_use]
pub fn estimate_tokens(text: &str) -> u64 {
    (text.len() as u64).div_ceil(4)
}

/// Why a model call failed. Every variant leaves the work item in place to be retried with
/// backoff.
#[derive(Debug, thiserror::Error)]
pub enum ModelError {
    /// No complete answer within the deadline.
    #[error("model call timed out after {0:?}")]
    Timeout(Duration),
    /// The answer arrived but could not be used (bad JSON, a missing field, truncation).
    #[error("malformed model output at byte {offset}: {what}")]
    Malformed {
        /// Byte offset in the response body where decoding failed.
        offset: usize,
        /// What was wrong (e.g. the field name).
        what: String,
    },
    /// The backend refused or failed (HTTP status, transport error, ...).
    #[error("model backend error: {0}")]
    Backend(#[source] Box<dyn std::error::Error + Send + Sync>),
}

/// Runs `call`, a call into a model the caller supplied (extractor, summarizer, embedder),
/// and turns a panic in it into [`ModelError::Backend`] naming `what` and the panic's
/// message: the work is retried and reported as after any failed call. A panic unwinding
/// through a background worker would leave its job's bookkeeping undone, and a flush or
/// close would wait for it forever.
///
/// # Errors
/// `call`'s error; [`ModelError::Backend`] when it panicked.
pub(crate) fn guarded<T>(
    what: &str,
    call: impl FnOnce() -> Result<T, ModelError>,
) -> Result<T, ModelError> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(call)).unwrap_or_else(|payload| {
        let message = payload
            .downcast_ref::<&str>()
            .map(|s| (*s).to_owned())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "no message".to_owned());
        Err(ModelError::Backend(
            format!("the {what} panicked: {message}").into(),
        ))
    })
}
