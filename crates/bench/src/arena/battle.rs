//! Battles in the editor: drawing a pair of arms and the order they are shown in
//! ([`PairDraw`]), the battles shown and not yet decided, one per document ([`Battles`]), and the
//! vote each becomes ([`Battle::vote`]). The language server runs the arms; this module keeps
//! what it showed and writes what the user chose ([`Battles::record`]) — at once, or, when the
//! suggestions' metrics take time to compute (an executed case's tests), once they are computed
//! ([`LateMetrics`]).

use std::collections::{BTreeMap, HashMap};
use std::hash::Hash;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use super::vote::{VOTES_VERSION, Vote};
use crossfile_engine::config::arena::MAX_SEED;
use crossfile_engine::seeded::SplitMix64;

/// How a battle was drawn, recorded in its vote so the draw can be replayed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Draw {
    /// The rule: `uniform` over unordered pairs of distinct arms, then a fair coin for the order.
    pub rule: String,
    pub seed: u64,
    /// The draw's number under the seed (0, 1, …).
    pub index: u64,
}

/// The pair of one battle: two distinct arm indices, and which of them is shown first.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pair {
    /// Indices into the arena's arms; `arms[0] < arms[1]`.
    pub arms: [usize; 2],
    /// The index in `arms` (0 or 1) of the suggestion shown first.
    pub first: u8,
}

/// Draws pairs: the `index`-th draw under a seed is always the same pair and order.
#[derive(Debug)]
pub struct PairDraw {
    seed: u64,
    next: AtomicU64,
}

impl PairDraw {
    /// Draws under `seed`; `None`: a seed from the clock, below 2^53 like every seed (JSON
    /// readers that hold numbers as doubles, JavaScript's, read it exactly).
    pub fn new(seed: Option<u64>) -> PairDraw {
        let seed = seed.unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos() as u64)
                & MAX_SEED
        });
        PairDraw {
            seed,
            next: AtomicU64::new(0),
        }
    }

    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// The next pair among `arms` arms (two at least), and its record.
    pub fn draw(&self, arms: usize) -> (Pair, Draw) {
        let index = self.next.fetch_add(1, Ordering::Relaxed);
        (
            pair_at(self.seed, index, arms),
            Draw {
                rule: "uniform".into(),
                seed: self.seed,
                index,
            },
        )
    }
}

/// The `index`-th draw under `seed`: a pair uniform over the `arms·(arms−1)/2` unordered pairs,
/// then a fair coin for which is shown first.
pub fn pair_at(seed: u64, index: u64, arms: usize) -> Pair {
    let mut rng = SplitMix64(seed ^ index.wrapping_mul(0x9e37_79b9_7f4a_7c15));
    let a = rng.below(arms);
    let b = (a + 1 + rng.below(arms.saturating_sub(1))) % arms.max(1);
    let first = (rng.next_u64() & 1) as u8;
    Pair {
        arms: [a.min(b), a.max(b)],
        first,
    }
}

/// A battle shown and not yet decided: everything its vote records but the choice.
#[derive(Clone, Debug)]
pub struct Battle {
    pub id: u64,
    /// Identifies the document text and cursor it was shown at: the same again is the same
    /// battle.
    pub at: u64,
    /// The vote, its choice not yet made.
    pub vote: Vote,
    /// Where the vote goes.
    pub votes: PathBuf,
    pub shown_at: Instant,
    /// The suggestions' metrics when they are computed only once the battle is decided.
    pub late_metrics: Option<LateMetrics>,
}

/// Both suggestions' metrics (by arm index), computed when a battle is decided because they take
/// time: at an executed case, the tests run on both bodies. Given a flag that asks it to stop
/// (the session ends); it answers `None` when stopped or when the metrics cannot be had.
#[derive(Clone)]
pub struct LateMetrics(pub Arc<LateScorer>);

/// What computes late metrics: stops when the flag is set.
pub type LateScorer = dyn Fn(&AtomicBool) -> Option<[Metrics; 2]> + Send + Sync;

