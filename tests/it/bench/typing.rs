//! `crossfile bench typing` on a small real workspace, end to end: the real binary types into
//! the real server over stdio with the real default model, and the same keystrokes go through
//! llama-server as the anchor, and two answered pauses again through a server with reuse off. Its
//! figures are for docs/performance.md; here the counts and the JSON's shape are checked, so the command
//! cannot rot.

use std::process::Command;

use serde_json::Value;

use crate::backends::servers::llama_server_binary;
use crate::bench::perf_harness::WORKSPACE;
use crate::support::{Workspace, small_model, test_user_config};

#[test]
fn typing_is_measured_through_the_server_and_through_llama_server() {
    let ws = Workspace::new(WORKSPACE);
    let output = Command::new(env!("CARGO_BIN_EXE_crossfile"))
        .args(["bench", "typing", "--workspace"])
        .arg(ws.root())
        .args(["--sessions", "2", "--lines", "2", "--seed", "5", "--json"])
        .args(["--reuse-off", "2"])
        .arg("--model")
        .arg(small_model())
        .arg("--cache-dir")
        .arg(ws.cache.path())
        .arg("--llama-server")
        .arg(llama_server_binary())
        .env("CROSSFILE_CONFIG", test_user_config(ws.cache.path()))
        .output()
        .expect("run bench typing");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    let report: Value = serde_json::from_slice(&output.stdout).expect("one JSON document");
    assert_eq!(report["sessions"], 2, "{report}");
    // The model given is the one measured: the servers were asked which GGUF they run (the
    // measured server once ran its default model whatever `--model` said).
    assert_eq!(
        report["model"].as_str().map(std::path::PathBuf::from),
        Some(small_model()),
        "{report}"
    );
    for side in [&report, &report["anchor"]] {
        let count = |key: &str| {
            side[key]
                .as_u64()
                .unwrap_or_else(|| panic!("{key}: {side}"))
        };
        let keystrokes = count("keystrokes");
        assert!(keystrokes >= 24, "{side}");
        assert_eq!(count("requests"), keystrokes, "a request per keystroke");
        assert_eq!(
            count("answered") + count("cancelled") + count("errors"),
            keystrokes,
            "every request accounted for: {side}"
        );
        assert_eq!(count("errors"), 0, "{side}");
        let pauses = count("pauses");
        assert!(pauses > 0 && pauses < keystrokes, "{side}");
        let share = |key: &str| {
            side[key]
                .as_f64()
                .unwrap_or_else(|| panic!("{key}: {side}"))
        };
        let (within_300, within_1000) = (share("within_300ms"), share("within_1000ms"));
        assert!((0.0..=1.0).contains(&within_300), "{side}");
        assert!((0.0..=1.0).contains(&within_1000), "{side}");
        assert!(within_300 <= within_1000, "{side}");
        let tokens = &side["prompt_tokens"];
        assert!(count("completions") > 0, "{side}");
        assert!(
            tokens["reused"].as_u64().unwrap_or(0) + tokens["evaluated"].as_u64().unwrap_or(0) > 0,
            "{side}"
        );
        for key in ["p50", "p95", "p99"] {
            let value = &side["latency_ms"][key];
            assert!(
                value.is_null() || value.as_f64().is_some_and(|v| v >= 0.0),
                "{side}"
            );
        }
        let rss = &side["rss_mb"];
        assert!(rss["start"].as_f64().is_some_and(|v| v > 50.0), "{side}");
        // Both present (compared as options, two missing values were equal).
        let (peak, end) = (rss["peak"].as_f64(), rss["end"].as_f64());
        assert!(peak.expect("rss peak") >= end.expect("rss end"), "{side}");
        let es = side["es"].as_f64().expect("a mean edit similarity");
        assert!((0.0..=1.0).contains(&es), "{side}");
    }
    assert_eq!(report["backend"], "embedded");
    assert_eq!(report["anchor"]["backend"], "llama-server");
    assert_eq!(
        report["keystrokes"], report["anchor"]["keystrokes"],
        "the same keystrokes each way"
    );
    // Typing along a line reuses the kept cache: most prompt tokens are not read again.
    let tokens = &report["prompt_tokens"];
    assert!(
        tokens["reused"].as_u64().expect("reused")
            > tokens["evaluated"].as_u64().expect("evaluated"),
        "{report}"
    );
    assert!(
        stderr.contains("bench typing: "),
        "progress on stderr: {stderr}"
    );
    let off = &report["reuse_off"];
    assert_eq!(off["pauses"], 2, "{report}");
    for key in ["es_live", "es_reuse_off"] {
        let es = off[key].as_f64().expect("a mean edit similarity");
        assert!((0.0..=1.0).contains(&es), "{report}");
    }
    assert!(off["same"].as_u64().is_some_and(|n| n <= 2), "{report}");
    let (low, high) = (
        off["difference"]["low"].as_f64(),
        off["difference"]["high"].as_f64(),
    );
    assert!(
        low <= high && low >= Some(-1.0) && high <= Some(1.0),
        "{report}"
    );
    assert!(
        stderr.contains("reuse off: 2 of 2 pauses answered again"),
        "{stderr}"
    );
}
