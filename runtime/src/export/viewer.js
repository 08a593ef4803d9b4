/* pith session viewer, part 3 of 3: the page. The script of the one-file page `export_html` and
 * `pith export` write is markdown.js, session.js and this file, joined in this order.
 *
 * It builds the page with DOM APIs from `pithSession` (session.js) and `pithMarkdown` (markdown.js):
 * the tree of every entry (branches, labels, search, filters), the branch ending at the selected
 * entry (markdown, highlighted code, thinking, tool calls with `edit` as a diff, images), the header
 * figures, system prompt and tools, a per-turn timeline, deep links (#entry-<id>) and a JSONL
 * download. Plain ES2020, no dependencies, no network. The data's shape is at the top of session.js.
 *
 * Safety rules, for all three parts (keep them when editing):
 *  - session text reaches the DOM only as text (textContent, append(string)) or through attributes
 *    set here (id, className, dataset, href, src); no API that parses HTML is ever used.
 *  - links: only http:, https:, mailto: and #fragment hrefs; anything else stays text.
 *  - images: only data:image/...;base64 from the session. A markdown image with another URL is a
 *    link, never an <img>. The page's CSP (script nonce, img-src data:) backs this up.
 *
 * window.pithViewer: jsonl(), selected(), path(), select(id), open(id), renderAll(),
 *   setFilter(name), search(text), toggle('thinking'|'tools'|'hidden'), leafId, selectedAtLoad,
 *   violations (CSP reports), timing (ms).
 */
