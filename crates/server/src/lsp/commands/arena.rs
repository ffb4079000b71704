//! `crossfile.arenaVote` (the user's choice in a battle, written to the votes file) and
//! `crossfile.arenaReveal` (the last decided battle with its arms named).

use crate::lsp::error::ServeError;
use crate::lsp::ext::{ArenaRevealResult, ArenaVoteParams, ArenaVoteResult};
use crate::lsp::state::State;

/// Records the vote on a pending battle; a battle no longer pending (voted on, or superseded as
/// no choice) is answered `recorded: false`.
pub fn vote(state: &State, args: ArenaVoteParams) -> Result<ArenaVoteResult, ServeError> {
    if let Some(pick) = args.pick
        && !matches!(pick, 1 | 2)
    {
        return Err(ServeError::request(format!(
            "pick is 1 or 2 (the suggestion shown first or second) or null (none), not {pick}"
        )));
    }
    match state.battles.take(args.battle) {
        Some(battle) => {
            state.battles.record(&battle, args.pick);
            Ok(ArenaVoteResult {
                recorded: true,
                votes: battle.votes,
            })
        }
        None => Ok(ArenaVoteResult {
            recorded: false,
            votes: state.first_settings().arena.votes.clone(),
        }),
    }
}

/// The last battle decided in this session, in the order it was shown, its arms named.
pub fn reveal(state: &State) -> Result<ArenaRevealResult, ServeError> {
    let decided = state.battles.last_decided().ok_or_else(|| {
        ServeError::request("no arena battle has been decided in this session yet")
    })?;
    let vote = &decided.vote;
    let first = usize::from(vote.first);
    let order = [first, 1 - first];
    let in_order = |of: &[String; 2]| order.map(|i| of[i].clone());
    Ok(ArenaRevealResult {
        battle: decided.id,
        votes: decided.votes.clone(),
        arms: in_order(&vote.arms),
        picked: vote
            .choice
            .map(|c| if usize::from(c) == first { 1 } else { 2 }),
        texts: in_order(&vote.texts),
        latency_ms: order.map(|i| vote.latency_ms[i]),
        case_id: vote.case_id.clone(),
        metrics: vote.metrics.as_ref().map(|m| order.map(|i| m[i].clone())),
        path: vote.path.clone(),
        line: vote.line,
        col: vote.col,
    })
}
