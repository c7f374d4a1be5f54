//! [`QueryResult::context`]: the text handed to an answering LLM.

use std::fmt::Write as _;

use crate::memory::time::to_datetime;
use crate::recall::query::{QueryResult, RecalledFact, RecentTurn};

fn stamp(micros: i64) -> String {
    to_datetime(micros).map_or_else(
        || micros.to_string(),
        |d| d.format("%Y-%m-%d %H:%M").to_string(),
    )
}

/// The line that opens the facts of a context.
pub(crate) const FACTS_HEADER: &str = "Facts:\n";

/// Fact `f`'s line in a context, numbered `number`: `N. [start -> end] text`, with
/// `(until T)` for a superseded fact.
pub(crate) fn fact_line(f: &RecalledFact, number: usize) -> String {
    let (start, end) = (stamp(f.time.start), stamp(f.time.end));
    let when = if start == end {
        start
    } else {
        format!("{start} -> {end}")
    };
    let mut line = format!("{number}. [{when}] {}", f.text);
    if let Some(until) = f.valid_until {
        let _ = write!(line, " (until {})", stamp(until));
    }
    line.push('\n');
    line
}

/// The line that opens the recent turns of session `session`.
pub(crate) fn turns_header(session: &str) -> String {
    format!("Recent turns (session {session}):\n")
}

/// Recent turn `t`'s line in a context: `[time] speaker: text`.
pub(crate) fn turn_line(t: &RecentTurn) -> String {
    format!("[{}] {}: {}\n", stamp(t.time), t.speaker, t.text)
}

impl QueryResult {
    /// Renders the result: an optional `Reference date: YYYY-MM-DD` line, then the facts
    /// numbered best first (ties in the result's order: a reply's facts carry the score of
    /// the fact whose turn asked, and follow it) as `N. [start -> end] text` (`[time]` when
    /// they are the same;
    /// superseded facts say until when they held), then the recent turns of the latest
    /// session as `[time] speaker: text` (the role when the speaker has no name).
    #[must_use]
    pub fn context(&self) -> String {
        let mut out = String::new();
        if let Some(d) = self.reference_time.and_then(to_datetime) {
            let _ = writeln!(out, "Reference date: {}", d.format("%Y-%m-%d"));
        }
        let mut facts: Vec<_> = self.facts.iter().collect();
        // Stable: equal scores keep the result's order.
        facts.sort_by(|a, b| b.score.total_cmp(&a.score));
        if !facts.is_empty() {
            out.push_str(FACTS_HEADER);
        }
        for (i, f) in facts.iter().enumerate() {
            out.push_str(&fact_line(f, i + 1));
        }
        if let Some(s) = &self.recent_session {
            if !self.recent_turns.is_empty() {
                out.push_str(&turns_header(s));
                for t in &self.recent_turns {
                    out.push_str(&turn_line(t));
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use memforest_tree::TimeRange;

    use super::*;
    use crate::recall::query::RecalledFact;

    fn fact(id: u64, score: f32, start: i64, end: i64) -> RecalledFact {
        RecalledFact {
            id,
            text: format!("fact {id}"),
            score,
            time: TimeRange { start, end },
            current: true,
            valid_until: None,
            provenance: Vec::new(),
            trees: Vec::new(),
        }
    }

    #[test]
    fn facts_render_best_first_and_a_point_in_time_once() {
        const DAY: i64 = 86_400_000_000;
        let r = QueryResult {
            facts: vec![fact(1, 0.5, 0, 0), fact(2, 2.0, DAY, 2 * DAY)],
            ..QueryResult::default()
        };
        let text = r.context();
        assert_eq!(
            text,
            "Facts:\n1. [1970-01-02 00:00 -> 1970-01-03 00:00] fact 2\n\
             2. [1970-01-01 00:00] fact 1\n"
        );
    }

    #[test]
    fn equal_scores_render_in_the_results_order() {
        // A question's fact (id 9) and the fact of the turn replying to it (id 2), which
        // carries its score and follows it.
        let r = QueryResult {
            facts: vec![fact(5, 3.0, 0, 0), fact(9, 1.0, 0, 0), fact(2, 1.0, 0, 0)],
            ..QueryResult::default()
        };
        let text = r.context();
        let order: Vec<&str> = text.lines().filter_map(|l| l.split("] ").nth(1)).collect();
        assert_eq!(order, ["fact 5", "fact 9", "fact 2"]);
    }
}
