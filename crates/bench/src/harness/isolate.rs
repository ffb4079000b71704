//! Running one untrusted command in a sandbox: bubblewrap (`bwrap`, Flatpak's sandbox) gives it
//! only what a test needs, read-only ([`super::view`]: the system's programs and libraries, a few
//! files of `/etc`, its Python environment), its repository copy and a private `/tmp` as the only
//! places it can write, a network namespace with only loopback up, its own PID namespace
//! (everything it starts dies with it) and session (no controlling terminal), no environment but
//! what is set here, and an address-space limit. The command runs in its own process group; at
//! the time limit the whole group is killed.

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use super::view::{self, Mount};

/// How a sandboxed command ended.
#[derive(Clone, Debug, PartialEq)]
pub enum Ended {
    Exited(i32),
    /// Killed by a signal it did not ask for (not the time limit).
    Signalled(i32),
    TimedOut,
    Cancelled,
}

/// What a sandboxed command did: how it ended, how long it took, the tail of its output.
#[derive(Clone, Debug)]
pub struct Ran {
    pub ended: Ended,
    pub secs: f64,
    pub tail: String,
}

/// The sandbox's settings.
#[derive(Clone, Debug)]
pub struct Sandbox {
    /// The `bwrap` executable.
    pub bwrap: PathBuf,
    /// Address-space limit of the command and everything it starts, in bytes.
    pub memory_bytes: u64,
}

/// The most of a command's output kept (its last bytes).
pub const TAIL_BYTES: u64 = 4096;

/// One command to run: `program args…` in `dir` (the writable copy), with `env` only, and
/// `read_only` folders (the interpreter's environment, [`view::python`]) visible besides the
/// system part.
pub struct Job<'a> {
    pub program: &'a Path,
    pub args: &'a [String],
    pub dir: &'a Path,
    pub env: &'a [(String, String)],
    pub read_only: &'a [PathBuf],
    pub output: &'a Path,
    pub limit: Duration,
}

impl Sandbox {
    /// The `bwrap` command line for `job` (everything before the program is the sandbox).
    fn command(&self, job: &Job) -> Command {
        let mut command = Command::new(&self.bwrap);
        // bubblewrap itself gets no environment: its process stays in the sandbox as PID 1, and
        // `/proc/1/environ` would show the sandbox what crossfile was started with (API keys).
        command.env_clear();
        command.args([
            "--die-with-parent",
            "--new-session",
            "--unshare-net",
            "--unshare-pid",
            "--unshare-ipc",
            "--unshare-uts",
        ]);
        for mount in view::system() {
            match mount {
                Mount::ReadOnly(path) => {
                    command.arg("--ro-bind-try").arg(&path).arg(&path);
                }
                Mount::Symlink { path, target } => {
                    command.arg("--symlink").arg(target).arg(path);
                }
            }
        }
        command.args([
            "--dev",
            "/dev",
            "--proc",
            "/proc",
            "--tmpfs",
            "/tmp",
            "--tmpfs",
            "/var/tmp",
            "--tmpfs",
            "/dev/shm",
            "--clearenv",
        ]);
        for dir in job.read_only {
            command.arg("--ro-bind").arg(dir).arg(dir);
        }
        command.arg("--bind").arg(job.dir).arg(job.dir);
        command.arg("--chdir").arg(job.dir);
        for (key, value) in job.env {
            command.args(["--setenv", key, value]);
        }
        command.arg("--").arg(job.program).args(job.args);
        command
    }

    /// Runs `job`, killing its process group at `job.limit` or when `cancel` is set.
    pub fn run(&self, job: &Job, cancel: &AtomicBool) -> io::Result<Ran> {
        let output = File::create(job.output)?;
        let mut command = self.command(job);
        command
            .stdin(Stdio::null())
            .stdout(output.try_clone()?)
            .stderr(output)
            .process_group(0);
        let memory = self.memory_bytes;
        // SAFETY: setrlimit is async-signal-safe and touches only the child's own limits.
        unsafe {
            command.pre_exec(move || {
                let limit = libc::rlimit {
                    rlim_cur: memory as libc::rlim_t,
                    rlim_max: memory as libc::rlim_t,
                };
                if libc::setrlimit(libc::RLIMIT_AS, &limit) != 0 {
                    return Err(io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let started = Instant::now();
        let mut child = command.spawn().map_err(|e| {
            io::Error::new(
                e.kind(),
                format!("cannot start {}: {e}", self.bwrap.display()),
            )
        })?;
        let group = i32::try_from(child.id()).unwrap_or(i32::MAX);
        let ended = loop {
            if let Some(status) = child.try_wait()? {
                break ended_of(status);
            }
            let timed_out = started.elapsed() >= job.limit;
            if timed_out || cancel.load(Ordering::Relaxed) {
                // SAFETY: a plain kill(2) of the child's own process group.
                unsafe {
                    libc::kill(-group, libc::SIGKILL);
                }
                child.wait()?;
                break if timed_out {
                    Ended::TimedOut
                } else {
                    Ended::Cancelled
                };
            }
            std::thread::sleep(poll_interval(started.elapsed()));
        };
        Ok(Ran {
            ended,
            secs: started.elapsed().as_secs_f64(),
            tail: tail_of(job.output)?,
        })
    }
}

/// Short sleeps while a test is young (most take a second), longer ones after.
fn poll_interval(elapsed: Duration) -> Duration {
    if elapsed < Duration::from_secs(2) {
        Duration::from_millis(5)
    } else {
        Duration::from_millis(50)
    }
}

fn ended_of(status: ExitStatus) -> Ended {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(code), _) => Ended::Exited(code),
        (None, Some(signal)) => Ended::Signalled(signal),
        (None, None) => Ended::Signalled(0),
    }
}

/// The last [`TAIL_BYTES`] of the file at `path`, from a line start where there is one, as text.
fn tail_of(path: &Path) -> io::Result<String> {
    let mut file = File::open(path)?;
    let length = file.metadata()?.len();
    let start = length.saturating_sub(TAIL_BYTES);
    file.seek(SeekFrom::Start(start))?;
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes)?;
    let text = String::from_utf8_lossy(&bytes);
    let text = match (start > 0, text.find('\n')) {
        (true, Some(newline)) => &text[newline + 1..],
        _ => &text[..],
    };
    Ok(text.trim_end().to_string())
}
