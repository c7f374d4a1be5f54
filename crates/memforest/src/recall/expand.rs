//! Query expansion by word embeddings (Kuzi, Shtok and Kurland, "Query Expansion Using
//! Word Embeddings", CIKM 2016): a hybrid or embedding query also looks up, at a lower
//! weight, the terms whose vectors are nearest its own terms' in the embedder's space
//! (`Embedder::related_terms`). "What do Melanie's kids like?" also finds "children",
//! "What did Calvin buy?" also "bought" and "purchase": words a stemmer does not join and
//! an exact match misses.
//!
//! A related term counts with the idf of its own postings times [`EXPANSION_WEIGHT`] times
//! its cosine, in the facts' postings scores and in the source turns' scores alike
//! (`recall::fuse`), and never as a speaker name (`recall::accumulate`).

use std::collections::HashMap;

use crate::memory::embed::Embedder;

/// The weight of a related term against a query term of the same idf, times its cosine.
/// Chosen on LoCoMo (0.3 to 0.5 measured alike), checked on LongMemEval.
pub const EXPANSION_WEIGHT: f32 = 0.4;

/// The least cosine of a related term that is used.
pub const MIN_COSINE: f32 = 0.6;

/// How many of a query term's related terms, nearest first, are looked at (those that are
/// query terms or below [`MIN_COSINE`] are then left out).
pub const PER_TERM: usize = 3;

/// The related terms of a query's `terms` (its index terms): each with its weight,
/// [`EXPANSION_WEIGHT`] times its best cosine to any of them; none that is one of
/// `terms`; sorted by term.
#[must_use]
pub fn related(terms: &[String], embedder: &dyn Embedder) -> Vec<(String, f32)> {
    let mut weights: HashMap<&str, f32> = HashMap::new();
    for term in terms {
        let near = embedder
            .related_terms(term)
            .iter()
            .take(PER_TERM)
            .filter(|(t, cosine)| *cosine >= MIN_COSINE && !terms.contains(t));
        for (t, cosine) in near {
            let w = weights.entry(t.as_str()).or_default();
            *w = w.max(EXPANSION_WEIGHT * cosine);
        }
    }
    let mut out: Vec<(String, f32)> = weights
        .into_iter()
        .map(|(t, w)| (t.to_owned(), w))
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::embed::Embeddings;
    use crate::memory::model::ModelError;

    #[derive(Debug)]
    struct Near(Vec<(String, Vec<(String, f32)>)>);

    impl Embedder for Near {
        fn name(&self) -> &str {
            "near"
        }
        fn embed(&self, _: &[String]) -> Result<Embeddings, ModelError> {
            Ok(Embeddings::default())
        }
        fn related_terms(&self, term: &str) -> &[(String, f32)] {
            self.0
                .iter()
                .find(|(t, _)| t == term)
                .map_or(&[], |(_, n)| n.as_slice())
        }
    }

    fn list(pairs: &[(&str, f32)]) -> Vec<(String, f32)> {
        pairs.iter().map(|(t, c)| ((*t).to_owned(), *c)).collect()
    }

    #[test]
    fn near_terms_join_at_a_lower_weight() {
        let e = Near(vec![
            (
                "kid".into(),
                list(&[
                    ("children", 0.85),
                    ("boy", 0.61),
                    ("toy", 0.62),
                    ("teen", 0.60),
                    ("babi", 0.59),
                ]),
            ),
            ("toy".into(), list(&[("children", 0.9), ("game", 0.7)])),
            ("like".into(), list(&[("basic", 0.54)])),
        ]);
        let terms = vec!["kid".to_owned(), "like".to_owned(), "toy".to_owned()];
        let got = related(&terms, &e);
        let w = |c: f32| EXPANSION_WEIGHT * c;
        // Of "kid"'s nearest three, "toy" is a query term ("teen" is the fourth); "basic"
        // is too far; "children" takes its best cosine.
        assert_eq!(
            got,
            vec![
                ("boy".to_owned(), w(0.61)),
                ("children".to_owned(), w(0.9)),
                ("game".to_owned(), w(0.7)),
            ]
        );
    }

    #[test]
    fn an_embedder_without_related_terms_adds_none() {
        let e = Near(Vec::new());
        assert!(related(&["kid".to_owned()], &e).is_empty());
    }
}
