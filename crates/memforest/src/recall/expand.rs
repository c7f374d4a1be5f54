//! Query expansion by word embeddings (Kuzi, Shtok and Kurland, "Query Expansion Using
//! Word Embeddings", CIKM 2016): a hybrid or embedding query also looks up, at a lower
//! weight, the terms whose vectors are nearest its own terms' in the embedder's space
//! (`Embedder::related_terms`). "What do Melanie's kids like?" also finds "children",
//! "What did Calvin buy?" also "bought" and "purchase": words a stemmer does not join and
//! an exact match misses.
//!
//! A related term counts with [`EXPANSION_WEIGHT`] times its cosine times an idf: its own,
//! but at most that of the query term it is related to (so a rare related word does not
//! outrank the question's own word), in the facts' postings scores and in the source
//! turns' scores alike (`recall::fuse`). A related term that is in a speaker's name is
//! not used: turns are scored with their speaker's name, so it would lift every turn of
//! that speaker (`recall::search`).

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

/// A query's related term.
#[derive(Debug, Clone, PartialEq)]
pub struct Related {
    /// The index term.
    pub term: String,
    /// [`EXPANSION_WEIGHT`] times its cosine to `source`.
    pub weight: f32,
    /// The index (in the query's terms) of the query term it is nearest to.
    pub source: usize,
}

/// The related terms of a query's `terms` (its index terms), none of them one of `terms`,
/// each with the query term it is nearest to (the first of equals); sorted by term.
#[must_use]
pub fn related(terms: &[String], embedder: &dyn Embedder) -> Vec<Related> {
    let mut best: HashMap<&str, (f32, usize)> = HashMap::new();
    for (source, term) in terms.iter().enumerate() {
        let near = embedder
            .related_terms(term)
            .iter()
            .take(PER_TERM)
            .filter(|(t, cosine)| *cosine >= MIN_COSINE && !terms.contains(t));
        for (t, cosine) in near {
            let weight = EXPANSION_WEIGHT * cosine;
            let b = best.entry(t.as_str()).or_insert((weight, source));
            if weight > b.0 {
                *b = (weight, source);
            }
        }
    }
    let mut out: Vec<Related> = best
        .into_iter()
        .map(|(t, (weight, source))| Related {
            term: t.to_owned(),
            weight,
            source,
        })
        .collect();
    out.sort_by(|a, b| a.term.cmp(&b.term));
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
        let r = |term: &str, cosine: f32, source: usize| Related {
            term: term.to_owned(),
            weight: EXPANSION_WEIGHT * cosine,
            source,
        };
        // Of "kid"'s nearest three, "toy" is a query term ("teen" is the fourth); "basic"
        // is too far; "children" is nearest "toy".
        assert_eq!(
            got,
            vec![r("boy", 0.61, 0), r("children", 0.9, 2), r("game", 0.7, 2)]
        );
    }

    #[test]
    fn an_embedder_without_related_terms_adds_none() {
        let e = Near(Vec::new());
        assert!(related(&["kid".to_owned()], &e).is_empty());
    }
}
