//! `stats`: per-tenant memory counts (sessions, messages, memories, trees, summaries and
//! extractions still to do) and record counts, and engine statistics (levels, WAL,
//! amplification).

use std::collections::BTreeMap;

use memforest::schema::Table;
use memforest::{Memory, UserStats};
use serde::Serialize;

use crate::error::Result;

/// Record counts of one tenant, by table name.
#[derive(Debug, Clone, Default, Serialize)]
pub struct TenantStats {
    /// Tenant name (lossy UTF-8).
    pub tenant: String,
    /// What its memory holds ([`Memory::user_stats`]).
    pub memory: UserStats,
    /// Live keys per table (`Sessions` also holds cells; `Turns` raw turns; `Facts`
    /// canonical facts; `Trees` tree descriptors; ...).
    pub keys: BTreeMap<String, u64>,
    /// Key + value bytes of the live records per table: the logical size (keys without
    /// the tenant prefix and the seqno trailer), before block encoding.
    pub bytes: BTreeMap<String, u64>,
}

/// The store's statistics.
#[derive(Debug, Clone, Default, Serialize)]
pub struct StoreStats {
    /// One entry per tenant.
    pub tenants: Vec<TenantStats>,
    /// Segment files per level.
    pub level_files: Vec<usize>,
    /// Segment bytes per level.
    pub level_bytes: Vec<u64>,
    /// Bytes of WAL files on disk.
    pub wal_bytes: u64,
    /// Bytes held by memtables.
    pub memtable_bytes: u64,
    /// Space amplification estimate (total / deepest level).
    pub space_amplification: f64,
    /// Last published seqno.
    pub seqno: u64,
    /// What the open found damaged or set aside (quarantined segment files, WAL loss
    /// accepted by salvage, a torn manifest tail).
    pub damage: memforest_engine::OpenReport,
}

/// Collects the statistics of `db`.
///
/// # Errors
/// Engine read errors.
pub fn collect(db: &Memory) -> Result<StoreStats> {
    let mut out = StoreStats::default();
    for tenant in db.tenants()? {
        let name = String::from_utf8_lossy(tenant.name()).into_owned();
        let mut t = TenantStats {
            memory: db.user_stats(&name)?,
            tenant: name,
            keys: BTreeMap::new(),
            bytes: BTreeMap::new(),
        };
        for kv in db.db().scan_tenant(&tenant, None)? {
            let (k, v) = kv?;
            let table = k
                .first()
                .and_then(|&tag| Table::from_tag(tag))
                .map_or_else(|| "unknown".to_owned(), |t| format!("{t:?}"));
            *t.bytes.entry(table.clone()).or_default() += (k.len() + v.len()) as u64;
            *t.keys.entry(table).or_default() += 1;
        }
        out.tenants.push(t);
    }
    let s = db.db().stats();
    out.level_files = s.levels.iter().map(|l| l.files).collect();
    out.level_bytes = s.levels.iter().map(|l| l.bytes).collect();
    out.wal_bytes = s.wal_bytes;
    out.memtable_bytes = s.memtable_bytes;
    out.space_amplification = s.space_amplification;
    out.seqno = db.db().seqno();
    out.damage = db.open_report().clone();
    Ok(out)
}

/// The statistics as text.
#[must_use]
pub fn render(s: &StoreStats) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    if s.damage.is_damaged() {
        let _ = writeln!(
            out,
            "DAMAGED: {} quarantined segment files ({}), {} quarantined WAL files ({}), {} \
             lost WAL segments: what they hold is not served; run `memforest verify` and \
             `memforest repair`",
            s.damage.quarantined.len(),
            s.damage.quarantined.join(", "),
            s.damage.wal_quarantined.len(),
            s.damage.wal_quarantined.join(", "),
            s.damage.wal_missing.len()
        );
    }
    let _ = writeln!(out, "tenants: {}  seqno: {}", s.tenants.len(), s.seqno);
    let _ = writeln!(
        out,
        "levels (files/bytes): {}",
        s.level_files
            .iter()
            .zip(&s.level_bytes)
            .enumerate()
            .filter(|(_, (f, _))| **f > 0)
            .map(|(l, (f, b))| format!("L{l} {f}/{b}"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    let _ = writeln!(
        out,
        "wal bytes: {}  memtable bytes: {}  space amplification: {:.2}",
        s.wal_bytes, s.memtable_bytes, s.space_amplification
    );
    let mut all = TenantStats {
        tenant: "all tenants".to_owned(),
        ..TenantStats::default()
    };
    for t in &s.tenants {
        let _ = writeln!(out, "  {}", tenant_line(t));
        add_counts(&mut all.memory, &t.memory);
        for (table, n) in &t.keys {
            *all.keys.entry(table.clone()).or_default() += n;
        }
        for (table, b) in &t.bytes {
            *all.bytes.entry(table.clone()).or_default() += b;
        }
    }
    if s.tenants.len() > 1 {
        let _ = writeln!(out, "  {}", tenant_line(&all));
    }
    out
}

/// Adds `b`'s counts to `a`.
fn add_counts(a: &mut UserStats, b: &UserStats) {
    a.sessions += b.sessions;
    a.messages += b.messages;
    a.memories += b.memories;
    a.trees += b.trees;
    a.dirty_summaries += b.dirty_summaries;
    a.pending_extractions += b.pending_extractions;
    a.failed_extractions += b.failed_extractions;
}

/// `name: N sessions, ...` then, indented, `tables (keys/bytes): Table=keys/bytes ...`.
fn tenant_line(t: &TenantStats) -> String {
    let m = &t.memory;
    let tables: Vec<String> = t
        .keys
        .iter()
        .map(|(table, n)| {
            let bytes = t.bytes.get(table).copied().unwrap_or(0);
            format!("{table}={n}/{bytes}")
        })
        .collect();
    format!(
        "{}: {} sessions, {} messages, {} memories, {} trees; to do: {} summaries, {} \
         extractions ({} given up)\n    tables (keys/bytes): {}",
        t.tenant,
        m.sessions,
        m.messages,
        m.memories,
        m.trees,
        m.dirty_summaries,
        m.pending_extractions,
        m.failed_extractions,
        tables.join(" ")
    )
}
