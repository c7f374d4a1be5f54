//! Fuzz target `recall_bm25`: see `fuzz/checks/recall_bm25.rs`.
#![no_main]

#[path = "../checks/recall_bm25.rs"]
mod check;

libfuzzer_sys::fuzz_target!(|data: &[u8]| check::check(data));
