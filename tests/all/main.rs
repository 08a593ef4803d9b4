//! pith's integration tests, in one binary: one link of wasmtime for all of them instead of
//! one per file. Each module drives the real `pith` binary, real components built from
//! `plugins/` and real HTTP on loopback; `support` holds the shared fixtures.

mod support;

mod acp;
mod acp_client;
mod binary;
mod client_message_ids;
mod cold_start;
mod compaction;
mod completions;
mod conformance;
mod context_files;
mod credentials;
mod engine;
mod export_viewer;
mod extension_dialogs;
mod extensions;
mod fork_features;
mod hot_reload;
mod limits;
mod listen;
mod liveness;
mod mcp;
mod model_catalog;
mod models;
mod oauth;
mod pending_dialogs;
mod pi_1_5;
mod pi_client_1_5;
mod pi_dirs;
mod pi_environment;
mod pi_hosts;
mod plugin_authoring;
mod plugin_host;
mod print_mode;
mod provider_anthropic;
mod provider_azure_mistral;
mod provider_google;
mod provider_openai_completions;
mod provider_openai_responses;
mod reliability;
mod reload;
mod resources;
mod rpc_commands;
mod rpc_tool_commands;
mod sandbox;
mod sandbox_toolchains;
mod search_tools;
mod session_catalog;
mod session_tree_moves;
mod sessions;
mod tool_bash;
mod tool_set;
mod tool_texts;
mod tools;
