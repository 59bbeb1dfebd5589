//! `maguyva eval` on a benchmark made of the fixture repositories: the
//! metrics, named rankings, several benchmarks at once, and `--tune`.

use crate::util::{LANGUAGES, Repo};
use std::path::Path;

/// A benchmark over the fixtures, in the format `eval` reads, with a
/// checkout folder holding one copy per fixture.
pub(crate) struct FixtureBench {
    dir: Repo,
}

impl FixtureBench {
    pub(crate) fn new() -> FixtureBench {
        let dir = Repo::empty();
        let mut repos = Vec::new();
        for (lang, cart, pricing, inventory) in LANGUAGES {
            let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(lang);
            copy(&src, &dir.path().join("checkouts").join(lang));
            repos.push(serde_json::json!({
                "name": lang, "language": lang, "url": "", "revision": "", "benchmark_root": "."
            }));
            let tasks = serde_json::json!([
                {"query": "add units of a product to the warehouse stock", "relevant": [inventory],
                 "secondary": [], "category": "semantic"},
                {"query": "how discounts change the price of an order", "relevant": [pricing],
                 "secondary": [], "category": "architecture"},
                {"query": "the shopping cart holding items", "relevant": [cart],
                 "secondary": [], "category": "semantic"},
            ]);
            dir.write(&format!("bench/annotations/{lang}.json"), tasks.to_string());
        }
        dir.write("bench/repos.json", serde_json::Value::Array(repos).to_string());
        FixtureBench { dir }
    }

    pub(crate) fn path(&self, rel: &str) -> String {
        self.dir.path().join(rel).display().to_string()
    }

    pub(crate) fn eval(&self, extra: &[&str]) -> crate::util::Run {
        let (bench, checkouts, index) =
            (self.path("bench"), self.path("checkouts"), self.path("index"));
        let mut args = vec![
            "eval",
            "--bench",
            &bench,
            "--checkouts",
            &checkouts,
            "--index-root",
            &index,
            "--reuse",
        ];
        args.extend_from_slice(extra);
        self.dir.run(&args)
    }
}

fn copy(src: &Path, dst: &Path) {
    std::fs::create_dir_all(dst).unwrap();
    for entry in std::fs::read_dir(src).unwrap() {
        let entry = entry.unwrap();
        let to = dst.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy(&entry.path(), &to);
        } else {
            std::fs::copy(entry.path(), &to).unwrap();
        }
    }
}

fn overall_ndcg(report: &serde_json::Value) -> f64 {
    report["overall"]["ndcg"].as_f64().expect("overall ndcg")
}

