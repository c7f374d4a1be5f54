//! Workloads for MemForest's benchmarks: the Criterion benches in `benches/benches/`
//! (`cargo bench -p memforest-benches`) and `memforest bench`. Nothing here is part of the
//! memory store a user adds.
//!
//! - [`synth`]: a synthetic conversation corpus and the extractor that reads it back.

pub mod synth;
