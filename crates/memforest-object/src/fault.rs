//! [`FaultStore`]: an `ObjectStore` wrapper that counts requests and fails those a test
//! asks for (redb's `StorageBackend` seam, for object storage).

use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use async_trait::async_trait;
use bytes::Bytes;
use futures_util::stream::{self, BoxStream, StreamExt};
use object_store::path::Path;
use object_store::{
    CopyOptions, GetOptions, GetResult, ListResult, MultipartUpload, ObjectMeta, ObjectStore,
    ObjectStoreExt, PutMultipartOptions, PutOptions, PutPayload, PutResult, UploadPart,
};

/// Per-operation request counts and pending injected failures.
#[derive(Debug, Default)]
struct Op {
    calls: AtomicU64,
    fail_next: AtomicU64,
    /// When set, only requests for objects under this path fail.
    only_under: parking_lot::Mutex<Option<String>>,
}

impl Op {
    /// Counts a call; true when it is to fail (consuming one pending failure).
    fn call(&self) -> bool {
        self.calls.fetch_add(1, Ordering::Relaxed);
        self.fail_next
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| n.checked_sub(1))
            .is_ok()
    }

    /// [`Op::call`] for a request on `location`: a failure is consumed only by a request
    /// under the path set by [`Op::fail`].
    fn call_on(&self, location: &Path) -> bool {
        let matches = self
            .only_under
            .lock()
            .as_deref()
            .is_none_or(|prefix| location.as_ref().starts_with(prefix));
        if matches {
            self.call()
        } else {
            self.calls.fetch_add(1, Ordering::Relaxed);
            false
        }
    }

    /// Makes the next `n` calls (under `prefix`, when given) fail.
    fn fail(&self, n: u64, prefix: Option<&str>) {
        *self.only_under.lock() = prefix.map(str::to_owned);
        self.fail_next.store(n, Ordering::Release);
    }
}

/// Wraps a store: every request is counted per kind (put, get, list, delete), and the
/// next `n` requests of a kind can be made to fail with a `Generic` error (what a timeout
/// or a 503 that outlasted the client's retries looks like). A failing multipart upload
/// sends its parts and then fails to complete, as a connection lost mid-upload would: no
/// object appears.
#[derive(Debug)]
pub struct FaultStore {
    inner: Arc<dyn ObjectStore>,
    ops: Arc<Ops>,
    /// Bytes that gets returned.
    got_bytes: AtomicU64,
}

/// The counters of each kind of request.
#[derive(Debug, Default)]
struct Ops {
    puts: Op,
    gets: Op,
    lists: Op,
    deletes: Op,
}

fn injected(what: &str) -> object_store::Error {
    object_store::Error::Generic {
        store: "FaultStore",
        source: format!("injected {what} failure").into(),
    }
}

impl FaultStore {
    /// Wraps `inner`; nothing fails until asked.
    #[must_use]
    pub fn new(inner: Arc<dyn ObjectStore>) -> Self {
        Self {
            inner,
            ops: Arc::default(),
            got_bytes: AtomicU64::new(0),
        }
    }

    /// Puts (plain, conditional and multipart uploads) so far.
    #[must_use]
    pub fn puts(&self) -> u64 {
        self.ops.puts.calls.load(Ordering::Relaxed)
    }

    /// Gets (whole or ranged) so far.
    #[must_use]
    pub fn gets(&self) -> u64 {
        self.ops.gets.calls.load(Ordering::Relaxed)
    }

    /// Bytes of object data that gets (whole or ranged) returned so far.
    #[must_use]
    pub fn got_bytes(&self) -> u64 {
        self.got_bytes.load(Ordering::Relaxed)
    }

    /// Lists so far.
    #[must_use]
    pub fn lists(&self) -> u64 {
        self.ops.lists.calls.load(Ordering::Relaxed)
    }

    /// Deleted objects so far.
    #[must_use]
    pub fn deletes(&self) -> u64 {
        self.ops.deletes.calls.load(Ordering::Relaxed)
    }

    /// Fails the next `n` puts.
    pub fn fail_puts(&self, n: u64) {
        self.ops.puts.fail(n, None);
    }

    /// Makes the next `n` put requests for objects under `prefix` (a path from the
    /// store's root, such as `db/manifest`) fail; other puts succeed.
    pub fn fail_puts_under(&self, prefix: &str, n: u64) {
        self.ops.puts.fail(n, Some(prefix));
    }

