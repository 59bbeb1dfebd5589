//! Human-readable output in the style of ripgrep: `path:start-end`, a score,
//! and the few lines of the fragment that best match the query, with colour
//! only on a terminal.

use crate::engine::{BuildReport, SearchResponse, SearchResult, VerifyReport};
use maguyva_core::MatchMode;
use maguyva_core::tokens::{for_each_token, is_function_word, words};
use std::collections::{BTreeMap, HashSet};
use std::fmt::Write;

/// Lines of each result shown in human output.
const SNIPPET_LINES: usize = 3;

/// ANSI styling, or none.
#[derive(Debug, Clone, Copy)]
pub struct Style {
    color: bool,
}

impl Style {
    /// Colour on or off.
    pub fn new(color: bool) -> Style {
        Style { color }
    }

    fn paint(&self, code: &str, text: &str) -> String {
        if self.color { format!("\x1b[{code}m{text}\x1b[0m") } else { text.to_string() }
    }
}

/// How matched text is found for highlighting.
#[derive(Debug)]
pub enum Highlighter {
    /// Words sharing a token with the query.
    Tokens(HashSet<String>),
    /// A regular expression's matches (also used for literals).
    Pattern(regex::Regex),
}

impl Highlighter {
    /// The highlighter for a query text and mode.
    pub fn new(text: &str, mode: MatchMode, case_insensitive: bool) -> Highlighter {
        let pattern = match mode {
            MatchMode::Keyword => {
                // Function words ("how", "are", "the") and single letters
                // say nothing of what is asked: they neither pick the lines
                // shown nor are highlighted.
                let mut set = HashSet::new();
                for_each_token(text, |t| {
                    if t.chars().count() >= 2 && !is_function_word(t) {
                        set.insert(t.to_string());
                    }
                });
                return Highlighter::Tokens(set);
            }
            MatchMode::Literal => regex::escape(text),
            MatchMode::Regex => text.to_string(),
        };
        match regex::RegexBuilder::new(&pattern).case_insensitive(case_insensitive).build() {
            Ok(re) => Highlighter::Pattern(re),
            Err(_) => Highlighter::Tokens(HashSet::new()),
        }
    }

    /// Byte ranges of `line` to highlight.
    fn ranges(&self, line: &str) -> Vec<(usize, usize)> {
        match self {
            Highlighter::Pattern(re) => re.find_iter(line).map(|m| (m.start(), m.end())).collect(),
            Highlighter::Tokens(set) => {
                let base = line.as_ptr() as usize;
                words(line)
                    .filter(|w| {
                        let mut hit = false;
                        for_each_token(w, |t| hit |= set.contains(t));
                        hit
                    })
                    .map(|w| {
                        let start = w.as_ptr() as usize - base;
                        (start, start + w.len())
                    })
                    .collect()
            }
        }
    }
}

/// The lines of a result to show: those with the most highlighted words,
/// in file order; the first lines when nothing is highlighted.
fn best_lines<'a>(result: &'a SearchResult, hl: &Highlighter) -> Vec<(u32, &'a str)> {
    let lines: Vec<(u32, &str)> = result
        .snippet
        .lines()
        .enumerate()
        .map(|(i, l)| (result.start_line + i as u32, l))
        .collect();
    let mut scored: Vec<(usize, usize)> =
        lines.iter().enumerate().map(|(i, (_, l))| (hl.ranges(l).len(), i)).collect();
    scored.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    let candidates: Vec<usize> = if scored.first().is_some_and(|s| s.0 > 0) {
        scored.iter().filter(|s| s.0 > 0).map(|s| s.1).collect()
    } else {
        (0..lines.len()).filter(|&i| !lines[i].1.trim().is_empty()).collect()
    };
    // A definition is always shown through the line that names it.
    let definition = result
        .definition_line
        .and_then(|d| d.checked_sub(result.start_line))
        .map(|i| i as usize)
        .filter(|&i| i < lines.len());
    let mut picked: Vec<usize> = definition.into_iter().collect();
    for i in candidates {
        if picked.len() >= SNIPPET_LINES {
            break;
        }
        if !picked.contains(&i) {
            picked.push(i);
        }
    }
    picked.sort_unstable();
    picked.into_iter().map(|i| lines[i]).collect()
}

/// How many files were skipped for each reason: `2 binary, 1 too large`.
pub fn skip_reasons(skipped: &[maguyva_core::Skipped]) -> String {
    let mut by_reason: BTreeMap<&str, usize> = BTreeMap::new();
    for s in skipped {
        *by_reason.entry(s.reason.label()).or_default() += 1;
    }
    by_reason.iter().map(|(r, n)| format!("{n} {r}")).collect::<Vec<_>>().join(", ")
}

