// memd's web UI: review what agents learned, see where each fact came
// from, and undo what is wrong. Plain DOM, no build step; every call goes
// to the same JSON API agents use, signed in with the session cookie.
'use strict';

const view = document.getElementById('view');

// h builds an element: h('a', {href: '#/'}, 'text', child, ...). Text is
// always set as text, never parsed as HTML.
function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
    else if (k === 'dataset') Object.assign(el.dataset, v);
    else el.setAttribute(k, v === true ? '' : v);
  }
  for (const c of children.flat(Infinity)) {
    if (c === undefined || c === null || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

class APIError extends Error {
  constructor(code, message, rule) { super(message); this.code = code; this.rule = rule; }
}

async function api(method, path, body) {
  const opts = { method, headers: {}, credentials: 'same-origin' };
  if (body !== undefined) {
    opts.headers['Content-Type'] = 'application/json';
    opts.body = JSON.stringify(body);
  }
  const resp = await fetch(path, opts);
  if (resp.status === 401) {
    location.href = '/login';
    throw new APIError('unauthorized', 'signed out');
  }
  const data = resp.headers.get('Content-Type')?.includes('json') ? await resp.json() : null;
  if (!resp.ok) {
    const e = (data && data.error) || {};
    throw new APIError(e.code || 'internal', e.message || resp.statusText, e.rule);
  }
  return data;
}

const enc = encodeURIComponent;
const shardPath = (s) => '/v1/shards/' + s.split('/').map(enc).join('/');
const notePath = (s, p) => shardPath(s) + '/notes/' + p.split('/').map(enc).join('/');
const short = (hash) => (hash || '').slice(0, 12);
const when = (t) => t ? new Date(t).toLocaleString([], { dateStyle: 'medium', timeStyle: 'short' }) : '';

function toast(msg) {
  const t = document.getElementById('toast');
  t.textContent = msg;
  t.hidden = false;
  clearTimeout(toast.timer);
  toast.timer = setTimeout(() => { t.hidden = true; }, 4000);
}

function errorBox(err) {
  const rule = err.rule ? ` (rule ${err.rule})` : '';
  return h('p', { class: 'error', role: 'alert' }, `${err.code || 'error'}${rule}: ${err.message}`);
}

// confirmDialog shows what an action will change and resolves true if the
// person confirms.
function confirmDialog(title, body, okLabel) {
  const dlg = document.getElementById('confirm');
  document.getElementById('confirm-title').textContent = title;
  document.getElementById('confirm-body').replaceChildren(...[body].flat());
  document.getElementById('confirm-ok').textContent = okLabel || 'Confirm';
  dlg.returnValue = '';
  dlg.showModal();
  return new Promise((resolve) => {
    dlg.addEventListener('close', () => resolve(dlg.returnValue === 'ok'), { once: true });
  });
}

function changeLine(ch) {
  const f = ch.fact;
  return h('div', { class: 'change ' + (ch.op === '+' ? 'add' : 'del') },
    `${ch.op} ${f.date || ''} ${f.text}`, h('span', { class: 'muted' }, `  ${f.id || ''}`));
}

function trailers(c) {
  const p = c.provenance || {};
  const rows = [
    ['Memory-Op', p.op], ['Fact-Id', (p.fact_ids || []).join(', ')], ['Tier', p.tier],
    ['Source-Message', (p.source_messages || []).join(', ')], ['Source-Chat', p.source_chat],
    ['Chat-Kind', p.chat_kind], ['Learned-By', p.learned_by || 'person (a git commit)'], ['Model', p.model],
    ['Reverts', p.reverts],
  ].filter(([, v]) => v);
  return h('dl', { class: 'trailers' }, rows.map(([k, v]) => [h('dt', {}, k), h('dd', {}, v)]));
}

// ---- the live feed ----

const feed = { ws: null, listeners: new Set(), events: [], last: {}, retry: 1000 };

function connectFeed() {
  const since = Object.entries(feed.last).map(([s, c]) => 'since=' + enc(s + ':' + c)).join('&');
  const url = (location.protocol === 'https:' ? 'wss://' : 'ws://') + location.host + '/v1/feed' + (since ? '?' + since : '');
  const ws = new WebSocket(url);
  const state = document.getElementById('feed-state');
  feed.ws = ws;
  ws.onopen = () => { state.textContent = '● live'; state.classList.add('on'); feed.retry = 1000; };
  ws.onmessage = (m) => {
    const ev = JSON.parse(m.data);
    if (ev.type === 'commit') feed.last[ev.shard] = ev.commit;
    feed.events.unshift(ev);
    feed.events.length = Math.min(feed.events.length, 200);
    for (const fn of feed.listeners) fn(ev);
  };
  ws.onclose = () => {
    state.textContent = '○ reconnecting';
    state.classList.remove('on');
    setTimeout(connectFeed, feed.retry);
    feed.retry = Math.min(feed.retry * 2, 15000);
  };
}

// listen registers a feed listener for the current page only.
function listen(fn) {
  feed.listeners.add(fn);
  pageCleanups.push(() => feed.listeners.delete(fn));
}

// ---- routing ----

let pageCleanups = [];

async function route() {
  for (const f of pageCleanups) f();
  pageCleanups = [];
  const [path, query] = location.hash.slice(1).split('?');
  const parts = path.split('/').filter(Boolean).map(decodeURIComponent);
  const params = new URLSearchParams(query || '');
  view.replaceChildren(h('p', { class: 'muted' }, 'Loading…'));
  try {
    switch (parts[0]) {
      case undefined: return await shardsPage();
      case 'shard': return await shardPage(parts[1] + '/' + parts[2], parts[3] || 'facts', params);
      case 'fact': return await factPage(parts[1] + '/' + parts[2], parts[3]);
      case 'note': return await notePage(parts[1] + '/' + parts[2], parts.slice(3).join('/'));
      case 'live': return livePage();
      case 'learner': return await learnerPage();
      case 'remotes': return await remotesPage();
      default: view.replaceChildren(h('p', {}, 'No such page. ', h('a', { href: '#/' }, 'Back to the shards')));
    }
  } catch (err) {
    view.replaceChildren(errorBox(err));
  }
}

// ---- pages ----

async function shardsPage() {
  const [{ shards }, st] = await Promise.all([api('GET', '/v1/shards'), api('GET', '/v1/status')]);
  const learning = st.learning.enabled
    ? `on (${st.learning.model}), ${st.learning.pending} pending, ${st.learning.failed} failed`
    : `off${st.learning.reason ? ': ' + st.learning.reason : ''}`;
  view.replaceChildren(
    h('h1', {}, 'Shards'),
    h('p', { class: 'muted' }, `${st.facts} facts in ${st.shards} shards, ${st.agents} agents · learning ${learning} · memd ${st.version}`),
    shards.length === 0
      ? h('p', {}, 'No shards yet. Add an agent with ', h('code', {}, 'memd agent add alice'), '.')
      : h('table', { id: 'shards' },
        h('thead', {}, h('tr', {}, h('th', {}, 'Shard'), h('th', {}, 'Facts'), h('th', {}, 'Last change'), h('th', { class: 'hide-narrow' }, 'HEAD'))),
        h('tbody', {}, shards.map((s) => h('tr', { dataset: { shard: s.shard } },
          h('td', {}, h('a', { href: '#/shard/' + s.shard }, s.shard)),
          h('td', {}, String(s.facts)),
          h('td', {}, when(s.last_change)),
          h('td', { class: 'mono hide-narrow' }, short(s.head)))))),
  );
  listen((ev) => { if (ev.type === 'commit') route(); });
}

function tabs(shard, active) {
  return h('div', { class: 'tabs' }, ['facts', 'history', 'notes'].map((t) =>
    h('a', { href: `#/shard/${shard}/${t}`, class: t === active ? 'active' : null }, t[0].toUpperCase() + t.slice(1))));
}

async function shardPage(shard, tab, params) {
  const head = [h('h1', {}, shard), tabs(shard, tab)];
  if (tab === 'history') return historyTab(shard, head, params);
  if (tab === 'notes') return notesTab(shard, head);
  return factsTab(shard, head);
}

function factRow(shard, f) {
  return h('tr', { dataset: { id: f.id } },
    h('td', {}, f.date), h('td', {}, h('span', { class: 'tag' }, f.tier)),
    h('td', {}, h('a', { href: `#/fact/${shard}/${f.id}` }, f.text)),
    h('td', { class: 'mono hide-narrow' }, f.id));
}

async function factsTab(shard, head) {
  const list = await api('GET', shardPath(shard) + '/facts');
  let facts = list.facts;
  const search = h('input', { id: 'fact-search', type: 'search', placeholder: 'Search facts', 'aria-label': 'Search facts' });
  const tier = h('select', { id: 'fact-tier', 'aria-label': 'Tier' }, h('option', { value: '' }, 'any tier'),
    ['profile', 'log', 'note', 'episode'].map((t) => h('option', { value: t }, t)));
  const from = h('input', { id: 'fact-from', type: 'date', 'aria-label': 'From' });
  const to = h('input', { id: 'fact-to', type: 'date', 'aria-label': 'To' });
  const body = h('tbody');
  const count = h('p', { class: 'muted' });
  const draw = () => {
    const q = search.value.trim().toLowerCase();
    const shown = facts.filter((f) => (!q || f.text.toLowerCase().includes(q) || f.id.startsWith(q)) &&
      (!tier.value || f.tier === tier.value) && (!from.value || f.date >= from.value) && (!to.value || f.date <= to.value));
    body.replaceChildren(...shown.map((f) => factRow(shard, f)));
    count.textContent = `${shown.length} of ${facts.length} facts`;
  };
  for (const el of [search, tier, from, to]) el.addEventListener('input', draw);
  draw();
  view.replaceChildren(...head,
    h('div', { class: 'filters' }, h('label', {}, 'Search', search), h('label', {}, 'Tier', tier), h('label', {}, 'From', from), h('label', {}, 'To', to)),
    count,
    h('table', { class: 'facts', id: 'facts' },
      h('thead', {}, h('tr', {}, h('th', {}, 'Date'), h('th', {}, 'Tier'), h('th', {}, 'Fact'), h('th', { class: 'hide-narrow' }, 'ID'))),
      body));
  // Facts written while the page is open appear at once.
  listen((ev) => {
    if (ev.type !== 'commit' || ev.shard !== shard) return;
    for (const ch of ev.changes || []) {
      if (ch.op === '-') facts = facts.filter((f) => f.id !== ch.fact.id);
      else if (!facts.some((f) => f.id === ch.fact.id)) facts = [...facts, ch.fact];
    }
    draw();
    for (const ch of ev.changes || []) {
      if (ch.op === '+') body.querySelector(`tr[data-id="${ch.fact.id}"]`)?.classList.add('fresh');
    }
  });
}

async function factPage(shard, id) {
  const tr = await api('GET', shardPath(shard) + '/facts/' + enc(id) + '/trace');
  const f = tr.fact;
  const c = tr.introduced;
  const actions = h('div', { class: 'actions' });
  const out = h('div');
  if (tr.present) {
    actions.append(
      h('button', { id: 'edit-fact', onclick: () => editFact(shard, f, out) }, 'Edit'),
      h('button', { id: 'forget-fact', onclick: () => forgetFact(shard, f) }, 'Forget'));
  }
  if (c) {
    actions.append(h('button', { id: 'revert-commit', onclick: () => revert({ shard, commit: c.commit }, `Revert commit ${short(c.commit)}`) }, 'Revert its commit'));
    for (const m of c.provenance.source_messages || []) {
      actions.append(h('button', { class: 'revert-message', dataset: { message: m }, onclick: () => revert({ message: m }, `Revert everything learned from message ${m}`) },
        `Revert everything from ${m}`));
    }
  }
  view.replaceChildren(
    h('p', {}, h('a', { href: `#/shard/${shard}/facts` }, '← ' + shard)),
    h('h1', { id: 'fact-text' }, f.text),
    h('p', { class: 'muted' }, `${f.id} · ${f.date} · ${f.tier} · ${f.file} · `, tr.present ? 'in memory' : h('strong', {}, 'no longer in memory')),
    actions, out,
    h('h2', {}, 'Where it came from'),
    c ? h('div', { class: 'card', id: 'provenance' },
      h('div', { class: 'commit' },
        h('div', { class: 'head' }, h('span', { class: 'mono' }, short(c.commit)), h('strong', {}, c.author.name), h('span', { class: 'muted' }, when(c.time))),
        h('p', {}, c.subject), trailers(c), h('h2', {}, 'Diff'), (c.changes || []).map(changeLine), (c.notes || []).map((n) => h('div', { class: 'change' }, '~ ' + n))))
      : h('p', { class: 'muted' }, 'No commit introduced it as it stands.'),
    h('h2', {}, 'Every commit that touched it'),
    h('div', { id: 'fact-history' }, (tr.history || []).map((hc) => commitBlock(shard, hc))));
}

function editFact(shard, f, out) {
  const input = h('input', { id: 'edit-text', value: f.text, size: 60, 'aria-label': 'New text' });
  const save = h('button', { class: 'primary', id: 'edit-save' }, 'Save');
  const form = h('form', { class: 'filters' }, input, save, h('button', { type: 'button', onclick: () => out.replaceChildren() }, 'Cancel'));
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    try {
      const res = await api('PATCH', shardPath(shard) + '/facts/' + enc(f.id), { text: input.value });
      toast(res.commit ? `Saved as commit ${short(res.commit)}` : 'No change');
      location.hash = `#/fact/${shard}/${res.fact.id}`;
    } catch (err) {
      out.append(errorBox(err));
    }
  });
  out.replaceChildren(form);
  input.focus();
}

