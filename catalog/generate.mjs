// Regenerates catalog/pi-models.jsonl, pith's copy of the built-in model catalog of pi's
// pi-ai package, from an installed pi (pi-ai and pi-coding-agent side by side):
//
//   node catalog/generate.mjs <path to node_modules/@earendil-works>
//
// Line 1 is the header: the pi-ai version; for each provider (in pi's order) its name, the
// environment variables that hold its key (pi's table, in its order) and its model count; and
// pi-coding-agent's default model of each provider, in its order (the first available one is
// the model a session starts with when nothing names one).
// Each further line is one provider's models, in the header's order, exactly as pi-ai holds
// them (pi's `get_available_models` sends them as they are). pith reads the header at start
// and parses a provider's line only when it needs that provider's models.
import fs from "node:fs";
import path from "node:path";
import url from "node:url";

const root = process.argv[2];
if (!root) {
  console.error("usage: node catalog/generate.mjs <node_modules/@earendil-works>");
  process.exit(2);
}
const load = (pkg, file) => import(url.pathToFileURL(path.resolve(root, pkg, "dist", file)).href);
const { MODELS } = await load("pi-ai", "models.generated.js");
const { findEnvKeys } = await load("pi-ai", "env-api-keys.js");
// The defaults are a constant of a module that imports half of pi: read as text.
const resolver = fs.readFileSync(path.resolve(root, "pi-coding-agent", "dist", "core", "model-resolver.js"), "utf8");
const literal = resolver.match(/export const defaultModelPerProvider = (\{[^}]*\});/);
if (!literal) throw new Error("defaultModelPerProvider not found in pi-coding-agent's model-resolver.js");
const defaultModelPerProvider = new Function(`return ${literal[1]}`)();
const version = JSON.parse(fs.readFileSync(path.resolve(root, "pi-ai", "package.json"), "utf8")).version;

// Every variable reads as set, so pi's lookup names all of a provider's variables.
const everySet = new Proxy({}, { get: (_, name) => (typeof name === "string" ? "x" : undefined), has: () => true });
const providers = Object.entries(MODELS).map(([name, models]) => ({
  name,
  envVars: findEnvKeys(name, everySet) ?? [],
  models: Object.keys(models).length,
}));
const defaults = Object.entries(defaultModelPerProvider).map(([provider, model]) => ({ provider, model }));
const lines = [JSON.stringify({ piAi: version, providers, defaults })];
for (const [, models] of Object.entries(MODELS)) {
  lines.push(JSON.stringify(Object.values(models)));
}
const out = path.join(path.dirname(url.fileURLToPath(import.meta.url)), "pi-models.jsonl");
fs.writeFileSync(out, lines.join("\n") + "\n");
console.log(`${out}: pi-ai ${version}, ${providers.length} providers, ${providers.reduce((n, p) => n + p.models, 0)} models`);
