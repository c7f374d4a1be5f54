//! A read replica's refresher: every interval the served store follows the writer's newest
//! published state ([`memforest::Memory::refresh`]). A failed refresh is logged and
//! counted; the replica keeps serving what it had and tries again at the next interval.

use std::sync::Arc;
use std::time::Duration;

use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::state::Shared;

/// Starts [`follow`] on its own task when `every` is set; it ends when `stop` is
/// cancelled (await it before closing the store: it holds the store until then).
pub fn start(
    shared: &Arc<Shared>,
    every: Option<Duration>,
    stop: &CancellationToken,
) -> Option<JoinHandle<()>> {
    every.map(|every| tokio::spawn(follow(Arc::clone(shared), every, stop.child_token())))
}

/// Refreshes `shared`'s store every `every` until `stop` is cancelled.
pub async fn follow(shared: Arc<Shared>, every: Duration, stop: CancellationToken) {
    loop {
        tokio::select! {
            () = stop.cancelled() => return,
            () = tokio::time::sleep(every) => {}
        }
        match shared.run(|m| m.refresh()).await {
            Ok(true) => tracing::info!("replica refreshed to the writer's newest state"),
            Ok(false) => {}
            Err(e) => {
                shared.metrics.refresh_failed();
                tracing::warn!(error = %e, "replica refresh failed; serving the state it had");
            }
        }
    }
}
