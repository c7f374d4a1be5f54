//! [`Memory::search`] and [`Memory::context`]: what a user's memory holds about a question.

use std::collections::BTreeSet;

use chrono::{DateTime, Utc};
use memforest_engine::TenantId;
use memforest_tree::TimeRange;
use serde::Serialize;

use crate::api::{user, MemoryId};
use crate::memory::model::estimate_tokens;
use crate::memory::time::to_datetime;
use crate::memory::MemoryError;
use crate::recall::context::{fact_line, turn_line, turns_header, FACTS_HEADER};
use crate::recall::{Query, QueryResult, RecalledFact};
use crate::Memory;

/// The most memories the front ends (the CLI's `--k`, the server's `k`, Python's `limit`)
/// let one search ask for; [`Memory::search`] itself takes any `k`.
pub const MAX_K: usize = 1000;

/// How [`Memory::search`] and [`Memory::context`] search.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchOptions {
    /// Memories to return (default 10); 0 returns none, as `ListOptions::limit` 0 lists
    /// none ([`Memory::context`] then holds only the recent messages).
    pub k: usize,
    /// Only memories whose event time ends at or after this.
    pub since: Option<DateTime<Utc>>,
    /// Only memories whose event time starts at or before this.
    pub until: Option<DateTime<Utc>>,
    /// Answer as of this time: only memories whose event time (what they are about, as
    /// `Hit::start` gives it) starts at or before it; a memory counts as current unless one
    /// starting by then supersedes it; the recent messages are those said by then; the
    /// context's reference date is this date. A message said later about an earlier time
    /// ("last week") counts at that earlier time.
    pub as_of: Option<DateTime<Utc>>,
    /// Read at this seqno: that of a [`Memory::snapshot`] held while searching (the store
    /// as it was then, before later adds, updates and deletes).
    pub snapshot: Option<u64>,
    /// Only memories no newer memory about the same thing supersedes.
    pub latest_only: bool,
    /// Only memories said in this session (Mem0's `run_id`); recent messages come from it.
    pub session: Option<String>,
    /// Only memories said in sessions of this agent ([`crate::AddOptions::agent`]).
    pub agent: Option<String>,
    /// Only memories with this person among their participants (ASCII case ignored): the
    /// speaker of the messages a memory comes from ([`crate::Message::by`], or `user` /
    /// `assistant` for a message without a name) always is one, and a model extractor may
    /// name others. The recent messages of [`Memory::context`] are not filtered by it.
    pub speaker: Option<String>,
}

impl Default for SearchOptions {
    fn default() -> Self {
        Self {
            k: 10,
            since: None,
            until: None,
            as_of: None,
            snapshot: None,
            latest_only: false,
            session: None,
            agent: None,
            speaker: None,
        }
    }
}

impl SearchOptions {
    /// The engine query for `question` over `sessions` (`None`: all).
    fn query(&self, question: &str, sessions: Option<BTreeSet<String>>) -> Query {
        let mut q = Query::new(question);
        q.k = self.k;
        q.snapshot = self.snapshot;
        q.latest_only = self.latest_only;
        q.sessions = sessions;
        q.speaker.clone_from(&self.speaker);
        let as_of = self.as_of.map(|t| t.timestamp_micros());
        q.as_of = as_of;
        q.reference_time = as_of;
        let until = match (self.until, as_of) {
            (Some(u), Some(a)) => Some(u.timestamp_micros().min(a)),
            (u, a) => u.map(|t| t.timestamp_micros()).or(a),
        };
        if self.since.is_some() || until.is_some() {
            q.time_range = Some(TimeRange {
                start: self.since.map_or(i64::MIN, |t| t.timestamp_micros()),
                end: until.unwrap_or(i64::MAX),
            });
        }
        q
    }
}

/// Where a memory was said: a session and the ids of its messages.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Source {
    /// Session id.
    pub session: String,
    /// Message ids.
    pub messages: Vec<String>,
}

/// One memory a search found.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Hit {
    /// The memory.
    pub id: MemoryId,
    /// Its text.
    pub text: String,
    /// Relevance (higher is better; comparable within one search only).
    pub score: f32,
    /// When what it says happened or was said: start.
    pub start: Option<DateTime<Utc>>,
    /// ... and end.
    pub end: Option<DateTime<Utc>>,
    /// False when a newer memory about the same thing supersedes it.
    pub current: bool,
    /// When the newer memory that supersedes it starts (the end of its validity).
    pub valid_until: Option<DateTime<Utc>>,
    /// Where it was said.
    pub sources: Vec<Source>,
}

impl From<RecalledFact> for Hit {
    fn from(f: RecalledFact) -> Self {
        Self {
            id: MemoryId::from_fact(f.id),
            text: f.text,
            score: f.score,
            start: to_datetime(f.time.start),
            end: to_datetime(f.time.end),
            current: f.current,
            valid_until: f.valid_until.and_then(to_datetime),
            sources: f
                .provenance
                .into_iter()
                .map(|p| Source {
                    session: p.session,
                    messages: p.turns,
                })
                .collect(),
        }
    }
}

