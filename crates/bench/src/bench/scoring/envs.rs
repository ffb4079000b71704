//! Python environments for execution-based benchmarks: one virtualenv per repository, made from
//! the benchmark's pinned requirement file, kept in the cache (never under the repositories).
//!
//! An environment is `<cache>/envs/<benchmark>/<repository>/`, finished when its marker
//! (`.crossfile-env`, written last) names the requirement file's hash and the interpreter it was
//! made with: setting up again with the same inputs does nothing, a change rebuilds it, and a
//! killed setup leaves no marker (the next one starts over). A repository with a `src/` layout
//! and a build file is also installed into its environment, without dependencies and from a
//! temporary copy, for tests that read its installed metadata; the harness puts the copy's
//! `src/` first on the import path, so what the tests import is still the edited copy. When that
//! install fails (a build that cannot run unattended, such as one that needs a variable set), the
//! environment is still made, without it, and the failure is kept beside the marker and told as a
//! warning each time: the tests import the sources from the copy all the same.

use std::ffi::OsStr;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::bench::BenchError;
use crate::harness::{PythonEnv, copy_tree};

/// The marker a finished environment holds.
const MARKER: &str = ".crossfile-env";

/// Beside the marker: why the repository itself is not installed in the environment.
const NOT_INSTALLED: &str = ".crossfile-env-warning";

/// Where one benchmark's environments live.
#[derive(Clone, Debug)]
pub struct EnvStore {
    root: PathBuf,
}

/// What setting up one repository's environment did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SetUp {
    /// Made now.
    Made,
    /// Already there for the same requirements and interpreter.
    Kept,
}

/// One environment set up: made or kept, and what the user should know about it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Prepared {
    pub how: SetUp,
    /// What failed and what was done instead (the repository could not install itself).
    pub warning: Option<String>,
}

/// Why an environment could not be made (the others are still made).
#[derive(Debug, thiserror::Error)]
#[error("{repository}: {message}")]
pub struct SetupError {
    pub repository: String,
    pub message: String,
}

impl EnvStore {
    /// The environments of `benchmark` under `cache_dir`.
    pub fn new(cache_dir: &Path, benchmark: &str) -> EnvStore {
        EnvStore {
            root: cache_dir.join("envs").join(benchmark),
        }
    }

