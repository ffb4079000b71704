//! Whether what makes ghost text fast costs quality: pauses the measured server answered in time
//! are answered again by a second server with `lsp.reuse_kv` off (each prompt laid out as
//! `crossfile complete` lays it out, retrieved at the cursor and read in a fresh context, the
//! model asked every time), each waited for as long as it takes, and the edit similarity of both
//! answers to what the person typed next compared over the same pauses.
//!
//! Where the live answer typed along an earlier suggestion, the second server is asked where that
//! suggestion was asked and its answer typed along the same way (if what was typed since matches
//! it; else it is asked at the pause): like with like, so that the comparison is of the reuse and
//! the layout, not of typing along. Its fresh answer at the pause is compared too
//! (`typed_along_fresh`): what typing along itself costs against asking the model again.

use serde::Serialize;
use serde_json::{Value, json};

use super::script::RetypedLines;
use super::session::{self, AnsweredPause};
use super::{PerfError, merge, serve_child};
use crate::perf::mean;
use crate::report::bootstrap::{Bootstrap, Interval};

/// Mean edit similarity (0..=1) over the same answered pauses, live and with reuse off: over all
/// of them, and apart for the live answers typed along an earlier suggestion and those the model
/// made; and the typed-along ones against a fresh answer at the pause.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct ReuseOff {
    #[serde(flatten)]
    pub all: Paired,
    pub typed_along: Paired,
    pub asked: Paired,
    pub typed_along_fresh: Paired,
}

/// One pause answered both ways: the live answer's score, reuse off's (typing along the same way
/// where the live answer did) and reuse off's fresh answer at the pause.
#[derive(Clone, Copy, Debug)]
struct Pair {
    pause: AnsweredPause,
    off: f64,
    fresh: f64,
}

/// Edit similarity over pauses answered both ways.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct Paired {
    pub pauses: usize,
    pub es_live: f64,
    pub es_reuse_off: f64,
    /// Pauses whose two answers scored the same.
    pub same: usize,
    /// The paired difference live − reuse off: its 95% bootstrap interval (the report's rule,
    /// `report::bootstrap`); below zero all through, reuse cost quality.
    pub difference: Option<Interval>,
}

impl Paired {
    /// Over the pairs for which `keep` holds, live against `other`'s score.
    fn of(
        pairs: &[Pair],
        keep: impl Fn(&AnsweredPause) -> bool,
        other: impl Fn(&Pair) -> f64,
    ) -> Self {
        let (live, off): (Vec<f64>, Vec<f64>) = pairs
            .iter()
            .filter(|pair| keep(&pair.pause))
            .map(|pair| (pair.pause.es, other(pair)))
            .unzip();
        let differences: Vec<f64> = live.iter().zip(&off).map(|(a, b)| a - b).collect();
        Paired {
            pauses: live.len(),
            es_live: mean(&live),
            es_reuse_off: mean(&off),
            same: differences.iter().filter(|d| d.abs() < 1e-9).count(),
            difference: Bootstrap::default().mean_interval(&differences),
        }
    }
}

/// Up to `n` of `answered`, spread evenly over them, in their order.
fn spread(answered: &[AnsweredPause], n: usize) -> Vec<AnsweredPause> {
    if n == 0 || answered.is_empty() {
        return Vec::new();
    }
    let n = n.min(answered.len());
    (0..n).map(|i| answered[i * answered.len() / n]).collect()
}

