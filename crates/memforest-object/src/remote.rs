//! [`Remote`]: one object-store location and the blocking calls the engine makes on it.

use std::future::Future;
use std::ops::Range;
use std::sync::Arc;
use std::time::SystemTime;

use bytes::Bytes;
use futures_util::TryStreamExt;
use object_store::path::Path;
use object_store::{ObjectStore, ObjectStoreExt, PutMode, PutOptions, PutPayload};

use crate::error::{Error, Result};

/// Objects above this size are uploaded in parts of this size (S3's part limit is 5 MiB
/// to 5 GiB; 8 MiB keeps memory per part small).
const PART_SIZE: usize = 8 << 20;

/// One listed object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Listed {
    /// The object's last path component.
    pub name: String,
    /// Its size in bytes.
    pub size: u64,
    /// When the store last wrote it.
    pub last_modified: SystemTime,
}

/// An object-store location: a store, a key prefix under which every object lives, and the
/// runtime its calls run on. Object names given to its methods are relative to the prefix
/// (`dir/name`). `Send + Sync`: share it in an `Arc`.
#[derive(Debug)]
pub struct Remote {
    store: Arc<dyn ObjectStore>,
    prefix: String,
    /// `Some` until dropped.
    runtime: Option<tokio::runtime::Runtime>,
}

/// The local directory a `file://` URL names, its percent-escapes decoded (as the store
/// opened from it resolves it); `None` for another scheme or a URL without an absolute
/// path.
#[must_use]
pub fn file_url_path(url: &str) -> Option<std::path::PathBuf> {
    let parsed = url::Url::parse(url).ok()?;
    if parsed.scheme() != "file" {
        return None;
    }
    parsed.to_file_path().ok()
}

impl Remote {
    /// Opens the location a URL names: `memory://` (a new empty in-memory store),
    /// `file:///abs/path` (a directory), and with the `s3` feature `s3://bucket/prefix`. `options` are the store's
    /// configuration keys (for S3: `aws_endpoint`, `aws_allow_http`, `aws_region`, ...).
    ///
    /// # Errors
    /// [`Error::Url`] for a URL that does not parse or a scheme this build lacks;
    /// [`Error::Runtime`].
    pub fn open<I, K, V>(url: &str, options: I) -> Result<Self>
    where
        I: IntoIterator<Item = (K, V)>,
        K: AsRef<str>,
        V: Into<String>,
    {
        let bad = |reason: String| Error::Url {
            url: url.to_owned(),
            reason,
        };
        let parsed = url::Url::parse(url).map_err(|e| bad(e.to_string()))?;
        #[cfg(feature = "s3")]
        {
            // The HTTP client's TLS needs a process-wide crypto provider; one installed
            // earlier (by the application) is kept.
            let _ = rustls::crypto::ring::default_provider().install_default();
        }
        let (store, prefix) =
            object_store::parse_url_opts(&parsed, options).map_err(|e| bad(e.to_string()))?;
        Self::new(Arc::from(store), prefix.as_ref())
    }

