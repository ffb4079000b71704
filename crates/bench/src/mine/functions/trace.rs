//! Which tests reach which functions: the workspace's own test command run once, in the
//! harness's sandbox and a copy of the workspace, with a pytest plugin of ours
//! (`crossfile_trace.py`, loaded through `PYTEST_ADDOPTS`) that records, for each test, the
//! workspace's functions it calls and whether it passed.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use serde::Deserialize;

use crate::harness::{Ended, Harness, InCopy, PythonEnv};

/// The plugin, written into the copy as `.crossfile-trace/crossfile_trace.py`.
const PLUGIN: &str = include_str!("crossfile_trace.py");

/// One test as the tracer saw it.
#[derive(Clone, Debug, Default, Deserialize)]
pub struct TestTrace {
    pub passed: bool,
    /// The functions it called: a path relative to the workspace and `co_firstlineno`.
    pub calls: Vec<(String, usize)>,
}

/// Every test the command ran, by pytest node id.
pub type Traces = BTreeMap<String, TestTrace>;

/// Runs `command` (a shell command line, e.g. `python -m pytest -q tests`) in a copy of `root`
/// with `env`'s interpreter first on PATH, for at most `limit`; the tests it ran, or why there
/// are none (naming the command's end and its output's last lines).
pub fn trace(
    harness: &Harness,
    root: &Path,
    env: &PythonEnv,
    command: &str,
    limit: Duration,
    cancel: &AtomicBool,
) -> Result<Traces, String> {
    let args = vec!["-c".to_string(), command.to_string()];
    let vars = [(
        "PYTEST_ADDOPTS".to_string(),
        "-p crossfile_trace -p no:cacheprovider".to_string(),
    )];
    let files = [(".crossfile-trace/crossfile_trace.py", PLUGIN)];
    let run = InCopy {
        program: Path::new("/bin/sh"),
        args: &args,
        env: &vars,
        files: &files,
        import_first: &[".crossfile-trace"],
        limit,
    };
    let read = |copy: &Path, ran: crate::harness::Ran| {
        let written = std::fs::read_to_string(copy.join(".crossfile-trace/trace.json"));
        (written, ran)
    };
    let (written, ran) = harness.run_in_copy(root, env, &run, cancel, read)?;
    let ended = match ran.ended {
        Ended::Exited(code) => format!("exited with {code}"),
        Ended::Signalled(signal) => format!("was killed by signal {signal}"),
        Ended::TimedOut => format!("ran past {} s", limit.as_secs()),
        Ended::Cancelled => return Err("cancelled".into()),
    };
    let text = written.map_err(|_| {
        format!(
            "`{command}` {ended} without running pytest with the tracer (the tests must run \
             under pytest); its output ends:\n{}",
            ran.tail
        )
    })?;
    serde_json::from_str(&text).map_err(|e| format!("the tracer's output is not readable: {e}"))
}
