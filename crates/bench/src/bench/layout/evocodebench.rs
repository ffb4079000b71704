//! An EvoCodeBench case as the model sees it in each of the benchmark's three settings: the
//! signature with a docstring made of the requirement (`baseline`), after the code above it
//! (`local_completion`), and with the code below it as the right context (`local_infilling`,
//! fill-in-the-middle where the model has it), as the benchmark's own language-model prompts
//! lay them out (`LM_inference.py`). The original docstring and the body are never shown; the
//! cursor is on the body's first line, after its indentation. [`lm_body`] is the benchmark's
//! own cut of a model's output to the body.

use std::path::Path;
use std::sync::Arc;

use super::case_view::CaseView;
use crate::bench::BenchError;
use crate::bench::cases::evocodebench::{ExecCase, Requirement};
use crossfile_engine::Position;
use crossfile_engine::complete::{Completer, Protocol};
use crossfile_engine::index::{Index, Snapshot};
use crossfile_engine::lang::Language;
use crossfile_engine::postprocess::Unit;
use crossfile_engine::retrieve::Query;
use crossfile_engine::workspace;

crossfile_engine::choice! {
    /// How much of the case's file the model is shown.
    pub enum Setting {
        /// The signature and the requirement only (for a method, after its `class` line).
        Baseline,
        /// Plus the file's code above the function.
        #[strum(serialize = "local_completion")]
        LocalCompletion,
        /// Plus the file's code below the function, after the cursor.
        #[strum(serialize = "local_infilling")]
        LocalInfilling,
    }
}

/// A case laid out for one setting.
#[derive(Clone, Debug)]
pub struct ExecView {
    /// The case's file, relative to its repository.
    pub path: String,
    /// What the index may hold of the file: the code above, the signature with the
    /// requirement's docstring, and the code below when the setting shows it. Never the body.
    pub indexed: String,
    /// The prompt's left and right contexts, the cursor (its line as in `indexed`), the search
    /// text (the signature and the requirement) and the reference body (for the oracle).
    pub query: Query,
    /// The file as an editor replays the case, whatever the setting: the code above, the
    /// signature, the requirement's docstring and the body's indentation before the cursor; a
    /// line break and the code below after it (the body removed).
    pub buffer: CaseView,
}

/// Lays `case` out from its file under `repos` for `setting`; the file is read as text (CRLF
/// read as LF, as the official harness rewrites it) and bounded by `max_file_bytes`.
pub fn exec_view(
    case: &ExecCase,
    repos: &Path,
    setting: Setting,
    max_file_bytes: u64,
) -> Result<ExecView, BenchError> {
    let problem = |message: String| BenchError::Case {
        id: case.namespace.clone(),
        message,
    };
    let root = repos.join(&case.repository);
    let (abs, path) = workspace::resolve_in_root(&root, Path::new(&case.path))
        .map_err(|e| problem(e.to_string()))?;
    let text = workspace::read_source(&abs, max_file_bytes)
        .map_err(|e| problem(e.to_string()))?
        .text
        .replace("\r\n", "\n");
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let ((sig_first, sig_last), (_, body_last)) = (case.signature, case.body);
    if body_last > lines.len() {
        return Err(problem(format!(
            "{path}: the body's last line {body_last} is past the file's end ({} lines)",
            lines.len()
        )));
    }
    let above = lines[..sig_first - 1].concat();
    let mut signature = lines[sig_first - 1..sig_last].concat();
    if !signature.ends_with('\n') {
        signature.push('\n');
    }
    let below = lines[body_last..].concat();
    let input_code = format!(
        "{signature}{}",
        requirement_docstring(&case.requirement, case.indent)
    );
    let shown_left = format!("{above}{input_code}");
    // The cursor is after the body's indentation: the model writes the body's first statement
    // (a small model given only the docstring's end tends to start another function).
    let pad = " ".repeat(case.indent);
    let left = match setting {
        Setting::Baseline => match class_of(case) {
            Some(class) => format!("class {class}:\n{input_code}{pad}"),
            None => format!("{input_code}{pad}"),
        },
        Setting::LocalCompletion | Setting::LocalInfilling => format!("{shown_left}{pad}"),
    };
    let right = match setting {
        Setting::LocalInfilling => below.clone(),
        Setting::Baseline | Setting::LocalCompletion => String::new(),
    };
    let indexed = format!("{shown_left}{right}");
    let line = u32::try_from(shown_left.matches('\n').count()).unwrap_or(u32::MAX);
    let reference = lines[case.body.0 - 1..body_last].concat();
    let cursor = Position {
        line,
        col: u32::try_from(case.indent).unwrap_or(u32::MAX),
    };
    let buffer = CaseView {
        root,
        path: path.clone(),
        left: format!("{shown_left}{pad}"),
        right: format!("\n{below}"),
        cursor,
    };
    Ok(ExecView {
        query: Query {
            path: path.clone(),
            repo: case.repository.clone(),
            language: Some(Language::Python),
            cursor,
            left,
            right,
            reference: Some(reference),
            provided: None,
            search_text: Some(input_code),
            recent: std::sync::Arc::from([]),
            case_recent: std::sync::Arc::from([]),
        },
        path,
        indexed,
        buffer,
    })
}

