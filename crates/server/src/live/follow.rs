//! Keeping a folder's index current while the user types: each edited path is queued
//! ([`Folder::touch`]); a task applies the queue a batch at a time after [`UPDATE_DELAY`], on the
//! blocking pool, with the newest buffer text, so neither the message loop nor a keystroke waits
//! for a commit. A completion waits only for what it needs: nothing when all the index lacks is
//! the cursor's own line ([`Folder::index_at`]), else every edit queued before it
//! ([`Folder::settled_index`]), which it asks to be applied at once.

use std::collections::BTreeSet;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Weak};
use std::time::Duration;

use tokio::sync::mpsc;

use super::error::LiveError;
use super::folder::Folder;
use crossfile_engine::index::Index;
use crossfile_engine::workspace;

/// How long edits are gathered before the index takes them: a burst of keystrokes becomes one
/// update per file.
pub const UPDATE_DELAY: Duration = Duration::from_millis(300);

impl Folder {
    /// Queues `rel` for the index: its open buffer's text if it is open, else the disk's.
    pub fn touch(&self, rel: &str) {
        let mut pending = self.pending.lock().unwrap_or_else(|e| e.into_inner());
        let number = self.queued.fetch_add(1, Ordering::SeqCst) + 1;
        pending.insert(number, rel.to_string());
        let _ = self.dirty.send((rel.to_string(), number));
    }

    /// The index, once it holds every edit queued before this call: the queue is applied at
    /// once instead of after the usual delay, so a completion sees the text the user sees.
    pub async fn settled_index(&self) -> Result<Arc<Index>, LiveError> {
        let index = self.ready_index().await?;
        let target = self.queued.load(Ordering::SeqCst);
        let mut applied = self.applied.subscribe();
        if *applied.borrow() < target {
            self.flush.notify_one();
            applied
                .wait_for(|&n| n >= target)
                .await
                .map_err(|_| LiveError::FolderGone)?;
        }
        Ok(index)
    }

    /// The index for a completion at `line` of `rel`, whose buffer holds `text`: at once when
    /// all it lacks of the queued edits is that line's (a keystroke's), which retrieval leaves
    /// out anyway (the line lies in every query's own region), so typing does not commit the
    /// index at each keystroke; else [`Folder::settled_index`].
    pub async fn index_at(
        &self,
        rel: &str,
        text: Option<&str>,
        line: u32,
    ) -> Result<Arc<Index>, LiveError> {
        let index = self.ready_index().await?;
        let only_this_file = self
            .pending
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .values()
            .all(|path| path == rel);
        if let Some(text) = text
            && only_this_file
            && index
                .snapshot()
                .file(rel)
                .is_some_and(|file| workspace::differ_at_most_in_line(&file.text, text, line))
        {
            return Ok(index);
        }
        self.settled_index().await
    }
}

