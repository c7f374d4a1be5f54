//! The memory layer (MemForest write path): sessions are committed as raw turns, cut into
//! MemCells, extracted into canonical facts, routed into MemTrees (session, `entity:user`,
//! entities, scenes), and summarized in the background by a bounded worker pool.
//!
//! See `docs/format/memory.md` for the table layout.

pub mod embed;
pub mod extract;
pub mod model;
pub mod session;
pub mod summarize;
pub mod time;
