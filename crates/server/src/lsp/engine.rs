//! The model behind every completion ([`Engine::load`]): loaded on first use, with the client
//! shown a fetch's progress as `$/progress` while it comes ([`super::model_download`]), and
//! loaded again when its settings change.

use std::sync::Arc;

use super::error::ServeError;
use super::model_download;
use super::state::State;
use crate::live::Engine;
use crossfile_engine::config::Settings;

/// Models loaded for arena arms besides the server's own.
const ARM_ENGINES: usize = 2;
use crossfile_engine::progress::Progress;

impl State {
    /// The model, loaded on first use (fetching the default model if it is missing), and again
    /// when its settings (`model`, `backend`) have changed. A failed load is tried again by the
    /// next request; requests wait while it loads.
    pub async fn engine(&self) -> Result<Engine, ServeError> {
        let settings = self.engine_settings();
        let mut slot = self.engine.lock().await;
        if let Some((loaded, engine)) = slot.as_ref()
            && Engine::serves(loaded, &settings)
        {
            return Ok(engine.clone());
        }
        let engine = self.load_engine(&settings).await?;
        *slot = Some((settings, engine.clone()));
        Ok(engine)
    }

    /// The model an arena arm's `settings` name: the server's own when they name it, else one
    /// loaded for arms (kept while an arm names it; at most [`ARM_ENGINES`]).
    pub async fn engine_for(&self, settings: &Arc<Settings>) -> Result<Engine, ServeError> {
        if Engine::serves(&self.engine_settings(), settings) {
            return self.engine().await;
        }
        let mut loaded = self.arm_engines.lock().await;
        if let Some((_, engine)) = loaded.iter().find(|(s, _)| Engine::serves(s, settings)) {
            return Ok(engine.clone());
        }
        let engine = self.load_engine(settings).await?;
        if loaded.len() >= ARM_ENGINES {
            loaded.remove(0);
        }
        loaded.push((settings.clone(), engine.clone()));
        Ok(engine)
    }

    /// Loads the model `settings` name, fetching it first if it is missing (the editor shown
    /// the download's progress).
    async fn load_engine(&self, settings: &Arc<Settings>) -> Result<Engine, ServeError> {
        let for_load = settings.clone();
        // A model fetched on the way reports its bytes to the editor while it comes.
        let (events, received) = tokio::sync::mpsc::unbounded_channel();
        let load = tokio::task::spawn_blocking(move || {
            let progress = Progress::new(move |event| {
                let _ = events.send(event);
            });
            Engine::load(&for_load, &progress)
        });
        let named = settings.model.named;
        if settings.model.path.is_none()
            && !crossfile_engine::model::model_path(&named, &settings.index.cache_dir).is_file()
        {
            // Told at once, before the first byte comes: a completion asked for now must not
            // wait for the download.
            self.set_downloading(Some(model_download::note(named.name, 0, named.size)));
        }
        let (loaded, ()) = tokio::join!(load, model_download::relay(self, named.name, received));
        Ok(loaded.map_err(ServeError::task("loading the model"))??)
    }
}
