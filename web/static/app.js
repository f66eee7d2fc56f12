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

// show puts a page's parts in the view; lists are flattened and empty
// parts (null, undefined, false) left out.
function show(...parts) {
  view.replaceChildren(...parts.flat(Infinity).filter((p) => p !== null && p !== undefined && p !== false)
    .map((p) => (p instanceof Node ? p : document.createTextNode(String(p)))));
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
  const gen = routeGen;
  const resp = await fetch(path, opts);
  // What a page asked for after the person moved to another page is
  // dropped: shown, it would replace the page they are on.
  if (gen !== routeGen && method === 'GET') return new Promise(() => {});
  if (resp.status === 401) {
    // Not sent to the sign-in page: what the person typed here stays.
    throw new APIError('unauthorized', 'You are signed out. Sign in again (in another tab, to keep what you typed here), then try again.');
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

// errorPage replaces a page that could not load, with ways back.
function errorPage(err) {
  return [h('h1', {}, 'This page could not load'), errorBox(err),
    h('p', { class: 'actions', id: 'error-back' },
      err.code === 'unauthorized' ? h('a', { href: '/login', target: '_blank' }, 'Sign in') : null,
      h('button', { onclick: () => history.back() }, '← Back'),
      h('a', { href: '#/' }, 'Shards'), h('a', { href: '#/search' }, 'Search'),
      h('button', { onclick: () => route() }, 'Try again'))];
}

// confirmDialog shows what an action will change and resolves true if the
// person confirms.
function confirmDialog(title, body, okLabel) {
  const dlg = document.getElementById('confirm');
  document.getElementById('confirm-title').textContent = title;
  document.getElementById('confirm-body').replaceChildren(...[body].flat(Infinity).filter((p) => p !== null && p !== undefined && p !== false));
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
    ['Prompt', p.prompt], ['Reverts', p.reverts], ['Replaces', p.replaces],
    ['Evidence', (p.evidence || []).join(', ')], ['Approved-By', p.approved_by], ['Reviewed-By', p.reviewed_by],
    ['Rejects', p.rejects], ['Merged', p.merged], ['Conflict', (p.conflicts || []).join(', ')],
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
  ws.onopen = () => { state.textContent = '● live'; state.classList.add('on'); feed.retry = 1000; feed.signedOut = false; };
  ws.onmessage = (m) => {
    const ev = JSON.parse(m.data);
    if (ev.type === 'commit') feed.last[ev.shard] = ev.commit;
    feed.events.unshift(ev);
    feed.events.length = Math.min(feed.events.length, 200);
    for (const fn of feed.listeners) fn(ev);
  };
  ws.onclose = (e) => {
    // Tried again all the same: signing in in another tab brings it back.
    feed.signedOut = feed.signedOut || e.reason === 'signed out';
    state.textContent = feed.signedOut ? '○ signed out' : '○ reconnecting';
    state.classList.remove('on');
    setTimeout(connectFeed, feed.retry);
    feed.retry = Math.min(feed.retry * 2, 15000);
  };
}

// redraw draws the page again for what changed, unless the person is busy
// with it (typing in a field, a choice changed, trailers opened): then it
// says memory changed, and draws again when asked.
function redraw() {
  const busy = view.querySelector('details[open]') || [...view.querySelectorAll('input, textarea, select')].some((el) =>
    el === document.activeElement || (el.tagName === 'SELECT' ? el.selectedIndex !== Math.max(0, [...el.options].findIndex((o) => o.defaultSelected)) : el.value !== el.defaultValue));
  if (!busy) return route();
  if (!document.getElementById('changed-since')) {
    view.prepend(h('p', { id: 'changed-since', class: 'muted', role: 'status' }, 'Memory changed since this page was drawn. ', h('button', { onclick: () => route() }, 'Show it')));
  }
}

// listen registers a feed listener for the current page only.
function listen(fn) {
  feed.listeners.add(fn);
  pageCleanups.push(() => feed.listeners.delete(fn));
}

// ---- routing ----

let pageCleanups = [];
let routeGen = 0; // counts the pages shown, so that a late answer for one left is dropped

async function route() {
  routeGen++;
  for (const f of pageCleanups) f();
  pageCleanups = [];
  const [path, query] = location.hash.slice(1).split('?');
  const parts = path.split('/').filter(Boolean).map(decodeURIComponent);
  const params = new URLSearchParams(query || '');
  show(h('p', { class: 'muted' }, 'Loading…'));
  // The browser would take "." and ".." (even written %2E) as steps up:
  // #/note/agent/alice/../../bob/... would show bob's note as alice's.
  if (parts.some((p) => p === '.' || p === '..')) {
    return show(...errorPage({ code: 'invalid', message: 'a page address names no "." or ".." folder' }));
  }
  try {
    switch (parts[0]) {
      case undefined: return await shardsPage();
      case 'shard': return await shardPage(parts[1] + '/' + parts[2], parts[3] || 'facts', params);
      case 'fact': return await factPage(parts[1] + '/' + parts[2], parts[3]);
      case 'search': return await searchPage(params);
      case 'learning': return await learningPage(params);
      case 'note': return await notePage(parts[1] + '/' + parts[2], parts.slice(3).join('/'));
      case 'live': return livePage();
      case 'learner': return await learnerPage();
      case 'remotes': return await remotesPage();
      case 'review': return await reviewPage();
      default: show(...errorPage({ code: 'not_found', message: 'no such page: ' + location.hash }));
    }
  } catch (err) {
    show(...errorPage(err));
  }
}

// ---- pages ----

async function shardsPage() {
  const [{ shards }, st] = await Promise.all([api('GET', '/v1/shards'), api('GET', '/v1/status')]);
  const learning = st.learning.enabled
    ? `on (${st.learning.model}), ${st.learning.pending} pending, ${st.learning.failed} failed`
    : `off${st.learning.reason ? ': ' + st.learning.reason : ''}`;
  show(
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
    h('h2', {}, 'All memory over time'),
    await growthChart(''),
  );
  listen(debounced((evs) => { if (evs.some((ev) => ev.type === 'commit')) redraw(); }, 2000));
}

function tabs(shard, active) {
  return h('div', { class: 'tabs' }, ['facts', 'history', 'notes'].map((t) =>
    h('a', { href: `#/shard/${shard}/${t}`, class: t === active ? 'active' : null }, t[0].toUpperCase() + t.slice(1))));
}

async function shardPage(shard, tab, params) {
  const head = [h('h1', {}, shard), tabs(shard, tab)];
  if (tab === 'history') return historyTab(shard, head, params);
  if (tab === 'notes') return notesTab(shard, head);
  return factsTab(shard, head, params);
}

const learnedByKinds = ['learner', 'episode', 'synthesis', 'explicit', 'person', 'import'];
const pageSize = 100;

// whoWrote says in a few words what wrote a fact's line.
function whoWrote(o) {
  if (!o) return '';
  const by = o.learned_by === 'person' ? 'person' : o.learned_by;
  return [by, o.model, o.author && o.author !== 'admin' && by !== 'person' ? o.author : (by === 'person' ? o.author : '')]
    .filter(Boolean).join(' · ');
}

function factRow(shard, f, fresh) {
  return h('tr', { dataset: { id: f.id }, class: fresh ? 'fresh' : null },
    h('td', { class: 'nowrap' }, f.date), h('td', {}, h('span', { class: 'tag' }, f.tier)),
    h('td', {}, fresh ? h('span', { class: 'new-badge' }, 'new') : null, h('a', { href: `#/fact/${shard}/${f.id}` }, f.text)),
    h('td', { class: 'hide-narrow' }, whoWrote(f.origin)),
    h('td', { class: 'mono hide-narrow' }, f.id));
}

// pager shows where a page is in a list and moves between pages.
function pager(offset, size, total, go) {
  const last = Math.min(offset + size, total);
  return h('div', { class: 'pager' },
    h('button', { class: 'prev', disabled: offset === 0, onclick: () => go(Math.max(0, offset - size)) }, '← Previous'),
    h('span', { class: 'muted' }, total === 0 ? 'nothing' : offset >= total ? `past the last of ${total}` : `${offset + 1}–${last} of ${total}`),
    h('button', { class: 'next', disabled: last >= total, onclick: () => go(offset + size) }, 'Next →'));
}

async function factsTab(shard, head, params) {
  const field = (tag, name, attrs, ...kids) => {
    const el = h(tag, { id: 'fact-' + name, name, 'aria-label': name, ...attrs }, ...kids);
    el.value = params.get(name) || '';
    return el;
  };
  const search = field('input', 'q', { type: 'search', placeholder: 'Text or ID' });
  const tier = field('select', 'tier', {}, h('option', { value: '' }, 'any'), ['profile', 'log', 'note', 'episode'].map((t) => h('option', { value: t }, t)));
  const learnedBy = field('select', 'learned_by', {}, h('option', { value: '' }, 'any'), learnedByKinds.map((t) => h('option', { value: t }, t)));
  const model = field('input', 'model', { placeholder: 'any', size: 12 });
  const agent = field('input', 'agent', { placeholder: 'any', size: 10 });
  const from = field('input', 'from', { type: 'date' });
  const to = field('input', 'to', { type: 'date' });
  const sort = field('select', 'sort', {}, [['newest', 'newest first'], ['oldest', 'oldest first'], ['text', 'by text'], ['tier', 'by tier']].map(([v, l]) => h('option', { value: v }, l)));
  if (!sort.value) sort.value = 'newest';
  const inputs = [search, tier, learnedBy, model, agent, from, to, sort];
  const offset = Number(params.get('offset') || 0);
  const go = (at) => {
    const q = new URLSearchParams();
    for (const el of inputs) if (el.value && !(el === sort && el.value === 'newest')) q.set(el.name, el.value);
    if (at) q.set('offset', at);
    location.hash = `#/shard/${shard}/facts?${q}`;
  };
  const form = h('form', { class: 'filters' },
    [['Search', search], ['Tier', tier], ['Learned by', learnedBy], ['Model', model], ['Agent', agent], ['From', from], ['To', to], ['Order', sort]]
      .map(([l, el]) => h('label', {}, l, el)), h('button', {}, 'Show'));
  form.addEventListener('submit', (e) => { e.preventDefault(); go(0); });
  for (const el of [tier, learnedBy, sort, from, to]) el.addEventListener('change', () => go(0));
  const load = async () => {
    const q = new URLSearchParams({ origins: 'true', limit: String(pageSize), offset: String(offset), sort: sort.value });
    for (const el of inputs) if (el.value && el !== sort) q.set(el.name, el.value);
    return api('GET', shardPath(shard) + '/facts?' + q);
  };
  let list = await load();
  const body = h('tbody');
  const count = h('div');
  const draw = (fresh) => {
    body.replaceChildren(...list.facts.map((f) => factRow(shard, f, fresh && fresh.has(f.id))));
    count.replaceChildren(pager(offset, pageSize, list.total, go));
  };
  draw();
  show(...head, form, count,
    h('table', { class: 'facts', id: 'facts' },
      h('thead', {}, h('tr', {}, h('th', {}, 'Date'), h('th', {}, 'Tier'), h('th', {}, 'Fact'), h('th', { class: 'hide-narrow' }, 'Written by'), h('th', { class: 'hide-narrow' }, 'ID'))),
      body));
  // Facts written while the page is open take their place at once,
  // marked new.
  listen(debounced(async (evs) => {
    const added = new Set(evs.filter((ev) => ev.type === 'commit' && ev.shard === shard)
      .flatMap((ev) => (ev.changes || []).filter((ch) => ch.op === '+').map((ch) => ch.fact.id)));
    if (!evs.some((ev) => ev.type === 'commit' && ev.shard === shard)) return;
    try {
      list = await load();
      draw(added);
    } catch (err) {
      toast('Could not refresh: ' + err.message);
    }
  }, 300));
}

// debounced calls fn with the events gathered over ms, once.
function debounced(fn, ms) {
  let timer = null, evs = [];
  return (ev) => {
    evs.push(ev);
    if (timer) return;
    timer = setTimeout(() => { const got = evs; evs = []; timer = null; fn(got); }, ms);
  };
}

// quoteBlock shows a kept chat message: who said it, when, and the text.
function quoteBlock(q) {
  const who = q.role === 'agent' ? (q.agent || 'agent') : q.role === 'user' ? (q.user || 'user') : (q.agent ? q.agent + ' (excerpt)' : 'excerpt');
  return h('blockquote', { class: 'quote ' + (q.role || 'excerpt'), dataset: { message: q.id } },
    h('div', { class: 'quote-head' }, h('strong', {}, who), h('span', { class: 'muted' }, ` ${when(q.time)} · ${q.id}${q.chat ? ' · chat ' + q.chat : ''}`)),
    h('div', { class: 'quote-text' }, q.text));
}

// undoable asks, without committing, what reverting req would change.
async function undoable(req) {
  try {
    const res = await api('POST', '/v1/revert', { ...req, dry_run: true });
    return res.reverts.reduce((n, r) => n + r.changes.length + (r.notes || []).length, 0);
  } catch (err) {
    if (err.code === 'not_found') return 0;
    throw err;
  }
}

function addedText(c) {
  return ((c.changes || []).find((ch) => ch.op === '+') || {}).fact?.text || '';
}

async function factPage(shard, id) {
  const tr = await api('GET', shardPath(shard) + '/facts/' + enc(id) + '/trace');
  const f = tr.fact;
  const c = tr.introduced;
  const chain = tr.chain || [];
  const first = chain[chain.length - 1] || c;
  const messages = [...new Set(chain.flatMap((v) => v.provenance.source_messages || []))];
  // The exchange is its messages in the chat the fact was learned in.
  const exchangeChat = (chain.find((v) => v.provenance.source_chat) || {}).provenance?.source_chat || '';
  const actions = h('div', { class: 'actions' });
  const out = h('div');
  if (tr.present) {
    actions.append(
      h('button', { id: 'edit-fact', onclick: () => editFact(shard, f, out) }, 'Edit'),
      h('button', { id: 'forget-fact', onclick: () => forgetFact(shard, f) }, 'Forget'));
  }
  // Only what something is left to undo gets a button. Asking walks the
  // shards' history, so the page is drawn first and the buttons follow.
  const routed = location.hash;
  // A fact gone can come back: the commit that took it is undone.
  const took = !tr.present ? (tr.history || []).find((hc) => (hc.changes || []).some((ch) => ch.op === '-' && ch.fact.id === f.id)) : null;
  const offer = async () => {
    const [commitLeft, exchangeLeft, backLeft] = await Promise.all([
      c ? undoable({ shard, commit: c.commit }) : 0,
      messages.length ? undoable({ messages, chat: exchangeChat }) : 0,
      took ? undoable({ shard, commit: took.commit }) : 0,
    ]);
    if (location.hash !== routed) return; // the person moved on
    if (backLeft) {
      actions.append(h('button', { id: 'bring-back', onclick: () => revert({ shard, commit: took.commit }, `Bring it back: revert commit ${short(took.commit)} (${took.subject})`) }, 'Bring it back'));
    }
    if (commitLeft) {
      actions.append(h('button', { id: 'revert-commit', onclick: () => revert({ shard, commit: c.commit }, `Revert commit ${short(c.commit)}`) }, 'Revert its commit'));
    }
    if (exchangeLeft) {
      actions.append(h('button', { id: 'revert-exchange', class: 'danger', onclick: () => revert({ messages, chat: exchangeChat }, `Revert everything learned from ${messages.length === 1 ? 'message ' + messages[0] : 'these ' + messages.length + ' messages'}`) },
        'Revert this exchange'), h('span', { class: 'muted revert-note' }, 'messages ' + messages.join(', ')));
    }
    actions.dataset.offered = 'yes';
  };
  offer().catch((err) => actions.append(errorBox(err)));
  const said = tr.messages || [];
  show(
    h('p', {}, h('a', { href: `#/shard/${shard}/facts` }, '← ' + shard)),
    h('h1', { id: 'fact-text' }, f.text),
    h('p', { class: 'muted' }, `${f.id} · ${f.date} · ${f.tier} · ${f.file} · `, tr.present ? 'in memory' : h('strong', {}, 'no longer in memory')),
    actions, out,
    h('h2', {}, 'What was said'),
    h('div', { id: 'conversation' }, said.length ? said.map(quoteBlock)
      : h('p', { class: 'muted' }, messages.length ? `memd keeps no text of ${messages.join(', ')} (not learned through memd, purged, or past the retention).` : 'No chat message is cited.')),
    chain.length > 1 ? [h('h2', {}, `Versions (edited ${chain.length - 1} time${chain.length > 2 ? 's' : ''})`),
      h('ol', { id: 'chain', class: 'chain' }, chain.map((v, i) => h('li', { dataset: { hash: v.commit } },
        h('div', {}, h('strong', {}, addedText(v))),
        h('div', { class: 'muted' }, `${i === chain.length - 1 ? 'first ' + (v.provenance.op || 'written') : 'edited'} by ${v.author.name} · ${when(v.time)} · ${short(v.commit)}`,
          v.provenance.learned_by ? ` · ${v.provenance.learned_by}` : '', v.provenance.model ? ` · ${v.provenance.model}` : '',
          v.provenance.reviewed_by ? ` · accepted in review by ${v.provenance.reviewed_by}` : ''),
        (v.provenance.evidence || []).length ? h('div', { class: 'evidence' }, `Evidence: ${v.provenance.evidence.join(', ')}`,
          v.provenance.approved_by ? ` · approved by ${v.provenance.approved_by}` : '') : null)))] : null,
    h('h2', {}, chain.length > 1 ? 'Where it was first learned' : 'Where it came from'),
    first ? h('div', { class: 'card', id: 'provenance' },
      h('div', { class: 'commit' },
        h('div', { class: 'head' }, h('span', { class: 'mono' }, short(first.commit)), h('strong', {}, first.author.name), h('span', { class: 'muted' }, when(first.time))),
        h('p', {}, first.subject), trailers(first), h('h2', {}, 'Diff'), (first.changes || []).map(changeLine), (first.notes || []).map((n) => h('div', { class: 'change' }, '~ ' + n))))
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
      out.append(errorBox(staleFact(err, true)));
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
    view.prepend(errorBox(staleFact(err)));
  }
}

// staleFact says, for a fact no longer in memory as the page shows it,
// why: someone edited or forgot it since the page was drawn.
function staleFact(err, typed) {
  if (err.code !== 'not_found') return err;
  return new APIError(err.code, 'This fact is no longer in memory as this page shows it: it was edited or forgotten since ' +
    '(in another tab, by an agent, or with git). Reload the page to see it as it is' + (typed ? '; your text is still in the box.' : '.'));
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
  const notes = preview.reverts.flatMap((r) => (r.notes || []).map((n) => ({ note: n, shard: r.shard })));
  const refused = preview.reverts.filter((r) => r.refused).map((r) => h('div', { class: 'change' }, `${r.shard} ${short(r.reverted)} is left as it is: ${r.refused}`));
  // A revert by message also rejects the proposals that cite it and takes
  // it out of the learner's waiting work.
  const rejected = (preview.rejected_proposals || []).map((p) => h('div', { class: 'change' }, `${p.shard}: proposal ${p.id} (${p.subject}) will be rejected`));
  const learning = preview.learning_dropped
    ? h('p', {}, `The learner will not learn from it again: it is taken out of ${preview.learning_dropped} piece(s) of its waiting work.`)
    : null;
  const body = changes.length + notes.length === 0
    ? [h('p', {}, rejected.length || learning ? 'Nothing on main is left to undo.' : 'Nothing is left to undo: what it changed has been changed again since.'), refused, rejected, learning]
    : [h('p', {}, `This will make ${preview.reverts.filter((r) => r.changes.length || (r.notes || []).length).length} revert commit(s) changing exactly:`),
      h('div', { id: 'revert-preview' }, changes.map((ch) => [h('div', { class: 'muted' }, ch.shard), changeLine(ch)]),
        notes.map((n) => [h('div', { class: 'muted' }, n.shard), h('div', { class: 'change' }, '~ note ' + n.note + ', as it was before')]), refused),
      rejected, learning];
  const any = changes.length + notes.length + rejected.length > 0 || !!preview.learning_dropped;
  if (!await confirmDialog(title + '?', body, any ? 'Revert' : 'OK') || !any) return;
  // A revert by message undoes exactly what was shown: memd refuses it if
  // a commit citing the messages came since.
  const confirmed = req.messages
    ? { ...req, confirmed: preview.reverts.filter((r) => r.changes.length || (r.notes || []).length).map((r) => r.reverted) }
    : req;
  try {
    const res = await api('POST', '/v1/revert', confirmed);
    const made = res.reverts.filter((r) => r.commit);
    const rejectedNow = (res.rejected_proposals || []).length;
    toast(`Reverted: ${made.length} commit(s)` + (rejectedNow ? `; ${rejectedNow} proposal(s) rejected` : '') +
      (res.learning_dropped ? '; the learner will not learn from it again' : ''));
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

const historyPage = 50;

async function historyTab(shard, head, params) {
  const agent = h('input', { id: 'log-agent', name: 'agent', value: params.get('agent') || '', placeholder: 'agent or person' });
  const op = h('select', { id: 'log-op', name: 'op' }, h('option', { value: '' }, 'any'),
    ['remember', 'forget', 'edit', 'note-edit', 'revert', 'import', 'merge'].map((o) => h('option', { value: o, selected: params.get('op') === o }, o)));
  const message = h('input', { id: 'log-message', name: 'message', value: params.get('message') || '', placeholder: 'message ID' });
  const form = h('form', { class: 'filters' }, h('label', {}, 'Author', agent), h('label', {}, 'Operation', op), h('label', {}, 'Source message', message), h('button', {}, 'Filter'));
  const offset = Number(params.get('offset') || 0);
  const go = (at) => {
    const q = new URLSearchParams();
    for (const el of [agent, op, message]) if (el.value) q.set(el.name, el.value);
    if (at) q.set('offset', at);
    location.hash = `#/shard/${shard}/history?${q}`;
  };
  form.addEventListener('submit', (e) => { e.preventDefault(); go(0); });
  // One more than a page says whether there is a next one.
  const q = new URLSearchParams({ limit: String(historyPage + 1), offset: String(offset) });
  for (const k of ['agent', 'op', 'message']) if (params.get(k)) q.set(k, params.get(k));
  const [{ commits }, chart] = await Promise.all([api('GET', shardPath(shard) + '/log?' + q), growthChart(shard)]);
  const more = commits.length > historyPage;
  const shown = commits.slice(0, historyPage);
  const nav = h('div', { class: 'pager' },
    h('button', { class: 'prev', disabled: offset === 0, onclick: () => go(Math.max(0, offset - historyPage)) }, '← Newer'),
    h('span', { class: 'muted' }, shown.length ? `commits ${offset + 1}–${offset + shown.length}` : 'no commits match'),
    h('button', { class: 'next', disabled: !more, onclick: () => go(offset + historyPage) }, 'Older →'));
  show(...head, h('h2', {}, 'Growth'), chart, form, nav,
    h('div', { id: 'history' }, shown.map((c) => commitBlock(shard, c))), shown.length > 10 ? nav.cloneNode(true) : null);
  for (const b of view.querySelectorAll('.pager .prev')) b.onclick = () => go(Math.max(0, offset - historyPage));
  for (const b of view.querySelectorAll('.pager .next')) b.onclick = () => go(offset + historyPage);
  if (offset === 0) listen(debounced((evs) => { if (evs.some((ev) => ev.type === 'commit' && ev.shard === shard)) redraw(); }, 1000));
}

// growthChart draws how memory grew (one shard, or all with shard ''):
// facts standing over time as a line, additions above and removals below
// the axis as bars, per day or per week, by commit time or by the facts'
// own dates.
async function growthChart(shard) {
  const g = await api('GET', '/v1/stats/growth' + (shard ? '?shard=' + enc(shard) : ''));
  const box = h('div', { class: 'growth', id: 'growth' });
  const mode = h('select', { id: 'growth-by', 'aria-label': 'Count by' },
    h('option', { value: 'commit' }, 'by commit time'), h('option', { value: 'date' }, "by the facts' dates"));
  const draw = () => box.replaceChildren(mode, growthSVG(mode.value === 'date' ? g.by_date : g.by_commit, mode.value));
  mode.addEventListener('change', draw);
  draw();
  return box;
}

const dayMs = 86400000;
const isoDay = (t) => new Date(t).toISOString().slice(0, 10);

function growthSVG(days, by) {
  if (!days || days.length === 0) return h('p', { class: 'muted' }, 'Nothing yet.');
  // At least a week, ending on the last day with a change.
  const last = Date.parse(days[days.length - 1].day), first = Math.min(Date.parse(days[0].day), last - 6 * dayMs);
  const weekly = (last - first) / dayMs > 120;
  const step = weekly ? 7 * dayMs : dayMs;
  const buckets = [];
  for (let t = first; t <= last; t += step) buckets.push({ start: t, added: 0, removed: 0, total: 0 });
  let i = 0, total = 0;
  for (const b of buckets) {
    for (; i < days.length && Date.parse(days[i].day) < b.start + step; i++) {
      b.added += days[i].added; b.removed += days[i].removed; total = days[i].total;
    }
    b.total = total;
  }
  // Drawn at the width it is shown at, so its labels stay readable.
  const W = Math.round(Math.min(1000, Math.max(320, (view.clientWidth || 720) - 24))), H = 220, L = 48, R = 12, T = 12, B = 30;
  const mid = T + (H - T - B) * 0.72; // the bars' axis; the line uses the full height
  const maxTotal = Math.max(1, ...buckets.map((b) => b.total));
  const maxBar = Math.max(1, ...buckets.map((b) => Math.max(b.added, b.removed)));
  const bw = Math.min(24, Math.max(1, (W - L - R) / buckets.length * 0.7));
  // Bars stay inside the plot: the first and last are centred half a bar in.
  const x = (k) => L + bw / 2 + (W - L - R - bw) * (buckets.length === 1 ? 0.5 : k / (buckets.length - 1));
  const ns = 'http://www.w3.org/2000/svg';
  const el = (tag, attrs, text) => {
    const e = document.createElementNS(ns, tag);
    for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
    if (text !== undefined) e.textContent = text;
    return e;
  };
  const svg = el('svg', { viewBox: `0 0 ${W} ${H}`, role: 'img', 'aria-label': `facts over time, ${by === 'date' ? "by the facts' dates" : 'by commit time'}, per ${weekly ? 'week' : 'day'}` });
  // Axes: counts on the left for the line, dates along the bottom.
  svg.append(el('line', { x1: L, x2: W - R, y1: H - B, y2: H - B, class: 'axis-line' }));
  for (const frac of maxTotal >= 4 ? [0, 0.5, 1] : [0, 1]) {
    const y = T + (H - T - B) * (1 - frac);
    svg.append(el('line', { x1: L, x2: W - R, y1: y, y2: y, class: 'grid' }));
    svg.append(el('text', { x: L - 6, y: y + 4, 'text-anchor': 'end', class: 'tick' }, String(Math.round(maxTotal * frac))));
  }
  // As many dates as fit, each label about 80 pixels wide.
  const ticks = Math.max(2, Math.min(buckets.length, 6, Math.floor((W - L - R) / 80)));
  for (let k = 0; k < ticks; k++) {
    const idx = ticks === 1 ? 0 : Math.round(k * (buckets.length - 1) / (ticks - 1));
    svg.append(el('text', { x: x(idx), y: H - 10, 'text-anchor': k === 0 ? 'start' : k === ticks - 1 ? 'end' : 'middle', class: 'tick' }, isoDay(buckets[idx].start)));
  }
  // One scale for bars up and down, within the room below the axis.
  const barUnit = Math.min((mid - T) * 0.5, H - B - mid) / maxBar;
  // The bars' scale, on the right: the most added or removed in a bucket.
  svg.append(el('text', { x: W - R, y: T + 10, 'text-anchor': 'end', class: 'tick bars' }, `±${maxBar} per ${weekly ? 'week' : 'day'}`));
  buckets.forEach((b, k) => {
    const label = `${isoDay(b.start)}${weekly ? ' (week)' : ''}: +${b.added} −${b.removed}, ${b.total} standing`;
    if (b.added) {
      const hh = b.added * barUnit;
      const r = el('rect', { x: x(k) - bw / 2, y: mid - hh, width: bw, height: hh, class: 'add' });
      r.append(el('title', {}, label));
      svg.append(r);
    }
    if (b.removed) {
      const hh = b.removed * barUnit;
      const r = el('rect', { x: x(k) - bw / 2, y: mid, width: bw, height: hh, class: 'del' });
      r.append(el('title', {}, label));
      svg.append(r);
    }
  });
  const yOf = (v) => T + (H - T - B) * (1 - v / maxTotal);
  svg.append(el('polyline', { points: buckets.map((b, k) => `${x(k)},${yOf(b.total)}`).join(' '), class: 'total' }));
  let added = 0, removed = 0;
  for (const d of days) { added += d.added; removed += d.removed; }
  return h('div', { class: 'timeline', id: 'timeline' }, svg,
    h('div', { class: 'legend muted' }, h('span', { class: 'key total' }, 'facts standing'), h('span', { class: 'key add' }, `added (+${added})`),
      by === 'commit' ? h('span', { class: 'key del' }, `removed (−${removed})`) : null, h('span', {}, `per ${weekly ? 'week' : 'day'}`)));
}

async function searchPage(params) {
  const q = h('input', { id: 'search-q', type: 'search', value: params.get('q') || '', placeholder: 'Search every shard', 'aria-label': 'Search', size: 40 });
  const form = h('form', { class: 'filters' }, q, h('button', { class: 'primary' }, 'Search'));
  form.addEventListener('submit', (e) => { e.preventDefault(); location.hash = '#/search?q=' + enc(q.value); });
  const parts = [h('h1', {}, 'Search'), form];
  if (params.get('q')) {
    const res = await api('GET', '/v1/recall?' + new URLSearchParams({ q: params.get('q'), k: '50', explain: 'true' }));
    parts.push(h('p', { class: 'muted' }, `${res.hits.length} hit(s) in ${res.searched.length} shard(s)`),
      h('ol', { id: 'search-hits', class: 'hits' }, res.hits.map((hit) => h('li', { dataset: { shard: hit.shard, id: hit.id } },
        h('div', {}, hit.note ? h('a', { href: `#/note/${hit.shard}/${hit.note}` }, hit.text) : h('a', { href: `#/fact/${hit.shard}/${hit.id}` }, hit.text)),
        h('div', { class: 'muted' }, `${hit.shard} · ${hit.date} · ${hit.tier}${hit.note ? ' · note ' + hit.note : ''} · score ${hit.score.toFixed(2)}`,
          hit.explain && hit.explain.terms ? ' · ' + hit.explain.terms.map((t) => `${t.term} ${t.weight.toFixed(2)}`).join(', ') : '')))));
  }
  show(...parts);
  q.focus();
}

async function learningPage(params) {
  const from = h('input', { id: 'learning-from', type: 'date', name: 'from', value: params.get('from') || '' });
  const to = h('input', { id: 'learning-to', type: 'date', name: 'to', value: params.get('to') || '' });
  const form = h('form', { class: 'filters' }, h('label', {}, 'Learned from', from), h('label', {}, 'to', to), h('button', {}, 'Show'));
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    const q = new URLSearchParams();
    for (const el of [from, to]) if (el.value) q.set(el.name, el.value);
    location.hash = '#/learning?' + q;
  });
  const q = new URLSearchParams();
  for (const k of ['from', 'to']) if (params.get(k)) q.set(k, params.get(k));
  const st = await api('GET', '/v1/stats/learning?' + q);
  const pct = (r) => (100 * r).toFixed(1) + '%';
  const undoneList = (r) => h('tr', { class: 'undone-list' }, h('td', { colspan: 7 },
    r.undone.length === 0 ? h('p', { class: 'muted' }, 'None undone.') : h('ul', {}, r.undone.map((u) => h('li', {},
      h('a', { href: `#/fact/${u.shard}/${u.fact}` }, u.subject), h('span', { class: 'muted' }, ` · ${u.shard} · ${u.how} by ${u.by}, ${when(u.at)}`))))));
  show(h('h1', {}, 'Learning'),
    h('p', { class: 'muted' }, 'Per model, prompt and agent: facts learned, and those people then reverted, forgot or edited within 7 and 30 days. Counted from commit trailers, so git log gives the same figures.'),
    form,
    st.rows.length === 0 ? h('p', {}, 'No learned facts in this period.')
      : h('table', { id: 'learning' },
        h('thead', {}, h('tr', {}, ['Model', 'Prompt', 'Agent', 'Learned', 'Undone in 7 days', 'Undone in 30 days', ''].map((t) => h('th', {}, t)))),
        h('tbody', {}, st.rows.flatMap((r) => {
          const row = h('tr', { dataset: { model: r.model, prompt: r.prompt, agent: r.agent } },
            h('td', { 'data-label': 'Model' }, r.model || '–'), h('td', { 'data-label': 'Prompt' }, r.prompt_name ? [r.prompt_name, h('div', { class: 'mono muted' }, r.prompt)] : h('span', { class: 'mono' }, r.prompt || '–')),
            h('td', { 'data-label': 'Agent' }, r.agent), h('td', { class: 'num', 'data-label': 'Learned' }, String(r.learned)),
            h('td', { class: 'num w7', 'data-label': 'Undone in 7 days' }, `${r.within_7_days.total} (${pct(r.within_7_days.rate)})`, h('div', { class: 'muted' }, `${r.within_7_days.reverted} reverted · ${r.within_7_days.forgotten} forgotten · ${r.within_7_days.edited} edited`)),
            h('td', { class: 'num w30', 'data-label': 'Undone in 30 days' }, `${r.within_30_days.total} (${pct(r.within_30_days.rate)})`, h('div', { class: 'muted' }, `${r.within_30_days.reverted} reverted · ${r.within_30_days.forgotten} forgotten · ${r.within_30_days.edited} edited`)),
            h('td', {}, h('button', { class: 'show-undone', disabled: r.undone.length === 0, onclick: (e) => {
              const next = row.nextElementSibling;
              if (next && next.classList.contains('undone-list')) { next.remove(); e.target.textContent = 'Show undone'; return; }
              row.after(undoneList(r));
              e.target.textContent = 'Hide';
            } }, r.undone.length ? 'Show undone' : 'None undone')));
          return [row];
        }))));
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
  show(...head, form,
    notes.length === 0 ? h('p', { class: 'muted' }, 'No notes.')
      : h('table', { id: 'notes' }, h('thead', {}, h('tr', {}, h('th', {}, 'Note'), h('th', {}, 'Title'), h('th', { class: 'hide-narrow' }, 'Size'))),
        h('tbody', {}, notes.map((n) => h('tr', {},
          h('td', {}, h('a', { href: `#/note/${shard}/${n.path}` }, n.path)), h('td', {}, n.title || ''),
          h('td', { class: 'hide-narrow' }, `${n.size} bytes`))))));
}

// rendered is a note's Markdown as the server renders and sanitises it.
async function rendered(text) {
  const resp = await fetch('/markdown', { method: 'POST', body: text, credentials: 'same-origin', headers: { 'Content-Type': 'text/markdown' } });
  if (!resp.ok) throw new APIError('internal', 'could not render the note: ' + resp.status);
  const box = h('div', { class: 'markdown', id: 'note-rendered' });
  box.innerHTML = await resp.text(); // sanitised by memd (goldmark and bluemonday)
  // An image on another site would learn who reads the note, and when (the
  // page's policy blocks loading it): a link to it instead.
  for (const img of box.querySelectorAll('img')) {
    img.replaceWith(h('a', { href: img.getAttribute('src'), target: '_blank', rel: 'noopener noreferrer', class: 'image-link' }, '[image: ' + (img.getAttribute('alt') || img.getAttribute('src')) + ']'));
  }
  return box;
}

// diffBlock shows a unified diff with its lines coloured.
function diffBlock(diff) {
  return h('pre', { class: 'diff' }, diff.split('\n').filter((l, i, all) => l !== '' || i < all.length - 1).map((l) =>
    h('span', { class: l.startsWith('@@') ? 'hunk' : l.startsWith('+') && !l.startsWith('+++') ? 'add' : l.startsWith('-') && !l.startsWith('---') ? 'del' : '' }, l + '\n')));
}

async function notePage(shard, path) {
  const gen = routeGen;
  const [note, history] = await Promise.all([api('GET', notePath(shard, path)), api('GET', notePath(shard, path) + ':history?limit=20')]);
  const versions = history.versions || [];
  const last = versions[0];
  const out = h('div');
  const body = await rendered(note.text);
  if (gen !== routeGen) return; // the person moved on while it rendered
  const edit = () => {
    const text = h('textarea', { id: 'note-text', 'aria-label': 'Note text' });
    text.value = note.text;
    const save = h('button', { class: 'primary', id: 'note-save' }, 'Save');
    const problem = h('div', { id: 'note-problem' });
    const form = h('form', {}, problem, text, h('div', { class: 'actions' }, save, h('button', { type: 'button', onclick: () => route() }, 'Cancel')));
    form.addEventListener('submit', async (e) => {
      e.preventDefault();
      save.disabled = true;
      try {
        const res = await saveNote(shard, path, note, text.value);
        toast(res.commit ? `Saved as commit ${short(res.commit)}` : 'No change');
        route();
      } catch (err) {
        // One message, replaced on each try, in words a person can act on.
        problem.replaceChildren(h('p', { class: 'error', role: 'alert' }, conflictMessage(err)));
      } finally {
        save.disabled = false;
      }
    });
    body.replaceWith(form);
    text.focus();
  };
  show(
    h('p', {}, h('a', { href: `#/shard/${shard}/notes` }, '← notes of ' + shard)),
    h('h1', {}, path),
    h('p', { class: 'muted', id: 'note-changed' }, last
      ? ['last changed by ', h('strong', {}, last.author.name), ` · ${when(last.time)} · commit `, h('span', { class: 'mono' }, short(last.commit)),
        last.subject ? ` · ${last.subject}` : '']
      : 'never committed'),
    h('div', { class: 'actions' }, h('button', { id: 'note-edit', onclick: edit }, 'Edit')),
    out, body,
    h('h2', {}, 'History'),
    h('div', { id: 'note-history' }, versions.map((v) => h('details', { class: 'version', dataset: { hash: v.commit } },
      h('summary', {}, h('span', { class: 'mono' }, short(v.commit)), ' ', h('strong', {}, v.author.name), h('span', { class: 'muted' }, ` ${when(v.time)} `), v.subject),
      trailers(v), diffBlock(v.diff)))),
    versions.length === 20 ? h('p', { class: 'muted' }, 'The 20 most recent changes; git log in the shard has them all.') : null);
}

// conflictMessage says why a save was refused, in words a person can act
// on.
function conflictMessage(err) {
  switch (err.code) {
    case 'anchor_not_found':
    case 'anchor_ambiguous':
    case 'revision_mismatch':
      return 'Someone changed the lines you edited since you opened this note, so your change was not saved. ' +
        'Your text is still in the box: copy what you changed, reload the note to see theirs, and make your change again.';
    default:
      return `Not saved: ${err.message}`;
  }
}

// lineHunks compares two texts line by line, whatever their lines end
// with, and returns the lines of each and the changed regions: [oldStart,
// oldEnd, newStart, newEnd) in lines. Common head and tail are set aside
// first; what is left is compared by longest common subsequence when it is
// small enough, or taken as one region.
function lineHunks(a, b) {
  const x = a.split(/(?<=\n)/), y = b.split(/(?<=\n)/);
  const norm = (l) => l.replace(/\r\n$/, '\n');
  const xn = x.map(norm), yn = y.map(norm);
  let pre = 0;
  while (pre < xn.length && pre < yn.length && xn[pre] === yn[pre]) pre++;
  let suf = 0;
  while (suf < xn.length - pre && suf < yn.length - pre && xn[xn.length - 1 - suf] === yn[yn.length - 1 - suf]) suf++;
  const xs = xn.slice(pre, xn.length - suf), ys = yn.slice(pre, yn.length - suf);
  if (xs.length === 0 && ys.length === 0) return { x, y, hunks: [] };
  if (xs.length * ys.length > 4e6) return { x, y, hunks: [[pre, x.length - suf, pre, y.length - suf]] };
  const n = xs.length, m = ys.length;
  const lcs = Array.from({ length: n + 1 }, () => new Int32Array(m + 1));
  for (let i = n - 1; i >= 0; i--) for (let j = m - 1; j >= 0; j--) lcs[i][j] = xs[i] === ys[j] ? lcs[i + 1][j + 1] + 1 : Math.max(lcs[i + 1][j], lcs[i][j + 1]);
  const hunks = [];
  let i = 0, j = 0, open = null;
  const close = () => { if (open) { hunks.push([open[0] + pre, i + pre, open[1] + pre, j + pre]); open = null; } };
  while (i < n || j < m) {
    if (i < n && j < m && xs[i] === ys[j]) { close(); i++; j++; continue; }
    if (!open) open = [i, j];
    if (i < n && (j === m || lcs[i + 1][j] >= lcs[i][j + 1])) i++; else j++;
  }
  close();
  return { x, y, hunks };
}

// noteEdits turns a person's new text (as a textarea gives it, lines ending
// in \n) into exact replace edits of the text they opened: each changed
// region with enough unchanged lines around it to be found once. Lines the
// person did not change keep their own line ends; new lines take the
// note's (\r\n where most lines have it). A change elsewhere in the note
// meanwhile does not touch the edits; a change to the same lines makes
// their anchor fail. The edits are checked by applying them here as memd
// will, one after the other; regions whose edits would meet are joined.
function noteEdits(before, after) {
  const { x, y, hunks } = lineHunks(before, after);
  if (hunks.length === 0) return [];
  const crlf = x.filter((l) => l.endsWith('\r\n')).length * 2 > x.length;
  const line = (l) => (crlf && /[^\r]\n$|^\n$/.test(l) ? l.slice(0, -1) + '\r\n' : l);
  const once = (text, find) => { const at = text.indexOf(find); return find !== '' && at >= 0 && text.indexOf(find, at + 1) < 0; };
  // What the note should read: the opened text with each region replaced.
  let target = '', at = 0;
  for (const [x0, x1, y0, y1] of hunks) {
    target += x.slice(at, x0).join('') + y.slice(y0, y1).map(line).join('');
    at = x1;
  }
  target += x.slice(at).join('');
  // An edit of lines [x0, x1) of the old text into [y0, y1) of the new,
  // with up to 20 lines around it until its text occurs once.
  const anchored = (x0, x1, y0, y1) => {
    for (let c = 1; c <= 20; c++) {
      const lo = Math.max(0, x0 - c), hi = Math.min(x.length, x1 + c);
      const find = x.slice(lo, hi).join('');
      if (once(before, find) || (lo === 0 && hi === x.length)) {
        return { op: 'replace', exact: true, find, replace: x.slice(lo, x0).join('') + y.slice(y0, y1).map(line).join('') + x.slice(x1, hi).join('') };
      }
    }
    return null;
  };
  const whole = [{ op: 'replace', exact: true, find: before, replace: target }];
  // Groups of regions, each sent as one edit; joined where edits meet.
  let groups = hunks.map((hk) => [hk]);
  for (;;) {
    const edits = [];
    for (const g of groups) {
      const e = anchored(g[0][0], g[g.length - 1][1], g[0][2], g[g.length - 1][3]);
      if (!e) return whole;
      edits.push(e);
    }
    let cur = before, failed = -1;
    for (let k = 0; k < edits.length && failed < 0; k++) {
      if (!once(cur, edits[k].find)) { failed = k; break; }
      const where = cur.indexOf(edits[k].find);
      cur = cur.slice(0, where) + edits[k].replace + cur.slice(where + edits[k].find.length);
    }
    if (failed < 0 && cur === target) return edits;
    if (groups.length === 1) return whole;
    // Join the edit that failed with the one before it (or, when the text
    // came out wrong, everything).
    groups = failed > 0 ? [...groups.slice(0, failed - 1), [...groups[failed - 1], ...groups[failed]], ...groups.slice(failed + 1)] : [groups.flat()];
  }
}

// saveNote writes a person's new text as anchored edits of the text they
// opened, so an edit someone made meanwhile elsewhere in the note stays,
// and one to the same lines refuses the save rather than being overwritten.
async function saveNote(shard, path, note, text) {
  if (note.text === '') {
    // An empty note has no line to anchor an edit to: it is written anew.
    // Nothing changed is no commit; what the note could not hold is
    // refused before the empty note goes, and put back if writing it
    // anew fails all the same.
    if (text === '') return {};
    if (new TextEncoder().encode(text).length > 256 * 1024) throw new APIError('too_large', 'a note holds at most 256 KiB');
    await api('DELETE', notePath(shard, path) + '?expectedRevision=' + note.revision);
    try {
      return await api('POST', shardPath(shard) + '/notes', { path, text });
    } catch (err) {
      await api('POST', shardPath(shard) + '/notes', { path, text: '' }).catch(() => {});
      throw err;
    }
  }
  const edits = noteEdits(note.text, text);
  if (edits.length === 0) return {};
  return api('POST', notePath(shard, path) + ':edit', { edits });
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
  show(h('h1', {}, 'Live'), h('p', { class: 'muted' }, 'Every commit in every shard as it happens (newest first).'), list);
  listen(draw);
}

async function learnerPage() {
  const st = await api('GET', '/v1/status');
  const l = st.learning;
  const parts = [h('h1', {}, 'Learner'),
    h('p', { id: 'learner-state' }, l.enabled ? `On, with ${l.model}: ${l.pending} pending, ${l.failed} failed.` : `Off${l.reason ? ': ' + l.reason : ''}.`)];
  const sy = l.synthesis;
  if (sy) {
    parts.push(h('p', { id: 'synthesis-state' }, `Synthesis on (${sy.every ? 'every ' + sy.every + ' learned exchanges, and ' : ''}by memd synthesize), approved by ${sy.approver}: `,
      `${sy.applied} changes applied, ${sy.refused} refused because they touched facts written on purpose, ${sy.rejected} rejected by the approver.`));
  }
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
  show(...parts);
  listen((ev) => { if (ev.type === 'learner_failed' || ev.type === 'learned') route(); });
}

// reviewPage lists what models proposed for agents in review mode, each
// with the exchange it came from, to accept into main or reject.
async function reviewPage() {
  const [{ proposals }, st, { agents }] = await Promise.all([api('GET', '/v1/proposals'), api('GET', '/v1/status'), api('GET', '/v1/agents')]);
  const setReview = async (name, on, button) => {
    button.disabled = true;
    try {
      await api('PUT', '/v1/agents/' + enc(name) + '/review', { on });
      toast(on ? `${name} is in review mode` : `${name} is out of review mode`);
      route();
    } catch (err) {
      button.disabled = false;
      view.prepend(errorBox(err));
    }
  };
  const r = st.review || { pending: 0, accepted: 0, rejected: 0 };
  const decide = async (verdict, ids, button) => {
    button.disabled = true;
    try {
      const res = await api('POST', '/v1/proposals/review', { verdict, ids });
      toast(`${verdict === 'accept' ? 'Accepted' : 'Rejected'} ${res.reviewed.length}`);
      route();
    } catch (err) {
      button.disabled = false;
      view.prepend(errorBox(err));
    }
  };
  const card = (p) => {
    const c = p.commit;
    const pv = c.provenance || {};
    return h('div', { class: 'proposal commit', dataset: { id: p.id } },
      h('div', { class: 'head' }, h('a', { href: '#/shard/' + c.shard }, c.shard), h('strong', {}, c.author.name),
        h('span', { class: 'muted' }, `${pv.learned_by || ''}${pv.model ? ' · ' + pv.model : ''} · ${when(c.time)}`), h('span', { class: 'mono muted' }, p.id)),
      (c.changes || []).map(changeLine),
      (pv.evidence || []).length ? h('p', { class: 'evidence' }, 'Evidence: ', pv.evidence.join(', '), pv.approved_by ? ` · approved by ${pv.approved_by}` : '') : null,
      (p.messages || []).length ? h('div', { class: 'conversation' }, p.messages.map(quoteBlock))
        : h('p', { class: 'muted' }, (pv.source_messages || []).length ? 'From messages ' + pv.source_messages.join(', ') + ' (their text is not kept).' : 'No source messages.'),
      h('div', { class: 'actions' },
        h('button', { class: 'accept', onclick: (e) => decide('accept', [p.id], e.target) }, 'Accept'),
        h('button', { class: 'reject', onclick: (e) => decide('reject', [p.id], e.target) }, 'Reject')));
  };
  show(
    h('h1', { id: 'review-title' }, 'Review'),
    h('p', { class: 'muted', id: 'review-state' }, `${r.pending} waiting · ${r.accepted} accepted · ${r.rejected} rejected. What models learn for agents in review mode waits here, on each shard's branch proposed, until you accept it into main.`),
    proposals.length === 0
      ? h('p', {}, 'No proposals wait for review. Put an agent in review mode with ', h('code', {}, 'memd agent review NAME on'), '.')
      // "All" is what this page shows: a proposal that arrived since is
      // not decided unseen.
      : [h('p', {}, h('button', { id: 'accept-all', onclick: (e) => decide('accept', proposals.map((p) => p.id), e.target) }, 'Accept all shown'), ' ',
        h('button', { id: 'reject-all', onclick: (e) => decide('reject', proposals.map((p) => p.id), e.target) }, 'Reject all shown')),
      h('div', { id: 'proposals' }, proposals.map(card))],
    h('h2', {}, 'Agents'),
    agents.length === 0 ? h('p', { class: 'muted' }, 'No agents yet.')
      : h('table', { id: 'review-agents' }, h('tbody', {}, agents.map((a) => h('tr', { dataset: { agent: a.name } },
        h('td', {}, a.name), h('td', {}, a.review ? 'review mode: what models learn waits here' : 'what models learn goes straight into memory'),
        h('td', {}, h('button', { class: 'toggle-review', onclick: (e) => setReview(a.name, !a.review, e.target) }, a.review ? 'Stop reviewing' : 'Review what it learns')))))),
  );
  listen(debounced((evs) => { if (evs.some((ev) => ev.type === 'proposed' || ev.type === 'rejected')) route(); }, 1000));
}

// remoteState says in a few words how a shard stands with its remote.
function remoteState(r) {
  if (r.error) return 'error: ' + r.error;
  if (r.pending) return 'push pending';
  if ((r.conflicts || []).length) return 'merged with conflicts to settle in ' + r.conflicts.join(', ');
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
  show(
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

window.addEventListener('hashchange', route);
connectFeed();
route();