/// One line saying how a query was understood and answered.
pub fn render_plan(resp: &SearchResponse) -> String {
    let modalities: Vec<&str> = resp.modalities.iter().map(|m| m.as_str()).collect();
    if resp.intent.as_deref() == Some("report") {
        let mut line = "a report: the files to change, its words, meaning, named definitions and \
            named files fused"
            .to_string();
        if let Some(r) = &resp.report {
            let _ = write!(
                line,
                "; {} frames, {} paths, {} modules, {} names, {} messages",
                r.frames,
                r.paths.len(),
                r.modules.len(),
                r.identifiers.len(),
                r.messages.len()
            );
        }
        return line;
    }
    let mut line = format!(
        "intent {} ({:.2}), {} over {}",
        resp.intent.as_deref().unwrap_or("?"),
        resp.confidence.unwrap_or(0.0),
        resp.fusion_strategy.as_deref().unwrap_or("?"),
        modalities.join(", ")
    );
    if let Some(plan) = &resp.explain {
        let weights: Vec<String> =
            resp.modalities.iter().map(|&m| format!("{m} {:.2}", plan.weights.get(m))).collect();
        let _ = write!(
            line,
            "; rule {}{}, preset {}, weights {}",
            plan.rule.as_str(),
            if plan.mixed { " (mixed question)" } else { "" },
            plan.preset,
            weights.join(", ")
        );
        if matches!(resp.fusion_strategy.as_deref(), Some("rrf" | "fallback")) {
            let _ = write!(line, ", k {}", plan.k);
        }
    }
    line
}

/// Human rendering of a search response.
pub fn render_search(resp: &SearchResponse, hl: &Highlighter, style: Style) -> String {
    let mut out = String::new();
    for r in &resp.results {
        let _ = writeln!(
            out,
            "{}:{}  {}",
            style.paint("35", &r.path),
            style.paint("32", &format!("{}-{}", r.start_line, r.end_line)),
            style.paint("2", &format!("score {:.3}", r.score)),
        );
        if !r.ties.is_empty() {
            let ties: Vec<String> = r.ties.iter().map(ToString::to_string).collect();
            let _ = writeln!(
                out,
                "        {}",
                style.paint("2", &format!("tied by: {}", ties.join("; ")))
            );
        }
        if let Some(e) = &r.explain {
            let parts: Vec<String> = e
                .contributions
                .iter()
                .map(|c| {
                    format!(
                        "{} #{} (w {:.2}) {:.5}",
                        c.modality,
                        c.rank + 1,
                        c.weight,
                        c.contribution
                    )
                })
                .collect();
            let mut extra = String::new();
            if e.boost != 1.0 {
                extra.push_str(&format!(", boost {:.3}", e.boost));
            }
            if e.vendor_factor != 1.0 {
                extra.push_str(&format!(", vendor x{:.2}", e.vendor_factor));
            }
            if e.prior != 1.0 {
                extra.push_str(&format!(", signals x{:.3}", e.prior));
            }
            let _ = writeln!(out, "        {}{extra}", style.paint("2", &parts.join(" + ")));
        }
        // Under a budget, every line that was charged for is shown.
        let lines = match resp.budget {
            Some(_) => {
                r.snippet.lines().enumerate().map(|(i, l)| (r.start_line + i as u32, l)).collect()
            }
            None => best_lines(r, hl),
        };
        for (n, line) in lines {
            let line = truncate(line.trim_end(), 200);
            let mut painted = String::new();
            let mut at = 0;
            for (a, b) in hl.ranges(line) {
                if a < at || b > line.len() {
                    continue;
                }
                painted.push_str(&line[at..a]);
                painted.push_str(&style.paint("1;31", &line[a..b]));
                at = b;
            }
            painted.push_str(&line[at..]);
            let _ = writeln!(out, "{}: {}", style.paint("32", &format!("{n:>6}")), painted);
        }
        out.push('\n');
    }
    out
}

fn truncate(s: &str, max_chars: usize) -> &str {
    match s.char_indices().nth(max_chars) {
        Some((i, _)) => &s[..i],
        None => s,
    }
}