impl Memory {
    /// The memories of `user` that best answer `question`, best first. A user with no
    /// memory gets an empty list.
    ///
    /// # Errors
    /// [`MemoryError::Name`] for a bad user, a session or agent filter no write accepts
    /// (empty, over 1024 bytes, holding NUL) or a question over
    /// [`MAX_TURN_TEXT_BYTES`](crate::memory::limits::MAX_TURN_TEXT_BYTES) bytes (32 KiB,
    /// the limit of a message's text; nothing is searched); [`MemoryError::SnapshotNotHeld`]
    /// for a `snapshot` no live snapshot holds; engine read errors.
    pub fn search(
        &self,
        user: &str,
        question: &str,
        options: &SearchOptions,
    ) -> Result<Vec<Hit>, MemoryError> {
        let tenant = user::tenant(user)?;
        let query = self.search_query(&tenant, question, options)?;
        let result = self.query(&tenant, &query)?;
        Ok(result.facts.into_iter().map(Hit::from).collect())
    }

    /// A prompt-ready text for `question` from `user`'s memory, at most about `max_tokens`
    /// tokens (bytes / 4): the relevant memories with their time tags, then the last
    /// messages of the latest session. To fit, the least relevant memories but the best go
    /// first, then the oldest messages, then the best memory; then whatever of those still
    /// fits comes back, the most valuable first, so one memory or message longer than the
    /// budget is left out alone.
    ///
    /// # Errors
    /// As [`Memory::search`].
    pub fn context(
        &self,
        user: &str,
        question: &str,
        max_tokens: usize,
        options: &SearchOptions,
    ) -> Result<String, MemoryError> {
        let tenant = user::tenant(user)?;
        let query = self.search_query(&tenant, question, options)?;
        let mut result = self.query(&tenant, &query)?;
        Ok(fit(&mut result, max_tokens))
    }
}

impl Memory {
    /// The engine query of a search of `tenant` for `question`.
    fn search_query(
        &self,
        tenant: &TenantId,
        question: &str,
        options: &SearchOptions,
    ) -> Result<Query, MemoryError> {
        let sessions =
            self.scope_sessions(tenant, options.session.as_deref(), options.agent.as_deref())?;
        Ok(options.query(question, sessions))
    }
}

/// A part of a context that [`fit`] may drop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Part {
    /// The fact at this index of the result.
    Fact(usize),
    /// The recent turn at this index of the result.
    Turn(usize),
}

