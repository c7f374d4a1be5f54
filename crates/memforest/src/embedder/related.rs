//! The related words of a static embedder's vocabulary, as index terms: for each word, the
//! words whose vectors are nearest its own, with their cosine, nearest first. A query
//! expands its terms with them (`recall::expand`).
//!
//! The file (`data/embedder/related.py` makes it from the embedder's table) is
//! zstd-compressed UTF-8 text, one line per word: `word TAB neighbour:cosine SPACE ...`.
//! Words become index terms as the postings hold them ([`crate::recall::bm25::terms`]:
//! lower-cased Snowball stems); a stop word, anything that is not one term, a neighbour
//! with the word's own stem, a repeated stem and a malformed entry are skipped. Of the
//! words of one stem the first line is kept: the vocabulary, and so the file, is in order
//! of frequency, and the most frequent form's neighbours are the stem's ("trying":
//! "attempting"). Merging every form's lists measured no better and takes in the
//! neighbours of rarer senses ("tried": "worked"), which outranked answers.

use std::collections::HashMap;

use crate::recall::bm25::terms;

/// Related index terms per index term.
#[derive(Debug, Default)]
pub struct RelatedTerms {
    near: HashMap<String, Vec<(String, f32)>>,
}

/// The index term of a lone word, or `None` for a stop word or anything that is not
/// exactly one term.
fn term_of(word: &str) -> Option<String> {
    let mut all = terms(word);
    let one = all.pop();
    one.filter(|_| all.is_empty())
}

impl RelatedTerms {
    /// Parses a compressed file; `None` if it does not decompress (what it holds is
    /// checked entry by entry, see the module docs).
    #[must_use]
    pub fn parse(compressed: &[u8]) -> Option<Self> {
        let raw = zstd::decode_all(compressed).ok()?;
        let text = String::from_utf8_lossy(&raw);
        let mut near: HashMap<String, Vec<(String, f32)>> = HashMap::new();
        for line in text.lines() {
            let Some((word, rest)) = line.split_once('\t') else {
                continue;
            };
            let Some(term) = term_of(word) else { continue };
            if near.contains_key(&term) {
                continue;
            }
            let mut list: Vec<(String, f32)> = Vec::new();
            for entry in rest.split(' ') {
                let Some((other, cosine)) = entry.rsplit_once(':') else {
                    continue;
                };
                let (Some(other), Ok(cosine)) = (term_of(other), cosine.parse::<f32>()) else {
                    continue;
                };
                if other != term && cosine.is_finite() && list.iter().all(|(t, _)| *t != other) {
                    list.push((other, cosine));
                }
            }
            near.insert(term, list);
        }
        Some(Self { near })
    }

    /// The terms related to index term `term`, nearest first (empty when none is known).
    #[must_use]
    pub fn of(&self, term: &str) -> &[(String, f32)] {
        self.near.get(term).map_or(&[], Vec::as_slice)
    }

    /// Index terms read (one per stem, with or without related terms).
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.near.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(text: &str) -> Vec<u8> {
        zstd::encode_all(text.as_bytes(), 3).unwrap_or_default()
    }

    #[test]
    fn words_become_terms_and_same_stems_drop() {
        let r = RelatedTerms::parse(&file(
            "buy\tbuying:0.9 purchase:0.835 purchases:0.7 the:0.6 bought:0.78\n\
             activity\tactivities:0.88 hobby:0.51\n\
             activities\tleisure:0.5 hobbies:0.6\n",
        ))
        .unwrap_or_default();
        assert_eq!(
            r.of("buy"),
            &[("purchas".to_owned(), 0.835), ("bought".to_owned(), 0.78)]
        );
        // "activities" has the stem of "activity": the first line is the stem's.
        assert_eq!(r.of("activ"), &[("hobbi".to_owned(), 0.51)]);
        assert!(r.of("sell").is_empty());
        assert_eq!(r.len(), 2);
    }

    #[test]
    fn malformed_entries_are_skipped() {
        let r = RelatedTerms::parse(&file(
            "no tab here\nkids\tchildren:x toys child:0.6 :0.5 two-words:0.9 babies:NaN\n\
             the\tkids:0.9\n",
        ))
        .unwrap_or_default();
        assert_eq!(r.of("kid"), &[("child".to_owned(), 0.6)]);
        assert_eq!(r.len(), 1);
        assert!(RelatedTerms::parse(b"not zstd").is_none());
    }
}
