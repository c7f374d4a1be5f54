//! A synthetic conversation corpus for write-path benchmarks (`benches/benches/ingest.rs`,
//! `memforest bench ingest`): sessions of
//! user turns, each turn one fact, with [`SynthExtractor`] turning a turn into its fact
//! without any language processing (so a benchmark measures storage and routing, not the
//! heuristic extractor).
//!
//! A turn's text is `words | person | topic topic`: 8 to 13 words drawn from a Zipf(1)
//! vocabulary of letter-only pseudo-words plus a serial word that keeps every fact
//! distinct, one of `people` person names (an entity), and two topic words drawn from a
//! small Zipf(1) topic vocabulary (so scenes cluster).

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use memforest::memory::extract::{ExtractedItem, Extraction, ExtractionInput, Extractor, Origin};
use memforest::memory::model::{ModelError, Usage};
use memforest::memory::session::{Role, Session, Turn};

/// One day in microseconds.
const DAY: i64 = 86_400_000_000;
/// 2023-03-01T00:00:00Z in microseconds: the first session's start.
const T0: i64 = 1_677_628_800_000_000;

/// Shape of a synthetic corpus.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SynthConfig {
    /// Distinct words in fact texts (Zipf(1) ranks). Default 20,000.
    pub vocab: usize,
    /// Distinct topic words (Zipf(1) ranks). Default 500.
    pub topics: usize,
    /// Distinct person names (entities). Default 300.
    pub people: usize,
    /// Turns (facts) per session. Default 100.
    pub turns_per_session: usize,
}

impl Default for SynthConfig {
    fn default() -> Self {
        Self {
            vocab: 20_000,
            topics: 500,
            people: 300,
            turns_per_session: 100,
        }
    }
}

/// Letter-only pseudo-word number `i` (stable under stemming, never a stop word).
#[must_use]
pub fn word(i: usize) -> String {
    const C: &[u8] = b"bdfgklmnprstvz";
    const V: &[u8] = b"aeiou";
    let mut w = String::from("q");
    let mut n = i + 1;
    while n > 0 {
        let c = C.get(n % C.len()).copied().unwrap_or(b'b');
        let v = V.get((n / C.len()) % V.len()).copied().unwrap_or(b'a');
        w.push(char::from(c));
        w.push(char::from(v));
        n /= C.len() * V.len();
    }
    w.push('x');
    w
}

/// Zipf(1) sampler over ranks `0..n` (rank 0 the most frequent), shared by the synthetic
/// workloads of the benches and `memforest bench`. Walker's alias method (Vose's construction):
/// O(n) to build, O(1) per draw (a rank and a coin), so drawing stays a small part of the
/// benchmarks that time the calls around it (an inverse-CDF binary search would cost
/// O(log n) cache misses per draw).
#[derive(Debug, Clone)]
pub struct Zipf {
    /// Probability of keeping a drawn rank instead of taking its alias.
    keep: Vec<f64>,
    /// The rank that fills the rest of each rank's column.
    alias: Vec<usize>,
}

impl Zipf {
    /// The distribution over `n` ranks (at least one).
    #[must_use]
    pub fn new(n: usize) -> Self {
        let n = n.max(1);
        let total: f64 = (1..=n).map(|r| 1.0 / r as f64).sum();
        // Each rank's probability times n: columns of height 1 on average.
        let mut keep: Vec<f64> = (1..=n).map(|r| n as f64 / (r as f64 * total)).collect();
        let mut alias: Vec<usize> = (0..n).collect();
        let (mut small, mut large): (Vec<usize>, Vec<usize>) =
            (0..n).partition(|&i| keep.get(i).is_some_and(|&k| k < 1.0));
        while let (Some(&s), Some(&l)) = (small.last(), large.last()) {
            small.pop();
            let deficit = 1.0 - keep.get(s).copied().unwrap_or(1.0);
            if let Some(a) = alias.get_mut(s) {
                *a = l;
            }
            if let Some(k) = keep.get_mut(l) {
                *k -= deficit;
                if *k < 1.0 {
                    large.pop();
                    small.push(l);
                }
            }
        }
        // What is left is 1 up to rounding.
        for i in small.into_iter().chain(large) {
            if let Some(k) = keep.get_mut(i) {
                *k = 1.0;
            }
        }
        Self { keep, alias }
    }