async function forgetFact(shard, f) {
  const ok = await confirmDialog('Forget this fact?', [h('p', {}, `One commit in ${shard} will remove:`), changeLine({ op: '-', fact: f })], 'Forget');
  if (!ok) return;
  try {
    const res = await api('DELETE', shardPath(shard) + '/facts/' + enc(f.id));
    toast(`Forgotten in commit ${short(res.commit)}`);
    route();
  } catch (err) {
    view.prepend(errorBox(err));
  }
}

// revert previews what undoing a commit (or a message) changes, asks, and
// then does it.
async function revert(req, title) {
  let preview;
  try {
    preview = await api('POST', '/v1/revert', { ...req, dry_run: true });
  } catch (err) {
    view.prepend(errorBox(err));
    return;
  }
  const changes = preview.reverts.flatMap((r) => r.changes.map((ch) => ({ ...ch, shard: r.shard })));
  const body = changes.length === 0
    ? [h('p', {}, 'Nothing is left to undo: what it changed has been changed again since.')]
    : [h('p', {}, `This will make ${preview.reverts.filter((r) => r.changes.length).length} revert commit(s) changing exactly:`),
      h('div', { id: 'revert-preview' }, changes.map((ch) => [h('div', { class: 'muted' }, ch.shard), changeLine(ch)]))];
  if (!await confirmDialog(title + '?', body, changes.length ? 'Revert' : 'OK') || changes.length === 0) return;
  try {
    const res = await api('POST', '/v1/revert', req);
    const made = res.reverts.filter((r) => r.commit);
    toast(`Reverted: ${made.length} commit(s)`);
    route();
  } catch (err) {
    view.prepend(errorBox(err));
  }
}

