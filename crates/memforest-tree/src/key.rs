//! Leaf order keys: a time range plus the payload they index.
//!
//! Times are **microseconds since the Unix epoch** (UTC) as `i64`, so dates before 1970 are
//! representable. A leaf's key is `(time_start, time_end, payload)` and leaves are kept in
//! that order; keys are unique within one tree.

use std::fmt;

/// An inclusive time range `[start, end]` in microseconds since the Unix epoch, `start <= end`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct TimeRange {
    /// First microsecond covered.
    pub start: i64,
    /// Last microsecond covered (inclusive).
    pub end: i64,
}

impl TimeRange {
    /// The range `[start, end]`; `None` when `start > end`.
    #[must_use]
    pub fn new(start: i64, end: i64) -> Option<Self> {
        (start <= end).then_some(Self { start, end })
    }

    /// The smallest range covering both.
    #[must_use]
    pub fn union(self, other: Self) -> Self {
        Self {
            start: self.start.min(other.start),
            end: self.end.max(other.end),
        }
    }

    /// True when the two ranges share at least one microsecond.
    #[must_use]
    pub fn overlaps(self, other: Self) -> bool {
        self.start <= other.end && other.start <= self.end
    }
}

/// What a leaf points at.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum PayloadKind {
    /// A canonical fact (entity and scene trees).
    Fact,
    /// A memory cell of contiguous turns (session trees).
    Cell,
}

impl PayloadKind {
    /// Stored byte: 1 = Fact, 2 = Cell.
    #[must_use]
    pub fn as_u8(self) -> u8 {
        match self {
            Self::Fact => 1,
            Self::Cell => 2,
        }
    }

    /// Inverse of [`PayloadKind::as_u8`].
    #[must_use]
    pub fn from_u8(byte: u8) -> Option<Self> {
        match byte {
            1 => Some(Self::Fact),
            2 => Some(Self::Cell),
            _ => None,
        }
    }
}

/// The payload of one leaf: a fact id or a cell id, as assigned by the engine (`u64`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Payload {
    /// Fact or cell.
    pub kind: PayloadKind,
    /// The engine's id of that fact or cell.
    pub id: u64,
}

impl Payload {
    /// A fact payload.
    #[must_use]
    pub fn fact(id: u64) -> Self {
        Self {
            kind: PayloadKind::Fact,
            id,
        }
    }

    /// A cell payload.
    #[must_use]
    pub fn cell(id: u64) -> Self {
        Self {
            kind: PayloadKind::Cell,
            id,
        }
    }
}

/// A leaf's order key: `(time.start, time.end, payload)`, compared in that order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct LeafKey {
    /// The payload's time range (microseconds since the Unix epoch).
    pub time: TimeRange,
    /// What the leaf points at; breaks ties between equal time ranges.
    pub payload: Payload,
}

impl LeafKey {
    /// Encoded size in a page: start i64, end i64, payload kind u8, payload id u64.
    pub const ENCODED_LEN: usize = 25;
}

impl fmt::Display for LeafKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "[{}..={}] {:?}#{}",
            self.time.start, self.time.end, self.payload.kind, self.payload.id
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_order_by_start_then_end_then_payload() {
        let key = |s, e, id| LeafKey {
            time: TimeRange::new(s, e).unwrap(),
            payload: Payload::fact(id),
        };
        assert!(key(1, 9, 9) < key(2, 2, 0));
        assert!(key(1, 2, 9) < key(1, 3, 0));
        assert!(key(1, 2, 1) < key(1, 2, 2));
        assert_eq!(TimeRange::new(3, 2), None);
    }

    #[test]
    fn overlap_is_inclusive() {
        let r = |s, e| TimeRange::new(s, e).unwrap();
        assert!(r(1, 2).overlaps(r(2, 3)));
        assert!(!r(1, 2).overlaps(r(3, 4)));
        assert_eq!(r(1, 2).union(r(5, 6)), r(1, 6));
    }
}
