//! The benchmark metrics (README, "Measuring quality"), computed as follows:
//! results reduced to distinct files, top 10; a result matches a label when
//! the paths are equal or one ends with `/` plus the other; each label counts
//! once, at the rank of the first result that matches it.

use serde::Serialize;

/// NDCG, MRR and recall of one query at a cutoff.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
pub struct QueryScore {
    /// NDCG@k.
    pub ndcg: f64,
    /// MRR@k.
    pub mrr: f64,
    /// Recall@k.
    pub recall: f64,
}

/// Whether a result path and a label path name the same file.
pub fn path_matches(result: &str, label: &str) -> bool {
    let ends = |a: &str, b: &str| {
        a.len() > b.len() && a.ends_with(b) && a.as_bytes()[a.len() - b.len() - 1] == b'/'
    };
    result == label || ends(result, label) || ends(label, result)
}

/// Keeps the first occurrence of each path, in order.
pub fn distinct_files(paths: impl IntoIterator<Item = String>) -> Vec<String> {
    let mut seen = std::collections::HashSet::new();
    paths.into_iter().filter(|p| seen.insert(p.clone())).collect()
}

/// Scores ranked distinct result files against the labelled paths
/// (relevant and secondary together).
pub fn score(results: &[String], labels: &[String], k: usize) -> QueryScore {
    if labels.is_empty() {
        return QueryScore::default();
    }
    let mut counted = vec![false; labels.len()];
    let mut dcg = 0.0;
    let mut first_hit: Option<usize> = None;
    for (i, result) in results.iter().take(k).enumerate() {
        let mut gain = false;
        for (j, label) in labels.iter().enumerate() {
            if !counted[j] && path_matches(result, label) {
                counted[j] = true;
                gain = true;
            }
        }
        if gain {
            dcg += 1.0 / ((i + 2) as f64).log2();
            first_hit.get_or_insert(i + 1);
        }
    }
    let ideal: f64 = (0..labels.len().min(k)).map(|i| 1.0 / ((i + 2) as f64).log2()).sum();
    let matched = counted.iter().filter(|&&c| c).count();
    QueryScore {
        ndcg: if ideal > 0.0 { dcg / ideal } else { 0.0 },
        mrr: first_hit.map_or(0.0, |r| 1.0 / r as f64),
        recall: matched as f64 / labels.len() as f64,
    }
}

/// The `q`-quantile (0..=1) of values, by nearest rank; 0 when empty.
pub fn quantile(values: &[f64], q: f64) -> f64 {
    if values.is_empty() {
        return 0.0;
    }
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    let rank = ((q * v.len() as f64).ceil() as usize).clamp(1, v.len());
    v[rank - 1]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn suffix_matching_respects_path_components() {
        assert!(path_matches("aiohttp/client.py", "aiohttp/client.py"));
        assert!(path_matches("repo/aiohttp/client.py", "aiohttp/client.py"));
        assert!(path_matches("client.py", "aiohttp/client.py"));
        assert!(!path_matches("aiohttp/test_client.py", "client.py"));
        assert!(!path_matches("aiohttp/client.py", "aiohttp/client.pyi"));
    }

    #[test]
    fn perfect_and_empty_rankings() {
        let labels = s(&["a.rs", "b.rs"]);
        let perfect = score(&s(&["a.rs", "b.rs", "c.rs"]), &labels, 10);
        assert_eq!(perfect, QueryScore { ndcg: 1.0, mrr: 1.0, recall: 1.0 });
        assert_eq!(score(&s(&["x.rs"]), &labels, 10), QueryScore::default());
        assert_eq!(score(&[], &[], 10), QueryScore::default());
    }

    #[test]
    fn worked_example() {
        // Relevant at ranks 2 and 4 of two labels:
        // DCG = 1/log2(3) + 1/log2(5); IDCG = 1 + 1/log2(3).
        let r = score(&s(&["x", "a", "y", "b"]), &s(&["a", "b"]), 10);
        let dcg = 1.0 / 3f64.log2() + 1.0 / 5f64.log2();
        let idcg = 1.0 + 1.0 / 3f64.log2();
        assert!((r.ndcg - dcg / idcg).abs() < 1e-12);
        assert_eq!(r.mrr, 0.5);
        assert_eq!(r.recall, 1.0);
    }

    #[test]
    fn cutoff_and_label_counted_once() {
        let results: Vec<String> = (0..12).map(|i| format!("f{i}")).collect();
        let r = score(&results, &s(&["f11"]), 10);
        assert_eq!(r, QueryScore::default());
        // Two results matching one label: only the first counts.
        let r = score(&s(&["x/a.rs", "y/a.rs"]), &s(&["a.rs"]), 10);
        assert_eq!(r.ndcg, 1.0);
    }

    #[test]
    fn quantiles() {
        let v: Vec<f64> = (1..=100).map(f64::from).collect();
        assert_eq!(quantile(&v, 0.5), 50.0);
        assert_eq!(quantile(&v, 0.95), 95.0);
        assert_eq!(quantile(&[], 0.5), 0.0);
    }
}
