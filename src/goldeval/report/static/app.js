/* goldeval scorecard page: state, the controls (retriever, k), the metric table, the address, the update
 * loop and live reload. Hand-written, no dependencies, no network beyond its own server's data (api/).
 * The other scripts: dom.js (helpers), data.js (every lookup into the results), metrics.js (the metric
 * table and headline), plot.js (the metrics against k), questions.js (the
 * questions table and the details panel), panels.js (compare, off-topic, breakdown), lifecycle.js
 * (judged coverage, synthetic leakage, the trend) and fixes.js (label fixes from a miss).
 */
'use strict';
(function (G) {
  const { $, el, clear, f3 } = G;
  const POLL_MS = 2000;
  const TABS = ['questions', 'side', 'compare', 'offtopic', 'breakdown', 'synthetic', 'trend', 'judges'];

  const state = {
    files: [], runs: [], active: 0, k: 5, prevK: null, maxK: 10, tab: 'questions',
    sort: { key: 'order', dir: 1 }, filter: { mode: 'all', tag: '', source: '', text: '' },
    selected: null, shown: 300, cmpA: 0, cmpB: 1, cmpNew: false, roc: null, ready: false,
    lifecycle: null, trendMetric: null,
  };
  G.state = state;

  // ---------- header, notes, controls ----------
  /** The golden set's changelog summary: the served set's as it is now (`/api/lifecycle.json` fixes.changes,
   * computed by the server after every fix), else the one the results file recorded. */
  G.goldenChanges = function goldenChanges(file) {
    const live = state.lifecycle && state.lifecycle.fixes && state.lifecycle.fixes.changes;
    return live && state.files.length === 1 ? live : (file.data.golden || {}).changes;
  };

  G.renderContext = renderContext;
  function renderContext() {
    const box = clear($('context'));
    const first = state.files[0].data;
    const corpus = first.corpus || {};
    if (document.title === 'goldeval scorecard' && (corpus.name || corpus.path)) document.title = `goldeval · ${corpus.name || corpus.path}`;
    const golden = first.golden || {};
    const bits = [];
    if (corpus.name || corpus.path) {
      bits.push(['corpus', `${corpus.name || corpus.path}${corpus.n_documents ? ` · ${corpus.n_documents} docs` : ''}` +
        `${corpus.n_passages && corpus.n_passages !== corpus.n_documents ? ` · ${corpus.n_passages} passages` : ''}`]);
    }
    if (golden.path || golden.n_questions) bits.push(['golden set', `${golden.path ? `${golden.path} · ` : ''}${golden.n_answerable ?? '?'} answerable + ${golden.n_off_topic ?? 0} off-topic`]);
    const changes = G.goldenChanges(state.files[0]);
    if (changes && changes.text) bits.push(['labels', String(changes.text)]);
    bits.push(['level', `${first.level || 'doc'} · top ${first.depth || '?'} retrieved`]);
    if (state.files.length > 1) bits.push(['files', state.files.map((f) => f.name).join(', ')]);
    else if (first.created) bits.push(['run', `${first.created.replace('T', ' ')}${first.goldeval_version ? ` · goldeval ${first.goldeval_version}` : ''}`]);
    for (const [label, value] of bits) box.append(el('span', { class: 'ctx' }, el('span', { class: 'ctx-label', text: label }), value));
    const notes = clear($('notes'));
    for (const f of state.files) {
      for (const note of f.data.notes || []) notes.append(el('p', { class: 'file-note' }, state.files.length > 1 ? `${f.name}: ` : '', String(note)));
    }
    notes.hidden = !notes.childNodes.length;
  }

  function renderControls() {
    const picker = clear($('run-picker'));
    const select = clear($('run-select'));
    for (const run of state.runs) {
      picker.append(el('button', { class: 'chip', type: 'button', dataset: { run: run.index }, onclick: () => setActive(run.index), title: `show ${run.label}` },
        G.dot(run.color), el('span', { class: 'chip-name', text: run.label })));
      select.append(el('option', { value: run.index, text: run.label }));
    }
    const buttons = clear($('k-buttons'));
    for (const k of G.kButtons(state.maxK, state.files[0])) {
      buttons.append(el('button', { type: 'button', dataset: { k }, onclick: () => setK(k), text: String(k), title: `k = ${k}` }));
    }
    const input = $('k-input');
    input.max = String(state.maxK);
    $('k-slider').max = String(state.maxK);
    $('k-of').textContent = `of 1–${state.maxK}`;
    syncControls();
  }

  function syncControls() {
    for (const b of $('k-buttons').children) b.setAttribute('aria-pressed', Number(b.dataset.k) === state.k ? 'true' : 'false');
    for (const b of $('run-picker').children) b.setAttribute('aria-pressed', Number(b.dataset.run) === state.active ? 'true' : 'false');
    $('run-select').value = String(state.active);
    $('k-input').value = String(state.k);
    $('k-slider').value = String(state.k);
    $('k-down').disabled = state.k <= 1;
    $('k-up').disabled = state.k >= state.maxK;
    $('hit-col-head').textContent = `hit@${state.k}`;
  }

  /** Move k; an empty or invalid value (the field cleared, then Enter) keeps k as it is. */
  function setK(k) {
    const asked = String(k).trim() === '' ? NaN : Math.round(Number(k));
    const next = Math.max(1, Math.min(state.maxK, asked));
    if (!Number.isFinite(asked) || next === state.k) { syncControls(); return; }
    state.prevK = state.k;
    state.k = next;
    update();
  }

  function setActive(index) {
    if (index === state.active || !state.runs[index]) return;
    state.active = index;
    state.selected = state.selected && state.runs[index].byId.has(state.selected) ? state.selected : null;
    state.shown = 300;
    G.refreshFilters();
    update();
  }

  // ---------- the view in the address (#k=5&tab=compare&run=1&q=q07), so a link reopens it ----------
  function saveHash() {
    if (!state.ready) return;
    const params = new URLSearchParams({ k: state.k, tab: state.tab, run: state.active });
    if (state.filter.mode !== 'all') params.set('show', state.filter.mode);
    if (state.selected) params.set('q', state.selected);
    try { history.replaceState(null, '', `#${params}`); } catch (err) { /* some file:// setups refuse; the page works without */ }
  }
  G.saveHash = saveHash;

  function loadHash() {
    const params = new URLSearchParams(location.hash.slice(1));
    const k = Number(params.get('k'));
    if (Number.isInteger(k) && k >= 1) state.k = Math.min(k, state.maxK);
    const run = Number(params.get('run'));
    if (params.has('run') && Number.isInteger(run) && run >= 0 && run < state.runs.length) state.active = run;
    if (TABS.includes(params.get('tab')) && G.tabAvailable(params.get('tab'))) state.tab = params.get('tab');
    if (['miss', 'hit', 'flipped', 'offtopic'].includes(params.get('show'))) state.filter.mode = params.get('show');
    const q = params.get('q');
    if (q && state.runs[state.active].byId.has(q)) state.selected = q;
  }

  // ---------- tabs, update loop ----------
  function showTab(tab) {
    state.tab = tab;
    for (const b of document.querySelectorAll('#tabs [role=tab]')) {
      b.setAttribute('aria-selected', b.dataset.tab === tab ? 'true' : 'false');
      b.tabIndex = b.dataset.tab === tab ? 0 : -1;  // one tab stop; the arrow keys move between tabs
    }
    for (const name of TABS) $(`tab-${name}`).hidden = name !== tab;
    renderTab();
  }
  G.showTab = showTab;

  function renderTab() {
    saveHash();
    if (state.tab === 'questions') { G.renderQuestions(); G.renderDetails(); } else if (state.tab === 'compare') G.renderCompare();
    else if (state.tab === 'side') G.renderSide();
    else if (state.tab === 'offtopic') G.renderOffTopic();
    else if (state.tab === 'synthetic') G.renderSynthetic();
    else if (state.tab === 'trend') G.renderTrend();
    else if (state.tab === 'judges') G.renderJudges();
    else G.renderBreakdown();
  }

  function update() {
    syncControls();
    G.updateMetricTable();
    G.updatePlot();
    renderTab();
  }
  G.update = update;
  G.setK = setK;
  G.setActive = setActive;

  /** Shortcuts outside form fields: [ and ] move k, Escape closes the details. */
  function onKey(event) {
    const tag = event.target && event.target.tagName;
    if (event.key === 'Escape' && state.selected) { G.select(null); return; }
    if (tag === 'INPUT' || tag === 'SELECT' || tag === 'TEXTAREA' || event.ctrlKey || event.metaKey || event.altKey) return;
    if (event.key === ']') setK(state.k + 1);
    else if (event.key === '[') setK(state.k - 1);
  }

  /** Left and right arrows (Home, End) move to the neighbouring visible tab, as the ARIA tabs pattern has it. */
  function onTabKey(event) {
    const tabs = [...document.querySelectorAll('#tabs [role=tab]')].filter((b) => !b.hidden);
    const at = tabs.findIndex((b) => b.dataset.tab === state.tab);
    const to = { ArrowRight: at + 1, ArrowLeft: at - 1, Home: 0, End: tabs.length - 1 }[event.key];
    if (to === undefined || !tabs.length) return;
    event.preventDefault();
    const next = tabs[(to + tabs.length) % tabs.length];
    showTab(next.dataset.tab);
    next.focus();
  }

  function fail(message) {
    $('loading').hidden = true;
    const box = $('fatal');
    box.hidden = false;
    box.textContent = `goldeval could not show these results: ${message}`;
  }

  /** The sticky table headers and the details panel sit below the sticky controls, whatever their height. */
  function trackStickyHeight() {
    const set = () => document.documentElement.style.setProperty('--sticky-top', `${$('controls').offsetHeight}px`);
    if (typeof ResizeObserver === 'function') new ResizeObserver(set).observe($('controls'));
    set();
  }

  /** Event handlers that do not depend on the results: bound once. */
  function bindOnce() {
    const input = $('k-input');
    input.addEventListener('change', () => setK(input.value));
    input.addEventListener('keydown', (e) => { if (e.key === 'Enter') setK(input.value); });
    $('k-slider').addEventListener('input', (e) => setK(e.target.value));
    $('k-down').addEventListener('click', () => setK(state.k - 1));
    $('k-up').addEventListener('click', () => setK(state.k + 1));
    $('run-select').addEventListener('change', (e) => setActive(Number(e.target.value)));
    $('backdrop').addEventListener('click', () => G.select(null));
    G.bindQuestions();
    G.bindPanels();
    G.bindExport();
    for (const b of document.querySelectorAll('#tabs [role=tab]')) b.addEventListener('click', () => showTab(b.dataset.tab));
    $('tabs').addEventListener('keydown', onTabKey);
    document.addEventListener('keydown', onKey);
  }

  /** Show a payload; on a reload keep the reader's place (k, retriever, tab, filters, question). */
  function apply(payload, first) {
    const runs = G.buildRuns(payload.files);
    if (!runs.length) { fail('the results contain no retriever'); return false; }
    state.files = payload.files;
    state.payload = payload;
    state.runs = runs;
    state.version = payload.version || null;
    state.rowsShown = null;
    state.roc = null;
    state.maxK = Math.max(1, Math.min(...state.files.map((f) => f.data.depth || Math.max(1, ...(f.data.k || [10])))));
    if (first) {
      state.k = Math.min(state.maxK, G.startK(state.files[0]));
      loadHash();
    } else {
      state.k = Math.min(state.k, state.maxK);
      state.prevK = state.prevK === null ? null : Math.min(state.prevK, state.maxK);
      state.active = Math.min(state.active, runs.length - 1);
      if (state.selected && !runs[state.active].byId.has(state.selected)) state.selected = null;
    }
    renderContext();
    renderControls();
    G.renderMetricTable();
    G.renderPlot();
    G.refreshFilters();
    G.fillCompare(first);
    G.syncOptionalTabs();
    if (!G.tabAvailable(state.tab)) state.tab = 'questions';
    state.ready = true;
    showTab(state.tab);
    update();
    window.goldeval = { state, runs, setK, version: state.version, ready: true };
    return true;
  }

  /** Served pages follow their results files: poll the version, reload when it changes. */
  async function poll() {
    const live = $('live');
    try {
      const response = await G.fetchData('version');
      if (!response.ok) throw new Error(`HTTP ${response.status}`);
      const info = await response.json();
      if (info.version && info.version !== state.version && apply(await G.loadPayload(), false)) {
        live.textContent = `results reloaded at ${new Date().toLocaleTimeString()}`;
      }
      if (info.lifecycle && info.lifecycle !== (state.lifecycle && state.lifecycle.version)) await G.reloadLifecycle();
      live.classList.toggle('warn', Boolean(info.error));
      if (info.error) live.textContent = `${info.error} (showing the previous results)`;
    } catch (err) {
      live.classList.add('warn');
      live.textContent = 'the server is not answering: showing the last results';
    }
    setTimeout(poll, POLL_MS);
  }

  async function start() {
    let payload;
    try { payload = await G.loadPayload(); } catch (err) { fail(err.message || String(err)); return; }
    bindOnce();
    for (const id of ['controls', 'scorecard', 'tabs']) $(id).hidden = false;
    trackStickyHeight();
    state.lifecycle = await G.loadLifecycle(payload);
    if (!apply(payload, true)) return;
    $('loading').hidden = true;
    $('foot').textContent = `goldeval ${state.files[0].data.goldeval_version || ''} · every number is looked up in the results file, ` +
      'where goldeval computed it · keys: [ and ] move k, Esc closes the details';
    if (state.selected) {
      const row = $('q-body').querySelector(`tr[data-qid="${CSS.escape(state.selected)}"]`);
      if (row) row.scrollIntoView({ block: 'center' });
    }
    document.body.dataset.ready = 'true';
    if (G.served() && state.version && state.version !== 'fixed') {
      $('live').textContent = 'live: follows the results files';
      setTimeout(poll, POLL_MS);
    }
  }

  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', start); else start();
}(window.GE = window.GE || {}));