function commitBlock(shard, c) {
  return h('div', { class: 'commit', dataset: { hash: c.commit } },
    h('div', { class: 'head' }, h('span', { class: 'mono' }, short(c.commit)), h('strong', {}, c.author.name),
      h('span', { class: 'muted' }, when(c.time)), h('span', {}, c.subject)),
    h('details', {}, h('summary', { class: 'muted' }, 'trailers'), trailers(c)),
    (c.changes || []).map(changeLine),
    (c.notes || []).map((n) => h('div', { class: 'change' }, '~ ' + n)));
}

async function historyTab(shard, head, params) {
  const agent = h('input', { id: 'log-agent', name: 'agent', value: params.get('agent') || '', placeholder: 'agent or person' });
  const op = h('select', { id: 'log-op', name: 'op' }, h('option', { value: '' }, 'any'),
    ['remember', 'forget', 'note-edit', 'revert', 'import'].map((o) => h('option', { value: o, selected: params.get('op') === o }, o)));
  const message = h('input', { id: 'log-message', name: 'message', value: params.get('message') || '', placeholder: 'message ID' });
  const form = h('form', { class: 'filters' }, h('label', {}, 'Author', agent), h('label', {}, 'Operation', op), h('label', {}, 'Source message', message), h('button', {}, 'Filter'));
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    const q = new URLSearchParams();
    for (const el of [agent, op, message]) if (el.value) q.set(el.name, el.value);
    location.hash = `#/shard/${shard}/history?${q}`;
  });
  const q = new URLSearchParams({ limit: '1000' });
  for (const k of ['agent', 'op', 'message']) if (params.get(k)) q.set(k, params.get(k));
  const { commits } = await api('GET', shardPath(shard) + '/log?' + q);
  view.replaceChildren(...head, form,
    h('h2', {}, 'Facts added and removed per day'), timeline(commits),
    h('h2', {}, `${commits.length} commit(s)`),
    h('div', { id: 'history' }, commits.map((c) => commitBlock(shard, c))));
  listen((ev) => { if (ev.type === 'commit' && ev.shard === shard) route(); });
}

