//! `workspace/executeCommand`: the replay, scoring and inspection commands, each with one JSON
//! object as its argument.

mod arena;
mod inspect;
mod status;

use std::sync::Arc;

use serde_json::Value;
use tower_lsp::jsonrpc;
use tower_lsp::lsp_types::ExecuteCommandParams;

use crate::lsp::error::ServeError;
use crate::lsp::ext::{
    ALL, ArenaReveal, ArenaVote, Command, Compare, Context, ListCases, NextCase, PreviousCase,
    ReplayCase, Retrievers, Score, Status,
};
use crate::lsp::replay::{self, cases, score};
use crate::lsp::state::State;

/// Runs a command. Bad arguments are `InvalidParams` naming the field; a command that cannot be
/// done (a missing file, a case id not loaded) is an error with the reason.
pub async fn execute(
    state: &Arc<State>,
    params: ExecuteCommandParams,
) -> jsonrpc::Result<Option<Value>> {
    let command = params.command.as_str();
    let mut argument = params.arguments.into_iter().next();
    // The request's own progress token goes to the commands that report progress.
    if let (Some(token), Some(Value::Object(fields)), Score::NAME | Compare::NAME) = (
        params.work_done_progress_params.work_done_token,
        argument.as_mut(),
        command,
    ) {
        fields
            .entry("workDoneToken")
            .or_insert_with(|| serde_json::json!(token));
    }
    let outcome = match command {
        ReplayCase::NAME => {
            let args = argument_of::<ReplayCase>(argument)?;
            reply::<ReplayCase>(replay::replay_case(state, args).await)
        }
        NextCase::NAME => reply::<NextCase>(replay::step(state, 1).await),
        PreviousCase::NAME => reply::<PreviousCase>(replay::step(state, -1).await),
        Score::NAME => {
            let args = argument_of::<Score>(argument)?;
            reply::<Score>(score::score_case(state, args).await)
        }
        Compare::NAME => {
            let args = argument_of::<Compare>(argument)?;
            let specs = inspect::compare_specs(&args)
                .map_err(|e| jsonrpc::Error::invalid_params(format!("{command}: {e}")))?;
            reply::<Compare>(inspect::compare(state, args, specs).await)
        }
        Context::NAME => reply::<Context>(Ok(inspect::context(
            state,
            argument_of::<Context>(argument)?,
        ))),
        ListCases::NAME => {
            let args = argument_of::<ListCases>(argument)?;
            reply::<ListCases>(cases::list_cases(state, args).await)
        }
        Retrievers::NAME => reply::<Retrievers>(Ok(status::retrievers(state))),
        Status::NAME => reply::<Status>(Ok(status::status(state))),
        ArenaVote::NAME => {
            let args = argument_of::<ArenaVote>(argument)?;
            reply::<ArenaVote>(arena::vote(state, args))
        }
        ArenaReveal::NAME => reply::<ArenaReveal>(arena::reveal(state)),
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

/// `C`'s answer as the JSON the client gets.
fn reply<C: Command>(outcome: Result<C::Result, ServeError>) -> Result<Value, ServeError> {
    outcome.and_then(|value| {
        serde_json::to_value(value)
            .map_err(|e| ServeError::Request(format!("the answer could not be written: {e}")))
    })
}

/// `C`'s one argument; a bad one is `InvalidParams` naming the field (`.` for the whole
/// argument).
fn argument_of<C: Command>(argument: Option<Value>) -> jsonrpc::Result<C::Params> {
    let argument = argument.unwrap_or(Value::Null);
    serde_path_to_error::deserialize(argument).map_err(|e| {
        let path = e.path().to_string();
        let field = if path.is_empty() {
            ".".to_string()
        } else {
            path
        };
        jsonrpc::Error::invalid_params(format!(
            "{}: bad argument at {field}: {}",
            C::NAME,
            e.into_inner()
        ))
    })
}
