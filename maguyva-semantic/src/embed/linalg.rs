//! The little dense linear algebra the corpus embedder needs: row-major
//! matrices, Gram matrices, CholeskyQR2 orthonormalization, an eigensolver
//! for small symmetric matrices (Householder tridiagonalization, then the
//! implicit QL method) and deterministic random signs.

use rayon::prelude::*;

/// Gram matrix `Yᵀ Y` of a row-major `rows × cols` matrix.
pub fn gram(y: &[f32], cols: usize) -> Vec<f64> {
    if cols == 0 {
        return Vec::new();
    }
    // Rows are taken four at a time, widened to f64 once: each update of
    // the upper triangle then does four products per load and store of
    // `G`, which is what bounds this loop.
    let partial = y
        .par_chunks(cols * 1024)
        .map(|block| {
            let mut g = vec![0f64; cols * cols];
            let mut wide = vec![0f64; 4 * cols];
            let mut quads = block.chunks_exact(4 * cols);
            for quad in &mut quads {
                wide.iter_mut().zip(quad).for_each(|(w, &x)| *w = f64::from(x));
                let (r0, rest) = wide.split_at(cols);
                let (r1, rest) = rest.split_at(cols);
                let (r2, r3) = rest.split_at(cols);
                for i in 0..cols {
                    let (a0, a1, a2, a3) = (r0[i], r1[i], r2[i], r3[i]);
                    if a0 == 0.0 && a1 == 0.0 && a2 == 0.0 && a3 == 0.0 {
                        continue;
                    }
                    let gi = &mut g[i * cols + i..(i + 1) * cols];
                    let rows = r0[i..].iter().zip(&r1[i..]).zip(&r2[i..]).zip(&r3[i..]);
                    for (gij, (((b0, b1), b2), b3)) in gi.iter_mut().zip(rows) {
                        *gij += a0 * b0 + a1 * b1 + a2 * b2 + a3 * b3;
                    }
                }
            }
            for row in quads.remainder().chunks_exact(cols) {
                for i in 0..cols {
                    let a = f64::from(row[i]);
                    if a == 0.0 {
                        continue;
                    }
                    let gi = &mut g[i * cols + i..(i + 1) * cols];
                    for (gij, &b) in gi.iter_mut().zip(&row[i..]) {
                        *gij += a * f64::from(b);
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

/// The inverse of upper-triangular `R`, itself upper triangular.
fn invert_upper(r: &[f64], n: usize) -> Vec<f64> {
    let mut inv = vec![0f64; n * n];
    // Column j of the inverse solves R x = e_j, bottom up.
    for j in 0..n {
        inv[j * n + j] = 1.0 / r[j * n + j];
        for i in (0..j).rev() {
            let s: f64 = (i + 1..=j).map(|k| r[i * n + k] * inv[k * n + j]).sum();
            inv[i * n + j] = -s / r[i * n + i];
        }
    }
    inv
}

/// `Y R⁻¹` in place, for upper-triangular `R`: each row times the inverse,
/// row by row of the inverse so that every inner loop reads memory in
/// order.
fn solve_upper_right(y: &mut [f32], cols: usize, r: &[f64]) {
    let inv = invert_upper(r, cols);
    y.par_chunks_mut(cols).for_each_init(
        || vec![0f64; cols],
        |x, row| {
            x.iter_mut().for_each(|v| *v = 0.0);
            for (k, &yk) in row.iter().enumerate() {
                let a = f64::from(yk);
                if a == 0.0 {
                    continue;
                }
                let inv_k = &inv[k * cols + k..(k + 1) * cols];
                for (o, &b) in x[k..].iter_mut().zip(inv_k) {
                    *o += a * b;
                }
            }
            for (o, &v) in row.iter_mut().zip(x.iter()) {
                *o = v as f32;
            }
        },
    );
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
/// matrix) of a symmetric `n × n` matrix: Householder reduction to
/// tridiagonal form, then the implicit QL method (the EISPACK `tred2` and
/// `tql2` procedures). O(n³) with a small constant: at the randomized SVD's
/// size (138) it takes about a millisecond, where cyclic Jacobi rotations
/// took a third of a small repository's index time.
///
/// Kept rather than a linear algebra crate, for a measured reason: on a
/// 138 × 138 Gram matrix, nalgebra 0.34's `symmetric_eigen` took 4.0 ms
/// where this took 8.9 ms (both on a loaded 2-core machine: a few
/// milliseconds of an index build), but its eigenvalues differ from these
/// in the last bits (relative 1e-14), so every corpus model, and with it
/// the order of files that tie, would move with no gain in quality; and it
/// brings 12 crates (simba, wide, matrixmultiply, num-complex ...) and about
/// 9 s of a clean build on 2 cores.
pub fn symmetric_eigen(a: &[f64], n: usize) -> (Vec<f64>, Vec<f64>) {
    if n == 0 {
        return (Vec::new(), Vec::new());
    }
    let mut v: Vec<f64> = a[..n * n].to_vec();
    let mut d = vec![0f64; n];
    let mut e = vec![0f64; n];
    tridiagonalize(&mut v, &mut d, &mut e, n);
    tridiagonal_ql(&mut v, &mut d, &mut e, n);
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&x, &y| d[y].total_cmp(&d[x]));
    let values = order.iter().map(|&i| d[i]).collect();
    let mut vectors = vec![0f64; n * n];
    for (new, &old) in order.iter().enumerate() {
        for k in 0..n {
            vectors[k * n + new] = v[k * n + old];
        }
    }
    (values, vectors)
}

/// Householder reduction of the symmetric matrix in `v` to tridiagonal
/// form: `d` gets the diagonal, `e` the subdiagonal (in `e[1..]`), and `v`
/// the accumulated orthogonal transformation.
fn tridiagonalize(v: &mut [f64], d: &mut [f64], e: &mut [f64], n: usize) {
    let at = |i: usize, j: usize| i * n + j;
    for j in 0..n {
        d[j] = v[at(n - 1, j)];
    }
    for i in (1..n).rev() {
        let scale: f64 = d[..i].iter().map(|x| x.abs()).sum();
        let mut h = 0.0;
        if scale == 0.0 {
            e[i] = d[i - 1];
            for j in 0..i {
                d[j] = v[at(i - 1, j)];
                v[at(i, j)] = 0.0;
                v[at(j, i)] = 0.0;
            }
        } else {
            for x in d[..i].iter_mut() {
                *x /= scale;
                h += *x * *x;
            }
            let f = d[i - 1];
            let g = if f > 0.0 { -h.sqrt() } else { h.sqrt() };
            e[i] = scale * g;
            h -= f * g;
            d[i - 1] = f - g;
            e[..i].iter_mut().for_each(|x| *x = 0.0);
            for j in 0..i {
                let f = d[j];
                v[at(j, i)] = f;
                let mut g = e[j] + v[at(j, j)] * f;
                for k in j + 1..i {
                    g += v[at(k, j)] * d[k];
                    e[k] += v[at(k, j)] * f;
                }
                e[j] = g;
            }
            let mut f = 0.0;
            for j in 0..i {
                e[j] /= h;
                f += e[j] * d[j];
            }
            let hh = f / (h + h);
            for j in 0..i {
                e[j] -= hh * d[j];
            }
            for j in 0..i {
                let (f, g) = (d[j], e[j]);
                for k in j..i {
                    v[at(k, j)] -= f * e[k] + g * d[k];
                }
                d[j] = v[at(i - 1, j)];
                v[at(i, j)] = 0.0;
            }
        }
        d[i] = h;
    }
    for i in 0..n - 1 {
        v[at(n - 1, i)] = v[at(i, i)];
        v[at(i, i)] = 1.0;
        let h = d[i + 1];
        if h != 0.0 {
            for k in 0..=i {
                d[k] = v[at(k, i + 1)] / h;
            }
            for j in 0..=i {
                let g: f64 = (0..=i).map(|k| v[at(k, i + 1)] * v[at(k, j)]).sum();
                for k in 0..=i {
                    v[at(k, j)] -= g * d[k];
                }
            }
        }
        for k in 0..=i {
            v[at(k, i + 1)] = 0.0;
        }
    }
    for j in 0..n {
        d[j] = v[at(n - 1, j)];
        v[at(n - 1, j)] = 0.0;
    }
    v[at(n - 1, n - 1)] = 1.0;
    e[0] = 0.0;
}

/// Eigenvalues (into `d`) and eigenvectors (into `v`) of the tridiagonal
/// matrix left by [`tridiagonalize`], by the implicit QL method.
fn tridiagonal_ql(v: &mut [f64], d: &mut [f64], e: &mut [f64], n: usize) {
    /// Non-finite input must not spin forever.
    const MAX_ITERATIONS: usize = 64;
    let at = |i: usize, j: usize| i * n + j;
    for i in 1..n {
        e[i - 1] = e[i];
    }
    e[n - 1] = 0.0;
    let mut f = 0.0;
    let mut tst1: f64 = 0.0;
    let eps = f64::EPSILON;
    for l in 0..n {
        tst1 = tst1.max(d[l].abs() + e[l].abs());
        let mut m = l;
        while m < n - 1 && e[m].abs() > eps * tst1 {
            m += 1;
        }
        if m > l {
            for _ in 0..MAX_ITERATIONS {
                let g = d[l];
                let mut p = (d[l + 1] - g) / (2.0 * e[l]);
                let mut r = p.hypot(1.0);
                if p < 0.0 {
                    r = -r;
                }
                d[l] = e[l] / (p + r);
                d[l + 1] = e[l] * (p + r);
                let dl1 = d[l + 1];
                let h = g - d[l];
                for x in d[l + 2..n].iter_mut() {
                    *x -= h;
                }
                f += h;
                p = d[m];
                let (mut c, mut c2, mut c3) = (1.0, 1.0, 1.0);
                let el1 = e[l + 1];
                let (mut s, mut s2) = (0.0, 0.0);
                for i in (l..m).rev() {
                    c3 = c2;
                    c2 = c;
                    s2 = s;
                    let g = c * e[i];
                    let h = c * p;
                    r = p.hypot(e[i]);
                    e[i + 1] = s * r;
                    s = e[i] / r;
                    c = p / r;
                    p = c * d[i] - s * g;
                    d[i + 1] = h + s * (c * g + s * d[i]);
                    for k in 0..n {
                        let h = v[at(k, i + 1)];
                        v[at(k, i + 1)] = s * v[at(k, i)] + c * h;
                        v[at(k, i)] = c * v[at(k, i)] - s * h;
                    }
                }
                p = -s * s2 * c3 * el1 * e[l] / dl1;
                e[l] = s * p;
                d[l] = c * p;
                // Written so that NaN also stops: it compares false.
                let converged = !matches!(
                    e[l].abs().partial_cmp(&(eps * tst1)),
                    Some(std::cmp::Ordering::Greater)
                );
                if converged {
                    break;
                }
            }
        }
        d[l] += f;
        e[l] = 0.0;
    }
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
    fn gram_equals_the_plain_products() {
        // Rows over one block and not a multiple of four, some all zero.
        let cols = 7;
        let mut y = random_signs(1031 * cols, 5);
        y[3 * cols..6 * cols].iter_mut().for_each(|x| *x = 0.0);
        let g = gram(&y, cols);
        for i in 0..cols {
            for j in 0..cols {
                let plain: f64 =
                    y.chunks(cols).map(|r| f64::from(r[i]) * f64::from(r[j])).sum::<f64>();
                assert!((g[i * cols + j] - plain).abs() < 1e-9, "{i},{j}");
            }
        }
        assert!(gram(&[], 0).is_empty());
    }

    #[test]
    fn upper_inverse_undoes_the_factor() {
        let n = 9;
        let mut r = vec![0f64; n * n];
        for (k, x) in random_signs(n * n, 2).into_iter().enumerate() {
            let (i, j) = (k / n, k % n);
            if j >= i {
                r[k] = f64::from(x) + if i == j { 4.0 } else { 0.0 };
            }
        }
        let inv = invert_upper(&r, n);
        for i in 0..n {
            for j in 0..n {
                let p: f64 = (0..n).map(|k| r[i * n + k] * inv[k * n + j]).sum();
                assert!((p - if i == j { 1.0 } else { 0.0 }).abs() < 1e-12, "{i},{j}");
            }
        }
    }

    #[test]
    fn eigen_decomposes_a_random_symmetric_matrix() {
        let n = 40;
        let r = random_signs(n * n, 11);
        // A = Rᵀ R / n is symmetric and positive semi-definite.
        let mut a = vec![0f64; n * n];
        for i in 0..n {
            for j in 0..n {
                a[i * n + j] =
                    (0..n).map(|k| f64::from(r[k * n + i] * r[k * n + j])).sum::<f64>() / n as f64;
            }
        }
        let (vals, vecs) = symmetric_eigen(&a, n);
        assert!(vals.windows(2).all(|w| w[0] >= w[1]), "descending");
        for (c, &lambda) in vals.iter().enumerate() {
            for i in 0..n {
                let av: f64 = (0..n).map(|k| a[i * n + k] * vecs[k * n + c]).sum();
                assert!((av - lambda * vecs[i * n + c]).abs() < 1e-9, "A v = λ v");
            }
            let norm: f64 = (0..n).map(|k| vecs[k * n + c].powi(2)).sum();
            assert!((norm - 1.0).abs() < 1e-9);
        }
        assert_eq!(symmetric_eigen(&[], 0).0.len(), 0);
        assert_eq!(symmetric_eigen(&[5.0], 1), (vec![5.0], vec![1.0]));
    }

    #[test]
    fn eigen_of_a_known_matrix() {
        // [[2,1],[1,2]] has eigenvalues 3 and 1.
        let (vals, vecs) = symmetric_eigen(&[2.0, 1.0, 1.0, 2.0], 2);
        assert!((vals[0] - 3.0).abs() < 1e-9 && (vals[1] - 1.0).abs() < 1e-9);
        assert!((vecs[0].abs() - std::f64::consts::FRAC_1_SQRT_2).abs() < 1e-9);
    }
}
