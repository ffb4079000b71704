//! Replaying benchmark cases in the editor: `crossfile.replayCase`, `crossfile.nextCase`,
//! and `crossfile.previousCase` (`crossfile.score` scores the case open now: [`score`]).
//!
//! A case opens in a replay copy of its repository ([`crossfile_bench::bench::ReplayCopies`], under
//! `<index.cache_dir>/replay/`), never in the repository itself; the copy is a workspace folder of
//! its own with its own index. The case is laid out in that index as `bench run` lays it out
//! ([`crossfile_bench::bench::layout::lay_out`]; an EvoCodeBench case for its setting,
//! [`crossfile_bench::bench::layout::evocodebench::lay_out_exec`]), so a completion at its cursor gives what `bench
//! run` gives, and `crossfile.score` scores with the case's benchmark's own metrics (or tests).
//! A history case's file is absent from its repository (its commit adds it): it is made in the
//! copy for the case and removed, with the folders made for it, before the next one.

pub mod cases;
pub mod harness_run;
pub mod score;
pub mod session;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use tower_lsp::lsp_types::{Position, Url};

use crate::live::Folder;
use crate::lsp::error::ServeError;
use crate::lsp::ext::{CaseDetails, CaseRef, ReplayCaseParams, ReplayCaseResult, ReplayedCaseInfo};
use crate::lsp::state::State;
use crate::settings::ServerSettings;
use cases::ExecChoice;
use crossfile_bench::bench::layout::evocodebench::exec_view;
use crossfile_bench::bench::layout::evocodebench::lay_out_exec;
use crossfile_bench::bench::layout::lay_out;
use crossfile_bench::bench::{Case, CaseView, Placeable, ReplayCopies, Target};
use crossfile_engine::choice::Choice;
use crossfile_engine::index::{Index, Snapshot};
use crossfile_engine::retrieve::Query;
use crossfile_engine::workspace::normalize_newlines;
use session::{Cases, ExecTarget, Replayable, ReplayedCase, Session};

/// `crossfile.replayCase`: loads the cases file (again only if it is another one) and opens the
/// case.
pub async fn replay_case(
    state: &Arc<State>,
    args: ReplayCaseParams,
) -> Result<ReplayCaseResult, ServeError> {
    let (file, repos) = (
        cases::resolve(state, &args.cases),
        cases::resolve(state, &args.repos),
    );
    let exec = ExecChoice::new(
        state,
        args.setting.as_deref(),
        args.envs.clone(),
        args.max_new_tokens,
    )?;
    let mut session = state.replay.session.lock().await;
    let reuse = session
        .as_ref()
        .is_some_and(|s| s.file == file && s.repos == repos && s.format == args.format);
    if reuse {
        if let Some(Session {
            cases: Cases::Exec(cases),
            ..
        }) = session.as_mut()
        {
            cases.setting = exec.setting;
            cases.envs = exec.envs;
            cases.max_new_tokens = exec.max_new_tokens;
        }
    } else {
        if !repos.is_dir() {
            return Err(ServeError::request(format!(
                "repos: {} is not a folder",
                repos.display()
            )));
        }
        let loaded = cases::load(state, file, args.format.as_deref(), exec).await?;
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
        CaseRef::Id(id) => s.cases.position(&id).ok_or_else(|| {
            ServeError::request(format!("no case {id:?} in {}", s.file.display()))
        })?,
    };
    open(state, s, at).await
}