// timeline draws facts added (up) and removed (down) per day, over at
// least the 30 days up to the newest commit (at most 90).
function timeline(commits) {
  const days = new Map();
  for (const c of commits) {
    const d = (c.time || '').slice(0, 10);
    const v = days.get(d) || { add: 0, del: 0 };
    for (const ch of c.changes || []) ch.op === '+' ? v.add++ : v.del++;
    days.set(d, v);
  }
  const keys = [...days.keys()].sort();
  if (keys.length === 0) return h('p', { class: 'muted' }, 'No commits.');
  const dayMs = 86400000;
  const last = Date.parse(keys[keys.length - 1]);
  const first = Math.max(Math.min(Date.parse(keys[0]), last - 29 * dayMs), last - 89 * dayMs);
  const all = [];
  for (let t = first; t <= last; t += dayMs) all.push(new Date(t).toISOString().slice(0, 10));
  const max = Math.max(1, ...all.map((k) => { const v = days.get(k); return v ? Math.max(v.add, v.del) : 0; }));
  const W = 600, H = 120, mid = 60, bw = W / all.length;
  const ns = 'http://www.w3.org/2000/svg';
  const svg = document.createElementNS(ns, 'svg');
  svg.setAttribute('viewBox', `0 0 ${W} ${H}`);
  svg.setAttribute('preserveAspectRatio', 'none');
  svg.setAttribute('role', 'img');
  svg.setAttribute('aria-label', 'facts added and removed per day');
  const rect = (x, y, w, hgt, cls, title) => {
    const r = document.createElementNS(ns, 'rect');
    for (const [k, v] of Object.entries({ x, y, width: w, height: hgt, class: cls })) r.setAttribute(k, v);
    const t = document.createElementNS(ns, 'title');
    t.textContent = title;
    r.append(t);
    svg.append(r);
  };
  const axis = document.createElementNS(ns, 'line');
  for (const [k, v] of Object.entries({ x1: 0, x2: W, y1: mid, y2: mid, stroke: '#c4cad6', 'stroke-width': 1 })) axis.setAttribute(k, v);
  svg.append(axis);
  all.forEach((d, i) => {
    const v = days.get(d) || { add: 0, del: 0 };
    const ah = (v.add / max) * (mid - 6), dh = (v.del / max) * (mid - 6);
    if (v.add) rect(i * bw + bw * 0.15, mid - ah, bw * 0.7, ah, 'add', `${d}: +${v.add}`);
    if (v.del) rect(i * bw + bw * 0.15, mid, bw * 0.7, dh, 'del', `${d}: -${v.del}`);
  });
  let added = 0, removed = 0;
  for (const v of days.values()) { added += v.add; removed += v.del; }
  return h('div', { class: 'timeline', id: 'timeline' }, svg,
    h('div', { class: 'axis' }, h('span', {}, all[0]), h('span', { class: 'muted' }, `+${added} / −${removed}`), h('span', {}, all[all.length - 1])));
}

