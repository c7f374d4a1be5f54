//! Fact vectors (table `FactVectors`, derived): each fact's embedding, written with the
//! fact when the store has an embedder, so a query finds facts by meaning as well as by
//! words (`Memory::query`'s dense candidates).
//!
//! Row: key = fact id (u64 big-endian); value = `f32 scale` (little-endian) then one `i8`
//! per dimension, the L2-normalised vector divided by `scale` and rounded (symmetric
//! scalar quantization: a quarter of f32's bytes; the cosine it gives differs from the
//! exact one by about `dims * (scale / 2)^2`).

use crate::memory::embed::Embedder;
use crate::memory::record::EMBEDDER_KEY;
use crate::memory::store::{Kv, Staged};
use crate::memory::MemoryError;
use crate::recall::reader::Reader;
use crate::schema::Table;
use crate::Memory;
use memforest_engine::TenantId;

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

/// The scale and components of a row; `None` when it is shorter than a scale.
#[must_use]
pub fn decode(row: &[u8]) -> Option<(f32, &[u8])> {
    let (scale, comps) = row.split_first_chunk::<4>()?;
    Some((f32::from_le_bytes(*scale), comps))
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

/// The name recorded for a tenant written without an embedder (no vectors).
pub const NO_EMBEDDER: &str = "none";

/// The name a writer records: its embedder's, or [`NO_EMBEDDER`].
#[must_use]
pub fn writer_name(embedder: Option<&dyn Embedder>) -> &str {
    embedder.map_or(NO_EMBEDDER, |e| e.name())
}

/// Checks, before anything is written, that a writer with `embedder` may add to
/// `tenant`: the tenant's vectors (or their absence) were made by the same embedder, or
/// nothing is recorded yet. Mixing would leave memories that a query cannot compare, or
/// none to compare.
///
/// # Errors
/// [`MemoryError::EmbedderMismatch`] naming both; engine read errors.
pub fn check_writer(
    kv: &Kv,
    tenant: &TenantId,
    embedder: Option<&dyn Embedder>,
) -> Result<(), MemoryError> {
    let configured = writer_name(embedder);
    match kv.get(tenant, Table::RouterState, EMBEDDER_KEY)? {
        Some(stored) if stored.as_ref() != configured.as_bytes() => {
            Err(MemoryError::EmbedderMismatch {
                user: String::from_utf8_lossy(tenant.name()).into_owned(),
                stored: String::from_utf8_lossy(&stored).into_owned(),
                configured: configured.to_owned(),
            })
        }
        _ => Ok(()),
    }
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

/// Checks that the tenant's vectors, if any, were made by `embedder` (a tenant written
/// without an embedder has none, and is searched lexically by any).
///
/// # Errors
/// [`MemoryError::EmbedderMismatch`] naming both; engine read errors.
pub fn check_embedder(r: &Reader<'_>, embedder: &str) -> Result<(), MemoryError> {
    match r.get(Table::RouterState, EMBEDDER_KEY)? {
        Some(stored)
            if stored.as_ref() != embedder.as_bytes()
                && stored.as_ref() != NO_EMBEDDER.as_bytes() =>
        {
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

impl Memory {
    /// The name of the embedder that made `tenant`'s vectors, as recorded by its first
    /// write ([`NO_EMBEDDER`], `none`, when it was written without one: its memories are
    /// then found by words only, whatever embedder the store is opened with), or `None`
    /// when nothing is recorded (no memory written yet, or written before names were
    /// recorded).
    ///
    /// # Errors
    /// Engine read errors.
    pub fn vectors_made_by(&self, tenant: &TenantId) -> Result<Option<String>, MemoryError> {
        let r = Reader::new(&self.db, tenant, None, self.recall_state())?;
        Ok(r.get(Table::RouterState, EMBEDDER_KEY)?
            .map(|name| String::from_utf8_lossy(&name).into_owned()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The cosine of `q` with a row, from its decoded form.
    fn cosine(q: &[f32], row: &[u8]) -> f32 {
        let (scale, comps) = decode(row).unwrap();
        assert_eq!(comps.len(), q.len());
        let dot: f32 = q
            .iter()
            .zip(comps)
            .map(|(x, &c)| x * f32::from(i8::from_le_bytes([c])))
            .sum();
        dot * scale
    }

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
    fn short_rows_do_not_decode_and_zero_vectors_stay_zero() {
        assert!(decode(&[1, 2]).is_none());
        assert_eq!(cosine(&unit(&[1.0, 2.0]), &encode(&[0.0, 0.0])), 0.0);
    }
}
