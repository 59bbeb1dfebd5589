//! Classifies queries read from standard input, one a line, and prints
//! `intent<TAB>confidence<TAB>rule<TAB>query`.
//!
//!     echo "who calls parse_config" | cargo run -p maguyva-fusion --example classify

use std::io::BufRead;

fn main() -> std::io::Result<()> {
    let classifier = maguyva_fusion::IntentClassifier::new();
    for line in std::io::stdin().lock().lines() {
        let line = line?;
        let c = classifier.classify(&line);
        println!("{}\t{:.2}\t{:?}\t{line}", c.intent, c.confidence, c.rule);
    }
    Ok(())
}
