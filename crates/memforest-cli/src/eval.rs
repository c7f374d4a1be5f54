//! Retrieval evaluation: evidence recall@k per question category and overall, for
//! MemForest and for two flat baselines over the same raw turns, in the same run: BM25,
//! and dense retrieval with the store's embedder (when it has one).
//!
//! Both systems are scored on the same unit, a ranked list of distinct turns:
//!
//! - turn recall@k of a question = |evidence turns among the first k distinct turns| /
//!   |evidence turns|;
//! - a baseline's list is its ranking of the raw turns (BM25; cosine of the embeddings of
//!   the question and the turn, `speaker: text`);
//! - MemForest's list is the source turns of the facts `Memory::query` returns, in order of
//!   first appearance (a fact's occurrences' turns in ingest order), cut at k distinct
//!   turns. Facts are asked `FACTS_PER_TURN * k` at first and the ask doubles until k
//!   distinct turns come back or the store has no more matching facts, so MemForest is
//!   never scored on fewer turns than the baseline while it has more to give.
//!
//! Session recall@k = the same over the first k distinct sessions of each list (both
//! lists `SESSION_DEPTH` distinct turns deep) against `answer_session_ids`. Questions
//! without evidence, and LongMemEval abstention questions (`_abs`, as the official
//! retrieval evaluation does), are skipped and counted.

use std::collections::{BTreeMap, HashMap, HashSet};

use memforest::Memory;
use memforest_engine::TenantId;
use serde::Serialize;

use crate::baseline::{session_of, Baseline, DenseBaseline};
use crate::error::Result;
use crate::import::{Dataset, Question};
use crate::retrieve::{self, Ask};

/// Distinct turns ranked per question, by both systems, when ranking sessions (their
/// first k distinct sessions).
const SESSION_DEPTH: usize = 200;

/// Facts first asked of MemForest per wanted turn (sibling facts of one turn share it);
/// doubled while too few distinct turns come back.
const FACTS_PER_TURN: usize = 2;

/// The most facts asked of MemForest for one question.
const MAX_FACTS: usize = 8192;

/// Mean recall per category plus `all`.
pub type Table = BTreeMap<String, f64>;

/// The result of an evaluation run.
#[derive(Debug, Clone, Serialize)]
pub struct EvalReport {
    /// k of the turn recall.
    pub k: usize,
    /// Questions scored for turn recall.
    pub questions: usize,
    /// Questions skipped (no evidence turn, or abstention).
    pub skipped: usize,
    /// Questions scored per category.
    pub questions_by_category: BTreeMap<String, usize>,
    /// MemForest turn recall@k by category and `all`.
    pub recall_at_k: Table,
    /// Flat BM25 turn recall@k, same shape.
    pub baseline_recall_at_k: Table,
    /// Flat dense turn recall@k with the store's embedder, same shape (empty without
    /// one).
    pub dense_baseline_recall_at_k: Table,
    /// k of the session recall (only with session evidence).
    pub session_k: usize,
    /// Questions scored for session recall.
    pub session_questions: usize,
    /// MemForest session recall@session_k (empty without session evidence).
    pub session_recall_at_k: Table,
    /// Flat BM25 session recall@session_k.
    pub baseline_session_recall_at_k: Table,
    /// Users of the dataset stored without vectors (ingested with `--embedder none`)
    /// although the store is opened with an embedder: their questions are answered by
    /// words only, so the figures are lexical ones.
    pub lexical_users: u64,
    /// Wall time of the question loop, seconds.
    pub seconds: f64,
}

#[derive(Default)]
struct Acc {
    sum: BTreeMap<String, f64>,
    n: BTreeMap<String, usize>,
}

impl Acc {
    fn add(&mut self, cat: &str, v: f64) {
        for c in [cat, "all"] {
            *self.sum.entry(c.to_owned()).or_default() += v;
            *self.n.entry(c.to_owned()).or_default() += 1;
        }
    }

    fn table(&self) -> Table {
        self.sum
            .iter()
            .map(|(c, s)| {
                (
                    c.clone(),
                    s / self.n.get(c).copied().unwrap_or(1).max(1) as f64,
                )
            })
            .collect()
    }
}

fn recall(ranked: &[String], gold: &[String], k: usize) -> f64 {
    let top: HashSet<&String> = ranked.iter().take(k).collect();
    let hit = gold.iter().filter(|g| top.contains(g)).count();
    hit as f64 / gold.len().max(1) as f64
}

/// The first `k` distinct sessions of `turns`.
fn sessions(turns: &[String], of: &HashMap<String, String>, k: usize) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for s in turns.iter().filter_map(|t| of.get(t)) {
        if out.len() == k {
            break;
        }
        if !out.contains(s) {
            out.push(s.clone());
        }
    }
    out
}

/// MemForest's ranked distinct turns for `q`: at least `want` of them unless the store
/// has no more matching facts (see the module docs).
fn ranked_turns(
    db: &Memory,
    tenant: &TenantId,
    q: &Question,
    want: usize,
    settings: &Settings,
) -> Result<Vec<String>> {
    let mut depth = want.saturating_mul(FACTS_PER_TURN).clamp(1, MAX_FACTS);
    loop {
        let ask = Ask {
            k: depth,
            latest_only: settings.latest_only,
            trees: settings.trees,
        };
        let r = retrieve::query(db, tenant, &q.text, q.time, ask)?;
        if r.turns.len() >= want || r.facts.len() < depth || depth >= MAX_FACTS {
            return Ok(r.turns);
        }
        depth = depth.saturating_mul(2).min(MAX_FACTS);
    }
}

