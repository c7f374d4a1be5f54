//! A read replica's refresher: every interval the served store follows the writer's newest
//! published state ([`memforest::Memory::refresh`]). A failed refresh is logged and
//! counted; the replica keeps serving what it had and tries again at the next interval.

use std::sync::Arc;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use crate::state::Shared;

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
