// The StarlingMonkey (SpiderMonkey) engine under comparison, built with componentize-js
// into a component of the `bench:engines/js-engine` world (../wit/js-engine.wit).
// `run` evaluates `code` as a classic script (indirect eval: global scope) and returns
// String(completion value), or "error: ..." when it throws.
export function run(code) {
  try {
    return String((0, eval)(code));
  } catch (e) {
    return "error: " + String(e);
  }
}
