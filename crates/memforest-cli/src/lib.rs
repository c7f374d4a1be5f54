//! The library behind the `memforest` command line: importers for LoCoMo, LongMemEval and
//! the MemForest JSONL format ([`import`]), ingest with progress ([`ingest`]), retrieval
//! ([`retrieve`]), evaluation against a flat BM25 baseline ([`eval`], [`baseline`]), store
//! inspection ([`stats`], [`verify`], [`walcmd`]) and the bundled demo ([`demo`]).
//!
//! Every function returns a typed [`CliError`] naming the file (and line/column or byte
//! offset) it is about; nothing here panics on any input.
#![deny(clippy::indexing_slicing)]

pub mod baseline;
pub mod demo;
pub mod error;
pub mod eval;
pub mod import;
pub mod ingest;
pub mod retrieve;
pub mod stats;
pub mod store;
pub mod verify;
pub mod walcmd;

pub use error::{CliError, Result};
