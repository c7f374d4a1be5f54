//! [`Shared`]: what every route and tool reaches: the store, the keys, the limits, the
//! counters.

use std::sync::Arc;

use memforest::{Memory, MemoryError};

use crate::error::ApiError;
use crate::keys::Keys;
use crate::limits::{Limiter, Limits};
use crate::metrics::Metrics;

/// Bodies one key may have being read per request it may have in flight.
pub const READERS_PER_SLOT: usize = 4;

/// The server's shared state.
#[derive(Debug)]
pub struct Shared {
    /// The store.
    pub memory: Arc<Memory>,
    /// The accepted keys; `None` on an open (loopback, keyless) server.
    pub keys: Option<Keys>,
    /// Size and concurrency limits.
    pub limits: Limits,
    /// Requests in flight per key.
    pub limiter: Limiter,
    /// Request bodies being read per key (at most [`READERS_PER_SLOT`] times the in-flight
    /// limit): bounds the memory of bodies buffered before their request is in flight.
    pub readers: Limiter,
    /// Request counters.
    pub metrics: Metrics,
}

impl Shared {
    /// State over `memory`.
    #[must_use]
    pub fn new(memory: Arc<Memory>, keys: Option<Keys>, limits: Limits) -> Self {
        let limiter = Limiter::new(limits.max_in_flight_per_key);
        let readers = Limiter::new(
            limits
                .max_in_flight_per_key
                .saturating_mul(READERS_PER_SLOT),
        );
        Self {
            memory,
            keys,
            limits,
            limiter,
            readers,
            metrics: Metrics::default(),
        }
    }

    /// Runs the blocking store call `f` on the blocking thread pool. The call runs to its
    /// end even when the client goes away (an add is then durable but unacknowledged).
    ///
    /// # Errors
    /// `f`'s error as an [`ApiError`]; [`ApiError::Internal`] when the call panicked.
    pub async fn run<T, F>(&self, f: F) -> Result<T, ApiError>
    where
        T: Send + 'static,
        F: FnOnce(&Memory) -> Result<T, MemoryError> + Send + 'static,
    {
        let memory = Arc::clone(&self.memory);
        match tokio::task::spawn_blocking(move || f(&memory)).await {
            Ok(r) => r.map_err(ApiError::from),
            Err(e) => {
                tracing::error!(error = %e, "store call did not finish");
                Err(ApiError::Internal)
            }
        }
    }
}
