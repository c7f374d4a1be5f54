//! Tree kinds: which view of memory a MemTree indexes (MemForest paper, "Scopes").

use std::fmt;

/// The scope a MemTree indexes. Stored in the tree's meta page as one byte.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum TreeKind {
    /// One tree per conversation session; leaves are memory cells (raw text).
    Session,
    /// One tree per active entity; the special label [`USER_ENTITY`] (`entity:user`) holds
    /// every user-origin fact and is the write hotspot.
    Entity,
    /// One tree per online scene cluster of facts.
    Scene,
}

/// Label of the special entity tree that holds every user-origin fact (`entity:user`).
pub const USER_ENTITY: &str = "user";

impl TreeKind {
    /// The byte stored in the meta page: 1 = Session, 2 = Entity, 3 = Scene.
    #[must_use]
    pub fn as_u8(self) -> u8 {
        match self {
            Self::Session => 1,
            Self::Entity => 2,
            Self::Scene => 3,
        }
    }

    /// Inverse of [`TreeKind::as_u8`]; `None` for any other byte.
    #[must_use]
    pub fn from_u8(byte: u8) -> Option<Self> {
        match byte {
            1 => Some(Self::Session),
            2 => Some(Self::Entity),
            3 => Some(Self::Scene),
            _ => None,
        }
    }

    /// Lower-case name used in tree labels: `session`, `entity`, `scene`.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::Session => "session",
            Self::Entity => "entity",
            Self::Scene => "scene",
        }
    }
}

impl fmt::Display for TreeKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn byte_round_trip_and_unknown_bytes() {
        for kind in [TreeKind::Session, TreeKind::Entity, TreeKind::Scene] {
            assert_eq!(TreeKind::from_u8(kind.as_u8()), Some(kind));
        }
        assert_eq!(TreeKind::from_u8(0), None);
        assert_eq!(TreeKind::from_u8(4), None);
        assert_eq!(format!("{}:{USER_ENTITY}", TreeKind::Entity), "entity:user");
    }
}
