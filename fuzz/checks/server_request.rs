//! `server_request`: arbitrary bytes as the body of each REST route and MCP tool of
//! `memforest serve` (the first byte picks the request kind). The decoder returns a request
//! within the limits or a 400/413 error, never a panic.

#![allow(
    clippy::expect_used,
    reason = "a failed expectation is a finding: the fuzzer and the corpus test report it"
)]

use memforest_server::request::{
    decode, AddRequest, ContextRequest, ListRequest, SearchRequest, UpdateRequest,
};
use memforest_server::{ApiError, Limits};

fn limits() -> Limits {
    Limits {
        max_body_bytes: 2048,
        max_batch: 4,
        max_turn_bytes: 64,
        max_k: 50,
        max_context_tokens: 500,
        ..Limits::default()
    }
}

fn refused(e: &ApiError) {
    let status = e.status().as_u16();
    assert!(status == 400 || status == 413, "status {status} for a body");
}

/// Runs the check on one input.
pub fn check(data: &[u8]) {
    let l = limits();
    let (kind, body) = data.split_first().map_or((0, data), |(k, b)| (*k, b));
    match kind % 5 {
        0 => match decode::<AddRequest>(body, &l) {
            Ok(r) => {
                assert!((1..=l.max_batch).contains(&r.messages.len()), "batch size");
                assert!(r.messages.iter().all(|m| m.text.len() <= l.max_turn_bytes));
                assert_eq!(r.messages().len(), r.messages.len());
            }
            Err(e) => refused(&e),
        },
        1 => match decode::<SearchRequest>(body, &l) {
            Ok(r) => {
                assert!(r.options().k >= 1 && r.options().k <= l.max_k, "k in range");
                assert!(r.query.len() <= l.max_turn_bytes);
            }
            Err(e) => refused(&e),
        },
        2 => match decode::<ContextRequest>(body, &l) {
            Ok(r) => assert!(r.max_tokens() <= l.max_context_tokens.max(1000)),
            Err(e) => refused(&e),
        },
        3 => match decode::<UpdateRequest>(body, &l) {
            Ok(r) => assert!(r.text.len() <= l.max_turn_bytes),
            Err(e) => refused(&e),
        },
        _ => match decode::<ListRequest>(body, &l) {
            Ok(r) => assert!(r.options().limit <= l.max_k.max(100)),
            Err(e) => refused(&e),
        },
    }
}
