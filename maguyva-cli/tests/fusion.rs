use crate::util::{Repo, result_paths};
use serde_json::json;

/// Runs a JSON search and returns (intent, strategy, modalities, first path).
fn route(repo: &Repo, query: &str, extra: &[&str]) -> (String, String, serde_json::Value, String) {
    let (run, json) = repo.search_json(query, extra);
    assert!(run.code == 0 || run.code == 1, "{query}: {}", run.stderr);
    (
        json["intent"].as_str().unwrap().to_string(),
        json["fusion_strategy"].as_str().unwrap().to_string(),
        json["modalities"].clone(),
        result_paths(&json).first().cloned().unwrap_or_default(),
    )
}

#[test]
fn each_intent_takes_its_route() {
    let repo = Repo::fixture("python");
    // Rule 1 at 0.95: the direct path to the structural modality.
    let (intent, strategy, modalities, first) = route(&repo, "def apply_discount", &[]);
    assert_eq!((intent.as_str(), strategy.as_str()), ("find_definition", "direct"));
    assert_eq!(modalities, json!(["structural"]));
    assert_eq!(first, "shop/pricing.py");
    // Rule 2 at 0.90: the graph's references, though the default preset
    // does not fuse it, completed by the text's occurrences of the name.
    let (intent, strategy, modalities, first) = route(&repo, "who calls apply_discount", &[]);
    assert_eq!((intent.as_str(), strategy.as_str()), ("find_references", "direct"));
    assert_eq!(modalities, json!(["graph", "text"]));
    assert_eq!(first, "shop/pricing.py", "total_with_tax calls it in the same file");
    // Rule 3.
    let (intent, strategy, modalities, _) = route(&repo, "what breaks if I change validate", &[]);
    assert_eq!((intent.as_str(), strategy.as_str()), ("impact_analysis", "direct"));
    assert_eq!(modalities, json!(["graph"]));
    // Rule 4: exact_match never runs the embedder.
    let (intent, strategy, modalities, first) = route(&repo, "ECONNREFUSED", &[]);
    assert_eq!((intent.as_str(), strategy.as_str()), ("exact_match", "direct"));
    assert_eq!(modalities, json!(["text"]));
    assert_eq!(first, "shop/cart.py");
    // Rule 6 at 0.75: fused.
    let (intent, strategy, modalities, first) =
        route(&repo, "how does checkout charge the customer", &[]);
    assert_eq!((intent.as_str(), strategy.as_str()), ("understand_code", "rrf"));
    assert_eq!(modalities, json!(["semantic", "text", "structural"]));
    assert_eq!(first, "shop/cart.py");
}

#[test]
fn presets_choose_the_modalities() {
    let repo = Repo::fixture("go");
    let (_, strategy, modalities, first) =
        route(&repo, "add units of a product to the warehouse stock", &["--preset", "quick"]);
    assert_eq!((strategy.as_str(), modalities), ("direct", json!(["semantic"])));
    assert_eq!(first, "shop/inventory.go");
    let (_, strategy, modalities, _) =
        route(&repo, "add units of a product to the warehouse stock", &["--preset", "thorough"]);
    assert_eq!(strategy, "rrf");
    assert_eq!(modalities, json!(["semantic", "text", "structural", "graph"]));
    // A bad preset is a usage error.
    let run = repo.run(&["search", "x", "--preset", "fastest"]);
    assert_eq!(run.code, 2);
}