async function notesTab(shard, head) {
  const { notes } = await api('GET', shardPath(shard) + '/notes');
  const path = h('input', { id: 'new-note-path', placeholder: 'runbooks/deploy.md', required: true, 'aria-label': 'Path' });
  const form = h('form', { class: 'filters' }, h('label', {}, 'New note', path), h('button', {}, 'Create'));
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    try {
      const p = path.value.trim();
      await api('POST', shardPath(shard) + '/notes', { path: p, text: `# ${p.replace(/\.md$/, '')}\n` });
      location.hash = `#/note/${shard}/${p}`;
    } catch (err) {
      form.after(errorBox(err));
    }
  });
  view.replaceChildren(...head, form,
    notes.length === 0 ? h('p', { class: 'muted' }, 'No notes.')
      : h('table', { id: 'notes' }, h('thead', {}, h('tr', {}, h('th', {}, 'Note'), h('th', {}, 'Title'), h('th', { class: 'hide-narrow' }, 'Size'))),
        h('tbody', {}, notes.map((n) => h('tr', {},
          h('td', {}, h('a', { href: `#/note/${shard}/${n.path}` }, n.path)), h('td', {}, n.title || ''),
          h('td', { class: 'hide-narrow' }, `${n.size} bytes`))))));
}

async function notePage(shard, path) {
  const note = await api('GET', notePath(shard, path));
  const out = h('div');
  const rendered = h('div', { class: 'markdown', id: 'note-rendered' }, markdown(note.text));
  const edit = () => {
    const text = h('textarea', { id: 'note-text', 'aria-label': 'Note text' });
    text.value = note.text;
    const save = h('button', { class: 'primary', id: 'note-save' }, 'Save');
    const form = h('form', {}, text, h('div', { class: 'actions' }, save, h('button', { type: 'button', onclick: () => route() }, 'Cancel')));
    form.addEventListener('submit', async (e) => {
      e.preventDefault();
      try {
        const res = await saveNote(shard, path, note, text.value);
        toast(res.commit ? `Saved as commit ${short(res.commit)}` : 'No change');
        route();
      } catch (err) {
        const hint = err.code === 'revision_mismatch'
          ? ' Someone changed the note since you opened it; your text is still here — copy it, then reload to see theirs.' : '';
        form.prepend(errorBox({ ...err, message: err.message + hint, code: err.code }));
      }
    });
    rendered.replaceWith(form);
    text.focus();
  };
  view.replaceChildren(
    h('p', {}, h('a', { href: `#/shard/${shard}/notes` }, '← notes of ' + shard)),
    h('h1', {}, path),
    h('p', { class: 'muted' }, 'revision ', h('span', { class: 'mono', id: 'note-revision' }, note.revision.slice(0, 16)), ` · commit ${short(note.commit)}`),
    h('div', { class: 'actions' }, h('button', { id: 'note-edit', onclick: edit }, 'Edit')),
    out, rendered);
}

