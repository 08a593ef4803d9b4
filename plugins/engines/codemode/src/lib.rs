//! The JavaScript engine of the `codemode` tool: runs one script as the body of an async
//! function in Boa, with the globals of pi's codemode prelude (`prelude.js`: `tools`, `text`,
//! `image`, `console`, `exit`, `store`/`load`, `ALL_TOOLS`, and the globals the host answers).
//!
//! Tool calls run in the host, concurrently: a call returns a pending promise; when the script
//! has nothing left to run, the engine waits for the host to end one or more calls and settles
//! their promises. A script waiting on a promise nothing can settle fails at once.

mod bindings {
    wit_bindgen::generate!({
        world: "script-engine-plugin",
        path: "../../../wit",
        generate_all,
    });
}

use std::cell::RefCell;

use boa_engine::object::builtins::JsFunction;
use boa_engine::{Context, JsArgs, JsError, JsResult, JsValue, NativeFunction, Source, js_string};

use bindings::exports::pith::plugin0_2_0::script_engine::{Ending, Guest, Script};
use bindings::pith::plugin0_2_0::script_host::{self, CallKind, OutputKind};

/// pi's prelude: a function of the bridge and the tools', globals' and store's JSON.
const PRELUDE: &str = include_str!("prelude.js");

thread_local! {
    /// How the script ended, once the prelude said so.
    static ENDING: RefCell<Option<Ending>> = const { RefCell::new(None) };
    /// The context with the prelude compiled, made at build time (`wizer-initialize`).
    static PREPARED: RefCell<Option<Prepared>> = const { RefCell::new(None) };
}

/// A context and the prelude's function in it.
struct Prepared {
    context: Context,
    make: JsValue,
}

impl Prepared {
    fn new() -> JsResult<Prepared> {
        let mut context = Context::default();
        let source =
            Source::from_bytes(PRELUDE).with_path(std::path::Path::new("codemode-prelude.js"));
        let make = context.eval(source)?;
        Ok(Prepared { context, make })
    }
}

struct Engine;

impl bindings::Guest for Engine {
    fn wizer_initialize() {
        PREPARED.with(|prepared| {
            let mut prepared = prepared.borrow_mut();
            if prepared.is_none() {
                *prepared = Prepared::new().ok();
            }
        });
    }
}

impl Guest for Engine {
    fn run(script: Script) -> Ending {
        ENDING.with(|ending| ending.borrow_mut().take());
        let prepared = PREPARED.with(|prepared| prepared.borrow_mut().take());
        let prepared = match prepared {
            Some(prepared) => Ok(prepared),
            None => Prepared::new(),
        };
        let Prepared { mut context, make } = match prepared {
            Ok(prepared) => prepared,
            Err(err) => {
                return Ending {
                    ok: false,
                    payload: Some(error_json("Error", &format!("the prelude failed: {err}"))),
                    writes: None,
                };
            }
        };
        let context = &mut context;
        let failed = match run(context, &make, &script) {
            Ok(()) => None,
            Err(err) => Some(describe(&err, context)),
        };
        ENDING
            .with(|ending| ending.borrow_mut().take())
            .unwrap_or_else(|| Ending {
                ok: false,
                payload: Some(
                    failed.unwrap_or_else(|| {
                        error_json("Error", "the script ended without a result")
                    }),
                ),
                writes: None,
            })
    }
}

bindings::export!(Engine with_types_in bindings);

/// `{"name", "message"}` as the prelude describes errors.
fn error_json(name: &str, message: &str) -> String {
    let quote = |text: &str| {
        let mut out = String::with_capacity(text.len() + 2);
        out.push('"');
        for c in text.chars() {
            match c {
                '"' => out.push_str("\\\""),
                '\\' => out.push_str("\\\\"),
                '\n' => out.push_str("\\n"),
                '\r' => out.push_str("\\r"),
                '\t' => out.push_str("\\t"),
                c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
                c => out.push(c),
            }
        }
        out.push('"');
        out
    };
    format!(
        "{{\"name\":{},\"message\":{}}}",
        quote(name),
        quote(message)
    )
}

/// An error the engine itself met (a syntax error, a failed prelude), as the prelude would.
fn describe(err: &JsError, context: &mut Context) -> String {
    let text = err.to_string();
    let _ = context;
    match text.split_once(": ") {
        Some((name, message)) if !name.contains(' ') => error_json(name, message),
        _ => error_json("Error", &text),
    }
}

