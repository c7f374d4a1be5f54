//! The static embedder's model file (made by `data/embedder/distill.py`): a zstd frame
//! holding, little-endian,
//!
//! `b"MFSE"`, u32 version (1), u32 vocabulary size V, u32 dimensions D, V tokens (u16
//! byte length, UTF-8 bytes) in id order, V f32 scales, V * D i8 components.
//!
//! Token `i`'s vector is `scale_i * row_i`; a zero scale marks a token that carries no
//! meaning (special tokens, punctuation), skipped when pooling.

use crate::memory::model::ModelError;

const MAGIC: &[u8; 4] = b"MFSE";
const VERSION: u32 = 1;
/// The largest decompressed file accepted (a 2^20-token, 1,024-dimension model).
const MAX_BYTES: usize = 1 << 31;

/// A parsed model file.
#[derive(Debug)]
pub struct ModelFile {
    /// Tokens in id order.
    pub tokens: Vec<String>,
    /// Dimensions D.
    pub dims: usize,
    /// Per-token scales (V).
    pub scales: Vec<f32>,
    /// Components, row-major (V * D).
    pub rows: Vec<i8>,
}

fn malformed(offset: usize, what: &str) -> ModelError {
    ModelError::Malformed {
        offset,
        what: format!("static embedder model: {what}"),
    }
}

/// A little-endian reader over the decompressed bytes that reports where it failed.
struct Cursor<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Cursor<'a> {
    fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8], ModelError> {
        let out = self
            .at
            .checked_add(n)
            .and_then(|end| self.bytes.get(self.at..end))
            .ok_or_else(|| malformed(self.at, &format!("{what} cut short")))?;
        self.at += n;
        Ok(out)
    }

    fn array<const N: usize>(&mut self, what: &str) -> Result<[u8; N], ModelError> {
        let at = self.at;
        self.take(N, what)?
            .try_into()
            .map_err(|_| malformed(at, &format!("{what} cut short")))
    }

    fn u32(&mut self, what: &str) -> Result<u32, ModelError> {
        self.array(what).map(u32::from_le_bytes)
    }
}

impl ModelFile {
    /// Parses a compressed model file.
    ///
    /// # Errors
    /// [`ModelError::Malformed`] naming the byte offset (in the decompressed data) and
    /// what was wrong: not zstd, wrong magic or version, a field cut short, a token that
    /// is not UTF-8, trailing bytes.
    pub fn parse(compressed: &[u8]) -> Result<Self, ModelError> {
        let bytes = zstd::bulk::decompress(compressed, MAX_BYTES)
            .map_err(|e| malformed(0, &format!("not a zstd frame: {e}")))?;
        let mut c = Cursor {
            bytes: &bytes,
            at: 0,
        };
        if c.take(4, "magic")? != MAGIC {
            return Err(malformed(0, "wrong magic"));
        }
        let version = c.u32("version")?;
        if version != VERSION {
            return Err(malformed(
                4,
                &format!("version {version}, expected {VERSION}"),
            ));
        }
        let vocab = c.u32("vocabulary size")? as usize;
        let dims = c.u32("dimensions")? as usize;
        if dims == 0 {
            return Err(malformed(12, "zero dimensions"));
        }
        let mut tokens = Vec::with_capacity(vocab.min(1 << 20));
        for _ in 0..vocab {
            let len = usize::from(u16::from_le_bytes(c.array("token length")?));
            let at = c.at;
            let raw = c.take(len, "token")?;
            let token =
                std::str::from_utf8(raw).map_err(|_| malformed(at, "token is not UTF-8"))?;
            tokens.push(token.to_owned());
        }
        let scales = c
            .take(vocab.saturating_mul(4), "scales")?
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes(b.try_into().unwrap_or_default()))
            .collect();
        let rows = c
            .take(vocab.saturating_mul(dims), "components")?
            .iter()
            .map(|&b| i8::from_le_bytes([b]))
            .collect();
        if c.at != bytes.len() {
            return Err(malformed(c.at, "trailing bytes"));
        }
        Ok(Self {
            tokens,
            dims,
            scales,
            rows,
        })
    }
}
