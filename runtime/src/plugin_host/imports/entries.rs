//! `entries` (0.2): the session entries' types; nothing to implement.
use crate::plugin_host::bindings::extension_world_v2::pith::plugin0_2_0::entries;
use crate::plugin_host::sandbox::StoreState;

impl entries::Host for StoreState {}