/// The requirement as the docstring the benchmark's prompts give the function: its
/// functionality, then its arguments, each line at the body's indentation.
pub fn requirement_docstring(requirement: &Requirement, indent: usize) -> String {
    let pad = " ".repeat(indent);
    let mut out = format!("{pad}\"\"\"\n");
    let text = [
        requirement.functionality.trim_end(),
        requirement.arguments.trim_end(),
    ];
    for line in text.iter().flat_map(|part| part.lines()) {
        if !line.trim().is_empty() {
            out.push_str(&pad);
            out.push_str(line.trim_end());
        }
        out.push('\n');
    }
    out.push_str(&pad);
    out.push_str("\"\"\"\n");
    out
}

/// The body in a model's output, as the benchmark cuts it (`extract_body_lm` of its
/// `process_completion.py`): the output without leading and trailing line breaks, its first
/// line's indentation the body's, and its lines up to the first non-blank one indented less.
/// `output` starts at the start of the body's first line (the cursor's indentation included).
pub fn lm_body(output: &str) -> String {
    let trimmed = output.trim_matches('\u{0407}').trim_matches('\n');
    let lines: Vec<&str> = trimmed.split('\n').collect();
    let indent = |line: &str| -> usize {
        if line.trim().is_empty() {
            // `textwrap.dedent` empties a blank line: all of it counts as indentation.
            line.len()
        } else {
            line.len() - line.trim_start_matches([' ', '\t']).len()
        }
    };
    let body_indent = lines.first().map_or(0, |l| indent(l));
    let mut kept = Vec::new();
    for line in lines {
        if indent(line) >= body_indent || line.trim().is_empty() {
            kept.push(line);
        } else {
            break;
        }
    }
    kept.join("\n")
}

/// The body a model's `raw` output at a cursor after `left` gives, as the benchmark cuts it: the
/// cursor's indentation (part of the body's first line) and the output, through [`lm_body`].
pub fn body_of(left: &str, raw: &str) -> String {
    let indentation = left.rsplit('\n').next().unwrap_or_default();
    lm_body(&format!("{indentation}{raw}"))
}

/// What an editor shows at the cursor for `raw`: [`body_of`] without the indentation the
/// cursor is already after.
pub fn body_at_cursor(left: &str, raw: &str) -> String {
    let indentation = left.rsplit('\n').next().unwrap_or_default();
    let body = body_of(left, raw);
    match body.strip_prefix(indentation) {
        Some(rest) => rest.to_string(),
        None => body,
    }
}

/// The body an editor's buffer holds when `typed` is what it has at the cursor (after the
/// indentation `left` ends with): what the harness splices in.
pub fn body_typed(left: &str, typed: &str) -> String {
    let indentation = left.rsplit('\n').next().unwrap_or_default();
    format!("{indentation}{typed}")
}

/// The class a method's namespace names (its second-last part).
fn class_of(case: &ExecCase) -> Option<&str> {
    if case.kind != "method" {
        return None;
    }
    let mut parts = case.namespace.rsplit('.');
    parts.next();
    parts.next()
}

/// Tokens generated for a body when no limit is given: the benchmark's own (`LM_inference.py`).
pub const EXEC_MAX_NEW_TOKENS: u32 = 500;

