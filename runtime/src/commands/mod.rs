//! The binary's commands.

pub mod export;
pub mod plugin;
pub mod plugins;
pub mod startup;
pub mod tool;
