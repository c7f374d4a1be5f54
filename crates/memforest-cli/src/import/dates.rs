//! Date strings of the benchmark files, parsed to microseconds since the Unix epoch (UTC).

use chrono::NaiveDateTime;

/// LoCoMo's `session_N_date_time`, e.g. `"1:56 pm on 8 May, 2023"` (also tolerates a
/// missing comma and upper-case AM/PM). `None` when it does not parse.
#[must_use]
pub fn locomo(s: &str) -> Option<i64> {
    let s = s.trim().to_ascii_lowercase().replace(',', "");
    ["%I:%M %P on %d %B %Y", "%H:%M on %d %B %Y"]
        .iter()
        .find_map(|f| NaiveDateTime::parse_from_str(&s, f).ok())
        .map(|t| t.and_utc().timestamp_micros())
}

/// LongMemEval's `"2023/05/20 (Sat) 02:21"`. `None` when it does not parse.
#[must_use]
pub fn longmemeval(s: &str) -> Option<i64> {
    NaiveDateTime::parse_from_str(s.trim(), "%Y/%m/%d (%a) %H:%M")
        .ok()
        .map(|t| t.and_utc().timestamp_micros())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locomo_dates() {
        let t = locomo("1:56 pm on 8 May, 2023").unwrap();
        let d = chrono::DateTime::from_timestamp_micros(t).unwrap();
        assert_eq!(d.to_rfc3339(), "2023-05-08T13:56:00+00:00");
        let am = locomo("12:09 am on 13 September, 2023").unwrap();
        let d = chrono::DateTime::from_timestamp_micros(am).unwrap();
        assert_eq!(d.to_rfc3339(), "2023-09-13T00:09:00+00:00");
        assert!(locomo("yesterday").is_none());
    }

    #[test]
    fn longmemeval_dates() {
        let t = longmemeval("2023/05/20 (Sat) 02:21").unwrap();
        let d = chrono::DateTime::from_timestamp_micros(t).unwrap();
        assert_eq!(d.to_rfc3339(), "2023-05-20T02:21:00+00:00");
        assert!(longmemeval("2023-05-20").is_none());
    }
}
