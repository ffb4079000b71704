//! Tidy: the house rules that keep the code base navigable, checked on every test run. Its own
//! test target, linking none of the crates, so a change does not relink the integration binary
//! for it (cargo still builds the `crossfile` binary before any integration target).

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

/// One Rust source of the workspace.
struct Source {
    /// From the project's root: `crates/engine/src/index/mod.rs`, `src/cli/mod.rs`.
    path: String,
    /// Under its crate's `src/`: `index/mod.rs`.
    rel: String,
    text: String,
}

/// The crates' source folders: the binary's `src/` and each `crates/*/src/`.
fn source_roots() -> Vec<PathBuf> {
    let mut roots = vec![project().join("src")];
    let mut crates: Vec<PathBuf> = std::fs::read_dir(project().join("crates"))
        .expect("crates/")
        .flatten()
        .map(|e| e.path().join("src"))
        .filter(|p| p.is_dir())
        .collect();
    crates.sort();
    roots.extend(crates);
    roots
}

fn sources() -> Vec<Source> {
    let mut out = Vec::new();
    for root in source_roots() {
        let mut files = Vec::new();
        rust_files(&root, &mut files);
        files.sort();
        for p in files {
            let slash = |p: &Path| p.to_string_lossy().replace('\\', "/");
            out.push(Source {
                path: slash(p.strip_prefix(project()).expect("inside")),
                rel: slash(p.strip_prefix(&root).expect("inside")),
                text: std::fs::read_to_string(&p).expect("utf-8 source"),
            });
        }
    }
    out
}

/// The path of the server crate's `lsp/` folder.
fn lsp_dir() -> PathBuf {
    project().join("crates/server/src/lsp")
}

#[test]
fn every_source_file_opens_with_a_doc_line_and_stays_under_600_lines() {
    let mut problems = Vec::new();
    for Source { path, text, .. } in sources() {
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
        .filter(|s| {
            !s.path.starts_with("crates/server/src/lsp/")
                && (s.text.contains("tower_lsp") || s.text.contains("lsp_types"))
        })
        .map(|s| s.path)
        .collect();
    assert!(
        leaks.is_empty(),
        "LSP types outside the server's lsp/: {leaks:?}"
    );
}

/// Every dependency the workspace declares (`[workspace.dependencies]`, the crates' own included)
/// has a line in ARCHITECTURE.md saying why it is there.
#[test]
fn every_dependency_is_explained_in_architecture_md() {
    let manifest: toml::Table =
        toml::from_str(&std::fs::read_to_string(project().join("Cargo.toml")).expect("Cargo.toml"))
            .expect("toml");
    let doc = std::fs::read_to_string(project().join("ARCHITECTURE.md")).expect("ARCHITECTURE.md");
    let declared: Vec<String> = manifest
        .get("workspace")
        .and_then(|w| w.get("dependencies"))
        .and_then(|d| d.as_table())
        .map(|t| t.keys().cloned().collect())
        .unwrap_or_default();
    assert!(declared.len() > 40, "read {declared:?}");
    let missing: Vec<&String> = declared
        .iter()
        .filter(|name| !doc.contains(&format!("`{name}`")))
        .collect();
    assert!(
        missing.is_empty(),
        "dependencies without a line in ARCHITECTURE.md: {missing:?}"
    );
}

/// How ARCHITECTURE.md names a source: its path under its crate's `src/` (`report/html/charts.rs`),
/// a folder's `mod.rs` by the folder (`report/html/`).
fn map_name(rel: &str) -> String {
    match rel.strip_suffix("/mod.rs") {
        Some(folder) => format!("{folder}/"),
        None => rel.to_string(),
    }
}

/// Whether `doc` has `name` as a whole path: not inside a longer one (`html/charts.rs` is not
/// named by `report/html/charts.rs`, nor `retrieve/` by `retrieve/bm25.rs`).
fn names_path(doc: &str, name: &str) -> bool {
    let path_char = |c: char| c.is_alphanumeric() || matches!(c, '_' | '-' | '/' | '.');
    doc.match_indices(name).any(|(at, _)| {
        let before = doc[..at].chars().next_back();
        let mut after = doc[at + name.len()..].chars();
        // A full stop ends a sentence, not a path, unless a name goes on after it.
        let goes_on = match after.next() {
            Some('.') => after.next().is_some_and(char::is_alphanumeric),
            next => next.is_some_and(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | '/')),
        };
        !before.is_some_and(path_char) && !goes_on
    })
}

