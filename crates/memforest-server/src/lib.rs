//! `memforest serve` and `memforest mcp`: one process owns a memory store and serves many
//! agents.
//!
//! - REST over the [`memforest::Memory`] API (`/v1/users/{user}/...`, JSON in and out) and
//!   MCP over streamable HTTP (`/mcp`) on one listener ([`Server`]);
//! - MCP over stdio for one user ([`serve_stdio`]);
//! - API keys hashed at rest ([`keys`]), each scoped to tenants with read or read-write
//!   rights ([`Access`]); no key 401, another tenant 403, a non-loopback listener without
//!   keys refused;
//! - size limits (413) and per-key in-flight limits (429) ([`Limits`]);
//! - graceful shutdown: the requests in flight finish and the store is closed before
//!   [`Server::run`] returns, so every acknowledged add is durable.
//!
//! The routes, bodies and tools are documented in `docs/server.md`.

mod accept;
mod access;
mod auth;
mod error;
mod error_bodies;
mod host_check;
mod json_body;
pub mod keys;
mod limits;
mod mcp;
mod metrics;
mod refresh;
pub mod request;
mod rest;
mod server;
mod state;

pub use access::Access;
pub use error::ApiError;
pub use keys::{KeyEntry, Keys, KeysFile, Right};
pub use limits::{InFlight, Limiter, Limits};
pub use mcp::MemoryTools;
pub use server::{listen, serve_stdio, shutdown_signal, ServeConfig, ServeError, Server};
