//! The per-call guard of the sandbox's path rules: the rules, and the directory each open
//! listing reads (the guarded filesystem, [`super::guarded_fs`], consults it at every call).

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Mutex;

use crate::sandbox::paths::PathRules;

/// A call's path rules and the directory each open listing reads.
#[derive(Debug, Default)]
pub struct PathGuard {
    rules: Option<PathRules>,
    pub(super) listings: Mutex<HashMap<u32, PathBuf>>,
}

impl PathGuard {
    /// A guard holding `rules` (`None`: nothing beyond the preopens).
    pub fn new(rules: Option<PathRules>) -> PathGuard {
        PathGuard {
            rules,
            listings: Mutex::new(HashMap::new()),
        }
    }

    /// The rules, if any.
    pub fn rules(&self) -> Option<&PathRules> {
        self.rules.as_ref()
    }
}
