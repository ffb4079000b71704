//! The test harness of execution-based benchmarks (EvoCodeBench; DESIGN.md section 6): a
//! generated function body is spliced into a fresh copy of its repository exactly as the
//! benchmark's `pass_k.py` does ([`splice`]), and the case's tests run one by one, in order,
//! each in a sandbox ([`isolate`]) with a time limit, stopping at the first that does not pass.
//! The original repository is only read, by the harness (the sandbox does not show it); the copy
//! is removed afterwards.
//!
//! Nothing here knows a benchmark's record format: the caller says which lines the body
//! replaces, its indentation, the tests and the Python environment.

mod copy;
pub mod isolate;
mod outcome;
pub mod splice;
pub mod view;

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

pub use copy::copy_tree;
pub use isolate::{Ended, Ran, Sandbox};
pub use outcome::{Outcome, Status, TestRun};

/// The official limits: 20 s per test, 5 GB of memory.
pub const DEFAULT_PER_TEST: Duration = Duration::from_secs(20);
pub const DEFAULT_MEMORY_BYTES: u64 = 5 * 1024 * 1024 * 1024;

/// Why tests cannot be run at all on this machine.
#[derive(Debug, thiserror::Error)]
pub enum HarnessError {
    #[error(
        "no `bwrap` (bubblewrap) on PATH: generated code runs only in its sandbox \
         (scripts/setup installs it; on Debian or Ubuntu: apt-get install bubblewrap)"
    )]
    NoBwrap,
    #[error(
        "bubblewrap cannot make a sandbox here ({0}): it needs unprivileged user namespaces or root"
    )]
    NoSandbox(String),
}

/// A Python environment tests run with.
#[derive(Clone, Debug)]
pub struct PythonEnv {
    /// Its interpreter (`<prefix>/bin/python`).
    pub python: PathBuf,
    /// Its folder: visible read-only inside the sandbox wherever it lives, with the installation
    /// of the interpreter it was made from ([`view::python`]).
    pub prefix: PathBuf,
}

impl PythonEnv {
    /// The virtual environment at `prefix` (made absolute: the sandbox runs in another folder).
    pub fn venv(prefix: &Path) -> PythonEnv {
        let prefix = std::path::absolute(prefix).unwrap_or_else(|_| prefix.to_path_buf());
        let prefix = prefix.as_path();
        PythonEnv {
            python: prefix.join("bin").join("python"),
            prefix: prefix.to_path_buf(),
        }
    }
}

/// One completion to test.
pub struct Trial<'a> {
    /// The repository's tree (only read).
    pub repository: &'a Path,
    /// The file, relative to the repository (checked by the caller to stay inside it).
    pub file: &'a str,
    /// The reference body's lines, 1-based and inclusive, that the completion replaces.
    pub body: (usize, usize),
    /// The body's indentation in spaces.
    pub indent: usize,
    pub completion: &'a str,
    /// pytest node ids, relative to the repository's root, run in order.
    pub tests: &'a [String],
    pub env: &'a PythonEnv,
}

/// A command run in a fresh copy of a repository ([`Harness::run_in_copy`]).
pub struct InCopy<'a> {
    pub program: &'a Path,
    pub args: &'a [String],
    /// Variables added to the tests' environment.
    pub env: &'a [(String, String)],
    /// Files written into the copy first: a path relative to its root, and the text.
    pub files: &'a [(&'a str, &'a str)],
    /// Folders of the copy put first on the import path (relative to its root).
    pub import_first: &'a [&'a str],
    pub limit: Duration,
}

/// Runs trials: where copies go, the sandbox, the per-test time limit.
#[derive(Clone, Debug)]
pub struct Harness {
    pub sandbox: Sandbox,
    pub per_test: Duration,
    /// Where each trial's copy is made (a fresh folder inside, removed after).
    pub work_dir: PathBuf,
}

impl Harness {
    /// A harness with `bwrap` from PATH, checked to make a sandbox here.
    pub fn new(per_test: Duration, memory_bytes: u64) -> Result<Harness, HarnessError> {
        let bwrap = find_on_path("bwrap").ok_or(HarnessError::NoBwrap)?;
        let harness = Harness {
            sandbox: Sandbox {
                bwrap,
                memory_bytes,
            },
            per_test,
            work_dir: std::env::temp_dir(),
        };
        harness.check()?;
        Ok(harness)
    }