    /// One rank in `0..n`.
    pub fn sample(&self, rng: &mut StdRng) -> usize {
        let i = rng.gen_range(0..self.keep.len());
        let coin: f64 = rng.gen();
        if coin < self.keep.get(i).copied().unwrap_or(1.0) {
            i
        } else {
            self.alias.get(i).copied().unwrap_or(i)
        }
    }
}

/// A deterministic stream of synthetic sessions (same seed, same sessions).
#[derive(Debug, Clone)]
pub struct SynthCorpus {
    config: SynthConfig,
    rng: StdRng,
    words: Zipf,
    topics: Zipf,
    facts: usize,
    sessions: usize,
}

impl SynthCorpus {
    /// A corpus of shape `config` drawn from `seed`.
    #[must_use]
    pub fn new(config: SynthConfig, seed: u64) -> Self {
        Self {
            config,
            rng: StdRng::seed_from_u64(seed),
            words: Zipf::new(config.vocab),
            topics: Zipf::new(config.topics),
            facts: 0,
            sessions: 0,
        }
    }

    /// Facts generated so far (one per turn).
    #[must_use]
    pub fn facts(&self) -> usize {
        self.facts
    }

    /// The next session (`s{n}`, one day after the previous one) with at most `max_turns`
    /// turns (and at most `turns_per_session`), one fact each.
    pub fn session(&mut self, max_turns: usize) -> Session {
        let n = self.sessions;
        self.sessions += 1;
        let start = T0 + i64::try_from(n).unwrap_or(i64::MAX / DAY) * DAY;
        let count = self.config.turns_per_session.min(max_turns);
        let turns = (0..count)
            .map(|i| {
                let len = self.rng.gen_range(8..14);
                let mut words: Vec<String> = (0..len)
                    .map(|_| word(self.words.sample(&mut self.rng)))
                    .collect();
                words.push(word(self.config.vocab + self.facts));
                self.facts += 1;
                let person = word(self.rng.gen_range(0..self.config.people.max(1)));
                let topics = [
                    word(self.topics.sample(&mut self.rng)),
                    word(self.topics.sample(&mut self.rng)),
                ];
                let minute = i64::try_from(i).unwrap_or(0) * 60_000_000;
                Turn {
                    time: Some(start + minute),
                    ..Turn::new(
                        Role::User,
                        "Ann",
                        format!(
                            "{} | Person {person} | {} {}",
                            words.join(" "),
                            topics[0],
                            topics[1]
                        ),
                    )
                }
            })
            .collect();
        Session {
            id: format!("s{n}"),
            start,
            turns,
        }
    }
}

/// The extractor of [`SynthCorpus`] turns: one user-origin fact per turn, its text, entity
/// and topics read from the `words | person | topics` fields (a turn without `|` is all
/// text). Deterministic and allocation-light.
#[derive(Debug, Clone, Copy, Default)]
pub struct SynthExtractor;

impl Extractor for SynthExtractor {
    fn name(&self) -> &str {
        "synthetic"
    }

    fn runs_inline(&self) -> bool {
        true
    }

    fn is_local(&self) -> bool {
        true
    }

