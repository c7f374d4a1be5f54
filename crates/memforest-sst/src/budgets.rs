//! [`ReadBudgets`]: the shared limits an engine opens its segment files under.

use std::sync::Arc;

use crate::descriptors::DescriptorTable;
use crate::residency::Residency;

/// What every segment file an engine opens shares: the byte budget of their resident
/// mapped pages and the table of open descriptors their point lookups read through.
/// Cheap to clone (two `Arc`s).
#[derive(Debug, Clone)]
pub struct ReadBudgets {
    /// Resident mapped pages, in bytes (one per engine:
    /// `Options::segment_resident_bytes`).
    pub residency: Arc<Residency>,
    /// Open descriptors for point lookups (the engine passes
    /// [`DescriptorTable::shared`], one per process).
    pub descriptors: Arc<DescriptorTable>,
}
