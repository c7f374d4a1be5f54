//! Branching factor configuration.
//!
//! The branching factor `k` is the most children (or leaf entries) one node holds. The paper
//! finds summary quality holds up to about 16 children per LLM call; the reference code uses
//! 3 / 8 / 10 for session / entity / scene trees. It is chosen per kind from configuration when
//! a tree is created, stored in the tree's meta page, and never derived from the number of
//! items (the reference code's `k = 2` fallback for a tree created from one fact turned 200
//! appends into a 200-level tree).

use crate::kind::TreeKind;

/// Smallest accepted branching factor. With `k = 2` a B+ tree degenerates (a split leaves
/// single-child nodes), so 3 is the floor.
pub const MIN_BRANCHING: u16 = 3;
/// Largest accepted branching factor; bounds a node page to at most this many entries.
pub const MAX_BRANCHING: u16 = 1024;
/// Default branching factor for every kind.
pub const DEFAULT_BRANCHING: u16 = 16;

/// A rejected configuration value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("branching factor {k} is outside {MIN_BRANCHING}..={MAX_BRANCHING}")]
pub struct ConfigError {
    /// The value that was rejected.
    pub k: u16,
}

/// A validated branching factor `k` (children per node), in `3..=1024`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Branching(u16);

impl Branching {
    /// Validates `k`.
    ///
    /// # Errors
    /// [`ConfigError`] when `k` is below [`MIN_BRANCHING`] or above [`MAX_BRANCHING`].
    pub fn new(k: u16) -> Result<Self, ConfigError> {
        if (MIN_BRANCHING..=MAX_BRANCHING).contains(&k) {
            Ok(Self(k))
        } else {
            Err(ConfigError { k })
        }
    }

    /// The most entries one node holds.
    #[must_use]
    pub fn max(self) -> usize {
        usize::from(self.0)
    }

    /// The fewest entries a node off the right edge holds after a delete: `ceil(k / 2)`.
    #[must_use]
    pub fn min(self) -> usize {
        usize::from(self.0).div_ceil(2)
    }

    /// `k` as stored in the meta page.
    #[must_use]
    pub fn get(self) -> u16 {
        self.0
    }
}

impl Default for Branching {
    fn default() -> Self {
        Self(DEFAULT_BRANCHING)
    }
}

/// Branching factor per tree kind. Read once when a tree is created; the chosen value then
/// lives in that tree's meta page, so changing the configuration later never reshapes an
/// existing tree.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TreeConfig {
    /// `k` for session trees (default 16; the reference code uses 3).
    pub session: Branching,
    /// `k` for entity trees, `entity:user` included (default 16; the reference uses 8).
    pub entity: Branching,
    /// `k` for scene trees (default 16; the reference uses 10).
    pub scene: Branching,
}

impl TreeConfig {
    /// The same `k` for every kind.
    ///
    /// # Errors
    /// [`ConfigError`] when `k` is out of range.
    pub fn uniform(k: u16) -> Result<Self, ConfigError> {
        let k = Branching::new(k)?;
        Ok(Self {
            session: k,
            entity: k,
            scene: k,
        })
    }

    /// The branching factor a new tree of `kind` gets.
    #[must_use]
    pub fn branching(&self, kind: TreeKind) -> Branching {
        match kind {
            TreeKind::Session => self.session,
            TreeKind::Entity => self.entity,
            TreeKind::Scene => self.scene,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds_are_enforced() {
        assert_eq!(Branching::new(2), Err(ConfigError { k: 2 }));
        assert_eq!(Branching::new(1025), Err(ConfigError { k: 1025 }));
        assert_eq!(Branching::new(3).map(Branching::min), Ok(2));
        assert_eq!(Branching::new(16).map(Branching::min), Ok(8));
        assert_eq!(Branching::default().get(), 16);
    }

    #[test]
    fn per_kind_lookup() {
        let config = TreeConfig {
            session: Branching::new(3).unwrap(),
            ..TreeConfig::default()
        };
        assert_eq!(config.branching(TreeKind::Session).get(), 3);
        assert_eq!(config.branching(TreeKind::Entity).get(), 16);
        assert!(TreeConfig::uniform(2).is_err());
    }
}
