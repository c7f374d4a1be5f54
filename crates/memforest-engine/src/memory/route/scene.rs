//! Scene trees: online clusters of facts by topic. A fact joins the best-scoring scene when
//! the score (Jaccard of keywords, plus cosine of embeddings when an embedder is configured:
//! MemoryOS's score) reaches the threshold and the scene is not full; otherwise it starts a
//! new scene.

use memforest_tree::{Payload, TreeKind};

use crate::key::Table;
use crate::memory::embed::cosine;
use crate::memory::record::{self, SceneState, NEXT_SCENE_KEY, SCENE_PREFIX};
use crate::memory::route::{FactRef, Router};
use crate::memory::text::jaccard;
use crate::memory::MemoryError;

/// The scene's `n` most frequent keywords (ties by first appearance).
fn top_keywords(state: &SceneState, n: usize) -> Vec<String> {
    let mut counts: Vec<(usize, &(String, u32))> = state.counts.iter().enumerate().collect();
    counts.sort_by(|a, b| b.1 .1.cmp(&a.1 .1).then(a.0.cmp(&b.0)));
    counts
        .into_iter()
        .take(n)
        .map(|(_, (k, _))| k.clone())
        .collect()
}

/// MemoryOS's match score of a fact against a scene.
fn score(state: &SceneState, topics: &[String], embedding: Option<&[f32]>) -> f32 {
    let keywords = top_keywords(state, topics.len().max(3));
    let cos = match (embedding, &state.centroid) {
        (Some(e), Some(c)) => cosine(e, c),
        _ => 0.0,
    };
    jaccard(topics, &keywords) + cos
}

impl Router<'_, '_> {
    /// Puts a new fact into a scene.
    pub(super) fn route_scene(&mut self, fact: FactRef<'_>) -> Result<(), MemoryError> {
        let topics = &fact.rec.topics;
        if topics.is_empty() && fact.embedding.is_none() {
            return Ok(());
        }
        let (threshold, capacity) = (self.opts.scene_threshold, self.opts.scene_capacity);
        let tenant = self.st.tenant().clone();
        let scenes = self.forest.scenes(self.kv, &tenant)?;
        // Without embeddings only scenes sharing a keyword can reach a positive threshold.
        let candidates: Vec<u64> = if fact.embedding.is_some() {
            scenes.keys().copied().collect()
        } else {
            let mut c: Vec<u64> = topics
                .iter()
                .filter_map(|t| self.forest.scene_index.get(t))
                .flatten()
                .copied()
                .collect();
            c.sort_unstable();
            c.dedup();
            c
        };
        let scenes = self.forest.scenes(self.kv, &tenant)?;
        let best = candidates
            .iter()
            .filter_map(|n| scenes.get(n).map(|s| (*n, s)))
            .filter(|(_, s)| (s.facts as usize) < capacity)
            .map(|(n, s)| (n, score(s, topics, fact.embedding)))
            .filter(|(_, sc)| *sc >= threshold)
            .max_by(|a, b| a.1.total_cmp(&b.1).then(b.0.cmp(&a.0)));
        let number = match best {
            Some((n, _)) => n,
            None => {
                let next = match self.st.get(Table::RouterState, NEXT_SCENE_KEY)? {
                    Some(b) => {
                        record::be_u64(&b).ok_or(MemoryError::Invariant("short scene counter"))?
                    }
                    None => 0,
                };
                self.st.put(
                    Table::RouterState,
                    NEXT_SCENE_KEY,
                    (next + 1).to_be_bytes().to_vec(),
                );
                let label = format!("scene-{next}: {}", topics.join(", "));
                let scenes = self.forest.scenes(self.kv, &tenant)?;
                scenes.insert(
                    next,
                    SceneState {
                        label,
                        ..SceneState::default()
                    },
                );
                next
            }
        };
        let scenes = self.forest.scenes(self.kv, &tenant)?;
        let state = scenes
            .get_mut(&number)
            .ok_or(MemoryError::Invariant("chosen scene missing"))?;
        let mut fresh = Vec::new();
        for t in topics {
            match state.counts.iter_mut().find(|(k, _)| k == t) {
                Some((_, c)) => *c += 1,
                None => {
                    state.counts.push((t.clone(), 1));
                    fresh.push(t.clone());
                }
            }
        }
        if let Some(e) = fact.embedding {
            let n = state.facts as f32;
            let centroid = state.centroid.get_or_insert_with(|| vec![0.0; e.len()]);
            if centroid.len() == e.len() {
                for (c, x) in centroid.iter_mut().zip(e) {
                    *c = (*c * n + x) / (n + 1.0);
                }
            }
        }
        state.facts += 1;
        let label = state.label.clone();
        let bytes = record::encode(&*state)?;
        for t in fresh {
            self.forest.scene_index.entry(t).or_default().push(number);
        }
        self.st.put(
            Table::RouterState,
            &record::prefixed(SCENE_PREFIX, &number.to_be_bytes()),
            bytes,
        );
        self.insert(
            TreeKind::Scene,
            &label,
            Payload::fact(fact.id),
            fact.rec.time,
            &fact.rec.text,
        )
    }
}
