//! The conversation: its messages in pi's shapes, the system prompt with its sections and its
//! record, and compaction.

pub mod compaction;
pub mod message;
pub mod messages;
pub mod prompt_sections;
pub mod system_prompt;
pub mod system_record;
pub mod tokens;
