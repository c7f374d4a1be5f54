//! [`Access`]: who a request acts for (from its key, or the whole store on an open server or
//! the one user of a stdio MCP server), and the tenant check every route and tool makes.

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::error::ApiError;
use crate::keys::Right;

/// What a request may reach. Carried in the request's extensions by the auth layer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Access {
    /// A server started without keys (loopback only): every user, read-write.
    Open,
    /// A key's (or `memforest mcp --user`'s) tenants and rights.
    Scoped {
        /// The key's name (for logs and the concurrency limit); never the key.
        name: Arc<str>,
        /// Tenant (user) to right.
        tenants: Arc<BTreeMap<String, Right>>,
    },
    /// What the inner access may read, on a read-only server: every write is refused.
    ReadOnly(Box<Access>),
}

impl Access {
    /// Read-write access to `user` only (`memforest mcp --user`).
    #[must_use]
    pub fn single_user(user: &str) -> Self {
        Self::Scoped {
            name: Arc::from("stdio"),
            tenants: Arc::new(BTreeMap::from([(user.to_owned(), Right::ReadWrite)])),
        }
    }

    /// This access on a server whose store is read-only when `read_only`.
    #[must_use]
    pub fn on_store(self, read_only: bool) -> Self {
        if read_only {
            Self::ReadOnly(Box::new(self))
        } else {
            self
        }
    }

    /// The key's name, `"open"` on an open server.
    #[must_use]
    pub fn name(&self) -> &str {
        match self {
            Self::Open => "open",
            Self::Scoped { name, .. } => name,
            Self::ReadOnly(inner) => inner.name(),
        }
    }

    /// Ok when `user`'s data may be used with `need`.
    ///
    /// # Errors
    /// [`ApiError::ReadOnly`] for a write on a read-only server; [`ApiError::Forbidden`]
    /// when the key lacks the right.
    pub fn allow(&self, user: &str, need: Right) -> Result<(), ApiError> {
        let granted = match self {
            Self::Open => Some(Right::ReadWrite),
            Self::Scoped { tenants, .. } => tenants.get(user).copied(),
            Self::ReadOnly(_) if need == Right::ReadWrite => return Err(ApiError::ReadOnly),
            Self::ReadOnly(inner) => return inner.allow(user, need),
        };
        match granted {
            Some(g) if g >= need => Ok(()),
            _ => Err(ApiError::Forbidden {
                by: "this key",
                need: match need {
                    Right::Read => "read",
                    Right::ReadWrite => "write",
                },
                user: user.chars().take(64).collect(),
            }),
        }
    }

    /// The user a tool call acts for: `given`, or the key's only tenant when none is
    /// given; then checked as [`Access::allow`].
    ///
    /// # Errors
    /// [`ApiError::BadRequest`] when no user is given and the key has none or several;
    /// [`ApiError::ReadOnly`]; [`ApiError::Forbidden`].
    pub fn resolve(&self, given: Option<&str>, need: Right) -> Result<String, ApiError> {
        if let Self::ReadOnly(inner) = self {
            let user = inner.resolve(given, Right::Read)?;
            self.allow(&user, need)?;
            return Ok(user);
        }
        let user = match (given, self) {
            (Some(u), _) => u.to_owned(),
            (None, Self::Scoped { tenants, .. }) if tenants.len() == 1 => {
                tenants.keys().next().cloned().unwrap_or_default()
            }
            (None, _) => {
                return Err(ApiError::BadRequest(
                    "name the user: this key reaches more than one".into(),
                ))
            }
        };
        self.allow(&user, need)?;
        Ok(user)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rights_are_per_tenant_and_read_does_not_write() {
        let a = Access::Scoped {
            name: Arc::from("k"),
            tenants: Arc::new(BTreeMap::from([
                ("alice".to_owned(), Right::ReadWrite),
                ("bob".to_owned(), Right::Read),
            ])),
        };
        assert!(a.allow("alice", Right::ReadWrite).is_ok());
        assert!(a.allow("bob", Right::Read).is_ok());
        assert!(a.allow("bob", Right::ReadWrite).is_err());
        assert!(a.allow("carol", Right::Read).is_err());
        assert!(a.resolve(None, Right::Read).is_err());
        let one = Access::single_user("dave");
        assert_eq!(
            one.resolve(None, Right::ReadWrite).ok().as_deref(),
            Some("dave")
        );
        assert!(one.resolve(Some("alice"), Right::Read).is_err());
    }

    #[test]
    fn a_read_only_store_refuses_every_write_and_keeps_the_key_rights_for_reads() {
        let key = Access::Scoped {
            name: Arc::from("k"),
            tenants: Arc::new(BTreeMap::from([("alice".to_owned(), Right::ReadWrite)])),
        }
        .on_store(true);
        assert_eq!(key.name(), "k");
        assert!(key.allow("alice", Right::Read).is_ok());
        assert_eq!(
            key.allow("alice", Right::ReadWrite),
            Err(ApiError::ReadOnly)
        );
        assert!(matches!(
            key.allow("bob", Right::Read),
            Err(ApiError::Forbidden { .. })
        ));
        assert_eq!(key.resolve(None, Right::Read).as_deref(), Ok("alice"));
        assert_eq!(key.resolve(None, Right::ReadWrite), Err(ApiError::ReadOnly));
        let open = Access::Open.on_store(true);
        assert_eq!(
            open.allow("carol", Right::ReadWrite),
            Err(ApiError::ReadOnly)
        );
        assert_eq!(Access::Open.on_store(false), Access::Open);
    }
}
