//! Work-done progress (`$/progress`) for one piece of work: with the token the client sent with
//! its request, or one the server asks the client to create; a begin, reports and an end. Work
//! begun as cancellable is told to stop by `window/workDoneProgress/cancel` for its token
//! ([`super::completion::inflight::Requests::cancel_work`]).

use tower_lsp::lsp_types::notification::Progress as ProgressNotification;
use tower_lsp::lsp_types::request::WorkDoneProgressCreate;
use tower_lsp::lsp_types::{
    NumberOrString, ProgressParams, ProgressParamsValue, WorkDoneProgress, WorkDoneProgressBegin,
    WorkDoneProgressCreateParams, WorkDoneProgressEnd, WorkDoneProgressReport,
};

use super::state::State;

/// Sends `$/progress` for one token, if there is one.
pub struct Reporter<'a> {
    state: &'a State,
    token: Option<NumberOrString>,
    cancellable: bool,
}

impl<'a> Reporter<'a> {
    /// With the client's own token for the request when it sent one; else asks the client to
    /// create `name` (without the client's support or consent, reports nothing).
    pub async fn create(
        state: &'a State,
        given: Option<NumberOrString>,
        name: String,
        cancellable: bool,
    ) -> Reporter<'a> {
        let token = match given {
            Some(token) => Some(token),
            None => {
                let token = NumberOrString::String(name);
                let created = state.supports_progress()
                    && state
                        .client
                        .send_request::<WorkDoneProgressCreate>(WorkDoneProgressCreateParams {
                            token: token.clone(),
                        })
                        .await
                        .inspect_err(|e| tracing::warn!("the client refused a progress token: {e}"))
                        .is_ok();
                created.then_some(token)
            }
        };
        Reporter {
            state,
            token,
            cancellable,
        }
    }

    /// The token, as `window/workDoneProgress/cancel` names it.
    pub fn key(&self) -> Option<String> {
        self.token.as_ref().map(token_key)
    }

    pub async fn begin(&self, title: &str, message: Option<String>, percentage: Option<u32>) {
        self.send(WorkDoneProgress::Begin(WorkDoneProgressBegin {
            title: title.into(),
            cancellable: Some(self.cancellable),
            message,
            percentage,
        }))
        .await;
    }

    pub async fn report(&self, message: String, percentage: Option<u32>) {
        self.send(WorkDoneProgress::Report(WorkDoneProgressReport {
            cancellable: Some(self.cancellable),
            message: Some(message),
            percentage: percentage.map(|p| p.min(100)),
        }))
        .await;
    }

    pub async fn end(&self, message: String) {
        self.send(WorkDoneProgress::End(WorkDoneProgressEnd {
            message: Some(message),
        }))
        .await;
    }

    async fn send(&self, progress: WorkDoneProgress) {
        if let Some(token) = &self.token {
            self.state
                .client
                .send_notification::<ProgressNotification>(ProgressParams {
                    token: token.clone(),
                    value: ProgressParamsValue::WorkDone(progress),
                })
                .await;
        }
    }
}

/// A token as one string, whichever kind it is.
pub fn token_key(token: &NumberOrString) -> String {
    match token {
        NumberOrString::Number(n) => format!("n:{n}"),
        NumberOrString::String(s) => format!("s:{s}"),
    }
}
