//! `workspace/executeCommand`: the replay, scoring and inspection commands, each with one JSON
//! object as its argument.

use std::sync::Arc;

use serde::de::DeserializeOwned;
use serde_json::Value;
use tower_lsp::jsonrpc;
use tower_lsp::lsp_types::ExecuteCommandParams;

use super::state::State;
use super::{cases, inspect, replay, score};

pub const REPLAY_CASE: &str = "crossfile.replayCase";
pub const NEXT_CASE: &str = "crossfile.nextCase";
pub const PREVIOUS_CASE: &str = "crossfile.previousCase";
pub const SCORE: &str = "crossfile.score";
pub const COMPARE: &str = "crossfile.compare";
pub const CONTEXT: &str = "crossfile.context";
pub const LIST_CASES: &str = "crossfile.listCases";

/// Every command, as announced in `executeCommandProvider`.
pub const ALL: [&str; 7] = [
    REPLAY_CASE,
    NEXT_CASE,
    PREVIOUS_CASE,
    SCORE,
    COMPARE,
    CONTEXT,
    LIST_CASES,
];

/// Runs a command. Bad arguments are `InvalidParams` naming the field; a command that cannot be
/// done (a missing file, a case id not loaded) is an error with the reason.
pub async fn execute(
    state: &Arc<State>,
    params: ExecuteCommandParams,
) -> jsonrpc::Result<Option<Value>> {
    let command = params.command.as_str();
    let mut argument = params.arguments.into_iter().next();
    // The request's own progress token goes to the commands that report progress.
    if let (Some(token), Some(Value::Object(fields)), SCORE | COMPARE) = (
        params.work_done_progress_params.work_done_token,
        argument.as_mut(),
        command,
    ) {
        fields
            .entry("workDoneToken")
            .or_insert_with(|| serde_json::json!(token));
    }
    let outcome = match command {
        REPLAY_CASE => replay::replay_case(state, args(command, argument)?).await,
        NEXT_CASE => replay::step(state, 1).await,
        PREVIOUS_CASE => replay::step(state, -1).await,
        SCORE => score::score_case(state, args(command, argument)?).await,
        COMPARE => {
            let args: inspect::CompareArgs = args(command, argument)?;
            let specs = inspect::compare_specs(&args)
                .map_err(|e| jsonrpc::Error::invalid_params(format!("{command}: {e}")))?;
            inspect::compare(state, args, specs).await
        }
        CONTEXT => Ok(inspect::context(state, args(command, argument)?)),
        LIST_CASES => cases::list_cases(state, args(command, argument)?).await,
        other => {
            return Err(jsonrpc::Error::invalid_params(format!(
                "unknown command {other:?}: the commands are {}",
                ALL.join(", ")
            )));
        }
    };
    match outcome {
        Ok(value) => Ok(Some(value)),
        Err(error) => {
            tracing::warn!(command, "{error}");
            Err(error.to_response(command))
        }
    }
}

/// The command's one argument, as `T`.
fn args<T: DeserializeOwned>(command: &str, argument: Option<Value>) -> jsonrpc::Result<T> {
    let argument = argument.unwrap_or(Value::Null);
    serde_json::from_value(argument)
        .map_err(|e| jsonrpc::Error::invalid_params(format!("{command}: bad argument: {e}")))
}
