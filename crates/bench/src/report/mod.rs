//! What is made of run files (read by [`crate::bench::runfile`]): per-group summaries with
//! bootstrap intervals, paired comparisons of retrievers and of runs, EM and ES by line category,
//! where retrieved context comes from (origins, identifier overlap), the report in Markdown,
//! JSON and HTML (with its charts and per-case drill-down), and prediction exports in each
//! benchmark's own format.

pub mod bootstrap;
pub mod build;
pub mod category;
pub mod compare;
pub mod document;
pub mod export;
pub(crate) mod html;
pub mod markdown;
pub mod provenance;
pub mod sources;
pub mod summary;
pub mod textdiff;

pub use html::render_html;
