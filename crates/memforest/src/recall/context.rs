//! [`QueryResult::context`]: the text handed to an answering LLM.

use std::fmt::Write as _;

use crate::memory::time::to_datetime;
use crate::recall::query::QueryResult;

fn stamp(micros: i64) -> String {
    to_datetime(micros).map_or_else(
        || micros.to_string(),
        |d| d.format("%Y-%m-%d %H:%M").to_string(),
    )
}

impl QueryResult {
    /// Renders the result: an optional `Reference date: YYYY-MM-DD` line, then the facts
    /// numbered in time order (start, then end, then id) as `N. [start -> end] text`
    /// (superseded facts say until when they held), then the recent turns of the latest
    /// session as `speaker: text`.
    #[must_use]
    pub fn context(&self) -> String {
        let mut out = String::new();
        if let Some(d) = self.reference_time.and_then(to_datetime) {
            let _ = writeln!(out, "Reference date: {}", d.format("%Y-%m-%d"));
        }
        let mut facts: Vec<_> = self.facts.iter().collect();
        facts.sort_by_key(|f| (f.time.start, f.time.end, f.id));
        if !facts.is_empty() {
            out.push_str("Facts:\n");
        }
        for (i, f) in facts.iter().enumerate() {
            let _ = write!(
                out,
                "{}. [{} -> {}] {}",
                i + 1,
                stamp(f.time.start),
                stamp(f.time.end),
                f.text
            );
            if let Some(until) = f.valid_until {
                let _ = write!(out, " (until {})", stamp(until));
            }
            out.push('\n');
        }
        if let Some(s) = &self.recent_session {
            if !self.recent_turns.is_empty() {
                let _ = writeln!(out, "Recent turns (session {s}):");
                for t in &self.recent_turns {
                    let _ = writeln!(out, "[{}] {}: {}", stamp(t.time), t.speaker, t.text);
                }
            }
        }
        out
    }
}
