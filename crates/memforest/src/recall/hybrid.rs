//! The last step of a hybrid query: a convex combination of the lexical and the dense
//! score of every pooled fact (Bruch, Gai and Ingber, "An Analysis of Fusion Functions
//! for Hybrid Retrieval", TOIS 2023: normalised scores combined convexly beat reciprocal
//! rank fusion and need one weight).
//!
//! `score = (1 - w) * lexical / max lexical + w * max(cos, 0)`, the maximum over the
//! pooled facts; the lexical score is the fused source-turn score of `recall::fuse`, the
//! dense one the cosine of the fact's vector to the query's. The cosine is already
//! bounded and is used as it is: min-max normalising it over a pool of a few facts would
//! turn a difference of a hundredth into the whole range, letting a paraphrase outrank the
//! sentence that states the asked value.

use std::collections::HashMap;

/// Weight `w` of the dense score (see the module docs), chosen on LoCoMo (every category
/// at or above lexical retrieval) and checked on LongMemEval and the knowledge-update
/// suite (`docs/retrieval-quality.md`).
pub const DENSE_WEIGHT: f32 = 0.35;

/// `lexical` (fact id, score; any order) combined with `dense` (fact id -> cosine; a
/// fact without a vector counts as cosine 0) with weight `dense_weight`, best first; ties
/// by id.
#[must_use]
pub fn combine(
    lexical: &[(u64, f32)],
    dense: &HashMap<u64, f32>,
    dense_weight: f32,
) -> Vec<(u64, f32)> {
    let lex_max = lexical.iter().map(|l| l.1).fold(0f32, f32::max);
    let mut out: Vec<(u64, f32)> = lexical
        .iter()
        .map(|&(id, l)| {
            let l = if lex_max > 0.0 { l / lex_max } else { 0.0 };
            let d = dense.get(&id).map_or(0.0, |c| c.max(0.0));
            (id, (1.0 - dense_weight) * l + dense_weight * d)
        })
        .collect();
    out.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_weight_moves_the_ranking_between_the_two_scores() {
        let lexical = [(1, 10.0), (2, 5.0), (3, 0.0)];
        let dense: HashMap<u64, f32> = [(1, 0.1), (2, 0.5), (3, 0.9), (4, -0.5)].into();
        let ids = |w| {
            combine(&lexical, &dense, w)
                .iter()
                .map(|x| x.0)
                .collect::<Vec<_>>()
        };
        assert_eq!(ids(0.0), [1, 2, 3]);
        assert_eq!(ids(1.0), [3, 2, 1]);
        let half = combine(&lexical, &dense, 0.5);
        assert!(half.iter().all(|x| (0.0..=1.0).contains(&x.1)));
        let negative = combine(&[(4, 1.0)], &dense, 0.5);
        assert_eq!(negative, [(4, 0.5)]);
    }

    #[test]
    fn missing_vectors_and_zero_lexical_scores_do_not_divide_by_zero() {
        let lexical = [(2, 0.0), (1, 0.0)];
        let dense: HashMap<u64, f32> = [(1, 0.3)].into();
        let out = combine(&lexical, &dense, 0.5);
        assert!(out.iter().all(|x| x.1.is_finite()));
        assert_eq!(out.iter().map(|x| x.0).collect::<Vec<_>>(), [1, 2]);
    }
}
