//! What the session's commands answer, typed. Each serializes to the JSON pi's RPC mode
//! answers (field order included: the front-ends write them as they are); ACP and the other
//! front-ends read the fields.

mod changes;
mod queries;
mod reload;
#[cfg(test)]
mod tests;

pub use changes::*;
pub use queries::*;
pub use reload::*;
