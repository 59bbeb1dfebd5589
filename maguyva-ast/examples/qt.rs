use maguyva_core::Language;
use std::time::Instant;
fn main() {
    let args: Vec<String> = std::env::args().collect();
    let l = Language::ALL.into_iter().find(|l| l.to_string() == args[1]).unwrap();
    let g = maguyva_ast::grammar(l).unwrap();
    for f in &args[2..] {
        let src = std::fs::read_to_string(f).unwrap();
        let mut best = f64::MAX;
        for _ in 0..5 {
            let t = Instant::now();
            tree_sitter::Query::new(&g, &src).unwrap();
            best = best.min(t.elapsed().as_secs_f64() * 1e3);
        }
        println!("{f}: {best:.1} ms");
    }
}
