//! The binary's commands.

pub mod plugins;
pub mod rpc;
pub mod tool;
