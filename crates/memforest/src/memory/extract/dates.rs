//! Time expressions in a sentence: explicit dates ("March 3, 2023", "3 May 2023",
//! "2023-03-03", "May 2023") and relative phrases ("yesterday", "last week", "two days ago",
//! "next month") resolved against a reference time with `chrono`; those of Chinese,
//! Japanese and Korean text in its `cjk` module.

mod cjk;

use chrono::{Datelike, Duration, NaiveDate};

use crate::memory::time::{day_span, month_start, to_date};

/// A time expression found in text and the inclusive microsecond span it denotes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TimeMention {
    /// The words as written (lower-cased tokens joined by spaces; CJK text as written,
    /// width-folded).
    pub text: String,
    /// First microsecond of the span.
    pub start: i64,
    /// Last microsecond of the span.
    pub end: i64,
}

/// Month names, January first.
pub(crate) const MONTHS: [&str; 12] = [
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
];

const NUMBER_WORDS: [&str; 12] = [
    "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven",
    "twelve",
];

fn month(word: &str) -> Option<u32> {
    let w = word.trim_end_matches('.');
    let idx = MONTHS.iter().position(|m| {
        *m == w || (w.len() >= 3 && w != "may" && m.starts_with(w) && w.len() <= 4)
    })?;
    u32::try_from(idx).ok().map(|i| i + 1)
}

fn day(word: &str) -> Option<u32> {
    let digits = word.trim_end_matches(|c: char| c.is_ascii_alphabetic());
    let d: u32 = digits.parse().ok()?;
    (1..=31).contains(&d).then_some(d)
}

fn year(word: &str) -> Option<i32> {
    let y: i32 = word.parse().ok()?;
    (word.len() == 4 && (1900..=2100).contains(&y)).then_some(y)
}

fn count(word: &str) -> Option<i64> {
    if let Ok(n) = word.parse::<i64>() {
        return (0..=1000).contains(&n).then_some(n);
    }
    match word {
        "a" | "an" => Some(1),
        _ => NUMBER_WORDS
            .iter()
            .position(|w| *w == word)
            .and_then(|i| i64::try_from(i + 1).ok()),
    }
}

fn iso(word: &str) -> Option<NaiveDate> {
    NaiveDate::parse_from_str(word, "%Y-%m-%d").ok()
}