/// Human summary of an index build.
pub fn render_build(report: &BuildReport) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "indexed {} files ({}) into {} fragments and {} definitions in {:.2} s",
        report.files,
        human_bytes(report.bytes),
        report.fragments,
        report.symbols,
        report.total_ms / 1000.0
    );
    if report.reused_outlines > 0 || report.model_kept {
        let _ = writeln!(
            out,
            "refreshed: parsed {} and relinked {} of {} source files{}",
            report.parsed_files,
            report.relinked_files,
            report.parsed_files + report.reused_outlines,
            if report.model_kept { "; kept the embedding model" } else { "" }
        );
    }
    if !report.parse_failures.is_empty() {
        let _ = writeln!(
            out,
            "{} files could not be parsed and keep line windows:",
            report.parse_failures.len()
        );
        for (path, why) in report.parse_failures.iter().take(5) {
            let _ = writeln!(out, "  {path}: {why}");
        }
    }
    if !report.skipped.is_empty() {
        let mut by_reason: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
        for s in &report.skipped {
            by_reason.entry(s.reason.label()).or_default().push(&s.path);
        }
        let _ = writeln!(
            out,
            "skipped {} files: {}",
            report.skipped.len(),
            skip_reasons(&report.skipped)
        );
        for (reason, paths) in &by_reason {
            let shown: Vec<&str> = paths.iter().take(5).copied().collect();
            let more = if paths.len() > 5 {
                format!(" and {} more", paths.len() - 5)
            } else {
                String::new()
            };
            let _ = writeln!(out, "  {reason}: {}{more}", shown.join(", "));
        }
    }
    if report.lossy_files > 0 {
        let _ =
            writeln!(out, "{} files had invalid UTF-8, replaced with U+FFFD", report.lossy_files);
    }
    let stages: Vec<String> =
        report.stages_ms.iter().map(|(n, ms)| format!("{n} {ms:.0} ms")).collect();
    let _ = writeln!(out, "stages: {}", stages.join(", "));
    let _ = writeln!(out, "index: {}", report.index);
    out
}

/// One definition as `maguyva symbols` lists it.
#[derive(Debug, Clone, serde::Serialize)]
pub struct SymbolRow {
    /// Path relative to the root.
    pub path: String,
    /// The name.
    pub name: String,
    /// The qualified name.
    pub qualified_name: String,
    /// The kind.
    pub kind: String,
    /// First line of the definition.
    pub start_line: u32,
    /// Last line of the definition.
    pub end_line: u32,
    /// The line of the name.
    pub name_line: u32,
    /// The signature line.
    pub signature: String,
    /// The doc comment's summary (its first 40 words).
    pub doc: String,
}

impl SymbolRow {
    /// The row of symbol `id` of `table`, found in `path`.
    pub fn new(
        path: String,
        table: &maguyva_ast::SymbolTable,
        id: maguyva_core::SymbolId,
    ) -> Option<SymbolRow> {
        let s = table.get(id)?;
        Some(SymbolRow {
            path,
            name: s.name.to_string(),
            qualified_name: s.qualified_name.to_string(),
            kind: s.kind.name().to_string(),
            start_line: s.lines.start(),
            end_line: s.lines.end(),
            name_line: s.name_line,
            signature: table.signature(id).to_string(),
            doc: table.doc(id).to_string(),
        })
    }
}

/// `path:line  kind  qualified_name  signature`, one definition a line.
pub fn render_symbols(rows: &[SymbolRow]) -> String {
    let mut out = String::new();
    for r in rows {
        let _ = writeln!(
            out,
            "{}:{}  {:<9} {}  {}",
            r.path,
            r.name_line,
            r.kind,
            r.qualified_name,
            truncate(&r.signature, 120)
        );
    }
    out
}

/// `maguyva callers` as text.
pub fn render_callers(r: &crate::engine::CallersReport) -> String {
    let mut out = String::new();
    for t in &r.targets {
        let _ = writeln!(out, "{} is defined at {}:{}", t.qualified_name, t.path, t.line);
    }
    for c in &r.callers {
        let who = c.caller.as_deref().unwrap_or("(top level)");
        let targets: Vec<String> = c
            .targets
            .iter()
            .map(|t| format!("{} ({}:{})", t.qualified_name, t.path, t.line))
            .collect();
        let what = if c.ambiguous {
            format!("{} [ambiguous: {}]", c.kind, targets.join(" | "))
        } else {
            format!("{} {}", c.kind, targets.join(", "))
        };
        let _ =
            writeln!(out, "{}:{}  {} {}  {}", c.path, c.line, who, what, truncate(&c.snippet, 100));
    }
    if !r.files.is_empty() {
        let _ = writeln!(out, "files (kind, confidence):");
        for f in &r.files {
            let _ = writeln!(
                out,
                "  {}:{}  {} {}  {}",
                f.path,
                f.line,
                f.kind,
                f.confidence,
                truncate(&f.snippet, 100)
            );
        }
    }
    out
}