#[test]
fn a_map_name_is_a_whole_path() {
    assert_eq!(map_name("report/html/mod.rs"), "report/html/");
    assert_eq!(map_name("report/html/charts.rs"), "report/html/charts.rs");
    assert_eq!(map_name("lib.rs"), "lib.rs");
    let doc = "`report/html/charts.rs`, `retrieve/bm25.rs` and `lsp/ext.rs`.";
    assert!(names_path(doc, "report/html/charts.rs") && names_path(doc, "lsp/ext.rs"));
    assert!(!names_path(doc, "html/charts.rs"));
    assert!(!names_path(doc, "retrieve/"));
    assert!(!names_path(doc, "lsp/ext"));
    assert!(names_path("the folder retrieve/.", "retrieve/"));
}

/// ARCHITECTURE.md stays a reference a newcomer reads whole: at most 500 lines.
#[test]
fn architecture_md_stays_under_500_lines() {
    let doc = std::fs::read_to_string(project().join("ARCHITECTURE.md")).expect("ARCHITECTURE.md");
    let lines = doc.lines().count();
    assert!(
        lines <= 500,
        "ARCHITECTURE.md has {lines} lines (at most 500: say it shorter, or move detail to docs/)"
    );
}

/// ARCHITECTURE.md's code map names every source file of every crate by its path under the
/// crate's `src/` (a folder's `mod.rs` by the folder), so a new file fails here until the map
/// says what it is for.
#[test]
fn architecture_md_names_every_source_file() {
    let doc = std::fs::read_to_string(project().join("ARCHITECTURE.md")).expect("ARCHITECTURE.md");
    let missing: Vec<String> = sources()
        .iter()
        .filter(|s| !names_path(&doc, &map_name(&s.rel)))
        .map(|s| format!("{}: name it as `{}`", s.path, map_name(&s.rel)))
        .collect();
    assert!(
        missing.is_empty(),
        "ARCHITECTURE.md does not name these source files (each by its path under its crate's \
         `src/`, a folder's `mod.rs` by the folder) in the code map:\n{}",
        missing.join("\n")
    );
}

/// The first path segment of every `crate::…` path in `text` (`crate::{a, b::c}` gives `a`, `b`).
fn crate_modules(text: &str) -> Vec<String> {
    modules_after(text, "crate::")
}

/// The first path segment after each `prefix` (`crate::`, `super::`), groups read whole.
fn modules_after(text: &str, prefix: &str) -> Vec<String> {
    let ident = |s: &str| -> String {
        s.trim_start()
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect()
    };
    let mut found = Vec::new();
    for (at, _) in text.match_indices(prefix) {
        let rest = &text[at + prefix.len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let mut depth = 0usize;
            let mut start = 0;
            for (i, c) in group.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => {
                        found.push(ident(&group[start..i]));
                        break;
                    }
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        found.push(ident(&group[start..i]));
                        start = i + 1;
                    }
                    _ => {}
                }
            }
        } else {
            found.push(ident(rest));
        }
    }
    found.retain(|m| !m.is_empty());
    found
}

