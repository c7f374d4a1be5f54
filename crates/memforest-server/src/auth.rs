//! The layer in front of every authenticated route: finds the request's [`Access`] from
//! its key, reads the body within the size and time limits, enforces the per-key
//! in-flight limit, and counts the request in the metrics.

use std::sync::Arc;
use std::time::Instant;

use axum::body::Body;
use axum::extract::{MatchedPath, Request, State};
use axum::http::{header, HeaderMap, HeaderValue};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::access::Access;
use crate::error::ApiError;
use crate::limits::Limits;
use crate::state::Shared;

/// The key a request presents: `Authorization: Bearer <key>` or `X-Api-Key: <key>`.
fn presented(headers: &HeaderMap) -> Option<&str> {
    if let Some(v) = headers.get("x-api-key").and_then(|v| v.to_str().ok()) {
        return Some(v.trim());
    }
    let auth = headers.get("authorization")?.to_str().ok()?;
    let (scheme, key) = auth.split_once(' ')?;
    scheme.eq_ignore_ascii_case("bearer").then_some(key.trim())
}

/// The access of a request with `headers` (read-only on a read-only store).
///
/// # Errors
/// [`ApiError::Unauthorized`] when the server has keys and the request presents none of
/// them.
pub fn authenticate(shared: &Shared, headers: &HeaderMap) -> Result<Access, ApiError> {
    let access = match &shared.keys {
        None => Access::Open,
        Some(keys) => {
            let entry = presented(headers)
                .and_then(|k| keys.find(k))
                .ok_or(ApiError::Unauthorized)?;
            Access::Scoped {
                name: Arc::from(entry.name.as_str()),
                tenants: Arc::new(entry.tenants.clone()),
            }
        }
    };
    Ok(access.on_store(shared.memory.is_read_only()))
}

/// A refusal sent before the request's body is read whole (a bad key, too many bodies
/// being read, a body that stalled or ran over). The server drops such a connection after
/// the reply, so the reply says `Connection: close`: a client that kept it for its next
/// request would find it closed under that request.
fn refuse(e: ApiError) -> Response {
    let mut r = e.into_response();
    r.headers_mut()
        .insert(header::CONNECTION, HeaderValue::from_static("close"));
    r
}

/// `req` with its whole body read, within `limits.body_timeout` and
/// `limits.max_body_bytes`, so that a client that stalls its body is cut off instead of
/// holding one of its key's requests in flight (and, in open mode, everyone's) for as long
/// as it keeps the connection.
///
/// # Errors
/// [`ApiError::Timeout`] for a body slower than the limit; [`ApiError::TooLarge`] for one
/// over the size limit; [`ApiError::BadRequest`] for one that broke off.
async fn buffered(req: Request, limits: &Limits) -> Result<Request, ApiError> {
    let (parts, body) = req.into_parts();
    let read = axum::body::to_bytes(body, limits.max_body_bytes);
    let bytes = tokio::time::timeout(limits.body_timeout, read)
        .await
        .map_err(|_| {
            ApiError::Timeout(format!(
                "the request body did not arrive within {} s",
                limits.body_timeout.as_secs_f64()
            ))
        })?
        .map_err(|e| {
            let over = std::error::Error::source(&e)
                .is_some_and(|s| s.is::<http_body_util::LengthLimitError>());
            if over {
                ApiError::TooLarge(format!(
                    "the body is over the limit of {} bytes",
                    limits.max_body_bytes
                ))
            } else {
                ApiError::BadRequest(format!("the request body could not be read: {e}"))
            }
        })?;
    Ok(Request::from_parts(parts, Body::from(bytes)))
}

/// Middleware: authenticate, read the body, limit, run, count.
pub async fn guard(State(shared): State<Arc<Shared>>, req: Request, next: Next) -> Response {
    let started = Instant::now();
    let route = req
        .extensions()
        .get::<MatchedPath>()
        .map_or_else(|| "unmatched".to_owned(), |p| p.as_str().to_owned());
    let method = req.method().as_str().to_owned();
    let authenticated = match authenticate(&shared, req.headers()) {
        Ok(access) => match shared.readers.try_enter(access.name()) {
            Some(reading) => {
                let read = buffered(req, &shared.limits).await;
                drop(reading);
                read.map(|req| (access, req))
            }
            None => Err(ApiError::TooMany),
        },
        Err(e) => Err(e),
    };
    let response = match authenticated {
        Err(e) => refuse(e),
        // The body is read: the connection stays usable.
        Ok((access, mut req)) => match shared.limiter.try_enter(access.name()) {
            None => ApiError::TooMany.into_response(),
            Some(in_flight) => {
                let key = access.name().to_owned();
                req.extensions_mut().insert(access);
                let r = next.run(req).await;
                drop(in_flight);
                tracing::info!(%method, %route, key, status = r.status().as_u16(), micros = u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX), "request");
                r
            }
        },
    };
    shared.metrics.record(
        &route,
        &method,
        response.status().as_u16(),
        started.elapsed(),
    );
    response
}
