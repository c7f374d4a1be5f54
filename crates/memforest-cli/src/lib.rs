//! The library behind the `memforest` command line: the `Memory` API's verbs as commands
//! ([`add`] from [`messages`], [`search`], get and list ([`records`]), [`profile`],
//! [`forget`]; times as [`when`] reads them), importers for LoCoMo, LongMemEval and
//! the MemForest JSONL format ([`import`]), ingest with progress ([`ingest`]), retrieval
//! ([`retrieve`]), evaluation against a flat BM25 baseline ([`eval`], [`baseline`]), store
//! inspection ([`stats`], [`verify`], [`walcmd`]) and the bundled demo ([`demo`]).
//!
//! Every function returns a typed [`CliError`] naming the file (and line/column or byte
//! offset) it is about; nothing here panics on any input.
#![deny(clippy::indexing_slicing)]

pub mod add;
pub mod baseline;
pub mod demo;
pub mod error;
pub mod eval;
pub mod forget;
pub mod import;
pub mod ingest;
pub mod location;
pub mod messages;
pub mod profile;
pub mod records;
pub mod retrieve;
pub mod search;
pub mod serve;
pub mod stats;
pub mod store;
pub mod verify;
pub mod versions;
pub mod walcmd;
pub mod when;

pub use error::{CliError, Result};
