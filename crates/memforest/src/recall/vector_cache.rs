//! [`VectorCache`]: a tenant's fact vectors (table `FactVectors`) as one contiguous int8
//! matrix in memory, so a query's dense candidates come from a scan of memory instead of
//! an engine scan of every row (bounded in bytes, least recently used tenant evicted
//! first). The scan is exact (a flat index): every vector is scored.
//!
//! Validity, as for [`crate::recall::postings`]: every change to a tenant's vectors bumps
//! its generation stripe ([`bump`], called when the change is staged, under the memory
//! layer's forest lock; [`bump_all`] when derived tables or a tenant are dropped); a query
//! reads the generation under the same lock before its seqno, and uses a cached matrix
//! only while the generation is the one it was loaded under. A write elsewhere can only
//! cost a reload. Queries at an older snapshot load afresh and cache nothing.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use crate::memory::record;
use crate::memory::MemoryError;
use crate::recall::lru::ByteLru;
use crate::recall::reader::Reader;
use crate::recall::vectors;
use crate::schema::Table;
use memforest_engine::TenantId;

/// Default capacity: 256 MiB of vectors (a million 256-dimension facts).
pub const DEFAULT_VECTOR_BYTES: usize = 256 << 20;
/// Generation stripes.
const STRIPES: usize = 1 << 10;

static GENERATIONS: [AtomicU64; STRIPES] = [const { AtomicU64::new(0) }; STRIPES];

fn stripe(tenant: &TenantId) -> Option<&'static AtomicU64> {
    let mut h = memforest_tree::hash::StableHasher::new();
    h.write(tenant.name());
    GENERATIONS.get(usize::try_from(h.finish() % STRIPES as u64).ok()?)
}

/// Marks `tenant`'s vectors changed (call before the change commits).
pub fn bump(tenant: &TenantId) {
    if let Some(g) = stripe(tenant) {
        g.fetch_add(1, Ordering::SeqCst);
    }
}

/// Marks every tenant's vectors changed.
pub fn bump_all() {
    for g in &GENERATIONS {
        g.fetch_add(1, Ordering::SeqCst);
    }
}

/// `tenant`'s current generation (read it under the forest lock, before the seqno).
#[must_use]
pub fn generation(tenant: &TenantId) -> u64 {
    stripe(tenant).map_or(0, |g| g.load(Ordering::SeqCst))
}

/// One tenant's fact vectors: row `i` is fact `ids[i]`, `scales[i] * rows[i*dims..]`.
#[derive(Debug, Default)]
pub struct TenantVectors {
    ids: Vec<u64>,
    scales: Vec<f32>,
    rows: Vec<i8>,
    dims: usize,
    at: HashMap<u64, usize>,
}

impl TenantVectors {
    /// Reads every row of the tenant's `FactVectors` at the reader's seqno; rows of
    /// another dimension than the first are skipped.
    ///
    /// # Errors
    /// Engine read errors.
    pub fn load(r: &Reader<'_>) -> Result<Self, MemoryError> {
        let mut out = Self::default();
        for kv in r.scan_prefix(Table::FactVectors, &[])? {
            let (k, v) = kv?;
            let (Some(id), Some((scale, comps))) = (record::be_u64(&k), vectors::decode(&v)) else {
                continue;
            };
            if out.ids.is_empty() {
                out.dims = comps.len();
            }
            if comps.len() != out.dims {
                continue;
            }
            out.at.insert(id, out.ids.len());
            out.ids.push(id);
            out.scales.push(scale);
            out.rows
                .extend(comps.iter().map(|&c| i8::from_le_bytes([c])));
        }
        Ok(out)
    }

    /// Bytes held.
    #[must_use]
    pub fn bytes(&self) -> usize {
        self.rows.len() + self.ids.len() * (8 + 4 + 24)
    }

    /// The cosine of fact `id`'s vector with the unit query `q`, if it has one.
    #[must_use]
    pub fn cosine(&self, q: &[f32], id: u64) -> Option<f32> {
        let i = *self.at.get(&id)?;
        let row = self.rows.get(i * self.dims..(i + 1) * self.dims)?;
        let dot: f32 = q.iter().zip(row).map(|(x, &c)| x * f32::from(c)).sum();
        Some(dot * self.scales.get(i).copied().unwrap_or(0.0))
    }

