//! The binary's commands.

pub mod plugins;
pub mod startup;
pub mod tool;
