//! A bounded response cache around any backend: the same request (prompt, FIM parts, limits,
//! stops) answers from memory. Greedy decoding makes that exact.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use tokio_util::sync::CancellationToken;

use super::{Backend, BackendError, GenerateRequest, Generation};
use crate::tokenize::Tokenizer;

/// `inner` with its last `capacity` answers kept (least recently inserted evicted first).
pub struct CachedBackend {
    inner: Arc<dyn Backend>,
    capacity: usize,
    entries: Mutex<Entries>,
}

#[derive(Default)]
struct Entries {
    map: HashMap<GenerateRequest, Generation>,
    order: VecDeque<GenerateRequest>,
}

impl CachedBackend {
    pub fn new(inner: Arc<dyn Backend>, capacity: usize) -> CachedBackend {
        CachedBackend {
            inner,
            capacity,
            entries: Mutex::new(Entries::default()),
        }
    }

    fn lookup(&self, request: &GenerateRequest) -> Option<Generation> {
        let entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        entries.map.get(request).cloned()
    }

    fn store(&self, request: &GenerateRequest, generation: &Generation) {
        if self.capacity == 0 {
            return;
        }
        let mut entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        if entries.map.contains_key(request) {
            return;
        }
        while entries.order.len() >= self.capacity {
            if let Some(old) = entries.order.pop_front() {
                entries.map.remove(&old);
            }
        }
        entries.order.push_back(request.clone());
        entries.map.insert(request.clone(), generation.clone());
    }
}

#[async_trait]
impl Backend for CachedBackend {
    fn name(&self) -> &'static str {
        self.inner.name()
    }

    fn tokenizer(&self) -> Option<Arc<dyn Tokenizer>> {
        self.inner.tokenizer()
    }

    fn keeps_contexts(&self) -> bool {
        self.inner.keeps_contexts()
    }

    fn foreground(&self) -> super::Foreground {
        self.inner.foreground()
    }

    async fn generate(
        &self,
        request: &GenerateRequest,
        cancel: &CancellationToken,
    ) -> Result<Generation, BackendError> {
        if let Some(mut hit) = self.lookup(request) {
            hit.cached = true;
            return Ok(hit);
        }
        let generation = self.inner.generate(request, cancel).await?;
        // A fallback's answer stands in for the prompt's only until the prompt is read.
        if !generation.from_fallback {
            self.store(request, &generation);
        }
        Ok(generation)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;

    /// Counts calls and echoes the prompt: a stand-in for a model, to observe the cache.
    struct Echo(AtomicUsize);

    #[async_trait]
    impl Backend for Echo {
        fn name(&self) -> &'static str {
            "echo"
        }

        async fn generate(
            &self,
            request: &GenerateRequest,
            _: &CancellationToken,
        ) -> Result<Generation, BackendError> {
            self.0.fetch_add(1, Ordering::SeqCst);
            Ok(Generation {
                text: request.prompt.clone(),
                ..Generation::default()
            })
        }
    }

    fn request(prompt: &str) -> GenerateRequest {
        GenerateRequest {
            prompt: prompt.into(),
            fim: None,
            max_tokens: 8,
            stop: vec![],
            may_start_below: false,
            reuse_kv: false,
            max_generate_ms: None,
            fallback: None,
            read_ahead: None,
            sampling: None,
            likelihood_of: None,
        }
    }

    #[tokio::test]
    async fn repeats_are_served_from_memory_and_old_entries_evicted() {
        let echo = Arc::new(Echo(AtomicUsize::new(0)));
        let cached = CachedBackend::new(echo.clone(), 2);
        let cancel = CancellationToken::new();
        for prompt in ["a", "a", "b", "a", "c", "a"] {
            let g = cached
                .generate(&request(prompt), &cancel)
                .await
                .expect("echo");
            assert_eq!(g.text, prompt);
        }
        // a (miss), a (hit), b (miss), a (hit), c (miss, evicts a), a (miss).
        assert_eq!(echo.0.load(Ordering::SeqCst), 4);
        let off = CachedBackend::new(echo.clone(), 0);
        off.generate(&request("z"), &cancel).await.expect("echo");
        off.generate(&request("z"), &cancel).await.expect("echo");
        assert_eq!(echo.0.load(Ordering::SeqCst), 6);
    }
}