/// How `run` scores.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Settings {
    /// k of the turn recall.
    pub k: usize,
    /// k of the session recall.
    pub session_k: usize,
    /// Only current memories.
    pub latest_only: bool,
    /// Recall through the trees (false: the flat ablation).
    pub trees: bool,
}

impl Settings {
    /// Turn recall@`k`, session recall@5, every version, through the trees.
    #[must_use]
    pub fn top(k: usize) -> Self {
        Self {
            k,
            session_k: 5,
            latest_only: false,
            trees: true,
        }
    }
}

fn abstention(q: &Question) -> bool {
    q.tenant.ends_with("_abs")
}

/// Runs every question of `data` against `db` and the baselines.
///
/// # Errors
/// Retrieval and embedder errors; an invalid tenant name.
pub fn run(db: &Memory, data: &Dataset, settings: &Settings) -> Result<EvalReport> {
    let (k, session_k) = (settings.k, settings.session_k);
    let embedder = db.embedder();
    let started = std::time::Instant::now();
    let mut by_tenant: HashMap<&str, Vec<&Question>> = HashMap::new();
    for q in &data.questions {
        by_tenant.entry(q.tenant.as_str()).or_default().push(q);
    }
    let (mut mf, mut bl, mut dn, mut mfs, mut bls): (Acc, Acc, Acc, Acc, Acc) = Default::default();
    let mut skipped = 0;
    let mut lexical_users = 0u64;
    for t in &data.tenants {
        let Some(qs) = by_tenant.get(t.name.as_str()) else {
            continue;
        };
        let tenant = TenantId::new(&t.name)?;
        if embedder.is_some()
            && db.vectors_made_by(&tenant)?.as_deref() == Some(memforest::recall::NO_EMBEDDER)
        {
            lexical_users += 1;
        }
        let base = Baseline::build(t);
        let dense = match &embedder {
            Some(e) => Some(DenseBaseline::build(t, e.as_ref())?),
            None => None,
        };
        let of = session_of(t);
        for q in qs {
            let scored_turns = !q.evidence_turns.is_empty() && !abstention(q);
            let scored_sessions = !q.evidence_sessions.is_empty() && !abstention(q);
            if !scored_turns {
                skipped += 1;
            }
            if !scored_turns && !scored_sessions {
                continue;
            }
            let depth = if scored_sessions {
                SESSION_DEPTH.max(k)
            } else {
                k
            };
            let ours = ranked_turns(db, &tenant, q, depth, settings)?;
            let theirs = base.search(&q.text, depth);
            if scored_turns {
                mf.add(&q.category, recall(&ours, &q.evidence_turns, k));
                bl.add(&q.category, recall(&theirs, &q.evidence_turns, k));
                if let (Some(d), Some(e)) = (&dense, &embedder) {
                    let flat = d.search(e.as_ref(), &q.text, k)?;
                    dn.add(&q.category, recall(&flat, &q.evidence_turns, k));
                }
            }
            if scored_sessions {
                let gold = &q.evidence_sessions;
                mfs.add(
                    &q.category,
                    recall(&sessions(&ours, &of, session_k), gold, session_k),
                );
                bls.add(
                    &q.category,
                    recall(&sessions(&theirs, &of, session_k), gold, session_k),
                );
            }
        }
    }
    Ok(EvalReport {
        lexical_users,
        k,
        questions: mf.n.get("all").copied().unwrap_or(0),
        skipped,
        questions_by_category: mf.n.clone(),
        recall_at_k: mf.table(),
        baseline_recall_at_k: bl.table(),
        dense_baseline_recall_at_k: dn.table(),
        session_k,
        session_questions: mfs.n.get("all").copied().unwrap_or(0),
        session_recall_at_k: mfs.table(),
        baseline_session_recall_at_k: bls.table(),
        seconds: started.elapsed().as_secs_f64(),
    })
}

/// The report as a text table.
#[must_use]
pub fn render(r: &EvalReport) -> String {
    use std::fmt::Write as _;
    let mut s = String::new();
    if r.lexical_users > 0 {
        let _ = writeln!(
            s,
            "note: {} users were stored without vectors (--embedder none): their questions are answered by words only",
            r.lexical_users
        );
    }
    let _ = writeln!(
        s,
        "evidence turn recall@{} over {} questions ({} skipped), {:.1} s",
        r.k, r.questions, r.skipped, r.seconds
    );
    let _ = writeln!(
        s,
        "{:<28} {:>6} {:>10} {:>10} {:>8} {:>10}",
        "category", "n", "memforest", "bm25", "delta", "dense"
    );
    for (c, v) in &r.recall_at_k {
        let b = r.baseline_recall_at_k.get(c).copied().unwrap_or(0.0);
        let n = r.questions_by_category.get(c).copied().unwrap_or(0);
        let d = r
            .dense_baseline_recall_at_k
            .get(c)
            .map_or_else(|| "-".to_owned(), |d| format!("{d:.3}"));
        let _ = writeln!(
            s,
            "{c:<28} {n:>6} {v:>10.3} {b:>10.3} {:>+8.3} {d:>10}",
            v - b
        );
    }
    if r.session_questions > 0 {
        let _ = writeln!(
            s,
            "session recall@{} over {} questions",
            r.session_k, r.session_questions
        );
        for (c, v) in &r.session_recall_at_k {
            let b = r
                .baseline_session_recall_at_k
                .get(c)
                .copied()
                .unwrap_or(0.0);
            let _ = writeln!(s, "{c:<28} {:>6} {v:>10.3} {b:>10.3} {:>+8.3}", "", v - b);
        }
    }
    s
}
