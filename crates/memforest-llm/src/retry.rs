//! Retry timing: exponential backoff with full jitter, and the server's `Retry-After`.

use std::time::{Duration, SystemTime};

use rand::Rng;

/// The wait before retry number `retry` (1-based): uniform in
/// `[0, min(max, base * 2^(retry-1))]` (the "full jitter" scheme, which spreads the retries of
/// many workers hitting the same overloaded server).
pub(crate) fn backoff(retry: u32, base: Duration, max: Duration) -> Duration {
    let exp = retry.saturating_sub(1).min(30);
    let ceiling = base.saturating_mul(1u32 << exp).min(max);
    let nanos = u64::try_from(ceiling.as_nanos()).unwrap_or(u64::MAX);
    Duration::from_nanos(rand::thread_rng().gen_range(0..=nanos))
}

/// The wait a 429/503 reply asks for, from `retry-after-ms` (milliseconds, sent by OpenAI)
/// or `Retry-After` (seconds, or an HTTP-date such as `Wed, 21 Oct 2015 07:28:00 GMT`,
/// counted from `now`). Capped at `max`. `None` when absent or unparsable.
pub(crate) fn retry_after(
    ms_header: Option<&str>,
    secs_header: Option<&str>,
    max: Duration,
    now: SystemTime,
) -> Option<Duration> {
    let parse = |text: Option<&str>, scale: f64| {
        let value: f64 = text?.trim().parse().ok()?;
        (value.is_finite() && value >= 0.0)
            .then(|| Duration::from_secs_f64((value * scale).min(max.as_secs_f64())))
    };
    let http_date = || {
        let at = chrono::DateTime::parse_from_rfc2822(secs_header?.trim()).ok()?;
        let at = SystemTime::UNIX_EPOCH
            .checked_add(Duration::from_secs(u64::try_from(at.timestamp()).ok()?))?;
        Some(at.duration_since(now).unwrap_or(Duration::ZERO))
    };
    parse(ms_header, 1e-3)
        .or_else(|| parse(secs_header, 1.0))
        .or_else(http_date)
        .map(|d| d.min(max))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_stays_within_the_doubling_ceiling() {
        let base = Duration::from_millis(10);
        let max = Duration::from_millis(50);
        for retry in 1..40 {
            let ceiling = (base * 2u32.pow(retry.min(20) - 1)).min(max);
            for _ in 0..20 {
                assert!(backoff(retry, base, max) <= ceiling, "retry {retry}");
            }
        }
    }

    #[test]
    fn backoff_is_jittered() {
        let draws: std::collections::HashSet<_> = (0..50)
            .map(|_| backoff(3, Duration::from_secs(1), Duration::from_secs(10)))
            .collect();
        assert!(draws.len() > 1);
    }

    #[test]
    fn retry_after_forms() {
        let max = Duration::from_secs(30);
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_445_412_470); // 07:27:50 GMT
        let retry_after = |ms, secs, max| retry_after(ms, secs, max, now);
        assert_eq!(
            retry_after(None, Some("2"), max),
            Some(Duration::from_secs(2))
        );
        assert_eq!(
            retry_after(None, Some(" 0.5 "), max),
            Some(Duration::from_millis(500))
        );
        assert_eq!(
            retry_after(Some("250"), Some("9"), max),
            Some(Duration::from_millis(250))
        );
        assert_eq!(retry_after(None, Some("3600"), max), Some(max));
        assert_eq!(
            retry_after(None, Some("Wed, 21 Oct 2015 07:28:00 GMT"), max),
            Some(Duration::from_secs(10))
        );
        assert_eq!(
            retry_after(None, Some("Wed, 21 Oct 2015 07:00:00 GMT"), max),
            Some(Duration::ZERO),
            "a date in the past means now"
        );
        assert_eq!(retry_after(None, Some("Wed, 21 Oct 2015"), max), None);
        assert_eq!(retry_after(None, Some("-1"), max), None);
        assert_eq!(retry_after(None, Some("NaN"), max), None);
        assert_eq!(retry_after(Some("inf"), None, max), None);
        assert_eq!(retry_after(None, None, max), None);
    }
}
