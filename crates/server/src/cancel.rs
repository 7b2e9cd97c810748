//! Joining two cancellation sources into the one token a call runs under.

use std::future::Future;

use tokio_util::sync::CancellationToken;

/// Runs `work`, which stops when `token` is cancelled; if `external` fires
/// first (a client's cancel, a dropped connection), cancels `token` and
/// waits for `work` to finish stopping, so its cleanup still runs.
pub async fn linked<F: Future>(
    work: F,
    external: &CancellationToken,
    token: &CancellationToken,
) -> F::Output {
    tokio::pin!(work);
    tokio::select! {
        biased;
        out = &mut work => return out,
        _ = external.cancelled() => token.cancel(),
    }
    work.await
}
