//! The memory store's schema: which engine table (tag byte) holds what. The engine gives
//! tags no meaning ([`memforest_engine::Table`]); this enum is their one definition. See
//! `docs/format/memory.md`.

/// The memory store's tables: the tag byte that follows the tenant in every engine key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(u8)]
pub enum Table {
    /// Conversation sessions.
    Sessions = 0x01,
    /// Conversation turns.
    Turns = 0x02,
    /// Canonical facts.
    Facts = 0x03,
    /// Fact time index (time -> fact id).
    FactTimeIndex = 0x04,
    /// MemTree descriptors (one per scope).
    Trees = 0x05,
    /// MemTree node pages ([`crate::node_store`]).
    NodePages = 0x06,
    /// Fact-to-tree memberships.
    Memberships = 0x07,
    /// Router state.
    RouterState = 0x08,
    /// Derived: summaries (regenerable).
    Summaries = 0x40,
    /// Derived: embeddings (regenerable).
    Embeddings = 0x41,
    /// Derived: dirty-mark bookkeeping (regenerable).
    DirtyMarks = 0x42,
    /// Derived: the read path's lexical postings and fact slots (`crate::recall::index`).
    Postings = 0x43,
    /// Derived: fact embeddings (`crate::recall::vectors`; regenerable).
    FactVectors = 0x44,
}

impl Table {
    /// Every table, in tag order.
    pub const ALL: [Self; 13] = [
        Self::Sessions,
        Self::Turns,
        Self::Facts,
        Self::FactTimeIndex,
        Self::Trees,
        Self::NodePages,
        Self::Memberships,
        Self::RouterState,
        Self::Summaries,
        Self::Embeddings,
        Self::DirtyMarks,
        Self::Postings,
        Self::FactVectors,
    ];

    /// The derived tables, which [`crate::Memory::drop_derived`] drops for every tenant.
    pub const DERIVED: [Self; 5] = [
        Self::Summaries,
        Self::Embeddings,
        Self::DirtyMarks,
        Self::Postings,
        Self::FactVectors,
    ];

    /// The tag byte.
    #[must_use]
    pub fn tag(self) -> u8 {
        self as u8
    }

    /// The table with tag `tag`, if any.
    #[must_use]
    pub fn from_tag(tag: u8) -> Option<Self> {
        Self::ALL.into_iter().find(|t| t.tag() == tag)
    }

    /// True for tables that can be dropped and regenerated.
    #[must_use]
    pub fn is_derived(self) -> bool {
        Self::DERIVED.contains(&self)
    }
}

impl From<Table> for memforest_engine::Table {
    fn from(t: Table) -> Self {
        Self::new(t.tag())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_round_trip() {
        for t in Table::ALL {
            assert_eq!(Table::from_tag(t.tag()), Some(t));
            assert_eq!(memforest_engine::Table::from(t).tag(), t.tag());
        }
        assert_eq!(Table::from_tag(0), None);
    }
}
