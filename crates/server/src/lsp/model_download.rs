//! A model fetched while the server loads it: `$/progress` in the editor's progress UI (bytes,
//! then "verifying"), and what a completion asked for meanwhile is told instead of waiting.

use tokio::sync::mpsc::UnboundedReceiver;

use super::progress::Reporter;
use super::state::State;
use crossfile_engine::progress::ProgressEvent;

/// Relays the fetch's progress events until the load ends (the channel closes): the progress
/// token `crossfile/model`, and the state's note for completions asked for meanwhile.
pub async fn relay(state: &State, model: &str, mut events: UnboundedReceiver<ProgressEvent>) {
    let mut reporter: Option<Reporter<'_>> = None;
    let (mut total, mut last) = (0u64, None);
    while let Some(event) = events.recv().await {
        match event {
            ProgressEvent::Begin { total: bytes } => {
                total = bytes;
                state.set_downloading(Some(note(model, 0, total)));
                let r = Reporter::create(state, None, "crossfile/model".into(), false).await;
                r.begin(
                    &format!("Downloading the model {model}"),
                    Some(format!("0 of {} MB", mb(total))),
                    Some(0),
                )
                .await;
                reporter = Some(r);
            }
            ProgressEvent::Advance { done } => {
                let percent = done.saturating_mul(100) / total.max(1);
                if last != Some(percent) {
                    last = Some(percent);
                    state.set_downloading(Some(note(model, done, total)));
                    if let Some(r) = &reporter {
                        let message = format!("{} of {} MB", mb(done), mb(total));
                        r.report(message, Some(percent as u32)).await;
                    }
                }
            }
            ProgressEvent::Stage { name } => {
                state.set_downloading(Some(format!(
                    "the model {model} is downloaded and being verified: completions start when it \
                     is ready"
                )));
                if let Some(r) = &reporter {
                    r.report(name.to_string(), Some(100)).await;
                }
            }
            ProgressEvent::End => {
                // The file is in place: what is left is loading it, which a completion waits for.
                state.set_downloading(None);
                if let Some(r) = reporter.take() {
                    r.end(format!("{model} ready")).await;
                }
            }
        }
    }
    state.set_downloading(None);
}

/// What a completion asked for during the download is told.
pub fn note(model: &str, done: u64, total: u64) -> String {
    format!(
        "the model {model} is downloading ({} of {} MB): completions start when it is ready",
        mb(done),
        mb(total)
    )
}

fn mb(bytes: u64) -> u64 {
    bytes / 1_000_000
}
