//! Fuzz target `llm_reply`: see `fuzz/checks/llm_reply.rs`.
#![no_main]

#[path = "../checks/llm_reply.rs"]
mod check;

libfuzzer_sys::fuzz_target!(|data: &[u8]| check::check(data));
