//! The error that stopped the background work (extraction, summaries, re-embedding), kept
//! so that [`crate::Memory::flush_summaries`] and every later call that reports it give it
//! as what it was: a storage failure stays an engine error, a corrupt record or MemTree
//! page stays corruption, and only the rest reads as a failed model call.

use std::sync::Arc;

use memforest_tree::{StoreError, TreeError};

use crate::memory::MemoryError;

/// A background failure by kind ([`MemoryError`] is not `Clone`: the kept error is given
/// out again on each call that reports it).
#[derive(Debug, Clone)]
pub(crate) enum BackgroundError {
    /// The engine failed (a full disk poisoning the WAL, a read error), directly or under
    /// a MemTree page store: reported as `MemoryError::Engine(Error::Background(..))`.
    Engine(Arc<memforest_engine::Error>),
    /// A corrupt record, or a MemTree error that is not the engine's (a bad or missing
    /// page): reported as [`MemoryError::Corrupt`] (`what` is `"memtree"` for the latter).
    Corrupt { what: &'static str, detail: String },
    /// A broken invariant of the memory layer: reported as [`MemoryError::Invariant`].
    Invariant(&'static str),
    /// Anything else (a model call that failed for good), by its message: reported as
    /// [`MemoryError::Model`].
    Other(String),
}

impl BackgroundError {
    /// `e` by kind (see the variants).
    pub(crate) fn of(e: MemoryError) -> Self {
        let engine = match e {
            MemoryError::Engine(e) => e,
            MemoryError::Tree(TreeError::Store(StoreError(inner))) => {
                match inner.downcast::<memforest_engine::Error>() {
                    Ok(e) => *e,
                    Err(other) => {
                        return Self::Corrupt {
                            what: "memtree",
                            detail: other.to_string(),
                        }
                    }
                }
            }
            MemoryError::Tree(e) => {
                return Self::Corrupt {
                    what: "memtree",
                    detail: e.to_string(),
                }
            }
            MemoryError::Corrupt { what, detail } => return Self::Corrupt { what, detail },
            MemoryError::Invariant(why) => return Self::Invariant(why),
            MemoryError::Model(why) => return Self::Other(why),
            other => return Self::Other(other.to_string()),
        };
        Self::Engine(match engine {
            memforest_engine::Error::Background(inner) => inner,
            e => Arc::new(e),
        })
    }

    /// The error to report.
    pub(crate) fn error(&self) -> MemoryError {
        match self {
            Self::Engine(e) => {
                MemoryError::Engine(memforest_engine::Error::Background(Arc::clone(e)))
            }
            Self::Corrupt { what, detail } => MemoryError::Corrupt {
                what,
                detail: detail.clone(),
            },
            Self::Invariant(why) => MemoryError::Invariant(why),
            Self::Other(why) => MemoryError::Model(why.clone()),
        }
    }
}

#[cfg(test)]
mod tests {
    use memforest_tree::{NodeId, TreeId};

    use super::*;

    fn kept(e: MemoryError) -> MemoryError {
        BackgroundError::of(e).error()
    }

    #[test]
    fn each_kind_is_reported_as_itself() {
        let corrupt = kept(MemoryError::Corrupt {
            what: "fact",
            detail: "truncated".into(),
        });
        assert!(
            matches!(&corrupt, MemoryError::Corrupt { what: "fact", detail } if detail == "truncated"),
            "{corrupt:?}"
        );
        let page = kept(MemoryError::Tree(TreeError::MissingPage {
            tree: TreeId(3),
            node: NodeId(7),
        }));
        assert!(
            matches!(&page, MemoryError::Corrupt { what: "memtree", detail } if detail.contains("page missing")),
            "{page:?}"
        );
        let invariant = kept(MemoryError::Invariant("pending cell has no cell record"));
        assert!(
            matches!(
                invariant,
                MemoryError::Invariant("pending cell has no cell record")
            ),
            "{invariant:?}"
        );
        let model = kept(MemoryError::Model("HTTP 500".into()));
        assert!(
            matches!(&model, MemoryError::Model(m) if m == "HTTP 500"),
            "{model:?}"
        );
        let engine = kept(MemoryError::Engine(memforest_engine::Error::ReadOnly));
        assert!(
            matches!(&engine, MemoryError::Engine(memforest_engine::Error::Background(e)) if matches!(**e, memforest_engine::Error::ReadOnly)),
            "{engine:?}"
        );
    }
}
