//! Reading a cases file for the editor: `crossfile.listCases` (the cases, for a picker) and the
//! loading `crossfile.replayCase` shares. A bad record is skipped and shown to the user with its
//! file, line and field, as `bench run` reports it. CrossCodeEval, RepoEval, history and
//! EvoCodeBench files are read, each told from its first record when the format is not given.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use tower_lsp::lsp_types::MessageType;

use super::session::{Cases, ExecCases};
use crate::lsp::error::ServeError;
use crate::lsp::ext::{CaseRow, ListCasesParams};
use crate::lsp::state::State;
use crossfile_bench::bench::cases::evocodebench::{is_exec_cases_file, load_exec_cases};
use crossfile_bench::bench::layout::evocodebench::Setting;
use crossfile_bench::bench::scoring::envs::EnvStore;
use crossfile_bench::bench::{BenchFormat, CaseFormat, CaseProblem, ReplayFormat, load_cases};
use crossfile_engine::choice::Choice;

/// The usable cases of a file.
pub struct Loaded {
    pub file: PathBuf,
    pub cases: Cases,
}

/// How EvoCodeBench cases are replayed: the setting their prompts are laid out for and where
/// their environments are.
pub struct ExecChoice {
    pub setting: Setting,
    pub envs: EnvStore,
    pub max_new_tokens: Option<u32>,
}

impl ExecChoice {
    /// `setting` (`local_completion` when `None`), `envs` (the cache's, where `bench
    /// setup-env` makes them, when `None`) and the tokens generated for a body.
    pub fn new(
        state: &State,
        setting: Option<&str>,
        envs: Option<PathBuf>,
        max_new_tokens: Option<u32>,
    ) -> Result<ExecChoice, ServeError> {
        let setting = setting
            .map(|name| {
                name.parse::<Setting>()
                    .map_err(|e| ServeError::request(format!("setting: {e}")))
            })
            .transpose()?
            .unwrap_or(Setting::LocalCompletion);
        let envs = match envs {
            Some(dir) => EnvStore::at(resolve(state, &dir)),
            None => EnvStore::new(&state.engine_settings().index.cache_dir, "evocodebench"),
        };
        Ok(ExecChoice {
            setting,
            envs,
            max_new_tokens,
        })
    }
}

/// `crossfile.listCases`: every usable case of the file, in order, as
/// `{id, index, language, repository, path, line}` (`line` 1-based; a history case's
/// `category` too).
pub async fn list_cases(
    state: &Arc<State>,
    args: ListCasesParams,
) -> Result<Vec<CaseRow>, ServeError> {
    let file = resolve(state, &args.cases);
    let exec = ExecChoice::new(state, None, None, None)?;
    let loaded = load(state, file, args.format.as_deref(), exec).await?;
    let rows = match &loaded.cases {
        Cases::Text(cases) => cases
            .iter()
            .enumerate()
            .map(|(index, case)| CaseRow {
                id: case.id.clone(),
                index,
                language: case.language.name().to_string(),
                repository: case.repository.clone(),
                path: case.path.clone(),
                line: case.line + 1,
                kind: None,
                category: case.category.map(|c| c.name().to_string()),
            })
            .collect(),
        Cases::Exec(exec) => exec
            .cases
            .iter()
            .enumerate()
            .map(|(index, case)| CaseRow {
                id: case.namespace.clone(),
                index,
                language: "python".to_string(),
                repository: case.repository.clone(),
                path: case.path.clone(),
                line: u32::try_from(case.body.0).unwrap_or(u32::MAX),
                kind: Some(case.kind.clone()),
                category: None,
            })
            .collect(),
    };
    Ok(rows)
}

/// `path` as the client meant it: a relative path is taken from the first workspace folder.
pub fn resolve(state: &State, path: &Path) -> PathBuf {
    match state.folders().first() {
        Some(folder) if path.is_relative() => folder.root.join(path),
        _ => path.to_path_buf(),
    }
}

/// The format named (`format`): an unknown name lists the names; CoderEval's verdicts cannot be
/// replayed.
fn parse_format(name: &str) -> Result<ReplayFormat, ServeError> {
    let named: BenchFormat = name
        .parse()
        .map_err(|e| ServeError::request(format!("format: {e}")))?;
    named
        .replay()
        .map_err(|e| ServeError::request(format!("format: {e}")))
}

/// The format of `file`'s first record.
fn detect_format(file: &std::path::Path) -> Result<ReplayFormat, ServeError> {
    if let Some(format) = CaseFormat::detect(file)? {
        return Ok(ReplayFormat::Cases(format));
    }
    if is_exec_cases_file(file)? {
        return Ok(ReplayFormat::Execution);
    }
    let replayable: Vec<&str> = BenchFormat::all()
        .iter()
        .filter(|f| f.replay().is_ok())
        .map(|f| f.name())
        .collect();
    Err(ServeError::request(format!(
        "{}: cannot tell the cases' format: give format (one of {})",
        file.display(),
        replayable.join(", ")
    )))
}

/// Loads a cases file (`format` told from the first record when `None`; EvoCodeBench cases are
/// replayed as `exec` says). Bad records are skipped; each is logged and the user is shown how
/// many and the first.
pub async fn load(
    state: &State,
    file: PathBuf,
    format: Option<&str>,
    exec: ExecChoice,
) -> Result<Loaded, ServeError> {
    let format = format.map(parse_format).transpose()?;
    let max_file_bytes = state.engine_settings().index.workspace.max_file_bytes;
    let (file, cases, problems) = tokio::task::spawn_blocking(move || {
        let format = match format {
            Some(format) => format,
            None => detect_format(&file)?,
        };
        let (cases, problems) = match format {
            ReplayFormat::Cases(format) => {
                let loaded = load_cases(&file, format, max_file_bytes)?;
                (Cases::Text(loaded.cases), loaded.problems)
            }
            ReplayFormat::Execution => {
                let loaded = load_exec_cases(&file)?;
                let cases = Cases::Exec(ExecCases {
                    cases: loaded.cases,
                    setting: exec.setting,
                    envs: exec.envs,
                    max_new_tokens: exec.max_new_tokens,
                });
                (cases, loaded.problems)
            }
        };
        Ok::<_, ServeError>((file, cases, problems))
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
