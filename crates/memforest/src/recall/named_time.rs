//! A time the question names: "What injury did Evan suffer in August 2023?", "Why did
//! Jolene get the plant on 30 August, 2023?", "What did I cook last week?".
//!
//! The words that name the time share nothing with the memory that answers ("Twisted my
//! knee last Friday"), so they cannot find it; and the question's other words ("injury")
//! often match better elsewhere in the history, so the memory is not even among the
//! candidates. A query whose question names one ([`window`]) therefore runs twice
//! (`Memory::query`): once filtered to that time, widened by [`SLACK_DAYS`] on both sides
//! and kept within the query's own time filter ([`within`]), and once as asked; the
//! filtered facts come first, then the others ([`merge`]). Nothing is hidden: a question
//! whose time is wrong still gets the best facts from other times after the dated ones,
//! and the query's own filter holds in both passes.
//!
//! The time expressions are those the extractor dates facts with
//! (`memory::extract::dates`: "May 2023", "3 May 2023", "2023-05-03", "last week", "two
//! days ago", `上周` ...), resolved against the query's reference time.

use memforest_tree::TimeRange;

use crate::memory::extract::dates;
use crate::memory::time::DAY_MICROS;
use crate::recall::query::RecalledFact;

/// Days added before and after the named time: the session that tells of an event is
/// often some days after it ("last Friday"), and a plan is told before it.
pub const SLACK_DAYS: i64 = 7;

/// The time `question` names, resolved against `reference` (microseconds since the Unix
/// epoch): from the start of its first time expression to the end of its last, widened
/// by [`SLACK_DAYS`] on both sides; `None` when it names none. The question's words stay
/// as they are: a fact that says "August" or "last week" is likelier about that time.
#[must_use]
pub fn window(question: &str, reference: i64) -> Option<TimeRange> {
    let found = dates::find(question, reference);
    let start = found.iter().map(|m| m.start).min()?;
    let end = found.iter().map(|m| m.end).max()?;
    let slack = SLACK_DAYS.saturating_mul(DAY_MICROS);
    Some(TimeRange {
        start: start.saturating_sub(slack),
        end: end.saturating_add(slack),
    })
}

/// The part of `window` inside `filter` (none: all of it); `None` when they do not meet.
#[must_use]
pub fn within(window: TimeRange, filter: Option<TimeRange>) -> Option<TimeRange> {
    let Some(f) = filter else {
        return Some(window);
    };
    let start = window.start.max(f.start);
    let end = window.end.min(f.end);
    (start <= end).then_some(TimeRange { start, end })
}

/// The first `k` of `dated` (the facts found within the named time, best first), then of
/// `all` (the query as asked) without the facts already taken.
#[must_use]
pub fn merge(dated: Vec<RecalledFact>, all: Vec<RecalledFact>, k: usize) -> Vec<RecalledFact> {
    let mut out: Vec<RecalledFact> = dated.into_iter().take(k).collect();
    for f in all {
        if out.len() >= k {
            break;
        }
        if !out.iter().any(|o| o.id == f.id) {
            out.push(f);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::time::{date_start, to_date};
    use chrono::NaiveDate;

    fn day(y: i32, m: u32, d: u32) -> NaiveDate {
        NaiveDate::from_ymd_opt(y, m, d).unwrap()
    }

    fn dates_of(question: &str, reference: NaiveDate) -> Option<(NaiveDate, NaiveDate)> {
        let w = window(question, date_start(reference).unwrap())?;
        Some((to_date(w.start).unwrap(), to_date(w.end).unwrap()))
    }

    #[test]
    fn a_named_time_is_widened_by_a_week() {
        let r = day(2024, 1, 10);
        assert_eq!(
            dates_of("What injury did Evan suffer from in August 2023?", r),
            Some((day(2023, 7, 25), day(2023, 9, 7)))
        );
        assert_eq!(
            dates_of("Why did Jolene get the new plant on 30 August, 2023?", r),
            Some((day(2023, 8, 23), day(2023, 9, 6)))
        );
        assert_eq!(
            dates_of("What did I cook yesterday?", r),
            Some((day(2024, 1, 2), day(2024, 1, 16)))
        );
        assert_eq!(
            dates_of("Did I swim more between May 2023 and June 2023?", r),
            Some((day(2023, 4, 24), day(2023, 7, 7)))
        );
    }

    #[test]
    fn a_question_without_a_time_names_none() {
        let r = day(2024, 1, 10);
        for q in [
            "What injury did Evan suffer?",
            "When did Caroline go to the support group?",
            "May I ask what my dog's name is?",
        ] {
            assert_eq!(dates_of(q, r), None, "{q}");
        }
    }

    #[test]
    fn the_window_stays_within_the_query_filter() {
        let w = TimeRange { start: 10, end: 20 };
        assert_eq!(within(w, None), Some(w));
        let f = TimeRange { start: 15, end: 30 };
        assert_eq!(within(w, Some(f)), Some(TimeRange { start: 15, end: 20 }));
        let apart = TimeRange { start: 21, end: 30 };
        assert_eq!(within(w, Some(apart)), None);
    }

    fn fact(id: u64) -> RecalledFact {
        RecalledFact {
            id,
            text: String::new(),
            score: 0.0,
            time: TimeRange { start: 0, end: 0 },
            current: true,
            valid_until: None,
            provenance: Vec::new(),
            trees: Vec::new(),
        }
    }

    #[test]
    fn dated_facts_come_first_then_the_others_once() {
        let ids = |v: Vec<RecalledFact>| v.into_iter().map(|f| f.id).collect::<Vec<_>>();
        let merged = merge(vec![fact(3), fact(1)], vec![fact(1), fact(2), fact(4)], 3);
        assert_eq!(ids(merged), vec![3, 1, 2]);
        let merged = merge(vec![fact(3), fact(1), fact(5)], vec![fact(2)], 2);
        assert_eq!(ids(merged), vec![3, 1]);
    }
}
