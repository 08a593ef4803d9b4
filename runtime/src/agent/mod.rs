//! The agent session: messages, models, the agent loop, queues and the session's commands.

pub mod agent_loop;
pub mod bash;
pub mod compaction;
pub mod context;
pub mod escalation;
pub mod event;
pub mod events;
pub mod export;
pub mod extensions;
pub mod host_tools;
pub mod input;
pub mod message;
pub use crate::model;
pub mod models;
pub mod plugins;
pub mod queue;
pub mod retry;
pub mod session;
pub mod session_file;
pub mod stream;
pub mod system_prompt;
pub mod system_record;
pub mod todos;
pub mod tool_calls;
pub mod tool_output;
pub mod tools;
