//! The query and its result: [`Query`] (what to look for, how many, when, as of which
//! seqno, how to score) and [`QueryResult`] (facts with score, time, provenance and the
//! trees they came through, plus the short-term memory turns).

use std::collections::BTreeSet;

use memforest_tree::TimeRange;

use crate::memory::record::FactRecord;

/// How facts and tree nodes are scored.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Mode {
    /// [`Mode::Hybrid`] when the store has an embedder (`MemoryOptions::embedder`, the
    /// bundled static one by default), else [`Mode::Lexical`].
    #[default]
    Auto,
    /// BM25 over fact texts, their source turns and node summaries only.
    Lexical,
    /// Cosine similarity only: facts by their vectors, nodes by their summaries' vectors.
    /// Needs an embedder.
    Embedding,
    /// Both (`recall::hybrid`): candidates from the postings and from the fact vectors,
    /// nodes by BM25 plus cosine, the final ranking a convex combination of the two
    /// normalised scores. Needs an embedder.
    Hybrid,
}

/// A memory query (`Memory::query`).
#[derive(Debug, Clone, PartialEq)]
pub struct Query {
    /// The question.
    pub text: String,
    /// Facts to return (default 10).
    pub k: usize,
    /// Beam width: trees recalled, and nodes kept per level of each tree's browse
    /// (default 10).
    pub beam: usize,
    /// Only facts whose event time overlaps this range (microseconds, inclusive).
    pub time_range: Option<TimeRange>,
    /// Answer as of this time (microseconds): a fact superseded only by facts starting
    /// after it counts as current, and the short-term memory keeps the turns said at or
    /// before it. Facts starting after it are left out only through `time_range` (the
    /// `Memory` API sets both).
    pub as_of: Option<i64>,
    /// Only facts said in one of these sessions (an occurrence's session), and the
    /// short-term memory from the latest of them; `None` for every session.
    pub sessions: Option<BTreeSet<String>>,
    /// Only facts one of whose participants is this name (ASCII case ignored): the speaker
    /// of the messages a fact comes from is always one, and a model extractor may name
    /// others.
    pub speaker: Option<String>,
    /// Read as of this seqno: the seqno of a `Db::snapshot()` held while querying (flushes
    /// and compactions keep only the versions live snapshots need, so a query at any seqno
    /// no live snapshot holds, older or newer than the latest, fails with
    /// `MemoryError::SnapshotNotHeld`); `None` reads the latest state.
    pub snapshot: Option<u64>,
    /// Scoring mode.
    pub mode: Mode,
    /// Whether recall goes through the trees: forest recall (trees ranked by candidate
    /// hits, root summaries and heat, which get a visit) and, under a time filter, the
    /// beam browse down to facts (MemForest paper, "Read path"). False scores the flat
    /// candidates from the postings and the fact vectors alone, to measure what the trees
    /// add. Default true.
    pub trees: bool,
    /// Only facts that no newer fact about the same entity and attribute supersedes.
    pub latest_only: bool,
    /// Turns of the tenant's latest session included as short-term memory (default 7).
    pub recent_turns: usize,
    /// Reference time for the context's first line (microseconds since the epoch).
    pub reference_time: Option<i64>,
}

impl Query {
    /// A query for `text` with the defaults ([`Mode::Auto`], k = 10, beam = 10).
    #[must_use]
    pub fn new(text: impl Into<String>) -> Self {
        Self {
            text: text.into(),
            k: 10,
            beam: 10,
            time_range: None,
            as_of: None,
            sessions: None,
            speaker: None,
            snapshot: None,
            mode: Mode::Auto,
            trees: true,
            latest_only: false,
            recent_turns: 7,
            reference_time: None,
        }
    }
}

impl Query {
    /// Whether fact `rec` passes the filters (`time_range`, `sessions`, `speaker`).
    #[must_use]
    pub fn admits(&self, rec: &FactRecord) -> bool {
        let time = self.time_range.is_none_or(|tr| {
            tr.overlaps(TimeRange {
                start: rec.time.0,
                end: rec.time.1.max(rec.time.0),
            })
        });
        let speaker = self.speaker.as_deref().is_none_or(|name| {
            rec.participants
                .iter()
                .any(|p| p.trim().eq_ignore_ascii_case(name.trim()))
        });
        time && speaker
            && self
                .sessions
                .as_ref()
                .is_none_or(|s| rec.occurrences.iter().any(|o| s.contains(&o.session)))
    }

    /// Whether any filter of [`Query::admits`] is set.
    #[must_use]
    pub fn filtered(&self) -> bool {
        self.time_range.is_some() || self.sessions.is_some() || self.speaker.is_some()
    }
}

/// Where a fact was said.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Provenance {
    /// Session id.
    pub session: String,
    /// Source turn ids.
    pub turns: Vec<String>,
}

/// One returned fact.
#[derive(Debug, Clone, PartialEq)]
pub struct RecalledFact {
    /// Fact id.
    pub id: u64,
    /// Fact text.
    pub text: String,
    /// Ranking score: the fused score of its best source turn (`recall::fuse`), at least
    /// the BM25 score of the fact text for the query.
    pub score: f32,
    /// Event time, microseconds.
    pub time: TimeRange,
    /// False when a newer fact about the same entity and attribute supersedes it.
    pub current: bool,
    /// The superseding fact's start time (the end of this fact's validity), if any.
    pub valid_until: Option<i64>,
    /// Every occurrence's session and turns.
    pub provenance: Vec<Provenance>,
    /// Labels (`kind:label`) of the recalled trees it was found through: the trees whose
    /// browse reached it, or, for a query without a time filter (which does not
    /// browse), every recalled tree that holds it.
    pub trees: Vec<String>,
}

/// One short-term-memory turn.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecentTurn {
    /// Turn id.
    pub id: String,
    /// Speaker name.
    pub speaker: String,
    /// Text.
    pub text: String,
    /// Time, microseconds.
    pub time: i64,
}

/// What `Memory::query` returns.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct QueryResult {
    /// The best facts, best first.
    pub facts: Vec<RecalledFact>,
    /// The last turns of the tenant's latest session, oldest first.
    pub recent_turns: Vec<RecentTurn>,
    /// The session they belong to.
    pub recent_session: Option<String>,
    /// The query's reference time.
    pub reference_time: Option<i64>,
}
