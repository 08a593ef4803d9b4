//! Boa 0.22 (the engine of pith's codemode, same features: no `intl`, `temporal` or timers)
//! as a `bench:engines/js-engine` component, without codemode's prelude, tools or promise
//! loop: `run` evaluates a classic script and returns `String(completion value)`. The
//! comparison of the bare engine with QuickJS and StarlingMonkey under the same world.
//!
//! `wizer-initialize` makes the context ahead of time (the harness's `wizer` step snapshots
//! the memory afterwards); without it, `run` makes it itself.

mod bindings {
    wit_bindgen::generate!({
        world: "js-engine-preinit",
        path: "../wit",
    });
}

use std::cell::RefCell;

use boa_engine::{Context, Source};

thread_local! {
    static PREPARED: RefCell<Option<Context>> = const { RefCell::new(None) };
}

struct Engine;

impl bindings::Guest for Engine {
    fn run(code: String) -> String {
        let prepared = PREPARED.with(|p| p.borrow_mut().take());
        let mut context = prepared.unwrap_or_default();
        match context.eval(Source::from_bytes(code.as_bytes())) {
            Ok(value) => match value.to_string(&mut context) {
                Ok(text) => text.to_std_string_escaped(),
                Err(err) => format!("error: {err}"),
            },
            Err(err) => format!("error: {err}"),
        }
    }

    fn wizer_initialize() {
        PREPARED.with(|p| {
            let mut p = p.borrow_mut();
            if p.is_none() {
                *p = Some(Context::default());
            }
        });
    }
}

bindings::export!(Engine with_types_in bindings);
