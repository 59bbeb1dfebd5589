use crate::util::{LANGUAGES, Repo, result_paths};

#[test]
fn literal_error_string_finds_the_cart_first_in_every_language() {
    for (lang, cart, _, _) in LANGUAGES {
        let repo = Repo::fixture(lang);
        let (run, json) =
            repo.search_json("\"ECONNREFUSED while contacting the payment gateway\"", &[]);
        assert_eq!(run.code, 0, "{lang}: {}", run.stderr);
        assert_eq!(result_paths(&json), vec![cart.to_string()], "{lang}");
        let snippet = json["results"][0]["snippet"].as_str().unwrap();
        assert!(snippet.contains("ECONNREFUSED"), "{lang}: the snippet is the matching line");
        let line = json["results"][0]["start_line"].as_u64().unwrap() as usize;
        let text = std::fs::read_to_string(repo.path().join(cart)).unwrap();
        assert!(
            text.lines().nth(line - 1).unwrap().contains("ECONNREFUSED"),
            "{lang}: line number"
        );
    }
}

#[test]
fn keyword_queries_rank_the_right_file_first_in_every_language() {
    for (lang, cart, pricing, inventory) in LANGUAGES {
        let repo = Repo::fixture(lang);
        for (query, expected) in [
            ("reduce a price by a percentage discount", pricing),
            ("add units of a product to the warehouse stock", inventory),
            ("charge the customer at checkout", cart),
        ] {
            let (run, json) = repo.search_json(query, &[]);
            assert_eq!(run.code, 0, "{lang}: {}", run.stderr);
            assert_eq!(
                result_paths(&json).first().map(String::as_str),
                Some(expected),
                "{lang}: {query}"
            );
        }
    }
}

#[test]
fn json_output_keeps_its_contract() {
    let repo = Repo::fixture("python");
    let (_, json) = repo.search_json("apply discount", &["-k", "2"]);
    let mut keys: Vec<&str> = json.as_object().unwrap().keys().map(String::as_str).collect();
    keys.sort();
    assert_eq!(
        keys,
        ["confidence", "fusion_strategy", "intent", "modalities", "query", "results", "timings_ms"]
    );
    assert_eq!(json["query"], "apply discount");
    // Two plain words match no rule: understand_code at 0.40, fused over
    // the default preset's modalities.
    assert_eq!(json["intent"], "understand_code");
    assert!((json["confidence"].as_f64().unwrap() - 0.40).abs() < 1e-6);
    assert_eq!(json["fusion_strategy"], "rrf");
    assert_eq!(json["modalities"], serde_json::json!(["semantic", "text", "structural"]));
    assert!(json["timings_ms"]["total"].as_f64().is_some());
    let results = json["results"].as_array().unwrap();
    assert!(!results.is_empty() && results.len() <= 2);
    let mut rkeys: Vec<&str> = results[0].as_object().unwrap().keys().map(String::as_str).collect();
    rkeys.sort();
    assert_eq!(rkeys, ["admitted", "end_line", "path", "ranks", "score", "snippet", "start_line"]);
    let ranks = results[0]["ranks"].as_object().unwrap();
    assert!(!ranks.is_empty());
    assert!(ranks.keys().all(|m| ["semantic", "text", "structural"].contains(&m.as_str())));
    let paths = result_paths(&json);
    let mut dedup = paths.clone();
    dedup.dedup();
    assert_eq!(paths, dedup, "one result per file");
}

