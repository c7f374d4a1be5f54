//! Cells that can never be extracted: a failure that is the cell's own and not transient
//! (a text over a MemTree page, a key or value over the engine's limits, a record over the
//! decode limit, a turn record that does not decode) would fail the same way on every
//! retry, and a batch holding it would fail every later ingest. Such a cell is given up:
//! its pending mark is replaced by a failed mark ([`FAILED_PREFIX`], with the reason), it
//! is counted (`IngestReceipt::cells_failed`, `MemoryStats::failed_cells`), and its raw
//! turns stay stored and readable. Model failures are not permanent: they stay pending and
//! are retried with backoff.

use memforest_tree::TreeError;

use crate::memory::record::{self, FailedCellRecord, FAILED_PREFIX, PENDING_PREFIX};
use crate::memory::store::Staged;
use crate::memory::{MemoryError, Shared};
use crate::schema::Table;
use memforest_engine::TenantId;

/// True when `e`, met extracting or committing one cell, would recur on every retry.
#[must_use]
pub fn is_permanent(e: &MemoryError) -> bool {
    match e {
        MemoryError::Tree(TreeError::TextTooLong { .. })
        | MemoryError::Engine(memforest_engine::Error::InvalidArgument(_))
        | MemoryError::Encode(_) => true,
        MemoryError::Corrupt { what, .. } => *what == "turn",
        _ => false,
    }
}

/// Records cell `cell` as failed for `reason` in one batch: its pending mark goes, its
/// failed mark comes. Nothing else of the cell is written.
///
/// # Errors
/// Engine write errors.
pub fn record(
    shared: &Shared,
    tenant: &TenantId,
    cell: u64,
    reason: &MemoryError,
) -> Result<(), MemoryError> {
    let _forest = shared.forest.lock();
    let id = cell.to_be_bytes();
    let mut st = Staged::new(&shared.kv, tenant.clone());
    st.delete(Table::RouterState, &record::prefixed(PENDING_PREFIX, &id));
    let rec = FailedCellRecord {
        reason: reason.to_string(),
    };
    st.put(
        Table::RouterState,
        &record::prefixed(FAILED_PREFIX, &id),
        record::encode(&rec)?,
    );
    st.commit(shared.opts.durability)?;
    shared.counters.cell_failed();
    Ok(())
}
