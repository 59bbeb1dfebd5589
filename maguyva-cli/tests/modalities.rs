//! The example modality `paths` (`maguyva-cli/modalities/paths`), registered
//! with one line besides the built-in four, takes part in everything a
//! modality does: its index is built, refreshed and verified with the
//! others; asked for, it answers; given a weight by a ranking file, it is
//! fused and explained; ablations and tuning include it.

use crate::eval::FixtureBench;
use crate::util::Repo;
use serde_json::Value;

#[test]
fn a_registered_modality_answers_when_asked_and_is_built_and_verified() {
    let repo = Repo::fixture("python");
    let (run, json) = repo.search_json("pricing", &["--modality", "paths"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        (&json["modalities"], &json["fusion_strategy"]),
        (&serde_json::json!(["paths"]), &serde_json::json!("direct"))
    );
    let first = &json["results"][0];
    assert_eq!(first["path"], "shop/pricing.py", "{json}");
    assert!(first["ranks"]["paths"].is_u64(), "{first}");
    // Its file is in the index, and checked with the others.
    let verify = repo.run(&["index", "--verify", "--json"]);
    assert_eq!(verify.code, 0, "{}", verify.stderr);
    let report: Value = serde_json::from_str(&verify.stdout).unwrap();
    let names: Vec<&str> =
        report["files"].as_array().unwrap().iter().filter_map(|f| f["name"].as_str()).collect();
    assert!(names.contains(&"paths.mgv"), "{names:?}");
    // A new file is found by its name after a refresh.
    repo.write("shop/refunds.py", "def refund(order):\n    return order\n");
    let (run, json) = repo.search_json("refunds", &["--modality", "paths"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(json["results"][0]["path"], "shop/refunds.py", "{json}");
}

#[test]
fn a_ranking_file_gives_a_registered_modality_its_weight_and_parameters() {
    let repo = Repo::fixture("python");
    // Weight 0 in the seed's profiles: the default search does not run it.
    let (_, json) = repo.search_json("how discounts change the price", &[]);
    assert!(!json["modalities"].as_array().unwrap().iter().any(|m| m == "paths"), "{json}");
    let ranking = repo.write(
        "ranking.json",
        r#"{"profiles": {"understand_code": {"paths": 0.5}}, "params": {"paths": {"name_weight": 3.0}}}"#,
    );
    let ranking = ranking.to_str().unwrap();
    let (run, json) =
        repo.search_json("how discounts change the price", &["--ranking", ranking, "--explain"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(json["modalities"].as_array().unwrap().iter().any(|m| m == "paths"), "{json}");
    let explained = json["results"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|r| r["explain"]["contributions"].as_array().cloned().unwrap_or_default())
        .any(|c| c["modality"] == "paths");
    assert!(explained, "no paths contribution explained: {json}");
    // A parameter it does not take is a clear error.
    let bad = repo.write("bad.json", r#"{"params": {"paths": {"nope": 1.0}}}"#);
    let run = repo.run(&["search", "price", "--ranking", bad.to_str().unwrap()]);
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("not a parameter of paths"), "{}", run.stderr);
}

#[test]
fn ablations_and_tuning_include_a_registered_modality() {
    let bench = FixtureBench::new();
    let run = bench.eval(&["--ablate", "--json"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let report: Value = serde_json::from_str(&run.stdout).unwrap();
    let rows: Vec<&str> =
        report["ablation"].as_array().unwrap().iter().filter_map(|r| r["name"].as_str()).collect();
    assert!(rows.contains(&"paths alone") && rows.contains(&"default - paths"), "{rows:?}");
    // History weighs 0 for every question: removing it would only force another route.
    assert!(rows.contains(&"history alone") && !rows.contains(&"default - history"), "{rows:?}");
    let out = bench.path("learned.json");
    let run = bench.eval(&["--tune", "--folds", "2", "--out", &out, "--json"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let report: Value = serde_json::from_str(&run.stdout).unwrap();
    let knobs: Vec<&str> =
        report["knobs"].as_array().unwrap().iter().filter_map(|k| k.as_str()).collect();
    for knob in ["profiles.understand_code.paths", "params.paths.name_weight"] {
        assert!(knobs.contains(&knob), "{knob} not tuned: {knobs:?}");
    }
}
