//! [`StaticEmbedder`]: the in-process embedder a store uses by default. It needs no
//! network, no download and no model runtime: a text's vector is the mean of its
//! WordPiece tokens' vectors, looked up in a table distilled offline from a sentence
//! embedding model (model2vec's technique: Tulkens and van Dongen, 2024).
//!
//! The bundled table ([`StaticEmbedder::bundled`]) comes from all-MiniLM-L6-v2
//! (sentence-transformers, Apache-2.0), an English model: English text embeds well, other
//! Latin-script languages partly, and Chinese, Japanese and Korean text falls back to
//! per-character tokens. `data/embedder/distill.py` makes it (source and license in
//! `data/embedder/README.md`); [`StaticEmbedder::from_model_file`] loads one made the same
//! way from another model.
//!
//! The bundled model also knows each word's related words (`RelatedTerms`), which a
//! query adds to its own (`recall::expand`).

mod model_file;
mod related;
mod wordpiece;

use std::sync::{Arc, OnceLock};

use crate::memory::embed::{Embedder, Embeddings};
use crate::memory::model::{ModelError, Usage};
use model_file::ModelFile;
use related::RelatedTerms;
use wordpiece::WordPiece;

/// The bundled model file: all-MiniLM-L6-v2 distilled to 256 dimensions.
const BUNDLED: &[u8] = include_bytes!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../data/embedder/minilm-l6-static.bin.zst"
));

/// The bundled model's related words (`data/embedder/related.py` makes them from the
/// model file above).
const BUNDLED_RELATED: &[u8] = include_bytes!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../data/embedder/minilm-l6-related.tsv.zst"
));

/// The bundled model's name, as stores record it.
const BUNDLED_NAME: &str = "minilm-l6-static-256";

/// A static (token-table) embedder: vectors of `dims()` components, L2-normalised (the
/// zero vector for a text with no known word).
#[derive(Debug)]
pub struct StaticEmbedder {
    name: String,
    vocab: WordPiece,
    dims: usize,
    scales: Vec<f32>,
    rows: Vec<i8>,
    /// The compressed related words file, parsed into `related` on first use.
    related_file: Option<&'static [u8]>,
    related: OnceLock<RelatedTerms>,
}

impl StaticEmbedder {
    /// The bundled English model (256 dimensions), parsed once per process and shared.
    ///
    /// # Errors
    /// [`ModelError::Malformed`] if the bundled file does not parse (a broken build).
    pub fn bundled() -> Result<Arc<Self>, ModelError> {
        static MODEL: OnceLock<Result<Arc<StaticEmbedder>, String>> = OnceLock::new();
        MODEL
            .get_or_init(|| {
                Self::from_model_file(BUNDLED_NAME, BUNDLED)
                    .map(|model| Self {
                        related_file: Some(BUNDLED_RELATED),
                        ..model
                    })
                    .map(Arc::new)
                    .map_err(|e| e.to_string())
            })
            .clone()
            .map_err(|what| ModelError::Malformed { offset: 0, what })
    }

    /// A model from a file `data/embedder/distill.py` wrote (zstd-compressed), under
    /// `name` (what stores record, so pick one per model and dimension). It has no related
    /// words: its queries are not expanded.
    ///
    /// # Errors
    /// [`ModelError::Malformed`] naming the offset and field that did not parse.
    pub fn from_model_file(name: &str, compressed: &[u8]) -> Result<Self, ModelError> {
        let file = ModelFile::parse(compressed)?;
        Ok(Self {
            name: name.to_owned(),
            vocab: WordPiece::new(file.tokens),
            dims: file.dims,
            scales: file.scales,
            rows: file.rows,
            related_file: None,
            related: OnceLock::new(),
        })
    }

    /// The model's related words, parsed on first use (empty for a model without them,
    /// or if the bundled file does not decompress: a broken build, which a test catches).
    fn related(&self) -> &RelatedTerms {
        self.related.get_or_init(|| {
            self.related_file
                .and_then(RelatedTerms::parse)
                .unwrap_or_default()
        })
    }

    /// Components per vector.
    #[must_use]
    pub fn dims(&self) -> usize {
        self.dims
    }

    /// The vector of `text`: its tokens' vectors summed, then L2-normalised.
    #[must_use]
    pub fn vector(&self, text: &str) -> Vec<f32> {
        let mut sum = vec![0f32; self.dims];
        for id in self.vocab.encode(text) {
            let id = id as usize;
            let scale = self.scales.get(id).copied().unwrap_or(0.0);
            if scale == 0.0 {
                continue;
            }
            let from = id.saturating_mul(self.dims);
            let Some(row) = self.rows.get(from..from.saturating_add(self.dims)) else {
                continue;
            };
            for (s, &c) in sum.iter_mut().zip(row) {
                *s += scale * f32::from(c);
            }
        }
        let norm = sum.iter().map(|x| x * x).sum::<f32>().sqrt();
        if norm > 0.0 {
            sum.iter_mut().for_each(|x| *x /= norm);
        }
        sum
    }
}

impl Embedder for StaticEmbedder {
    fn name(&self) -> &str {
        &self.name
    }

    fn embed(&self, texts: &[String]) -> Result<Embeddings, ModelError> {
        Ok(Embeddings {
            vectors: texts.iter().map(|t| self.vector(t)).collect(),
            usage: Usage::default(),
        })
    }

    fn runs_inline(&self) -> bool {
        true
    }

    fn related_terms(&self, term: &str) -> &[(String, f32)] {
        self.related().of(term)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::embed::cosine;

    #[test]
    fn the_bundled_model_relates_paraphrases_more_than_unrelated_text() {
        let e = StaticEmbedder::bundled().unwrap();
        assert_eq!(e.dims(), 256);
        let a = e.vector("I adopted a puppy last week");
        let b = e.vector("she got a new dog");
        let c = e.vector("the quarterly tax filing deadline");
        assert!(
            cosine(&a, &b) > cosine(&a, &c) + 0.1,
            "{} vs {}",
            cosine(&a, &b),
            cosine(&a, &c)
        );
        let n = a.iter().map(|x| x * x).sum::<f32>();
        assert!((n - 1.0).abs() < 1e-4);
    }

    #[test]
    fn text_without_known_words_is_the_zero_vector() {
        let e = StaticEmbedder::bundled().unwrap();
        assert!(e.vector("!!! ...").iter().all(|&x| x == 0.0));
        assert!(e.vector("").iter().all(|&x| x == 0.0));
    }

    #[test]
    fn the_bundled_model_knows_related_words() {
        let e = StaticEmbedder::bundled().unwrap();
        let kids = e.related_terms("kid");
        assert!(kids.iter().any(|(t, _)| t == "children"), "{kids:?}");
        assert!(kids.windows(2).all(|w| w[0].1 >= w[1].1), "{kids:?}");
        assert!(e.related().len() > 10_000, "{}", e.related().len());
        let plain = StaticEmbedder::from_model_file("x", BUNDLED).unwrap();
        assert!(plain.related_terms("kid").is_empty());
    }

    #[test]
    fn damaged_model_files_are_errors_not_panics() {
        for bytes in [&b""[..], b"not zstd", &BUNDLED[..BUNDLED.len() / 2]] {
            assert!(StaticEmbedder::from_model_file("x", bytes).is_err());
        }
        let short = zstd::bulk::compress(b"MFSE\x01\0\0\0\x05\0\0\0", 1).unwrap();
        assert!(StaticEmbedder::from_model_file("x", &short).is_err());
    }
}
