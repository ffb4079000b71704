//! `crossfile bench …`: one module per subcommand — replaying and scoring benchmark cases (`run`,
//! `score` with its execution-based side in `executed`, `report`, `compare`, `export`, `merge`),
//! mining cases (`mine`, `mine_functions`, `mine_history`), the test harness and environments (`harness`,
//! `setup_env`), the arena's standings (`arena`), and the performance benchmarks (`perf`,
//! `model`, `lsp`, `typing`).

pub mod arena;
pub mod compare;
pub mod executed;
pub mod export;
pub mod harness;
pub mod lsp;
pub mod merge;
pub mod mine;
pub mod mine_functions;
pub mod mine_history;
pub mod model;
pub mod perf;
pub mod report;
pub mod run;
pub mod score;
pub mod setup_env;
pub mod typing;