// saveNote writes a person's whole new text as one anchored edit of the
// old text, at the revision they opened, so a change made meanwhile is
// never overwritten.
async function saveNote(shard, path, note, text) {
  if (note.text === '') {
    await api('DELETE', notePath(shard, path) + '?expectedRevision=' + note.revision);
    return api('POST', shardPath(shard) + '/notes', { path, text });
  }
  return api('POST', notePath(shard, path) + ':edit', {
    expectedRevision: note.revision,
    edits: [{ op: 'replace', find: note.text, replace: text }],
  });
}

function livePage() {
  const list = h('div', { id: 'live' });
  const draw = () => list.replaceChildren(...(feed.events.length === 0
    ? [h('p', { class: 'muted' }, 'Waiting for commits…')]
    : feed.events.map((ev) => ev.type === 'commit'
      ? h('div', { class: 'commit', dataset: { hash: ev.commit } },
        h('div', { class: 'head' }, h('a', { href: `#/shard/${ev.shard}/history` }, ev.shard), h('strong', {}, ev.author.name),
          h('span', { class: 'muted' }, when(ev.time)), h('span', {}, ev.subject || '')),
        (ev.changes || []).map(changeLine), (ev.notes || []).map((n) => h('div', { class: 'change' }, '~ ' + n.path)))
      : h('div', { class: 'commit' }, h('div', { class: 'head' }, h('strong', {}, ev.type), h('span', {}, ev.shard), h('span', { class: 'muted' }, ev.exchange || ''), ev.error || '')))));
  draw();
  view.replaceChildren(h('h1', {}, 'Live'), h('p', { class: 'muted' }, 'Every commit in every shard as it happens (newest first).'), list);
  listen(draw);
}