/// The completer for a body: the model's raw output (cut to the body as the benchmark cuts it,
/// [`body_of`]), exact (no reused KV cache, no time budget, the benchmark's layout), at most
/// `max_new_tokens` tokens ([`EXEC_MAX_NEW_TOKENS`] when `None`).
pub fn exec_completer(base: &Completer, max_new_tokens: Option<u32>) -> Completer {
    base.exact_for(Protocol {
        unit: Unit::Raw,
        max_new_tokens: Some(max_new_tokens.unwrap_or(EXEC_MAX_NEW_TOKENS)),
    })
}

/// The case's file goes into `index` as `setting` shows it, the snapshot is taken, and the
/// file is read back from disk (also on an error): what a completion of the case works from.
pub fn lay_out_exec(
    case: &ExecCase,
    repos: &Path,
    setting: Setting,
    max_file_bytes: u64,
    index: &Index,
) -> Result<(Arc<Snapshot>, Query), BenchError> {
    let view = exec_view(case, repos, setting, max_file_bytes)?;
    let laid = index.update_text(&view.path, &view.indexed);
    let snapshot = index.snapshot();
    index.update_files(&[&view.path])?;
    laid?;
    Ok((snapshot, view.query))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::cases::evocodebench::Dependency;
    use crossfile_engine::choice::Choice;

    const FILE: &str = "import os\n\n\nclass Store:\n    def get(self, key,\n            default=None):\n        \"\"\"Old docstring.\"\"\"\n        value = self.data.get(key)\n        return value or default\n\n    def size(self):\n        return len(self.data)\n";

    fn case(kind: &str) -> ExecCase {
        ExecCase {
            namespace: "pkg.store.Store.get".into(),
            kind: kind.into(),
            repository: "repo".into(),
            path: "pkg/store.py".into(),
            signature: (5, 6),
            body: (8, 9),
            indent: 8,
            tests: vec!["tests/test_store.py::test_get".into()],
            dependency: Dependency::default(),
            requirement: Requirement {
                functionality: "Looks a key up.\n".into(),
                arguments: ":param key: str.\n\n:return: the value.".into(),
            },
            record_line: 1,
        }
    }

    fn view(setting: Setting, kind: &str) -> ExecView {
        let dir = tempfile::tempdir().expect("tempdir");
        let file = dir.path().join("repo/pkg/store.py");
        std::fs::create_dir_all(file.parent().expect("parent")).expect("mkdir");
        std::fs::write(&file, FILE.replace('\n', "\r\n")).expect("write");
        exec_view(&case(kind), dir.path(), setting, 1 << 20).expect("view")
    }

    const INPUT: &str = "    def get(self, key,\n            default=None):\n        \"\"\"\n        Looks a key up.\n        :param key: str.\n\n        :return: the value.\n        \"\"\"\n";

    #[test]
    fn each_setting_shows_what_the_benchmark_shows() {
        let below = "\n    def size(self):\n        return len(self.data)\n";
        let above = "import os\n\n\nclass Store:\n";

        let pad = "        ";
        let baseline = view(Setting::Baseline, "method");
        assert_eq!(baseline.query.left, format!("class Store:\n{INPUT}{pad}"));
        assert_eq!(baseline.query.right, "");
        assert_eq!(baseline.indexed, format!("{above}{INPUT}"));
        let function = view(Setting::Baseline, "function");
        assert_eq!(function.query.left, format!("{INPUT}{pad}"));

        let completion = view(Setting::LocalCompletion, "method");
        assert_eq!(completion.query.left, format!("{above}{INPUT}{pad}"));
        assert_eq!(completion.query.right, "");

        let infilling = view(Setting::LocalInfilling, "method");
        assert_eq!(infilling.query.left, format!("{above}{INPUT}{pad}"));
        assert_eq!(infilling.query.right, below);
        assert_eq!(infilling.indexed, format!("{above}{INPUT}{below}"));

        for v in [&baseline, &completion, &infilling] {
            // The cursor is the body's first line of the file as shown; the search text is the
            // signature and the requirement; the body and the old docstring are nowhere.
            assert_eq!(v.query.cursor, Position { line: 12, col: 8 });
            assert_eq!(v.query.search_text.as_deref(), Some(INPUT));
            assert_eq!(
                v.query.reference.as_deref(),
                Some("        value = self.data.get(key)\n        return value or default\n")
            );
            for hidden in ["self.data.get(key)", "Old docstring"] {
                assert!(!v.indexed.contains(hidden) && !v.query.left.contains(hidden));
                assert!(!v.query.right.contains(hidden));
            }
        }
    }

    #[test]
    fn a_body_past_the_end_or_a_path_out_of_the_repository_is_refused() {
        let dir = tempfile::tempdir().expect("tempdir");
        let file = dir.path().join("repo/pkg/store.py");
        std::fs::create_dir_all(file.parent().expect("parent")).expect("mkdir");
        std::fs::write(&file, "def f():\n    pass\n").expect("write");
        let error = exec_view(&case("method"), dir.path(), Setting::Baseline, 1 << 20)
            .expect_err("past the end");
        assert!(error.to_string().contains("past the file's end"), "{error}");
        let mut outside = case("method");
        outside.path = "../elsewhere.py".into();
        assert!(exec_view(&outside, dir.path(), Setting::Baseline, 1 << 20).is_err());
    }

    #[test]
    fn the_body_is_cut_as_the_benchmark_cuts_it() {
        // Lines up to the first one indented less than the first.
        assert_eq!(
            lm_body("        x = 1\n\n        return x\n    def next(self):\n        pass\n"),
            "        x = 1\n\n        return x"
        );
        // Leading and trailing line breaks go; deeper lines stay.
        assert_eq!(
            lm_body("\n\n    if a:\n        b()\n    c()\n\n"),
            "    if a:\n        b()\n    c()"
        );
        // A first line at column 0 makes everything the body (as the benchmark's cut does).
        assert_eq!(lm_body("def f():\n    pass"), "def f():\n    pass");
        assert_eq!(lm_body(""), "");
    }

    #[test]
    fn the_editor_shows_the_body_after_the_cursor_and_tests_it_whole() {
        let left = "class A:\n    def f(self):\n        \"\"\"Doc.\"\"\"\n        ";
        let raw = "x = 1\n        return x\n\n    def g(self):\n        pass\n";
        // The blank line before the next method is kept, as the benchmark keeps it.
        assert_eq!(body_of(left, raw), "        x = 1\n        return x\n");
        // Shown after the indentation the cursor is at; typed back there it is the same body.
        let shown = body_at_cursor(left, raw);
        assert_eq!(shown, "x = 1\n        return x\n");
        assert_eq!(body_typed(left, &shown), body_of(left, raw));
        // A blank answer is an empty body.
        assert_eq!(body_at_cursor(left, "\n\n"), "");
    }

    #[test]
    fn the_buffer_is_the_file_with_the_requirement_for_the_body_whatever_the_setting() {
        let below = "\n    def size(self):\n        return len(self.data)\n";
        for &setting in Setting::all() {
            let buffer = view(setting, "method").buffer;
            assert_eq!(
                buffer.left,
                format!("import os\n\n\nclass Store:\n{INPUT}        ")
            );
            assert_eq!(buffer.right, format!("\n{below}"));
            assert_eq!((buffer.cursor.line, buffer.cursor.col), (12, 8));
            assert!(!buffer.text().contains("self.data.get(key)"));
        }
    }

    #[test]
    fn settings_are_named_as_the_benchmark_names_them() {
        let names: Vec<&str> = Setting::all().iter().map(|s| s.name()).collect();
        assert_eq!(names, ["baseline", "local_completion", "local_infilling"]);
        for &setting in Setting::all() {
            assert_eq!(setting.name().parse(), Ok(setting));
        }
        let error = "local".parse::<Setting>().expect_err("no such setting");
        assert!(error.to_string().contains("local_infilling"), "{error}");
        // The VS Code extension's setting offers the same names, in order.
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../editors/vscode/package.json"
        );
        let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
        let package: serde_json::Value = serde_json::from_str(&text).expect("package.json");
        let offered = &package["contributes"]["configuration"]["properties"]["crossfile.replay.evocodebenchSetting"]
            ["enum"];
        assert_eq!(offered, &serde_json::json!(names), "{path}");
    }
}
