//! [`JsonBody`]: the body of a REST request that sends one, accepted only when it is
//! declared as JSON. A web page can make a browser send a cross-site `POST` without asking
//! the server first only with a "simple" content type (`text/plain`, form data); a JSON
//! content type needs the CORS preflight this server never grants, so a page the user
//! visits cannot write memories into a server on their machine.

use axum::body::Bytes;
use axum::extract::{FromRequest, Request};
use axum::http::header::CONTENT_TYPE;
use axum::response::{IntoResponse as _, Response};

use crate::error::ApiError;

/// Longest `Content-Type` value quoted in the refusal, characters.
const MAX_QUOTED: usize = 100;

/// A request body whose `Content-Type` is `application/json` (any parameters, e.g.
/// `; charset=utf-8`). Otherwise the request is refused with 415 before the body is read.
#[derive(Debug)]
pub struct JsonBody(pub Bytes);

impl<S: Send + Sync> FromRequest<S> for JsonBody {
    type Rejection = Response;

    async fn from_request(request: Request, state: &S) -> Result<Self, Self::Rejection> {
        let declared = request
            .headers()
            .get(CONTENT_TYPE)
            .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned());
        let is_json = declared.as_deref().is_some_and(|v| {
            v.split(';')
                .next()
                .is_some_and(|mime| mime.trim().eq_ignore_ascii_case("application/json"))
        });
        if !is_json {
            let shown = declared.map(|v| v.chars().take(MAX_QUOTED).collect());
            return Err(ApiError::NotJson(shown).into_response());
        }
        Bytes::from_request(request, state)
            .await
            .map(Self)
            .map_err(|e| e.into_response())
    }
}
