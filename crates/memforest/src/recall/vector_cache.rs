//! [`VectorCache`]: a tenant's fact vectors (table `FactVectors`) as one contiguous int8
//! matrix in memory, so a query's dense candidates come from a scan of memory instead of
//! an engine scan of every row (bounded in bytes, least recently used tenant evicted
//! first). The scan is exact (a flat index): every vector is scored.
//!
//! Validity, as for [`crate::recall::postings`]: every commit that changes a tenant's
//! vectors bumps its generation stripe ([`bump`], called by `recall::write_through` under
//! the memory layer's forest lock; [`bump_all`] when derived tables or a tenant are
//! dropped); a query reads the generation under the same lock before its seqno, and uses a
//! cached matrix only while the generation is the one it was loaded under. After the
//! commit, still under the lock, its changes are applied to a matrix cached at the
//! generation just before ([`VectorCache::apply`]). A write elsewhere can only cost a
//! reload. Queries at an older snapshot load afresh and cache nothing.

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

/// Marks `tenant`'s vectors changed (under the forest lock, with the commit); returns the
/// generation before.
pub fn bump(tenant: &TenantId) -> u64 {
    stripe(tenant).map_or(0, |g| g.fetch_add(1, Ordering::SeqCst))
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
#[derive(Debug, Default, Clone)]
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
            out.put(id, scale, comps);
        }
        Ok(out)
    }

    /// Sets fact `id`'s row; false (nothing changed) for a row of another dimension than
    /// the matrix's (the first row sets it).
    fn put(&mut self, id: u64, scale: f32, comps: &[u8]) -> bool {
        if self.ids.is_empty() {
            self.dims = comps.len();
        }
        if comps.len() != self.dims {
            return false;
        }
        let comps = comps.iter().map(|&c| i8::from_le_bytes([c]));
        match self.at.get(&id).copied() {
            Some(i) => {
                let dims = self.dims;
                let (Some(row), Some(s)) = (
                    self.rows.get_mut(i * dims..(i + 1) * dims),
                    self.scales.get_mut(i),
                ) else {
                    return false;
                };
                for (slot, c) in row.iter_mut().zip(comps) {
                    *slot = c;
                }
                *s = scale;
            }
            None => {
                self.at.insert(id, self.ids.len());
                self.ids.push(id);
                self.scales.push(scale);
                self.rows.extend(comps);
            }
        }
        true
    }

    /// Removes fact `id`'s row (the last row takes its place).
    fn remove(&mut self, id: u64) {
        let Some(i) = self.at.remove(&id) else {
            return;
        };
        let last = self.ids.len().saturating_sub(1);
        if i > last || self.scales.len() != self.ids.len() {
            return;
        }
        self.ids.swap_remove(i);
        self.scales.swap_remove(i);
        if i != last {
            self.rows
                .copy_within(last * self.dims..(last + 1) * self.dims, i * self.dims);
            if let Some(&moved) = self.ids.get(i) {
                self.at.insert(moved, i);
            }
        }
        self.rows.truncate(last * self.dims);
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
        let Some((q8, q_scale)) = self.quantize(q) else {
            return Vec::new();
        };
        let dots = pulp::Arch::new().dispatch(RowDots {
            q8: &q8,
            rows: &self.rows,
            dims: self.dims,
        });
        let scored = dots
            .iter()
            .zip(&self.scales)
            .zip(0u32..)
            .map(|((&d, &scale), i)| (d as f32 * scale * q_scale, i))
            .collect();
        self.best(scored, n)
    }

    /// [`TenantVectors::nearest`] among the facts `ids` only (those without a vector are
    /// left out): the same approximate cosines, best first, cut to the best `n`.
    #[must_use]
    pub fn nearest_among(
        &self,
        q: &[f32],
        ids: impl IntoIterator<Item = u64>,
        n: usize,
    ) -> Vec<(u64, f32)> {
        let Some((q8, q_scale)) = self.quantize(q) else {
            return Vec::new();
        };
        let scored = ids
            .into_iter()
            .filter_map(|id| {
                let i = *self.at.get(&id)?;
                let row = self.rows.get(i * self.dims..(i + 1) * self.dims)?;
                let scale = *self.scales.get(i)?;
                Some((
                    dot(&q8, row) as f32 * scale * q_scale,
                    u32::try_from(i).ok()?,
                ))
            })
            .collect();
        self.best(scored, n)
    }

    /// The unit query `q` quantized as the rows are: each component in -127..=127, and
    /// the scale back; `None` for a query of another dimension or of zeros.
    fn quantize(&self, q: &[f32]) -> Option<(Vec<i16>, f32)> {
        if q.len() != self.dims || self.dims == 0 {
            return None;
        }
        let max = q.iter().fold(0f32, |m, x| m.max(x.abs()));
        if max == 0.0 {
            return None;
        }
        let q_scale = max / 127.0;
        // In -127..=127: each component is at most `max` in magnitude.
        #[allow(clippy::cast_possible_truncation)]
        let q8: Vec<i16> = q.iter().map(|x| (x / q_scale).round() as i16).collect();
        Some((q8, q_scale))
    }

    /// The best `n` of `scored` (`(cosine, row)`) as `(fact id, cosine)`, best first, ties
    /// by fact id.
    fn best(&self, mut scored: Vec<(f32, u32)>, n: usize) -> Vec<(u64, f32)> {
        if scored.len() > n {
            scored.select_nth_unstable_by(n, |a, b| b.0.total_cmp(&a.0));
            scored.truncate(n);
        }
        let mut out: Vec<(u64, f32)> = scored
            .into_iter()
            .filter_map(|(c, i)| self.ids.get(i as usize).map(|&id| (id, c)))
            .collect();
        out.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        out
    }
}

