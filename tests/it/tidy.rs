//! Tidy: the house rules that keep the code base navigable, checked on every test run.

use std::path::{Path, PathBuf};

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("read dir").flatten() {
        let path = entry.path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

fn project() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn sources() -> Vec<(String, String)> {
    let mut files = Vec::new();
    rust_files(&project().join("src"), &mut files);
    files.sort();
    files
        .into_iter()
        .map(|p| {
            let rel = p
                .strip_prefix(project())
                .expect("inside")
                .to_string_lossy()
                .replace('\\', "/");
            (rel, std::fs::read_to_string(&p).expect("utf-8 source"))
        })
        .collect()
}

#[test]
fn every_source_file_opens_with_a_doc_line_and_stays_under_600_lines() {
    let mut problems = Vec::new();
    for (path, text) in sources() {
        if !text.starts_with("//!") {
            problems.push(format!(
                "{path}: does not open with a `//!` line naming its job"
            ));
        }
        let lines = text.lines().count();
        if lines > 600 {
            problems.push(format!(
                "{path}: {lines} lines (at most 600; split it by concept)"
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn protocol_types_stay_in_the_lsp_module() {
    let leaks: Vec<String> = sources()
        .into_iter()
        .filter(|(path, text)| {
            !path.starts_with("src/lsp/")
                && (text.contains("tower_lsp") || text.contains("lsp_types"))
        })
        .map(|(path, _)| path)
        .collect();
    assert!(leaks.is_empty(), "LSP types outside src/lsp: {leaks:?}");
}

#[test]
fn every_dependency_is_explained_in_architecture_md() {
    let manifest: toml::Table =
        toml::from_str(&std::fs::read_to_string(project().join("Cargo.toml")).expect("Cargo.toml"))
            .expect("toml");
    let doc = std::fs::read_to_string(project().join("ARCHITECTURE.md")).expect("ARCHITECTURE.md");
    let mut missing = Vec::new();
    for section in ["dependencies", "dev-dependencies"] {
        for name in manifest
            .get(section)
            .and_then(|d| d.as_table())
            .map(|t| t.keys().cloned().collect::<Vec<_>>())
            .unwrap_or_default()
        {
            if !doc.contains(&format!("`{name}`")) {
                missing.push(name);
            }
        }
    }
    assert!(
        missing.is_empty(),
        "dependencies without a line in ARCHITECTURE.md: {missing:?}"
    );
}
