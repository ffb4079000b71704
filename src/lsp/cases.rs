//! Reading a cases file for the editor: `crossfile.listCases` (the cases, for a picker) and the
//! loading `crossfile.replayCase` shares. A bad record is skipped and shown to the user with its
//! file, line and field, as `bench run` reports it.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::Deserialize;
use serde_json::{Value, json};
use tower_lsp::lsp_types::MessageType;

use super::error::ServeError;
use super::state::State;
use crate::bench::{Case, CaseFormat, CaseProblem, load_cases};

/// `crossfile.listCases`'s arguments.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ListArgs {
    /// The cases file (CrossCodeEval or RepoEval jsonl).
    pub cases: PathBuf,
    /// `cceval` or `repoeval`; told from the first record when absent.
    pub format: Option<String>,
}

/// The usable cases of a file.
pub struct Loaded {
    pub file: PathBuf,
    pub cases: Vec<Case>,
}

/// `crossfile.listCases`: every usable case of the file, in order, as
/// `{id, index, language, repository, path, line}` (`line` 1-based).
pub async fn list_cases(state: &Arc<State>, args: ListArgs) -> Result<Value, ServeError> {
    let file = resolve(state, &args.cases);
    let loaded = load(state, file, args.format.as_deref()).await?;
    let rows: Vec<Value> = loaded
        .cases
        .iter()
        .enumerate()
        .map(|(index, case)| {
            json!({
                "id": case.id,
                "index": index,
                "language": case.language.name(),
                "repository": case.repository,
                "path": case.path,
                "line": case.line + 1,
            })
        })
        .collect();
    Ok(Value::Array(rows))
}

/// `path` as the client meant it: a relative path is taken from the first workspace folder.
pub fn resolve(state: &State, path: &Path) -> PathBuf {
    match state.folders().first() {
        Some(folder) if path.is_relative() => folder.root.join(path),
        _ => path.to_path_buf(),
    }
}

/// Loads a cases file (`format` told from the first record when `None`). Bad records are skipped;
/// each is logged and the user is shown how many and the first.
pub async fn load(
    state: &State,
    file: PathBuf,
    format: Option<&str>,
) -> Result<Loaded, ServeError> {
    let format = format
        .map(|name| {
            CaseFormat::parse(name).map_err(|e| ServeError::request(format!("format: {e}")))
        })
        .transpose()?;
    let max_file_bytes = state.engine_settings().index.workspace.max_file_bytes;
    let (file, cases, problems) = tokio::task::spawn_blocking(move || {
        let format = match format {
            Some(format) => format,
            None => CaseFormat::detect(&file)?.ok_or_else(|| {
                ServeError::request(format!(
                    "{}: cannot tell the cases' format: give format (cceval or repoeval)",
                    file.display()
                ))
            })?,
        };
        let loaded = load_cases(&file, format, max_file_bytes)?;
        Ok::<_, ServeError>((file, loaded.cases, loaded.problems))
    })
    .await
    .map_err(ServeError::task("loading the cases"))??;
    report_problems(state, &problems).await;
    if cases.is_empty() {
        return Err(ServeError::request(format!(
            "{}: no usable case",
            file.display()
        )));
    }
    Ok(Loaded { file, cases })
}

/// Logs every skipped record and shows the user the first few, each with its file, line and
/// field.
async fn report_problems(state: &State, problems: &[CaseProblem]) {
    /// Records named in the message; the rest are counted (and all are in the log).
    const SHOWN: usize = 5;
    for problem in problems {
        tracing::warn!("skipped: {problem}");
    }
    if problems.is_empty() {
        return;
    }
    let mut message = format!("crossfile: skipped {} bad case record(s):", problems.len());
    for problem in problems.iter().take(SHOWN) {
        message.push_str(&format!("\n{problem}"));
    }
    if problems.len() > SHOWN {
        message.push_str(&format!(
            "\n… and {} more (see the log)",
            problems.len() - SHOWN
        ));
    }
    state
        .client
        .show_message(MessageType::WARNING, message)
        .await;
}
