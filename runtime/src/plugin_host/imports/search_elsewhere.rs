//! `pith:plugin/search` where the host's walk (which opens beneath directory handles, as only
//! unix systems allow) is not built: every call says so, and the `grep` and `find` tools
//! report it to the model.

use crate::plugin_host::bindings::imports::pith::plugin::search::{
    GrepFile, GrepOptions, Host, SearchError, WalkEntry, WalkOptions,
};
use crate::plugin_host::sandbox::StoreState;

fn unavailable() -> SearchError {
    SearchError::Failed(
        "the host's search is not available on this system yet: use the shell (grep, dir /s) instead"
            .into(),
    )
}

impl Host for StoreState {
    async fn walk(&mut self, _options: WalkOptions) -> Result<Vec<WalkEntry>, SearchError> {
        Err(unavailable())
    }

    async fn grep(&mut self, _options: GrepOptions) -> Result<Vec<GrepFile>, SearchError> {
        Err(unavailable())
    }
}
