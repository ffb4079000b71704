//! Progress reports from long work (indexing, downloads), for a progress bar or LSP `$/progress`.

use std::sync::Arc;

/// One step of progress.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ProgressEvent {
    /// Work on `total` units (files, bytes) begins.
    Begin {
        total: u64,
    },
    /// `done` of the units are finished.
    Advance {
        done: u64,
    },
    /// The work moved on to a stage told in words (`verifying`), its units all done.
    Stage {
        name: &'static str,
    },
    End,
}

/// Where progress goes; [`Progress::none`] discards it.
#[derive(Clone, Default)]
pub struct Progress {
    sink: Option<Arc<dyn Fn(ProgressEvent) + Send + Sync>>,
}

impl Progress {
    pub fn none() -> Progress {
        Progress { sink: None }
    }

    pub fn new(sink: impl Fn(ProgressEvent) + Send + Sync + 'static) -> Progress {
        Progress {
            sink: Some(Arc::new(sink)),
        }
    }

    pub fn report(&self, event: ProgressEvent) {
        if let Some(sink) = &self.sink {
            sink(event);
        }
    }
}