/// Across crates the compiler holds the arrows (engine ← bench ← server ← crossfile); within a
/// crate, dependencies point one way too: in the engine, the pipeline's modules ← config ←
/// complete; in the bench crate, harness / deps / lock ← bench ← report / mine ← arena ← perf; in
/// the server, live ← lsp. A module (its tests and doc links included) imports nothing of a layer
/// above it; `report` and `mine` do not use each other, nor do `arena` and `perf`.
#[test]
fn layers_import_only_downwards() {
    // Each module (modules are named once across the crates) and the modules of its own crate
    // it must not use; arrows to other crates are the compiler's.
    const ENGINE_BELOW_CONFIG: &[&str] = &[
        "index",
        "retrieve",
        "prompt",
        "backend",
        "chunk",
        "choice",
        "lang",
        "terms",
        "tokenize",
        "postprocess",
        "metrics",
        "workspace",
        "model",
        "http",
        "seeded",
        "progress",
        "memory",
        "fixture",
    ];
    const BENCH_BELOW_RUNNER: &[&str] = &["harness", "deps", "lock"];
    const ABOVE: &[(&str, &[&str])] = &[
        ("config", &["complete"]),
        ("bench", &["report", "mine", "arena", "perf"]),
        ("report", &["mine", "arena", "perf"]),
        ("mine", &["report", "arena", "perf"]),
        ("arena", &["mine", "perf"]),
        ("perf", &["mine", "arena"]),
        ("live", &["lsp"]),
    ];
    let mut problems = Vec::new();
    for Source { path, rel, text } in sources() {
        let module = rel.split(['/', '.']).next().unwrap_or("").to_string();
        let forbidden: &[&str] = if ENGINE_BELOW_CONFIG.contains(&module.as_str()) {
            &["config", "complete"]
        } else if BENCH_BELOW_RUNNER.contains(&module.as_str()) {
            &["bench", "report", "mine", "arena", "perf"]
        } else if let Some((_, above)) = ABOVE.iter().find(|(layer, _)| *layer == module) {
            above
        } else {
            continue;
        };
        for used in crate_modules(&text) {
            if forbidden.contains(&used.as_str()) {
                problems.push(format!("{path}: the {module} layer uses crate::{used}"));
            }
        }
    }
    problems.dedup();
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn crate_paths_are_read_whole_and_grouped() {
    assert_eq!(
        crate_modules("use crate::a::B;\nuse crate::{c, d::{E, F}, g};\n/// [`crate::h::I`]"),
        ["a", "c", "d", "g", "h"]
    );
}

/// Within `lsp/`, the modules' own arrows form no cycle: state is one place the handlers use,
/// never a module that calls back into them (doc links count; a file's unit tests do not). A
/// module is a file or a folder's `mod.rs` (`completion`, `completion::refresh`); `super::` and
/// `crate::lsp::` paths are its arrows.
#[test]
fn lsp_modules_use_each_other_one_way() {
    let dir = lsp_dir();
    let mut files = Vec::new();
    rust_files(&dir, &mut files);
    let module = |p: &Path| -> Option<String> {
        let rel = p.strip_prefix(&dir).ok()?.with_extension("");
        let mut parts: Vec<String> = rel
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        if parts.last().is_some_and(|p| p == "mod") {
            parts.pop();
        }
        Some(parts.join("::"))
    };
    let names: std::collections::BTreeSet<String> =
        files.iter().filter_map(|p| module(p)).collect();
    // The longest module path `path` starts with.
    let resolve = |path: &str| -> Option<String> {
        let parts: Vec<&str> = path.split("::").filter(|p| !p.is_empty()).collect();
        (1..=parts.len())
            .rev()
            .map(|n| parts[..n].join("::"))
            .find(|candidate| names.contains(candidate))
    };
    let path_after = |text: &str, at: usize| -> String {
        text[at..]
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == ':')
            .collect()
    };
    let mut uses = std::collections::BTreeMap::new();
    for path in &files {
        let Some(name) = module(path) else { continue };
        if name.is_empty() {
            continue;
        }
        let parent = name.rsplit_once("::").map_or("", |(p, _)| p).to_string();
        let text = std::fs::read_to_string(path).expect("utf-8 source");
        let code = text.split("#[cfg(test)]\nmod tests").next().unwrap_or("");
        let mut used: Vec<String> = Vec::new();
        let under_parent = |path: &str| {
            if parent.is_empty() {
                path.to_string()
            } else {
                format!("{parent}::{path}")
            }
        };
        for (at, _) in code.match_indices("super::") {
            let start = at + "super::".len();
            if code[start..].starts_with('{') {
                // A group: each of its paths.
                let group = &code[start + 1..];
                let end = group.find('}').unwrap_or(group.len());
                for part in group[..end].split(',') {
                    used.extend(resolve(&under_parent(&path_after(part.trim_start(), 0))));
                }
            } else {
                used.extend(resolve(&under_parent(&path_after(code, start))));
            }
        }
        for (at, _) in code.match_indices("crate::lsp::") {
            used.extend(resolve(&path_after(code, at + "crate::lsp::".len())));
        }
        used.retain(|m| *m != name && !m.is_empty());
        used.sort();
        used.dedup();
        uses.insert(name, used);
    }
    // Depth-first search for a back edge, reporting the cycle it closes.
    fn visit(
        at: &str,
        uses: &std::collections::BTreeMap<String, Vec<String>>,
        path: &mut Vec<String>,
        done: &mut std::collections::BTreeSet<String>,
    ) -> Option<String> {
        if let Some(start) = path.iter().position(|m| m == at) {
            let mut cycle = path[start..].to_vec();
            cycle.push(at.to_string());
            return Some(cycle.join(" → "));
        }
        if done.contains(at) {
            return None;
        }
        path.push(at.to_string());
        for next in uses.get(at).into_iter().flatten() {
            if let Some(cycle) = visit(next, uses, path, done) {
                return Some(cycle);
            }
        }
        path.pop();
        done.insert(at.to_string());
        None
    }
    let mut done = std::collections::BTreeSet::new();
    for name in uses.keys() {
        let cycle = visit(name, &uses, &mut Vec::new(), &mut done);
        assert!(
            cycle.is_none(),
            "lsp/ has a cycle: {}",
            cycle.unwrap_or_default()
        );
    }
    let state = uses.get("state").cloned().unwrap_or_default();
    let handlers = ["completion", "replay", "commands", "lifecycle", "server"];
    assert!(
        state.iter().all(|m| !handlers.iter().any(|h| m == h
            || m.starts_with(&format!("{h}::"))
                && !m.ends_with("::inflight")
                && !m.ends_with("::session"))),
        "state.rs uses no handler: {state:?}"
    );
    assert!(
        uses.contains_key("completion::refresh") && uses.contains_key("state"),
        "modules found: {:?}",
        uses.keys().collect::<Vec<_>>()
    );
}

