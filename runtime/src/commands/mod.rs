//! The binary's commands.

pub mod export;
pub mod extension_flags;
pub mod list_models;
pub mod mcp;
pub mod plugin;
pub mod plugins;
pub mod project_trust;
pub mod session_config;
pub mod startup;
pub mod tool;
