/* pith session viewer, part 2 of 3: the session data. Reads the session embedded in
 * <script type="application/json" id="pith-session"> and derives what the page shows from it: the
 * tree of entries (children, labels, depth-first order, paths), what each entry is for the tree,
 * filters, search and the main pane, and the header figures. No drawing but the fatal message.
 * Exposes `pithSession` (with the small helpers the viewer uses), or null when the data is unreadable.
 *
 * Data (written by the Rust side, every "<" as \u003c so the JSON cannot end its script element):
 *   {"header": {...}            the session header line, as parsed
 *    "entries": [...]           every entry after the header, in file order, as parsed
 *    "leafId": string|null      the active leaf (selected at first)
 *    "name": string|null        the session name
 *    "systemPrompt": string|null
 *    "tools": [{"name","description","parameters"}]   (may be empty)
 *    "exportedAt": ISO-8601 string, "generator": "pith <version>"}
 * Without systemPrompt/tools the viewer falls back to the `system` messages on the active branch.
 */
const pithSession = (() => {
'use strict';
const { h, fmtN } = pithMarkdown;
const t0 = performance.now();
let D;
try { D = JSON.parse(document.getElementById('pith-session').textContent); } catch (err) { D = null; }
if (!D || typeof D !== 'object') { document.body.append(h('p', 'fatal', 'The session data in this page cannot be read.')); return null; }
const header = D.header && typeof D.header === 'object' ? D.header : {};
const rawEntries = Array.isArray(D.entries) ? D.entries : [];
const entries = rawEntries.filter(e => e && typeof e === 'object' && typeof e.id === 'string');
const tParse = performance.now();

// ---- small helpers -------------------------------------------------------------------------
const blocks = c => typeof c === 'string' ? [{ type: 'text', text: c }] : Array.isArray(c) ? c.filter(b => b && typeof b === 'object') : [];
const textOf = c => blocks(c).filter(b => b.type === 'text' && typeof b.text === 'string').map(b => b.text).join('\n');
const str = v => typeof v === 'string' ? v : v == null ? '' : JSON.stringify(v, null, 2);
const num = v => (typeof v === 'number' && isFinite(v) ? v : 0);
const fmtMs = ms => ms < 1000 ? Math.round(ms) + ' ms' : ms < 60000 ? (ms / 1000).toFixed(1) + ' s'
  : ms < 3600000 ? Math.floor(ms / 60000) + 'm ' + Math.round(ms % 60000 / 1000) + 's' : Math.floor(ms / 3600000) + 'h ' + Math.round(ms % 3600000 / 60000) + 'm';
const date = t => { const d = new Date(typeof t === 'number' ? t : Date.parse(t)); return isNaN(d) ? null : d; };
const p2 = n => String(n).padStart(2, '0');
const hms = d => p2(d.getHours()) + ':' + p2(d.getMinutes()) + ':' + p2(d.getSeconds());
const ymd = d => d.getFullYear() + '-' + p2(d.getMonth() + 1) + '-' + p2(d.getDate());
const oneLine = s => String(s).slice(0, 300).replace(/\s+/g, ' ').trim();
const plural = (n, w, pl) => n + ' ' + (n === 1 ? w : pl || w + 's');
const has = (o, k) => o[k] !== undefined && o[k] !== null;
const arr = v => Array.isArray(v) ? v : [];
const ext = p => { const m = /\.([\w+-]+)$/.exec(String(p || '')); return m ? m[1] : ''; };
const msgOf = e => e.type === 'message' && e.message && typeof e.message === 'object' ? e.message : null;

// ---- the tree: entries by id, children, labels, depth-first order, paths -----------------------
const byId = new Map();
for (const e of entries) byId.set(e.id, e);
const labels = new Map();
const dropped = new Set();
for (const e of entries) {
  if (e.type === 'label' && typeof e.targetId === 'string') {
    if (e.label == null || e.label === '') labels.delete(e.targetId); else labels.set(e.targetId, String(e.label));
  } else if (e.type === 'context_edit' && e.replacement === null) dropped.add(e.targetId);
}
const kids = new Map();
const roots = [];
for (const e of byId.values()) {
  const p = e.parentId;
  if (typeof p === 'string' && p !== e.id && byId.has(p)) {
    if (!kids.has(p)) kids.set(p, []);
    kids.get(p).push(e);
  } else roots.push(e);
}
const ts = e => String(e.timestamp || '');
for (const list of kids.values()) if (list.length > 1) list.sort((a, b) => ts(a) < ts(b) ? -1 : ts(a) > ts(b) ? 1 : 0);
// Depth-first, without recursion; depth grows only under a branch point (chains stay flat).
const flat = [];
{
  const seen = new Set();
  const stack = roots.slice().reverse().map(e => [e, 0, false]);
  while (stack.length) {
    const [e, d, first] = stack.pop();
    if (seen.has(e.id)) continue;
    seen.add(e.id);
    const c = kids.get(e.id) || [];
    flat.push({ e, d, fork: c.length > 1, first });
    for (let i = c.length - 1; i >= 0; i--) stack.push([c[i], c.length > 1 ? d + 1 : d, c.length > 1]);
    // Entries in a parentId cycle have no root: each unseen one is listed as a root too.
    if (!stack.length) {
      const orphan = [...byId.values()].find(x => !seen.has(x.id));
      if (orphan) stack.push([orphan, 0, false]);
    }
  }
}
const leafId = byId.has(D.leafId) ? D.leafId : entries.length ? entries[entries.length - 1].id : null;
const pathTo = id => {
  const out = [];
  const seen = new Set();
  for (let e = byId.get(id); e && !seen.has(e.id); e = byId.get(e.parentId)) { seen.add(e.id); out.push(e); }
  return out.reverse();
};
const leafPath = new Set(pathTo(leafId).map(e => e.id));
const leafBelow = id => {
  const seen = new Set();
  for (let e = byId.get(id); ; ) {
    const c = kids.get(e.id);
    if (!c || !c.length || seen.has(e.id)) return e.id;
    seen.add(e.id);
    e = c[c.length - 1];
  }
};

// What an entry is, for the tree: [role, text, class].
function describe(e) {
  try { return describe1(e); } catch (err) { return [String(e.type), '', 'r-meta']; }
}
function describe1(e) {
  const m = msgOf(e);
  if (m) {
    switch (m.role) {
      case 'user': return ['user', textOf(m.content) || '(image)', 'r-user'];
      case 'assistant': {
        const t = textOf(m.content);
        const calls = blocks(m.content).filter(b => b.type === 'toolCall').map(b => b.name);
        if (m.errorMessage || m.stopReason === 'error') return ['error', m.errorMessage || t, 'r-err'];
        return ['assistant', t || (calls.length ? '→ ' + calls.join(', ') : m.stopReason === 'aborted' ? '(aborted)' : '(thinking)'), 'r-asst'];
      }
      case 'toolResult': return [String(m.toolName || 'tool'), (m.isError ? '✗ ' : '') + textOf(m.content), m.isError ? 'r-err' : 'r-tool'];
      case 'bashExecution': return ['$', str(m.command), 'r-tool'];
      case 'system': return ['system', m.toolsRemoved && m.toolsRemoved.length || !(m.sections && m.sections.preamble) ? 'tools changed' : 'system prompt', 'r-meta'];
      default: return [String(m.role || 'message'), textOf(m.content) || str(m.summary), 'r-meta'];
    }
  }
  switch (e.type) {
    case 'compaction': return ['compaction', fmtN(num(e.tokensBefore)) + ' tokens summarized', 'r-mark'];
    case 'branch_summary': return ['branch summary', str(e.summary), 'r-mark'];
    case 'model_change': return ['model', e.provider + '/' + e.modelId, 'r-meta'];
    case 'thinking_level_change': return ['thinking', str(e.thinkingLevel), 'r-meta'];
    case 'session_info': return ['name', str(e.name), 'r-meta'];
    case 'label': return ['label', (e.label == null ? '(removed)' : str(e.label)) + ' → ' + e.targetId, 'r-meta'];
    case 'custom': return ['custom', str(e.customType), 'r-meta'];
    case 'custom_message': return [str(e.customType) || 'custom', textOf(e.content), 'r-meta'];
    case 'context_edit': return ['context edit', (e.replacement === null ? 'left out: ' : 'replaced: ') + e.targetId, 'r-meta'];
    default: return [String(e.type), '', 'r-meta'];
  }
}
const SETTINGS = new Set(['label', 'custom', 'context_edit', 'model_change', 'thinking_level_change']);
function passes(e, mode) {
  if (mode === 'all') return true;
  const m = msgOf(e);
  if (mode === 'user') return !!m && m.role === 'user';
  if (mode === 'labeled') return labels.has(e.id);
  if (SETTINGS.has(e.type)) return false;
  if (m && m.role === 'assistant' && !textOf(m.content).trim()
    && !m.errorMessage && (m.stopReason === 'stop' || m.stopReason === 'toolUse')) return false;
  return !(mode === 'no-tools' && m && m.role === 'toolResult');
}
function searchText(e) {
  const [role, text] = describe(e);
  const m = msgOf(e);
  let extra = '';
  if (m && m.role === 'assistant') for (const b of blocks(m.content)) extra += ' ' + (b.type === 'toolCall' ? b.name + ' ' + JSON.stringify(b.arguments) : b.thinking || '');
  return (role + ' ' + text + extra + ' ' + (labels.get(e.id) || '')).slice(0, 20000).toLowerCase();
}

// ---- what an entry is, for the main pane: its classes, an estimated height (px) ----------------
function kindOf(e) {
  const m = msgOf(e);
  if (m) {
    if (m.role === 'assistant') {
      const bs = blocks(m.content);
      const text = bs.some(b => b.type === 'text' && str(b.text).trim()) || m.errorMessage;
      const think = bs.some(b => b.type === 'thinking');
      return 'asst' + (m.errorMessage ? ' err' : '') + (text ? '' : think ? ' notext' : ' notext onlytools');
    }
    return { user: 'user', toolResult: 'tool-item', bashExecution: 'shell', system: 'meta' }[m.role] || 'other';
  }
  if (e.type === 'custom_message') return 'other' + (e.display === false ? ' hidden-msg' : '');
  if (e.type === 'custom' || e.type === 'context_edit' || e.type === 'label') return 'meta hidden-msg';
  return e.type === 'compaction' || e.type === 'branch_summary' ? 'mark' : 'meta';
}
function estimate(e) {
  const m = msgOf(e);
  if (!m) return e.type === 'compaction' || e.type === 'branch_summary' ? 160 : 26;
  let n = 0;
  let calls = 0;
  for (const b of blocks(m.content)) { n += str(b.text || b.thinking).length; if (b.type === 'toolCall') calls++; }
  return Math.min(1500, 60 + Math.ceil(n / 90) * 22 + calls * 90);
}
// ---- the header figures; the system prompt and tools from the branch ---------------------------
function figures() {
  const roles = Object.create(null);
  const models = new Set();
  const calls = Object.create(null);
  let nCalls = 0, tin = 0, tout = 0, cr = 0, cw = 0, cost = 0, mMs = 0, tMs = 0;
  for (const e of entries) {
    if (e.type === 'model_change' && e.modelId) models.add(e.provider + '/' + e.modelId);
    const m = msgOf(e);
    if (!m) continue;
    roles[m.role] = (roles[m.role] || 0) + 1;
    if (m.role === 'assistant') {
      if (m.model) models.add((m.provider ? m.provider + '/' : '') + m.model);
      const u = m.usage || {};
      tin += num(u.input); tout += num(u.output); cr += num(u.cacheRead); cw += num(u.cacheWrite);
      cost += num(u.cost && u.cost.total);
      mMs += num(m.durationMs);
      for (const b of blocks(m.content)) if (b.type === 'toolCall') { nCalls++; calls[b.name] = (calls[b.name] || 0) + 1; }
    } else if (m.role === 'toolResult') tMs += num(m.durationMs);
  }
  const first = date(header.timestamp);
  const lastE = entries.length ? date(entries[entries.length - 1].timestamp) : null;
  const names = { user: 'user', assistant: 'assistant', toolResult: 'tool result', bashExecution: 'shell', system: 'system' };
  return [
    ['Date', first ? ymd(first) + ' ' + hms(first) : ''],
    ['Models', [...models].join(', ') || 'none'],
    ['Messages', Object.entries(roles).map(([r, n]) => n + ' ' + (names[r] || r)).join(', ') || 'none'],
    ['Tool calls', nCalls + (nCalls ? ' (' + Object.entries(calls).map(([k, n]) => k + ' ' + n).join(', ') + ')' : '')],
    ['Tokens', '↑' + fmtN(tin) + ' in · ↓' + fmtN(tout) + ' out' + (cr || cw ? ' · ' + fmtN(cr) + ' cache read · ' + fmtN(cw) + ' cache write' : '')],
    ['Cost', '$' + cost.toFixed(cost >= 1 ? 2 : 4)],
    ['Duration', (first && lastE ? fmtMs(Math.max(0, lastE - first)) + ' · ' : '') + 'model ' + fmtMs(mMs) + ' · tools ' + fmtMs(tMs)],
    ['Entries', entries.length + (kids.size ? ' · ' + plural(flat.filter(f => f.fork).length, 'branch point') : '') + ' · ' + plural(labels.size, 'label')],
  ];
}
function fallbackTools() {
  const tools = new Map();
  let prompt = null;
  for (const e of pathTo(leafId)) {
    const m = msgOf(e);
    if (!m || m.role !== 'system') continue;
    for (const n of arr(m.toolsRemoved)) tools.delete(n);
    for (const t of arr(m.toolsAdded)) if (t && t.name) tools.set(t.name, t);
    const s = m.sections || {};
    const p = ['preamble', 'tools', 'rules', 'docs', 'cwd'].map(k => str(s[k])).filter(Boolean).join('\n\n');
    if (p) prompt = p;
  }
  return [prompt, [...tools.values()]];
}
function schemaType(s) {
  if (!s || typeof s !== 'object') return 'any';
  if (Array.isArray(s.enum)) return s.enum.map(v => JSON.stringify(v)).join(' | ');
  if (s.type === 'array') return 'array of ' + schemaType(s.items);
  if (s.properties) return '{' + Object.keys(s.properties).join(', ') + '}';
  const alts = s.anyOf || s.oneOf;
  if (Array.isArray(alts)) return alts.map(schemaType).join(' | ');
  return Array.isArray(s.type) ? s.type.join(' | ') : str(s.type) || 'any';
}

return {
  data: D, header, rawEntries, t0, tParse,
  blocks, textOf, str, num, fmtMs, date, hms, oneLine, plural, has, arr, ext, msgOf,
  byId, labels, dropped, kids, flat, leafId, pathTo, leafPath, leafBelow,
  describe, passes, searchText, kindOf, estimate, figures, fallbackTools, schemaType,
};
})();
