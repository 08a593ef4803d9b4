//! QuickJS (quickjs-ng, through rquickjs) as a `bench:engines/js-engine` component: `run`
//! evaluates a classic script and returns `String(completion value)`.
//!
//! `wizer-initialize` makes the runtime and the context ahead of time (the harness's `wizer`
//! step snapshots the memory afterwards); without it, `run` makes them itself.

mod bindings {
    wit_bindgen::generate!({
        world: "js-engine-preinit",
        path: "../wit",
    });
}

use std::cell::RefCell;

use rquickjs::{Coerced, Context, Runtime, Value};

thread_local! {
    static PREPARED: RefCell<Option<(Runtime, Context)>> = const { RefCell::new(None) };
}

fn prepare() -> (Runtime, Context) {
    let runtime = Runtime::new().expect("runtime");
    let context = Context::full(&runtime).expect("context");
    (runtime, context)
}

struct Engine;

impl bindings::Guest for Engine {
    fn run(code: String) -> String {
        let prepared = PREPARED.with(|p| p.borrow_mut().take());
        let (_runtime, context) = prepared.unwrap_or_else(prepare);
        context.with(|ctx| match ctx.eval::<Coerced<String>, _>(code) {
            Ok(value) => value.0,
            Err(rquickjs::Error::Exception) => {
                let exception: Value = ctx.catch();
                let text = exception
                    .get::<Coerced<String>>()
                    .map(|s| s.0)
                    .unwrap_or_else(|_| "exception".into());
                format!("error: {text}")
            }
            Err(err) => format!("error: {err}"),
        })
    }

    fn wizer_initialize() {
        PREPARED.with(|p| {
            let mut p = p.borrow_mut();
            if p.is_none() {
                *p = Some(prepare());
            }
        });
    }
}

bindings::export!(Engine with_types_in bindings);
