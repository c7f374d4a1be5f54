//! [`ApiError`]: every failure a request can meet, with its HTTP status. Messages name
//! what was wrong with the request and never echo a key; storage failures are logged and
//! answered with a generic message.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use memforest::MemoryError;

/// A failed request. In JSON: `{"error": "<message>"}` with the status below.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ApiError {
    /// 400: the body or a parameter is not valid.
    #[error("{0}")]
    BadRequest(String),
    /// 401: no key, or a key the server does not know.
    #[error("missing or unknown API key")]
    Unauthorized,
    /// 403: the key may not do this with this user's data.
    #[error("{by} may not {need} user {user:?}")]
    Forbidden {
        /// Who is refused: `this key`, or a stdio MCP server serving another user.
        by: &'static str,
        /// What was asked (`read` or `write`).
        need: &'static str,
        /// The user named by the request.
        user: String,
    },
    /// 403: a write sent to a read-only server (a read replica): send it to the writer.
    #[error("this server is read-only (a read replica): send writes to the store's writer")]
    ReadOnly,
    /// 404: no such memory, session or user.
    #[error("{0}")]
    NotFound(String),
    /// 409: the request conflicts with what is stored (a session of another agent, a
    /// store embedded by another embedder).
    #[error("{0}")]
    Conflict(String),
    /// 413: the body, a message or the batch is over its limit.
    #[error("{0}")]
    TooLarge(String),
    /// 408: the request's body did not arrive in time (`Limits::body_timeout`).
    #[error("{0}")]
    Timeout(String),
    /// 415: a request body not declared as JSON (`Content-Type: application/json`), the
    /// declared type if any.
    #[error("{}", not_json(.0.as_deref()))]
    NotJson(Option<String>),
    /// 403: a `Host` that does not name this machine, sent to a loopback listener (DNS
    /// rebinding).
    #[error("Host {0:?} is not allowed: this server listens on loopback and answers requests for localhost, 127.0.0.1 or [::1] only")]
    ForeignHost(String),
    /// 429: the key already has its limit of requests in flight.
    #[error("too many requests in flight for this key")]
    TooMany,
    /// 503: the server is shutting down or the store is read-only.
    #[error("{0}")]
    Unavailable(String),
    /// 500: a storage or internal failure (details in the server's log only).
    #[error("internal error (see the server log)")]
    Internal,
}

impl ApiError {
    /// The HTTP status.
    #[must_use]
    pub fn status(&self) -> StatusCode {
        match self {
            Self::BadRequest(_) => StatusCode::BAD_REQUEST,
            Self::Unauthorized => StatusCode::UNAUTHORIZED,
            Self::Forbidden { .. } | Self::ReadOnly | Self::ForeignHost(_) => StatusCode::FORBIDDEN,
            Self::NotJson(_) => StatusCode::UNSUPPORTED_MEDIA_TYPE,
            Self::NotFound(_) => StatusCode::NOT_FOUND,
            Self::Conflict(_) => StatusCode::CONFLICT,
            Self::TooLarge(_) => StatusCode::PAYLOAD_TOO_LARGE,
            Self::Timeout(_) => StatusCode::REQUEST_TIMEOUT,
            Self::TooMany => StatusCode::TOO_MANY_REQUESTS,
            Self::Unavailable(_) => StatusCode::SERVICE_UNAVAILABLE,
            Self::Internal => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }
}

impl From<MemoryError> for ApiError {
    fn from(e: MemoryError) -> Self {
        match e {
            MemoryError::Name(_)
            | MemoryError::BadId(_)
            | MemoryError::Input(_)
            | MemoryError::ReservedId { .. }
            | MemoryError::ReservedSession(_)
            | MemoryError::SnapshotNotHeld { .. } => Self::BadRequest(e.to_string()),
            MemoryError::NotFound { .. } => Self::NotFound(e.to_string()),
            MemoryError::AgentConflict { .. } | MemoryError::EmbedderMismatch { .. } => {
                Self::Conflict(e.to_string())
            }
            MemoryError::Engine(memforest_engine::Error::ReadOnly) => {
                Self::Unavailable("the store is read-only".into())
            }
            MemoryError::Stopped => Self::Unavailable("the store is closing".into()),
            other => {
                tracing::error!(error = %other, "request failed in the store");
                Self::Internal
            }
        }
    }
}

/// The message of [`ApiError::NotJson`].
fn not_json(declared: Option<&str>) -> String {
    let what = declared.map_or_else(|| "no Content-Type".to_owned(), |t| format!("{t:?}"));
    format!("the body must be JSON sent as Content-Type: application/json, not {what}")
}

/// Seconds a client told 429 is asked to wait before it retries (`Retry-After`).
const RETRY_AFTER_SECS: &str = "1";

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = serde_json::json!({ "error": self.to_string() });
        let mut response = (self.status(), axum::Json(body)).into_response();
        if self == Self::TooMany {
            response.headers_mut().insert(
                axum::http::header::RETRY_AFTER,
                axum::http::HeaderValue::from_static(RETRY_AFTER_SECS),
            );
        }
        response
    }
}
