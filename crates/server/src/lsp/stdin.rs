//! Standard input, read on a thread of its own.
//!
//! `tokio::io::stdin` reads on the runtime's blocking pool, and a read waiting for input never
//! returns until the client closes the pipe: after `exit`, the runtime's shutdown would wait its
//! whole grace (meant for an index commit or a model decode) for that one read, and a client
//! stopping the server would wait with it. Here the read blocks a plain thread the runtime does not
//! own; the process ends without it.

use std::io::Read;

use tokio::io::{AsyncWriteExt, DuplexStream};
use tokio::runtime::Handle;

/// Bytes read from stdin at a time, and the pipe's buffer.
const CHUNK_BYTES: usize = 64 * 1024;

/// The process's standard input as an async reader. Must be called inside a tokio runtime. If the
/// thread cannot start, the reader ends at once (the session then ends as at the end of input).
pub fn stdin() -> DuplexStream {
    let (mut to_server, from_stdin) = tokio::io::duplex(CHUNK_BYTES);
    let handle = Handle::current();
    let reader = std::thread::Builder::new()
        .name("crossfile-stdin".into())
        .spawn(move || {
            let mut input = std::io::stdin().lock();
            let mut buf = vec![0u8; CHUNK_BYTES];
            loop {
                let n = match input.read(&mut buf) {
                    Ok(0) => break,
                    Ok(n) => n,
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                    Err(e) => {
                        tracing::error!("reading stdin: {e}");
                        break;
                    }
                };
                if handle.block_on(to_server.write_all(&buf[..n])).is_err() {
                    // The session has ended and dropped its reader.
                    break;
                }
            }
        });
    if let Err(e) = reader {
        tracing::error!("cannot start the thread that reads stdin: {e}");
    }
    from_stdin
}