/// `result`'s context within `max_tokens`. Parts are dropped in this order until it fits:
/// the facts but the best, weakest first (of equal scores the last, so a reply goes before
/// the question it answers), then the recent turns, oldest first, then the best fact; the
/// memory that answers best is the last to go. The number of parts to drop is found by
/// bisection (the text shrinks with every part dropped), so a long result is rendered
/// O(log n) times, not once per part. Then each dropped part that still fits in what is
/// left of the budget comes back, the most valuable first: one part longer than the
/// budget (a pasted document) is left out alone instead of taking every part before it
/// in that order with it.
fn fit(result: &mut QueryResult, max_tokens: usize) -> String {
    let fits = |text: &str| estimate_tokens(text) <= max_tokens as u64;
    let text = result.context();
    if fits(&text) {
        return text;
    }
    // Fact indexes, weakest first; the best is last.
    let mut ranked: Vec<(usize, f32)> = result
        .facts
        .iter()
        .enumerate()
        .map(|(i, f)| (i, f.score))
        .collect();
    ranked.sort_by(|a, b| a.1.total_cmp(&b.1).then(b.0.cmp(&a.0)));
    let mut order: Vec<Part> = ranked.iter().map(|&(i, _)| Part::Fact(i)).collect();
    let best = order.pop();
    order.extend((0..result.recent_turns.len()).map(Part::Turn));
    order.extend(best);
    let keeping = |dropped: &[Part]| {
        let mut out = result.clone();
        out.facts = keep(&result.facts, |i| !dropped.contains(&Part::Fact(i)));
        out.recent_turns = keep(&result.recent_turns, |i| !dropped.contains(&Part::Turn(i)));
        out
    };
    // The fewest parts to drop: `lo` does not fit, `hi` fits or drops every part.
    let (mut lo, mut hi) = (0, order.len());
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if fits(&keeping(order.get(..mid).unwrap_or(&order)).context()) {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    let first = order.get(..hi).unwrap_or(&order);
    let mut dropped = first.to_vec();
    let kept = keeping(&dropped);
    // Bytes left: a part's cost is its line (a fact's with the widest number it can
    // have) and its section's header when the section is empty, so the sum never
    // underestimates the text.
    let budget = max_tokens.saturating_mul(4);
    let mut left = budget.saturating_sub(kept.context().len());
    let number = result.facts.len();
    let (mut facts, mut turns) = (kept.facts.len(), kept.recent_turns.len());
    for part in first.iter().rev() {
        let cost = match *part {
            Part::Fact(i) => result.facts.get(i).map_or(usize::MAX, |f| {
                let header = if facts == 0 { FACTS_HEADER.len() } else { 0 };
                fact_line(f, number).len() + header
            }),
            Part::Turn(i) => match (result.recent_turns.get(i), &result.recent_session) {
                (Some(t), Some(s)) => {
                    let header = if turns == 0 { turns_header(s).len() } else { 0 };
                    turn_line(t).len() + header
                }
                _ => usize::MAX,
            },
        };
        if cost <= left {
            left -= cost;
            dropped.retain(|p| p != part);
            match part {
                Part::Fact(_) => facts += 1,
                Part::Turn(_) => turns += 1,
            }
        }
    }
    *result = keeping(&dropped);
    result.context()
}

/// The items of `all` whose index passes `keep`, in order.
fn keep<T: Clone>(all: &[T], keep: impl Fn(usize) -> bool) -> Vec<T> {
    all.iter()
        .enumerate()
        .filter(|(i, _)| keep(*i))
        .map(|(_, x)| x.clone())
        .collect()
}

#[cfg(test)]
mod tests {
    use memforest_tree::TimeRange;

    use super::*;

    fn fact(id: u64, score: f32) -> RecalledFact {
        RecalledFact {
            id,
            text: format!("fact number {id} with a few more words to count"),
            score,
            time: TimeRange { start: 0, end: 0 },
            current: true,
            valid_until: None,
            provenance: Vec::new(),
            trees: Vec::new(),
        }
    }

    #[test]
    fn fit_drops_the_weakest_and_of_equal_scores_the_last() {
        // Fact 9 asked and fact 2 replied (same score, in that order); fact 5 is best.
        let mut result = QueryResult {
            facts: vec![fact(5, 3.0), fact(9, 1.0), fact(2, 1.0)],
            ..QueryResult::default()
        };
        let all = estimate_tokens(&result.context());
        let text = fit(&mut result, usize::try_from(all).unwrap_or(usize::MAX) - 1);
        let kept: Vec<u64> = result.facts.iter().map(|f| f.id).collect();
        assert_eq!(kept, [5, 9], "{text}");
    }

    /// A part longer than the budget is left out alone: the parts before it in the drop
    /// order stay when they fit, so one pasted document does not empty the context.
    #[test]
    fn fit_leaves_out_a_part_longer_than_the_budget_alone() {
        let turn = |i: u32, words: usize| crate::recall::query::RecentTurn {
            id: format!("t{i}"),
            speaker: "user".into(),
            text: vec!["chatter"; words].join(" "),
            time: 0,
        };
        let mut huge_fact = fact(7, 5.0);
        huge_fact.text = vec!["tomato"; 2000].join(" ");
        let full = QueryResult {
            facts: vec![huge_fact, fact(5, 3.0), fact(9, 1.0)],
            recent_turns: vec![turn(0, 5), turn(1, 3000), turn(2, 5)],
            recent_session: Some("s2".into()),
            ..QueryResult::default()
        };
        let small = QueryResult {
            facts: full.facts[1..].to_vec(),
            recent_turns: vec![full.recent_turns[0].clone(), full.recent_turns[2].clone()],
            ..full.clone()
        };
        let budget = usize::try_from(estimate_tokens(&small.context())).unwrap_or(0) + 10;
        let mut result = full.clone();
        let text = fit(&mut result, budget);
        assert!(estimate_tokens(&text) <= budget as u64, "{text}");
        assert_eq!(
            result.facts.iter().map(|f| f.id).collect::<Vec<_>>(),
            [5, 9],
            "{text}"
        );
        let turns: Vec<&str> = result.recent_turns.iter().map(|t| t.id.as_str()).collect();
        assert_eq!(turns, ["t0", "t2"], "{text}");
    }

    #[test]
    fn fit_keeps_the_best_fact_until_the_recent_turns_are_gone() {
        let turn = |i: u32| crate::recall::query::RecentTurn {
            id: format!("t{i}"),
            speaker: "user".into(),
            text: format!("random chatter number {i} about the weather today"),
            time: 0,
        };
        let full = QueryResult {
            facts: vec![fact(5, 3.0), fact(9, 1.0)],
            recent_turns: (0..6).map(turn).collect(),
            recent_session: Some("s2".into()),
            ..QueryResult::default()
        };
        let best_alone = QueryResult {
            facts: vec![fact(5, 3.0)],
            recent_turns: Vec::new(),
            ..full.clone()
        }
        .context();
        let budget = usize::try_from(estimate_tokens(&best_alone)).unwrap_or(usize::MAX) + 2;
        let mut result = full.clone();
        let text = fit(&mut result, budget);
        assert_eq!(
            result.facts.iter().map(|f| f.id).collect::<Vec<_>>(),
            [5],
            "{text}"
        );
        assert!(estimate_tokens(&text) <= budget as u64, "{text}");
        // Each budget drops the fewest parts: one more token keeps at least as much.
        let all = usize::try_from(estimate_tokens(&full.context())).unwrap_or(0);
        for budget in 1..all {
            let (mut a, mut b) = (full.clone(), full.clone());
            let (ta, tb) = (fit(&mut a, budget), fit(&mut b, budget + 1));
            assert!(ta.len() <= tb.len(), "{budget}");
        }
    }
}
