/* pith session viewer, part 1 of 3 (markdown.js, session.js, viewer.js: the Rust side joins them
 * in this order into the page's one script): the markdown renderer and the code highlighter, with
 * code blocks, "show all" clamps and images. No session state: each function draws what it is given.
 * Exposes `pithMarkdown` (with the DOM helper `h` and the number format `fmtN` the other parts use).
 * The safety rules at the top of viewer.js hold here: text only, safe links, data: images only.
 */
const pithMarkdown = (() => {
'use strict';
const h = (tag, cls, text) => {
  const n = document.createElement(tag);
  if (cls) n.className = cls;
  if (text != null) n.textContent = String(text);
  return n;
};
const fmtN = n => n >= 1e6 ? (n / 1e6).toFixed(1) + 'M' : n >= 1e4 ? Math.round(n / 1e3) + 'k' : n >= 1e3 ? (n / 1e3).toFixed(1) + 'k' : String(n);

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
const FENCE = /^ {0,3}(`{3,}|~{3,})\s*([^`\s]*)(?:\s[^`]*)?$/;
// Paragraphs longer than this are shown as plain text: the inline patterns are not linear on
// every input, and a page must open whatever the session holds.
const MAX_INLINE = 20000;
const TABLE_SEP = /^ {0,3}\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*$/;
function md(src, parent) {
  blocksInto(String(src).replace(/\r\n?/g, '\n').split('\n'), parent);
  return parent;
}
function blocksInto(lines, parent) {
  let para = [];
  const flush = () => {
    if (!para.length) return;
    const text = para.join('\n');
    parent.append(text.length > MAX_INLINE ? h('p', 'plain', text) : inline(text, h('p')));
    para = [];
  };
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
  const l = Object.hasOwn(LANG, lang) ? LANG[lang] : null;
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

return { h, fmtN, link, md, codeBlock, clamp, lineCount, image };
})();
