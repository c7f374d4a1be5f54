//! Every error response in JSON: the responses the server's own handlers make are
//! [`ApiError`]s already; this layer gives the others (axum's 404 for an unknown route and
//! 405 for a wrong method, its 400 for a path that is not UTF-8, the MCP transport's 4xx
//! in plain text) the same `{"error": "<message>"}` body, keeping their status and
//! headers.

use axum::body::Body;
use axum::extract::Request;
use axum::http::{header, HeaderMap, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse as _, Response};

/// Longest plain-text error body read into the JSON message, bytes (the bodies this layer
/// rewrites are one-line messages).
const MAX_MESSAGE: usize = 4096;

/// Longest request path quoted in a 404 or 405 message, characters.
const MAX_PATH: usize = 200;

/// Middleware: runs the request and rewrites an error response that is not JSON.
pub async fn as_json(request: Request, next: Next) -> Response {
    let method = request.method().clone();
    let path = request.uri().path().to_owned();
    let response = next.run(request).await;
    let status = response.status();
    if !(status.is_client_error() || status.is_server_error()) || is_json(response.headers()) {
        return response;
    }
    let (mut parts, body) = response.into_parts();
    let text = axum::body::to_bytes(body, MAX_MESSAGE)
        .await
        .ok()
        .and_then(|b| String::from_utf8(b.to_vec()).ok())
        .map(|t| t.trim().to_owned())
        .unwrap_or_default();
    let message = if text.is_empty() {
        explain(status, &method, &path)
    } else {
        text
    };
    parts.headers.remove(header::CONTENT_LENGTH);
    parts.headers.remove(header::CONTENT_TYPE);
    let json = axum::Json(serde_json::json!({ "error": message })).into_response();
    let (json_parts, json_body) = json.into_parts();
    parts.headers.extend(json_parts.headers);
    Response::from_parts(parts, Body::new(json_body))
}

/// Whether the response says it is JSON.
fn is_json(headers: &HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/json"))
}

/// The message for an error response that came without one.
fn explain(status: StatusCode, method: &Method, path: &str) -> String {
    let path: String = if path.chars().count() > MAX_PATH {
        path.chars().take(MAX_PATH).chain("...".chars()).collect()
    } else {
        path.to_owned()
    };
    match status {
        StatusCode::NOT_FOUND => format!("no route for {method} {path} (routes: docs/server.md)"),
        StatusCode::METHOD_NOT_ALLOWED => {
            format!("{method} is not allowed on {path} (the Allow header lists those that are)")
        }
        other => other
            .canonical_reason()
            .unwrap_or("request failed")
            .to_owned(),
    }
}