/// One suggestion's metrics by name.
pub type Metrics = BTreeMap<String, f64>;

impl std::fmt::Debug for LateMetrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("LateMetrics")
    }
}

impl Battle {
    /// A battle of `pair` with each arm's spec, settings hash, text and latency by arm index
    /// (`arms[0]`, `arms[1]`); `place` is where it was shown.
    pub fn new(id: u64, at: u64, place: Venue, sides: [Side; 2], pair: Pair, draw: Draw) -> Battle {
        let [a, b] = sides;
        let metrics = match (a.metrics, b.metrics) {
            (Some(ma), Some(mb)) => Some([ma, mb]),
            _ => None,
        };
        Battle {
            id,
            at,
            votes: place.votes,
            shown_at: Instant::now(),
            late_metrics: None,
            vote: Vote {
                version: VOTES_VERSION,
                time: super::vote::now(),
                workspace: place.workspace,
                path: place.path,
                line: place.line,
                col: place.col,
                language: place.language,
                arms: [a.arm, b.arm],
                first: pair.first,
                choice: None,
                texts: [a.text, b.text],
                latency_ms: [a.latency_ms, b.latency_ms],
                choice_ms: None,
                settings_hash: [a.settings_hash, b.settings_hash],
                case_id: place.case_id,
                metrics,
                draw: Some(draw),
            },
        }
    }

    /// The arm index (into the vote's `arms`) of the suggestion shown at `pick` (1 or 2).
    pub fn arm_shown(&self, pick: u8) -> usize {
        let first = usize::from(self.vote.first);
        if pick == 1 { first } else { 1 - first }
    }

    /// The texts in the order shown.
    pub fn shown_texts(&self) -> [&str; 2] {
        [
            &self.vote.texts[self.arm_shown(1)],
            &self.vote.texts[self.arm_shown(2)],
        ]
    }

    /// The vote: `pick` 1 or 2 is the suggestion shown first or second; `None`, no choice.
    pub fn vote(&self, pick: Option<u8>) -> Vote {
        let mut vote = self.vote.clone();
        vote.choice = pick.map(|p| self.arm_shown(p) as u8);
        vote.choice_ms = Some(self.shown_at.elapsed().as_secs_f64() * 1e3);
        vote
    }
}

/// Where a battle was shown.
#[derive(Clone, Debug)]
pub struct Venue {
    pub workspace: String,
    pub path: String,
    /// 1-based; the column in characters.
    pub line: u64,
    pub col: u64,
    pub language: Option<String>,
    pub case_id: Option<String>,
    pub votes: PathBuf,
}

/// One arm's side of a battle.
#[derive(Clone, Debug)]
pub struct Side {
    pub arm: String,
    pub settings_hash: String,
    pub text: String,
    pub latency_ms: f64,
    pub metrics: Option<Metrics>,
}

/// A battle decided: its id, the votes file and the vote written there.
#[derive(Clone, Debug)]
pub struct Decided {
    pub id: u64,
    pub votes: PathBuf,
    pub vote: Vote,
}

/// The battles shown, at most one pending per document, and the last decided one.
#[derive(Debug)]
pub struct Battles<K> {
    pending: Mutex<HashMap<K, Battle>>,
    decided: Mutex<Option<Decided>>,
    next_id: AtomicU64,
    /// Counts for the status: battles shown, votes written, arms failed, blank answers.
    pub shown: AtomicU64,
    pub recorded: AtomicU64,
    pub failed: AtomicU64,
    pub blank: AtomicU64,
    /// Votes waiting for their late metrics, and the signal that one was written.
    scoring: Mutex<usize>,
    scored: Condvar,
    /// Set when the session ends: late metrics still being computed stop, their votes are
    /// written without them.
    stop_scoring: AtomicBool,
}

impl<K> Default for Battles<K> {
    fn default() -> Self {
        Battles {
            pending: Mutex::new(HashMap::new()),
            decided: Mutex::new(None),
            next_id: AtomicU64::new(1),
            shown: AtomicU64::new(0),
            recorded: AtomicU64::new(0),
            failed: AtomicU64::new(0),
            blank: AtomicU64::new(0),
            scoring: Mutex::new(0),
            scored: Condvar::new(),
            stop_scoring: AtomicBool::new(false),
        }
    }
}

