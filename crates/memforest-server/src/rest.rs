//! The REST routes over the `Memory` API. Every route under `/v1/users/{user}` checks the
//! request's [`Access`] for that user first (read for reads, read-write for changes). The
//! routes and bodies are documented in `docs/server.md`.

use std::sync::Arc;

use axum::extract::rejection::QueryRejection;
use axum::extract::{Path, Query, State};
use axum::routing::{get, post};
use axum::{Extension, Json, Router};
use serde_json::{json, Value};

use crate::access::Access;
use crate::error::ApiError;
use crate::json_body::JsonBody;
use crate::keys::Right;
use crate::request::{decode, memory_id, AddRequest, Checked as _, ContextRequest, ListRequest};
use crate::request::{SearchRequest, UpdateRequest};
use crate::state::Shared;

type Reply = Result<Json<Value>, ApiError>;

/// The JSON of `v`.
fn reply(v: impl serde::Serialize) -> Reply {
    serde_json::to_value(v).map(Json).map_err(|e| {
        tracing::error!(error = %e, "reply did not serialize");
        ApiError::Internal
    })
}

/// The authenticated routes (the caller adds the auth layer).
pub fn routes() -> Router<Arc<Shared>> {
    Router::new()
        .route(
            "/v1/users/{user}/sessions/{session}/messages",
            post(add).get(messages),
        )
        .route(
            "/v1/users/{user}/sessions/{session}",
            axum::routing::delete(delete_session),
        )
        .route("/v1/users/{user}/search", post(search))
        .route("/v1/users/{user}/context", post(context))
        .route("/v1/users/{user}/memories", get(list))
        .route(
            "/v1/users/{user}/memories/{id}",
            get(get_memory).put(update).delete(delete_memory),
        )
        .route("/v1/users/{user}/memories/{id}/history", get(history))
        .route("/v1/users/{user}/profile", get(profile))
        .route("/v1/users/{user}/stats", get(stats))
        .route("/v1/users/{user}", axum::routing::delete(delete_user))
}

async fn add(
    State(s): State<Arc<Shared>>,
    Extension(a): Extension<Access>,
    Path((user, session)): Path<(String, String)>,
    JsonBody(body): JsonBody,
) -> Reply {
    a.allow(&user, Right::ReadWrite)?;
    let req: AddRequest = decode(&body, &s.limits)?;
    let added = s
        .run(move |m| m.add_with(&user, &session, &req.messages(), &req.options()))
        .await?;
    reply(added)
}

async fn messages(
    State(s): State<Arc<Shared>>,
    Extension(a): Extension<Access>,
    Path((user, session)): Path<(String, String)>,
) -> Reply {
    a.allow(&user, Right::Read)?;
    let messages = s.run(move |m| m.messages(&user, &session)).await?;
    reply(json!({ "messages": messages }))
}

async fn delete_session(
    State(s): State<Arc<Shared>>,
    Extension(a): Extension<Access>,
    Path((user, session)): Path<(String, String)>,
) -> Reply {
    a.allow(&user, Right::ReadWrite)?;
    reply(s.run(move |m| m.delete_session(&user, &session)).await?)
}

async fn search(
    State(s): State<Arc<Shared>>,
    Extension(a): Extension<Access>,
    Path(user): Path<String>,
    JsonBody(body): JsonBody,
) -> Reply {
    a.allow(&user, Right::Read)?;
    let req: SearchRequest = decode(&body, &s.limits)?;
    let hits = s
        .run(move |m| m.search(&user, &req.query, &req.options()))
        .await?;
    reply(json!({ "results": hits }))
}

async fn context(
    State(s): State<Arc<Shared>>,
    Extension(a): Extension<Access>,
    Path(user): Path<String>,
    JsonBody(body): JsonBody,
) -> Reply {
    a.allow(&user, Right::Read)?;
    let req: ContextRequest = decode(&body, &s.limits)?;
    let text = s
        .run(move |m| {
            let options = req.search.options();
            m.context(&user, &req.search.query, req.max_tokens(), &options)
        })
        .await?;
    reply(json!({ "context": text }))
}

async fn list(
    State(s): State<Arc<Shared>>,
    Extension(a): Extension<Access>,
    Path(user): Path<String>,
    query: Result<Query<ListRequest>, QueryRejection>,
) -> Reply {
    a.allow(&user, Right::Read)?;
    let Query(req) = query.map_err(|e| ApiError::BadRequest(e.body_text()))?;
    req.check(&s.limits)?;
    let memories = s.run(move |m| m.list(&user, &req.options())).await?;
    reply(json!({ "results": memories }))
}

async fn get_memory(
    State(s): State<Arc<Shared>>,
    Extension(a): Extension<Access>,
    Path((user, id)): Path<(String, String)>,
) -> Reply {
    a.allow(&user, Right::Read)?;
    let id = memory_id(&id)?;
    match s.run(move |m| m.get(&user, id)).await? {
        Some(r) => reply(r),
        None => Err(ApiError::NotFound(format!("no memory {id}"))),
    }
}

async fn update(
    State(s): State<Arc<Shared>>,
    Extension(a): Extension<Access>,
    Path((user, id)): Path<(String, String)>,
    JsonBody(body): JsonBody,
) -> Reply {
    a.allow(&user, Right::ReadWrite)?;
    let id = memory_id(&id)?;
    let req: UpdateRequest = decode(&body, &s.limits)?;
    let new = s.run(move |m| m.update(&user, id, &req.text)).await?;
    reply(json!({ "id": new }))
}

async fn delete_memory(
    State(s): State<Arc<Shared>>,
    Extension(a): Extension<Access>,
    Path((user, id)): Path<(String, String)>,
) -> Reply {
    a.allow(&user, Right::ReadWrite)?;
    let id = memory_id(&id)?;
    reply(s.run(move |m| m.delete(&user, id)).await?)
}

async fn history(
    State(s): State<Arc<Shared>>,
    Extension(a): Extension<Access>,
    Path((user, id)): Path<(String, String)>,
) -> Reply {
    a.allow(&user, Right::Read)?;
    let id = memory_id(&id)?;
    let versions = s.run(move |m| m.history(&user, id)).await?;
    reply(json!({ "versions": versions }))
}

async fn profile(
    State(s): State<Arc<Shared>>,
    Extension(a): Extension<Access>,
    Path(user): Path<String>,
) -> Reply {
    a.allow(&user, Right::Read)?;
    reply(s.run(move |m| m.profile(&user)).await?)
}

async fn stats(
    State(s): State<Arc<Shared>>,
    Extension(a): Extension<Access>,
    Path(user): Path<String>,
) -> Reply {
    a.allow(&user, Right::Read)?;
    reply(s.run(move |m| m.user_stats(&user)).await?)
}

async fn delete_user(
    State(s): State<Arc<Shared>>,
    Extension(a): Extension<Access>,
    Path(user): Path<String>,
) -> Reply {
    a.allow(&user, Right::ReadWrite)?;
    reply(s.run(move |m| m.delete_user(&user)).await?)
}

/// `GET /health`: `{"status": "ok"}` (no key needed).
pub async fn health() -> Json<Value> {
    Json(json!({ "status": "ok" }))
}

/// `GET /metrics`: Prometheus text (no key needed; holds no user data).
pub async fn metrics(State(s): State<Arc<Shared>>) -> String {
    s.metrics.render(&s.memory)
}
