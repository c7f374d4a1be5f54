//! [`LlmError`]: everything that can go wrong talking to an OpenAI-compatible server.

use std::time::Duration;

/// An error from the OpenAI-compatible client or from interpreting a model's reply.
///
/// Transient failures (timeouts, connection errors, HTTP 429 and 5xx, a body cut short) are
/// retried by [`LlmClient`](super::LlmClient); once the retry budget is spent they come back
/// wrapped in [`LlmError::GaveUp`] with the number of attempts made. Everything else is
/// returned on the first attempt. No reply bytes can cause a panic: bad bytes end up here,
/// naming the JSON field (`choices[0].message.content`) or the byte offset.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LlmError {
    /// The client configuration cannot be used (bad base URL, zero batch size, ...).
    #[error("invalid LLM configuration: {0}")]
    Config(String),
    /// The environment variable named by `api_key_env` is unset or not valid Unicode.
    #[error("API key environment variable {var} is not set")]
    MissingApiKey {
        /// The variable's name.
        var: String,
    },
    /// The server did not answer within the configured timeout.
    #[error("request timed out after {timeout:?}")]
    Timeout {
        /// The per-attempt timeout that ran out.
        timeout: Duration,
    },
    /// The connection could not be made or broke while sending or receiving.
    #[error("transport error: {0}")]
    Transport(String),
    /// The server answered with a non-2xx status.
    #[error("HTTP status {status}: {body}")]
    Status {
        /// The HTTP status code.
        status: u16,
        /// The start of the reply body (at most 512 bytes, lossily decoded), for diagnosis.
        body: String,
    },
    /// The reply body is longer than `max_body_bytes`.
    #[error("reply body exceeds the limit of {limit} bytes")]
    BodyTooLarge {
        /// The limit, in bytes.
        limit: u64,
    },
    /// The reply body is not valid UTF-8.
    #[error("reply body is not UTF-8 at byte {offset}")]
    NotUtf8 {
        /// Byte offset of the first invalid byte.
        offset: usize,
    },
    /// The reply body is not well-formed JSON.
    #[error("reply body is not valid JSON at byte {offset}: {message}")]
    MalformedJson {
        /// Byte offset (into the body) where parsing failed.
        offset: usize,
        /// serde_json's description.
        message: String,
    },
    /// A required field of the reply is absent (or `null`).
    #[error("reply field {field} is missing")]
    MissingField {
        /// Path of the field, e.g. `choices[0].message.content`.
        field: String,
    },
    /// A field of the reply has the wrong JSON type or an out-of-range value.
    #[error("reply field {field} is not {expected}")]
    WrongType {
        /// Path of the field, e.g. `data[2].embedding[7]`.
        field: String,
        /// What was expected there ("a string", "a finite number", ...).
        expected: &'static str,
    },
    /// `/v1/embeddings` returned a different number of vectors than inputs sent.
    #[error("expected {expected} embeddings, got {got}")]
    EmbeddingCount {
        /// Inputs sent.
        expected: usize,
        /// Vectors returned.
        got: usize,
    },
    /// An embedding's length differs from the expected dimension.
    #[error("embedding {index} has {got} dimensions, expected {expected}")]
    EmbeddingDimension {
        /// Input index of the vector.
        index: usize,
        /// The expected dimension (configured, or that of the first vector).
        expected: usize,
        /// The vector's length.
        got: usize,
    },
    /// The model's message does not contain usable JSON (see [`super::json`]).
    #[error("model output: {0}")]
    Payload(#[from] super::json::JsonExtractError),
    /// The model's JSON has the wrong shape for the task (no item list, no summary text, ...).
    #[error("model output unusable: {0}")]
    Unusable(String),
    /// A transient error persisted through every attempt.
    #[error("gave up after {attempts} attempts: {last}")]
    GaveUp {
        /// Attempts made (1 + retries).
        attempts: u32,
        /// The error of the last attempt.
        last: Box<LlmError>,
    },
}

impl LlmError {
    /// True for failures worth another attempt: timeouts, transport errors, 429 and 5xx.
    pub fn is_transient(&self) -> bool {
        match self {
            Self::Timeout { .. } | Self::Transport(_) => true,
            Self::Status { status, .. } => *status == 429 || (500..=599).contains(status),
            _ => false,
        }
    }

    /// The HTTP status behind this error, looking through [`LlmError::GaveUp`].
    pub fn status(&self) -> Option<u16> {
        match self {
            Self::Status { status, .. } => Some(*status),
            Self::GaveUp { last, .. } => last.status(),
            _ => None,
        }
    }
}

impl From<LlmError> for memforest::memory::model::ModelError {
    /// Timeouts stay timeouts (also after retries); reply-content problems become
    /// `Malformed` with their byte offset (0 when the problem is a field, named in `what`);
    /// everything else (HTTP status, transport, configuration) is `Backend`.
    fn from(error: LlmError) -> Self {
        use super::json::JsonExtractError;
        use memforest::memory::model::ModelError;
        match error {
            LlmError::Timeout { timeout } => ModelError::Timeout(timeout),
            LlmError::GaveUp { last, .. } if matches!(*last, LlmError::Timeout { .. }) => {
                ModelError::from(*last)
            }
            LlmError::NotUtf8 { offset }
            | LlmError::MalformedJson { offset, .. }
            | LlmError::Payload(
                JsonExtractError::Malformed { offset, .. } | JsonExtractError::Truncated { offset },
            ) => ModelError::Malformed {
                offset,
                what: error.to_string(),
            },
            LlmError::MissingField { .. }
            | LlmError::WrongType { .. }
            | LlmError::EmbeddingCount { .. }
            | LlmError::EmbeddingDimension { .. }
            | LlmError::Payload(_)
            | LlmError::Unusable(_) => ModelError::Malformed {
                offset: 0,
                what: error.to_string(),
            },
            other => ModelError::Backend(Box::new(other)),
        }
    }
}