    /// Every fact's approximate cosine with the unit query `q` (the query quantized to
    /// int8 as the rows are), best first, cut to the best `n`.
    #[must_use]
    pub fn nearest(&self, q: &[f32], n: usize) -> Vec<(u64, f32)> {
        if q.len() != self.dims || self.dims == 0 || n == 0 {
            return Vec::new();
        }
        let max = q.iter().fold(0f32, |m, x| m.max(x.abs()));
        if max == 0.0 {
            return Vec::new();
        }
        let q_scale = max / 127.0;
        // In -127..=127: each component is at most `max` in magnitude.
        #[allow(clippy::cast_possible_truncation)]
        let q8: Vec<i16> = q.iter().map(|x| (x / q_scale).round() as i16).collect();
        let mut scored: Vec<(f32, u32)> = self
            .rows
            .chunks_exact(self.dims)
            .zip(&self.scales)
            .zip(0u32..)
            .map(|((row, &scale), i)| (dot(&q8, row) as f32 * scale * q_scale, i))
            .collect();
        if scored.len() > n {
            scored.select_nth_unstable_by(n, |a, b| b.0.total_cmp(&a.0));
            scored.truncate(n);
        }
        scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        scored
            .into_iter()
            .filter_map(|(c, i)| self.ids.get(i as usize).map(|&id| (id, c)))
            .collect()
    }
}

/// Lanes of [`dot`]'s accumulator: independent sums the compiler keeps in vector
/// registers (a single running sum serialises every addition).
const LANES: usize = 16;

/// The integer dot product of `q` and `row` (equal lengths; a tail shorter than
/// [`LANES`] is added one by one).
fn dot(q: &[i16], row: &[i8]) -> i32 {
    let mut acc = [0i32; LANES];
    let (q_body, q_tail) = q.split_at(q.len() - q.len() % LANES);
    let (r_body, r_tail) = row.split_at(row.len().min(q_body.len()));
    for (qc, rc) in q_body.chunks_exact(LANES).zip(r_body.chunks_exact(LANES)) {
        for ((a, &x), &y) in acc.iter_mut().zip(qc).zip(rc) {
            *a += i32::from(x) * i32::from(y);
        }
    }
    let tail: i32 = q_tail
        .iter()
        .zip(r_tail)
        .map(|(&x, &y)| i32::from(x) * i32::from(y))
        .sum();
    acc.iter().sum::<i32>() + tail
}

/// The latest state's vectors per tenant: `tenant -> (generation it was loaded under,
/// vectors)`.
#[derive(Debug)]
pub struct VectorCache {
    tenants: ByteLru<u8, (u64, Arc<TenantVectors>)>,
}

impl Default for VectorCache {
    fn default() -> Self {
        Self {
            tenants: ByteLru::new(DEFAULT_VECTOR_BYTES),
        }
    }
}

impl VectorCache {
    /// The reader's tenant's vectors: cached while `generation` is current (`None`, a
    /// snapshot read: loaded and not cached).
    ///
    /// # Errors
    /// Engine read errors.
    pub fn fetch(
        &self,
        r: &Reader<'_>,
        generation: Option<u64>,
    ) -> Result<Arc<TenantVectors>, MemoryError> {
        let Some(g) = generation else {
            return Ok(Arc::new(TenantVectors::load(r)?));
        };
        if let Some((_, v)) = self.tenants.get_valid(r.tenant(), &0, |e| e.0 == g) {
            return Ok(v);
        }
        let v = Arc::new(TenantVectors::load(r)?);
        self.tenants
            .insert(r.tenant(), 0, (g, Arc::clone(&v)), v.bytes());
        Ok(v)
    }

    /// Drops `tenant`'s vectors.
    pub fn forget_tenant(&self, tenant: &TenantId) {
        self.tenants.forget_tenant(tenant);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lane_dot_product_equals_the_plain_one_at_every_length() {
        for len in [0, 1, 15, 16, 17, 256, 300] {
            let q: Vec<i16> = (0..len).map(|i| (i * 37 % 255) as i16 - 127).collect();
            let r: Vec<i8> = (0..len)
                .map(|i| i8::try_from((i * 91 % 255) as i16 - 127).unwrap())
                .collect();
            let plain: i32 = q
                .iter()
                .zip(&r)
                .map(|(&a, &b)| i32::from(a) * i32::from(b))
                .sum();
            assert_eq!(dot(&q, &r), plain, "length {len}");
        }
    }
}
