//! Times given on the command line (`--time`, `--since`, `--until`) and in message files.

use chrono::{DateTime, NaiveDate, NaiveDateTime, Utc};

/// Parses `s` as a UTC time: RFC 3339 (`2024-04-02T09:00:00Z`, any offset), or a date and
/// time without offset taken as UTC (`2024-04-02 09:00`, `2024-04-02T09:00:00`), or a date
/// alone, at midnight UTC (`2024-04-02`).
///
/// # Errors
/// A message naming the value and the forms accepted.
pub fn parse(s: &str) -> Result<DateTime<Utc>, String> {
    let s = s.trim();
    if let Ok(t) = DateTime::parse_from_rfc3339(s) {
        return Ok(t.with_timezone(&Utc));
    }
    let naive = [
        "%Y-%m-%dT%H:%M:%S",
        "%Y-%m-%d %H:%M:%S",
        "%Y-%m-%dT%H:%M",
        "%Y-%m-%d %H:%M",
    ]
    .iter()
    .find_map(|f| NaiveDateTime::parse_from_str(s, f).ok())
    .or_else(|| {
        NaiveDate::parse_from_str(s, "%Y-%m-%d")
            .ok()
            .and_then(|d| d.and_hms_opt(0, 0, 0))
    });
    naive.map(|t| t.and_utc()).ok_or_else(|| {
        format!(
            "{s:?} is not a time: use RFC 3339 (2024-04-02T09:00:00Z), \
             \"2024-04-02 09:00\" (UTC) or 2024-04-02"
        )
    })
}

#[cfg(test)]
mod tests {
    use super::parse;

    #[test]
    fn rfc3339_naive_and_date_forms() {
        let utc = |s: &str| parse(s).map(|t| t.to_rfc3339());
        let nine = Ok("2024-04-02T09:00:00+00:00".to_owned());
        assert_eq!(utc("2024-04-02T09:00:00Z"), nine);
        assert_eq!(utc("2024-04-02T11:00:00+02:00"), nine);
        assert_eq!(utc("2024-04-02 09:00"), nine);
        assert_eq!(utc("2024-04-02T09:00:00"), nine);
        assert_eq!(
            utc("2024-04-02"),
            Ok("2024-04-02T00:00:00+00:00".to_owned())
        );
        for bad in ["", "yesterday", "2024-13-01", "02/04/2024"] {
            let e = parse(bad).unwrap_err();
            assert!(e.contains("RFC 3339"), "{bad}: {e}");
        }
    }
}