/// Every row's integer dot product with the quantized query, in row order. Run through
/// [`pulp::Arch::dispatch`], which compiles this body (and [`dot`], inlined into it) once
/// per instruction set and picks the widest the CPU has at run time (AVX2 or AVX-512
/// where present, the baseline elsewhere), so the scan vectorizes to the machine without
/// `unsafe` here. The loop writes into a buffer sized up front: a call out of the
/// dispatched body per row (an iterator adapter's closure, a growing `Vec`) would run at
/// the baseline instruction set.
struct RowDots<'a> {
    /// The query, each component in -127..=127.
    q8: &'a [i16],
    /// Row-major int8 components, `dims` per row.
    rows: &'a [i8],
    dims: usize,
}

impl pulp::WithSimd for RowDots<'_> {
    type Output = Vec<i32>;

    #[inline(always)]
    fn with_simd<S: pulp::Simd>(self, _simd: S) -> Self::Output {
        let mut out = vec![0i32; self.rows.len() / self.dims.max(1)];
        for (slot, row) in out.iter_mut().zip(self.rows.chunks_exact(self.dims)) {
            *slot = dot(self.q8, row);
        }
        out
    }
}

/// Lanes of [`dot`]'s accumulator: independent sums the compiler keeps in vector
/// registers (a single running sum serialises every addition).
const LANES: usize = 16;

/// The integer dot product of `q` and `row` (equal lengths; a tail shorter than
/// [`LANES`] is added one by one). Always inlined, so that it is compiled for the
/// instruction set [`RowDots`] runs under.
#[inline(always)]
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

    /// Applies a commit's changes to `tenant`'s vectors (`id -> Some(row)` put, as
    /// `recall::vectors::encode` writes it, `None` deleted) to the matrix cached at
    /// generation `before`, the one the commit's [`bump`] returned, which then holds the
    /// generation after. Any other cached matrix of the tenant, one a query holds, or one a
    /// change does not fit (a row that does not decode, another dimension), is dropped:
    /// the next query reloads it. Call under the forest lock, after the commit.
    pub fn apply(&self, tenant: &TenantId, before: u64, changes: &[(u64, Option<&[u8]>)]) {
        let Some((cached, mut v)) = self.tenants.take(tenant, &0) else {
            return;
        };
        let after = generation(tenant);
        if cached != before || after != before.wrapping_add(1) {
            return;
        }
        // A matrix a query is scanning is dropped rather than copied: the writer's cost
        // stays the size of its change, and the next query reloads.
        let Some(m) = Arc::get_mut(&mut v) else {
            return;
        };
        for &(id, row) in changes {
            match row.map(vectors::decode) {
                Some(Some((scale, comps))) => {
                    if !m.put(id, scale, comps) {
                        return;
                    }
                }
                Some(None) => return,
                None => m.remove(id),
            }
        }
        let bytes = v.bytes();
        self.tenants.insert(tenant, 0, (after, v), bytes);
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

    fn row(seed: u64) -> Vec<u8> {
        let v: Vec<f32> = (0..24u64)
            .map(|i| ((seed * 31 + i * 17) % 23) as f32 - 11.0)
            .collect();
        vectors::encode(&vectors::unit(&v))
    }

    fn matrix(rows: &[(u64, u64)]) -> TenantVectors {
        let mut m = TenantVectors::default();
        for &(id, seed) in rows {
            let r = row(seed);
            let (scale, comps) = vectors::decode(&r).unwrap();
            assert!(m.put(id, scale, comps));
        }
        m
    }

    #[test]
    fn a_patched_matrix_ranks_like_one_loaded_with_the_final_rows() {
        let t = TenantId::new("vector-apply-test").unwrap();
        let c = VectorCache::default();
        let cached = Arc::new(matrix(&[(1, 1), (2, 2), (3, 3), (4, 4), (5, 5)]));
        let bytes = cached.bytes();
        c.tenants.insert(&t, 0, (generation(&t), cached), bytes);
        let before = bump(&t);
        let (r2, r6) = (row(20), row(6));
        c.apply(
            &t,
            before,
            &[(1, None), (2, Some(&r2)), (3, None), (6, Some(&r6))],
        );
        let patched = c
            .tenants
            .get_valid(&t, &0, |e| e.0 == generation(&t))
            .expect("patched at the new generation")
            .1;
        let fresh = matrix(&[(2, 20), (4, 4), (5, 5), (6, 6)]);
        let q = vectors::unit(&(0..24).map(|i| (i % 5) as f32 - 2.0).collect::<Vec<_>>());
        assert_eq!(patched.nearest(&q, 10), fresh.nearest(&q, 10));
        assert_eq!(patched.bytes(), fresh.bytes());
        // A matrix a query holds is dropped, not copied.
        let before = bump(&t);
        c.apply(&t, before, &[(8, Some(&r6))]);
        assert!(c.tenants.get(&t, &0).is_none());
        drop(patched);
        let cached = Arc::new(fresh);
        let bytes = cached.bytes();
        c.tenants.insert(&t, 0, (generation(&t), cached), bytes);
        // A row of another dimension cannot be patched in: the matrix is dropped.
        let before = bump(&t);
        c.apply(&t, before, &[(7, Some(&vectors::encode(&[1.0, 0.0])))]);
        assert!(c.tenants.get(&t, &0).is_none());
    }
}
