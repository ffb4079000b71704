//! What running a completion's tests gave: per test and for the completion.

use serde::{Deserialize, Serialize};

/// How a test, or a completion's tests as a whole, ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// Exit code 0.
    Pass,
    /// Any other exit, a signal, or the `pass`-only body (as the official procedure counts it).
    Fail,
    /// The harness could not run it (no environment, no sandbox, a body outside the file): the
    /// completion says nothing, and scores leave it out.
    Error,
    /// Killed at the time limit (the official procedure counts it a failure).
    Timeout,
}

impl Status {
    pub fn name(self) -> &'static str {
        match self {
            Status::Pass => "pass",
            Status::Fail => "fail",
            Status::Error => "error",
            Status::Timeout => "timeout",
        }
    }

    /// Whether the completion is scored (everything but an error).
    pub fn is_scored(self) -> bool {
        self != Status::Error
    }
}

/// One test id run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TestRun {
    pub id: String,
    pub status: Status,
    /// The exit code, when it exited.
    pub exit_code: Option<i32>,
    pub secs: f64,
    /// The last lines of its output (stdout and stderr together).
    pub tail: String,
}

/// A completion's tests: run in order, stopping at the first that does not pass.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Outcome {
    pub status: Status,
    pub tests: Vec<TestRun>,
    /// The first test that did not pass.
    pub first_failure: Option<String>,
    /// Why the harness could not run the tests (`status` error), or why it failed without
    /// running them.
    pub message: Option<String>,
    /// Seconds for the copy, the splice and the tests.
    pub secs: f64,
}

impl Outcome {
    /// A completion the harness could not run.
    pub fn error(message: impl Into<String>) -> Outcome {
        Outcome {
            status: Status::Error,
            tests: Vec::new(),
            first_failure: None,
            message: Some(message.into()),
            secs: 0.0,
        }
    }

    /// From the tests run (the last one the first that did not pass, if any).
    pub fn of_tests(tests: Vec<TestRun>, secs: f64) -> Outcome {
        let failed = tests.iter().find(|t| t.status != Status::Pass);
        Outcome {
            status: failed.map_or(Status::Pass, |t| t.status),
            first_failure: failed.map(|t| t.id.clone()),
            tests,
            message: None,
            secs,
        }
    }
}
