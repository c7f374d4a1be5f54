//! Fact vectors (table `FactVectors`, derived): each fact's embedding, written with the
//! fact when the store has an embedder, so a query finds facts by meaning as well as by
//! words (`Memory::query`'s dense candidates).
//!
//! Row: key = fact id (u64 big-endian); value = `f32 scale` (little-endian) then one `i8`
//! per dimension, the L2-normalised vector divided by `scale` and rounded (symmetric
//! scalar quantization: a quarter of f32's bytes; the cosine it gives differs from the
//! exact one by about `dims * (scale / 2)^2`).

use crate::memory::record::EMBEDDER_KEY;
use crate::memory::store::Staged;
use crate::memory::MemoryError;
use crate::recall::reader::Reader;
use crate::schema::Table;

/// The row of vector `v` (normalised first; the zero vector stays zero).
#[must_use]
pub fn encode(v: &[f32]) -> Vec<u8> {
    let unit = unit(v);
    let max = unit.iter().fold(0f32, |m, x| m.max(x.abs()));
    let scale = if max > 0.0 { max / 127.0 } else { 0.0 };
    let mut out = Vec::with_capacity(4 + unit.len());
    out.extend_from_slice(&scale.to_le_bytes());
    for x in unit {
        let q = if scale > 0.0 {
            (x / scale).round().clamp(-127.0, 127.0)
        } else {
            0.0
        };
        // In -127..=127 after the clamp.
        #[allow(clippy::cast_possible_truncation)]
        out.push((q as i8).to_le_bytes()[0]);
    }
    out
}

/// Cosine of the unit query `q` with the row `row` (0 for a malformed row or another
/// dimension).
#[must_use]
pub fn cosine(q: &[f32], row: &[u8]) -> f32 {
    let Some((scale, comps)) = row.split_first_chunk::<4>() else {
        return 0.0;
    };
    if comps.len() != q.len() {
        return 0.0;
    }
    let dot: f32 = q
        .iter()
        .zip(comps)
        .map(|(x, &c)| x * f32::from(i8::from_le_bytes([c])))
        .sum();
    dot * f32::from_le_bytes(*scale)
}

/// The unit vector of `v` (the zero vector stays zero).
#[must_use]
pub fn unit(v: &[f32]) -> Vec<f32> {
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm > 0.0 {
        v.iter().map(|x| x / norm).collect()
    } else {
        v.to_vec()
    }
}

/// Stages fact `id`'s vector.
pub fn put(st: &mut Staged<'_>, id: u64, v: &[f32]) {
    st.put(Table::FactVectors, &id.to_be_bytes(), encode(v));
}

/// Stages `embedder` as the maker of the tenant's vectors, unless one is recorded.
///
/// # Errors
/// Engine read errors.
pub fn record_embedder(st: &mut Staged<'_>, embedder: &str) -> Result<(), MemoryError> {
    if st.get(Table::RouterState, EMBEDDER_KEY)?.is_none() {
        st.put(
            Table::RouterState,
            EMBEDDER_KEY,
            embedder.as_bytes().to_vec(),
        );
    }
    Ok(())
}

/// Checks that the tenant's vectors, if any, were made by `embedder`.
///
/// # Errors
/// [`MemoryError::EmbedderMismatch`] naming both; engine read errors.
pub fn check_embedder(r: &Reader<'_>, embedder: &str) -> Result<(), MemoryError> {
    match r.get(Table::RouterState, EMBEDDER_KEY)? {
        Some(stored) if stored.as_ref() != embedder.as_bytes() => {
            Err(MemoryError::EmbedderMismatch {
                user: String::from_utf8_lossy(r.tenant().name()).into_owned(),
                stored: String::from_utf8_lossy(&stored).into_owned(),
                configured: embedder.to_owned(),
            })
        }
        _ => Ok(()),
    }
}

/// Stages the removal of fact `id`'s vector.
pub fn delete(st: &mut Staged<'_>, id: u64) {
    st.delete(Table::FactVectors, &id.to_be_bytes());
}

/// The `n` facts whose vectors are most similar to the unit query `q`, best first, as
/// `(fact id, cosine)`: an exhaustive scan of the tenant's vectors at the reader's seqno
/// (a flat index: exact, linear in the tenant's facts).
///
/// # Errors
/// Engine read errors.
pub fn nearest(r: &Reader<'_>, q: &[f32], n: usize) -> Result<Vec<(u64, f32)>, MemoryError> {
    let mut best: Vec<(u64, f32)> = Vec::new();
    if n == 0 {
        return Ok(best);
    }
    for kv in r.scan_prefix(Table::FactVectors, &[])? {
        let (k, v) = kv?;
        let Some(id) = crate::memory::record::be_u64(&k) else {
            continue;
        };
        let c = cosine(q, &v);
        if best.len() == n && best.last().is_some_and(|w| w.1 >= c) {
            continue;
        }
        let at = best.partition_point(|b| b.1 >= c);
        best.insert(at, (id, c));
        best.truncate(n);
    }
    Ok(best)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantized_cosine_is_close_to_the_exact_one() {
        let a: Vec<f32> = (0..256)
            .map(|i| ((i * 37 % 101) as f32 - 50.0) / 7.0)
            .collect();
        let b: Vec<f32> = (0..256)
            .map(|i| ((i * 53 % 89) as f32 - 44.0) / 3.0)
            .collect();
        let exact = crate::memory::embed::cosine(&a, &b);
        let approx = cosine(&unit(&a), &encode(&b));
        assert!((exact - approx).abs() < 0.01, "{exact} vs {approx}");
        assert!((cosine(&unit(&a), &encode(&a)) - 1.0).abs() < 0.01);
    }

    #[test]
    fn malformed_rows_and_zero_vectors_score_zero() {
        let q = unit(&[1.0, 2.0]);
        assert_eq!(cosine(&q, &[1, 2]), 0.0);
        assert_eq!(cosine(&q, &encode(&[1.0, 2.0, 3.0])), 0.0);
        assert_eq!(cosine(&q, &encode(&[0.0, 0.0])), 0.0);
    }
}
