//! The binary's commands.

pub mod export;
pub mod plugins;
pub mod startup;
pub mod tool;
