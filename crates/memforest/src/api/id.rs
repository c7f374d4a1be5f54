//! [`MemoryId`]: the stable, JSON-safe name of one memory (a canonical fact).

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A memory's id: 16 lowercase hex digits (the fact's 64-bit id), e.g. `"3f9c0a1b2d4e5f60"`.
/// Stable across reopen (a fact's id is derived from its normalized text), unique within
/// a user, and a plain string in JSON. Parse one with `str::parse`. `Debug` shows the same
/// hex digits (`MemoryId(3f9c0a1b2d4e5f60)`), so logs and messages agree.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct MemoryId(u64);

impl MemoryId {
    /// The id of fact `fact`.
    pub(crate) fn from_fact(fact: u64) -> Self {
        Self(fact)
    }

    /// The fact id.
    pub(crate) fn fact(self) -> u64 {
        self.0
    }
}

impl fmt::Display for MemoryId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:016x}", self.0)
    }
}

impl fmt::Debug for MemoryId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "MemoryId({self})")
    }
}

/// Why a string is not a [`MemoryId`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0:?} is not a memory id (16 hex digits)")]
pub struct BadMemoryId(pub String);

impl FromStr for MemoryId {
    type Err = BadMemoryId;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let bad = || BadMemoryId(s.chars().take(64).collect());
        if s.len() != 16 || !s.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(bad());
        }
        u64::from_str_radix(s, 16).map(Self).map_err(|_| bad())
    }
}

impl Serialize for MemoryId {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for MemoryId {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_round_trip_as_strings_and_refuse_anything_else() {
        let id = MemoryId::from_fact(0x00ab_cdef_0123_4567);
        assert_eq!(id.to_string(), "00abcdef01234567");
        assert_eq!(format!("{id:?}"), "MemoryId(00abcdef01234567)");
        assert_eq!("00abcdef01234567".parse::<MemoryId>(), Ok(id));
        assert_eq!("00ABCDEF01234567".parse::<MemoryId>(), Ok(id));
        for bad in [
            "",
            "abc",
            "00abcdef0123456",
            "00abcdef012345678",
            "00abcdef0123456g",
            "+0abcdef01234567",
        ] {
            assert!(bad.parse::<MemoryId>().is_err(), "{bad}");
        }
        let json = serde_json::to_string(&id).unwrap_or_default();
        assert_eq!(json, "\"00abcdef01234567\"");
    }
}