    /// Runs `true` in the sandbox: bubblewrap's own failure (no user namespaces) is told here,
    /// once, rather than as every test's failure.
    fn check(&self) -> Result<(), HarnessError> {
        let dir = tempfile::Builder::new()
            .prefix("crossfile-sandbox-check-")
            .tempdir_in(&self.work_dir)
            .map_err(|e| HarnessError::NoSandbox(e.to_string()))?;
        let output = dir.path().join("output");
        let ran = self
            .sandbox
            .run(
                &isolate::Job {
                    program: Path::new("true"),
                    args: &[],
                    dir: dir.path(),
                    env: &[("PATH".into(), "/usr/bin:/bin".into())],
                    read_only: &[],
                    output: &output,
                    limit: Duration::from_secs(10),
                },
                &AtomicBool::new(false),
            )
            .map_err(|e| HarnessError::NoSandbox(e.to_string()))?;
        match ran.ended {
            Ended::Exited(0) => Ok(()),
            _ => Err(HarnessError::NoSandbox(ran.tail)),
        }
    }

    /// Copies the repository, splices the completion in and runs the tests; `cancel` stops
    /// the running test (its outcome is then an error: nothing was decided).
    pub fn run(&self, trial: &Trial, cancel: &AtomicBool) -> Outcome {
        self.run_observed(trial, cancel, &|_, _| {})
    }

    /// [`Harness::run`], calling `on_test` with each test's number (from 0) and id as it starts.
    pub fn run_observed(
        &self,
        trial: &Trial,
        cancel: &AtomicBool,
        on_test: &dyn Fn(usize, &str),
    ) -> Outcome {
        let started = Instant::now();
        if trial.completion == splice::PASS_ONLY {
            let mut outcome = Outcome::of_tests(Vec::new(), 0.0);
            outcome.status = Status::Fail;
            outcome.message = Some("the body is only `pass`: failed without running".into());
            return outcome;
        }
        if !trial.env.python.exists() {
            return Outcome::error(format!(
                "no Python interpreter at {}",
                trial.env.python.display()
            ));
        }
        let work = match tempfile::Builder::new()
            .prefix("crossfile-trial-")
            .tempdir_in(&self.work_dir)
        {
            Ok(work) => work,
            Err(e) => return Outcome::error(format!("cannot make a temporary folder: {e}")),
        };
        let outcome = match self.prepare(trial, work.path()) {
            Ok(root) => self.run_tests(trial, &root, work.path(), cancel, on_test, started),
            Err(message) => Outcome::error(message),
        };
        if let Err(e) = work.close() {
            tracing::warn!("could not remove a test copy: {e}");
        }
        outcome
    }

