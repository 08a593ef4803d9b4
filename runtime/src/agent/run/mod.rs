//! One run of the agent loop and what it is made of: the provider request, the streamed
//! answer, the tool calls with their output bounds, timeouts and approvals, retry and recovery
//! from a context overflow.

pub mod agent_loop;
pub mod escalation;
pub mod history_cache;
pub mod history_learning;
pub mod history_store;
pub mod overflow;
pub mod request;
pub mod retry;
pub mod routing;
pub mod stream;
pub mod tool_calls;
pub mod tool_output;
pub mod tool_timeout;
