//! Key layout: every engine key is `tenant length (u16 BE) | tenant | table tag (u8) | key`.
//!
//! One tenant's keys therefore form one contiguous range (its prefix), and so do one
//! table's keys within a tenant: isolation comes from the layout and dropping a tenant is
//! one range delete. Tenant names are at most [`MAX_TENANT_LEN`] bytes, so every tenant key
//! starts with a byte below `0xFF`; keys starting with `0xFF` are the engine's own
//! ([`RESERVED_PREFIX`], range tombstones). See `docs/format/engine.md`.

use bytes::Bytes;

use crate::input::{check_len, check_name, InputError};

/// Longest tenant name, in bytes.
pub const MAX_TENANT_LEN: usize = 1024;

/// First byte of every engine-internal key; no tenant key starts with it.
pub const RESERVED_PREFIX: u8 = 0xFF;

/// A table: an opaque tag byte that follows the tenant in every key. The engine gives tags
/// no meaning; the layer above defines its tables (the memory store's schema lives in the
/// `memforest` crate). One tenant's table is one contiguous key range.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Table(u8);

impl Table {
    /// The table with tag `tag`.
    #[must_use]
    pub const fn new(tag: u8) -> Self {
        Self(tag)
    }

    /// The tag byte.
    #[must_use]
    pub const fn tag(self) -> u8 {
        self.0
    }
}

/// A validated tenant name (1..=[`MAX_TENANT_LEN`] bytes, no NUL byte) and its encoded key
/// prefix.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct TenantId {
    prefix: Bytes,
}

impl TenantId {
    /// A tenant named `name`: 1..=[`MAX_TENANT_LEN`] bytes (any bytes but NUL: a name
    /// with a NUL could not be given on a command line, so its data could never be queried
    /// or forgotten there).
    ///
    /// # Errors
    /// [`InputError`] naming the `tenant name` field: empty, over [`MAX_TENANT_LEN`] bytes,
    /// or holding a NUL byte. It converts into [`crate::Error::InvalidArgument`].
    pub fn new(name: impl AsRef<[u8]>) -> Result<Self, InputError> {
        let name = name.as_ref();
        check_name("tenant name", name, MAX_TENANT_LEN)?;
        Self::from_stored(name)
    }

    /// A tenant whose name was read back from a key of the store: 1..=[`MAX_TENANT_LEN`]
    /// bytes, NUL allowed (stores written before [`TenantId::new`] refused NUL may hold
    /// such names, and they must stay listable, readable and erasable).
    ///
    /// # Errors
    /// [`InputError`] for an empty name or one over [`MAX_TENANT_LEN`] bytes.
    pub fn from_stored(name: impl AsRef<[u8]>) -> Result<Self, InputError> {
        let name = name.as_ref();
        if name.is_empty() {
            return Err(InputError::Empty {
                field: "tenant name",
            });
        }
        check_len("tenant name", name.len(), MAX_TENANT_LEN)?;
        // MAX_TENANT_LEN fits a u16.
        let len = u16::try_from(name.len()).unwrap_or(u16::MAX);
        let mut prefix = Vec::with_capacity(2 + name.len());
        prefix.extend_from_slice(&len.to_be_bytes());
        prefix.extend_from_slice(name);
        Ok(Self {
            prefix: prefix.into(),
        })
    }

    /// The tenant's name.
    #[must_use]
    pub fn name(&self) -> &[u8] {
        self.prefix.get(2..).unwrap_or_default()
    }

    /// The prefix every key of this tenant starts with.
    #[must_use]
    pub fn prefix(&self) -> &[u8] {
        &self.prefix
    }

    /// The prefix of `table` within this tenant.
    #[must_use]
    pub fn table_prefix(&self, table: Table) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.prefix.len() + 1);
        out.extend_from_slice(&self.prefix);
        out.push(table.tag());
        out
    }

    /// The full engine key of `key` in `table`.
    #[must_use]
    pub fn key(&self, table: Table, key: &[u8]) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.prefix.len() + 1 + key.len());
        out.extend_from_slice(&self.prefix);
        out.push(table.tag());
        out.extend_from_slice(key);
        out
    }
}

/// The name, as text (invalid UTF-8 replaced), so a tenant prints readably in messages.
impl std::fmt::Display for TenantId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&String::from_utf8_lossy(self.name()))
    }
}

/// A decoded engine key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecodedKey<'a> {
    /// The tenant's name.
    pub tenant: &'a [u8],
    /// The table.
    pub table: Table,
    /// The key within the table.
    pub key: &'a [u8],
}

/// Splits an engine key into tenant, table and key; `None` for a reserved or malformed key.
#[must_use]
pub fn decode(full: &[u8]) -> Option<DecodedKey<'_>> {
    let len_bytes: [u8; 2] = full.get(..2)?.try_into().ok()?;
    let len = usize::from(u16::from_be_bytes(len_bytes));
    if len == 0 || len > MAX_TENANT_LEN {
        return None;
    }
    let tenant = full.get(2..2 + len)?;
    let table = Table::new(*full.get(2 + len)?);
    let key = full.get(3 + len..)?;
    Some(DecodedKey { tenant, table, key })
}

/// The smallest key greater than every key starting with `prefix` (`None` when the prefix
/// is all `0xFF`, i.e. unbounded).
#[must_use]
pub fn prefix_successor(prefix: &[u8]) -> Option<Vec<u8>> {
    let mut out = prefix.to_vec();
    while let Some(last) = out.pop() {
        if last < 0xFF {
            out.push(last + 1);
            return Some(out);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tenants_are_disjoint_contiguous_prefixes() {
        let a = TenantId::new("a").unwrap();
        let ab = TenantId::new("ab").unwrap();
        let k1 = a.key(Table::new(3), b"\xff\xff");
        let k2 = ab.key(Table::new(1), b"");
        assert!(!k2.starts_with(a.prefix()));
        assert!(!k1.starts_with(ab.prefix()));
        let end = prefix_successor(a.prefix()).unwrap();
        assert!(k1.as_slice() < end.as_slice());
        assert!(k1.first() != Some(&RESERVED_PREFIX));
        let d = decode(&k1).unwrap();
        assert_eq!(
            (d.tenant, d.table, d.key),
            (&b"a"[..], Table::new(3), &b"\xff\xff"[..])
        );
        assert!(decode(&[RESERVED_PREFIX, 1, 2]).is_none());
    }

    #[test]
    fn bad_tenants_are_refused() {
        assert!(TenantId::new("").is_err());
        assert!(TenantId::new(vec![b'x'; MAX_TENANT_LEN + 1]).is_err());
        assert!(TenantId::new(vec![b'x'; MAX_TENANT_LEN]).is_ok());
        assert_eq!(
            TenantId::new("a\0b"),
            Err(InputError::Nul {
                field: "tenant name",
                at: 1
            })
        );
    }
}