async function learnerPage() {
  const st = await api('GET', '/v1/status');
  const l = st.learning;
  const parts = [h('h1', {}, 'Learner'),
    h('p', {}, l.enabled ? `On, with ${l.model}: ${l.pending} pending, ${l.failed} failed.` : `Off${l.reason ? ': ' + l.reason : ''}.`)];
  if (l.enabled) {
    const { exchanges } = await api('GET', '/v1/exchanges?state=failed');
    parts.push(h('h2', {}, 'Failed exchanges'), exchanges.length === 0 ? h('p', { class: 'muted' }, 'None.')
      : h('table', { id: 'failed' }, h('thead', {}, h('tr', {}, h('th', {}, 'Agent'), h('th', {}, 'Exchange'), h('th', {}, 'Tries'), h('th', {}, 'Error'), h('th', {}, ''))),
        h('tbody', {}, exchanges.map((x) => h('tr', { dataset: { id: x.id } },
          h('td', {}, x.agent), h('td', { class: 'mono' }, x.id), h('td', {}, String(x.attempts)), h('td', {}, x.error || ''),
          h('td', {}, h('button', { class: 'retry', onclick: async () => {
            try { await api('POST', '/v1/exchanges/' + enc(x.id) + '/retry'); toast('Queued again'); route(); } catch (err) { view.prepend(errorBox(err)); }
          } }, 'Retry')))))));
  }
  view.replaceChildren(...parts);
  listen((ev) => { if (ev.type === 'learner_failed' || ev.type === 'learned') route(); });
}

// remoteState says in a few words how a shard stands with its remote.
function remoteState(r) {
  if (r.error) return 'error: ' + r.error;
  if (r.pending) return 'push pending';
  if ((r.conflicts || []).length) return 'merged with conflict markers in ' + r.conflicts.join(', ');
  if ((r.head || '') !== (r.remote || '')) return 'not pushed yet';
  return 'in step';
}

