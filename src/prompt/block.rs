//! The cross-file block, formatted as CrossCodeEval formats its `crossfile_context.text`.

use crate::lang::Language;
use crate::retrieve::Hit;

/// `# Here are some relevant code fragments from other files of the repo:`, a blank line, then
/// per hit `# the below code fragment can be found in:`, `# <path>`, the chunk's lines each
/// prefixed by `# `, and a blank line (`//` instead of `#` outside Python). Empty without hits.
pub fn crossfile_block(language: Language, hits: &[Hit]) -> String {
    let _ = (language, hits);
    todo!("prompt: cross-file block")
}
