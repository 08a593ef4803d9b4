//! The binary's commands.

pub mod export;
pub mod list_models;
pub mod mcp;
pub mod plugin;
pub mod plugins;
pub mod startup;
pub mod tool;
