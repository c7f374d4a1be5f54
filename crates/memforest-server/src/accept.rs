//! The accept loop: HTTP/1 connections served with a deadline on every request's headers,
//! and a graceful stop that lets the connections finish the requests they are serving.
//!
//! `axum::serve` gives hyper no timer, so hyper's `header_read_timeout` never fires
//! there and a client that never ends its headers (or an idle keep-alive connection)
//! holds its socket for good.

use std::future::Future;
use std::time::Duration;

use axum::body::Body;
use axum::extract::Request;
use axum::Router;
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tower::ServiceExt as _;

/// How long the loop pauses after an accept error that is not the peer's (out of file
/// descriptors): accepting again at once would spin.
const ACCEPT_BACKOFF: Duration = Duration::from_secs(1);

/// Serves `app` on `listener` until `shutdown` resolves, then stops accepting and waits
/// for every open connection to finish the request it is serving (idle ones close at
/// once).
///
/// A connection gets `header_timeout` for each request's headers, counted from when the
/// connection waits for them: a new connection from its accept, a kept-alive one from its
/// previous response. Past it, the connection is closed without a response (hyper's
/// `http1::Builder::header_read_timeout`); zero waits without limit.
pub async fn serve(
    listener: TcpListener,
    app: Router,
    header_timeout: Duration,
    shutdown: impl Future<Output = ()>,
) {
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(TokioTimer::new())
        .header_read_timeout((!header_timeout.is_zero()).then_some(header_timeout));
    let graceful = GracefulShutdown::new();
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            () = &mut shutdown => break,
        };
        let stream = match accepted {
            Ok((stream, _)) => stream,
            Err(e) if peer_error(&e) => continue,
            Err(e) => {
                tracing::warn!(error = %e, "accepting a connection failed; pausing");
                tokio::select! {
                    () = tokio::time::sleep(ACCEPT_BACKOFF) => continue,
                    () = &mut shutdown => break,
                }
            }
        };
        let service = app
            .clone()
            .map_request(|req: Request<Incoming>| req.map(Body::new));
        let connection =
            http.serve_connection(TokioIo::new(stream), TowerToHyperService::new(service));
        let connection = graceful.watch(connection);
        tokio::spawn(async move {
            if let Err(e) = connection.await {
                tracing::debug!(error = %e, "connection ended with an error");
            }
        });
    }
    drop(listener);
    graceful.shutdown().await;
}

/// An accept error caused by one peer, which says nothing about the listener.
fn peer_error(e: &std::io::Error) -> bool {
    use std::io::ErrorKind::{ConnectionAborted, ConnectionRefused, ConnectionReset};
    matches!(
        e.kind(),
        ConnectionRefused | ConnectionAborted | ConnectionReset
    )
}
