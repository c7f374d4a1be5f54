//! [`Limits`]: the sizes a request may have, and [`Limiter`]: the per-key count of
//! requests in flight.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Request size, time and concurrency limits. Over a size limit: 413; a body slower than
/// `body_timeout`: 408; headers slower than `header_timeout`: the connection is closed;
/// over the in-flight limit: 429.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limits {
    /// Largest request body, bytes (default 1 MiB; MCP requests too).
    pub max_body_bytes: usize,
    /// Most messages in one add (default 256).
    pub max_batch: usize,
    /// Largest message text, query or update text, bytes (default 32 KiB, the store's own
    /// limit on a message).
    pub max_turn_bytes: usize,
    /// Largest `k` of a search and `limit` of a list (default 1000).
    pub max_k: usize,
    /// Largest `max_tokens` of a context (default 100 000).
    pub max_context_tokens: usize,
    /// Requests one key may have in flight at once (default 32).
    pub max_in_flight_per_key: usize,
    /// Longest wait for a request's whole body (default 30 s): a client that stalls its
    /// body is answered 408 and its connection closed. The body is read before the
    /// request counts against `max_in_flight_per_key`.
    pub body_timeout: Duration,
    /// Longest wait for a request's headers (default 10 s), from a new connection's
    /// accept or a kept-alive one's previous response: past it the connection is closed
    /// without a response, so neither a client that never ends its headers nor an idle
    /// connection holds a socket for long. Zero: no limit.
    pub header_timeout: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_body_bytes: 1 << 20,
            max_batch: 256,
            max_turn_bytes: memforest::memory::limits::MAX_TURN_TEXT_BYTES,
            max_k: memforest::MAX_K,
            max_context_tokens: 100_000,
            max_in_flight_per_key: 32,
            body_timeout: Duration::from_secs(30),
            header_timeout: Duration::from_secs(10),
        }
    }
}

/// Counts each key's requests in flight. Clones share the counts.
#[derive(Debug, Clone, Default)]
pub struct Limiter {
    max: usize,
    in_flight: Arc<Mutex<HashMap<String, usize>>>,
}

/// One request in flight; leaving drops the count.
#[derive(Debug)]
pub struct InFlight {
    key: String,
    in_flight: Arc<Mutex<HashMap<String, usize>>>,
}

impl Limiter {
    /// A limiter allowing `max` requests in flight per key.
    #[must_use]
    pub fn new(max: usize) -> Self {
        Self {
            max,
            in_flight: Arc::default(),
        }
    }

    /// Enters a request of key `key`; `None` when the key already has `max` in flight.
    #[must_use]
    pub fn try_enter(&self, key: &str) -> Option<InFlight> {
        let mut map = self.in_flight.lock().unwrap_or_else(|p| p.into_inner());
        let n = map.entry(key.to_owned()).or_insert(0);
        if *n >= self.max {
            return None;
        }
        *n += 1;
        Some(InFlight {
            key: key.to_owned(),
            in_flight: Arc::clone(&self.in_flight),
        })
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        let mut map = self.in_flight.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(n) = map.get_mut(&self.key) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                map.remove(&self.key);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_gets_at_most_max_in_flight_and_gets_them_back() {
        let l = Limiter::new(2);
        let a = l.try_enter("k");
        let b = l.try_enter("k");
        assert!(a.is_some() && b.is_some());
        assert!(l.try_enter("k").is_none());
        assert!(l.try_enter("other").is_some());
        drop(a);
        assert!(l.try_enter("k").is_some());
    }
}
