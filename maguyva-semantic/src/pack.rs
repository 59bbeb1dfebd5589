//! Binary quantization: vectors are centred (the corpus mean is subtracted,
//! which balances the bits) and become sign bits packed into `u64` words,
//! either one per dimension ([`pack`]) or one per row of a fixed random
//! projection ([`Projection`], SimHash), which tracks the angle more finely.
//! Hamming distance between codes approximates the angle between vectors.

use crate::embed::linalg::random_signs;

/// Words of `bits` packed bits.
pub fn words_for(bits: usize) -> usize {
    bits.div_ceil(64)
}

/// The mean of `n` vectors of `dim` dimensions stored row after row.
pub fn mean(data: &[f32], dim: usize) -> Vec<f32> {
    let mut m = vec![0f64; dim];
    let n = data.len().checked_div(dim).unwrap_or(0);
    for row in data.chunks_exact(dim.max(1)) {
        for (a, &b) in m.iter_mut().zip(row) {
            *a += f64::from(b);
        }
    }
    m.into_iter().map(|x| (x / n.max(1) as f64) as f32).collect()
}

/// The sign bits of `v - center`, packed; bit `i` of word `i / 64` is 1 when
/// dimension `i` is above the centre.
pub fn pack(v: &[f32], center: &[f32]) -> Vec<u64> {
    let mut out = vec![0u64; words_for(v.len())];
    for (i, &x) in v.iter().enumerate() {
        let c = center.get(i).copied().unwrap_or(0.0);
        if x > c {
            out[i / 64] |= 1 << (i % 64);
        }
    }
    out
}

/// Seed of the projection rows, fixed so that an index and its queries agree.
const PROJECTION_SEED: u64 = 0x51_6D_48_61_73_68_00_01;

/// A random projection to `bits` sign bits (SimHash): bit `b` is the sign
/// of the dot product of `v - center` with a fixed random ±1 row. With more
/// bits than dimensions, Hamming distance tracks the angle more finely than
/// one sign per dimension does.
#[derive(Debug, Clone)]
pub struct Projection {
    dim: usize,
    bits: usize,
    /// The random rows, transposed: entry `i * bits + b` is row `b`'s
    /// value for dimension `i`, so that projecting adds whole rows of this
    /// matrix, in order, with no sum across lanes per bit.
    columns: Vec<f32>,
}

impl Projection {
    /// The projection of `dim`-dimensional vectors to `bits` bits.
    pub fn new(dim: usize, bits: usize) -> Projection {
        let rows = random_signs(dim * bits, PROJECTION_SEED);
        let mut columns = vec![0f32; dim * bits];
        for (b, row) in rows.chunks_exact(dim.max(1)).enumerate() {
            for (i, &x) in row.iter().enumerate() {
                columns[i * bits + b] = x;
            }
        }
        Projection { dim, bits, columns }
    }

    /// Number of output bits.
    pub fn bits(&self) -> usize {
        self.bits
    }

    /// The packed code of `v`.
    pub fn pack(&self, v: &[f32], center: &[f32]) -> Vec<u64> {
        self.pack_rows(v, center)
    }

    /// The packed codes of consecutive `dim`-long rows, one after another.
    /// Rows are projected [`ROWS_AT_ONCE`] at a time, so that the random
    /// matrix (a quarter of a megabyte at 128 dimensions) is read once per
    /// group instead of once per row.
    pub fn pack_rows(&self, rows: &[f32], center: &[f32]) -> Vec<u64> {
        let (dim, bits) = (self.dim.max(1), self.bits.max(1));
        let words = words_for(self.bits);
        let mut out = Vec::with_capacity(rows.len() / dim * words);
        let mut sums = vec![0f32; ROWS_AT_ONCE * bits];
        let mut centred = vec![0f32; ROWS_AT_ONCE * dim];
        for group in rows.chunks(ROWS_AT_ONCE * dim) {
            let n = group.len() / dim;
            for (c, (&x, i)) in centred.iter_mut().zip(group.iter().zip((0..dim).cycle())) {
                *c = x - center.get(i).copied().unwrap_or(0.0);
            }
            sums.iter_mut().for_each(|s| *s = 0.0);
            for (i, column) in self.columns.chunks_exact(bits).enumerate() {
                for (r, row_sums) in sums.chunks_exact_mut(bits).take(n).enumerate() {
                    let x = centred[r * dim + i];
                    if x != 0.0 {
                        row_sums.iter_mut().zip(column).for_each(|(s, &c)| *s += x * c);
                    }
                }
            }
            for row_sums in sums.chunks_exact(bits).take(n) {
                let start = out.len();
                out.resize(start + words, 0u64);
                for (b, &s) in row_sums.iter().enumerate().take(self.bits) {
                    if s > 0.0 {
                        out[start + b / 64] |= 1 << (b % 64);
                    }
                }
            }
        }
        out
    }
}

