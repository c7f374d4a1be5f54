//! [`WriteBatch`]: puts, deletes and range deletes across tables and tenants, applied
//! atomically under one contiguous seqno range.
//!
//! The batch is kept directly in the WAL's representation ([`memforest_wal::WriteBatch`]):
//! each op is one WAL entry whose kind byte is an [`Op`] code, so a batch is encoded once.

use memforest_wal::WriteBatch as WalBatch;

use crate::key::{prefix_successor, Table, TenantId};

/// The op-kind byte of a WAL entry written by the engine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Op {
    /// Delete `key` (value empty).
    Delete = 0,
    /// Set `key` to `value`.
    Put = 1,
    /// Delete every key in `[key, value)` (key = start, value = end, both engine keys).
    RangeDelete = 2,
    /// Nothing: pads the WAL's seqno after recovery dropped batches that are already in
    /// segment files, so new writes never reuse a flushed seqno (key and value empty).
    Noop = 3,
}

impl Op {
    /// The op with code `byte`.
    #[must_use]
    pub fn from_byte(byte: u8) -> Option<Self> {
        match byte {
            0 => Some(Self::Delete),
            1 => Some(Self::Put),
            2 => Some(Self::RangeDelete),
            3 => Some(Self::Noop),
            _ => None,
        }
    }
}

/// An atomic group of writes (RocksDB `WriteBatch`): after any crash either every op of an
/// acknowledged batch is present or, for an unacknowledged one, all or none. Ops apply in
/// order; op `i` gets seqno `first + i`.
#[derive(Debug, Clone, Default)]
pub struct WriteBatch {
    inner: WalBatch,
    user_bytes: u64,
}

impl WriteBatch {
    /// An empty batch.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets `key` in `table` of `tenant` to `value`.
    pub fn put(&mut self, tenant: &TenantId, table: Table, key: &[u8], value: &[u8]) {
        self.push(Op::Put, tenant.key(table, key), value.to_vec());
    }

    /// Deletes `key` in `table` of `tenant` (absent keys are fine).
    pub fn delete(&mut self, tenant: &TenantId, table: Table, key: &[u8]) {
        self.push(Op::Delete, tenant.key(table, key), Vec::new());
    }

    /// Deletes every key `k` with `start <= k < end` in `table` of `tenant` (a no-op when
    /// `start >= end`).
    pub fn delete_range(&mut self, tenant: &TenantId, table: Table, start: &[u8], end: &[u8]) {
        if start < end {
            self.push(
                Op::RangeDelete,
                tenant.key(table, start),
                tenant.key(table, end),
            );
        }
    }

    /// Deletes every key of `table` in `tenant`.
    pub fn delete_table(&mut self, tenant: &TenantId, table: Table) {
        self.delete_prefix(&tenant.table_prefix(table));
    }

    /// Deletes every key of `tenant`, all tables.
    pub fn delete_tenant(&mut self, tenant: &TenantId) {
        self.delete_prefix(tenant.prefix());
    }

    fn delete_prefix(&mut self, prefix: &[u8]) {
        // Tenant prefixes never end in an all-0xFF run (the table tag is < 0xFF), so the
        // successor exists.
        if let Some(end) = prefix_successor(prefix) {
            self.push(Op::RangeDelete, prefix.to_vec(), end);
        }
    }

    fn push(&mut self, op: Op, key: Vec<u8>, value: Vec<u8>) {
        self.user_bytes += (key.len() + value.len()) as u64;
        self.inner.push(op as u8, key, value);
    }

    /// Number of ops.
    #[must_use]
    pub fn len(&self) -> usize {
        self.inner.len()
    }

    /// True when the batch holds no op.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.inner.is_empty()
    }

    /// Key and value bytes the user asked to write (the numerator's denominator of write
    /// amplification).
    #[must_use]
    pub fn user_bytes(&self) -> u64 {
        self.user_bytes
    }

    /// What this batch last did to `key` of `table` in `tenant` (read-your-own-writes for a
    /// batch being built): `Some(Some(value))` a put, `Some(None)` a delete, `None` no op
    /// on that key. Range deletes are not considered. Costs a scan of the batch.
    #[must_use]
    pub fn staged(&self, tenant: &TenantId, table: Table, key: &[u8]) -> Option<Option<&[u8]>> {
        let full = tenant.key(table, key);
        let e = self.inner.entries().iter().rev().find(|e| e.key == full)?;
        match Op::from_byte(e.kind) {
            Some(Op::Put) => Some(Some(&e.value)),
            Some(Op::Delete) => Some(None),
            _ => None,
        }
    }

    /// The WAL representation.
    pub(crate) fn wal_batch(&self) -> &WalBatch {
        &self.inner
    }
}