/// Applies queued paths to the folder's index, a batch at a time, on the blocking pool, until the
/// folder is dropped.
pub(super) async fn keep_current(
    folder: Weak<Folder>,
    mut queue: mpsc::UnboundedReceiver<(String, u64)>,
) {
    while let Some(first) = queue.recv().await {
        let Some(f) = folder.upgrade() else { return };
        tokio::select! {
            () = tokio::time::sleep(UPDATE_DELAY) => {}
            () = f.flush.notified() => {}
        }
        drop(f);
        let (first, mut covered) = first;
        let mut paths = BTreeSet::from([first]);
        while let Ok((path, number)) = queue.try_recv() {
            paths.insert(path);
            covered = covered.max(number);
        }
        let index = match folder.upgrade() {
            Some(f) => f.ready_index().await,
            None => return,
        };
        // Without an index there is nothing to update; completions report why.
        let Ok(index) = index else { continue };
        // Texts are read after the index is ready, so the newest buffer content goes in.
        let Some(f) = folder.upgrade() else { return };
        let work: Vec<(String, Option<String>)> = paths
            .into_iter()
            .map(|rel| {
                let text = f.documents.text(&rel);
                (rel, text)
            })
            .collect();
        drop(f);
        let done = tokio::task::spawn_blocking(move || {
            for (rel, text) in work {
                let result = match &text {
                    Some(text) => index.update_text(&rel, text),
                    None => index.update_files(&[rel.as_str()]).map(|_| ()),
                };
                match result {
                    Ok(()) => tracing::debug!(path = %rel, open = text.is_some(), "index updated"),
                    Err(e) => tracing::warn!(path = %rel, "index update failed: {e}"),
                }
            }
        })
        .await;
        if let Err(e) = done {
            tracing::error!("index update task failed: {e}");
        }
        if let Some(f) = folder.upgrade() {
            let mut pending = f.pending.lock().unwrap_or_else(|e| e.into_inner());
            *pending = pending.split_off(&(covered + 1));
            drop(pending);
            f.applied.send_modify(|n| *n = (*n).max(covered));
        }
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;
    use std::time::Instant;

    use super::*;
    use crate::settings::ServerSettings;

    /// A folder over a real workspace on disk with its index built (a real tantivy index in the
    /// folder's own cache).
    async fn folder(root: &Path, cache: &Path) -> Arc<Folder> {
        std::fs::write(root.join("shapes.py"), "class Box:\n    width = 1\n").expect("write");
        std::fs::write(
            root.join("app.py"),
            "from shapes import Box\n\nbox = Box()\n",
        )
        .expect("write");
        let mut engine = crossfile_engine::config::Settings::default();
        engine.index.cache_dir = cache.to_path_buf();
        let settings = ServerSettings {
            engine: Arc::new(engine),
            ..ServerSettings::default()
        };
        let folder = Folder::new(root.to_path_buf(), "ws".into(), settings);
        folder.index_or_build().await.expect("the index");
        folder
    }

    fn text_of(index: &Index, rel: &str) -> Option<String> {
        index.snapshot().file(rel).map(|f| f.text.to_string())
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn edits_reach_the_index_after_the_delay_or_at_once_when_a_completion_waits() {
        let (dir, cache) = (
            tempfile::tempdir().expect("dir"),
            tempfile::tempdir().expect("dir"),
        );
        let folder = folder(dir.path(), cache.path()).await;
        let index = folder.index().expect("built");

        // An open buffer's edit: the index takes it after the delay, by itself.
        folder
            .documents
            .open("shapes.py", "class Box:\n    height = 2\n");
        folder.touch("shapes.py");
        assert_eq!(
            text_of(&index, "shapes.py").as_deref(),
            Some("class Box:\n    width = 1\n")
        );
        let started = Instant::now();
        while text_of(&index, "shapes.py").as_deref() != Some("class Box:\n    height = 2\n") {
            assert!(started.elapsed() < Duration::from_secs(10), "never applied");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        assert!(
            started.elapsed() >= UPDATE_DELAY / 2,
            "{:?}",
            started.elapsed()
        );

        // A file changed on disk, then a completion that needs it: applied at once.
        std::fs::write(dir.path().join("shapes.py"), "class Box:\n    depth = 3\n").expect("write");
        folder.documents.close("shapes.py");
        folder.touch("shapes.py");
        let started = Instant::now();
        let settled = folder.settled_index().await.expect("settled");
        assert!(started.elapsed() < UPDATE_DELAY, "{:?}", started.elapsed());
        assert_eq!(
            text_of(&settled, "shapes.py").as_deref(),
            Some("class Box:\n    depth = 3\n")
        );
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_keystroke_on_the_cursors_line_does_not_wait_for_the_index() {
        let (dir, cache) = (
            tempfile::tempdir().expect("dir"),
            tempfile::tempdir().expect("dir"),
        );
        let folder = folder(dir.path(), cache.path()).await;
        let index = folder.index().expect("built");

        // Typing on line 2 of app.py: the index as it is serves the completion there.
        let typed = "from shapes import Box\n\nbox = Box().wi\n";
        folder.documents.open("app.py", typed);
        folder.touch("app.py");
        let at_once = folder
            .index_at("app.py", Some(typed), 2)
            .await
            .expect("index");
        assert_eq!(
            text_of(&at_once, "app.py").as_deref(),
            Some("from shapes import Box\n\nbox = Box()\n"),
            "not committed for a keystroke"
        );

        // An edit on another line, or in another file, is waited for.
        let edited = "import os\nfrom shapes import Box\n\nbox = Box().wi\n";
        folder.documents.open("app.py", edited);
        folder.touch("app.py");
        let waited = folder
            .index_at("app.py", Some(edited), 3)
            .await
            .expect("index");
        assert_eq!(text_of(&waited, "app.py").as_deref(), Some(edited));
        folder
            .documents
            .open("shapes.py", "class Box:\n    wide = 1\n");
        folder.touch("shapes.py");
        let waited = folder
            .index_at("app.py", Some(edited), 3)
            .await
            .expect("index");
        assert_eq!(
            text_of(&waited, "shapes.py").as_deref(),
            Some("class Box:\n    wide = 1\n")
        );
        assert!(Arc::ptr_eq(&waited, &index), "one index, updated in place");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_folder_whose_index_failed_says_why() {
        let runtime_folder = Folder::new(
            "/nonexistent".into(),
            "gone".into(),
            ServerSettings::default(),
        );
        runtime_folder.set_index_failed("no such folder".into());
        let error = runtime_folder
            .settled_index()
            .await
            .err()
            .map(|e| e.to_string());
        assert_eq!(error.as_deref(), Some("no such folder"));
    }
}