/// Answers up to `n` of `answered` again with a server started with `options` and reuse off.
pub fn compare_reuse_off(
    server: &std::path::Path,
    workspace: &std::path::Path,
    places: &[RetypedLines],
    mut options: Value,
    answered: &[AnsweredPause],
    n: usize,
    say: &dyn Fn(&str),
) -> Result<ReuseOff, PerfError> {
    let chosen = spread(answered, n);
    merge(&mut options, &json!({"lsp": {"reuse_kv": false}}));
    let mut served = serve_child::start(server, workspace, options)?;
    let mut pairs = Vec::new();
    for (i, pause) in chosen.iter().enumerate() {
        let place = places.get(pause.place).ok_or_else(|| {
            PerfError::Unmeasurable(format!("no place {} was typed", pause.place))
        })?;
        let mut ask =
            |offset| session::suggestion_at(&mut served.client, place, offset, serve_child::SLOW);
        let fresh = session::similarity(place, pause.offset, &ask(pause.offset)?);
        let off = match pause.along_from.filter(|&from| from < pause.offset) {
            Some(from) => {
                let earlier = ask(from)?;
                match along(&earlier, &place.original[from..pause.offset]) {
                    Some(rest) => session::similarity(place, pause.offset, rest),
                    None => fresh,
                }
            }
            None => fresh,
        };
        pairs.push(Pair {
            pause: *pause,
            off,
            fresh,
        });
        let (live, off): (Vec<f64>, Vec<f64>) = pairs.iter().map(|p| (p.pause.es, p.off)).unzip();
        say(&format!(
            "reuse off: {} of {} pauses answered again (edit similarity {:.3} live, {:.3} with reuse off)",
            i + 1,
            chosen.len(),
            mean(&live),
            mean(&off)
        ));
    }
    served.client.finish(serve_child::SLOW)?;
    let off = |pair: &Pair| pair.off;
    Ok(ReuseOff {
        all: Paired::of(&pairs, |_| true, off),
        typed_along: Paired::of(&pairs, AnsweredPause::is_along, off),
        asked: Paired::of(&pairs, |pause| !pause.is_along(), off),
        typed_along_fresh: Paired::of(&pairs, AnsweredPause::is_along, |pair| pair.fresh),
    })
}

/// The rest of `suggestion` once `typed` is typed along it, as the server answers it: something
/// typed, not all of it, and its start.
fn along<'s>(suggestion: &'s str, typed: &str) -> Option<&'s str> {
    (!typed.is_empty() && typed.len() < suggestion.len() && suggestion.starts_with(typed))
        .then(|| &suggestion[typed.len()..])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pauses_are_chosen_evenly_and_in_order() {
        let answered: Vec<AnsweredPause> = (0..10)
            .map(|offset| AnsweredPause {
                place: 0,
                offset,
                es: 0.0,
                along_from: None,
            })
            .collect();
        let offsets = |n| -> Vec<usize> { spread(&answered, n).iter().map(|p| p.offset).collect() };
        assert_eq!(offsets(5), [0, 2, 4, 6, 8]);
        assert_eq!(offsets(3), [0, 3, 6]);
        assert_eq!(offsets(20), (0..10).collect::<Vec<_>>(), "at most all");
        assert!(offsets(0).is_empty());
    }
}

#[cfg(test)]
mod paired_tests {
    use super::*;

    #[test]
    fn pauses_are_compared_apart_by_how_the_live_answer_came() {
        let pair = |es, along: bool, off, fresh| Pair {
            pause: AnsweredPause {
                place: 0,
                offset: 9,
                es,
                along_from: along.then_some(3),
            },
            off,
            fresh,
        };
        let pairs = [
            pair(1.0, true, 0.5, 0.0),
            pair(0.5, true, 0.5, 1.0),
            pair(0.25, false, 0.75, 0.75),
        ];
        let off = |p: &Pair| p.off;
        let along = Paired::of(&pairs, AnsweredPause::is_along, off);
        assert_eq!((along.pauses, along.same), (2, 1));
        assert!((along.es_live - 0.75).abs() < 1e-12 && (along.es_reuse_off - 0.5).abs() < 1e-12);
        let fresh = Paired::of(&pairs, AnsweredPause::is_along, |p| p.fresh);
        assert!((fresh.es_reuse_off - 0.5).abs() < 1e-12 && fresh.same == 0);
        let asked = Paired::of(&pairs, |p| !p.is_along(), off);
        assert_eq!((asked.pauses, asked.same), (1, 0));
        assert!((asked.es_live - 0.25).abs() < 1e-12);
        assert_eq!(Paired::of(&pairs, |_| true, off).pauses, 3);
        assert_eq!(Paired::of(&[], |_| true, off).pauses, 0);
    }

    #[test]
    fn typing_along_follows_the_servers_rule() {
        assert_eq!(along("x * 2 + 1", "x * 2"), Some(" + 1"));
        assert_eq!(
            along("x * 2", "x * 2"),
            None,
            "all of it typed: the model is asked"
        );
        assert_eq!(along("x * 2", ""), None);
        assert_eq!(along("x * 2", "y"), None);
    }
}
