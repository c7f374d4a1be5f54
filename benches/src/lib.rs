//! Criterion benchmarks for MemForest live in `benches/benches/`; run them with
//! `cargo bench -p memforest-benches`. This library is empty on purpose.
