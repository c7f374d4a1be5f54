//! Users: the plain strings of the API, checked and turned into engine tenants.

use memforest_engine::TenantId;

use crate::memory::MemoryError;

/// The tenant of user `user` (1..=1024 bytes, no NUL).
///
/// # Errors
/// [`MemoryError::Name`] naming what is wrong with it.
pub(crate) fn tenant(user: &str) -> Result<TenantId, MemoryError> {
    Ok(TenantId::new(user)?)
}
