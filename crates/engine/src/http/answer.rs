//! Reading a model server's answer with a bound: whatever a broken or hostile server sends, at
//! most [`MAX_ANSWER_BYTES`] are kept.

/// The most a server's answer may be: far more than any completion or embeddings batch, little
/// enough that a broken or hostile server cannot exhaust memory.
pub(crate) const MAX_ANSWER_BYTES: usize = 4 << 20;

/// Why an answer's body was not read.
pub(crate) enum BodyError {
    /// Over [`MAX_ANSWER_BYTES`] (declared or received).
    TooLarge,
    Read(reqwest::Error),
}

/// The body of `response`, read chunk by chunk and given up past [`MAX_ANSWER_BYTES`], however
/// the server sends it (a declared length or a chunked stream that never ends).
pub(crate) async fn read_bounded(mut response: reqwest::Response) -> Result<Vec<u8>, BodyError> {
    if response
        .content_length()
        .is_some_and(|n| n > MAX_ANSWER_BYTES as u64)
    {
        return Err(BodyError::TooLarge);
    }
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(BodyError::Read)? {
        if body.len() + chunk.len() > MAX_ANSWER_BYTES {
            return Err(BodyError::TooLarge);
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}