    fn extract(&self, input: &ExtractionInput) -> Result<Extraction, ModelError> {
        let items = input
            .turns
            .iter()
            .map(|t| {
                let mut parts = t.text.split('|').map(str::trim);
                let text = parts.next().unwrap_or_default().to_owned();
                let entities = parts
                    .next()
                    .filter(|p| !p.is_empty())
                    .map(str::to_owned)
                    .into_iter()
                    .collect();
                let topics = parts
                    .next()
                    .unwrap_or_default()
                    .split_whitespace()
                    .map(str::to_owned)
                    .collect();
                ExtractedItem {
                    fact_text: text,
                    origin: Some(Origin::User),
                    entities,
                    topics,
                    time_start: Some(t.time),
                    time_end: Some(t.time),
                    source_turns: vec![t.turn_id.clone()],
                    ..ExtractedItem::default()
                }
            })
            .collect();
        Ok(Extraction {
            items,
            usage: Usage::default(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use memforest::memory::extract::CellTurn;

    #[test]
    fn zipf_draws_follow_one_over_rank() {
        let n = 300;
        let zipf = Zipf::new(n);
        let mut rng = StdRng::seed_from_u64(7);
        let draws = 400_000;
        let mut counts = vec![0u64; n];
        for _ in 0..draws {
            counts[zipf.sample(&mut rng)] += 1;
        }
        let total: f64 = (1..=n).map(|r| 1.0 / r as f64).sum();
        for (rank, &count) in counts.iter().enumerate().take(20) {
            let expected = draws as f64 / ((rank + 1) as f64 * total);
            let err = (count as f64 - expected).abs() / expected.sqrt();
            assert!(
                err < 5.0,
                "rank {rank}: {count} draws, expected {expected:.0}"
            );
        }
        let tail: u64 = counts[150..].iter().sum();
        let expected: f64 = (151..=n).map(|r| draws as f64 / (r as f64 * total)).sum();
        assert!((tail as f64 - expected).abs() < 5.0 * expected.sqrt());
        assert_eq!(Zipf::new(1).sample(&mut rng), 0);
    }

    #[test]
    fn zipf_alias_table_holds_exactly_one_over_rank() {
        for n in [1, 2, 3, 300, 20_000] {
            let zipf = Zipf::new(n);
            let mut p = vec![0.0f64; n];
            for (i, (&keep, &alias)) in zipf.keep.iter().zip(&zipf.alias).enumerate() {
                p[i] += keep / n as f64;
                p[alias] += (1.0 - keep) / n as f64;
            }
            let total: f64 = (1..=n).map(|r| 1.0 / r as f64).sum();
            for (rank, &got) in p.iter().enumerate() {
                let want = 1.0 / ((rank + 1) as f64 * total);
                assert!(
                    (got - want).abs() < 1e-12,
                    "n {n} rank {rank}: {got} vs {want}"
                );
            }
        }
    }

    #[test]
    fn corpus_is_deterministic_and_facts_are_distinct() {
        let a = SynthCorpus::new(SynthConfig::default(), 7).session(50);
        let b = SynthCorpus::new(SynthConfig::default(), 7).session(50);
        assert_eq!(a, b);
        assert_eq!(a.turns.len(), 50);
        let mut texts: Vec<&str> = a.turns.iter().map(|t| t.text.as_str()).collect();
        texts.sort_unstable();
        texts.dedup();
        assert_eq!(texts.len(), 50);
    }

    #[test]
    fn extractor_reads_the_three_fields() {
        let input = ExtractionInput {
            session_id: "s".into(),
            session_start: 0,
            turns: vec![CellTurn {
                turn_id: "t1".into(),
                role: Role::User,
                speaker: "Ann".into(),
                text: "qbax qdex | Person qfix | qgox qkux".into(),
                time: 5,
            }],
        };
        let x = SynthExtractor.extract(&input).unwrap();
        let item = &x.items[0];
        assert_eq!(item.fact_text, "qbax qdex");
        assert_eq!(item.entities, vec!["Person qfix".to_owned()]);
        assert_eq!(item.topics, vec!["qgox".to_owned(), "qkux".to_owned()]);
        assert_eq!(item.time_start, Some(5));
    }
}
