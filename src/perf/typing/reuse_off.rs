//! Whether what makes ghost text fast costs quality: pauses the measured server answered in time
//! are answered again by a second server with `lsp.reuse_kv` off (each prompt laid out as
//! `crossfile complete` lays it out, retrieved at the cursor and read in a fresh context, the
//! model asked every time), each waited for as long as it takes, and the edit similarity of both
//! answers to what the person typed next compared over the same pauses.

use serde::Serialize;
use serde_json::{Value, json};

use super::script::Place;
use super::session::{self, AnsweredPause};
use super::{PerfError, merge, served};
use crate::perf::mean;
use crate::report::bootstrap::{Bootstrap, Interval};

/// Mean edit similarity (0..=1) over the same answered pauses, live and with reuse off: over all
/// of them, and apart for the live answers typed along an earlier suggestion and those the model
/// made.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct ReuseOff {
    #[serde(flatten)]
    pub all: Paired,
    pub typed_along: Paired,
    pub asked: Paired,
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
    /// Over the pairs (live, reuse off) for which `keep` holds.
    fn of(pairs: &[(AnsweredPause, f64)], keep: impl Fn(&AnsweredPause) -> bool) -> Self {
        let (live, off): (Vec<f64>, Vec<f64>) = pairs
            .iter()
            .filter(|(pause, _)| keep(pause))
            .map(|(pause, off)| (pause.es, *off))
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
    places: &[Place],
    mut options: Value,
    answered: &[AnsweredPause],
    n: usize,
    say: &dyn Fn(&str),
) -> Result<ReuseOff, PerfError> {
    let chosen = spread(answered, n);
    merge(&mut options, &json!({"lsp": {"reuse_kv": false}}));
    let mut served = served::start(server, workspace, options)?;
    let mut pairs = Vec::new();
    for (i, pause) in chosen.iter().enumerate() {
        let place = places.get(pause.place).ok_or_else(|| {
            PerfError::Unmeasurable(format!("no place {} was typed", pause.place))
        })?;
        let suggestion =
            session::suggestion_at(&mut served.client, place, pause.offset, served::SLOW)?;
        pairs.push((
            *pause,
            session::similarity(place, pause.offset, &suggestion),
        ));
        let (live, off): (Vec<f64>, Vec<f64>) = pairs.iter().map(|(p, off)| (p.es, *off)).unzip();
        say(&format!(
            "reuse off: {} of {} pauses answered again (edit similarity {:.3} live, {:.3} with reuse off)",
            i + 1,
            chosen.len(),
            mean(&live),
            mean(&off)
        ));
    }
    served.client.finish(served::SLOW)?;
    Ok(ReuseOff {
        all: Paired::of(&pairs, |_| true),
        typed_along: Paired::of(&pairs, |pause| pause.along),
        asked: Paired::of(&pairs, |pause| !pause.along),
    })
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
                along: false,
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
        let pause = |es, along| AnsweredPause {
            place: 0,
            offset: 0,
            es,
            along,
        };
        let pairs = [
            (pause(1.0, true), 0.5),
            (pause(0.5, true), 0.5),
            (pause(0.25, false), 0.75),
        ];
        let along = Paired::of(&pairs, |p| p.along);
        assert_eq!((along.pauses, along.same), (2, 1));
        assert!((along.es_live - 0.75).abs() < 1e-12 && (along.es_reuse_off - 0.5).abs() < 1e-12);
        let asked = Paired::of(&pairs, |p| !p.along);
        assert_eq!((asked.pauses, asked.same), (1, 0));
        assert!((asked.es_live - 0.25).abs() < 1e-12);
        assert_eq!(Paired::of(&pairs, |_| true).pauses, 3);
        assert_eq!(Paired::of(&[], |_| true).pauses, 0);
    }
}
