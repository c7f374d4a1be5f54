//! Scene trees: online clusters of facts by topic (MemoryOS's mid-term "segments").
//!
//! A new fact is scored against each *open* scene (not full, among the
//! `MemoryOptions::scene_open_limit` most recently joined) with MemoryOS's score, keyword
//! overlap plus cosine of embeddings (when an embedder is configured), and joins the best
//! scene whose score reaches `scene_threshold` (0.6); otherwise it starts a new scene.
//!
//! The keyword term is the *containment* of the fact's topics in the scene's keyword
//! profile (every keyword of its facts so far): `|topics ∩ profile| / |topics|`. MemoryOS
//! uses Jaccard between two keyword sets, next to an embedding cosine that carries most of
//! the similarity. Jaccard of a fact's <= 3 topics against one other fact (or a scene's top
//! 3) almost never reaches 0.6 for related facts (one shared word out of 3 + 3 gives 0.2),
//! so it would make about one scene per fact. Without an
//! embedder the keyword term also stands in for the missing cosine term (score =
//! 2 x containment), so a fact joins the scene that already discusses the largest share of
//! its topics (with <= 3 topics, one shared keyword suffices; ties go to the older scene).
//! The scene capacity (60 facts, paper) and the open-scene
//! limit bound the drift of a profile.
//!
//! Cost: the keyword -> open scenes index gives every candidate's overlap in one pass over
//! the fact's topics (no per-scene keyword work), and only open scenes are held or scored,
//! so routing one fact costs O(topics x open scenes sharing them) whatever the number of
//! facts; with embeddings every open scene's centroid is compared (at most the open limit).

use std::collections::HashMap;

use memforest_tree::{Payload, TreeKind};

use crate::memory::embed::cosine;
use crate::memory::record::{self, SceneState, NEXT_SCENE_KEY, SCENE_PREFIX};
use crate::memory::route::{FactRef, Router};
use crate::memory::MemoryError;
use crate::schema::Table;

impl Router<'_, '_> {
    /// Puts a new fact into a scene.
    pub(super) fn route_scene(&mut self, fact: FactRef<'_>) -> Result<(), MemoryError> {
        let topics = &fact.rec.topics;
        if topics.is_empty() && fact.embedding.is_none() {
            return Ok(());
        }
        let number = match self.best_scene(fact)? {
            Some(n) => n,
            None => self.new_scene()?,
        };
        let capacity = self.opts.scene_capacity;
        let tenant = self.st.tenant().clone();
        let tick = self.forest.next_scene_tick();
        let scenes = self.forest.scenes(self.kv, &tenant, self.opts)?;
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
        state.tick = tick;
        let full = state.facts as usize >= capacity;
        let label = state.label.clone();
        let bytes = record::encode(&*state)?;
        self.st.put(
            Table::RouterState,
            &record::prefixed(SCENE_PREFIX, &number.to_be_bytes()),
            bytes,
        );
        for t in fresh {
            self.forest.scene_index.entry(t).or_default().push(number);
        }
        if full {
            self.forest.close_scene(number);
        } else {
            self.forest.limit_open_scenes(self.opts.scene_open_limit);
        }
        self.insert(
            TreeKind::Scene,
            &label,
            Payload::fact(fact.id),
            fact.rec.time,
            &fact.rec.text,
        )
    }

    /// The open scene with the best score at or above the threshold (ties: the older one).
    fn best_scene(&mut self, fact: FactRef<'_>) -> Result<Option<u64>, MemoryError> {
        let topics = &fact.rec.topics;
        let tenant = self.st.tenant().clone();
        let scenes = self.forest.scenes(self.kv, &tenant, self.opts)?;
        let mut overlap: HashMap<u64, usize> = HashMap::new();
        if fact.embedding.is_some() {
            overlap.extend(scenes.keys().map(|n| (*n, 0)));
        }
        for t in topics {
            for n in self.forest.scene_index.get(t).into_iter().flatten() {
                *overlap.entry(*n).or_default() += 1;
            }
        }
        let scenes = self.forest.scenes(self.kv, &tenant, self.opts)?;
        let threshold = self.opts.scene_threshold;
        Ok(overlap
            .into_iter()
            .filter_map(|(n, hits)| {
                let state = scenes.get(&n)?;
                let containment = if topics.is_empty() {
                    0.0
                } else {
                    hits as f32 / topics.len() as f32
                };
                // Without embeddings the keyword term also stands in for the cosine term.
                let cos = match (fact.embedding, &state.centroid) {
                    (Some(e), Some(c)) => cosine(e, c),
                    (Some(_), None) => 0.0,
                    (None, _) => containment,
                };
                Some((n, containment + cos))
            })
            .filter(|(_, score)| *score >= threshold)
            .max_by(|a, b| a.1.total_cmp(&b.1).then(b.0.cmp(&a.0)))
            .map(|(n, _)| n))
    }

    /// Allocates the next scene number and opens an empty scene labelled `scene-N`: the
    /// label carries no fact text (its keywords live in the scene's counts, which a forget
    /// scrubs; a label cannot change, it names the tree).
    fn new_scene(&mut self) -> Result<u64, MemoryError> {
        let next = match self.st.get(Table::RouterState, NEXT_SCENE_KEY)? {
            Some(b) => record::be_u64(&b).ok_or(MemoryError::Invariant("short scene counter"))?,
            None => 0,
        };
        self.st.put(
            Table::RouterState,
            NEXT_SCENE_KEY,
            (next + 1).to_be_bytes().to_vec(),
        );
        let tenant = self.st.tenant().clone();
        let scenes = self.forest.scenes(self.kv, &tenant, self.opts)?;
        scenes.insert(
            next,
            SceneState {
                label: format!("scene-{next}"),
                ..SceneState::default()
            },
        );
        Ok(next)
    }
}