/// `crossfile.nextCase` (`step` 1) and `crossfile.previousCase` (`step` -1).
pub async fn step(state: &Arc<State>, step: isize) -> Result<ReplayCaseResult, ServeError> {
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
async fn open(
    state: &Arc<State>,
    s: &mut Session,
    at: usize,
) -> Result<ReplayCaseResult, ServeError> {
    let case = s
        .cases
        .get(at, &s.repos)
        .ok_or_else(|| ServeError::request(format!("no case {at}")))?;
    let (opened, details) = match &case {
        Replayable::Text(text) => open_text(state, s, text).await?,
        Replayable::Exec(exec) => open_exec(state, s, exec).await?,
    };
    let Opened {
        placed_file,
        text,
        left,
        right,
        cursor_line,
        snapshot,
        query,
    } = opened;
    let uri = Url::from_file_path(&placed_file).map_err(|()| {
        ServeError::request(format!("{} is not a file URI", placed_file.display()))
    })?;
    let text = normalize_newlines(&text).into_owned();
    let left = normalize_newlines(&left).into_owned();
    // The contexts as the client gets them: `text` with line breaks as `\n`.
    let right = text
        .strip_prefix(left.as_str())
        .map_or_else(|| normalize_newlines(&right).into_owned(), str::to_string);
    let last_line = left.rsplit('\n').next().unwrap_or("");
    let position = Position::new(
        cursor_line,
        u32::try_from(last_line.encode_utf16().count()).unwrap_or(u32::MAX),
    );
    s.at = at;
    let answer = ReplayCaseResult {
        uri: uri.clone(),
        text: text.clone(),
        position,
        case: ReplayedCaseInfo {
            id: case.id().to_string(),
            index: at,
            count: s.cases.len(),
            cases_file: s.file.clone(),
            details,
        },
    };
    state.replay.set_current(Arc::new(ReplayedCase {
        case,
        uri,
        position,
        text,
        left,
        right,
        snapshot,
        query,
    }));
    Ok(answer)
}

/// A case placed and laid out.
struct Opened {
    /// The case's file in its replay copy (or, in place, in its repository).
    placed_file: PathBuf,
    /// The file as the case shows it, and its parts before and after the cursor.
    text: String,
    left: String,
    right: String,
    /// The cursor's 0-based line.
    cursor_line: u32,
    snapshot: Arc<Snapshot>,
    query: Query,
}

/// A CrossCodeEval, RepoEval or history case: the file with the reference removed.
async fn open_text(
    state: &Arc<State>,
    s: &Session,
    case: &Case,
) -> Result<(Opened, CaseDetails), ServeError> {
    let max_file_bytes = state.engine_settings().index.workspace.max_file_bytes;
    let (repos, for_view) = (s.repos.clone(), case.clone());
    let view =
        tokio::task::spawn_blocking(move || CaseView::new(&for_view, &repos, max_file_bytes))
            .await
            .map_err(ServeError::task("placing the case"))??;
    let (placed, index) = place(state, s, case, &view).await?;
    let engine = state.engine().await?;
    // The template decides whether the case's right context may be indexed.
    let uses_right = placed
        .folder
        .completer(&placed.folder.settings(), &engine)
        .template()
        .is_fim();
    let for_layout = case.clone();
    let laid_out =
        tokio::task::spawn_blocking(move || lay_out(&for_layout, view, &index, uses_right))
            .await
            .map_err(ServeError::task("laying the case out"))??;
    let details = CaseDetails {
        task_id: Some(case.task_id.clone()),
        benchmark: case.format.name().to_string(),
        language: case.language.name().to_string(),
        repository: case.repository.clone(),
        path: case.path.clone(),
        line: case.line + 1,
        target: match case.target {
            Target::Line => "line",
            Target::Function => "function",
        }
        .to_string(),
        record_line: case.record_line,
        category: case.category.map(|c| c.name().to_string()),
        identifiers: case.category.map(|_| case.identifiers.clone()),
        kind: None,
        setting: None,
        tests: None,
    };
    let opened = Opened {
        placed_file: placed.file,
        text: laid_out.view.text(),
        left: laid_out.view.left.clone(),
        right: laid_out.view.right.clone(),
        cursor_line: laid_out.view.cursor.line,
        snapshot: laid_out.snapshot,
        query: laid_out.query,
    };
    Ok((opened, details))
}

/// An EvoCodeBench case: the file with the body removed, the requirement as the docstring and
/// the cursor at the body; the model is shown what the setting shows.
async fn open_exec(
    state: &Arc<State>,
    s: &Session,
    exec: &Arc<ExecTarget>,
) -> Result<(Opened, CaseDetails), ServeError> {
    let max_file_bytes = state.engine_settings().index.workspace.max_file_bytes;
    let for_view = exec.clone();
    let view = tokio::task::spawn_blocking(move || {
        exec_view(
            &for_view.case,
            &for_view.repos,
            for_view.setting,
            max_file_bytes,
        )
    })
    .await
    .map_err(ServeError::task("placing the case"))??;
    let (placed, index) = place(state, s, &exec.case, &view.buffer).await?;
    let for_layout = exec.clone();
    // The case's file is read from its repository; the copy's index takes it as the setting
    // shows it for the snapshot, then reads the copy's file (the editor's view) back.
    let (snapshot, query) = tokio::task::spawn_blocking(move || {
        let e = &for_layout;
        lay_out_exec(&e.case, &e.repos, e.setting, max_file_bytes, &index)
    })
    .await
    .map_err(ServeError::task("laying the case out"))??;
    let case = &exec.case;
    let details = CaseDetails {
        task_id: None,
        benchmark: "evocodebench".to_string(),
        language: "python".to_string(),
        repository: case.repository.clone(),
        path: case.path.clone(),
        line: view.buffer.cursor.line + 1,
        target: "function".to_string(),
        record_line: case.record_line,
        category: None,
        identifiers: None,
        kind: Some(case.kind.clone()),
        setting: Some(exec.setting.name().to_string()),
        tests: Some(case.tests.clone()),
    };
    let opened = Opened {
        placed_file: placed.file,
        text: view.buffer.text(),
        left: view.buffer.left.clone(),
        right: view.buffer.right.clone(),
        cursor_line: view.buffer.cursor.line,
        snapshot,
        query,
    };
    Ok((opened, details))
}

/// Where a case was placed: its file, and the folder of the copy it is in.
struct PlacedCase {
    file: PathBuf,
    folder: Arc<Folder>,
}

/// Places the case (`view` is the file as the editor shows it) in its replay copy, or in place,
/// and opens the copy's folder and index.
async fn place<C: Placeable + Clone + Send + 'static>(
    state: &Arc<State>,
    s: &Session,
    case: &C,
    view: &CaseView,
) -> Result<(PlacedCase, Arc<Index>), ServeError> {
    let (copies, for_copy, view) = (replay_copies(state), case.clone(), view.clone());
    let in_place = s.in_place;
    let held = state.replay.take_in_place();
    let (placed, held) =
        tokio::task::spawn_blocking(move || copies.replay(&for_copy, &view, in_place, held))
            .await
            .map_err(ServeError::task("placing the case"))??;
    state.replay.hold(held);
    let folder = replay_folder(state, &placed.root, case.repository()).await?;
    let index = folder.index_or_build().await?;
    // The previous case's file is the repository's again (or, added by a history case's commit,
    // gone): the index reads it back, so no case's text outlives it there.
    if let Some(restored) = placed.restored {
        let for_update = index.clone();
        tokio::task::spawn_blocking(move || for_update.update_files(&[restored.as_str()]))
            .await
            .map_err(ServeError::task("reading back the previous case's file"))??;
    }
    Ok((
        PlacedCase {
            file: placed.file,
            folder,
        },
        index,
    ))
}

/// Where replay copies and in-place backups live.
fn replay_copies(state: &State) -> ReplayCopies {
    ReplayCopies::new(state.engine_settings().index.cache_dir.join("replay"))
}

/// Puts back a file an in-place replay changed (at shutdown, at the end of the session, and at
/// start for one a killed server left); says which.
pub fn restore_in_place(state: &State) -> Option<PathBuf> {
    let copies = replay_copies(state);
    let held = state.replay.take_in_place();
    let restored = match &held {
        Some(lock) => copies.restore_in_place(lock),
        None => copies.restore_abandoned(),
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
    let (settings, ignored) = ServerSettings::load_reporting(root, state.options())?;
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
