//! The edge around tower-lsp's service: it adds `inlineCompletionProvider` to the answer of
//! `initialize`, says when `exit` has arrived (tower-lsp 0.20 would otherwise keep reading stdin
//! until the client closes it), answers a panic in any handler as an internal error, and answers
//! the stand-in for a message the input could not decode ([`framing::MALFORMED`]) with its error.

use std::future::Future;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use tokio::sync::Notify;
use tower::Service;
use tower_lsp::jsonrpc::{self, Id, Request, Response};

use super::capabilities::add_inline_provider;
use super::framing;

/// Wraps the LSP service; every message passes through, three are noticed (`initialize`, `exit`,
/// and [`framing::MALFORMED`], answered here), and a panic becomes an error response (or, for a
/// notification, a log line).
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
        if request.method() == framing::MALFORMED {
            let response = framing::answer(request);
            return Box::pin(async move { Ok(response) });
        }
        let method = request.method().to_string();
        let id = request.id().cloned();
        let initialize = method == "initialize";
        let exit = (method == "exit").then(|| self.exited.clone());
        let answer = match catch_unwind(AssertUnwindSafe(|| self.inner.call(request))) {
            Ok(answer) => answer,
            Err(panic) => {
                let response = panicked(&method, id, panic.as_ref());
                return Box::pin(async move { Ok(response) });
            }
        };
        Box::pin(async move {
            let response = match (CatchPanic {
                inner: Box::pin(answer),
            })
            .await
            {
                Ok(response) => response,
                Err(panic) => Ok(panicked(&method, id, panic.as_ref())),
            };
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

/// A future that turns a panic while polling into `Err` with the panic's payload.
struct CatchPanic<F> {
    inner: Pin<Box<F>>,
}

type Payload = Box<dyn std::any::Any + Send>;

impl<F: Future> Future for CatchPanic<F> {
    type Output = Result<F::Output, Payload>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let inner = self.inner.as_mut();
        match catch_unwind(AssertUnwindSafe(|| inner.poll(cx))) {
            Ok(Poll::Ready(output)) => Poll::Ready(Ok(output)),
            Ok(Poll::Pending) => Poll::Pending,
            Err(panic) => Poll::Ready(Err(panic)),
        }
    }
}

/// The answer to a request whose handler panicked: an internal error naming the method and the
/// panic's message. A notification gets no answer.
fn panicked(method: &str, id: Option<Id>, panic: &(dyn std::any::Any + Send)) -> Option<Response> {
    let message = panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "no message".into());
    tracing::error!(method, "a handler panicked: {message}");
    let error = jsonrpc::Error {
        code: jsonrpc::ErrorCode::InternalError,
        message: format!("crossfile: {method} failed: a panic ({message})").into(),
        data: None,
    };
    id.map(|id| Response::from_error(id, error))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A service whose handlers panic: in `call`, or when polled.
    struct Panicking {
        in_call: bool,
    }

    impl Service<Request> for Panicking {
        type Response = Option<Response>;
        type Error = std::convert::Infallible;
        type Future = Pin<Box<dyn Future<Output = Result<Option<Response>, Self::Error>> + Send>>;

        fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
            Poll::Ready(Ok(()))
        }

        fn call(&mut self, _: Request) -> Self::Future {
            assert!(!self.in_call, "boom in call");
            Box::pin(async { panic!("boom when polled") })
        }
    }

    fn answer(in_call: bool, request: Request) -> Option<Response> {
        let mut edge = Edge::new(Panicking { in_call }, Arc::new(Notify::new()));
        let runtime = tokio::runtime::Builder::new_current_thread().build();
        let runtime = runtime.ok()?;
        runtime.block_on(edge.call(request)).ok()?
    }

    #[test]
    fn a_panicking_handler_is_answered_as_an_error() {
        for in_call in [false, true] {
            let request = Request::build("textDocument/completion").id(7).finish();
            let response = answer(in_call, request).expect("an answer");
            let (id, result) = response.into_parts();
            assert_eq!(id, Id::Number(7));
            let error = result.expect_err("an error");
            assert_eq!(error.code, jsonrpc::ErrorCode::InternalError);
            assert!(error.message.contains("boom"), "{}", error.message);
            assert!(error.message.contains("textDocument/completion"));
        }
        let notification = Request::build("textDocument/didOpen").finish();
        assert!(answer(false, notification).is_none());
    }
}