/// `maguyva impact` as text.
pub fn render_impact(r: &crate::engine::ImpactReport) -> String {
    let mut out = String::new();
    for t in &r.targets {
        let what = if t.qualified_name.is_empty() {
            t.path.clone()
        } else {
            format!("{} ({}:{})", t.qualified_name, t.path, t.line)
        };
        let _ = writeln!(out, "changing {what} affects, within {} hops:", r.depth);
    }
    for d in &r.dependents {
        let name = d.name.as_deref().unwrap_or("(file)");
        let _ = writeln!(
            out,
            "  {} {}:{}  {}  centrality {:.2}",
            d.distance, d.path, d.line, name, d.centrality
        );
    }
    if !r.files.is_empty() {
        let _ = writeln!(out, "files (depth, kind, confidence):");
        for f in &r.files {
            let _ = writeln!(
                out,
                "  {} {}:{}  {} {}  {}",
                f.depth,
                f.path,
                f.line,
                f.kind,
                f.confidence,
                truncate(&f.snippet, 100)
            );
        }
    }
    out
}

/// `1536` as `1.5 KiB`.
pub fn human_bytes(bytes: u64) -> String {
    const UNITS: [&str; 4] = ["B", "KiB", "MiB", "GiB"];
    let mut v = bytes as f64;
    let mut unit = 0;
    while v >= 1024.0 && unit < UNITS.len() - 1 {
        v /= 1024.0;
        unit += 1;
    }
    if unit == 0 { format!("{bytes} B") } else { format!("{v:.1} {}", UNITS[unit]) }
}

/// `verified N files (S sections, B bytes) in GENERATION: ok`, then a line a file.
pub fn render_verify(report: &VerifyReport) -> String {
    let sections: usize = report.files.iter().map(|f| f.sections).sum();
    let bytes: u64 = report.files.iter().map(|f| f.bytes).sum();
    let mut out = format!(
        "verified {} files ({sections} sections, {bytes} bytes) in {}: ok\n",
        report.files.len(),
        report.generation
    );
    for f in &report.files {
        let _ = writeln!(out, "  {:<16} {:>12} bytes  {:>3} sections", f.name, f.bytes, f.sections);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result(snippet: &str) -> SearchResult {
        SearchResult::lines("a.rs", 10, 10 + snippet.lines().count() as u32 - 1, 1.0, snippet)
    }

    #[test]
    fn best_lines_prefer_matches_in_file_order() {
        let r = result("fn a() {}\nlet config = 1;\n\nparse_config(config);\nother();");
        let hl = Highlighter::new("parse config", MatchMode::Keyword, false);
        let lines = best_lines(&r, &hl);
        assert_eq!(lines, vec![(11, "let config = 1;"), (13, "parse_config(config);")]);
    }

    #[test]
    fn a_definition_is_shown_through_the_line_that_names_it() {
        let mut r = result(
            "/// Reads the config file.\n/// The config file is read once per config.\n\
             /// A missing config file is an error.\npub fn load(path: &Path) -> Settings {\n    \
             read(path)\n}",
        );
        let hl = Highlighter::new("config file", MatchMode::Keyword, false);
        // Without the definition's line, the three doc lines win.
        assert!(!best_lines(&r, &hl).iter().any(|(n, _)| *n == 13));
        r.definition_line = Some(13);
        let lines = best_lines(&r, &hl);
        assert_eq!(lines.len(), 3);
        assert!(lines.contains(&(13, "pub fn load(path: &Path) -> Settings {")), "{lines:?}");
    }

    #[test]
    fn function_words_neither_pick_lines_nor_are_highlighted() {
        let r = result(
            "# Cookies are set here, which are directly sent.\ndef signed_sessions(store):\n    \
             if the_cookies_are_disabled:\n        return None\n    return signed(session)",
        );
        let hl = Highlighter::new("how are sessions signed", MatchMode::Keyword, false);
        assert!(hl.ranges("which are directly how").is_empty());
        let lines = best_lines(&r, &hl);
        assert_eq!(
            lines,
            vec![(11, "def signed_sessions(store):"), (14, "    return signed(session)")],
            "only the lines with the question's content words"
        );
    }

    #[test]
    fn rendering_without_colour_is_plain() {
        let resp = SearchResponse {
            query: "x".into(),
            intent: None,
            confidence: None,
            fusion_strategy: None,
            modalities: vec![],
            timings_ms: BTreeMap::new(),
            results: vec![result("let ECONNREFUSED = 1;")],
            explain: None,
            budget: None,
            changed: vec![],
            report: None,
        };
        let hl = Highlighter::new("ECONNREFUSED", MatchMode::Literal, false);
        let text = render_search(&resp, &hl, Style::new(false));
        assert_eq!(text, "a.rs:10-10  score 1.000\n    10: let ECONNREFUSED = 1;\n\n");
        let colored = render_search(&resp, &hl, Style::new(true));
        assert!(colored.contains("\x1b[1;31mECONNREFUSED\x1b[0m"));
    }

    #[test]
    fn bytes_are_humane() {
        assert_eq!(human_bytes(512), "512 B");
        assert_eq!(human_bytes(1536), "1.5 KiB");
        assert_eq!(human_bytes(3 << 20), "3.0 MiB");
    }
}