    /// Runs `command` in the sandbox, in a fresh copy of `repository` with `env`'s interpreter
    /// first on PATH (as tests run), and gives `read` the copy's root and how the command ended
    /// before the copy is removed. `Err` says why nothing could be run.
    pub fn run_in_copy<T>(
        &self,
        repository: &Path,
        env: &PythonEnv,
        command: &InCopy,
        cancel: &AtomicBool,
        read: impl FnOnce(&Path, Ran) -> T,
    ) -> Result<T, String> {
        let work = tempfile::Builder::new()
            .prefix("crossfile-run-")
            .tempdir_in(&self.work_dir)
            .map_err(|e| format!("cannot make a temporary folder: {e}"))?;
        let root = work.path().join("repository");
        copy_tree(repository, &root)
            .map_err(|e| format!("cannot copy {}: {e}", repository.display()))?;
        for (rel, text) in command.files {
            let path = root.join(rel);
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent)
                    .map_err(|e| format!("cannot write {rel} in the copy: {e}"))?;
            }
            std::fs::write(&path, text)
                .map_err(|e| format!("cannot write {rel} in the copy: {e}"))?;
        }
        let mut vars = test_env(&root, env);
        if let Some((_, python_path)) = vars.iter_mut().find(|(k, _)| k == "PYTHONPATH") {
            let first: Vec<String> = command
                .import_first
                .iter()
                .map(|dir| root.join(dir).display().to_string())
                .collect();
            if !first.is_empty() {
                *python_path = format!("{}:{python_path}", first.join(":"));
            }
        }
        vars.extend(command.env.iter().cloned());
        let output = work.path().join("output.txt");
        let read_only = view::python(env).map_err(|e| e.to_string())?;
        let job = isolate::Job {
            program: command.program,
            args: command.args,
            dir: &root,
            env: &vars,
            read_only: &read_only,
            output: &output,
            limit: command.limit,
        };
        let ran = self
            .sandbox
            .run(&job, cancel)
            .map_err(|e| format!("cannot run {}: {e}", command.program.display()))?;
        let result = read(&root, ran);
        if let Err(e) = work.close() {
            tracing::warn!("could not remove a copy: {e}");
        }
        Ok(result)
    }

    /// The copy with the completion spliced in: its root.
    fn prepare(&self, trial: &Trial, work: &Path) -> Result<PathBuf, String> {
        let name = trial
            .repository
            .file_name()
            .map_or_else(|| "repository".into(), |n| n.to_os_string());
        let root = work.join(name);
        copy_tree(trial.repository, &root).map_err(|e| {
            format!(
                "cannot copy {} to a temporary folder: {e}",
                trial.repository.display()
            )
        })?;
        let path = root.join(trial.file);
        let text = std::fs::read_to_string(&path)
            .map_err(|e| format!("cannot read {}: {e}", trial.file))?;
        let (first, last) = trial.body;
        let spliced = splice::splice(&text, first, last, trial.completion, trial.indent)
            .ok_or_else(|| {
                format!(
                    "{}: the body's lines {first}..{last} are not in the file",
                    trial.file
                )
            })?;
        std::fs::write(&path, spliced)
            .map_err(|e| format!("cannot write the copy's {}: {e}", trial.file))?;
        Ok(root)
    }

    fn run_tests(
        &self,
        trial: &Trial,
        root: &Path,
        work: &Path,
        cancel: &AtomicBool,
        on_test: &dyn Fn(usize, &str),
        started: Instant,
    ) -> Outcome {
        let read_only = match view::python(trial.env) {
            Ok(read_only) => read_only,
            Err(e) => return Outcome::error(e.to_string()),
        };
        let env = test_env(root, trial.env);
        let output = work.join("output.txt");
        let mut runs = Vec::new();
        for (number, id) in trial.tests.iter().enumerate() {
            on_test(number, id);
            let args: Vec<String> = ["-m", "pytest", "-q", "-p", "no:cacheprovider", id]
                .iter()
                .map(|a| a.to_string())
                .collect();
            let job = isolate::Job {
                program: &trial.env.python,
                args: &args,
                dir: root,
                env: &env,
                read_only: &read_only,
                output: &output,
                limit: self.per_test,
            };
            let ran = match self.sandbox.run(&job, cancel) {
                Ok(ran) => ran,
                Err(e) => return Outcome::error(format!("cannot run {id}: {e}")),
            };
            let (status, exit_code) = match ran.ended {
                Ended::Exited(0) => (Status::Pass, Some(0)),
                Ended::Exited(code) => (Status::Fail, Some(code)),
                Ended::Signalled(_) => (Status::Fail, None),
                Ended::TimedOut => (Status::Timeout, None),
                Ended::Cancelled => return Outcome::error("cancelled"),
            };
            runs.push(TestRun {
                id: id.clone(),
                status,
                exit_code,
                secs: ran.secs,
                tail: ran.tail,
            });
            if status != Status::Pass {
                break;
            }
        }
        Outcome::of_tests(runs, started.elapsed().as_secs_f64())
    }
}

/// The tests' whole environment: the interpreter's `bin` first on PATH, the copy's root (and its
/// `src/`, for src layouts) first on the import path, HOME and TMPDIR in the private `/tmp`.
fn test_env(root: &Path, env: &PythonEnv) -> Vec<(String, String)> {
    let mut python_path = vec![root.to_path_buf()];
    if root.join("src").is_dir() {
        python_path.push(root.join("src"));
    }
    let python_path = std::env::join_paths(python_path)
        .map(|p| p.to_string_lossy().into_owned())
        .unwrap_or_default();
    let bin = env.prefix.join("bin");
    vec![
        (
            "PATH".into(),
            format!("{}:/usr/local/bin:/usr/bin:/bin", bin.display()),
        ),
        ("PYTHONPATH".into(), python_path),
        ("HOME".into(), "/tmp".into()),
        ("TMPDIR".into(), "/tmp".into()),
        ("LANG".into(), "C.UTF-8".into()),
    ]
}

/// `name` in a folder of PATH, if there.
fn find_on_path(name: &str) -> Option<PathBuf> {
    std::env::var_os("PATH").and_then(|path| {
        std::env::split_paths(&path)
            .map(|dir| dir.join(name))
            .find(|candidate| candidate.is_file())
    })
}
