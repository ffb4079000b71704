//! The arena: blind paired comparison of arms (retrievers, prompt layouts, models) by the votes
//! of the people using them. A battle shows two arms' suggestions at one cursor, in random order,
//! unlabelled; the choice is appended to a local votes file ([`vote`]), and [`standings`] ranks
//! the arms by the Bradley–Terry model ([`fit`]) with bootstrap intervals and position bias;
//! [`simulate`] casts a reference voter's votes at replayed cases.

pub mod battle;
pub mod fit;
pub mod html;
pub mod simulate;
pub mod standings;
pub mod vote;

pub use standings::{Standings, standings};
pub use vote::{Vote, VoteError, Votes};