#[test]
fn regex_and_case_insensitive_literals() {
    let repo = Repo::fixture("rust");
    let (run, json) = repo.search_json(r"fn (apply_discount|total_with_tax)\(", &["--regex"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(result_paths(&json), vec!["src/pricing.rs"]);
    let (_, json) = repo.search_json("econnrefused", &["--literal"]);
    assert!(result_paths(&json).is_empty(), "literal search is case-sensitive by default");
    let (_, json) = repo.search_json("econnrefused", &["--literal", "-i"]);
    assert_eq!(result_paths(&json), vec!["src/cart.rs"]);
}

#[test]
fn no_results_exit_with_status_1() {
    let repo = Repo::fixture("go");
    let run = repo.run(&["search", "\"no such string anywhere\""]);
    assert_eq!(run.code, 1);
    assert_eq!(run.stdout, "");
}

#[test]
fn human_output_is_ripgrep_like() {
    let repo = Repo::fixture("c");
    let run = repo.run(&["search", "\"ECONNREFUSED\"", "--color", "never"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        run.stdout,
        "src/cart.c:28-28  score 1.000\n    28:         fprintf(stderr, \"ECONNREFUSED while contacting the payment gateway\\n\");\n\n"
    );
    let colored = repo.run(&["search", "\"ECONNREFUSED\"", "--color", "always"]);
    assert!(colored.stdout.contains("\x1b[1;31mECONNREFUSED\x1b[0m"));
}

#[test]
fn paths_are_relative_to_the_searched_root_from_anywhere() {
    let repo = Repo::fixture("typescript");
    let elsewhere = Repo::empty();
    let root = repo.path().to_str().unwrap();
    let run = elsewhere.run(&["search", "\"applyDiscount\"", "--path", root, "--json"]);
    let json: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    let paths = result_paths(&json);
    assert_eq!(paths[0], "src/pricing.ts");
    assert!(paths.iter().all(|p| !p.starts_with('/')));
}

#[test]
fn structural_modality_finds_definitions_above_mentions() {
    for (lang, cart, _, _) in LANGUAGES {
        let repo = Repo::fixture(lang);
        let (run, json) = repo.search_json("checkout", &["--modality", "structural"]);
        assert_eq!(run.code, 0, "{lang}: {}", run.stderr);
        assert_eq!(json["modalities"], serde_json::json!(["structural"]));
        // The definition named after the word is among the first two (a
        // definition whose doc says the word, like C's `TAX_RATE` "applied
        // at checkout", may come first); main.* mentions checkout but
        // defines nothing of that name, and ranks below it.
        let paths = result_paths(&json);
        let at = paths.iter().position(|p| p == cart);
        assert!(at.is_some_and(|i| i <= 1), "{lang}: {paths:?}");
        let at = at.unwrap_or_default();
        let main =
            paths.iter().position(|p| p.rsplit('/').next().is_some_and(|f| f.starts_with("main.")));
        assert!(main.is_none_or(|m| m > at), "{lang}: {paths:?}");
        let snippet = json["results"][at]["snippet"].as_str().unwrap().to_lowercase();
        assert!(snippet.contains("checkout"), "{lang}: {snippet}");
    }
}

#[test]
fn text_and_structural_fuse_with_rrf() {
    let repo = Repo::fixture("python");
    let (run, json) = repo.search_json("Inventory", &["--modality", "text,structural"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(json["fusion_strategy"], "rrf");
    assert_eq!(json["intent"], "find_definition");
    assert_eq!(result_paths(&json)[0], "shop/inventory.py");
    let ranks = json["results"][0]["ranks"].as_object().unwrap();
    assert!(ranks.contains_key("text") && ranks.contains_key("structural"), "{ranks:?}");
}

#[test]
fn symbols_lists_definitions() {
    let repo = Repo::fixture("rust");
    let run = repo.run(&["symbols", "--json"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let rows: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    let names: Vec<(&str, &str)> = rows
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["qualified_name"].as_str().unwrap(), r["kind"].as_str().unwrap()))
        .collect();
    for expected in [
        ("Cart::checkout", "method"),
        ("total_with_tax", "function"),
        ("Item", "struct"),
        ("TAX_RATE", "constant"),
    ] {
        assert!(names.contains(&expected), "{expected:?} not in {names:?}");
    }
    let one = repo.run(&["symbols", "--name", "applyDiscount"]);
    assert_eq!(one.code, 0);
    assert!(one.stdout.starts_with("src/pricing.rs:7  function  apply_discount"), "{}", one.stdout);
    assert_eq!(repo.run(&["symbols", "--name", "nothing_like_this"]).code, 1);
}

#[test]
fn a_token_budget_keeps_what_fits_and_says_what_it_left_out() {
    let repo = Repo::fixture("python");
    let (run, json) =
        repo.search_json("the price of the items in the cart", &["--max-tokens", "60"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let budget = &json["budget"];
    assert_eq!(budget["max_tokens"], 60);
    let used: u64 = json["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let location =
                format!("{}:{}-{}\n", r["path"].as_str().unwrap(), r["start_line"], r["end_line"]);
            (location.len() + r["snippet"].as_str().unwrap().len() + 1).div_ceil(3) as u64
        })
        .sum();
    assert!(used <= 60, "{used} tokens");
    assert_eq!(budget["used_tokens"].as_u64(), Some(used));
    let left_out = budget["left_out"].as_u64().unwrap();
    assert!(left_out > 0);
    assert!(run.stderr.contains(&format!("{left_out} results left out")), "{}", run.stderr);
    assert!(run.stderr.contains("to stay within 60 tokens"), "{}", run.stderr);
    // Without a budget the answer says nothing of one.
    let (_, json) = repo.search_json("how are orders shipped", &[]);
    assert!(json.get("budget").is_none());
    // A budget of nothing is an input error.
    let run = repo.run(&["search", "orders", "--max-tokens", "0"]);
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("leaves room for nothing"), "{}", run.stderr);
    assert!(run.stdout.is_empty());
}

/// A budget smaller than a whole fragment still answers, with the lines of
/// each result that fit: what is charged is what is printed, on the
/// terminal as in JSON, and a search that found something never exits as
/// if it found nothing because of its budget.
#[test]
fn a_small_budget_charges_what_is_printed() {
    let repo = Repo::fixture("rust");
    for budget in ["40", "120", "300"] {
        let (run, json) =
            repo.search_json("how is the cart total computed", &["--max-tokens", budget]);
        assert_eq!(run.code, 0, "{budget}: {}", run.stderr);
        let results = json["results"].as_array().unwrap();
        assert!(!results.is_empty(), "{budget}: {}", run.stderr);
        let human = repo.run(&[
            "search",
            "how is the cart total computed",
            "--max-tokens",
            budget,
            "--color",
            "never",
        ]);
        assert_eq!(human.code, 0, "{budget}: {}", human.stderr);
        // Every line of every JSON snippet, with its number, and nothing else.
        let printed: Vec<String> = human
            .stdout
            .lines()
            .filter_map(|l| l.split_once(": ").filter(|(n, _)| n.trim().parse::<u32>().is_ok()))
            .map(|(n, l)| format!("{}: {l}", n.trim()))
            .collect();
        let charged: Vec<String> = results
            .iter()
            .flat_map(|r| {
                let start = r["start_line"].as_u64().unwrap();
                let snippet = r["snippet"].as_str().unwrap().to_string();
                snippet
                    .lines()
                    .enumerate()
                    .map(|(i, l)| format!("{}: {}", start + i as u64, l.trim_end()))
                    .collect::<Vec<_>>()
            })
            .collect();
        assert_eq!(printed, charged, "{budget}");
        for r in results {
            // A snippet's last line may be blank, which `lines` drops.
            let lines = r["snippet"].as_str().unwrap().lines().count() as u64;
            let span = r["end_line"].as_u64().unwrap() - r["start_line"].as_u64().unwrap() + 1;
            assert!(lines == span || lines + 1 == span, "{budget}: a result's lines are its span");
        }
    }
}

/// Timings are whole microseconds, not float noise.
#[test]
fn json_timings_are_rounded() {
    let repo = Repo::fixture("go");
    let run = repo.run(&["search", "apply discount", "--json"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let build = repo.run(&["index", "--json"]);
    for out in [&run.stdout, &build.stdout] {
        let value: serde_json::Value = serde_json::from_str(out).unwrap();
        let mut numbers = Vec::new();
        collect_timings(&value, false, &mut numbers);
        assert!(!numbers.is_empty());
        for n in numbers {
            let text = n.to_string();
            let decimals = text.split_once('.').map_or(0, |(_, d)| d.len());
            assert!(decimals <= 3, "{text}");
        }
    }
}

/// Every number under a key that ends in `_ms`.
fn collect_timings(v: &serde_json::Value, timing: bool, out: &mut Vec<serde_json::Number>) {
    match v {
        serde_json::Value::Number(n) if timing => out.push(n.clone()),
        serde_json::Value::Object(map) => {
            for (k, v) in map {
                collect_timings(v, timing || k.ends_with("_ms"), out);
            }
        }
        serde_json::Value::Array(items) => {
            items.iter().for_each(|v| collect_timings(v, timing, out))
        }
        _ => {}
    }
}

#[test]
fn results_show_best_lines_whole_fragments_or_several_pieces_as_asked() {
    let repo = Repo::empty();
    // Two long functions, each with the answer in its middle.
    let body = |name: &str, line: &str| {
        let mut f = format!("def {name}(orders, years):\n");
        for i in 0..40 {
            f.push_str(&format!("    total_{i} = sum(order.amount for order in orders[{i}:])\n"));
        }
        f.push_str(line);
        for i in 40..80 {
            f.push_str(&format!("    total_{i} = sum(order.amount for order in orders[{i}:])\n"));
        }
        f
    };
    let text = format!(
        "{}\n\n{}",
        body(
            "process_orders",
            "    loyalty = loyalty_discount(years)  # the discount grows with years\n"
        ),
        body("summarize_orders", "    report = loyalty_discount(years)  # the same discount\n")
    );
    repo.write("shop/loyalty.py", &text);
    repo.write("shop/other.py", "def unrelated():\n    return 1\n");
    let query = "loyalty discount years";
    let (run, shown) = repo.search_json(query, &["-k", "1"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let (run, whole) = repo.search_json(query, &["-k", "1", "--snippet-tokens", "0"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let lines = |j: &serde_json::Value, i: usize| {
        j["results"][i]["snippet"].as_str().unwrap().lines().count()
    };
    assert!(lines(&shown, 0) < lines(&whole, 0), "{shown}");
    assert!(shown["results"][0]["snippet"].as_str().unwrap().contains("loyalty"), "{shown}");
    let (run, many) = repo.search_json(query, &["-k", "1", "--per-file", "2"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let results = many["results"].as_array().unwrap();
    assert_eq!(results.len(), 2, "{many}");
    assert!(results.iter().all(|r| r["path"] == "shop/loyalty.py"));
    assert_ne!(results[0]["start_line"], results[1]["start_line"]);
    let run = repo.run(&["search", query, "--per-file", "0"]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    // The blank lines between the two functions can be the best hit in
    // meaning; no preset shows a result of blanks.
    for preset in ["quick", "default", "thorough"] {
        let (run, json) = repo.search_json(query, &["--preset", preset]);
        assert_eq!(run.code, 0, "{}", run.stderr);
        for r in json["results"].as_array().unwrap() {
            assert!(!r["snippet"].as_str().unwrap().trim().is_empty(), "{preset}: {r}");
        }
    }
}

#[test]
fn a_bare_name_defined_in_code_and_in_tests_answers_with_the_code_first() {
    // A test double of the same name, mentioned far more often, would rank
    // first by words alone; the code's definition is what the name asks.
    let repo = Repo::empty();
    let helpers: String = (0..30)
        .map(|i| format!("def test_store_{i}():\n    s = SessionStore()\n    assert s\n\n"))
        .collect();
    repo.write(
        "tests/test_session.py",
        format!("class SessionStore:\n    \"\"\"A fake SessionStore.\"\"\"\n\n{helpers}"),
    );
    repo.write(
        "app/session.py",
        "class SessionStore:\n    \"\"\"Keeps sessions by id.\"\"\"\n\n    def get(self, key):\n        return None\n",
    );
    repo.write(
        "src/session_store.go",
        "package session\n\n// SessionStore keeps sessions.\ntype SessionStore struct{}\n",
    );
    repo.write(
        "src/session_store_test.go",
        "package session\n\ntype SessionStore struct{}\n\nfunc TestSessionStore(t *testing.T) { _ = SessionStore{}; _ = SessionStore{} }\n",
    );
    let (run, json) = repo.search_json("SessionStore", &[]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let paths = result_paths(&json);
    let code: Vec<&String> = paths.iter().take(2).collect();
    assert!(
        code.iter().all(|p| *p == "app/session.py" || *p == "src/session_store.go"),
        "{paths:?}"
    );
    assert!(paths.iter().position(|p| p == "tests/test_session.py").is_some_and(|i| i >= 2));
}

#[test]
fn a_ranking_file_can_carry_a_reranker_and_a_wrong_one_is_refused() {
    let repo = Repo::fixture("python");
    // A reranker that puts test files first shows that the file's model
    // orders the candidates.
    let names: Vec<&str> = maguyva_fusion::FEATURE_NAMES.to_vec();
    let mut weights = vec![0.0f32; names.len()];
    weights[0] = 1.0;
    weights[names.iter().position(|n| *n == "test_file").unwrap()] = 100.0;
    let model = serde_json::json!({
        "reranker": {"depth": 30, "features": names, "weights": [weights, weights, weights]}
    });
    let file = repo.write(".ranking.json", model.to_string());
    repo.write(
        "tests/test_cart.py",
        "from shop.cart import Cart\n\ndef test_discount():\n    assert Cart().total() == 0\n",
    );
    let query = "apply discount to the cart total";
    let (_, plain) = repo.search_json(query, &[]);
    let plain = result_paths(&plain);
    assert!(!plain[0].starts_with("tests/"), "{plain:?}");
    assert!(plain.iter().any(|p| p == "tests/test_cart.py"), "{plain:?}");
    let (run, json) = repo.search_json(query, &["--ranking", file.to_str().unwrap()]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(result_paths(&json)[0], "tests/test_cart.py");
    let mut wrong = model.clone();
    wrong["reranker"]["features"][2] = "something_else".into();
    std::fs::write(&file, wrong.to_string()).unwrap();
    let run = repo.run(&["search", "cart", "--ranking", file.to_str().unwrap()]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(run.stderr.contains("reranker"), "{}", run.stderr);
}