impl<K: Eq + Hash + Clone> Battles<K> {
    /// A fresh battle id.
    pub fn next_id(&self) -> u64 {
        self.next_id.fetch_add(1, Ordering::Relaxed)
    }

    /// The battle pending in `doc` if it was shown at `at` (the same text and cursor).
    pub fn pending_at(&self, doc: &K, at: u64) -> Option<Battle> {
        let pending = self.pending.lock().unwrap_or_else(|e| e.into_inner());
        pending.get(doc).filter(|b| b.at == at).cloned()
    }

    /// Shows `battle` in `doc`; the battle it replaces, if any, is returned undecided.
    pub fn show(&self, doc: K, battle: Battle) -> Option<Battle> {
        self.shown.fetch_add(1, Ordering::Relaxed);
        let mut pending = self.pending.lock().unwrap_or_else(|e| e.into_inner());
        pending.insert(doc, battle)
    }

    /// Takes the battle pending in `doc` (it is superseded or its document closed).
    pub fn take_in(&self, doc: &K) -> Option<Battle> {
        let mut pending = self.pending.lock().unwrap_or_else(|e| e.into_inner());
        pending.remove(doc)
    }

    /// Takes the pending battle `id`, wherever it is.
    pub fn take(&self, id: u64) -> Option<Battle> {
        let mut pending = self.pending.lock().unwrap_or_else(|e| e.into_inner());
        let doc = pending.iter().find(|(_, b)| b.id == id)?.0.clone();
        pending.remove(&doc)
    }

    /// Takes every pending battle (the session ends).
    pub fn take_all(&self) -> Vec<Battle> {
        let mut pending = self.pending.lock().unwrap_or_else(|e| e.into_inner());
        pending.drain().map(|(_, b)| b).collect()
    }

    /// Decides `battle` (`pick` 1 or 2, or `None` for no choice) and writes its vote to its votes
    /// file, keeping it as the last decided. A battle with late metrics is decided at once and its
    /// vote written, metrics and all, once they are computed, on a thread of its own. A write that
    /// fails is logged; the vote is returned anyway.
    pub fn record(self: &Arc<Self>, battle: &Battle, pick: Option<u8>) -> Vote
    where
        K: Send + Sync + 'static,
    {
        let vote = battle.vote(pick);
        let late = battle.late_metrics.clone();
        match late.filter(|_| !self.stop_scoring.load(Ordering::SeqCst)) {
            None => self.write(battle, &vote),
            Some(late) => {
                self.remember(battle, &vote);
                *self.scoring.lock().unwrap_or_else(|e| e.into_inner()) += 1;
                let (battles, battle, mut scored) =
                    (Arc::clone(self), battle.clone(), vote.clone());
                std::thread::spawn(move || {
                    scored.metrics = (late.0)(&battles.stop_scoring);
                    battles.write(&battle, &scored);
                    let mut left = battles.scoring.lock().unwrap_or_else(|e| e.into_inner());
                    *left = left.saturating_sub(1);
                    battles.scored.notify_all();
                });
            }
        }
        vote
    }

    /// Records every pending battle as no choice (the session ends): late metrics still being
    /// computed are stopped, and every vote is written (without them) within `within`.
    pub fn record_all_pending(self: &Arc<Self>, within: Duration)
    where
        K: Send + Sync + 'static,
    {
        self.stop_scoring.store(true, Ordering::SeqCst);
        for battle in self.take_all() {
            self.record(&battle, None);
        }
        let left = self.scoring.lock().unwrap_or_else(|e| e.into_inner());
        let (left, _) = self
            .scored
            .wait_timeout_while(left, within, |left| *left > 0)
            .unwrap_or_else(|e| e.into_inner());
        if *left > 0 {
            tracing::warn!(
                "arena: {} vote(s) still being scored when the session ended",
                *left
            );
        }
    }

