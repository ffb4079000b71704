//! `retrieve.exclude`: which chunks of the cursor's own file the ranked retrievers (`bm25`,
//! `jaccard`, `dense`) leave out. The conformance retrievers (`bm25-cceval`, `bm25-cceval-rg1`,
//! `oracle`, `dataset`) keep their benchmark's own rule whatever it says, and `random:` always
//! draws from other files.

use std::ops::Range;

use super::Query;

crate::choice! {
    /// What of the cursor's own file retrieval may not return (`[retrieve] exclude`).
    #[derive(Default)]
    pub enum Exclude {
        /// Nothing: a chunk of the cursor's own file ranks like any other, even one that overlaps
        /// the lines the prompt shows anyway (the index never holds the reference).
        None,
        /// The chunks that overlap the query's own window: the cursor's line and the
        /// [`super::OWN_REGION_LINES`] lines before it ([`Query::own_region`]).
        #[default]
        Window,
        /// Every chunk of the cursor's own file: only other files' chunks, as CrossCodeEval's
        /// template ("fragments from other files") says.
        File,
    }
}

impl Exclude {
    /// Whether a chunk of `path` covering `lines` (0-based, half-open) is left out at `query`.
    pub fn leaves_out(self, query: &Query, path: &str, lines: &Range<u32>) -> bool {
        match self {
            Exclude::None => false,
            Exclude::Window => query.overlaps_own_region(path, lines),
            Exclude::File => path == query.path,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Position;
    use crate::choice::Choice;

    #[test]
    fn each_setting_leaves_out_its_own_part_of_the_cursors_file() {
        let text = "a\n".repeat(40);
        let q = Query::new("pkg/m.py", &text, Position { line: 30, col: 0 }).expect("cursor");
        // The window is lines 10..31; a chunk after it, one inside it, one of another file.
        let (before, inside, after) = (0..5, 25..35, 32..40);
        let left_out = |e: Exclude, lines: &Range<u32>| e.leaves_out(&q, "pkg/m.py", lines);
        assert!(!left_out(Exclude::None, &inside));
        assert!(left_out(Exclude::Window, &inside));
        assert!(!left_out(Exclude::Window, &before) && !left_out(Exclude::Window, &after));
        assert!(left_out(Exclude::File, &before) && left_out(Exclude::File, &after));
        for &e in Exclude::all() {
            assert!(!e.leaves_out(&q, "pkg/other.py", &inside), "{e:?}");
            assert_eq!(e.name().parse::<Exclude>(), Ok(e));
        }
        assert!("files".parse::<Exclude>().is_err());
    }
}