/// Lower-cased words of `sentence`, splitting on anything but alphanumerics and `-`.
fn words(sentence: &str) -> Vec<String> {
    sentence
        .split(|c: char| !(c.is_alphanumeric() || c == '-'))
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

fn mention(text: String, first: NaiveDate, last: NaiveDate) -> Option<TimeMention> {
    let (start, end) = day_span(first, last)?;
    Some(TimeMention { text, start, end })
}

/// Every time expression of `sentence`, resolved against `reference` (microseconds since
/// the Unix epoch, UTC): the English ones in order, then the CJK ones in order.
/// Unresolvable dates (e.g. February 30) are skipped.
#[must_use]
pub fn find(sentence: &str, reference: i64) -> Vec<TimeMention> {
    let Some(today) = to_date(reference) else {
        return Vec::new();
    };
    let w = words(sentence);
    let mut out = Vec::new();
    let mut i = 0;
    while i < w.len() {
        let (found, used) = at(&w, i, today);
        if let Some(m) = found {
            out.push(m);
        }
        i += used.max(1);
    }
    out.extend(cjk::find(sentence, today));
    out
}

/// The expression starting at word `i`, and how many words it used.
fn at(w: &[String], i: usize, today: NaiveDate) -> (Option<TimeMention>, usize) {
    let get = |k: usize| w.get(i + k).map(String::as_str);
    let span = |n: usize| w.get(i..i + n).unwrap_or_default().join(" ");
    let Some(w0) = get(0) else {
        return (None, 1);
    };
    if let Some(d) = iso(w0) {
        return (mention(span(1), d, d), 1);
    }
    // "March 3, 2023" / "March 3 2023" / "March 3" / "March 2023"
    if let Some(m) = month(w0) {
        if let Some(d) = get(1).and_then(day) {
            if let Some(y) = get(2).and_then(year) {
                let date = NaiveDate::from_ymd_opt(y, m, d);
                return (date.and_then(|x| mention(span(3), x, x)), 3);
            }
            let date = NaiveDate::from_ymd_opt(today.year(), m, d);
            return (date.and_then(|x| mention(span(2), x, x)), 2);
        }
        if let Some(y) = get(1).and_then(year) {
            let first = NaiveDate::from_ymd_opt(y, m, 1);
            let last = first
                .and_then(|f| month_start(f, 1))
                .and_then(|n| n.pred_opt());
            return match (first, last) {
                (Some(f), Some(l)) => (mention(span(2), f, l), 2),
                _ => (None, 2),
            };
        }
    }
    // "3 May 2023" / "3rd of May 2023" / "3 May"
    if let Some(d) = day(w0) {
        let off = usize::from(get(1) == Some("of"));
        if let Some(m) = get(1 + off).and_then(month) {
            if let Some(y) = get(2 + off).and_then(year) {
                let date = NaiveDate::from_ymd_opt(y, m, d);
                return (date.and_then(|x| mention(span(3 + off), x, x)), 3 + off);
            }
            let date = NaiveDate::from_ymd_opt(today.year(), m, d);
            return (date.and_then(|x| mention(span(2 + off), x, x)), 2 + off);
        }
    }
    match w0 {
        "yesterday" => return (shift_days(span(1), today, -1), 1),
        "today" | "tonight" => return (shift_days(span(1), today, 0), 1),
        "tomorrow" => return (shift_days(span(1), today, 1), 1),
        "last" | "next" | "this" => {
            let sign = match w0 {
                "last" => -1,
                "next" => 1,
                _ => 0,
            };
            if let Some(unit) = get(1) {
                if let Some(m) = unit_span(span(2), today, unit, sign) {
                    return (Some(m), 2);
                }
            }
        }
        _ => {}
    }
    // "two days ago" / "in 3 weeks"
    if let (Some(n), Some(unit), Some("ago")) = (count(w0), get(1), get(2)) {
        return (unit_span(span(3), today, unit, -n), 3);
    }
    if let (Some("in"), Some(n), Some(unit)) = (Some(w0), get(1).and_then(count), get(2)) {
        return (unit_span(span(3), today, unit, n), 3);
    }
    (None, 1)
}

fn shift_days(text: String, today: NaiveDate, days: i64) -> Option<TimeMention> {
    let d = today.checked_add_signed(Duration::days(days))?;
    mention(text, d, d)
}

/// The span of the `unit` (day/week/month/year, singular or plural) `n` units from `today`,
/// written `text`.
fn unit_span(text: String, today: NaiveDate, unit: &str, n: i64) -> Option<TimeMention> {
    match unit.trim_end_matches('s') {
        "day" => shift_days(text, today, n),
        "week" => {
            let monday = today
                .checked_sub_signed(Duration::days(i64::from(
                    today.weekday().num_days_from_monday(),
                )))?
                .checked_add_signed(Duration::weeks(n))?;
            mention(text, monday, monday.checked_add_signed(Duration::days(6))?)
        }
        "month" => {
            let first = month_start(today, i32::try_from(n).ok()?)?;
            mention(text, first, month_start(first, 1)?.pred_opt()?)
        }
        "year" => {
            let y = today.year() + i32::try_from(n).ok()?;
            mention(
                text,
                NaiveDate::from_ymd_opt(y, 1, 1)?,
                NaiveDate::from_ymd_opt(y, 12, 31)?,
            )
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::time::date_start;

    fn day(y: i32, m: u32, d: u32) -> NaiveDate {
        NaiveDate::from_ymd_opt(y, m, d).unwrap()
    }

    fn spans(text: &str, reference: NaiveDate) -> Vec<(NaiveDate, NaiveDate)> {
        find(text, date_start(reference).unwrap())
            .into_iter()
            .map(|m| (to_date(m.start).unwrap(), to_date(m.end).unwrap()))
            .collect()
    }

    #[test]
    fn explicit_dates() {
        let r = day(2024, 1, 10);
        let d = day(2023, 3, 3);
        assert_eq!(spans("It was March 3, 2023 then.", r), vec![(d, d)]);
        assert_eq!(spans("on 2023-03-03", r), vec![(d, d)]);
        assert_eq!(
            spans("on 3 May 2023", r),
            vec![(day(2023, 5, 3), day(2023, 5, 3))]
        );
        assert_eq!(
            spans("in May 2023", r),
            vec![(day(2023, 5, 1), day(2023, 5, 31))]
        );
        assert_eq!(spans("on Feb 30, 2023", r), vec![]);
        assert_eq!(spans("I may go", r), vec![]);
    }

    #[test]
    fn relative_phrases_resolve_against_the_reference() {
        let r = day(2023, 3, 8); // a Wednesday
        assert_eq!(
            spans("I went yesterday", r),
            vec![(day(2023, 3, 7), day(2023, 3, 7))]
        );
        assert_eq!(
            spans("two days ago", r),
            vec![(day(2023, 3, 6), day(2023, 3, 6))]
        );
        assert_eq!(
            spans("last week", r),
            vec![(day(2023, 2, 27), day(2023, 3, 5))]
        );
        assert_eq!(
            spans("next month", r),
            vec![(day(2023, 4, 1), day(2023, 4, 30))]
        );
        assert_eq!(
            spans("last month", day(2023, 1, 15)),
            vec![(day(2022, 12, 1), day(2022, 12, 31))]
        );
        assert_eq!(
            spans("in 3 weeks", r),
            vec![(day(2023, 3, 27), day(2023, 4, 2))]
        );
        assert_eq!(
            spans("last year", r),
            vec![(day(2022, 1, 1), day(2022, 12, 31))]
        );
    }
}