fn string_arg(args: &[JsValue], index: usize, context: &mut Context) -> JsResult<String> {
    Ok(args
        .get_or_undefined(index)
        .to_string(context)?
        .to_std_string_escaped())
}

fn optional_arg(args: &[JsValue], index: usize, context: &mut Context) -> JsResult<Option<String>> {
    let value = args.get_or_undefined(index);
    if value.is_undefined() || value.is_null() {
        return Ok(None);
    }
    string_arg(args, index, context).map(Some)
}

/// The prelude's `bridge(kind, ...)`.
fn bridge(_: &JsValue, args: &[JsValue], context: &mut Context) -> JsResult<JsValue> {
    match string_arg(args, 0, context)?.as_str() {
        "done" => {
            let ok = args.get_or_undefined(1).to_boolean();
            let payload = optional_arg(args, 2, context)?;
            let writes = optional_arg(args, 3, context)?;
            ENDING.with(|ending| {
                *ending.borrow_mut() = Some(Ending {
                    ok,
                    payload,
                    writes,
                })
            });
        }
        kind @ ("call" | "global") => {
            let id = args.get_or_undefined(1).to_u32(context)?;
            let name = string_arg(args, 2, context)?;
            let arguments = optional_arg(args, 3, context)?;
            let kind = if kind == "call" {
                CallKind::Tool
            } else {
                CallKind::Global
            };
            script_host::start_call(kind, id, &name, arguments.as_deref());
        }
        "output" => {
            let kind = match string_arg(args, 1, context)?.as_str() {
                "image" => OutputKind::Image,
                "console" => OutputKind::Console,
                _ => OutputKind::Text,
            };
            let data = string_arg(args, 2, context)?;
            let mime_type = optional_arg(args, 3, context)?;
            script_host::output(kind, &data, mime_type.as_deref());
        }
        _ => {}
    }
    Ok(JsValue::undefined())
}

fn finished() -> bool {
    ENDING.with(|ending| ending.borrow().is_some())
}

/// The prelude's function `name`.
fn function(api: &JsValue, name: &str, context: &mut Context) -> JsResult<JsFunction> {
    api.as_object()
        .and_then(|object| object.get(js_string!(name), context).ok())
        .and_then(|value| value.as_object())
        .and_then(JsFunction::from_object)
        .ok_or_else(|| {
            boa_engine::JsNativeError::typ()
                .with_message(format!("the prelude has no {name}"))
                .into()
        })
}

/// Runs the script until it ends (the prelude reports how through `bridge("done", …)`).
fn run(context: &mut Context, make: &JsValue, script: &Script) -> JsResult<()> {
    let make = make.as_callable().ok_or_else(|| {
        JsError::from(boa_engine::JsNativeError::typ().with_message("the prelude is no function"))
    })?;
    let bridge = NativeFunction::from_fn_ptr(bridge).to_js_function(context.realm());
    let api = make.call(
        &JsValue::undefined(),
        &[
            bridge.into(),
            JsValue::from(js_string!(script.tools.as_str())),
            JsValue::from(js_string!(script.globals.as_str())),
            JsValue::from(js_string!(script.store.as_str())),
        ],
        context,
    )?;
    let settle = function(&api, "settle", context)?;
    let start = function(&api, "run", context)?;
    let stalled = function(&api, "stalled", context)?;
    // The body of an async function (pi's wrapper): top-level `await` and `return` work.
    let wrapped = format!("(async (tools, console) => {{{}\n}})", script.code);
    let source =
        Source::from_bytes(wrapped.as_bytes()).with_path(std::path::Path::new("codemode.js"));
    let body = match context.eval(source) {
        Ok(body) => body,
        Err(err) => {
            let described = describe(&err, context);
            ENDING.with(|ending| {
                *ending.borrow_mut() = Some(Ending {
                    ok: false,
                    payload: Some(described),
                    writes: None,
                })
            });
            return Ok(());
        }
    };
    start.call(&api, &[body], context)?;
    loop {
        context.run_jobs()?;
        if finished() {
            return Ok(());
        }
        if stalled.call(&api, &[], context)?.to_boolean() {
            return Ok(());
        }
        for settled in script_host::wait_calls() {
            let arguments = [
                JsValue::from(settled.id),
                JsValue::from(settled.ok),
                settled.payload.map_or_else(JsValue::undefined, |p| {
                    JsValue::from(js_string!(p.as_str()))
                }),
                settled.properties.map_or_else(JsValue::undefined, |p| {
                    JsValue::from(js_string!(p.as_str()))
                }),
            ];
            settle.call(&api, &arguments, context)?;
        }
    }
}
