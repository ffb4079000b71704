//! Indexing the workspace folders on `initialized`, reported to the client with `$/progress`.

use std::sync::Arc;

use tokio::sync::mpsc;

use super::error::ServeError;
use super::notify::show_error;
use super::progress::Reporter;
use super::state::State;
use crate::live::Folder;
use crossfile_engine::index::Index;
use crossfile_engine::progress::{Progress, ProgressEvent};

/// The progress token of indexing.
const TOKEN: &str = "crossfile/index";

/// Builds or brings up to date the index of each of `folders` on the blocking pool, one after
/// another, with one `$/progress` begin, a report per percent and one end for all of them. A
/// folder's index is replaced only when its new one is ready.
pub async fn index_folders(state: Arc<State>, folders: Vec<Arc<Folder>>) {
    let reporter = Reporter::create(&state, None, TOKEN.into(), false).await;
    reporter.begin("crossfile: indexing", None, Some(0)).await;
    let count = folders.len().max(1) as u64;
    let mut files = 0;
    let mut failed = 0;
    for (i, folder) in folders.iter().enumerate() {
        let settings = folder.settings();
        let root = folder.root.clone();
        let (events, mut received) = mpsc::unbounded_channel();
        let task = tokio::task::spawn_blocking(move || {
            let progress = Progress::new(move |event| {
                let _ = events.send(event);
            });
            Index::open_or_build(&root, &settings.index, &progress)
        });
        let mut total = 0;
        let mut last = None;
        // The channel closes when the blocking task drops its progress sink.
        while let Some(event) = received.recv().await {
            match event {
                ProgressEvent::Begin { total: t } => total = t,
                ProgressEvent::Advance { done } => {
                    let percent = (i as u64 * 100 + done * 100 / total.max(1)) / count;
                    if last != Some(percent) {
                        last = Some(percent);
                        let message = format!("{}: {done}/{total} files", folder.name);
                        reporter.report(message, Some(percent as u32)).await;
                    }
                }
                ProgressEvent::Stage { .. } | ProgressEvent::End => {}
            }
        }
        let built = match task.await {
            Ok(built) => built.map_err(ServeError::from),
            Err(e) => Err(ServeError::task("indexing")(e)),
        };
        match built {
            Ok((index, report)) => {
                let indexed = index.snapshot().len();
                files += indexed;
                tracing::info!(
                    root = %folder.root.display(), files = indexed, added = report.added,
                    updated = report.updated, removed = report.removed,
                    skipped = report.skipped.len(), seconds = report.seconds, "indexed"
                );
                folder.set_index(Arc::new(index));
            }
            Err(e) => {
                failed += 1;
                let message = format!("indexing {}: {e}", folder.root.display());
                folder.set_index_failed(message.clone());
                show_error(&state, message).await;
            }
        }
    }
    // Indexing freed far more than the index keeps; the client hears of the end once it is back.
    if let Err(e) = tokio::task::spawn_blocking(crossfile_engine::memory::release_free_heap).await {
        tracing::warn!("returning free memory failed: {e}");
    }
    let message = if failed == 0 {
        format!("{files} files indexed")
    } else {
        format!("{files} files indexed; {failed} folders failed")
    };
    reporter.end(message).await;
}
