//! `crossfile bench model` end to end on a small real workspace: the embedded backend and
//! llama-server (alone, and with a draft model as `--model-draft`) on the same prompts, with the
//! small model. Its figures are for docs/performance.md; here the report's shape, the model it
//! names and the speculative counts are checked.

use std::process::Command;

use serde_json::Value;

use crate::backends::servers::llama_server_binary;
use crate::bench::perf_harness::WORKSPACE;
use crate::support::{Workspace, small_model, test_user_config};

#[test]
fn the_model_and_llama_server_with_a_draft_are_measured_on_the_same_prompts() {
    let ws = Workspace::new(WORKSPACE);
    let output = Command::new(env!("CARGO_BIN_EXE_crossfile"))
        .args(["bench", "model"])
        .arg(ws.root())
        .args([
            "--prompts",
            "3",
            "--prompt-tokens",
            "24",
            "--new-tokens",
            "12",
        ])
        .args(["--cursors", "1", "--draft-max", "4", "--json"])
        .arg("--model")
        .arg(small_model())
        .arg("--llama-server")
        .arg(llama_server_binary())
        // The model drafts for itself: the same vocabulary, and most drafts accepted.
        .arg("--draft")
        .arg(small_model())
        .env("CROSSFILE_CACHE_DIR", ws.cache.path())
        .env("CROSSFILE_CONFIG", test_user_config(ws.cache.path()))
        .output()
        .expect("run bench model");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    let report: Value = serde_json::from_slice(&output.stdout).expect("one JSON document");
    assert_eq!(
        report["model"].as_str().map(std::path::PathBuf::from),
        Some(small_model()),
        "the GGUF given is the one measured: {report}"
    );
    assert_eq!(report["prompts"], 3, "{report}");
    for side in [&report["embedded"], &report["llama_server"]] {
        for key in ["prompt_tps", "generate_tps"] {
            assert!(side[key].as_f64().is_some_and(|v| v > 0.0), "{report}");
        }
    }
    let spec = &report["speculative"];
    assert_eq!(
        spec["draft"].as_str().map(std::path::PathBuf::from),
        Some(small_model()),
        "{report}"
    );
    assert_eq!(spec["draft_max"], 4, "{report}");
    let drafted = spec["drafted"].as_f64().expect("drafted tokens");
    let accepted = spec["accepted"].as_f64().expect("accepted tokens");
    assert!(
        drafted > 0.0,
        "llama-server drafted with --model-draft: {report}"
    );
    assert!(accepted <= drafted, "{report}");
    assert!(
        accepted > 0.0,
        "a model drafting for itself has drafts accepted: {report}"
    );
    assert!(
        spec["generate_tps"].as_f64().is_some_and(|v| v > 0.0),
        "{report}"
    );
    let equal = spec["equal_to_alone"].as_str().expect("n/prompts");
    assert!(equal.ends_with("/3"), "{report}");
}
