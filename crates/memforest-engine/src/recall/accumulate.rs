//! BM25 totals of a query's posting lists by a k-way merge: every list is sorted by fact id
//! (the key order of `t | term | 0x00 | fact id BE`), so walking them together gives each
//! fact's total without a hash map (the cost of the flat baseline's accumulation), adding
//! a fact's term scores in the lists' order, as a per-term accumulation would.

use crate::recall::bm25::Bm25;
use crate::recall::index::Posting;

/// One query term's postings (sorted by fact id) and idf.
pub type TermList<'a> = (&'a [Posting], f32);

/// `(fact id, BM25 total)` of every fact in any of `lists`, in fact id order.
#[must_use]
pub fn totals(bm: &Bm25, lists: &[TermList<'_>]) -> Vec<(u64, f32)> {
    let mut at = vec![0usize; lists.len()];
    let mut out = Vec::with_capacity(lists.iter().map(|l| l.0.len()).max().unwrap_or(0));
    loop {
        let next = lists
            .iter()
            .zip(&at)
            .filter_map(|((list, _), &i)| list.get(i).map(|p| p.fact))
            .min();
        let Some(fact) = next else {
            return out;
        };
        let mut total = 0.0f32;
        for ((list, idf), i) in lists.iter().zip(at.iter_mut()) {
            if let Some(p) = list.get(*i).filter(|p| p.fact == fact) {
                total += bm.term_score(*idf, p.tf, p.len);
                *i += 1;
            }
        }
        out.push((fact, total));
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use proptest::prelude::*;

    use super::*;

    fn list(facts: &[(u64, u32, u32)]) -> Vec<Posting> {
        let mut v: Vec<Posting> = facts
            .iter()
            .map(|&(fact, tf, len)| Posting { fact, tf, len })
            .collect();
        v.sort_by_key(|p| p.fact);
        v.dedup_by_key(|p| p.fact);
        v
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        #[test]
        fn merge_equals_a_per_term_hash_accumulation(
            raw in prop::collection::vec(
                prop::collection::vec((0u64..40, 1u32..4, 1u32..30), 0..30), 0..6)
        ) {
            let lists: Vec<Vec<Posting>> = raw.iter().map(|l| list(l)).collect();
            let bm = Bm25::new(50, 500);
            let with_idf: Vec<TermList<'_>> = lists
                .iter()
                .map(|l| (l.as_slice(), bm.idf(l.len() as u64)))
                .collect();
            let mut want: HashMap<u64, f32> = HashMap::new();
            for (l, idf) in &with_idf {
                for p in l.iter() {
                    *want.entry(p.fact).or_default() += bm.term_score(*idf, p.tf, p.len);
                }
            }
            let got = totals(&bm, &with_idf);
            prop_assert!(got.windows(2).all(|w| w[0].0 < w[1].0), "fact order");
            prop_assert_eq!(got.len(), want.len());
            for (fact, total) in got {
                prop_assert_eq!(want.get(&fact).map(|t| t.to_bits()), Some(total.to_bits()));
            }
        }
    }
}
