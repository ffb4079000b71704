//! indicatif progress bars on stderr, fed by the engine's progress events.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crossfile_engine::progress::{Progress, ProgressEvent};

/// "indexing [bar] done/total files, eta" on stderr (hidden when stderr is not a terminal).
pub fn index_bar() -> Progress {
    bar("indexing", "{msg} [{bar:30}] {pos}/{len} files, eta {eta}")
}

/// "downloading [bar] 12 MiB/94 MiB, eta" on stderr (hidden when stderr is not a terminal).
pub fn bytes_bar(message: &'static str) -> Progress {
    bar(message, "{msg} [{bar:30}] {bytes}/{total_bytes}, eta {eta}")
}

/// "<message> [bar] done/total <unit>, eta" on stderr (hidden when stderr is not a terminal).
pub fn count_bar(message: &'static str, unit: &str) -> Progress {
    bar(
        message,
        &format!("{{msg}} [{{bar:30}}] {{pos}}/{{len}} {unit}, eta {{eta}}"),
    )
}

fn bar(message: &'static str, template: &str) -> Progress {
    let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
    bar.set_style(
        ProgressStyle::with_template(template)
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> "),
    );
    bar.set_message(message);
    Progress::new(move |event| match event {
        ProgressEvent::Begin { total } => bar.set_length(total),
        ProgressEvent::Advance { done } => bar.set_position(done),
        ProgressEvent::Stage { name } => bar.set_message(name),
        ProgressEvent::End => bar.finish_and_clear(),
    })
}
