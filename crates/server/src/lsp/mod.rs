//! The language server: `crossfile serve` speaks LSP over stdio and maps each message to the
//! engine's entry points, nothing more.
//!
//! This is the only module that names `tower_lsp` or `lsp_types`. `server.rs` dispatches; each
//! family of messages has its file or folder: `lifecycle`, `text_sync`, `workspace_sync`,
//! `indexing`; `completion/` (the completion requests, `at_cursor` preparing and running one,
//! `refresh` replacing an answer in the background, `inflight` the requests in flight);
//! `commands/` (`workspace/executeCommand`: `inspect` for compare and context, `status` for the
//! server's status and retrievers), handing the replay commands to `replay/` (`session` the case
//! open now, `cases` listing a cases file, `score`, `harness_run` an EvoCodeBench case's tests);
//! `ext.rs` types every `crossfile.*` command. Per-keystroke work without the protocol is
//! [`crate::live`]. `convert.rs` is the one converter between UTF-16 positions and the engine's
//! byte columns;
//! `protocol.rs` holds the LSP 3.18 inline-completion types tower-lsp 0.20 lacks,
//! `capabilities.rs` announces them, `service.rs` wraps tower-lsp's service at the edge, and
//! `framing.rs` checks every incoming message before tower-lsp reads it, which `stdin.rs` reads on a
//! thread of its own.

mod capabilities;
mod commands;
mod completion;
mod convert;
mod engine;
mod error;
pub mod ext;
mod framing;
mod indexing;
mod lifecycle;
mod model_download;
mod notify;
mod progress;
mod protocol;
mod replay;
mod server;
mod service;
mod state;
mod stdin;
mod text_sync;
mod workspace_sync;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::Notify;
use tower_lsp::LspService;

/// Requests handled at once; a completion waiting on the model holds one slot, so there must be
/// room for text changes to pass while several wait.
const CONCURRENCY: usize = 32;
/// The buffer of the pipe between the checked input and tower-lsp.
const PIPE_BYTES: usize = 256 * 1024;
/// After the end of input, how long what was already read (a `shutdown` and `exit`) may take.
const END_OF_INPUT_GRACE: std::time::Duration = std::time::Duration::from_millis(500);

/// How a session ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ending {
    /// `exit` after `shutdown`.
    Clean,
    /// `exit` without `shutdown`, or the input closed.
    Abrupt,
}

/// Serves one LSP session over stdin and stdout until `exit` or the end of input. Must run inside
/// a multi-threaded tokio runtime.
pub async fn serve_stdio() -> Ending {
    serve(stdin::stdin(), tokio::io::stdout()).await
}

/// Serves one LSP session over `input` and `output`.
pub async fn serve<I, O>(input: I, output: O) -> Ending
where
    I: AsyncRead + Unpin,
    O: AsyncWrite,
{
    let shut_down = Arc::new(AtomicBool::new(false));
    let flag = shut_down.clone();
    let state = Arc::new(OnceLock::new());
    let keep = state.clone();
    let (service, socket) = LspService::build(move |client| {
        let server = server::Server::new(client, flag);
        let _ = keep.set(server.state());
        server
    })
    .custom_method(
        protocol::INLINE_COMPLETION,
        server::Server::inline_completion,
    )
    .custom_method(
        protocol::WORK_DONE_PROGRESS_CANCEL,
        server::Server::work_done_progress_cancel,
    )
    .custom_method(protocol::RECENT_LINES, server::Server::recent_lines)
    .finish();
    let exited = Arc::new(Notify::new());
    let service = service::Edge::new(service, exited.clone());
    // tower-lsp reads checked messages from a pipe: one it could not decode would end its loop.
    let (checked, from_client) = tokio::io::duplex(PIPE_BYTES);
    let reading = framing::check_frames(input, checked);
    let serving = tower_lsp::Server::new(from_client, output, socket)
        .concurrency_level(CONCURRENCY)
        .serve(service);
    tokio::pin!(reading, serving);
    // `exit` ends the session at once; tower-lsp alone would wait for the end of input. At the
    // end of input no one will read an answer: all work is cancelled, what was already read (a
    // `shutdown` and `exit` sent just before closing) is handled for a moment, and it ends.
    tokio::select! {
        () = &mut serving => {}
        () = exited.notified() => {}
        () = &mut reading => {
            if let Some(state) = state.get() {
                state.end_session();
            }
            tokio::select! {
                () = &mut serving => {}
                () = exited.notified() => {}
                () = tokio::time::sleep(END_OF_INPUT_GRACE) => {}
            }
        }
    }
    // However the session ended, a file an in-place replay changed is put back, and a battle
    // still shown is recorded as no choice.
    if let Some(state) = state.get() {
        replay::restore_in_place(state);
        completion::battle::record_all_pending(state);
    }
    if shut_down.load(Ordering::SeqCst) {
        Ending::Clean
    } else {
        Ending::Abrupt
    }
}
