//! Results are admitted by evidence and never padded in below the
//! relevance floor.

use maguyva_core::{IndexDir, NoProgress};
use maguyva_engine::{BuildOptions, Index, IndexSettings, SearchRequest, build_index_with};

const FILES: [(&str, &str); 6] = [
    (
        "src/cart.rs",
        "/// A shopping cart.\npub struct Cart { items: Vec<u32> }\n\nimpl Cart {\n    /// The total after the discount.\n    pub fn total(&self) -> u32 { self.items.iter().sum() }\n}\n",
    ),
    (
        "src/pricing.rs",
        "/// Takes the discount off a price.\npub fn apply_discount(price: u32) -> u32 {\n    price - price / 10\n}\n",
    ),
    (
        "src/inventory.rs",
        "/// Holds stock for an order.\npub fn reserve_stock(sku: &str) -> bool {\n    !sku.is_empty()\n}\n",
    ),
    (
        "src/shipping.rs",
        "/// Prints the shipping label of an order.\npub fn label(order: u32) -> String {\n    format!(\"order {order}\")\n}\n",
    ),
    (
        "src/audit.rs",
        "/// Records a price change for the audit log.\npub fn record(price: u32) {\n    let _ = price;\n}\n",
    ),
    ("README.md", "# Shop\n\nA cart, prices with a discount, stock and shipping.\n"),
];

fn index() -> (tempfile::TempDir, Index) {
    let tree = tempfile::tempdir().unwrap();
    for (path, text) in FILES {
        let path = tree.path().join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    let settings = IndexSettings {
        embedder: maguyva_engine::EmbedderChoice::builtin(),
        ..IndexSettings::default()
    };
    let dir = IndexDir::new(tree.path().join(".maguyva"));
    build_index_with(tree.path(), &dir, &settings, BuildOptions::FULL, &NoProgress).unwrap();
    let index = Index::open(&dir, &settings).unwrap();
    (tree, index)
}

#[test]
fn no_result_is_padded_in_below_the_floor() {
    let (_tree, index) = index();
    for query in ["apply the discount to a price", "print the shipping label of an order"] {
        let mut request = SearchRequest::new(query);
        request.ranking.admission.floor = 0.0;
        let all = index.search(&request).unwrap().results;
        for floor in [0.3, 0.6, 0.9] {
            request.ranking.admission.floor = floor;
            let kept = index.search(&request).unwrap().results;
            let best = kept[0].score;
            assert!(kept.iter().all(|r| r.score >= floor * best), "{query:?} at {floor}");
            // The same results, in the same order, up to the floor.
            let expected: Vec<&str> = all
                .iter()
                .take_while(|r| r.score >= floor * best)
                .map(|r| r.path.as_str())
                .collect();
            let got: Vec<&str> = kept.iter().map(|r| r.path.as_str()).collect();
            assert_eq!(got, expected, "{query:?} at {floor}");
        }
        request.ranking.admission.floor = 0.9;
        assert!(index.search(&request).unwrap().results.len() < all.len(), "{query:?}");
    }
}

#[test]
fn the_default_ranking_admits_by_evidence() {
    let (_tree, index) = index();
    let answer = |q: &str| index.search(&SearchRequest::new(q)).unwrap().results;
    assert!(answer("flux capacitor overdrive").is_empty());
    assert!(answer("qqqxyzzy_nonexistent_label").is_empty());
    let results = answer("reserve stock for an order");
    assert_eq!(results[0].path, "src/inventory.rs");
    for r in &results {
        let admitted = r.admitted.as_ref().unwrap();
        assert!(admitted.coverage > 0.0, "{r:?}");
        assert!(admitted.words.iter().all(|w| ["reserve", "stock", "order"].contains(&w.as_str())));
    }
}
