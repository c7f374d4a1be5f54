//! [`Server`]: binds the listener, serves REST and MCP on it until a shutdown signal, then
//! drains in-flight requests and closes the store; [`serve_stdio`]: MCP over stdio.

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::extract::DefaultBodyLimit;
use axum::routing::get;
use axum::Router;
use memforest::Memory;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::ServiceExt as _;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use crate::access::Access;
use crate::keys::Keys;
use crate::limits::{Limiter, Limits};
use crate::mcp::MemoryTools;
use crate::state::Shared;

/// How long shutdown waits for store calls whose clients went away before syncing
/// without closing.
const DRAIN: Duration = Duration::from_secs(60);

/// How long shutdown waits for open connections to finish their requests before it
/// stops serving them and closes the store.
const CONNECTIONS_DRAIN: Duration = Duration::from_secs(10);

/// Why the server could not start or stop cleanly.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// A non-loopback address without keys: anyone who can reach it could read every
    /// user's memory.
    #[error("refusing to listen on {0} without keys: give --keys, or listen on a loopback address (127.0.0.1, ::1)")]
    OpenNonLoopback(SocketAddr),
    /// The address could not be bound (in use, not this machine's, a privileged port).
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        /// The address asked for.
        addr: SocketAddr,
        /// The bind's error.
        source: std::io::Error,
    },
    /// Serving failed.
    #[error("listener: {0}")]
    Io(#[from] std::io::Error),
    /// Closing the store failed (its WAL sync).
    #[error("closing the store: {0}")]
    Close(#[from] memforest::MemoryError),
    /// The MCP stdio session failed.
    #[error("mcp: {0}")]
    Mcp(String),
}

/// What `memforest serve` serves.
#[derive(Debug, Clone)]
pub struct ServeConfig {
    /// The address to listen on (port 0: any free port).
    pub listen: SocketAddr,
    /// The accepted keys; `None` (or empty): no key needed, loopback only.
    pub keys: Option<Keys>,
    /// Request limits.
    pub limits: Limits,
    /// For a read replica ([`Memory::open_replica`]): how often it follows the writer's
    /// newest published state ([`Memory::refresh`]); `None`: never.
    pub refresh: Option<Duration>,
}

/// A bound server, not yet serving.
#[derive(Debug)]
pub struct Server {
    listener: TcpListener,
    shared: Arc<Shared>,
    refresh: Option<Duration>,
}

/// Binds `config.listen` for a [`Server`], before its store is opened, so that a refused
/// address (non-loopback without keys, a port in use) leaves no store directory behind.
/// The listener is non-blocking, as [`Server::on`] needs it.
///
/// # Errors
/// [`ServeError::OpenNonLoopback`] for a non-loopback address without keys;
/// [`ServeError::Bind`].
pub fn listen(config: &ServeConfig) -> Result<std::net::TcpListener, ServeError> {
    let open = config.keys.as_ref().is_none_or(Keys::is_empty);
    if open && !config.listen.ip().is_loopback() {
        return Err(ServeError::OpenNonLoopback(config.listen));
    }
    let bind = |source| ServeError::Bind {
        addr: config.listen,
        source,
    };
    let listener = std::net::TcpListener::bind(config.listen).map_err(bind)?;
    listener.set_nonblocking(true).map_err(bind)?;
    Ok(listener)
}

impl Server {
    /// Binds `config.listen` for `memory` ([`listen`], then [`Server::on`]).
    ///
    /// # Errors
    /// As [`listen`].
    pub async fn bind(memory: Memory, config: ServeConfig) -> Result<Self, ServeError> {
        let listener = listen(&config)?;
        Self::on(listener, memory, config)
    }

    /// A server for `memory` on `listener`, bound by [`listen`] for the same `config`
    /// (a blocking listener would stall the runtime). Must be called within a Tokio
    /// runtime.
    ///
    /// # Errors
    /// Registering the listener with the runtime.
    pub fn on(
        listener: std::net::TcpListener,
        memory: Memory,
        config: ServeConfig,
    ) -> Result<Self, ServeError> {
        let listener = TcpListener::from_std(listener)?;
        let keys = config.keys.filter(|k| !k.is_empty());
        let shared = Arc::new(Shared::new(Arc::new(memory), keys, config.limits));
        Ok(Self {
            listener,
            shared,
            refresh: config.refresh,
        })
    }

    /// The bound address.
    ///
    /// # Errors
    /// The socket's error.
    pub fn local_addr(&self) -> std::io::Result<SocketAddr> {
        self.listener.local_addr()
    }

    /// The per-key in-flight counter (a test holds a key's slots with it).
    #[must_use]
    pub fn limiter(&self) -> &Limiter {
        &self.shared.limiter
    }

    /// Serves until `shutdown` resolves; then stops accepting, finishes the requests in
    /// flight, ends the MCP sessions, and closes the store (syncing the WAL), so every
    /// acknowledged add is durable.
    ///
    /// # Errors
    /// Serving's I/O errors; the store's close error.
    pub async fn run(
        self,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> Result<(), ServeError> {
        let Self {
            listener,
            shared,
            refresh,
        } = self;
        let addr = listener.local_addr()?;
        let mcp_stop = CancellationToken::new();
        let refresher = crate::refresh::start(&shared, refresh, &mcp_stop);
        let app = router(&shared, addr, mcp_stop.child_token());
        tracing::info!(%addr, keys = shared.keys.is_some(), "serving");
        let signaled = Arc::new(tokio::sync::Notify::new());
        let on_signal = Arc::clone(&signaled);
        let header_timeout = shared.limits.header_timeout;
        let serving = crate::accept::serve(listener, app, header_timeout, async move {
            shutdown.await;
            tracing::info!("shutting down: finishing requests in flight");
            // Open MCP streams end now rather than when their clients hang up.
            mcp_stop.cancel();
            on_signal.notify_one();
        });
        // A client that keeps a connection open (a stalled body, a stream it never reads)
        // cannot hold the shutdown past CONNECTIONS_DRAIN.
        let drain = tokio::select! {
            () = serving => DRAIN,
            () = async {
                signaled.notified().await;
                tokio::time::sleep(CONNECTIONS_DRAIN).await;
            } => {
                // Their tasks still hold the store: do not wait for them again.
                tracing::warn!("connections still open after the drain; syncing the store");
                Duration::ZERO
            }
        };
        if let Some(task) = refresher {
            // Cancelled with the MCP streams; it lets go of the store before it closes.
            let _ = task.await;
        }
        close(shared, drain).await
    }
}

/// The whole HTTP app: REST and `/mcp` behind the auth layer, `/health` and `/metrics`
/// open.
fn router(shared: &Arc<Shared>, addr: SocketAddr, stop: CancellationToken) -> Router {
    let tools = Arc::clone(shared);
    let mut config = StreamableHttpServerConfig::default().with_cancellation_token(stop);
    config.max_request_body_bytes = shared.limits.max_body_bytes;
    if !addr.ip().is_loopback() {
        // Keys guard a public listener; the Host check guards loopback ones against DNS
        // rebinding.
        config = config.disable_allowed_hosts();
    }
    let mcp = StreamableHttpService::new(
        move || Ok(MemoryTools::new(Arc::clone(&tools), None)),
        Arc::new(LocalSessionManager::default()),
        config,
    );
    let app = crate::rest::routes()
        .route_service("/mcp", mcp)
        .route_layer(axum::middleware::from_fn_with_state(
            Arc::clone(shared),
            crate::auth::guard,
        ))
        .route("/health", get(crate::rest::health))
        .route("/metrics", get(crate::rest::metrics))
        .layer(DefaultBodyLimit::max(shared.limits.max_body_bytes))
        .layer(axum::middleware::from_fn(crate::error_bodies::as_json))
        .with_state(Arc::clone(shared));
    if addr.ip().is_loopback() {
        app.layer(axum::middleware::from_fn(crate::host_check::loopback_only))
    } else {
        app
    }
}

/// Closes the store once every request and session has let go of it (store calls of
/// clients that went away run to their end); after `drain` it makes the store as durable
/// as a close would (`Db::persist`: syncs the WAL, or a writer on an object store flushes
/// and publishes) without closing it.
async fn close(shared: Arc<Shared>, drain: Duration) -> Result<(), ServeError> {
    let mut memory = Arc::clone(&shared.memory);
    drop(shared);
    let started = Instant::now();
    loop {
        match Arc::try_unwrap(memory) {
            Ok(m) => {
                tokio::task::spawn_blocking(move || m.close())
                    .await
                    .map_err(|e| ServeError::Io(std::io::Error::other(e)))??;
                tracing::info!("store closed");
                return Ok(());
            }
            Err(still_shared) if started.elapsed() >= drain => {
                tracing::warn!(
                    "store still in use after the drain; syncing (and publishing) without closing"
                );
                still_shared
                    .db()
                    .persist()
                    .map_err(memforest::MemoryError::from)?;
                return Ok(());
            }
            Err(still_shared) => {
                memory = still_shared;
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        }
    }
}

/// Resolves on the first SIGTERM or SIGINT (Ctrl-C); a second one exits the process at
/// once (status 130).
pub async fn shutdown_signal() {
    wait_signal().await;
    tracing::info!("signal received; a second one exits at once");
    tokio::spawn(async {
        wait_signal().await;
        tracing::warn!("second signal: exiting without draining");
        std::process::exit(130);
    });
}

async fn wait_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        match (
            signal(SignalKind::terminate()),
            signal(SignalKind::interrupt()),
        ) {
            (Ok(mut term), Ok(mut int)) => {
                tokio::select! {
                    _ = term.recv() => {}
                    _ = int.recv() => {}
                }
            }
            _ => {
                tracing::error!("cannot install signal handlers; Ctrl-C only");
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}

/// Serves MCP over stdin/stdout for `user` until the client closes the stream or the
/// process gets SIGTERM or SIGINT, then closes the store. On a read-only store every write tool is refused; a read replica
/// ([`Memory::open_replica`]) follows its writer every `refresh` (`None`: never).
///
/// # Errors
/// The MCP session's errors; the store's close error.
pub async fn serve_stdio(
    memory: Memory,
    user: &str,
    limits: Limits,
    refresh: Option<Duration>,
) -> Result<(), ServeError> {
    memforest_engine::TenantId::new(user).map_err(|e| ServeError::Mcp(e.to_string()))?;
    let shared = Arc::new(Shared::new(Arc::new(memory), None, limits));
    let access = Access::single_user(user).on_store(shared.memory.is_read_only());
    let tools = MemoryTools::new(Arc::clone(&shared), Some(access));
    let running = tools
        .serve(rmcp::transport::stdio())
        .await
        .map_err(|e| ServeError::Mcp(e.to_string()))?;
    let stop = CancellationToken::new();
    let refresher = crate::refresh::start(&shared, refresh, &stop);
    // SIGTERM or Ctrl-C ends the session as the end of stdin does: the store is closed
    // (a writer on an object store publishes), not left to die with the process.
    let session = running.cancellation_token();
    let signalled = tokio::spawn(async move {
        shutdown_signal().await;
        session.cancel();
    });
    let ended = running.waiting().await;
    signalled.abort();
    stop.cancel();
    if let Some(task) = refresher {
        // It lets go of the store before it closes.
        let _ = task.await;
    }
    let closed = close(shared, DRAIN).await;
    ended.map_err(|e| ServeError::Mcp(e.to_string()))?;
    closed
}
