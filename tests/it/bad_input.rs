//! Bad input gets a clear error or is skipped, never a panic: unreadable, invalid UTF-8, huge,
//! binary, a symlink loop, a cursor past the end, an unknown retriever, a path outside the root.

use crate::support::{Workspace, crossfile, stderr, stdout};

fn workspace() -> Workspace {
    Workspace::new(
        "//- main.py\nimport helpers\nhelpers.shared_helper_name(\n//- helpers.py\ndef shared_helper_name():\n    return 1\n",
    )
}

#[test]
fn broken_files_are_skipped_and_the_rest_is_indexed() {
    let ws = workspace();
    let root = ws.root();
    std::fs::write(
        root.join("latin1.py"),
        b"def shared_helper_name_latin():\n    return 'caf\xe9'\n",
    )
    .expect("write");
    std::fs::write(root.join("binary.py"), b"def x():\0\0\0\n").expect("write");
    let big = "x = 1  # shared_helper_name\n".repeat(50 * 1024 * 1024 / 28);
    std::fs::write(root.join("huge.py"), big).expect("write");
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(root.join("missing-target.py"), root.join("dangling.py"))
            .expect("symlink");
        std::os::unix::fs::symlink(root, root.join("loop")).expect("symlink loop");
        std::os::unix::fs::symlink("/etc", root.join("outside")).expect("symlink out");
    }
    std::fs::create_dir(root.join("folder.py")).expect("a directory named like a file");

    let out = crossfile(
        &["index", root.to_str().expect("utf-8"), "--json"],
        ws.cache.path(),
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let summary: serde_json::Value = serde_json::from_str(&stdout(&out)).expect("json");
    assert_eq!(
        summary["files"], 3,
        "main, helpers and the latin-1 file: {summary}"
    );
    assert!(
        summary["skipped"].as_u64().unwrap_or(0) >= 3,
        "binary, huge and dangling are skipped: {summary}"
    );

    // `bm25`, whose terms split names, finds the latin-1 file's `shared_helper_name_latin`.
    let out = crossfile(
        &[
            "retrieve",
            root.to_str().expect("utf-8"),
            "--at",
            "main.py:2:27",
            "--retriever",
            "bm25",
            "--json",
        ],
        ws.cache.path(),
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let doc: serde_json::Value = serde_json::from_str(&stdout(&out)).expect("json");
    let paths: Vec<&str> = doc["hits"]
        .as_array()
        .expect("hits")
        .iter()
        .filter_map(|h| h["path"].as_str())
        .collect();
    assert!(
        paths.contains(&"helpers.py") && paths.contains(&"latin1.py"),
        "{paths:?}"
    );
    let latin = doc["hits"]
        .as_array()
        .expect("hits")
        .iter()
        .find(|h| h["path"] == "latin1.py")
        .expect("latin1 hit");
    assert!(
        latin["text"].as_str().unwrap_or("").contains('\u{fffd}'),
        "invalid UTF-8 is decoded with U+FFFD"
    );
}

#[test]
fn bad_cursors_and_specs_are_clear_errors() {
    let ws = workspace();
    let root = ws.root().to_str().expect("utf-8");
    std::fs::write(ws.root().join("binary.py"), b"\0\0").expect("write");
    // A bad value of a typed flag (a retriever spec) is bad usage, exit code 2; the rest fail
    // where the command runs, exit code 1.
    let cases: &[(&[&str], i32, &str)] = &[
        (&["--at", "main.py:99:1"], 1, "main.py:99:1"),
        (&["--at", "main.py:2:999"], 1, "main.py:2:999"),
        (&["--at", "main.py:0:1"], 1, "1-based"),
        (&["--at", "main.py"], 1, "FILE:LINE:COL"),
        (&["--at", "nosuch.py:1:1"], 1, "nosuch.py"),
        (&["--at", "../escape.py:1:1"], 1, "outside the workspace"),
        (&["--at", "binary.py:1:1"], 1, "binary"),
        (
            &["--at", "main.py:1:1", "--retriever", "nosuch"],
            2,
            "bm25-cceval-rg1",
        ),
        (
            &["--at", "main.py:1:1", "--retriever", "mmr:bm25:7"],
            2,
            "hybrid:",
        ),
        (
            &["--at", "main.py:1:1", "--top-k", "0"],
            1,
            "retrieve.top_k",
        ),
    ];
    for (args, code, needle) in cases {
        let mut all = vec!["retrieve", root];
        all.extend_from_slice(args);
        let out = crossfile(&all, ws.cache.path());
        let err = stderr(&out);
        assert_eq!(
            out.status.code(),
            Some(*code),
            "{args:?} should fail with exit code {code}: {err}"
        );
        assert!(
            err.contains(needle),
            "{args:?}: the error should mention {needle:?}: {err}"
        );
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        assert!(
            stdout(&out).is_empty(),
            "{args:?}: nothing on stdout on failure"
        );
    }
}

/// A benchmark format is one name list (`BenchFormat`): an unknown name lists them all, and a
/// format a command cannot use is refused with the reason, before any file is read.
#[test]
fn a_format_a_command_cannot_use_is_refused_with_the_reason() {
    let cache = tempfile::tempdir().expect("tempdir");
    let out_file = cache.path().join("run.jsonl");
    let out = out_file.to_str().expect("utf-8");
    let run = |format: &str| {
        crossfile(
            &[
                "bench",
                "run",
                "--format",
                format,
                "--cases",
                "missing.jsonl",
            ]
            .into_iter()
            .chain(["--retriever", "none", "--out", out])
            .collect::<Vec<_>>(),
            cache.path(),
        )
    };
    let refused = run("codereval");
    assert_eq!(refused.status.code(), Some(2), "bad usage");
    assert!(
        stderr(&refused)
            .contains("codereval cases are recorded verdicts: `bench score` scores them"),
        "{}",
        stderr(&refused)
    );
    let unknown = run("humaneval");
    assert_eq!(unknown.status.code(), Some(2));
    assert!(
        stderr(&unknown).contains("cceval, repoeval, history, evocodebench, codereval"),
        "{}",
        stderr(&unknown)
    );
    assert!(!out_file.exists(), "nothing written");
}
