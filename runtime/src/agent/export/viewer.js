/* pith session viewer: the script of the one-file page `export_html` and `pith export` write.
 *
 * It reads the session embedded in <script type="application/json" id="pith-session"> and builds
 * the page with DOM APIs: the tree of every entry (branches, labels, search, filters), the branch
 * ending at the selected entry (markdown, highlighted code, thinking, tool calls with `edit` as a
 * diff, images), the header figures, system prompt and tools, a per-turn timeline, deep links
 * (#entry-<id>) and a JSONL download. Plain ES2020, no dependencies, no network.
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
 *
 * Safety rules (keep them when editing):
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
const t0 = performance.now();
const violations = [];
document.addEventListener('securitypolicyviolation', e => violations.push(e.violatedDirective + ' ' + e.blockedURI));
const $ = id => document.getElementById(id);
const h = (tag, cls, text) => {
  const n = document.createElement(tag);
  if (cls) n.className = cls;
  if (text != null) n.textContent = String(text);
  return n;
};
let D;
try { D = JSON.parse($('pith-session').textContent); } catch (err) { D = null; }
if (!D || typeof D !== 'object') { document.body.append(h('p', 'fatal', 'The session data in this page cannot be read.')); return; }
const header = D.header && typeof D.header === 'object' ? D.header : {};
const rawEntries = Array.isArray(D.entries) ? D.entries : [];
const entries = rawEntries.filter(e => e && typeof e === 'object' && typeof e.id === 'string');
const tParse = performance.now();

// ---- small helpers -------------------------------------------------------------------------
const blocks = c => typeof c === 'string' ? [{ type: 'text', text: c }] : Array.isArray(c) ? c.filter(b => b && typeof b === 'object') : [];
const textOf = c => blocks(c).filter(b => b.type === 'text' && typeof b.text === 'string').map(b => b.text).join('\n');
const str = v => typeof v === 'string' ? v : v == null ? '' : JSON.stringify(v, null, 2);
const num = v => (typeof v === 'number' && isFinite(v) ? v : 0);
const fmtN = n => n >= 1e6 ? (n / 1e6).toFixed(1) + 'M' : n >= 1e4 ? Math.round(n / 1e3) + 'k' : n >= 1e3 ? (n / 1e3).toFixed(1) + 'k' : String(n);
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

// ---- the tree --------------------------------------------------------------------------------
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

// ---- markdown --------------------------------------------------------------------------------
const safeHref = u => /^(https?:\/\/|mailto:|#)/i.test(u) ? u : null;
const B64 = /^[A-Za-z0-9+/=\s]*$/;
function link(href, parent) {
  const a = h('a');
  a.href = href;
  if (href[0] !== '#') { a.target = '_blank'; a.rel = 'noopener noreferrer nofollow'; }
  parent.append(a);
  return a;
}
// 1 escape · 2,3 code · 4 ! 5 text 6 url · 7 <autolink> · 8 bare url · 9,10 strong · 11,12 em · 13 del · 14 break
const INLINE = /\\([!-/:-@[-`{-~])|(`+)([^`]|[^`][\s\S]*?[^`])\2(?!`)|(!?)\[((?:\[[^\]]*\]|[^[\]])*)\]\(\s*<?([^\s<>()]*(?:\([^\s()]*\)[^\s<>()]*)*)>?(?:\s+(?:"[^"]*"|'[^']*'))?\s*\)|<((?:https?:\/\/|mailto:)[^\s<>]+)>|((?:https?:\/\/|www\.)[^\s<>]*[^\s<>.,:;!?"'*_)\]])|(?<![\w\\])(\*\*|__)(?=\S)([\s\S]*?\S)\9(?!\w)|(?<![\w*\\])(\*|_)(?=[^\s*_])([\s\S]*?[^\s\\*_])\11(?![\w*])|~~(?=\S)([\s\S]*?\S)~~|((?: {2,}|\\)?\n)/g;
function inline(text, parent) {
  const re = new RegExp(INLINE.source, 'g');
  let last = 0;
  let m;
  while ((m = re.exec(text))) {
    if (m.index > last) parent.append(text.slice(last, m.index));
    last = re.lastIndex;
    if (m[1]) parent.append(m[1]);
    else if (m[2]) parent.append(h('code', null, m[3].replace(/^ (.*) $/, '$1')));
    else if (m[6] !== undefined) {
      const url = m[6];
      if (m[4]) {
        if (/^data:image\/[\w.+-]+;base64,/i.test(url) && B64.test(url.slice(url.indexOf(',') + 1))) {
          const img = h('img', 'pic');
          img.alt = m[5];
          img.src = url;
          parent.append(img);
        } else if (safeHref(url)) link(url, parent).textContent = '[image: ' + (m[5] || url) + ']';
        else parent.append(m[0]);
      } else if (safeHref(url)) inline(m[5], link(url, parent));
      else parent.append(m[0]);
    } else if (m[7]) link(m[7], parent).textContent = m[7];
    else if (m[8]) link(m[8].startsWith('www.') ? 'https://' + m[8] : m[8], parent).textContent = m[8];
    else if (m[9]) inline(m[10], parent.appendChild(h('strong')));
    else if (m[11]) inline(m[12], parent.appendChild(h('em')));
    else if (m[13]) inline(m[13], parent.appendChild(h('del')));
    else if (m[14]) parent.append(h('br'));
    else parent.append(m[0]);
  }
  if (last < text.length) parent.append(text.slice(last));
  return parent;
}
const LIST = /^( *)([-*+]|\d{1,9}[.)])(?: +|$)(.*)$/;
const FENCE = /^ {0,3}(`{3,}|~{3,})\s*([^`\s]*)[^`]*$/;
const TABLE_SEP = /^ {0,3}\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*$/;
function md(src, parent) {
  blocksInto(String(src).replace(/\r\n?/g, '\n').split('\n'), parent);
  return parent;
}
function blocksInto(lines, parent) {
  let para = [];
  const flush = () => { if (para.length) parent.append(inline(para.join('\n'), h('p'))); para = []; };
  for (let i = 0; i < lines.length; ) {
    const L = lines[i];
    let m;
    if (!L.trim()) { flush(); i++; } else if ((m = FENCE.exec(L))) {
      flush();
      const body = [];
      const close = new RegExp('^ {0,3}' + (m[1][0] === '`' ? '`' : '~') + '{' + m[1].length + ',}\\s*$');
      for (i++; i < lines.length && !close.test(lines[i]); i++) body.push(lines[i]);
      i++;
      parent.append(codeBlock(body.join('\n'), m[2]));
    } else if ((m = /^ {0,3}(#{1,6})\s+(.*?)(?:\s+#+)?\s*$/.exec(L))) {
      flush();
      parent.append(inline(m[2], h('h' + m[1].length)));
      i++;
    } else if (/^ {0,3}([-*_])(\s*\1){2,}\s*$/.test(L)) { flush(); parent.append(h('hr')); i++; } else if (/^ {0,3}>/.test(L)) {
      flush();
      const q = [];
      while (i < lines.length && /^ {0,3}>/.test(lines[i])) q.push(lines[i++].replace(/^ {0,3}> ?/, ''));
      blocksInto(q, parent.appendChild(h('blockquote')));
    } else if (LIST.test(L) && (!para.length || /^\s*([-*+]|1[.)])\s/.test(L))) { flush(); i = list(lines, i, parent); } else if (L.includes('|') && i + 1 < lines.length && TABLE_SEP.test(lines[i + 1]) && lines[i + 1].includes('-')) {
      flush();
      i = table(lines, i, parent);
    } else { para.push(L); i++; }
  }
  flush();
}
function list(lines, i, parent) {
  const first = LIST.exec(lines[i]);
  const indent = first[1].length;
  const ordered = /\d/.test(first[2]);
  const el = h(ordered ? 'ol' : 'ul');
  if (ordered && parseInt(first[2], 10) !== 1) el.start = parseInt(first[2], 10);
  let buf = null;
  let loose = false;
  const items = [];
  let width = 0;
  for (; i < lines.length; i++) {
    const L = lines[i];
    const m = LIST.exec(L);
    if (m && m[1].length === indent && /\d/.test(m[2]) === ordered) { items.push(buf = [m[3]]); width = m[0].length - m[3].length; continue; }
    if (!L.trim()) {
      let j = i + 1;
      while (j < lines.length && !lines[j].trim()) j++;
      const n = lines[j];
      if (n !== undefined && (n.length - n.trimStart().length > indent || (LIST.exec(n) || [])[1] === first[1])) { buf.push(''); loose = true; continue; }
      break;
    }
    const ind = L.length - L.trimStart().length;
    if (ind > indent) buf.push(L.slice(Math.min(ind, width)));
    else if (!m && buf[buf.length - 1].trim() && !/^ {0,3}(#|>|`{3}|~{3})/.test(L)) buf.push(L.trim());
    else break;
  }
  for (const b of items) {
    const li = el.appendChild(h('li'));
    const task = /^\[([ xX])\]\s+/.exec(b[0]);
    if (task) { b[0] = b[0].slice(task[0].length); li.append(h('span', 'task', task[1] === ' ' ? '☐ ' : '☑ ')); }
    blocksInto(b, li);
    if (!loose) for (const p of [...li.children]) if (p.tagName === 'P') p.replaceWith(...p.childNodes);
  }
  parent.append(el);
  return i;
}
function table(lines, i, parent) {
  const cells = r => r.trim().replace(/^\|/, '').replace(/\|$/, '').split(/(?<!\\)\|/).map(c => c.trim().replace(/\\\|/g, '|'));
  const align = cells(lines[i + 1]).map(c => /^:-+:$/.test(c) ? 'center' : /-:$/.test(c) ? 'right' : '');
  const t = h('table');
  const row = (cs, tag) => {
    const tr = h('tr');
    cs.forEach((c, k) => { const td = inline(c, h(tag)); if (align[k]) td.style.textAlign = align[k]; tr.append(td); });
    return tr;
  };
  t.appendChild(h('thead')).append(row(cells(lines[i]), 'th'));
  const tb = t.appendChild(h('tbody'));
  for (i += 2; i < lines.length && lines[i].includes('|') && lines[i].trim(); i++) tb.append(row(cells(lines[i]), 'td'));
  parent.appendChild(h('div', 'tw')).append(t);
  return i;
}

// ---- code highlighting: comments, strings, numbers, keywords ------------------------------
const KW = {
  js: 'async await break case catch class const continue debugger default delete do else export extends finally for from function if import in instanceof let new of return static super switch this throw try typeof var void while yield true false null undefined interface type enum implements private public protected readonly as',
  py: 'and as assert async await break class continue def del elif else except finally for from global if import in is lambda nonlocal not or pass raise return try while with yield True False None self match case',
  rs: 'as async await break const continue crate dyn else enum extern false fn for if impl in let loop match mod move mut pub ref return self Self static struct super trait true type unsafe use where while Some None Ok Err',
  go: 'break case chan const continue default defer else fallthrough for func go goto if import interface map package range return select struct switch type var nil true false',
  c: 'bool break case catch char class const continue default delete do double else enum extern false final float for if import int interface long namespace new null nullptr package private protected public return static string struct super switch template this throw true try typedef unsigned using var val fun void while',
  sh: 'if then else elif fi for while until do done case esac function in return local export cd exit set unset source alias echo',
  sql: 'select from where insert into values update set delete create table drop alter add index join left right inner outer on group by order having limit offset as and or not null is in like distinct union all primary key foreign references default',
};
const LANG = { js: 'js', javascript: 'js', ts: 'js', typescript: 'js', jsx: 'js', tsx: 'js', mjs: 'js', cjs: 'js', json: 'js', jsonc: 'js',
  py: 'py', python: 'py', rb: 'py', ruby: 'py', rs: 'rs', rust: 'rs', go: 'go', golang: 'go', c: 'c', h: 'c', cpp: 'c', 'c++': 'c', cc: 'c', hpp: 'c',
  java: 'c', kt: 'c', kotlin: 'c', cs: 'c', csharp: 'c', swift: 'c', scala: 'c', php: 'c', dart: 'c', sh: 'sh', bash: 'sh', shell: 'sh', zsh: 'sh',
  console: 'sh', fish: 'sh', toml: 'sh', yaml: 'sh', yml: 'sh', ini: 'sh', dockerfile: 'sh', makefile: 'sh', sql: 'sql' };
const RX = {};
function rx(l) {
  const comment = { py: '#.*', sh: '#.*', sql: '--.*' }[l] || '\\/\\/.*|\\/\\*[\\s\\S]*?\\*\\/';
  const strs = ['"(?:\\\\.|[^"\\\\\\n])*"', l === 'rs' ? "'(?:\\\\.|[^'\\\\\\n])'" : "'(?:\\\\.|[^'\\\\\\n])*'"];
  if (l === 'py') strs.unshift('"""[\\s\\S]*?"""', "'''[\\s\\S]*?'''");
  if (l === 'js' || l === 'go') strs.push('`(?:\\\\.|[^`\\\\])*`');
  return new RegExp('(' + comment + ')|(' + strs.join('|') + ')|(\\b(?:0x[\\da-fA-F]+|\\d[\\d_]*(?:\\.\\d+)?(?:[eE][+-]?\\d+)?)\\b)|\\b(' + KW[l].replace(/ /g, '|') + ')\\b', l === 'sql' ? 'gi' : 'g');
}
function hl(code, lang, el) {
  lang = String(lang || '').toLowerCase();
  if (code.length > 200000) { el.textContent = code; return el; }
  if (lang === 'diff' || lang === 'patch') {
    for (const line of code.split('\n')) el.append(h('span', /^[+](?!\+\+)/.test(line) ? 'd-add' : /^-(?!--)/.test(line) ? 'd-del' : /^@@/.test(line) ? 'hl-k' : null, line + '\n'));
    return el;
  }
  const l = LANG[lang];
  if (!l) { el.textContent = code; return el; }
  const re = RX[l] || (RX[l] = rx(l));
  re.lastIndex = 0;
  let last = 0;
  let m;
  while ((m = re.exec(code))) {
    if (m.index > last) el.append(code.slice(last, m.index));
    el.append(h('span', m[1] ? 'hl-c' : m[2] ? 'hl-s' : m[3] ? 'hl-n' : 'hl-k', m[0]));
    last = re.lastIndex;
  }
  el.append(code.slice(last));
  return el;
}
const SHOW_MAX = 30000;
function codeBlock(code, lang, cls) {
  const pre = h('pre', cls || null);
  const c = pre.appendChild(h('code'));
  if (lang) c.dataset.lang = lang;
  if (code.length > SHOW_MAX) {
    hl(code.slice(0, SHOW_MAX), lang, c);
    const more = h('button', 'more', 'Show all (' + fmtN(code.length) + ' characters)');
    more.onclick = () => { c.textContent = ''; hl(code, lang, c); more.remove(); };
    pre.append(more);
  } else hl(code, lang, c);
  return pre;
}
// A block taller than a few lines gets a "show all" button.
function clamp(el, lines) {
  if (lines <= 10) return el;
  const w = h('div', 'clamp');
  const b = h('button', 'more', 'Show all (' + lines + ' lines)');
  b.onclick = () => { const open = w.classList.toggle('open'); b.textContent = open ? 'Show less' : 'Show all (' + lines + ' lines)'; };
  w.append(el, b);
  return w;
}
const lineCount = s => s ? s.split('\n').length : 0;
function image(b) {
  const mime = String(b.mimeType || b.mediaType || '');
  const data = typeof b.data === 'string' ? b.data : '';
  if (!/^image\/[\w.+-]+$/i.test(mime) || !B64.test(data)) return h('span', 'dim', '[image: ' + mime + ']');
  const img = h('img', 'pic');
  img.alt = 'image';
  img.src = 'data:' + mime + ';base64,' + data.replace(/\s+/g, '');
  return img;
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
function figures() {
  const roles = {};
  const models = new Set();
  const calls = {};
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