    /// The environments in `root` (a folder `bench setup-env` filled).
    pub fn at(root: PathBuf) -> EnvStore {
        EnvStore { root }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    fn dir(&self, repository: &str) -> PathBuf {
        self.root.join(repository)
    }

    /// The finished environment of `repository`, or what is missing.
    pub fn env_for(&self, repository: &str) -> Result<PythonEnv, String> {
        let dir = self.dir(repository);
        let env = PythonEnv::venv(&dir);
        if !dir.join(MARKER).is_file() {
            return Err(format!(
                "no Python environment for {repository} (none finished at {}): run `crossfile \
                 bench setup-env --format evocodebench --repos DIR --requirements DIR`",
                dir.display()
            ));
        }
        if !env.python.exists() {
            return Err(format!(
                "the Python environment of {repository} is broken: {} is missing (set it up again)",
                env.python.display()
            ));
        }
        Ok(env)
    }

    /// The repositories `setup` would make environments for: each folder of `repos` with a
    /// `<requirements>/<folder>.txt`, sorted; and the folders without one.
    pub fn planned(
        repos: &Path,
        requirements: &Path,
    ) -> Result<(Vec<String>, Vec<String>), BenchError> {
        let read = fs::read_dir(repos).map_err(|error| BenchError::Read {
            path: repos.into(),
            error,
        })?;
        let mut names: Vec<String> = read
            .filter_map(Result::ok)
            .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
            .filter_map(|e| e.file_name().to_str().map(str::to_string))
            .filter(|name| !name.starts_with('.'))
            .collect();
        names.sort();
        Ok(names
            .into_iter()
            .partition(|name| requirements.join(format!("{name}.txt")).is_file()))
    }

    /// Makes (or keeps) the environment of `repository` of `repos` from
    /// `<requirements>/<repository>.txt` with the interpreter `python`.
    pub fn set_up(
        &self,
        repos: &Path,
        requirements: &Path,
        repository: &str,
        python: &str,
    ) -> Result<Prepared, SetupError> {
        let fail = |message: String| SetupError {
            repository: repository.to_string(),
            message,
        };
        let requirement_file = requirements.join(format!("{repository}.txt"));
        let pinned = fs::read(&requirement_file)
            .map_err(|e| fail(format!("cannot read {}: {e}", requirement_file.display())))?;
        let version = run(Command::new(python).args(["-c", "import sys; print(sys.version)"]))
            .map_err(|e| fail(format!("cannot run {python}: {e}")))?;
        let marker = format!(
            "requirements blake3 {}\npython {}\n",
            blake3::hash(&pinned).to_hex(),
            version.trim()
        );
        let dir = self.dir(repository);
        if fs::read_to_string(dir.join(MARKER)).is_ok_and(|m| m == marker) {
            return Ok(Prepared {
                how: SetUp::Kept,
                warning: fs::read_to_string(dir.join(NOT_INSTALLED)).ok(),
            });
        }
        if dir.exists() {
            fs::remove_dir_all(&dir)
                .map_err(|e| fail(format!("cannot remove the old {}: {e}", dir.display())))?;
        }
        fs::create_dir_all(&self.root)
            .map_err(|e| fail(format!("cannot create {}: {e}", self.root.display())))?;
        run(Command::new(python).arg("-m").arg("venv").arg(&dir))
            .map_err(|e| fail(format!("`{python} -m venv` failed: {e}")))?;
        let env = PythonEnv::venv(&dir);
        pip_install(&env, &[OsStr::new("-r"), requirement_file.as_os_str()]).map_err(|e| {
            fail(format!(
                "pip install -r {} failed: {e}",
                requirement_file.display()
            ))
        })?;
        let source = repos.join(repository);
        let mut warning = None;
        if installs_itself(&source)
            && let Err(failure) = install_copy(&env, &source)
        {
            let text = format!(
                "installing {repository} itself into its environment failed ({failure}); the \
                 environment has its requirements only: its tests import {repository}'s sources \
                 from the tested copy (its root and src/ come first on the import path), but \
                 nothing of {repository} is installed (no package metadata)"
            );
            fs::write(dir.join(NOT_INSTALLED), &text).map_err(|e| {
                fail(format!(
                    "cannot write {}: {e}",
                    dir.join(NOT_INSTALLED).display()
                ))
            })?;
            warning = Some(text);
        }
        fs::write(dir.join(MARKER), marker)
            .map_err(|e| fail(format!("cannot write {}: {e}", dir.join(MARKER).display())))?;
        Ok(Prepared {
            how: SetUp::Made,
            warning,
        })
    }
}

/// A `src/` layout with a build file: its tests may read the package's installed metadata.
fn installs_itself(repository: &Path) -> bool {
    repository.join("src").is_dir()
        && ["pyproject.toml", "setup.py", "setup.cfg"]
            .iter()
            .any(|file| repository.join(file).is_file())
}

/// Installs `source` into `env` without dependencies, built from a temporary copy.
fn install_copy(env: &PythonEnv, source: &Path) -> Result<(), String> {
    let temp = tempfile::tempdir().map_err(|e| format!("cannot make a temporary folder: {e}"))?;
    let copy = temp.path().join("source");
    copy_tree(source, &copy).map_err(|e| format!("cannot copy {}: {e}", source.display()))?;
    pip_install(env, &[OsStr::new("--no-deps"), copy.as_os_str()])
        .map_err(|e| format!("pip install --no-deps: {e}"))
}

/// `pip install -q <args>` with the environment's own interpreter.
fn pip_install(env: &PythonEnv, args: &[&OsStr]) -> Result<(), String> {
    run(Command::new(&env.python)
        .args(["-m", "pip", "install", "-q", "--disable-pip-version-check"])
        .args(args))
    .map(drop)
}

/// Runs `command`: its stdout, or an error with what its output says went wrong.
fn run(command: &mut Command) -> Result<String, String> {
    let output = command.output().map_err(|e| e.to_string())?;
    if output.status.success() {
        return Ok(String::from_utf8_lossy(&output.stdout).into_owned());
    }
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    Err(format!("{}: {}", output.status, telling_lines(&text)))
}

/// What an output says went wrong: its last Python exception line (a build's traceback ends
/// with it, above pip's summary) and pip's own `ERROR:` lines, or else its last lines.
fn telling_lines(text: &str) -> String {
    let lines: Vec<&str> = text.trim_end().lines().map(str::trim).collect();
    let mut telling: Vec<&str> = lines
        .iter()
        .rev()
        .find(|line| is_exception_line(line))
        .into_iter()
        .copied()
        .collect();
    telling.extend(lines.iter().filter(|line| line.starts_with("ERROR:")));
    if telling.is_empty() {
        telling = lines[lines.len().saturating_sub(8)..].to_vec();
    }
    telling.join("\n")
}

/// `RuntimeError: …`, `ModuleNotFoundError: …`, `setuptools.errors.SetupError: …`.
fn is_exception_line(line: &str) -> bool {
    let name = line.split_once(':').map_or(line, |(name, _)| name);
    let last = name.rsplit('.').next().unwrap_or(name);
    !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.')
        && ["Error", "Exception", "Exit", "Interrupt"]
            .iter()
            .any(|suffix| last.ends_with(suffix))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_or_unfinished_environment_says_what_to_run() {
        let dir = tempfile::tempdir().expect("temp dir");
        let store = EnvStore::new(dir.path(), "evocodebench");
        let missing = store.env_for("repo").expect_err("none made");
        assert!(missing.contains("crossfile bench setup-env"), "{missing}");
        fs::create_dir_all(store.root().join("repo/bin")).expect("mkdir");
        assert!(store.env_for("repo").is_err(), "no marker: unfinished");
        fs::write(store.root().join("repo").join(MARKER), "x").expect("marker");
        let broken = store.env_for("repo").expect_err("no interpreter");
        assert!(broken.contains("broken"), "{broken}");
    }

    #[test]
    fn only_folders_with_a_requirement_file_are_planned() {
        let dir = tempfile::tempdir().expect("temp dir");
        let (repos, requirements) = (dir.path().join("repos"), dir.path().join("req"));
        for name in ["a", "b", ".venvs"] {
            fs::create_dir_all(repos.join(name)).expect("mkdir");
        }
        fs::create_dir_all(&requirements).expect("mkdir");
        fs::write(requirements.join("a.txt"), "pytest==7.4.4\n").expect("write");
        let (with, without) = EnvStore::planned(&repos, &requirements).expect("readable");
        assert_eq!(
            (with, without),
            (vec!["a".to_string()], vec!["b".to_string()])
        );
    }

    #[test]
    fn a_failed_build_is_told_by_its_exception_and_pips_errors() {
        let pip = "  ╰─> [21 lines of output]\n      Traceback (most recent call last):\n        \
                   File \"<string>\", line 4, in <module>\n      \
                   RuntimeError: set IRIS_ENV to build\n      [end of output]\n  \
                   note: This error originates from a subprocess.\nerror: subprocess-exited-with-error\n\
                   × Getting requirements to build wheel did not run successfully.\n";
        assert_eq!(telling_lines(pip), "RuntimeError: set IRIS_ENV to build");
        let missing = "Collecting numpy==0.0.1\nERROR: Could not find a version that satisfies \
                       the requirement numpy==0.0.1\nERROR: No matching distribution found\n";
        assert_eq!(
            telling_lines(missing),
            "ERROR: Could not find a version that satisfies the requirement numpy==0.0.1\n\
             ERROR: No matching distribution found"
        );
        assert_eq!(telling_lines("one\ntwo\n"), "one\ntwo");
    }

    #[test]
    fn a_src_layout_with_a_build_file_installs_itself() {
        let dir = tempfile::tempdir().expect("temp dir");
        assert!(!installs_itself(dir.path()));
        fs::create_dir(dir.path().join("src")).expect("mkdir");
        assert!(!installs_itself(dir.path()), "no build file");
        fs::write(dir.path().join("pyproject.toml"), "").expect("write");
        assert!(installs_itself(dir.path()));
    }
}
