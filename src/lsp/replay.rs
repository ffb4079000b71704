//! Replaying benchmark cases in the editor: `crossfile.replayCase`, `crossfile.nextCase`,
//! and `crossfile.previousCase` (`crossfile.score` scores the case open now: [`super::score`]).
//!
//! A case opens in a replay copy of its repository ([`crate::bench::Sandbox`], under
//! `<index.cache_dir>/replay/`), never in the repository itself; the copy is a workspace folder of
//! its own with its own index. The case is laid out in that index as `bench run` lays it out
//! ([`crate::bench::replay::lay_out`]), so a completion at its cursor gives what `bench run`
//! gives, and `crossfile.score` scores with the case's benchmark's own metrics.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::Deserialize;
use serde_json::{Value, json};
use tower_lsp::lsp_types::{Position, Url};

use super::cases;
use super::error::ServeError;
use super::replayed::{ReplayedCase, Session};
use super::settings::folder_settings;
use super::state::{Folder, State};
use crate::bench::replay::lay_out;
use crate::bench::{BenchError, CaseView, Sandbox, Target};
use crate::workspace::normalize_newlines;

/// `crossfile.replayCase`'s arguments.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ReplayArgs {
    /// The cases file (CrossCodeEval or RepoEval jsonl).
    pub cases: PathBuf,
    /// The folder holding each case's repository as `<repos>/<repository>`.
    pub repos: PathBuf,
    /// `cceval` or `repoeval`; told from the first record when absent.
    pub format: Option<String>,
    /// A case id, or a 0-based index into the file's cases.
    pub case: CaseRef,
    /// Replay in the repository itself instead of a copy (the opt-in): the file's bytes are
    /// saved first and put back before the next case, at shutdown, or at the next start.
    #[serde(default)]
    pub in_place: bool,
}

#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub enum CaseRef {
    Index(usize),
    Id(String),
}

/// `crossfile.replayCase`: loads the cases file (again only if it is another one) and opens the
/// case.
pub async fn replay_case(state: &Arc<State>, args: ReplayArgs) -> Result<Value, ServeError> {
    let (file, repos) = (
        cases::resolve(state, &args.cases),
        cases::resolve(state, &args.repos),
    );
    let mut session = state.replay.session.lock().await;
    let reuse = session
        .as_ref()
        .is_some_and(|s| s.file == file && s.repos == repos && s.format == args.format);
    if !reuse {
        if !repos.is_dir() {
            return Err(ServeError::request(format!(
                "repos: {} is not a folder",
                repos.display()
            )));
        }
        let loaded = cases::load(state, file, args.format.as_deref()).await?;
        *session = Some(Session {
            file: loaded.file,
            repos,
            format: args.format.clone(),
            cases: loaded.cases,
            at: 0,
            in_place: false,
        });
    }
    let Some(s) = session.as_mut() else {
        return Err(ServeError::request("no cases loaded"));
    };
    s.in_place = args.in_place;
    let at = match args.case {
        CaseRef::Index(i) if i < s.cases.len() => i,
        CaseRef::Index(i) => {
            return Err(ServeError::request(format!(
                "case index {i} is out of range: {} has {} cases",
                s.file.display(),
                s.cases.len()
            )));
        }
        CaseRef::Id(id) => s.cases.iter().position(|c| c.id == id).ok_or_else(|| {
            ServeError::request(format!("no case {id:?} in {}", s.file.display()))
        })?,
    };
    open(state, s, at).await
}

/// `crossfile.nextCase` (`step` 1) and `crossfile.previousCase` (`step` -1).
pub async fn step(state: &Arc<State>, step: isize) -> Result<Value, ServeError> {
    let mut session = state.replay.session.lock().await;
    let Some(s) = session.as_mut() else {
        return Err(ServeError::request(
            "no case is being replayed: run crossfile.replayCase first",
        ));
    };
    let at =
        s.at.checked_add_signed(step)
            .filter(|&at| at < s.cases.len())
            .ok_or_else(|| {
                let end = if step > 0 { "last" } else { "first" };
                ServeError::request(format!(
                    "case {} of {} is the {end}",
                    s.at + 1,
                    s.cases.len()
                ))
            })?;
    open(state, s, at).await
}

