//! The importers' up-front check: every tenant name and session of a file is checked
//! against the store's input limits while the file is read, so that a bad entry fails
//! naming its place in the file before anything is stored (`memforest ingest` stores
//! nothing from a file with any bad entry).

use std::path::Path;

use memforest::api::UPDATES_SESSION;
use memforest::memory::limits::{check_session, check_user, SessionInputError};
use memforest::memory::session::Session;
use memforest_engine::{InputError, TenantId};

use crate::error::{CliError, Result};

/// Why an entry of an input file is refused.
#[derive(Debug, thiserror::Error)]
pub enum Refused {
    /// The tenant name is empty, only whitespace, too long or holds a NUL byte.
    #[error(transparent)]
    Tenant(#[from] InputError),
    /// The session breaks a limit (`memforest::memory::limits`).
    #[error(transparent)]
    Session(#[from] SessionInputError),
    /// The session id is the one that holds the texts of `Memory::update`.
    #[error("session {0:?} is reserved for the texts of Memory::update; rename it")]
    Reserved(String),
}

/// Checks `tenant` and `session`, found at `at` in `path` (`line 12`, `sample 3`, ...), as
/// `Memory::ingest_session` will.
///
/// # Errors
/// [`CliError::Input`] naming `path`, `at` and, through [`Refused`], the tenant field or
/// the session, turn and field.
pub fn entry(
    path: &Path,
    at: impl FnOnce() -> String,
    tenant: &str,
    session: &Session,
) -> Result<()> {
    let refused = match TenantId::new(tenant).and_then(|t| check_user(&t)) {
        Err(e) => Refused::from(e),
        Ok(()) => match check_session(session) {
            Err(e) => Refused::from(e),
            Ok(()) if session.id == UPDATES_SESSION => Refused::Reserved(session.id.clone()),
            Ok(()) => return Ok(()),
        },
    };
    Err(CliError::Input {
        path: path.to_path_buf(),
        at: at(),
        source: Box::new(refused),
    })
}
