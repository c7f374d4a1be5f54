//! Runs the `server_request` fuzz check (`fuzz/checks/server_request.rs`) over its seed
//! corpus, so every `cargo test` exercises the request decoder on those bodies.
#![allow(clippy::unwrap_used, reason = "test code")]

#[path = "../../../fuzz/checks/server_request.rs"]
mod server_request;

use std::path::Path;

#[test]
fn server_request_seeds() {
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/corpus/server_request");
    let mut n = 0;
    for entry in std::fs::read_dir(corpus).unwrap() {
        server_request::check(&std::fs::read(entry.unwrap().path()).unwrap());
        n += 1;
    }
    assert!(n >= 8, "only {n} seeds");
}
