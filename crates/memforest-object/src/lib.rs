//! memforest-object: the object-storage tier under the engine.
//!
//! [`Remote`] is one object-store location (a store and a key prefix) selected by a URL
//! (`memory://`, `file:///abs/path`, and whatever schemes the linked `object_store`
//! features support), with blocking calls the engine's threads make. `object_store` is
//! async: each [`Remote`] owns one small tokio runtime (one worker thread) and every call
//! waits on a channel for the future it spawned there, so a call never starts a runtime
//! inside another one. From inside an async task of another runtime, call it from
//! `spawn_blocking` (a call blocks its thread until the object store answers).
//!
//! [`FaultStore`] wraps any store, counts requests and fails the ones a test asks for.
#![deny(clippy::indexing_slicing)]

mod error;
mod fault;
mod remote;

pub use error::{Error, Result};
pub use fault::FaultStore;
pub use object_store;
pub use remote::{file_url_path, Listed, Remote};
