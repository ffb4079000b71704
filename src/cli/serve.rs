//! `crossfile serve`: the language server over stdio.

use std::time::Duration;

use crossfile_server::lsp::{self, Ending};

use super::args::ServeArgs;

/// How long blocking work (an index commit, a model decode) may run on after `exit`.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(2);

pub fn run(_args: &ServeArgs) -> anyhow::Result<()> {
    tracing::info!(
        "crossfile {} serving LSP on stdio",
        env!("CARGO_PKG_VERSION")
    );
    crossfile_engine::memory::tune_allocator();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let ending = runtime.block_on(lsp::serve_stdio());
    runtime.shutdown_timeout(SHUTDOWN_GRACE);
    match ending {
        Ending::Clean => Ok(()),
        Ending::Abrupt => anyhow::bail!("the client left without `shutdown`"),
    }
}
