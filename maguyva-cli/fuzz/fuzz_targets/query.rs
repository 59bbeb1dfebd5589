//! Query handling on arbitrary text: validation, quoting, the intent
//! classifier, the reading of a report, the plan of which retrievers run, and the word splitting
//! the retrievers and file priors use.
#![no_main]

use libfuzzer_sys::fuzz_target;
use maguyva_engine::SearchRequest;
use maguyva_fusion::{IntentClassifier, Preset, plan};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let mut request = SearchRequest::new(text);
    let Ok(query) = request.query() else { return };
    let classification = IntentClassifier::new().classify(query.text());
    for preset in [Preset::Quick, Preset::Default, Preset::Thorough] {
        request.preset = preset;
        let _ = plan(&request.plan_request(&query), &classification, classification.intent);
    }
    // A long question is read as a report.
    if let Some(report) = maguyva_fusion::ReportAnalysis::of(text) {
        let _ = report.words();
    }
    let _ = maguyva_core::tokens::content_words(text);
    let _ = maguyva_core::tokens::tokens(text);
    let _ = maguyva_core::tokens::normalize_name(text);
});