    /// Appends `vote` to `battle`'s votes file and keeps it as the last decided.
    fn write(&self, battle: &Battle, vote: &Vote) {
        match super::vote::append(&battle.votes, vote) {
            Ok(()) => {
                self.recorded.fetch_add(1, Ordering::Relaxed);
                self.remember(battle, vote);
            }
            Err(e) => tracing::warn!("arena: {e}"),
        }
    }

    /// Keeps `battle`'s `vote` as the last decided, unless a later battle was decided since.
    fn remember(&self, battle: &Battle, vote: &Vote) {
        let mut decided = self.decided.lock().unwrap_or_else(|e| e.into_inner());
        if decided.as_ref().is_some_and(|d| d.id > battle.id) {
            return;
        }
        *decided = Some(Decided {
            id: battle.id,
            votes: battle.votes.clone(),
            vote: vote.clone(),
        });
    }

    /// The last battle decided in this session.
    pub fn last_decided(&self) -> Option<Decided> {
        self.decided
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn draws_cover_every_pair_and_both_orders_evenly_and_repeat_under_a_seed() {
        let draw = PairDraw::new(Some(11));
        let mut pairs: BTreeMap<[usize; 2], usize> = BTreeMap::new();
        let mut firsts = 0;
        for _ in 0..3000 {
            let (pair, _) = draw.draw(3);
            assert!(pair.arms[0] < pair.arms[1] && pair.arms[1] < 3);
            *pairs.entry(pair.arms).or_default() += 1;
            firsts += usize::from(pair.first);
        }
        assert_eq!(pairs.len(), 3, "{pairs:?}");
        assert!(
            pairs.values().all(|&n| (900..1100).contains(&n)),
            "{pairs:?}"
        );
        assert!((1400..1600).contains(&firsts), "{firsts}");
        let again = PairDraw::new(Some(11));
        let (_, record) = again.draw(3);
        assert_eq!(record.index, 0);
        assert_eq!(pair_at(11, 0, 3), again_first(11));
        assert!(PairDraw::new(None).seed() <= MAX_SEED);
    }

    fn again_first(seed: u64) -> Pair {
        PairDraw::new(Some(seed)).draw(3).0
    }

    fn side(arm: &str, text: &str) -> Side {
        Side {
            arm: arm.into(),
            settings_hash: format!("h-{arm}"),
            text: text.into(),
            latency_ms: 10.0,
            metrics: None,
        }
    }

    fn battle(id: u64, first: u8) -> Battle {
        let place = Venue {
            workspace: "w".into(),
            path: "a.py".into(),
            line: 3,
            col: 5,
            language: Some("python".into()),
            case_id: None,
            votes: PathBuf::from("/dev/null"),
        };
        let pair = Pair {
            arms: [0, 1],
            first,
        };
        let draw = Draw {
            rule: "uniform".into(),
            seed: 1,
            index: 0,
        };
        Battle::new(
            id,
            42,
            place,
            [side("bm25", "A"), side("none", "B")],
            pair,
            draw,
        )
    }

    #[test]
    fn a_pick_is_the_suggestion_shown_there_whichever_arm_made_it() {
        let shown_second_first = battle(1, 1);
        assert_eq!(shown_second_first.shown_texts(), ["B", "A"]);
        assert_eq!(shown_second_first.vote(Some(1)).choice, Some(1));
        assert_eq!(shown_second_first.vote(Some(2)).choice, Some(0));
        assert_eq!(shown_second_first.vote(None).choice, None);
        let in_order = battle(2, 0);
        assert_eq!(in_order.vote(Some(2)).choice, Some(1));
        assert!(in_order.vote(None).choice_ms.is_some());
    }

    #[test]
    fn one_battle_pends_per_document_and_is_taken_once() {
        let battles: Battles<&str> = Battles::default();
        assert!(battles.show("a.py", battle(1, 0)).is_none());
        assert!(battles.pending_at(&"a.py", 42).is_some());
        assert!(
            battles.pending_at(&"a.py", 43).is_none(),
            "another text or cursor"
        );
        let replaced = battles.show("a.py", battle(2, 0)).map(|b| b.id);
        assert_eq!(replaced, Some(1));
        battles.show("b.py", battle(3, 0));
        assert_eq!(battles.take(3).map(|b| b.id), Some(3));
        assert!(battles.take(3).is_none(), "voted once");
        assert_eq!(battles.take_in(&"a.py").map(|b| b.id), Some(2));
        assert!(battles.take_all().is_empty());
    }

    /// Late metrics that wait until told to go on (or to stop), counting their runs.
    fn late(go: Arc<AtomicBool>, runs: Arc<AtomicU64>) -> LateMetrics {
        LateMetrics(Arc::new(move |stop: &AtomicBool| {
            runs.fetch_add(1, Ordering::SeqCst);
            while !go.load(Ordering::SeqCst) {
                if stop.load(Ordering::SeqCst) {
                    return None;
                }
                std::thread::sleep(Duration::from_millis(5));
            }
            Some([BTreeMap::from([("pass@1".into(), 1.0)]), BTreeMap::new()])
        }))
    }

    fn written(path: &std::path::Path) -> Vec<Vote> {
        super::super::vote::read(path).expect("votes").votes
    }

    #[test]
    fn a_vote_with_late_metrics_is_decided_at_once_and_written_with_them() {
        let dir = tempfile::tempdir().expect("tempdir");
        let votes = dir.path().join("votes.jsonl");
        let battles: Arc<Battles<&str>> = Arc::default();
        let (go, runs) = (
            Arc::new(AtomicBool::new(false)),
            Arc::new(AtomicU64::new(0)),
        );
        let mut late_one = battle(1, 0);
        late_one.votes = votes.clone();
        late_one.late_metrics = Some(late(go.clone(), runs.clone()));
        battles.record(&late_one, Some(2));
        let revealed = battles.last_decided().expect("decided at once");
        assert_eq!((revealed.id, revealed.vote.metrics.is_none()), (1, true));
        assert!(!votes.exists(), "not written before its metrics");
        let mut plain = battle(2, 0);
        plain.votes = votes.clone();
        battles.record(&plain, Some(1));
        go.store(true, Ordering::SeqCst);
        battles.record_all_pending(Duration::from_secs(10));
        let lines = written(&votes);
        assert_eq!(lines.len(), 2);
        let late_vote = lines
            .iter()
            .find(|v| v.choice == Some(1))
            .expect("the late vote");
        let metrics = late_vote.metrics.as_ref().expect("metrics");
        assert_eq!(metrics[0].get("pass@1"), Some(&1.0));
        assert_eq!(runs.load(Ordering::SeqCst), 1);
        assert_eq!(
            battles.last_decided().map(|d| d.id),
            Some(2),
            "the later stays last"
        );
    }

    #[test]
    fn at_the_end_of_a_session_late_metrics_stop_and_every_vote_is_written() {
        let dir = tempfile::tempdir().expect("tempdir");
        let votes = dir.path().join("votes.jsonl");
        let battles: Arc<Battles<&str>> = Arc::default();
        let (never, runs) = (
            Arc::new(AtomicBool::new(false)),
            Arc::new(AtomicU64::new(0)),
        );
        let mut voted = battle(1, 0);
        voted.votes = votes.clone();
        voted.late_metrics = Some(late(never.clone(), runs.clone()));
        battles.record(&voted, Some(1));
        let mut pending = battle(2, 1);
        pending.votes = votes.clone();
        pending.late_metrics = Some(late(never, runs.clone()));
        battles.show("a.py", pending);
        battles.record_all_pending(Duration::from_secs(10));
        let lines = written(&votes);
        assert_eq!(lines.len(), 2, "nothing lost");
        assert!(
            lines.iter().all(|v| v.metrics.is_none()),
            "stopped: no metrics"
        );
        assert_eq!(
            runs.load(Ordering::SeqCst),
            1,
            "the pending one is not scored"
        );
        assert_eq!(battles.recorded.load(Ordering::Relaxed), 2);
    }
}
