//! Calendar helpers over microseconds since the Unix epoch (UTC), backed by `chrono`.

use chrono::{DateTime, Datelike, NaiveDate, Utc};

/// Microseconds in one day.
pub const DAY_MICROS: i64 = 86_400_000_000;

/// The UTC date-time of `micros`, or `None` outside chrono's range.
#[must_use]
pub fn to_datetime(micros: i64) -> Option<DateTime<Utc>> {
    DateTime::from_timestamp_micros(micros)
}

/// `Mon YYYY` of `micros` (UTC), e.g. `Mar 2023`; `?` outside chrono's range.
#[must_use]
pub fn month_year(micros: i64) -> String {
    to_datetime(micros).map_or_else(|| "?".to_owned(), |d| d.format("%b %Y").to_string())
}

/// The UTC date of `micros`.
#[must_use]
pub fn to_date(micros: i64) -> Option<NaiveDate> {
    to_datetime(micros).map(|d| d.date_naive())
}

/// Microseconds of midnight UTC starting `date`.
#[must_use]
pub fn date_start(date: NaiveDate) -> Option<i64> {
    Some(date.and_hms_opt(0, 0, 0)?.and_utc().timestamp_micros())
}

/// The inclusive microsecond span `[first 00:00, last 23:59:59.999999]` of the days
/// `first..=last`.
#[must_use]
pub fn day_span(first: NaiveDate, last: NaiveDate) -> Option<(i64, i64)> {
    let start = date_start(first)?;
    let end = date_start(last.succ_opt()?)? - 1;
    Some((start, end))
}

/// The first day of the month holding `date`, shifted by `months` (may be negative).
#[must_use]
pub fn month_start(date: NaiveDate, months: i32) -> Option<NaiveDate> {
    let index = date.year() * 12 + i32::try_from(date.month0()).ok()? + months;
    let month0 = u32::try_from(index.rem_euclid(12)).ok()?;
    NaiveDate::from_ymd_opt(index.div_euclid(12), month0 + 1, 1)
}
