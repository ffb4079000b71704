//! `crossfile serve` over real stdio: the server, its commands, replay and scoring, EvoCodeBench
//! cases in the editor, live completion, fallbacks and a misbehaving client.

mod arena;
pub mod client;
mod commands;
mod exec;
mod fallback;
mod live_completion;
pub mod replay;
mod robustness;
mod score;
mod server;
mod status;
