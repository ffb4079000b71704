//! The Bradley–Terry model fitted by maximum likelihood: arm `i` beats arm `j` with probability
//! `exp(s_i) / (exp(s_i) + exp(s_j))`, and the log-strengths `s` that make the decided battles
//! most likely are found by Hunter's minorization–maximization iteration (Hunter 2004, "MM
//! algorithms for generalized Bradley–Terry models", eq. 3), normalized to mean 0.
//!
//! The estimate exists only where every arm has won and lost within a strongly connected web of
//! wins (Zermelo's condition): an arm that never lost, or never won, would have an infinite (or
//! zero) strength. Such arms are set aside, repeatedly, and get no estimate; if the rest are not
//! strongly connected, none does.

/// A decided battle as the fit sees it: the index of the arm accepted (the winner), and of the other.
pub type Win = (usize, usize);

/// The iteration stops when no log-strength moves by more than this.
const TOLERANCE: f64 = 1e-12;
const MAX_ITERATIONS: usize = 100_000;

/// The maximum-likelihood log-strength of each of `arms` arms from `battles`, normalized to mean
/// 0 over the arms that have one; `None` for an arm with no finite estimate.
pub fn bradley_terry(arms: usize, battles: &[Win]) -> Vec<Option<f64>> {
    let mut active: Vec<bool> = (0..arms)
        .map(|a| battles.iter().any(|&(w, l)| w == a || l == a))
        .collect();
    // Set aside the arms that never won or never lost against the arms still in.
    loop {
        let mut wins = vec![0usize; arms];
        let mut losses = vec![0usize; arms];
        for &(w, l) in battles.iter().filter(|&&(w, l)| active[w] && active[l]) {
            wins[w] += 1;
            losses[l] += 1;
        }
        let out: Vec<usize> = (0..arms)
            .filter(|&a| active[a] && (wins[a] == 0 || losses[a] == 0))
            .collect();
        if out.is_empty() {
            break;
        }
        out.into_iter().for_each(|a| active[a] = false);
    }
    let kept: Vec<Win> = battles
        .iter()
        .copied()
        .filter(|&(w, l)| active[w] && active[l])
        .collect();
    if kept.is_empty() || !strongly_connected(arms, &active, &kept) {
        return vec![None; arms];
    }
    let strengths = minorize_maximize(arms, &active, &kept);
    (0..arms)
        .map(|a| active[a].then_some(strengths[a]))
        .collect()
}

/// Hunter's iteration on the strengths `p = exp(s)`: `p_i ← W_i / Σ_j n_ij / (p_i + p_j)`, then
/// rescaled so the log-strengths have mean 0.
fn minorize_maximize(arms: usize, active: &[bool], battles: &[Win]) -> Vec<f64> {
    let mut wins = vec![0.0; arms];
    let mut met = vec![vec![0.0; arms]; arms];
    for &(w, l) in battles {
        wins[w] += 1.0;
        met[w][l] += 1.0;
        met[l][w] += 1.0;
    }
    let ids: Vec<usize> = (0..arms).filter(|&a| active[a]).collect();
    let mut log = vec![0.0; arms];
    for _ in 0..MAX_ITERATIONS {
        let p: Vec<f64> = log.iter().map(|s: &f64| s.exp()).collect();
        let mut next = log.clone();
        for &i in &ids {
            let denominator: f64 = ids
                .iter()
                .filter(|&&j| j != i && met[i][j] > 0.0)
                .map(|&j| met[i][j] / (p[i] + p[j]))
                .sum();
            next[i] = (wins[i] / denominator).ln();
        }
        let mean = ids.iter().map(|&i| next[i]).sum::<f64>() / ids.len() as f64;
        ids.iter().for_each(|&i| next[i] -= mean);
        let moved = ids
            .iter()
            .map(|&i| (next[i] - log[i]).abs())
            .fold(0.0, f64::max);
        log = next;
        if moved < TOLERANCE {
            break;
        }
    }
    log
}

/// Whether every active arm reaches every other along wins (`w → l`), and back.
fn strongly_connected(arms: usize, active: &[bool], battles: &[Win]) -> bool {
    let Some(start) = (0..arms).find(|&a| active[a]) else {
        return true;
    };
    let reaches_all = |forward: bool| {
        let mut seen = vec![false; arms];
        let mut stack = vec![start];
        seen[start] = true;
        while let Some(a) = stack.pop() {
            for &(w, l) in battles {
                let (from, to) = if forward { (w, l) } else { (l, w) };
                if from == a && !seen[to] {
                    seen[to] = true;
                    stack.push(to);
                }
            }
        }
        (0..arms).all(|a| !active[a] || seen[a])
    };
    reaches_all(true) && reaches_all(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn repeat(battles: &[(Win, usize)]) -> Vec<Win> {
        battles
            .iter()
            .flat_map(|&(b, n)| std::iter::repeat_n(b, n))
            .collect()
    }

    #[test]
    fn two_arms_give_the_log_odds_of_their_record() {
        // 3 wins to 1: s_0 - s_1 = ln 3, centred.
        let s = bradley_terry(2, &repeat(&[((0, 1), 3), ((1, 0), 1)]));
        let (a, b) = (s[0].expect("a"), s[1].expect("b"));
        assert!((a - b - 3f64.ln()).abs() < 1e-9, "{a} {b}");
        assert!((a + b).abs() < 1e-12);
    }

    #[test]
    fn an_arm_that_never_lost_or_never_won_has_no_estimate() {
        // 2 beats everyone; 0 and 1 split their games.
        let battles = repeat(&[((0, 1), 2), ((1, 0), 2), ((2, 0), 3), ((2, 1), 1)]);
        let s = bradley_terry(4, &battles);
        assert_eq!(s[2], None, "never lost");
        assert_eq!(s[3], None, "never played");
        assert!((s[0].expect("0") - s[1].expect("1")).abs() < 1e-9);
        // Without 2, arm 0 never wins either: no one has an estimate.
        assert_eq!(bradley_terry(2, &[(1, 0), (1, 0)]), vec![None, None]);
    }

    #[test]
    fn arms_not_connected_by_wins_both_ways_have_no_estimates() {
        // {0,1} and {2,3} each split, but 0 and 1 always beat 2 and 3.
        let battles = repeat(&[
            ((0, 1), 1),
            ((1, 0), 1),
            ((2, 3), 1),
            ((3, 2), 1),
            ((0, 2), 2),
            ((1, 3), 2),
        ]);
        assert_eq!(bradley_terry(4, &battles), vec![None; 4]);
    }
}