    /// Fails the next `n` gets.
    pub fn fail_gets(&self, n: u64) {
        self.ops.gets.fail(n, None);
    }

    /// Fails the next `n` lists.
    pub fn fail_lists(&self, n: u64) {
        self.ops.lists.fail(n, None);
    }

    /// Fails the next `n` deletes.
    pub fn fail_deletes(&self, n: u64) {
        self.ops.deletes.fail(n, None);
    }
}

impl std::fmt::Display for FaultStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "FaultStore({})", self.inner)
    }
}

/// A multipart upload whose completion fails after its parts went through.
#[derive(Debug)]
struct BrokenUpload(Box<dyn MultipartUpload>);

#[async_trait]
impl MultipartUpload for BrokenUpload {
    fn put_part(&mut self, data: PutPayload) -> UploadPart {
        self.0.put_part(data)
    }

    async fn complete(&mut self) -> object_store::Result<PutResult> {
        let _ = self.0.abort().await;
        Err(injected("multipart completion"))
    }

    async fn abort(&mut self) -> object_store::Result<()> {
        self.0.abort().await
    }
}

#[async_trait]
impl ObjectStore for FaultStore {
    async fn put_opts(
        &self,
        location: &Path,
        payload: PutPayload,
        opts: PutOptions,
    ) -> object_store::Result<PutResult> {
        if self.ops.puts.call_on(location) {
            return Err(injected("put"));
        }
        self.inner.put_opts(location, payload, opts).await
    }

    async fn put_multipart_opts(
        &self,
        location: &Path,
        opts: PutMultipartOptions,
    ) -> object_store::Result<Box<dyn MultipartUpload>> {
        let fail = self.ops.puts.call();
        let upload = self.inner.put_multipart_opts(location, opts).await?;
        Ok(if fail {
            Box::new(BrokenUpload(upload))
        } else {
            upload
        })
    }

    async fn get_opts(
        &self,
        location: &Path,
        options: GetOptions,
    ) -> object_store::Result<GetResult> {
        if self.ops.gets.call() {
            return Err(injected("get"));
        }
        let head = options.head;
        let result = self.inner.get_opts(location, options).await?;
        if !head {
            let served = result.range.end.saturating_sub(result.range.start);
            self.got_bytes.fetch_add(served, Ordering::Relaxed);
        }
        Ok(result)
    }

    async fn get_ranges(
        &self,
        location: &Path,
        ranges: &[Range<u64>],
    ) -> object_store::Result<Vec<Bytes>> {
        if self.ops.gets.call() {
            return Err(injected("get"));
        }
        let got = self.inner.get_ranges(location, ranges).await?;
        let served: usize = got.iter().map(Bytes::len).sum();
        self.got_bytes.fetch_add(served as u64, Ordering::Relaxed);
        Ok(got)
    }

    fn delete_stream(
        &self,
        locations: BoxStream<'static, object_store::Result<Path>>,
    ) -> BoxStream<'static, object_store::Result<Path>> {
        let inner = Arc::clone(&self.inner);
        let ops = Arc::clone(&self.ops);
        locations
            .then(move |location| {
                let inner = Arc::clone(&inner);
                let fail = ops.deletes.call();
                async move {
                    let path = location?;
                    if fail {
                        return Err(injected("delete"));
                    }
                    inner.delete(&path).await.map(|()| path)
                }
            })
            .boxed()
    }

    fn list(&self, prefix: Option<&Path>) -> BoxStream<'static, object_store::Result<ObjectMeta>> {
        if self.ops.lists.call() {
            return stream::once(async { Err(injected("list")) }).boxed();
        }
        self.inner.list(prefix)
    }

    async fn list_with_delimiter(&self, prefix: Option<&Path>) -> object_store::Result<ListResult> {
        if self.ops.lists.call() {
            return Err(injected("list"));
        }
        self.inner.list_with_delimiter(prefix).await
    }

    async fn copy_opts(
        &self,
        from: &Path,
        to: &Path,
        options: CopyOptions,
    ) -> object_store::Result<()> {
        if self.ops.puts.call() {
            return Err(injected("copy"));
        }
        self.inner.copy_opts(from, to, options).await
    }
}
