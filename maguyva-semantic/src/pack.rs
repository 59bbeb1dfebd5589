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

/// Seed of the projection's random signs, fixed so that an index and its
/// queries agree.
const PROJECTION_SEED: u64 = 0x51_6D_48_61_73_68_00_02;

/// A random projection to `bits` sign bits (SimHash): bit `b` is the sign
/// of `v - center` along a fixed random direction. With more bits than
/// dimensions, Hamming distance tracks the angle more finely than one sign
/// per dimension does. The directions come in rounds of `P` (the
/// dimensions rounded up to a power of two), each a random rotation made
/// of two Walsh-Hadamard transforms, each after random sign flips: a round
/// costs `2 P log2 P` additions where a dense random matrix costs `P * P`
/// multiplications, which at 384 dimensions and 1,536 bits made packing
/// most of the time an index spent embedding.
#[derive(Debug, Clone)]
pub struct Projection {
    dim: usize,
    bits: usize,
    /// Dimensions padded to a power of two.
    padded: usize,
    /// Per round, two vectors of `padded` random signs.
    signs: Vec<f32>,
}

impl Projection {
    /// The projection of `dim`-dimensional vectors to `bits` bits.
    pub fn new(dim: usize, bits: usize) -> Projection {
        let padded = dim.max(1).next_power_of_two();
        let rounds = bits.div_ceil(padded);
        Projection { dim, bits, padded, signs: random_signs(rounds * 2 * padded, PROJECTION_SEED) }
    }

    /// The packed code of `v`.
    pub fn pack(&self, v: &[f32], center: &[f32]) -> Vec<u64> {
        let mut out = vec![0u64; words_for(self.bits)];
        let mut buf = vec![0f32; self.padded];
        self.pack_into(v, center, &mut buf, &mut out);
        out
    }

    fn pack_into(&self, v: &[f32], center: &[f32], buf: &mut [f32], out: &mut [u64]) {
        let p = self.padded;
        for (round, signs) in self.signs.chunks_exact(2 * p).enumerate() {
            let (first, second) = signs.split_at(p);
            buf.iter_mut().for_each(|x| *x = 0.0);
            for (i, (b, &x)) in buf.iter_mut().zip(v).take(self.dim).enumerate() {
                *b = (x - center.get(i).copied().unwrap_or(0.0)) * first[i];
            }
            walsh_hadamard(buf);
            buf.iter_mut().zip(second).for_each(|(x, &s)| *x *= s);
            walsh_hadamard(buf);
            for (k, &x) in buf.iter().enumerate() {
                let b = round * p + k;
                if b >= self.bits {
                    break;
                }
                if x > 0.0 {
                    out[b / 64] |= 1 << (b % 64);
                }
            }
        }
    }

    /// The packed codes of consecutive `dim`-long rows, one after another.
    pub fn pack_rows(&self, rows: &[f32], center: &[f32]) -> Vec<u64> {
        let words = words_for(self.bits);
        let dim = self.dim.max(1);
        let mut out = vec![0u64; rows.len() / dim * words];
        let mut buf = vec![0f32; self.padded];
        for (row, code) in rows.chunks_exact(dim).zip(out.chunks_exact_mut(words.max(1))) {
            self.pack_into(row, center, &mut buf, code);
        }
        out
    }
}

/// The unnormalized Walsh-Hadamard transform of `v` (its length a power of
/// two), in place.
fn walsh_hadamard(v: &mut [f32]) {
    let mut h = 1;
    while h < v.len() {
        for block in v.chunks_exact_mut(2 * h) {
            let (a, b) = block.split_at_mut(h);
            for (x, y) in a.iter_mut().zip(b.iter_mut()) {
                let (s, d) = (*x + *y, *x - *y);
                *x = s;
                *y = d;
            }
        }
        h *= 2;
    }
}

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

/// The Euclidean length of `v`.
pub fn norm(v: &[f32]) -> f32 {
    v.iter().map(|x| x * x).sum::<f32>().sqrt()
}

/// Lanes of the partial sums in [`cosine_int8_normed`].
const LANES: usize = 8;

/// Cosine similarity of a full-precision query `q`, of norm `qn`, and an
/// int8 vector of scale `scale`. The scale cancels out of the cosine, so
/// the bytes are used as they are, and the sums run in [`LANES`]
/// independent lanes, which the compiler turns into vector instructions: a
/// scan of every int8 vector of an index is this loop (the `semantic_scan`
/// bench: 4.9 times faster than one running sum).
pub fn cosine_int8_normed(q: &[f32], qn: f32, scale: f32, v: &[i8]) -> f32 {
    let (mut dot, mut norm) = ([0f32; LANES], [0i32; LANES]);
    let (qc, vc) = (q.chunks_exact(LANES), v.chunks_exact(LANES));
    let (qr, vr) = (qc.remainder(), vc.remainder());
    for (a, b) in qc.zip(vc) {
        for k in 0..LANES {
            dot[k] += a[k] * f32::from(b[k]);
            norm[k] += i32::from(b[k]) * i32::from(b[k]);
        }
    }
    let mut dot: f32 = dot.iter().sum();
    let mut norm: i32 = norm.iter().sum();
    for (&a, &b) in qr.iter().zip(vr) {
        dot += a * f32::from(b);
        norm += i32::from(b) * i32::from(b);
    }
    if norm == 0 || qn == 0.0 || scale == 0.0 { 0.0 } else { dot / ((norm as f32).sqrt() * qn) }
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
        assert_eq!(p.bits, 512);
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
    fn the_transform_is_a_scaled_rotation() {
        let mut v = [1.0, 0.0, 0.0, 0.0];
        walsh_hadamard(&mut v);
        assert_eq!(v, [1.0; 4]);
        let mut w = [0.5, -1.0, 2.0, 0.25, 0.0, 3.0, -0.5, 1.0];
        let norm = |x: &[f32]| x.iter().map(|a| a * a).sum::<f32>();
        let before = norm(&w);
        walsh_hadamard(&mut w);
        assert!((norm(&w) - 8.0 * before).abs() < 1e-3);
    }

    #[test]
    fn int8_keeps_the_direction() {
        let v = [0.3, -0.6, 0.9, 0.01];
        let (s, q) = to_int8(&v);
        assert!(cosine_int8_normed(&v, norm(&v), s, &q) > 0.9999);
        assert_eq!(to_int8(&[0.0, 0.0]).0, 0.0);
    }
}
