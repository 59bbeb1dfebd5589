//! The little dense linear algebra the corpus embedder needs: row-major
//! matrices, CholeskyQR2 orthonormalization and a Jacobi eigensolver for
//! small symmetric matrices.

use rayon::prelude::*;

/// Gram matrix `Yᵀ Y` of a row-major `rows × cols` matrix.
pub fn gram(y: &[f32], cols: usize) -> Vec<f64> {
    let partial = y
        .par_chunks(cols * 1024)
        .map(|block| {
            let mut g = vec![0f64; cols * cols];
            for row in block.chunks_exact(cols) {
                for i in 0..cols {
                    let a = f64::from(row[i]);
                    if a == 0.0 {
                        continue;
                    }
                    let gi = &mut g[i * cols..(i + 1) * cols];
                    for j in i..cols {
                        gi[j] += a * f64::from(row[j]);
                    }
                }
            }
            g
        })
        .reduce(
            || vec![0f64; cols * cols],
            |mut a, b| {
                a.iter_mut().zip(b).for_each(|(x, y)| *x += y);
                a
            },
        );
    let mut g = partial;
    for i in 0..cols {
        for j in 0..i {
            g[i * cols + j] = g[j * cols + i];
        }
    }
    g
}

/// Upper Cholesky factor `R` (`G = Rᵀ R`), with a small ridge for
/// rank-deficient input.
fn cholesky(g: &[f64], n: usize) -> Vec<f64> {
    let mut r = vec![0f64; n * n];
    let trace: f64 = (0..n).map(|i| g[i * n + i]).sum::<f64>().max(1e-30);
    let ridge = 1e-10 * trace / n as f64;
    for j in 0..n {
        let mut d = g[j * n + j] + ridge;
        for k in 0..j {
            d -= r[k * n + j] * r[k * n + j];
        }
        let d = d.max(ridge).sqrt();
        r[j * n + j] = d;
        for i in j + 1..n {
            let mut s = g[j * n + i];
            for k in 0..j {
                s -= r[k * n + j] * r[k * n + i];
            }
            r[j * n + i] = s / d;
        }
    }
    r
}

/// `Y R⁻¹` in place, for upper-triangular `R`.
fn solve_upper_right(y: &mut [f32], cols: usize, r: &[f64]) {
    y.par_chunks_mut(cols).for_each(|row| {
        let mut x = vec![0f64; cols];
        for j in 0..cols {
            let mut s = f64::from(row[j]);
            for k in 0..j {
                s -= x[k] * r[k * cols + j];
            }
            x[j] = s / r[j * cols + j];
        }
        for (o, v) in row.iter_mut().zip(x) {
            *o = v as f32;
        }
    });
}

/// Orthonormalizes the columns of a row-major matrix (CholeskyQR, twice for
/// accuracy).
pub fn orthonormalize(y: &mut [f32], cols: usize) {
    for _ in 0..2 {
        let g = gram(y, cols);
        let r = cholesky(&g, cols);
        solve_upper_right(y, cols, &r);
    }
}

/// Eigenvalues (descending) and eigenvectors (columns of a row-major
/// matrix) of a symmetric `n × n` matrix, by cyclic Jacobi rotations.
pub fn symmetric_eigen(a: &[f64], n: usize) -> (Vec<f64>, Vec<f64>) {
    let mut m = a.to_vec();
    let mut v = vec![0f64; n * n];
    for i in 0..n {
        v[i * n + i] = 1.0;
    }
    for _sweep in 0..60 {
        let off: f64 = (0..n)
            .flat_map(|i| (0..n).filter(move |&j| j != i).map(move |j| (i, j)))
            .map(|(i, j)| m[i * n + j].powi(2))
            .sum();
        let scale: f64 = (0..n).map(|i| m[i * n + i].powi(2)).sum::<f64>().max(1e-300);
        if off <= 1e-22 * scale {
            break;
        }
        for p in 0..n {
            for q in p + 1..n {
                let apq = m[p * n + q];
                if apq.abs() < 1e-300 {
                    continue;
                }
                let theta = (m[q * n + q] - m[p * n + p]) / (2.0 * apq);
                let t = theta.signum() / (theta.abs() + (theta * theta + 1.0).sqrt());
                let t = if theta == 0.0 { 1.0 } else { t };
                let c = 1.0 / (t * t + 1.0).sqrt();
                let s = t * c;
                for k in 0..n {
                    let mkp = m[k * n + p];
                    let mkq = m[k * n + q];
                    m[k * n + p] = c * mkp - s * mkq;
                    m[k * n + q] = s * mkp + c * mkq;
                }
                for k in 0..n {
                    let mpk = m[p * n + k];
                    let mqk = m[q * n + k];
                    m[p * n + k] = c * mpk - s * mqk;
                    m[q * n + k] = s * mpk + c * mqk;
                }
                for k in 0..n {
                    let vkp = v[k * n + p];
                    let vkq = v[k * n + q];
                    v[k * n + p] = c * vkp - s * vkq;
                    v[k * n + q] = s * vkp + c * vkq;
                }
            }
        }
    }
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&a, &b| m[b * n + b].total_cmp(&m[a * n + a]));
    let values = order.iter().map(|&i| m[i * n + i]).collect();
    let mut vectors = vec![0f64; n * n];
    for (new, &old) in order.iter().enumerate() {
        for k in 0..n {
            vectors[k * n + new] = v[k * n + old];
        }
    }
    (values, vectors)
}

/// Deterministic random signs (±1): a test matrix for the randomized SVD
/// as good as a Gaussian one, without transcendental functions.
pub fn random_signs(n: usize, seed: u64) -> Vec<f32> {
    let mut s = seed.max(1);
    let mut out = Vec::with_capacity(n);
    while out.len() < n {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        for bit in 0..64.min(n - out.len()) {
            out.push(if s >> bit & 1 == 1 { 1.0 } else { -1.0 });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn orthonormal_columns() {
        let cols = 5;
        let mut y = random_signs(200 * cols, 3);
        orthonormalize(&mut y, cols);
        let g = gram(&y, cols);
        for i in 0..cols {
            for j in 0..cols {
                let expect = if i == j { 1.0 } else { 0.0 };
                assert!((g[i * cols + j] - expect).abs() < 1e-4, "{i},{j}: {}", g[i * cols + j]);
            }
        }
    }

    #[test]
    fn eigen_of_a_known_matrix() {
        // [[2,1],[1,2]] has eigenvalues 3 and 1.
        let (vals, vecs) = symmetric_eigen(&[2.0, 1.0, 1.0, 2.0], 2);
        assert!((vals[0] - 3.0).abs() < 1e-9 && (vals[1] - 1.0).abs() < 1e-9);
        assert!((vecs[0].abs() - std::f64::consts::FRAC_1_SQRT_2).abs() < 1e-9);
    }
}
