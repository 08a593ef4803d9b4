// Test driver for the exported session viewer. The integration tests add it to an exported page
// as a script element carrying the page's nonce, at the end of the body, open the page in headless
// Chromium with --dump-dom and read the JSON report from the pre element with id
// pith-test-report (the last one in the dump).
//
// The synchronous checks are written at once ("complete": false); the deep-link check waits for
// the hashchange event and rewrites the report with "complete": true, so run Chromium with
// --virtual-time-budget (a few seconds) to see it.
(() => {
  const V = window.pithViewer;
  const report = { viewer: !!V, complete: false };
  const out = document.createElement('pre');
  out.id = 'pith-test-report';
  const write = () => { out.textContent = JSON.stringify(report); };
  document.body.append(out);
  const main = document.getElementById('messages');
  const visible = el => (el.checkVisibility ? el.checkVisibility() : el.getClientRects().length > 0);
  const count = sel => main.querySelectorAll(sel).length;
  const shown = sel => [...main.querySelectorAll(sel)].filter(visible).length;
  const key = k => document.dispatchEvent(new KeyboardEvent('keydown', { key: k, bubbles: true }));
  const blocks = () => ({ tools: shown('.tool'), thinking: shown('.thinking'), hidden: shown('.hidden-msg') });
  const treeIds = () => [...document.querySelectorAll('#tree .node')].filter(r => !r.hidden).map(r => r.dataset.entry);
  try {
    if (!V) throw new Error('window.pithViewer is missing');
    report.timing = V.timing;
    report.leafId = V.leafId;
    report.selectedAtLoad = V.selectedAtLoad;
    V.renderAll();
    report.path = V.path();
    // Markdown and code.
    report.counts = {
      strong: count('strong'), em: count('em'), code: count('code'), pre: count('pre'), codeBlocks: count('pre > code'),
      highlighted: count('[class^="hl-"]'), headings: count('h1,h2,h3,h4,h5,h6'), lists: count('ul,ol'),
      tables: count('table'), blockquotes: count('blockquote'), links: count('a[href^="http"], a[href^="mailto:"]'),
      images: count('img'), items: count('.item'), entryIds: main.querySelectorAll('[id^="entry-"]').length,
      compactions: count('.item.mark'),
    };
    // Safety: no script ran from the session, no unsafe link, no remote image, no request.
    report.pwned = typeof window.__pwned !== 'undefined';
    report.unsafeLinks = [...document.querySelectorAll('a[href]')].map(a => a.getAttribute('href')).filter(h => !/^(https?:\/\/|mailto:|#)/i.test(h));
    report.remoteImages = [...document.images].map(i => i.getAttribute('src') || '').filter(s => !/^data:image\//i.test(s));
    report.scriptsInBody = document.querySelectorAll('#messages script, #tree script, #head script').length;
    report.resources = performance.getEntriesByType('resource').map(r => r.name);
    report.cspViolations = V.violations.slice();
    // The tree and its filters.
    report.tree = { all: [...document.querySelectorAll('#tree .node')].map(r => r.dataset.entry), branchPoints: document.querySelectorAll('#tree .fk').length, labels: [...document.querySelectorAll('#tree .lbl')].map(l => l.textContent) };
    report.filters = {};
    for (const name of ['default', 'no-tools', 'user', 'labeled', 'all']) {
      const b = document.querySelector('#filters [data-filter="' + name + '"]');
      if (b) b.click(); else V.setFilter(name);
      report.filters[name] = treeIds();
    }
    document.querySelector('#filters [data-filter="default"]').click();
    // Search: the first word (3+ letters) of the first user message.
    const firstUser = main.querySelector('.item.user .body');
    const word = firstUser && (/[A-Za-z]{3,}/.exec(firstUser.textContent) || [])[0];
    if (word) {
      const q = document.getElementById('q');
      q.value = word;
      q.dispatchEvent(new Event('input', { bubbles: true }));
      report.search = { query: word, ids: treeIds() };
      q.value = '';
      q.dispatchEvent(new Event('input', { bubbles: true }));
    }
    // Toggles by key: T (thinking), O (tool calls), H (hidden messages), then back.
    const t = { before: blocks() };
    key('t'); t.afterT = blocks();
    key('o'); t.afterO = blocks();
    key('h'); t.afterH = blocks();
    key('t'); key('o'); key('h'); t.restored = blocks();
    t.buttons = [...document.querySelectorAll('[data-toggle]')].map(b => b.dataset.toggle + ':' + b.getAttribute('aria-pressed'));
    report.toggles = t;
    // Edit diffs.
    report.diffs = [...main.querySelectorAll('.diff')].map(d => ({ add: d.querySelectorAll('.d-add').length, del: d.querySelectorAll('.d-del').length, ctx: d.querySelectorAll('.d-ctx').length }));
    // Header.
    const figs = {};
    const dts = document.querySelectorAll('#head .figs dt');
    for (const dt of dts) figs[dt.textContent] = dt.nextElementSibling.textContent;
    report.header = { title: (document.querySelector('#head h1') || {}).textContent, figures: figs, systemPrompt: !!document.querySelector('#head .sys'), tools: [...document.querySelectorAll('#head .tdef b')].map(b => b.textContent) };
    // The per-turn timeline: a row per answer, a segment per tool call.
    const tl = document.getElementById('timeline');
    report.timeline = tl ? { rows: tl.querySelectorAll('.tlr').length, toolSegments: tl.querySelectorAll('.seg.t').length, summary: tl.querySelector('summary').textContent } : null;
    // The download.
    report.jsonl = V.jsonl();
    report.downloadButton = !!document.getElementById('download');
    // Clicking a tree entry shows the branch ending at it.
    const rows = [...document.querySelectorAll('#tree .node')];
    const offPath = rows.find(r => !report.path.includes(r.dataset.entry));
    const pickRow = offPath || rows[Math.floor(rows.length / 2)];
    if (pickRow) {
      pickRow.click();
      const p = V.path();
      report.click = { id: pickRow.dataset.entry, selected: V.selected(), pathEnd: p[p.length - 1], pathLength: p.length };
    }
  } catch (err) {
    report.error = String(err && err.stack || err);
  }
  write();
  // Deep link: a branch entry off the active path if there is one, else the first user message.
  try {
    const all = report.tree ? report.tree.all : [];
    const leafPath = new Set(report.path || []);
    const target = all.find(id => !leafPath.has(id)) || (document.querySelector('#messages .item.user') || {}).id?.slice(6) || all[0];
    if (!target) { report.complete = true; write(); return; }
    V.select(V.leafId);
    const done = () => {
      const el = document.getElementById('entry-' + target);
      const box = document.getElementById('main').getBoundingClientRect();
      const r = el && el.getBoundingClientRect();
      report.hash = { target, selected: V.selected(), onPath: V.path().includes(target), element: !!el, inView: !!r && r.top >= box.top - 1 && r.top < box.bottom, marked: !!el && el.classList.contains('target') };
      report.pwned = report.pwned || typeof window.__pwned !== 'undefined';
      report.resources = performance.getEntriesByType('resource').map(x => x.name);
      report.complete = true;
      write();
    };
    let fired = false;
    window.addEventListener('hashchange', () => { if (!fired) { fired = true; setTimeout(done, 0); } }, { once: true });
    setTimeout(() => { if (!fired) { fired = true; done(); } }, 1500);
    location.hash = '#entry-' + target;
  } catch (err) {
    report.error = String(err && err.stack || err);
    write();
  }
})();