/// Opens case `at` of the session: its replay copy, its folder and index, the case laid out.
async fn open(state: &Arc<State>, s: &mut Session, at: usize) -> Result<Value, ServeError> {
    let case = s.cases[at].clone();
    let (sandbox, repos, for_copy) = (sandbox(state), s.repos.clone(), case.clone());
    let in_place = s.in_place;
    let max_file_bytes = state.engine_settings().index.workspace.max_file_bytes;
    let held = state.replay.take_in_place();
    let (view, placed, held) = tokio::task::spawn_blocking(move || {
        let view = CaseView::new(&for_copy, &repos, max_file_bytes)?;
        let (placed, held) = sandbox.replay(&for_copy, &view, in_place, held)?;
        Ok::<_, BenchError>((view, placed, held))
    })
    .await
    .map_err(ServeError::task("placing the case"))??;
    state.replay.hold(held);

    let folder = replay_folder(state, &placed.root, &case.repository).await?;
    let engine = state.engine().await?;
    // The template decides whether the case's right context may be indexed.
    let uses_right = folder
        .completer(&folder.settings(), &engine)
        .template()
        .is_fim();
    let index = folder.index_or_build().await?;
    let for_layout = case.clone();
    let laid_out =
        tokio::task::spawn_blocking(move || lay_out(&for_layout, view, &index, uses_right))
            .await
            .map_err(ServeError::task("laying the case out"))??;

    let uri = Url::from_file_path(&placed.file).map_err(|()| {
        ServeError::request(format!("{} is not a file URI", placed.file.display()))
    })?;
    let last_line = laid_out.view.left.rsplit('\n').next().unwrap_or("");
    let position = Position::new(
        laid_out.view.cursor.line,
        u32::try_from(last_line.encode_utf16().count()).unwrap_or(u32::MAX),
    );
    let text = normalize_newlines(&laid_out.view.text()).into_owned();
    s.at = at;
    let answer = json!({
        "uri": uri,
        "text": text,
        "position": position,
        "case": {
            "id": case.id,
            "index": at,
            "count": s.cases.len(),
            "taskId": case.task_id,
            "benchmark": case.format.name(),
            "language": case.language.name(),
            "repository": case.repository,
            "path": case.path,
            "line": case.line + 1,
            "target": match case.target { Target::Line => "line", Target::Function => "function" },
            "casesFile": s.file,
            "recordLine": case.record_line,
        },
    });
    state.replay.set_current(Arc::new(ReplayedCase {
        case,
        uri,
        position,
        text,
        laid_out,
    }));
    Ok(answer)
}

/// Where replay copies and in-place backups live.
fn sandbox(state: &State) -> Sandbox {
    Sandbox::new(state.engine_settings().index.cache_dir.join("replay"))
}

/// Puts back a file an in-place replay changed (at shutdown, at the end of the session, and at
/// start for one a killed server left); says which.
pub fn restore_in_place(state: &State) -> Option<PathBuf> {
    let sandbox = sandbox(state);
    let held = state.replay.take_in_place();
    let restored = match &held {
        Some(lock) => sandbox.restore_in_place(lock),
        None => sandbox.restore_abandoned(),
    };
    drop(held);
    match restored {
        Ok(Some(file)) => {
            tracing::info!(file = %file.display(), "restored the file an in-place replay changed");
            Some(file)
        }
        Ok(None) => None,
        Err(e) => {
            tracing::error!("cannot restore the file an in-place replay changed: {e}");
            None
        }
    }
}

/// The workspace folder of a replay copy (or, in place, of the repository), added on first use.
async fn replay_folder(
    state: &Arc<State>,
    root: &Path,
    repository: &str,
) -> Result<Arc<Folder>, ServeError> {
    if let Some(folder) = state.folders().into_iter().find(|f| f.root == root) {
        return Ok(folder);
    }
    let (settings, ignored) = folder_settings(root, &state.options())?;
    for key in ignored {
        tracing::warn!("{key}");
    }
    let folder = Folder::new(
        root.to_path_buf(),
        format!("replay: {repository}"),
        settings,
    );
    state.add_folder(folder.clone());
    Ok(folder)
}
