//! A port of pi's `examples/extensions/plan-mode` (to be written).

use pith_sdk::extension::*;

struct Port;

impl Extension for Port {
    fn new() -> Self {
        Port
    }

    fn describe(&self) -> ExtensionInfo {
        ExtensionInfo::new("plan-mode")
    }
}

pith_sdk::export_extension!(Port);