    /// A location in `store` under `prefix` (`""` for the store's root).
    ///
    /// # Errors
    /// [`Error::Runtime`] when the runtime's thread cannot start.
    pub fn new(store: Arc<dyn ObjectStore>, prefix: &str) -> Result<Self> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("memforest-object")
            .enable_all()
            .build()
            .map_err(Error::Runtime)?;
        Ok(Self {
            store,
            prefix: prefix.trim_matches('/').to_owned(),
            runtime: Some(runtime),
        })
    }

    /// The full path of object `name`.
    fn path(&self, name: &str) -> Path {
        if self.prefix.is_empty() {
            Path::from(name)
        } else {
            Path::from(format!("{}/{name}", self.prefix))
        }
    }

    /// Runs `fut` on the tier's runtime and waits for it from this thread.
    fn block<T: Send + 'static>(
        &self,
        fut: impl Future<Output = object_store::Result<T>> + Send + 'static,
    ) -> object_store::Result<T> {
        let (tx, rx) = std::sync::mpsc::sync_channel(1);
        if let Some(runtime) = &self.runtime {
            runtime.spawn(async move {
                let _ = tx.send(fut.await);
            });
        }
        rx.recv().unwrap_or_else(|_| {
            Err(object_store::Error::Generic {
                store: "memforest",
                source: "the object store runtime stopped".into(),
            })
        })
    }

    fn fail(&self, op: &'static str, name: &str) -> impl FnOnce(object_store::Error) -> Error {
        let object = self.path(name).to_string();
        move |source| Error::Store { op, object, source }
    }

    /// Writes object `name` (replacing it), in parts when it is over 8 MiB. A failed part
    /// upload is aborted: the object is either whole or as it was.
    ///
    /// # Errors
    /// [`Error::Store`].
    pub fn put(&self, name: &str, data: Bytes) -> Result<()> {
        let store = Arc::clone(&self.store);
        let path = self.path(name);
        self.block(async move {
            if data.len() <= PART_SIZE {
                return store.put(&path, PutPayload::from(data)).await.map(drop);
            }
            let mut upload = store.put_multipart(&path).await?;
            let mut result = Ok(());
            for start in (0..data.len()).step_by(PART_SIZE) {
                let part = data.slice(start..(start + PART_SIZE).min(data.len()));
                result = upload.put_part(PutPayload::from(part)).await;
                if result.is_err() {
                    break;
                }
            }
            match result {
                Ok(()) => upload.complete().await.map(drop),
                Err(e) => {
                    let _ = upload.abort().await;
                    Err(e)
                }
            }
        })
        .map_err(self.fail("put", name))
    }

    /// Creates object `name` only if no object has that name (a conditional create: on S3,
    /// `If-None-Match: *`). Of two concurrent creates of one name, exactly one succeeds.
    ///
    /// # Errors
    /// [`Error::AlreadyExists`] when the object exists; [`Error::Store`].
    pub fn create(&self, name: &str, data: Bytes) -> Result<()> {
        let store = Arc::clone(&self.store);
        let path = self.path(name);
        let opts = PutOptions {
            mode: PutMode::Create,
            ..PutOptions::default()
        };
        match self.block(async move { store.put_opts(&path, PutPayload::from(data), opts).await }) {
            Ok(_) => Ok(()),
            Err(object_store::Error::AlreadyExists { .. }) => Err(Error::AlreadyExists {
                object: self.path(name).to_string(),
            }),
            Err(e) => Err(self.fail("create", name)(e)),
        }
    }

    /// Reads object `name` whole.
    ///
    /// # Errors
    /// [`Error::Store`] (its source is `object_store::Error::NotFound` for a missing object).
    pub fn get(&self, name: &str) -> Result<Bytes> {
        let store = Arc::clone(&self.store);
        let path = self.path(name);
        self.block(async move { store.get(&path).await?.bytes().await })
            .map_err(self.fail("get", name))
    }

    /// Reads object `name` whole; `None` when there is no such object.
    ///
    /// # Errors
    /// [`Error::Store`] for any other failure.
    pub fn get_if_exists(&self, name: &str) -> Result<Option<Bytes>> {
        match self.get(name) {
            Ok(bytes) => Ok(Some(bytes)),
            Err(Error::Store {
                source: object_store::Error::NotFound { .. },
                ..
            }) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Reads bytes `range` of object `name` (one ranged GET).
    ///
    /// # Errors
    /// [`Error::Store`] (its source is `object_store::Error::NotFound` for a missing object,
    /// and a range error for a range past the object's end).
    pub fn get_range(&self, name: &str, range: Range<u64>) -> Result<Bytes> {
        let store = Arc::clone(&self.store);
        let path = self.path(name);
        self.block(async move { store.get_range(&path, range).await })
            .map_err(self.fail("get range", name))
    }

    /// The objects under `dir/` (recursively), in no particular order.
    ///
    /// # Errors
    /// [`Error::Store`].
    pub fn list(&self, dir: &str) -> Result<Vec<Listed>> {
        let store = Arc::clone(&self.store);
        let path = self.path(dir);
        let metas = self
            .block(async move { store.list(Some(&path)).try_collect::<Vec<_>>().await })
            .map_err(self.fail("list", dir))?;
        Ok(metas
            .into_iter()
            .filter_map(|m| {
                Some(Listed {
                    name: m.location.filename()?.to_owned(),
                    size: m.size,
                    last_modified: SystemTime::from(m.last_modified),
                })
            })
            .collect())
    }

    /// Deletes object `name` (a missing object is not an error).
    ///
    /// # Errors
    /// [`Error::Store`].
    pub fn delete(&self, name: &str) -> Result<()> {
        let store = Arc::clone(&self.store);
        let path = self.path(name);
        match self.block(async move { store.delete(&path).await }) {
            Ok(()) | Err(object_store::Error::NotFound { .. }) => Ok(()),
            Err(e) => Err(self.fail("delete", name)(e)),
        }
    }
}

impl Drop for Remote {
    /// Stops the runtime without waiting for it: dropping a runtime that waits would panic
    /// inside another runtime's async task (where a server may drop the last handle).
    fn drop(&mut self) {
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}

impl std::fmt::Display for Remote {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.store, self.prefix)
    }
}
