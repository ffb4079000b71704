//! `none`: no generation. The suggestion is empty and the rest of the trace complete, so
//! retrieval and prompt building can be measured and replayed without model time.

use async_trait::async_trait;
use tokio_util::sync::CancellationToken;

use super::{Backend, BackendError, GenerateRequest, Generation};

pub struct NoBackend;

#[async_trait]
impl Backend for NoBackend {
    fn name(&self) -> &'static str {
        "none"
    }

    async fn generate(
        &self,
        _: &GenerateRequest,
        cancel: &CancellationToken,
    ) -> Result<Generation, BackendError> {
        if cancel.is_cancelled() {
            return Err(BackendError::Cancelled);
        }
        Ok(Generation::default())
    }
}