/// Rows projected together by [`Projection::pack_rows`].
const ROWS_AT_ONCE: usize = 8;

/// A vector stored as bytes for rescoring: each dimension scaled by the
/// vector's largest magnitude into -127..=127.
pub fn to_int8(v: &[f32]) -> (f32, Vec<i8>) {
    let max = v.iter().fold(0f32, |m, x| m.max(x.abs()));
    if max == 0.0 {
        return (0.0, vec![0; v.len()]);
    }
    let scale = max / 127.0;
    (scale, v.iter().map(|x| (x / scale).round().clamp(-127.0, 127.0) as i8).collect())
}

/// Cosine similarity of a full-precision query and an int8 vector.
pub fn cosine_int8(q: &[f32], scale: f32, v: &[i8]) -> f32 {
    let mut dot = 0f32;
    let mut norm = 0f32;
    for (&a, &b) in q.iter().zip(v) {
        let b = f32::from(b) * scale;
        dot += a * b;
        norm += b * b;
    }
    let qn: f32 = q.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm == 0.0 || qn == 0.0 { 0.0 } else { dot / (norm.sqrt() * qn) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signs_relative_to_the_centre() {
        let v = [1.0, -1.0, 0.5, 3.0];
        assert_eq!(pack(&v, &[0.0; 4]), vec![0b1101]);
        assert_eq!(pack(&v, &[2.0; 4]), vec![0b1000]);
        assert_eq!(pack(&vec![1.0; 70], &[]), vec![u64::MAX, 0b111111]);
        assert_eq!(mean(&[1.0, 2.0, 3.0, 4.0], 2), vec![2.0, 3.0]);
    }

    #[test]
    fn projected_codes_track_the_angle() {
        let p = Projection::new(8, 512);
        assert_eq!(p.bits(), 512);
        let a = [1.0, 0.2, -0.3, 0.5, 0.0, 0.1, -0.9, 0.4];
        let near = [0.9, 0.25, -0.2, 0.5, 0.1, 0.1, -0.8, 0.3];
        let far = [-0.2, 0.9, 0.6, -0.5, 0.3, -0.7, 0.2, 0.1];
        let center = [0.0; 8];
        let code = |v: &[f32]| p.pack(v, &center);
        assert_eq!(code(&a), Projection::new(8, 512).pack(&a, &center), "deterministic");
        let d = |x: &[f32], y: &[f32]| crate::scan::hamming(&code(x), &code(y));
        assert!(d(&a, &near) * 3 < d(&a, &far), "{} {}", d(&a, &near), d(&a, &far));
        // Opposite vectors differ in (almost) every bit.
        let neg: Vec<f32> = a.iter().map(|x| -x).collect();
        assert!(d(&a, &neg) > 500);
    }

    #[test]
    fn rows_packed_together_equal_rows_packed_alone() {
        let p = Projection::new(5, 130);
        let rows = crate::embed::linalg::random_signs(11 * 5, 9);
        let center = [0.1, -0.2, 0.0, 0.3, 0.05];
        let alone: Vec<u64> = rows.chunks(5).flat_map(|r| p.pack(r, &center)).collect();
        assert_eq!(p.pack_rows(&rows, &center), alone);
        assert_eq!(alone.len(), 11 * words_for(130));
    }

    #[test]
    fn int8_keeps_the_direction() {
        let v = [0.3, -0.6, 0.9, 0.01];
        let (s, q) = to_int8(&v);
        assert!(cosine_int8(&v, s, &q) > 0.9999);
        assert_eq!(to_int8(&[0.0, 0.0]).0, 0.0);
    }
}
