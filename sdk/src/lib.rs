//! # pith-sdk
//!
//! Write pith plugins in Rust: tools, LLM providers, extensions, skill packs and
//! prompt-template packs. A plugin is a WebAssembly component built for
//! `wasm32-wasip2`; pith loads it from a plugins directory, sandboxes it, and calls it.
//!
//! Enable exactly one feature for the kind you write (`tool`, `provider`, `extension`,
//! `skill`, `prompt-template`), implement its trait, and export it with its macro.
//! `pith plugin new <name> --kind <kind>` makes a project that builds and loads as it is, and
//! `pith plugin build` builds and checks it.
//!
//! The crate carries the WIT package it is built from (`pith:plugin@0.1.0`, in `wit/`). Within
//! 0.1, pith only adds to it (interfaces, functions in new interfaces, optional exports, worlds):
//! a plugin built with any 0.1 SDK keeps loading in later pith releases.
//!
//! ## A complete tool plugin
//!
//! `Cargo.toml`:
//!
//! ```toml
//! [package]
//! name = "word-count"
//! version = "0.1.0"
//! edition = "2024"
//!
//! [lib]
//! crate-type = ["cdylib"]
//!
//! [dependencies]
//! pith-sdk = { version = "0.1", features = ["tool"] }
//! serde = { version = "1", features = ["derive"] }
//! ```
//!
//! `src/lib.rs` (compiled as a doctest with the `tool` feature: CI runs
//! `cargo test -p pith-sdk --features tool --doc`):
//!
#![cfg_attr(feature = "tool", doc = "```no_run")]
#![cfg_attr(not(feature = "tool"), doc = "```ignore")]
//! use pith_sdk::tool::*;
//!
//! #[derive(serde::Deserialize)]
//! struct Args {
//!     path: String,
//! }
//!
//! struct WordCount;
//!
//! impl Tool for WordCount {
//!     const NAME: &'static str = "word_count";
//!     const DESCRIPTION: &'static str = "Count the lines, words and bytes of a file.";
//!
//!     fn parameters() -> Value {
//!         json!({"type": "object", "required": ["path"],
//!                "properties": {"path": {"type": "string", "description": "File to count"}}})
//!     }
//!
//!     fn execute(call: ToolCall) -> Result<ToolResult, ToolError> {
//!         let args: Args = call.parse()?;
//!         let text = std::fs::read_to_string(resolve_path(&args.path))
//!             .map_err(|err| ToolError::new(format!("Cannot read {}: {err}", args.path)))?;
//!         let words = text.split_whitespace().count();
//!         Ok(ToolResult::text(format!("{} lines, {words} words, {} bytes", text.lines().count(), text.len())))
//!     }
//! }
//!
//! pith_sdk::export_tools!(WordCount);
//! ```
//!
//! Build it with `cargo build --release --target wasm32-wasip2`, and put the `.wasm` with a
//! manifest `word-count.toml` beside it in a plugins directory:
//!
//! ```toml
//! id = "word-count"
//! version = "0.1.0"
//! kind = "tool"
//! component = "word_count.wasm"
//!
//! [capabilities]
//! workspace = "read"
//! ```
//!
//! ## What a plugin can reach
//!
//! Nothing but what its manifest declares and the user grants: the workspace (read or
//! read-write) through ordinary `std::fs`, [`http`] to granted URL prefixes, [`host::config`]
//! values for granted keys, [`process`] only when granted, and [`search`] over what it may
//! read. Anything else fails with a
//! typed `denied` error.

extern crate self as pith_sdk;

pub mod bindings;
mod content;
pub mod host;
pub mod http;
pub mod js;
pub mod process;
pub mod sandbox;
pub mod search;
pub mod sse;
pub mod text;

#[cfg(feature = "provider")]
pub mod compat;
#[cfg(feature = "extension")]
pub mod conversation;
#[cfg(feature = "extension")]
pub mod extension;
#[cfg(feature = "provider")]
pub mod grammar_tools;
#[cfg(feature = "prompt-template")]
pub mod prompt_template;
#[cfg(feature = "provider")]
pub mod provider;
#[cfg(feature = "tool")]
pub mod shell_tool;
#[cfg(feature = "skill")]
pub mod skill;
#[cfg(feature = "tool")]
pub mod tool;

pub use bindings::imports::pith::plugin0_1_0::types;
pub use serde_json;

#[doc(hidden)]
pub mod __private {
    pub use wit_bindgen;
}
