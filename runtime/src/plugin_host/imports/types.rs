//! `pith:plugin/types`: records and variants only; nothing to implement.

use crate::plugin_host::bindings::imports::pith::plugin0_1_0::types::Host;
use crate::plugin_host::sandbox::StoreState;

impl Host for StoreState {}