#[test]
fn eval_scores_every_fixture_and_names_rankings() {
    let bench = FixtureBench::new();
    let run = bench.eval(&["--json"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let report: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(report["repos"].as_array().unwrap().len(), LANGUAGES.len());
    assert_eq!(report["queries"].as_array().unwrap().len(), 3 * LANGUAGES.len());
    let ndcg = overall_ndcg(&report);
    assert!(ndcg > 0.5 && ndcg <= 1.0, "fixture queries are easy: {ndcg}");

    let seed = bench.eval(&["--json", "--ranking", "seed"]);
    assert_eq!(seed.code, 0, "{}", seed.stderr);
    let seed: serde_json::Value = serde_json::from_str(&seed.stdout).unwrap();
    assert!(overall_ndcg(&seed) > 0.0);

    let bad = bench.eval(&["--ranking", "no-such-ranking.json"]);
    assert_eq!(bad.code, 2);
    assert!(bad.stderr.contains("no-such-ranking.json"), "{}", bad.stderr);
}

#[test]
fn eval_sets_embedders_side_by_side() {
    let bench = FixtureBench::new();
    let both = ["--embedder", "corpus", "--embedder", "corpus:16"];
    let run = bench.eval(&[&both[..], &["--json"]].concat());
    assert_eq!(run.code, 0, "{}", run.stderr);
    let reports: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    let reports = reports.as_array().unwrap();
    let names: Vec<&str> = reports.iter().map(|r| r["embedder"].as_str().unwrap()).collect();
    assert_eq!(names, ["corpus:128", "corpus:16"]);
    for r in reports {
        for variant in ["semantic", "preset"] {
            assert_eq!(r[variant]["repos"].as_array().unwrap().len(), LANGUAGES.len());
            let ndcg = overall_ndcg(&r[variant]);
            assert!((0.0..=1.0).contains(&ndcg), "{variant}: {ndcg}");
        }
        assert!(overall_ndcg(&r["preset"]) > 0.5);
    }
    // Each embedder has an index of its own.
    for folder in ["corpus_128", "corpus_16"] {
        assert!(Path::new(&bench.path("index")).join(folder).is_dir(), "{folder}");
    }

    let table = bench.eval(&both);
    assert_eq!(table.code, 0, "{}", table.stderr);
    for line in ["[1] corpus:128", "[2] corpus:16", "by category", "by language", "index time"] {
        assert!(table.stdout.contains(line), "{line}: {}", table.stdout);
    }
    let bad = bench.eval(&[&both[..], &["--modality", "text"]].concat());
    assert_eq!(bad.code, 2);
    assert!(bad.stderr.contains("--modality"), "{}", bad.stderr);
}

#[test]
fn eval_reports_how_often_nonsense_finds_nothing() {
    let bench = FixtureBench::new();
    // Two made-up queries, and one every fixture answers (a name it defines).
    bench
        .dir
        .write("nonsense.txt", "qqqxyzzy_nonexistent_name\nflux capacitor overdrive\n\nCart\n");
    let nonsense = bench.path("nonsense.txt");
    let run = bench.eval(&["--json", "--nonsense", &nonsense]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let report: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    let rate = report["nonsense_empty_rate"].as_f64().unwrap();
    assert!((rate - 2.0 / 3.0).abs() < 1e-9, "{rate}");
    let answered = report["nonsense_answered"].as_array().unwrap();
    assert_eq!(answered.len(), LANGUAGES.len());
    assert!(answered.iter().all(|a| a[1] == "Cart"));
    for repo in report["repos"].as_array().unwrap() {
        assert_eq!(repo["nonsense_empty"], 2);
    }
    let text = bench.eval(&["--nonsense", &nonsense]);
    assert!(text.stdout.contains("nonsense queries with no result: 66.7%"), "{}", text.stdout);
}

#[test]
fn eval_reports_each_benchmark_of_several() {
    let bench = FixtureBench::new();
    let second = bench.path("bench");
    let run = bench.eval(&["--bench", &second]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.stdout.matches("overall (mean over repositories)").count(), 2, "{}", run.stdout);
}

#[test]
fn tune_learns_a_ranking_that_search_and_eval_accept() {
    let bench = FixtureBench::new();
    let out = bench.path("learned.json");
    let run = bench.eval(&["--tune", "--folds", "2", "--out", &out, "--json"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let report: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    // Coordinate ascent starts from the seed and only ever accepts gains.
    let seed = report["cv_seed"][0]["all"].as_f64().unwrap();
    let objective = report["train_objective"].as_f64().unwrap();
    assert!(objective >= seed - 1e-9, "learned {objective} below the seed's {seed}");
    let learned: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert_eq!(learned, report["learned"]);

    let again = bench.eval(&["--ranking", &out, "--json"]);
    assert_eq!(again.code, 0, "{}", again.stderr);
    let repo = Repo::fixture("python");
    let search = repo.run(&["search", "cart", "--ranking", &out]);
    assert_eq!(search.code, 0, "{}", search.stderr);
}

#[test]
fn eval_measures_what_answers_cost_in_tokens_beside_a_peer() {
    let bench = FixtureBench::new();
    // A peer that answers every query with its labelled file's first three
    // lines, then a file no query wants.
    let mut lines = String::new();
    for (lang, cart, pricing, inventory) in LANGUAGES {
        for (query, file) in [
            ("add units of a product to the warehouse stock", inventory),
            ("how discounts change the price of an order", pricing),
            ("the shopping cart holding items", cart),
        ] {
            let line = serde_json::json!({"repo": lang, "query": query, "results": [
                {"path": file, "start_line": 1, "end_line": 3},
                {"path": "missing.txt", "start_line": 1, "end_line": 9},
            ]});
            lines.push_str(&format!("{line}\n"));
        }
    }
    let peer = bench.dir.write("peer.jsonl", lines);
    let peer = peer.display().to_string();
    let run = bench.eval(&["--json", "--tokens", "--max-tokens", "1000", "--peer-answers", &peer]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let report: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    let tokens = report["tokens"].as_array().unwrap();
    assert_eq!(tokens.len(), 2);
    assert_eq!(tokens[0]["system"], "maguyva");
    assert_eq!(tokens[1]["system"], "peer");
    let ours = &tokens[0]["overall"];
    assert_eq!(ours["queries"], 3 * LANGUAGES.len());
    let recall: Vec<f64> =
        ours["recall"].as_array().unwrap().iter().map(|r| r.as_f64().unwrap()).collect();
    assert!(recall.windows(2).all(|w| w[0] <= w[1]), "recall grows with the budget: {recall:?}");
    assert!(recall[4] > 0.9, "{recall:?}");
    assert!(ours["packed"].as_f64().unwrap() > 0.9, "{ours}");
    let theirs = &tokens[1]["overall"];
    assert_eq!(theirs["recall"][0], 1.0, "{theirs}");
    assert!(theirs["first_mean"].as_f64().unwrap() < 100.0, "{theirs}");
    assert!(theirs.get("packed").is_none());
    for q in report["queries"].as_array().unwrap() {
        let (total, first) = (q["tokens"]["total"].as_u64(), q["tokens"]["first"].as_u64());
        assert!(first == Some(32_000) || total >= first, "{q}");
    }
    let text = bench.eval(&["--tokens", "--peer-answers", &peer]);
    assert!(text.stdout.contains("tokens (cl100k_base"), "{}", text.stdout);
    assert!(text.stdout.contains("  by language"), "{}", text.stdout);
    // A peer file that is not one is an error that names the line.
    bench.dir.write("bad.jsonl", "{\"repo\": 1}\n");
    let bad = bench.path("bad.jsonl");
    let run = bench.eval(&["--tokens", "--peer-answers", &bad]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(run.stderr.contains("bad.jsonl:1"), "{}", run.stderr);
}