#[test]
fn quick_preset_answers_offline_on_a_fresh_index() {
    // No network, no key, no model files: the built-in embedder learns from
    // the corpus while indexing.
    let repo = Repo::fixture("rust");
    let run = repo.run(&["search", "--preset", "quick", "reduce a price by a percentage discount"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stdout.starts_with("src/pricing.rs:"), "{}", run.stdout);
}

#[test]
fn explain_shows_why() {
    let repo = Repo::fixture("typescript");
    let (run, json) = repo.search_json(
        "how is a discount applied to a price",
        // The seed ranking, so that the numbers are the hand-set ones.
        &["--explain", "--preset", "thorough", "--ranking", "seed"],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let plan = &json["explain"];
    assert_eq!(plan["rule"], "understand_words");
    assert_eq!(plan["preset"], "thorough");
    assert_eq!(plan["k"], 60.0);
    assert_eq!(plan["weights"]["semantic"], 0.5);
    let first = &json["results"][0];
    let why = &first["explain"];
    let contributions = why["contributions"].as_array().unwrap();
    assert!(!contributions.is_empty());
    // The score is the sum of the contributions, times the vendor factor
    // and the signals' prior.
    let sum: f64 = contributions.iter().map(|c| c["contribution"].as_f64().unwrap()).sum();
    let factor = why["vendor_factor"].as_f64().unwrap() * why["prior"].as_f64().unwrap();
    assert!((sum * factor - first["score"].as_f64().unwrap()).abs() < 1e-5, "{why}");
    let boost = why["boost"].as_f64().unwrap();
    assert!((1.0..=1.5).contains(&boost));
    for c in contributions {
        let (w, rank) = (c["weight"].as_f64().unwrap(), c["rank"].as_f64().unwrap());
        // Each contribution is w / (k + rank + 1) times at most the boost.
        let plain = w / (60.0 + rank + 1.0);
        let v = c["contribution"].as_f64().unwrap();
        assert!(v >= plain - 1e-6 && v <= plain * 1.5 + 1e-6, "{c}");
    }
    // Human output: the plan on stderr, a line per result on stdout.
    let run = repo.run(&[
        "search",
        "how is a discount applied to a price",
        "--explain",
        "--color",
        "never",
        "--ranking",
        "seed",
    ]);
    assert!(
        run.stderr.contains("intent understand_code (0.75), rrf over semantic, text, structural"),
        "{}",
        run.stderr
    );
    assert!(run.stdout.contains("(w 0.50)"), "{}", run.stdout);
}

#[test]
fn tests_rank_below_the_code_they_exercise() {
    let repo = Repo::fixture("python");
    repo.write(
        "tests/test_pricing.py",
        "from shop.pricing import apply_discount\n\n\ndef test_discount_reduces_a_price_by_a_percentage():\n    \"\"\"Reduce a price by a percentage discount.\"\"\"\n    assert apply_discount(100, 10) == 90\n",
    );
    let (run, json) = repo.search_json("reduce a price by a percentage discount", &[]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let paths = result_paths(&json);
    let code = paths.iter().position(|p| p == "shop/pricing.py").unwrap();
    let test = paths.iter().position(|p| p == "tests/test_pricing.py").unwrap();
    assert!(code < test, "{paths:?}");
}

#[test]
fn a_bare_name_finds_its_definition_before_files_named_like_it() {
    // The file named after the word, full of the word, defines only a
    // longer name; the definition itself sits in a file of another name.
    let repo = Repo::empty();
    repo.write(
        "routing/path_router.go",
        "package routing\n\n// PathRouter routes a request by its path to the Router's handlers.\ntype PathRouter struct {\n\troutes map[string]Handler // the Router's routes\n}\n\n// Route finds the handler of a path for the Router.\nfunc (r *PathRouter) Route(path string) Handler {\n\treturn r.routes[path]\n}\n",
    );
    repo.write(
        "routing/mux.go",
        "package routing\n\n// Router dispatches requests to handlers.\ntype Router struct {\n\tpaths *PathRouter\n}\n\n// Handle serves one request.\nfunc (m *Router) Handle(path string) {\n\tm.paths.Route(path)\n}\n",
    );
    repo.write(
        "routing/handler.go",
        "package routing\n\n// Handler serves a request.\ntype Handler func()\n",
    );
    let (run, json) = repo.search_json("Router", &[]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(json["intent"], "find_definition");
    assert_eq!(result_paths(&json).first().map(String::as_str), Some("routing/mux.go"), "{json}");
}

#[test]
fn a_name_defined_outside_the_tree_finds_the_file_that_brings_it_in() {
    let repo = Repo::empty();
    repo.write(
        "src/extract/mod.rs",
        "//! Types and traits for extracting data from requests.\n\npub use web_core::extract::{FromRequest, FromRequestParts};\n\nmod query;\n",
    );
    repo.write(
        "src/middleware/map_request.rs",
        "/// Maps a request before the handler sees it, using from_request.\npub fn map_request<F>(f: F) -> MapRequest<F> {\n    MapRequest { f }\n}\n\n/// The middleware of `map_request`: it runs from_request on every request.\npub struct MapRequest<F> {\n    f: F,\n}\n",
    );
    repo.write(
        "src/extract/query.rs",
        "/// Extracts the query string of a request.\npub struct Query<T>(pub T);\n",
    );
    let (run, json) = repo.search_json("FromRequest", &[]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        result_paths(&json).first().map(String::as_str),
        Some("src/extract/mod.rs"),
        "{json}"
    );
}

#[test]
fn a_graph_with_nothing_falls_back_to_the_text_that_has_the_name() {
    let repo = Repo::fixture("python");
    repo.write(
        "shop/limits.py",
        "# The old retry budget moved to settings; see legacy_hook.\nLIMITS = {\"legacy_hook\": 3}\n",
    );
    // No definition, call or import of the name: the graph has nothing,
    // and the answer comes from where the text has it (here only in a
    // string and a comment).
    let (run, json) = repo.search_json("who calls legacy_hook", &[]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(json["intent"], "find_references");
    assert_eq!(json["fusion_strategy"], "direct");
    assert_eq!(json["modalities"], json!(["graph", "text"]));
    assert_eq!(result_paths(&json), vec!["shop/limits.py"]);
    assert_eq!(json["results"][0]["evidence"]["confidence"], "string");
    // An impact question about a name nothing imports or uses falls back
    // to where the text has it.
    let (run, json) = repo.search_json("what breaks if I change legacy_hook", &[]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(json["fusion_strategy"], "fallback");
    assert_eq!(result_paths(&json), vec!["shop/limits.py"]);
    // A name nowhere in the text stays unanswered, though its parts
    // ("here") are words of other files.
    let (run, json) = repo.search_json("who calls nothing_is_here_at_all", &[]);
    assert_eq!(run.code, 1, "{}", run.stdout);
    assert_eq!(json["fusion_strategy"], "fallback");
    // Each modality that ran is listed once.
    assert_eq!(json["modalities"], json!(["graph", "text", "structural"]));
    assert!(result_paths(&json).is_empty());
    // A name the graph knows keeps the direct route.
    let (_, json) = repo.search_json("who calls apply_discount", &[]);
    assert_eq!(json["fusion_strategy"], "direct");
}

#[test]
fn a_named_definition_is_shown_through_its_own_lines() {
    // The word fills the top of the file; the definition sits at its end,
    // in another fragment.
    let repo = Repo::empty();
    let mut text = String::from("package routing\n\n");
    for i in 0..80 {
        text.push_str(&format!(
            "// Router note {i}: the Router table, Router hooks and Router order.\n"
        ));
    }
    text.push_str("\n// Router dispatches requests to handlers.\ntype Router struct {\n\tpaths map[string]int\n}\n");
    let def_line = text.lines().position(|l| l.starts_with("type Router struct")).unwrap() + 1;
    repo.write("routing/mux.go", &text);
    repo.write(
        "routing/handler.go",
        "package routing\n\n// Handler serves a request.\ntype Handler func()\n",
    );
    let (run, json) = repo.search_json("Router", &[]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(json["fusion_strategy"], "rrf");
    let first = &json["results"][0];
    assert_eq!(first["path"], "routing/mux.go");
    let (start, end) = (first["start_line"].as_u64().unwrap(), first["end_line"].as_u64().unwrap());
    assert!((start..=end).contains(&(def_line as u64)), "{first}");
}