async function remotesPage() {
  const remotes = (await api('GET', '/v1/remotes')).remotes || [];
  const sync = async (shards, button) => {
    button.disabled = true;
    try {
      const res = await api('POST', '/v1/remotes/sync', { shards });
      const failed = res.remotes.filter((r) => r.error).length;
      toast(failed ? `${failed} of ${res.remotes.length} did not sync` : 'Fetched, merged and pushed');
      route();
    } catch (err) {
      button.disabled = false;
      view.prepend(errorBox(err));
    }
  };
  view.replaceChildren(
    h('h1', { id: 'remotes-title' }, 'Remotes'),
    h('p', { class: 'muted' }, 'Shards with a git remote: their commits are pushed soon after they are made, and the remote is fetched and merged on a schedule.'),
    ...(remotes.length === 0
      ? [h('p', {}, 'No shard has a remote. Start memd serve with ', h('code', {}, '--remote URL-TEMPLATE'), ', or run ', h('code', {}, 'git remote add memd URL'), ' in a shard.')]
      : [h('p', {}, h('button', { id: 'sync-all', onclick: (e) => sync([], e.target) }, 'Sync all now')),
        h('table', { id: 'remotes' },
          h('thead', {}, h('tr', {}, h('th', {}, 'Shard'), h('th', { class: 'hide-narrow' }, 'Remote'), h('th', {}, 'Pushed'),
            h('th', {}, 'Fetched'), h('th', {}, 'State'), h('th', {}, ''))),
          h('tbody', {}, remotes.map((r) => h('tr', { dataset: { shard: r.shard } },
            h('td', {}, h('a', { href: '#/shard/' + r.shard }, r.shard)),
            h('td', { class: 'mono hide-narrow' }, r.url),
            h('td', {}, when(r.pushed_at) || '–'),
            h('td', {}, when(r.fetched_at) || '–', r.integrated ? h('span', { class: 'muted' }, ' · ' + r.integrated) : null),
            h('td', { class: r.error ? 'state state-error' : 'state' }, remoteState(r)),
            h('td', {}, h('button', { class: 'sync', onclick: (e) => sync([r.shard], e.target) }, 'Sync')))))),
      ]),
  );
}

// ---- Markdown, rendered safely: text is set as text, links are http(s) ----

function markdown(src) {
  const out = [];
  const lines = src.replace(/\r\n/g, '\n').split('\n');
  let para = [], list = null;
  const flush = () => {
    if (para.length) out.push(h('p', {}, inline(para.join(' '))));
    para = [];
    if (list) out.push(list);
    list = null;
  };
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    if (line.startsWith('```')) {
      flush();
      const code = [];
      for (i++; i < lines.length && !lines[i].startsWith('```'); i++) code.push(lines[i]);
      out.push(h('pre', {}, h('code', {}, code.join('\n'))));
      continue;
    }
    const hd = /^(#{1,6})\s+(.*)$/.exec(line);
    const li = /^\s*(?:[-*+]|\d+[.)])\s+(.*)$/.exec(line);
    if (hd) { flush(); out.push(h('h' + Math.min(6, hd[1].length + 1), {}, inline(hd[2]))); }
    else if (li) {
      if (para.length) { out.push(h('p', {}, inline(para.join(' ')))); para = []; }
      if (!list) list = h(/^\s*\d/.test(line) ? 'ol' : 'ul');
      list.append(h('li', {}, inline(li[1])));
    } else if (line.trim() === '') flush();
    else if (list) { flush(); para.push(line.trim()); }
    else para.push(line.trim());
  }
  flush();
  return out;
}

function inline(text) {
  const nodes = [];
  const re = /(`[^`]+`)|(\*\*[^*]+\*\*)|(\*[^*\s][^*]*\*)|(\[[^\]]+\]\((https?:\/\/[^)\s]+)\))/g;
  let at = 0, m;
  while ((m = re.exec(text))) {
    if (m.index > at) nodes.push(text.slice(at, m.index));
    if (m[1]) nodes.push(h('code', {}, m[1].slice(1, -1)));
    else if (m[2]) nodes.push(h('strong', {}, m[2].slice(2, -2)));
    else if (m[3]) nodes.push(h('em', {}, m[3].slice(1, -1)));
    else nodes.push(h('a', { href: m[5], rel: 'noopener noreferrer', target: '_blank' }, m[4].slice(1, m[4].indexOf(']'))));
    at = re.lastIndex;
  }
  if (at < text.length) nodes.push(text.slice(at));
  return nodes;
}

window.addEventListener('hashchange', route);
connectFeed();
route();
