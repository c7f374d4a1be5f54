//! BM25 totals of a query's posting lists by a k-way merge: every list is sorted by fact id
//! (the key order of `t | term | 0x00 | fact id BE`), so walking them together gives each
//! fact's total without a hash map (the cost of the flat baseline's accumulation), adding
//! a fact's term scores in the lists' order, as a per-term accumulation would.
//!
//! [`top`] keeps only the best `k` with MaxScore early termination (Turtle and Flood,
//! "Query evaluation: strategies and optimizations", IPM 1995): terms whose summed upper
//! bounds cannot reach the current k-th best score are "non-essential", their lists are
//! only searched for facts found in the other lists, and facts whose bound falls short are
//! not scored. Totals are still added in the lists' order, so the result is exactly
//! [`totals`] cut to the best `k`.
//!
//! The first `boost` lists only add to the facts of the others (the speaker field,
//! `recall::index::speaker_term`): a fact in none of the other lists is not a result. In
//! MaxScore terms they are non-essential from the start.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use crate::recall::bm25::Bm25;
use crate::recall::index::Posting;

/// One query term's postings (sorted by fact id) and idf.
pub type TermList<'a> = (&'a [Posting], f32);

/// `(fact id, BM25 total)` of every fact in any of `lists` after the first `boost`, in
/// fact id order; the first `boost` lists add to those facts' totals only.
#[must_use]
pub fn totals(bm: &Bm25, lists: &[TermList<'_>], boost: usize) -> Vec<(u64, f32)> {
    let mut at = vec![0usize; lists.len()];
    let finding = lists.get(boost..).unwrap_or(&[]);
    let mut out = Vec::with_capacity(finding.iter().map(|l| l.0.len()).max().unwrap_or(0));
    loop {
        let next = finding
            .iter()
            .zip(at.get(boost..).unwrap_or(&[]))
            .filter_map(|((list, _), &i)| list.get(i).map(|p| p.fact))
            .min();
        let Some(fact) = next else {
            return out;
        };
        let mut total = 0.0f32;
        for (n, ((list, idf), i)) in lists.iter().zip(at.iter_mut()).enumerate() {
            if n < boost {
                *i += list
                    .get(*i..)
                    .unwrap_or(&[])
                    .partition_point(|p| p.fact < fact);
            }
            if let Some(p) = list.get(*i).filter(|p| p.fact == fact) {
                total += bm.term_score(*idf, p.tf, p.len);
                *i += 1;
            }
        }
        out.push((fact, total));
    }
}

/// Relative slack on upper bounds before pruning against the k-th best score: bounds are
/// summed in another order than totals, so float rounding may put a bound a few ulps
/// under the total it bounds.
const SLACK: f32 = 1e-4;

/// A top-k entry ordered worst first: lower score, then higher fact id.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Worst(f32, u64);

impl Eq for Worst {}

impl Ord for Worst {
    fn cmp(&self, other: &Self) -> Ordering {
        other.0.total_cmp(&self.0).then(self.1.cmp(&other.1))
    }
}

impl PartialOrd for Worst {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// An upper bound of any posting's score in `list`: the score of its highest `tf` at its
/// shortest length (the BM25 term score grows with `tf` and falls with length).
fn bound(bm: &Bm25, (list, idf): &TermList<'_>) -> f32 {
    let (tf, len) = list
        .iter()
        .fold((0, u32::MAX), |(tf, len), p| (tf.max(p.tf), len.min(p.len)));
    bm.term_score(*idf, tf, len)
}

/// The best `k` `(fact id, BM25 total)` of `lists` (the first `boost` only adding, as in
/// [`totals`]), best first (ties by fact id): the same as [`totals`] sorted and cut to `k`
/// (`bm25::top_k_of`), bit for bit, computed with MaxScore (see the module docs).
#[must_use]
pub fn top(bm: &Bm25, lists: &[TermList<'_>], boost: usize, k: usize) -> Vec<(u64, f32)> {
    if k == 0 {
        return Vec::new();
    }
    let bounds: Vec<f32> = lists.iter().map(|l| bound(bm, l)).collect();
    // The boost lists, then the others by bound, smallest first; `prefix[j]`: the sum of
    // the first `j` bounds.
    let boost = boost.min(lists.len());
    let mut order: Vec<usize> = (0..lists.len()).collect();
    let bound_of = |i: usize| bounds.get(i).copied().unwrap_or(0.0);
    if let Some(rest) = order.get_mut(boost..) {
        rest.sort_by(|&a, &b| bound_of(a).total_cmp(&bound_of(b)));
    }
    let mut prefix = vec![0.0f32];
    for &i in &order {
        let last = prefix.last().copied().unwrap_or(0.0);
        prefix.push(last + bound_of(i));
    }
    let mut at = vec![0usize; lists.len()];
    // `k` comes from the caller: never reserve more than there are postings.
    let postings: usize = lists.iter().map(|l| l.0.len()).sum();
    let mut heap: BinaryHeap<Worst> = BinaryHeap::with_capacity(k.min(postings).saturating_add(1));
    // The first `skip` terms of `order` are non-essential.
    let mut skip = boost;
    let mut contrib = vec![0.0f32; lists.len()];
    loop {
        let threshold = match heap.peek() {
            Some(w) if heap.len() >= k => w.0,
            _ => f32::NEG_INFINITY,
        };
        while prefix
            .get(skip + 1)
            .is_some_and(|b| b * (1.0 + SLACK) < threshold)
        {
            skip += 1;
        }
        let essential = order.get(skip..).unwrap_or(&[]);
        let next = essential
            .iter()
            .filter_map(|&i| lists.get(i)?.0.get(*at.get(i)?).map(|p| p.fact))
            .min();
        let Some(fact) = next else {
            break;
        };
        let mut bound_left = prefix.get(skip).copied().unwrap_or(0.0);
        for &i in essential {
            let (Some((list, idf)), Some(pos), Some(c)) =
                (lists.get(i), at.get_mut(i), contrib.get_mut(i))
            else {
                continue;
            };
            *c = 0.0;
            if let Some(p) = list.get(*pos).filter(|p| p.fact == fact) {
                *c = bm.term_score(*idf, p.tf, p.len);
                bound_left += *c;
                *pos += 1;
            }
        }
        if bound_left * (1.0 + SLACK) < threshold {
            continue;
        }
        for &i in order.get(..skip).unwrap_or(&[]) {
            let (Some((list, idf)), Some(pos), Some(c)) =
                (lists.get(i), at.get_mut(i), contrib.get_mut(i))
            else {
                continue;
            };
            *pos += list
                .get(*pos..)
                .unwrap_or(&[])
                .partition_point(|p| p.fact < fact);
            *c = list
                .get(*pos)
                .filter(|p| p.fact == fact)
                .map_or(0.0, |p| bm.term_score(*idf, p.tf, p.len));
        }
        // In the lists' order, as `totals` adds (absent terms add 0.0: no change).
        let total = contrib.iter().fold(0.0f32, |t, c| t + c);
        let entry = Worst(total, fact);
        if heap.len() < k {
            heap.push(entry);
        } else if heap.peek().is_some_and(|w| entry < *w) {
            heap.pop();
            heap.push(entry);
        }
    }
    let mut out: Vec<(u64, f32)> = heap.into_iter().map(|w| (w.1, w.0)).collect();
    out.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    out
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
                prop::collection::vec((0u64..40, 1u32..4, 1u32..30), 0..30), 0..6),
            boost in 0usize..4,
        ) {
            let lists: Vec<Vec<Posting>> = raw.iter().map(|l| list(l)).collect();
            let bm = Bm25::new(50, 500);
            let with_idf: Vec<TermList<'_>> = lists
                .iter()
                .map(|l| (l.as_slice(), bm.idf(l.len() as u64)))
                .collect();
            let found: std::collections::HashSet<u64> = with_idf
                .iter()
                .skip(boost)
                .flat_map(|(l, _)| l.iter().map(|p| p.fact))
                .collect();
            let mut want: HashMap<u64, f32> = HashMap::new();
            for (l, idf) in &with_idf {
                for p in l.iter().filter(|p| found.contains(&p.fact)) {
                    *want.entry(p.fact).or_default() += bm.term_score(*idf, p.tf, p.len);
                }
            }
            let got = totals(&bm, &with_idf, boost);
            prop_assert!(got.windows(2).all(|w| w[0].0 < w[1].0), "fact order");
            prop_assert_eq!(got.len(), want.len());
            for (fact, total) in got {
                prop_assert_eq!(want.get(&fact).map(|t| t.to_bits()), Some(total.to_bits()));
            }
        }

        #[test]
        fn max_score_top_equals_the_exhaustive_merge_cut_to_k(
            raw in prop::collection::vec(
                prop::collection::vec((0u64..200, 1u32..6, 1u32..40), 0..80), 0..6),
            k in 0usize..30,
            boost in 0usize..4,
        ) {
            let lists: Vec<Vec<Posting>> = raw.iter().map(|l| list(l)).collect();
            let bm = Bm25::new(300, 3000);
            let with_idf: Vec<TermList<'_>> = lists
                .iter()
                .map(|l| (l.as_slice(), bm.idf(l.len() as u64)))
                .collect();
            let want = crate::recall::bm25::top_k_of(totals(&bm, &with_idf, boost), k);
            let got: Vec<(u64, u32)> =
                top(&bm, &with_idf, boost, k).iter().map(|&(f, s)| (f, s.to_bits())).collect();
            let want: Vec<(u64, u32)> = want.iter().map(|&(f, s)| (f, s.to_bits())).collect();
            prop_assert_eq!(got, want);
        }
    }
}
