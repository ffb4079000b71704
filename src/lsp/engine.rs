//! The model behind every completion ([`Engine::load`]): loaded on first use, with the client
//! shown a fetch's progress as `$/progress` while it comes ([`super::model_download`]), and
//! loaded again when its settings change.

use super::error::ServeError;
use super::model_download;
use super::state::State;
use crate::live::Engine;
use crate::progress::Progress;

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
            && !crate::model::model_path(&named, &settings.index.cache_dir).is_file()
        {
            // Told at once, before the first byte comes: a completion asked for now must not
            // wait for the download.
            self.set_downloading(Some(model_download::note(named.name, 0, named.size)));
        }
        let (loaded, ()) = tokio::join!(load, model_download::relay(self, named.name, received));
        let engine = loaded.map_err(ServeError::task("loading the model"))??;
        *slot = Some((settings, engine.clone()));
        Ok(engine)
    }
}
