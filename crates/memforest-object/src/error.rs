//! The object tier's error type.

/// An object-store failure, naming the object.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The URL does not name a store this build supports.
    #[error("object store URL {url}: {reason}")]
    Url {
        /// The URL as given.
        url: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A conditional create found the object already there.
    #[error("{object} already exists")]
    AlreadyExists {
        /// Full object path.
        object: String,
    },
    /// The store refused or failed a request.
    #[error("{op} {object}: {source}")]
    Store {
        /// `put`, `create`, `get`, `get range`, `list` or `delete`.
        op: &'static str,
        /// Full object path (or listed prefix).
        object: String,
        /// The store's error.
        #[source]
        source: object_store::Error,
    },
    /// The tier's runtime could not start.
    #[error("starting the object store runtime: {0}")]
    Runtime(#[source] std::io::Error),
}

/// `Result` with [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
