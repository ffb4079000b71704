//! Stop strings, applied the same way for every server.

/// The text before the earliest occurrence of any non-empty stop string. Servers differ on
/// whether they include the stop string they hit; cutting here makes every backend agree.
pub(super) fn cut_at_stop<'a>(text: &'a str, stops: &[String]) -> &'a str {
    let end = stops
        .iter()
        .filter(|s| !s.is_empty())
        .filter_map(|s| text.find(s.as_str()))
        .min()
        .unwrap_or(text.len());
    &text[..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stops_cut_at_the_earliest_match() {
        let stops = |s: &[&str]| s.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let rows: [(&str, &[&str], &str); 6] = [
            ("a\nb", &["\n"], "a"),
            ("abc", &[], "abc"),
            ("abc", &[""], "abc"),
            ("x = 1;\ny", &["\n", ";"], "x = 1"),
            ("", &["\n"], ""),
            ("héllo🙂 wörld", &["🙂"], "héllo"),
        ];
        for (text, s, want) in rows {
            assert_eq!(cut_at_stop(text, &stops(s)), want, "{text:?}");
        }
    }
}