(() => {
'use strict';
if (!pithSession) return;
const { h, fmtN, link, md, codeBlock, clamp, lineCount, image } = pithMarkdown;
const {
  data: D, header, rawEntries, t0, tParse,
  blocks, textOf, str, num, fmtMs, date, hms, oneLine, plural, has, arr, ext, msgOf,
  byId, labels, dropped, kids, flat, leafId, pathTo, leafPath, leafBelow,
  describe, passes, searchText, kindOf, estimate, figures, fallbackTools, schemaType,
} = pithSession;
const violations = [];
document.addEventListener('securitypolicyviolation', e => violations.push(e.violatedDirective + ' ' + e.blockedURI));
const $ = id => document.getElementById(id);

// ---- the tree pane: rows built lazily, filters and search --------------------------------------
const treeEl = $('tree');
const rows = new Map();
const flatOf = new Map();
let mode = 'default';
let query = '';
let onPath = new Set();
let selRow = null;
// The tree is built lazily: groups of 100 rows, each group a box of ROW px per visible row, its
// rows created when it nears the viewport or holds the selected entry.
const ROW = 19;
const groups = [];
let treeIo = null;
function buildTree() {
  treeIo = 'IntersectionObserver' in window ? new IntersectionObserver(list => { for (const o of list) if (o.isIntersecting) buildGroup(o.target._g); }, { root: treeEl, rootMargin: '600px 0px' }) : null;
  for (let i = 0; i < flat.length; i += 100) {
    const g = { el: treeEl.appendChild(h('div', 'grp')), items: flat.slice(i, i + 100), built: false };
    g.el._g = g;
    for (const f of g.items) { f.g = g; flatOf.set(f.e.id, f); }
    groups.push(g);
  }
}
function buildGroup(g) {
  if (!g || g.built) return;
  g.built = true;
  if (treeIo) treeIo.unobserve(g.el);
  for (const f of g.items) {
    const e = f.e;
    const [role, text, rc] = describe(e);
    const r = h('div', 'node');
    r.dataset.entry = e.id;
    if (f.d) r.style.paddingLeft = 6 + Math.min(f.d, 20) * 12 + 'px';
    if (f.first) r.append(h('span', 'br', '↳'));
    if (f.fork) { r.append(h('span', 'fk', '◆')); r.title = 'branch point: ' + kids.get(e.id).length + ' branches'; }
    r.append(h('span', 'rl ' + rc, role));
    if (labels.has(e.id)) r.append(h('span', 'lbl', labels.get(e.id)));
    r.append(h('span', 'tx', oneLine(String(text).slice(0, 400).replace(/\*\*|`+|^#{1,6} /gm, ''))));
    r.hidden = !f.ok;
    if (onPath.has(e.id)) r.classList.add('on-path');
    if (e.id === selectedId) { r.classList.add('sel'); selRow = r; }
    f.r = r;
    rows.set(e.id, r);
    g.el.append(r);
  }
}
function applyFilter() {
  const toks = query.toLowerCase().split(/\s+/).filter(Boolean);
  let shown = 0;
  for (const f of flat) {
    let ok = f.e.id === leafId || passes(f.e, mode);
    if (ok && toks.length) { const s = f.s || (f.s = searchText(f.e)); ok = toks.every(t => s.includes(t)); }
    f.ok = ok;
    if (f.r) f.r.hidden = !ok;
    if (ok) shown++;
  }
  for (const g of groups) g.el.style.height = g.items.reduce((n, f) => n + (f.ok ? 1 : 0), 0) * ROW + 'px';
  $('status').textContent = shown + ' / ' + plural(flat.length, 'entry', 'entries');
  for (const b of document.querySelectorAll('#filters button')) b.setAttribute('aria-pressed', String(b.dataset.filter === mode));
}

// ---- tool calls ------------------------------------------------------------------------------
function headline(name, a) {
  const p = str(a.path != null ? a.path : a.file_path);
  switch (name) {
    case 'bash': return oneLine(str(a.command)).slice(0, 160);
    case 'read': return p + (a.offset || a.limit ? ' [' + (a.offset || 1) + (a.limit ? '+' + a.limit : '…') + ']' : '');
    case 'edit': return p + ' · ' + plural(Array.isArray(a.edits) ? a.edits.length : 1, 'edit');
    case 'write': return p + ' · ' + plural(lineCount(str(a.content)), 'line');
    case 'grep': case 'find': return str(a.pattern) + (p ? '  in ' + p : '') + (a.glob ? '  ' + a.glob : '');
    case 'ls': return p || '.';
    default: return oneLine(JSON.stringify(a) || '').slice(0, 140);
  }
}
function diffView(edits) {
  const box = h('div', 'diff');
  edits.forEach((ed, k) => {
    if (k) box.append(h('div', 'd-hunk', '⋯'));
    const a = str(ed && ed.oldText).split('\n');
    const b = str(ed && ed.newText).split('\n');
    let p = 0;
    while (p < a.length && p < b.length && a[p] === b[p]) p++;
    let s = 0;
    while (s < a.length - p && s < b.length - p && a[a.length - 1 - s] === b[b.length - 1 - s]) s++;
    const line = (cls, mark, t) => box.append(h('div', cls, mark + ' ' + t));
    a.slice(0, p).forEach(t => line('d-ctx', ' ', t));
    a.slice(p, a.length - s).forEach(t => line('d-del', '-', t));
    b.slice(p, b.length - s).forEach(t => line('d-add', '+', t));
    a.slice(a.length - s).forEach(t => line('d-ctx', ' ', t));
  });
  return box;
}
const ANSI = /\x1b\[[0-9;?]*[A-Za-z]/g;
function toolBlock(call, res) {
  const rm = res ? res.message : null;
  const name = String((call ? call.name : rm.toolName) || 'tool');
  const args = call && call.arguments && typeof call.arguments === 'object' ? call.arguments : {};
  const d = h('details', 'tool' + (rm && rm.isError ? ' err' : ''));
  d.open = true;
  const s = d.appendChild(h('summary'));
  s.append(h('span', 'tn', name), h('span', 'ta', call ? headline(name, args) : ''));
  if (rm && rm.durationMs != null) s.append(h('span', 'dur', fmtMs(num(rm.durationMs))));
  if (rm && rm.isError) s.append(h('span', 'bad', 'error'));
  else if (call && !rm) s.append(h('span', 'dur', 'no result'));
  if (call) {
    if (name === 'bash' && has(args, 'command')) { const c = str(args.command); if (c.includes('\n') || c.length > 100) d.append(codeBlock(c, 'sh', 'cmd')); }
    else if (name === 'edit' && (Array.isArray(args.edits) || has(args, 'oldText'))) d.append(diffView(Array.isArray(args.edits) ? args.edits : [args]));
    else if (name === 'write' && has(args, 'content')) d.append(clamp(codeBlock(str(args.content), ext(args.path)), lineCount(str(args.content))));
    else if (!['read', 'ls', 'find', 'grep'].includes(name) && Object.keys(args).length) {
      const j = JSON.stringify(args, null, 2);
      d.append(clamp(codeBlock(j, 'json'), lineCount(j)));
    }
  }
  if (rm) {
    let text = textOf(rm.content);
    if (name === 'bash') text = text.replace(ANSI, '');
    const pics = blocks(rm.content).filter(b => b.type === 'image');
    const n = lineCount(text);
    if (!rm.isError && n <= 1 && text.length <= 120 && !pics.length) {
      const r = d.appendChild(h('div', 'res res1', '→ ' + (text || '(no output)')));
      if (call) { r.id = 'entry-' + res.id; r.dataset.entry = res.id; }
      return d;
    }
    const r = h('details', 'res');
    if (call) { r.id = 'entry-' + res.id; r.dataset.entry = res.id; }
    r.open = !!rm.isError || n <= 8 || pics.length > 0;
    const rs = r.appendChild(h('summary', null, rm.isError ? 'error' : 'result'));
    rs.append(h('span', 'dim', ' · ' + plural(n, 'line') + (pics.length ? ' · ' + plural(pics.length, 'image') : '')));
    if (text) r.append(codeBlock(text, name === 'read' ? ext(args.path) : '', 'out'));
    for (const p of pics) r.append(image(p));
    d.append(r);
  }
  return d;
}

// ---- the main pane ---------------------------------------------------------------------------
const main = $('main');
const msgs = $('messages');
let curPath = [];
let selectedId = null;
let chunks = [];
let chunkOf = new Map();
let owner = new Map();
let resultsOf = new Map();
let io = null;
const time = (e, m) => {
  const d = date(m && m.timestamp != null ? m.timestamp : e.timestamp);
  return d ? hms(d) : '';
};
function hdr(el, e, who, cls, bits) {
  const m = msgOf(e);
  const d = el.appendChild(h('div', 'hd'));
  d.append(h('span', 'who ' + (cls || ''), who));
  for (const b of bits || []) if (b) d.append(h('span', 'bit', b));
  const when = h('a', 'when', time(e, m));
  when.href = '#entry-' + e.id;
  when.title = 'Link to this entry';
  d.append(when);
  if (labels.has(e.id)) d.append(h('span', 'lbl', labels.get(e.id)));
  const c = kids.get(e.id);
  if (c && c.length > 1) d.append(h('span', 'fk', '◆ ' + plural(c.length, 'branch', 'branches')));
  return d;
}
function idLink(id, parent) { link('#entry-' + id, parent).textContent = String(id); }
function meta(el, ...parts) {
  const d = el.appendChild(h('div', 'line'));
  for (const p of parts) if (typeof p === 'function') p(d); else d.append(p);
  d.append(' ');
  const w = link('#entry-' + el.dataset.entry, d);
  w.className = 'when';
  w.textContent = time(el._e);
  return d;
}
function build(el, e) {
  const m = msgOf(e);
  if (m) {
    const body = () => el.appendChild(h('div', 'body'));
    switch (m.role) {
      case 'user': {
        hdr(el, e, 'User', 'u');
        const b = body();
        for (const x of blocks(m.content)) if (x.type === 'text') md(x.text, b); else if (x.type === 'image') b.append(image(x));
        return;
      }
      case 'assistant': {
        const u = m.usage || {};
        hdr(el, e, 'Assistant', 'a', [m.provider ? m.provider + '/' + m.model : m.model, m.durationMs != null ? fmtMs(num(m.durationMs)) : '',
          u.input != null ? '↑' + fmtN(num(u.input) + num(u.cacheRead) + num(u.cacheWrite)) + ' ↓' + fmtN(num(u.output)) : '',
          u.cost && num(u.cost.total) ? '$' + num(u.cost.total).toFixed(4) : '', m.thinkingLevel && m.thinkingLevel !== 'off' ? 'thinking ' + m.thinkingLevel : '']);
        const b = body();
        const rs = resultsOf.get(e.id);
        for (const x of blocks(m.content)) {
          if (x.type === 'text') md(x.text, b);
          else if (x.type === 'thinking') {
            const t = b.appendChild(h('div', 'thinking'));
            t.append(h('div', 'thl', x.redacted ? 'Thinking (redacted)' : 'Thinking'));
            if (!x.redacted) md(str(x.thinking), t);
          } else if (x.type === 'toolCall') b.append(toolBlock(x, rs && rs.get(x.id)));
          else if (x.type === 'image') b.append(image(x));
        }
        if (m.errorMessage) b.append(h('div', 'errbox', m.errorMessage));
        if (m.stopReason === 'aborted') b.append(h('div', 'note', 'Aborted'));
        if (m.stopReason === 'length') b.append(h('div', 'note', 'Stopped at the output limit'));
        if (dropped.has(e.id)) b.append(h('div', 'note', 'Left out of the context (retried)'));
        return;
      }
      case 'toolResult': el.append(toolBlock(null, e)); return;
      case 'bashExecution': {
        hdr(el, e, 'Shell', 'x', [m.exitCode != null ? 'exit ' + m.exitCode : '', m.cancelled ? 'cancelled' : '', m.truncated ? 'truncated' : '', m.excludeFromContext ? 'not sent to the model' : '']);
        const b = body();
        b.append(codeBlock(str(m.command), 'sh', 'cmd'));
        const out = str(m.output).replace(ANSI, '');
        if (out) b.append(clamp(codeBlock(out, '', 'out'), lineCount(out)));
        return;
      }
      case 'system': {
        const added = arr(m.toolsAdded).map(t => t && t.name);
        const d = el.appendChild(h('details', 'sysrec'));
        d.appendChild(h('summary')).append(added.length && !arr(m.toolsRemoved).length && m.sections && m.sections.preamble ? 'System prompt recorded · ' + plural(added.length, 'tool')
          : 'Tools changed: ' + added.map(n => '+' + n).concat(arr(m.toolsRemoved).map(n => '−' + n)).join(' '));
        const s = m.sections || {};
        const prompt = ['preamble', 'tools', 'rules', 'docs', 'cwd'].map(k => str(s[k])).filter(Boolean).join('\n\n') || str(m.content);
        if (prompt) d.append(h('pre', 'out', prompt));
        return;
      }
      default: {
        hdr(el, e, String(m.role || 'message'), 'x');
        md(textOf(m.content) || str(m.summary), body());
        return;
      }
    }
  }
  switch (e.type) {
    case 'compaction': {
      hdr(el, e, 'Compaction', 'k', [fmtN(num(e.tokensBefore)) + ' tokens summarized', e.fromHook ? 'by an extension' : '']);
      const b = el.appendChild(h('div', 'body'));
      if (e.firstKeptEntryId) { const k = b.appendChild(h('div', 'dim', 'Kept from ')); idLink(e.firstKeptEntryId, k); }
      b.append(clamp(md(str(e.summary), h('div')), lineCount(str(e.summary))));
      return;
    }
    case 'branch_summary': {
      hdr(el, e, 'Branch summary', 'k');
      const b = el.appendChild(h('div', 'body'));
      if (e.fromId) { const k = b.appendChild(h('div', 'dim', 'The conversation came back from ')); idLink(e.fromId, k); }
      md(str(e.summary), b);
      return;
    }
    case 'custom_message': {
      hdr(el, e, '[' + str(e.customType) + ']', 'x', [e.display === false ? 'hidden' : '']);
      const b = el.appendChild(h('div', 'body'));
      for (const x of blocks(e.content)) if (x.type === 'text') md(x.text, b); else if (x.type === 'image') b.append(image(x));
      return;
    }
    case 'model_change': meta(el, 'Model → ', h('b', null, e.provider + '/' + e.modelId)); return;
    case 'thinking_level_change': meta(el, 'Thinking level → ', h('b', null, str(e.thinkingLevel))); return;
    case 'session_info': meta(el, 'Session named ', h('b', null, str(e.name))); return;
    case 'label': meta(el, 'Label ', h('b', null, e.label == null ? '(removed)' : str(e.label)), ' on ', d => idLink(e.targetId, d)); return;
    case 'context_edit': meta(el, 'Context edit: ', d => idLink(e.targetId, d), e.replacement === null ? ' left out of the context' : ' replaced'); return;
    default: {
      meta(el, '[' + e.type + (e.customType ? ': ' + e.customType : '') + ']');
      const j = JSON.stringify(e.data !== undefined ? e.data : e, null, 2);
      const d = el.appendChild(h('details', 'raw'));
      d.append(h('summary', null, 'data'), h('pre', 'out', j));
    }
  }
}
function renderChunk(c) {
  if (!c || c.done) return;
  c.done = true;
  if (io) io.unobserve(c.el);
  for (const e of c.list) {
    const it = c.el.appendChild(h('div', 'item ' + kindOf(e)));
    it.id = 'entry-' + e.id;
    it.dataset.entry = e.id;
    it._e = e;
    try { build(it, e); } catch (err) { it.append(h('pre', 'errbox', 'Cannot show this entry: ' + err)); }
  }
}
const renderAll = () => { for (const c of chunks) renderChunk(c); for (const g of groups) buildGroup(g); };
function showPath(leaf, target) {
  curPath = leaf ? pathTo(leaf) : [];
  owner = new Map();
  resultsOf = new Map();
  const pending = new Map();
  for (const e of curPath) {
    const m = msgOf(e);
    if (!m) continue;
    if (m.role === 'assistant') {
      for (const b of blocks(m.content)) if (b.type === 'toolCall') pending.set(b.id, e);
    } else if (m.role === 'toolResult' && pending.has(m.toolCallId)) {
      const a = pending.get(m.toolCallId);
      pending.delete(m.toolCallId);
      owner.set(e.id, a.id);
      if (!resultsOf.has(a.id)) resultsOf.set(a.id, new Map());
      resultsOf.get(a.id).set(m.toolCallId, e);
    }
  }
  if (io) io.disconnect();
  io = 'IntersectionObserver' in window ? new IntersectionObserver(list => { for (const o of list) if (o.isIntersecting) renderChunk(o.target._c); }, { root: main, rootMargin: '1500px 0px' }) : null;
  msgs.textContent = '';
  chunks = [];
  chunkOf = new Map();
  // Chunks of 20 entries, sized by an estimate until rendered (content-visibility keeps the
  // rendered ones cheap when far away).
  let c = null;
  for (const e of curPath) {
    if (owner.has(e.id)) continue;
    if (!c || c.list.length === 20) { c = { el: msgs.appendChild(h('div', 'chunk')), list: [], est: 0, done: false }; c.el._c = c; chunks.push(c); }
    chunkOf.set(e.id, chunks.length - 1);
    c.list.push(e);
    c.est += estimate(e);
  }
  for (const x of chunks) { x.el.style.containIntrinsicSize = 'auto ' + x.est + 'px'; if (io) io.observe(x.el); }
  if (!io) renderAll();
  select(target || leaf, !!target);
  timeline();
}
function select(id, scroll) {
  for (const i of onPath) { const r = rows.get(i); if (r) r.classList.remove('on-path'); }
  onPath = new Set(curPath.map(e => e.id));
  for (const i of onPath) { const r = rows.get(i); if (r) r.classList.add('on-path'); }
  if (selRow) selRow.classList.remove('sel');
  selectedId = id;
  const f = flatOf.get(id);
  if (f) {
    buildGroup(f.g);
    selRow = f.r;
    selRow.classList.add('sel');
    if (!selRow.hidden) selRow.scrollIntoView({ block: 'nearest' });
  }
  for (const t of msgs.querySelectorAll('.target')) t.classList.remove('target');
  const k = chunkOf.get(owner.get(id) || id);
  if (k === undefined || !scroll) { main.scrollTop = 0; renderChunk(chunks[0]); }
  if (k === undefined) return;
  renderChunk(chunks[k - 1]);
  renderChunk(chunks[k]);
  renderChunk(chunks[k + 1]);
  const el = document.getElementById('entry-' + id) || document.getElementById('entry-' + (owner.get(id) || id));
  if (!el) return;
  el.classList.add('target');
  if (scroll) el.scrollIntoView({ block: 'start' });
}
// The tree: the branch ending at the clicked entry.
function pick(id) {
  if (!byId.has(id)) return;
  showPath(id, id);
  try { history.replaceState(null, '', '#entry-' + id); } catch (err) { /* file: URLs may refuse */ }
}
// A deep link: the branch through the entry, to the active leaf when it is on it, else to the
// newest leaf below it; scrolled to the entry.
function open(id) {
  if (!byId.has(id)) return false;
  if (chunkOf.has(owner.get(id) || id)) select(id, true);
  else showPath(leafPath.has(id) ? leafId : leafBelow(id), id);
  return true;
}
const fromHash = () => {
  const m = /^#entry-(.+)$/.exec(location.hash);
  try { return m ? decodeURIComponent(m[1]) : null; } catch (err) { return m[1]; }
};
window.addEventListener('hashchange', () => { const id = fromHash(); if (id && id !== selectedId) open(id); });

// ---- the header: figures, system prompt, tools, timeline ------------------------------------
function buildHeader() {
  const head = $('head');
  const title = D.name || (header.id ? 'Session ' + header.id : 'Session');
  head.append(h('h1', null, title));
  const sub = head.appendChild(h('div', 'dim sub'));
  sub.append([header.id && 'id ' + header.id, header.cwd && str(header.cwd), header.parentSession && 'forked from ' + header.parentSession].filter(Boolean).join(' · '));
  const dl = head.appendChild(h('dl', 'figs'));
  for (const [k, v] of figures()) dl.append(h('dt', null, k), h('dd', null, v));
  const [fp, ft] = fallbackTools();
  const prompt = typeof D.systemPrompt === 'string' && D.systemPrompt ? D.systemPrompt : fp;
  const tools = (arr(D.tools).length ? D.tools : ft).filter(t => t && typeof t === 'object');
  if (prompt) {
    const s = head.appendChild(h('section', 'sys'));
    s.append(h('h2', null, 'System prompt'), clamp(h('pre', 'out', prompt), lineCount(prompt)));
  }
  if (tools.length) {
    const s = head.appendChild(h('section', 'tools'));
    s.append(h('h2', null, 'Tools (' + tools.length + ')'));
    for (const t of tools) {
      const d = s.appendChild(h('details', 'tdef'));
      const sm = d.appendChild(h('summary'));
      sm.append(h('b', null, str(t.name)), ' ', h('span', 'dim', oneLine(str(t.description)).slice(0, 160)));
      d.append(h('p', null, str(t.description)));
      const p = t.parameters || {};
      const req = new Set(Array.isArray(p.required) ? p.required : []);
      const ul = d.appendChild(h('ul', 'params'));
      for (const [k, v] of Object.entries(p.properties || {})) {
        const li = ul.appendChild(h('li'));
        li.append(h('code', null, k), ' ', h('span', 'ty', schemaType(v) + (req.has(k) ? '' : ', optional')));
        if (v && v.description) li.append(' — ' + str(v.description));
      }
      if (!ul.children.length) ul.append(h('li', 'dim', 'no parameters'));
    }
  }
  const tl = head.appendChild(h('details', 'timeline'));
  tl.id = 'timeline';
  tl.append(h('summary'), h('div', 'tlb'));
  tl.open = turns(pathTo(leafId)).length <= 20;
  tl.addEventListener('toggle', timeline);
}
function turns(path) {
  const out = [];
  let prompt = null;
  for (const e of path) {
    const m = msgOf(e);
    if (!m) continue;
    if (m.role === 'user') prompt = e;
    if (m.role !== 'assistant') continue;
    const rs = resultsOf.get(e.id);
    const tools = [];
    for (const b of blocks(m.content)) {
      if (b.type !== 'toolCall') continue;
      const r = rs && rs.get(b.id);
      tools.push({ name: String(b.name), ms: r ? num(r.message.durationMs) : 0, err: !!(r && r.message.isError), id: r ? r.id : e.id });
    }
    out.push({ e, prompt, model: num(m.durationMs), tools });
    prompt = null;
  }
  return out;
}
function timeline() {
  const tl = $('timeline');
  if (!tl) return;
  const list = turns(curPath);
  const model = list.reduce((s, t) => s + t.model, 0);
  const tool = list.reduce((s, t) => t.tools.reduce((x, y) => x + y.ms, s), 0);
  tl.firstChild.textContent = 'Timeline · ' + plural(list.length, 'turn') + ' · model ' + fmtMs(model) + ' · tools ' + fmtMs(tool);
  const body = tl.lastChild;
  body.textContent = '';
  if (!tl.open) return;
  const max = Math.max(1, ...list.map(t => t.tools.reduce((s, x) => s + x.ms, t.model)));
  const frag = document.createDocumentFragment();
  list.forEach((t, k) => {
    if (t.prompt) {
      const p = frag.appendChild(h('div', 'tlp', '› ' + oneLine(textOf(t.prompt.message.content)).slice(0, 120)));
      p.onclick = () => open(t.prompt.id);
    }
    const row = frag.appendChild(h('div', 'tlr'));
    row.append(h('span', 'tln', '#' + (k + 1)));
    const bar = row.appendChild(h('span', 'tlbar'));
    const seg = (cls, ms, tip, id) => {
      const s = bar.appendChild(h('span', cls));
      s.style.width = Math.max(0.3, ms / max * 100) + '%';
      s.title = tip + ': ' + fmtMs(ms);
      s.onclick = ev => { ev.stopPropagation(); open(id); };
    };
    seg('seg m', t.model, 'model', t.e.id);
    for (const x of t.tools) seg('seg t' + (x.err ? ' bad' : ''), x.ms, x.name, x.id);
    row.append(h('span', 'tlt', fmtMs(t.tools.reduce((s, x) => s + x.ms, t.model)) + (t.tools.length ? ' · ' + t.tools.map(x => x.name).join(', ') : '')));
    row.onclick = () => open(t.e.id);
  });
  body.append(frag);
}

// ---- toggles, filters, keys, download --------------------------------------------------------
const TOGGLES = { thinking: ['hide-thinking', false], tools: ['hide-tools', false], hidden: ['show-hidden', true] };
function toggle(kind) {
  if (!TOGGLES[kind]) return;
  const [cls, on] = TOGGLES[kind];
  const now = document.body.classList.toggle(cls);
  const b = document.querySelector('[data-toggle="' + kind + '"]');
  if (b) b.setAttribute('aria-pressed', String(now === on));
}
const jsonl = () => [header, ...rawEntries].map(x => JSON.stringify(x)).join('\n') + '\n';
function download() {
  const url = URL.createObjectURL(new Blob([jsonl()], { type: 'application/x-ndjson' }));
  const a = h('a');
  a.href = url;
  a.download = String(header.id || 'session').replace(/[^\w.-]/g, '_') + '.jsonl';
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 30000);
}
function setFilter(name) { mode = name; applyFilter(); }
let searchTimer = 0;
const search = q => { query = q; applyFilter(); };
function wire() {
  for (const b of document.querySelectorAll('#filters button')) b.onclick = () => setFilter(b.dataset.filter);
  for (const b of document.querySelectorAll('[data-toggle]')) { b.onclick = () => toggle(b.dataset.toggle); b.setAttribute('aria-pressed', String(b.dataset.toggle !== 'hidden')); }
  $('download').onclick = download;
  const q = $('q');
  q.addEventListener('input', () => {
    clearTimeout(searchTimer);
    if (flat.length <= 3000) search(q.value); else searchTimer = setTimeout(() => search(q.value), 150);
  });
  treeEl.addEventListener('click', ev => { const r = ev.target.closest('.node'); if (r) pick(r.dataset.entry); });
  msgs.addEventListener('click', ev => { const p = ev.target.closest('img.pic'); if (p) p.classList.toggle('zoom'); });
  document.addEventListener('keydown', ev => {
    const t = ev.target;
    if (ev.key === 'Escape' && t === q) { q.value = ''; search(''); return; }
    if (ev.ctrlKey || ev.metaKey || ev.altKey || t && (t.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(t.tagName))) return;
    const kind = { t: 'thinking', o: 'tools', h: 'hidden' }[String(ev.key).toLowerCase()];
    if (kind) { ev.preventDefault(); toggle(kind); }
  });
}

buildHeader();
const tHead = performance.now();
buildTree();
applyFilter();
const tTree = performance.now();
wire();
const initial = fromHash();
if (!(initial && open(initial))) showPath(leafId, null);
const tEnd = performance.now();
window.pithViewer = {
  jsonl, download, renderAll, setFilter, search, toggle, open, select: pick,
  selected: () => selectedId,
  path: () => curPath.map(e => e.id),
  filter: () => mode,
  leafId, selectedAtLoad: selectedId, violations,
  timing: { parse: Math.round(tParse - t0), header: Math.round(tHead - tParse), tree: Math.round(tTree - tHead), main: Math.round(tEnd - tTree), total: Math.round(tEnd - t0) },
};
})();