/// The names a Rust source defines: items (`struct`, `enum`, `trait`, `type`, `fn`, `const`,
/// `static`, `mod`) and enum variants.
fn defined_names(text: &str) -> Vec<String> {
    const KINDS: &[&str] = &[
        "struct", "enum", "trait", "type", "fn", "const", "static", "mod",
    ];
    let mut names = Vec::new();
    let mut in_enum = 0i32;
    for line in text.lines() {
        let words: Vec<&str> = line
            .split(|c: char| !(c.is_alphanumeric() || c == '_'))
            .filter(|w| !w.is_empty())
            .collect();
        let item = words
            .iter()
            .position(|w| KINDS.contains(w))
            .filter(|&at| {
                words[..at]
                    .iter()
                    .all(|w| ["pub", "crate", "super", "async", "unsafe", "const"].contains(w))
            })
            .and_then(|at| words.get(at + 1));
        if let Some(name) = item {
            names.push((*name).to_string());
        }
        if in_enum > 0 {
            let trimmed = line.trim_start();
            if in_enum == 1
                && trimmed.starts_with(|c: char| c.is_ascii_uppercase())
                && let Some(variant) = words.first()
            {
                names.push((*variant).to_string());
            }
            in_enum += line.matches(['{', '(']).count() as i32;
            in_enum -= line.matches(['}', ')']).count() as i32;
        } else if item.is_some() && words.contains(&"enum") && line.trim_end().ends_with('{') {
            in_enum = 1;
        }
    }
    names
}

/// ARCHITECTURE.md names types and functions for a reader to search for: each backticked
/// `Type`, `Type::item` or `module::…::item` of the crate must exist in the workspace's sources (std's and
/// dependencies' items are written with their crate's name first and not checked).
#[test]
fn every_name_architecture_md_gives_exists_in_the_sources() {
    let mut defined = std::collections::BTreeSet::new();
    let mut modules = std::collections::BTreeSet::new();
    for Source { rel, text, .. } in sources() {
        defined.extend(defined_names(&text));
        let rel = rel.trim_end_matches(".rs");
        modules.extend(rel.split('/').filter(|m| *m != "mod").map(str::to_string));
    }
    let doc = std::fs::read_to_string(project().join("ARCHITECTURE.md")).expect("ARCHITECTURE.md");
    // Fenced blocks are diagrams, not names.
    let prose: String = doc.split("```").step_by(2).collect::<Vec<_>>().join("\n");
    let mut stale = Vec::new();
    for span in prose.split('`').skip(1).step_by(2) {
        let name = span.split('(').next().unwrap_or(span).trim();
        let segments: Vec<&str> = name.split("::").collect();
        let is_path = segments
            .iter()
            .all(|s| !s.is_empty() && s.chars().all(|c| c.is_alphanumeric() || c == '_'));
        let Some(first) = segments.first() else {
            continue;
        };
        let typed = first.starts_with(|c: char| c.is_ascii_uppercase())
            && first.chars().any(|c| c.is_ascii_lowercase());
        let crate_path = segments.len() > 1 && (modules.contains(*first) || *first == "crate");
        if !is_path || !(typed || crate_path) {
            continue;
        }
        let missing = segments
            .iter()
            .filter(|s| **s != "crate" && !modules.contains(**s))
            .find(|s| !defined.contains(**s));
        if let Some(segment) = missing {
            stale.push(format!("`{name}` (no `{segment}` in the sources)"));
        }
    }
    stale.sort();
    stale.dedup();
    assert!(
        stale.is_empty(),
        "ARCHITECTURE.md names what no source defines (rename it, or write a dependency's \
         item with its crate's name first):\n{}",
        stale.join("\n")
    );
}

