//! Credentials in URLs (`scheme://user:password@host`) are shown as `***` wherever a URL is
//! shown: errors, logs, run records.

/// `text` with the credentials of every URL in it (`scheme://user:password@host`) shown as
/// `***`, for errors, logs and records: a password in an endpoint never leaves the process.
pub(crate) fn redact_url_credentials(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find("://") {
        let (head, tail) = rest.split_at(i + 3);
        out.push_str(head);
        let end = tail
            .find(|c: char| {
                matches!(c, '/' | '?' | '#' | '"' | '\'' | '`' | ')' | '>' | ',')
                    || c.is_whitespace()
            })
            .unwrap_or(tail.len());
        let authority = &tail[..end];
        match authority.rfind('@') {
            Some(at) => {
                out.push_str("***");
                out.push_str(&authority[at..]);
            }
            None => out.push_str(authority),
        }
        rest = &tail[end..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_in_urls_are_never_shown() {
        for (text, want) in [
            ("http://user:pw@host:8080/v1", "http://***@host:8080/v1"),
            (
                "error sending request for url (http://u:p%40ss@127.0.0.1:9/completion): refused",
                "error sending request for url (http://***@127.0.0.1:9/completion): refused",
            ),
            (
                "https://token@api.example/x and http://a:b@c",
                "https://***@api.example/x and http://***@c",
            ),
            (
                "http://127.0.0.1:8080/v1/completions",
                "http://127.0.0.1:8080/v1/completions",
            ),
            ("no url at all: user:pw@host", "no url at all: user:pw@host"),
        ] {
            assert_eq!(redact_url_credentials(text), want, "{text}");
        }
    }
}
