//! Synthetic multi-tenant conversations for the ingest and query workloads: one fact per
//! user turn, about 200 bytes of Zipf(1)-distributed pseudo-words plus a unique serial
//! (so no two facts deduplicate), one person per fact drawn Zipf(1) from 300 (a few people
//! recur, most are named rarely: entity trees) and two topics drawn Zipf(1) from a
//! 500-word topic vocabulary (scenes), the shapes of the engine's own corpus: a small topic
//! vocabulary and skewed people give trees of many facts each, as a real extractor's
//! topics and entities do. Sessions go to tenants round-robin in time order; a fraction of
//! sessions are late (dated days before the tenant's newest one), so their facts land in
//! the middle of the trees rather than on the right edge.
//!
//! The turn text is `fact | person | topics`, the format of the engine's own synthetic
//! corpus (`memforest_benches::synth`), so its [`SynthExtractor`] turns a turn back
//! into its fact without any model or heuristic: extraction is not measured. This corpus
//! adds what that one lacks for the scale workloads: many tenants, late sessions and ~200-byte facts.

use memforest::memory::session::{Role, Session, Turn};
use memforest_benches::synth::Zipf;
pub use memforest_benches::synth::{word, SynthExtractor};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// Vocabulary size of the Zipf word draw.
pub const VOCAB: usize = 20_000;
/// People per tenant a fact may name (Zipf(1) ranks).
pub const PEOPLE: usize = 300;
/// Topic words a fact's two topics are drawn from (Zipf(1) ranks).
pub const TOPICS: usize = 500;
/// One day in microseconds.
const DAY: i64 = 86_400_000_000;
/// 2023-03-01T00:00:00Z in microseconds.
const T0: i64 = 1_677_628_800_000_000;

/// Shape of a synthetic corpus.
#[derive(Debug, Clone, Copy)]
pub struct Shape {
    /// Tenants the sessions go to, round-robin.
    pub tenants: usize,
    /// Facts (user turns) per session.
    pub per_session: usize,
    /// Fraction of sessions dated before their tenant's newest session (0..=1).
    pub late: f64,
    /// Seed.
    pub seed: u64,
}

/// One generated session: the tenant index, the session, and the fact texts it carries.
#[derive(Debug, Clone)]
pub struct Generated {
    /// Tenant index (`0..tenants`).
    pub tenant: usize,
    /// The session to ingest.
    pub session: Session,
    /// The fact text of each turn, in turn order.
    pub facts: Vec<String>,
}

/// Generates sessions until `total` facts were made.
#[derive(Debug)]
pub struct Corpus {
    shape: Shape,
    zipf: Zipf,
    people: Zipf,
    topics: Zipf,
    rng: StdRng,
    total: usize,
    made: usize,
    sessions: usize,
}

impl Corpus {
    /// A generator of `total` facts with `shape`.
    pub fn new(shape: Shape, total: usize) -> Self {
        Self {
            zipf: Zipf::new(VOCAB),
            people: Zipf::new(PEOPLE),
            topics: Zipf::new(TOPICS),
            rng: StdRng::seed_from_u64(shape.seed),
            shape,
            total,
            made: 0,
            sessions: 0,
        }
    }

    /// A query of four words of rank >= 100 (the most frequent ranks act as stop words).
    pub fn query(&mut self) -> String {
        (0..4)
            .map(|_| word(100 + self.zipf.sample(&mut self.rng) % (VOCAB - 100)))
            .collect::<Vec<_>>()
            .join(" ")
    }

    fn fact(&mut self) -> (String, String) {
        let len = self.rng.gen_range(24..34);
        let words: Vec<String> = (0..len)
            .map(|_| word(self.zipf.sample(&mut self.rng)))
            .collect();
        let person = format!("Person {}", word(self.people.sample(&mut self.rng)));
        let topics = format!(
            "{} {}",
            word(self.topics.sample(&mut self.rng)),
            word(self.topics.sample(&mut self.rng))
        );
        // A unique serial keeps every fact distinct (no dedup merges).
        let text = format!("{} {}", words.join(" "), word(VOCAB + self.made));
        let turn = format!("{text} | {person} | {topics}");
        (text, turn)
    }
}

