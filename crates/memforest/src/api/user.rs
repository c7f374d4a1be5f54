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

/// The tenant of user `user` for a write: also refuses a name that is only whitespace
/// (`memory::limits::check_user`), which reads still accept.
///
/// # Errors
/// [`MemoryError::Name`] naming what is wrong with it.
pub(crate) fn writer_tenant(user: &str) -> Result<TenantId, MemoryError> {
    let tenant = tenant(user)?;
    crate::memory::limits::check_user(&tenant)?;
    Ok(tenant)
}