/// The hash `docs/lsp-extensions.md` carries for the server's `lsp/ext.rs` and its submodules: the first 16
/// hex digits of their BLAKE3 (line ends as `\n`).
fn ext_rs_hash() -> String {
    let mut ext = std::fs::read_to_string(lsp_dir().join("ext.rs")).expect("lsp/ext.rs");
    // Its submodules (`lsp/ext/*.rs`) in name order after it.
    let mut parts: Vec<PathBuf> = std::fs::read_dir(lsp_dir().join("ext"))
        .map(|dir| dir.filter_map(|e| e.ok()).map(|e| e.path()).collect())
        .unwrap_or_default();
    parts.sort();
    for part in parts {
        ext.push_str(&std::fs::read_to_string(&part).expect("an ext submodule"));
    }
    let hash = blake3::hash(ext.replace("\r\n", "\n").as_bytes()).to_hex();
    hash[..16].to_string()
}

/// The server's `lsp/ext.rs` holds the protocol's types and `docs/lsp-extensions.md` documents them, with
/// the file's hash: a change to the types fails here until the document is updated (as
/// rust-analyzer keeps its `lsp/ext.rs` and `lsp-extensions.md` in step).
#[test]
fn lsp_extensions_doc_is_in_step_with_ext_rs() {
    let doc = std::fs::read_to_string(project().join("docs/lsp-extensions.md"))
        .expect("docs/lsp-extensions.md");
    let hash = ext_rs_hash();
    assert!(
        doc.contains(&format!("lsp/ext.rs hash: {hash}")),
        "lsp/ext.rs changed: update docs/lsp-extensions.md for it, then set its line \
         `lsp/ext.rs hash: {hash}`"
    );
}

/// Every key an untrusted workspace's `crossfile.toml` may not set (`config/trust.rs`'s
/// `restrict`: where code and keys go, what is loaded, where crossfile writes) is, where the VS
/// Code extension contributes it, machine-scoped (a repository's `.vscode/settings.json` cannot
/// set it) and in `restrictedConfigurations`: the editor's settings cannot redirect code where
/// the server's own file cannot.
#[test]
fn vscode_settings_that_redirect_code_are_machine_scoped_and_restricted() {
    let trust = std::fs::read_to_string(project().join("crates/engine/src/config/trust.rs"))
        .expect("trust.rs");
    let code = trust.split("#[cfg(test)]").next().unwrap_or("");
    // Each `drop("key", …)`, the key possibly on the next line.
    let keys: Vec<&str> = code
        .split("drop(")
        .skip(1)
        .filter_map(|rest| rest.trim_start().strip_prefix('"'))
        .filter_map(|rest| rest.split('"').next())
        .filter(|key| key.contains('.') && !key.starts_with("trust."))
        .collect();
    assert!(
        keys.contains(&"backend.kind") && keys.contains(&"index.cache_dir"),
        "keys read from trust.rs: {keys:?}"
    );
    let package: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(project().join("editors/vscode/package.json")).expect("package"),
    )
    .expect("package.json is JSON");
    let properties = &package["contributes"]["configuration"]["properties"];
    let restricted = package["capabilities"]["untrustedWorkspaces"]["restrictedConfigurations"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let mut contributed = 0;
    for key in &keys {
        let name = format!("crossfile.{key}");
        let Some(setting) = properties.get(&name) else {
            continue;
        };
        contributed += 1;
        assert_eq!(setting["scope"], "machine", "{name} must be machine-scoped");
        assert!(
            restricted.iter().any(|r| r == &serde_json::json!(name)),
            "{name} must be in restrictedConfigurations"
        );
    }
    assert!(
        contributed >= 5,
        "only {contributed} of {keys:?} are contributed"
    );
}