impl Iterator for Corpus {
    type Item = Generated;

    fn next(&mut self) -> Option<Generated> {
        if self.made >= self.total {
            return None;
        }
        let tenants = self.shape.tenants.max(1);
        let tenant = self.sessions % tenants;
        let round = i64::try_from(self.sessions / tenants).unwrap_or(i64::MAX);
        // Sessions of one tenant are a day apart; a late one goes back 1..=30 days.
        let late = round > 0 && self.rng.gen_bool(self.shape.late.clamp(0.0, 1.0));
        let day = if late {
            (round - self.rng.gen_range(1..=30)).max(0)
        } else {
            round
        };
        let start = T0 + day * DAY + self.rng.gen_range(0..DAY / 2);
        let count = self.shape.per_session.max(1).min(self.total - self.made);
        let mut facts = Vec::with_capacity(count);
        let mut turns = Vec::with_capacity(count);
        for i in 0..count {
            let (text, turn) = self.fact();
            facts.push(text);
            let at = start + i64::try_from(i).unwrap_or(0) * 60_000_000;
            turns.push(Turn {
                time: Some(at),
                ..Turn::new(Role::User, "Ann", turn)
            });
            self.made += 1;
        }
        let session = Session {
            id: format!("s{}", self.sessions),
            start,
            turns,
        };
        self.sessions += 1;
        Some(Generated {
            tenant,
            session,
            facts,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape() -> Shape {
        Shape {
            tenants: 3,
            per_session: 7,
            late: 0.3,
            seed: 5,
        }
    }

    #[test]
    fn corpus_makes_exactly_total_facts_round_robin() {
        let sessions: Vec<Generated> = Corpus::new(shape(), 100).collect();
        assert_eq!(sessions.iter().map(|g| g.facts.len()).sum::<usize>(), 100);
        assert_eq!(sessions.len(), 15);
        for (i, g) in sessions.iter().enumerate() {
            assert_eq!(g.tenant, i % 3);
            assert_eq!(g.session.turns.len(), g.facts.len());
        }
        let all: std::collections::HashSet<&String> =
            sessions.iter().flat_map(|g| &g.facts).collect();
        assert_eq!(all.len(), 100, "every fact text is distinct");
    }

    #[test]
    fn facts_are_about_200_bytes() {
        let facts: Vec<String> = Corpus::new(shape(), 500).flat_map(|g| g.facts).collect();
        let mean = facts.iter().map(String::len).sum::<usize>() as f64 / facts.len() as f64;
        assert!((150.0..260.0).contains(&mean), "mean fact length {mean}");
    }

    #[test]
    fn people_and_topics_recur_with_a_zipf_head() {
        let turns: Vec<String> = Corpus::new(shape(), 3000)
            .flat_map(|g| g.session.turns)
            .map(|t| t.text)
            .collect();
        let mut people = std::collections::HashMap::new();
        let mut topics = std::collections::HashSet::new();
        for t in &turns {
            let mut parts = t.split(" | ");
            let (_, person, two) = (parts.next(), parts.next().unwrap(), parts.next().unwrap());
            *people.entry(person.to_owned()).or_insert(0usize) += 1;
            topics.extend(two.split(' ').map(str::to_owned));
        }
        assert!(topics.len() <= TOPICS, "{} topic words", topics.len());
        let top = people.values().max().copied().unwrap_or(0);
        // Zipf(1) over 300: the first rank takes about 16% of the mentions (uniform: 0.3%).
        assert!(
            top > turns.len() / 10,
            "most-named person named {top} times"
        );
        assert!(people.len() > 100, "{} distinct people", people.len());
    }

    #[test]
    fn some_sessions_are_late() {
        let sessions: Vec<Generated> = Corpus::new(shape(), 3000).collect();
        let mut newest = [i64::MIN; 3];
        let mut late = 0;
        for g in &sessions {
            let slot = &mut newest[g.tenant];
            if g.session.start < *slot {
                late += 1;
            }
            *slot = (*slot).max(g.session.start);
        }
        assert!(
            late > 10 && late < sessions.len() / 2,
            "late sessions {late}"
        );
    }
}
