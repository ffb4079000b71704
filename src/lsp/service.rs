//! The edge around tower-lsp's service: it adds `inlineCompletionProvider` to the answer of
//! `initialize`, and says when `exit` has arrived (tower-lsp 0.20 would otherwise keep reading
//! stdin until the client closes it).

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use tokio::sync::Notify;
use tower::Service;
use tower_lsp::jsonrpc::{Request, Response};

use super::capabilities::add_inline_provider;

/// Wraps the LSP service; every message passes through, two are noticed.
pub struct Edge<S> {
    inner: S,
    exited: Arc<Notify>,
}

impl<S> Edge<S> {
    /// `exited` is notified once `exit` has been handled.
    pub fn new(inner: S, exited: Arc<Notify>) -> Edge<S> {
        Edge { inner, exited }
    }
}

type Answer<E> = Pin<Box<dyn Future<Output = Result<Option<Response>, E>> + Send>>;

impl<S> Service<Request> for Edge<S>
where
    S: Service<Request, Response = Option<Response>>,
    S::Future: Send + 'static,
{
    type Response = Option<Response>;
    type Error = S::Error;
    type Future = Answer<S::Error>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request) -> Self::Future {
        let initialize = request.method() == "initialize";
        let exit = (request.method() == "exit").then(|| self.exited.clone());
        let answer = self.inner.call(request);
        Box::pin(async move {
            let response = answer.await;
            if let Some(exited) = exit {
                exited.notify_one();
            }
            let response = response?;
            Ok(if initialize {
                response.map(add_inline_provider)
            } else {
                response
            })
        })
    }
}
