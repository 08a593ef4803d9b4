//! # pith
//!
//! A headless coding-agent runtime: hosts drive it over stdio with the JSONL protocol of the pi
//! coding agent's RPC mode, and everything that varies (tools, LLM providers, skills, prompt
//! templates, extensions) is a WebAssembly component loaded, sandboxed and called by
//! [`plugin_host`].

pub mod acp;
pub mod agent;
pub mod agent_dir;
pub mod cli;
pub mod commands;
pub mod content;
pub mod docs;
pub mod export;
pub mod file_search;
pub mod images;
pub mod js;
pub mod mcp;
pub mod memory;
pub mod model;
pub mod plugin_host;
pub mod print;
pub mod resources;
pub mod rpc;
pub mod sandbox;
pub mod settings;
pub mod signals;
pub mod time;
pub mod trust;
pub mod workspaces;
