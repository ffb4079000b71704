//! An indicatif progress bar on stderr, fed by the engine's progress events.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crossfile::index::{Progress, ProgressEvent};

/// A progress sink that draws "indexing [bar] done/total eta" on stderr (hidden when stderr is
/// not a terminal).
pub fn index_bar() -> Progress {
    let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
    bar.set_style(
        ProgressStyle::with_template("{msg} [{bar:30}] {pos}/{len} files, eta {eta}")
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> "),
    );
    bar.set_message("indexing");
    Progress::new(move |event| match event {
        ProgressEvent::Begin { total } => bar.set_length(total),
        ProgressEvent::Advance { done } => bar.set_position(done),
        ProgressEvent::End => bar.finish_and_clear(),
    })
}
