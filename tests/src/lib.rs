//! Cross-crate integration tests for MemForest live in `tests/tests/`; run them with
//! `cargo test -p memforest-tests`. This library is empty on purpose.
