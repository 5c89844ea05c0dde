/* goldeval scorecard page. Hand-written, no dependencies, no network beyond its own results.json.
 *
 * Safety: every string that comes from the results (questions, document ids, titles, snippets, tags,
 * diagnoses) reaches the page through textContent or a text node, never innerHTML, so a document that
 * contains a script element or an img onerror attribute shows as text and cannot run.
 *
 * Metrics at any k: each question carries `ranks` (every expected id -> its 1-based rank within the
 * retrieved depth, or null) and `expected` (id -> graded relevance). hit@k, recall@k, precision@k and
 * nDCG@k at any k up to the depth follow from those two, with trec_eval's definitions (see
 * goldeval/metrics/definitions.py): precision divides by k, nDCG uses linear gains over the ideal
 * ordering of the expected grades, discounted by log2(rank + 1).
 */
'use strict';
(function () {
  const PALETTE = ['#2f6fde', '#d9480f', '#2b8a3e', '#9c36b5', '#c2255c', '#0b7285', '#e67700', '#5c677d'];
  const K_BUTTONS = [1, 3, 5, 10];
  const PAGE_ROWS = 300;
  const POLL_MS = 2000;
  const METRICS = [
    { key: 'hit', label: (k) => `hit@${k}`, json: (k) => `hit@${k}`, title: 'share of questions with a correct answer in the top k' },
    { key: 'recall', label: (k) => `recall@${k}`, json: (k) => `recall@${k}`, title: 'share of the expected answers found in the top k' },
    { key: 'precision', label: (k) => `precision@${k}`, json: (k) => `precision@${k}`, title: 'correct answers in the top k, divided by k' },
    { key: 'ndcg', label: (k) => `nDCG@${k}`, json: (k) => `ndcg@${k}`, title: 'graded gain discounted by log2(rank + 1), over the ideal ordering' },
    { key: 'mrr', label: () => 'MRR', json: () => 'mrr', fixed: true, title: '1 / rank of the first correct answer' },
    { key: 'p1', label: () => 'precision@1', json: () => 'precision@1', fixed: true, title: 'is the first result correct?' },
  ];

  const state = {
    files: [], runs: [], active: 0, k: 5, maxK: 10, tab: 'questions',
    sort: { key: 'order', dir: 1 }, filter: { mode: 'all', tag: '', source: '', text: '' },
    selected: null, shown: PAGE_ROWS, cmpA: 0, cmpB: 1, threshold: null, thresholdRun: -1,
  };
  const cache = new Map();

  // ---------- DOM helpers (text only) ----------
  const $ = (id) => document.getElementById(id);
  function el(tag, props, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(props || {})) {
      if (value === undefined || value === null || value === false) continue;
      if (key === 'class') node.className = value;
      else if (key === 'text') node.textContent = String(value);
      else if (key === 'dataset') Object.assign(node.dataset, value);
      else if (key.startsWith('on')) node.addEventListener(key.slice(2), value);
      else node.setAttribute(key, String(value));
    }
    for (const child of children) append(node, child);
    return node;
  }
  function append(node, child) {
    if (child === null || child === undefined || child === false) return;
    if (Array.isArray(child)) child.forEach((c) => append(node, c));
    else node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  function svg(tag, attrs) {
    const node = document.createElementNS('http://www.w3.org/2000/svg', tag);
    for (const [key, value] of Object.entries(attrs || {})) node.setAttribute(key, String(value));
    return node;
  }
  function clear(node) { while (node.firstChild) node.removeChild(node.firstChild); return node; }
  const f3 = (x) => (x === null || x === undefined || Number.isNaN(x) ? '—' : x.toFixed(3));
  const pct = (x) => `${(100 * x).toFixed(1)}%`;
  const fscore = (x) => (x === null || x === undefined ? '—' : Math.abs(x) >= 100 ? x.toFixed(1) : x.toFixed(3));
  const plural = (n, word) => `${n} ${word}${n === 1 ? '' : 's'}`;

  // ---------- metrics at any k ----------
  /** One question's metrics at cut-off k, from its ranks and graded expectations. */
  function questionAt(q, k) {
    let nRel = 0; let found = 0; let dcg = 0; let first = null;
    const gains = [];
    for (const [id, grade] of Object.entries(q.expected || {})) {
      if (!(grade > 0)) continue;
      nRel += 1; gains.push(grade);
      const r = (q.ranks || {})[id];
      if (r !== null && r !== undefined) {
        if (first === null || r < first) first = r;
        if (r <= k) { found += 1; dcg += grade / Math.log2(r + 1); }
      }
    }
    gains.sort((a, b) => b - a);
    let ideal = 0;
    for (let i = 0; i < Math.min(k, gains.length); i += 1) ideal += gains[i] / Math.log2(i + 2);
    return {
      hit: first !== null && first <= k ? 1 : 0,
      recall: nRel ? found / nRel : 0,
      precision: found / k,
      ndcg: ideal > 0 ? dcg / ideal : 0,
      mrr: first !== null ? 1 / first : 0,
      p1: first === 1 ? 1 : 0,
    };
  }

  /** Means over a run's answerable questions at k (off-topic questions are never averaged in). */
  function runAt(run, k, questions) {
    const key = questions ? null : `${run.index}|${k}`;
    if (key && cache.has(key)) return cache.get(key);
    const qs = (questions || run.questions).filter((q) => !q.off_topic);
    const sums = { hit: 0, recall: 0, precision: 0, ndcg: 0, mrr: 0, p1: 0 };
    for (const q of qs) {
      const m = questionAt(q, k);
      for (const name of Object.keys(sums)) sums[name] += m[name];
    }
    const out = { n: qs.length, hits: sums.hit };
    for (const name of Object.keys(sums)) out[name] = qs.length ? sums[name] / qs.length : 0;
    if (key) cache.set(key, out);
    return out;
  }

  // ---------- loading ----------
  async function loadPayload() {
    const tag = $('goldeval-data');
    const text = tag ? tag.textContent.trim() : '';
    let payload;
    if (text) payload = JSON.parse(text);
    else {
      const response = await fetch('results.json', { cache: 'no-store' });
      if (!response.ok) throw new Error(`could not load results.json (HTTP ${response.status})`);
      payload = await response.json();
    }
    if (payload && Array.isArray(payload.retrievers)) payload = { files: [{ name: 'results', data: payload }] };
    if (!payload || !Array.isArray(payload.files) || !payload.files.length) throw new Error('no results in the payload');
    return payload;
  }

  function buildRuns(files) {
    const runs = [];
    const multi = files.length > 1;
    files.forEach((file, fileIndex) => {
      for (const r of file.data.retrievers || []) {
        const questions = r.questions || [];
        questions.forEach((q, i) => { q._order = i; });
        runs.push({
          index: runs.length, file, fileIndex, r, questions,
          byId: new Map(questions.map((q) => [q.id, q])),
          label: multi ? `${file.name} · ${r.name}` : r.name,
          color: PALETTE[runs.length % PALETTE.length],
          depth: file.data.depth || 0,
          snippets: file.data.snippets || {},
        });
      }
    });
    return runs;
  }

  // ---------- header, controls ----------
  function renderContext() {
    const box = clear($('context'));
    const first = state.files[0].data;
    const corpus = first.corpus || {};
    if (document.title === 'goldeval scorecard' && (corpus.name || corpus.path)) document.title = `goldeval · ${corpus.name || corpus.path}`;
    const golden = first.golden || {};
    const bits = [];
    if (corpus.name || corpus.path) bits.push(['corpus', `${corpus.name || corpus.path}${corpus.n_documents ? ` · ${corpus.n_documents} docs` : ''}${corpus.n_passages && corpus.n_passages !== corpus.n_documents ? ` · ${corpus.n_passages} passages` : ''}`]);
    if (golden.path || golden.n_questions) bits.push(['golden set', `${golden.path ? `${golden.path} · ` : ''}${golden.n_answerable ?? '?'} answerable + ${golden.n_off_topic ?? 0} off-topic`]);
    bits.push(['level', `${first.level || 'doc'} · top ${first.depth || '?'} retrieved`]);
    if (state.files.length > 1) bits.push(['files', state.files.map((f) => f.name).join(', ')]);
    else if (first.created) bits.push(['run', `${first.created.replace('T', ' ')}${first.goldeval_version ? ` · goldeval ${first.goldeval_version}` : ''}`]);
    for (const [label, value] of bits) box.append(el('span', { class: 'ctx' }, el('span', { class: 'ctx-label', text: label }), value));
  }

  function renderControls() {
    const picker = clear($('run-picker'));
    for (const run of state.runs) {
      picker.append(el('button', {
        class: 'chip', type: 'button', 'aria-pressed': run.index === state.active ? 'true' : 'false',
        dataset: { run: run.index }, onclick: () => setActive(run.index), title: run.label,
      }, el('span', { class: 'dot', style: null }), run.label));
      picker.lastChild.firstChild.style.background = run.color;
    }
    const buttons = clear($('k-buttons'));
    for (const k of K_BUTTONS.filter((x) => x <= state.maxK)) {
      buttons.append(el('button', { type: 'button', dataset: { k }, onclick: () => setK(k), text: String(k) }));
    }
    const slider = $('k-slider');
    slider.max = String(state.maxK);
    slider.value = String(state.k);
    syncControls();
  }

  function syncControls() {
    for (const b of $('k-buttons').children) b.setAttribute('aria-pressed', Number(b.dataset.k) === state.k ? 'true' : 'false');
    for (const b of $('run-picker').children) b.setAttribute('aria-pressed', Number(b.dataset.run) === state.active ? 'true' : 'false');
    $('k-slider').value = String(state.k);
    $('k-value').textContent = `k = ${state.k}`;
    $('hit-col-head').textContent = `hit@${state.k}`;
  }

  function setK(k) {
    const next = Math.max(1, Math.min(state.maxK, Math.round(k)));
    if (next === state.k) return;
    state.k = next;
    update();
  }

  function setActive(index) {
    if (index === state.active) return;
    state.active = index;
    state.selected = state.selected && state.runs[index].byId.has(state.selected) ? state.selected : null;
    state.shown = PAGE_ROWS;
    refreshFilters();
    update();
  }

  // ---------- scorecard: metric bars with CI whiskers ----------
  function renderMetricTable() {
    const table = clear($('metric-table'));
    table.style.gridTemplateColumns = `minmax(150px, 1.2fr) repeat(${METRICS.length}, minmax(96px, 1fr))`;
    table.append(el('div', { class: 'mt-head mt-name', text: 'retriever' }));
    for (const m of METRICS) {
      table.append(el('div', { class: `mt-head${m.fixed ? ' fixed' : ''}`, dataset: { head: m.key }, title: m.title, text: m.label(state.k) }));
    }
    for (const run of state.runs) {
      const name = el('button', { class: 'mt-run', type: 'button', dataset: { run: run.index }, onclick: () => setActive(run.index), title: 'show this retriever below' },
        el('span', { class: 'dot' }), el('span', { class: 'mt-run-name', text: run.label }),
        el('span', { class: 'mt-run-sub', text: runSubtitle(run) }));
      name.querySelector('.dot').style.background = run.color;
      table.append(name);
      for (const m of METRICS) {
        const cell = el('div', { class: 'mcell', dataset: { run: run.index, metric: m.key } },
          el('div', { class: 'mc-top' }, el('span', { class: 'val num' }), el('span', { class: 'cnt num' })),
          el('div', { class: 'bar' }, el('div', { class: 'fill' }), el('div', { class: 'whisker' })));
        cell.querySelector('.fill').style.background = run.color;
        table.append(cell);
      }
    }
    const depths = [...new Set(state.runs.map((r) => r.depth))].join(', ');
    $('fixed-note').textContent = `MRR and precision@1 do not move with k: MRR scores the first correct answer wherever it ranks within the ${depths} retrieved, and precision@1 only ever looks at the first result.`;
  }

  function runSubtitle(run) {
    const r = run.r;
    const parts = [`${r.n_answerable ?? run.questions.filter((q) => !q.off_topic).length} answerable`, `${r.n_off_topic ?? 0} off-topic`];
    if (r.n_errors) parts.push(plural(r.n_errors, 'error'));
    return parts.join(' · ');
  }

  function updateMetricTable() {
    const k = state.k;
    for (const head of document.querySelectorAll('.mt-head[data-head]')) {
      head.textContent = METRICS.find((m) => m.key === head.dataset.head).label(k);
    }
    for (const row of document.querySelectorAll('.mt-run')) row.classList.toggle('active', Number(row.dataset.run) === state.active);
    for (const cell of document.querySelectorAll('.mcell')) {
      const run = state.runs[Number(cell.dataset.run)];
      const m = METRICS.find((x) => x.key === cell.dataset.metric);
      const agg = runAt(run, k);
      const value = agg[m.key];
      cell.dataset.value = String(value);
      cell.classList.toggle('active', run.index === state.active);
      cell.querySelector('.val').textContent = f3(value);
      const count = m.key === 'hit' || m.key === 'p1' ? `${Math.round(value * agg.n)}/${agg.n}` : '';
      cell.querySelector('.cnt').textContent = count;
      cell.querySelector('.fill').style.width = `${Math.max(0, Math.min(1, value)) * 100}%`;
      const ci = (run.r.intervals || {})[m.json(k)];
      const whisker = cell.querySelector('.whisker');
      if (Array.isArray(ci) && ci.length === 2 && ci.every((x) => typeof x === 'number')) {
        whisker.hidden = false;
        whisker.style.left = `${ci[0] * 100}%`;
        whisker.style.width = `${Math.max(0, ci[1] - ci[0]) * 100}%`;
        cell.title = `${m.label(k)} = ${f3(value)}, 95% interval ${f3(ci[0])} to ${f3(ci[1])} (${agg.n} questions)`;
      } else {
        whisker.hidden = true;
        const computed = run.file.data.k || [];
        const hasAny = Object.keys(run.r.intervals || {}).length > 0;
        cell.title = `${m.label(k)} = ${f3(value)} over ${agg.n} questions` +
          (hasAny && !m.fixed ? ` (intervals were computed at k = ${computed.join(', ')})` : '');
      }
    }
    $('headline').textContent = headline(state.runs[state.active], k);
    const anyCI = state.runs.some((r) => Object.keys(r.r.intervals || {}).length);
    $('scorecard-sub').textContent = `Means over answerable questions at k = ${k}; off-topic questions are counted apart, never averaged in as zeros.` +
      (anyCI ? ` Whiskers: ${ciMethod()}.` : '');
  }

  /** One sentence a newcomer can read: how often the answer is in the top k, and how often first. */
  function headline(run, k) {
    const m = runAt(run, k);
    if (!m.n) return `${run.label}: no answerable questions in this golden set.`;
    const first = Math.round(m.p1 * m.n);
    const off = run.questions.length - m.n;
    return `${run.label} puts a correct answer in the top ${k} for ${m.hits} of ${m.n} questions (${pct(m.hit)}); ` +
      `the first result is right for ${first}.${off ? ` ${plural(off, 'off-topic question')} counted apart.` : ''}`;
  }

  function ciMethod() {
    const st = state.files[0].data.stats;
    if (!st || typeof st !== 'object') return 'confidence intervals from the results file';
    const conf = typeof st.confidence === 'number' ? `${Math.round(st.confidence * 100)}% ` : '';
    return `${conf}intervals, ${st.method || 'bootstrap'}${st.resamples ? `, ${st.resamples} resamples` : ''}${st.seed !== undefined ? `, seed ${st.seed}` : ''}`;
  }

  // ---------- questions table ----------
  function refreshFilters() {
    const run = state.runs[state.active];
    const tags = [...new Set(run.questions.flatMap((q) => q.tags || []))].sort();
    const tagSelect = $('filter-tag');
    clear(tagSelect).append(el('option', { value: '', text: 'all tags' }));
    for (const t of tags) tagSelect.append(el('option', { value: t, text: t }));
    if (!tags.includes(state.filter.tag)) state.filter.tag = '';
    tagSelect.value = state.filter.tag;
    const sources = [...new Set(run.questions.map((q) => q.source || 'hand'))].sort();
    const sourceSelect = $('filter-source');
    clear(sourceSelect).append(el('option', { value: '', text: 'all' }));
    for (const s of sources) sourceSelect.append(el('option', { value: s, text: s }));
    if (!sources.includes(state.filter.source)) state.filter.source = '';
    sourceSelect.value = state.filter.source;
    $('filter-source-wrap').hidden = sources.length < 2;
  }

  function setupFilters() {
    const modes = [['all', 'All'], ['miss', 'Misses'], ['hit', 'Hits'], ['offtopic', 'Off-topic']];
    const seg = $('filter-mode');
    for (const [mode, label] of modes) {
      seg.append(el('button', { type: 'button', dataset: { mode }, text: label, onclick: () => { state.filter.mode = mode; state.shown = PAGE_ROWS; renderQuestions(); saveHash(); } }));
    }
    $('filter-tag').addEventListener('change', (e) => { state.filter.tag = e.target.value; renderQuestions(); });
    $('filter-source').addEventListener('change', (e) => { state.filter.source = e.target.value; renderQuestions(); });
    $('filter-text').addEventListener('input', (e) => { state.filter.text = e.target.value.trim().toLowerCase(); renderQuestions(); });
    for (const th of document.querySelectorAll('#q-table th[data-sort]')) {
      th.tabIndex = 0;
      const sort = () => {
        const key = th.dataset.sort;
        state.sort = state.sort.key === key ? { key, dir: -state.sort.dir } : { key, dir: 1 };
        renderQuestions();
      };
      th.addEventListener('click', sort);
      th.addEventListener('keydown', (e) => { if (e.key === 'Enter' || e.key === ' ') { e.preventDefault(); sort(); } });
    }
    $('show-more').addEventListener('click', () => { state.shown += PAGE_ROWS * 10; renderQuestions(); });
  }

  function firstHit(q, run) {
    return (q.top || [])[0] ? { hit: q.top[0], label: displayId(q.top[0], run) } : null;
  }
  function displayId(hit, run) {
    return run.file.data.level === 'chunk' || hit.doc === hit.id ? hit.id : hit.doc;
  }
  function isExpected(q, hit) {
    const exp = q.expected || {};
    return (exp[hit.id] || 0) > 0 || (exp[hit.doc] || 0) > 0;
  }

  function sortValue(q, key, k) {
    switch (key) {
      case 'hit': return q.off_topic ? -1 : questionAt(q, k).hit;
      case 'id': return q.id;
      case 'question': return q.question || '';
      case 'expected': return Object.keys(q.expected || {}).join(' ');
      case 'first': return (q.top || [])[0] ? (q.top[0].doc || q.top[0].id) : '';
      case 'rank': return q.off_topic ? Infinity : (q.rank ?? 1e9);
      default: return q._order;
    }
  }

  function visibleQuestions(run) {
    const { mode, tag, source, text } = state.filter;
    const k = state.k;
    const rows = run.questions.filter((q) => {
      if (mode === 'offtopic' && !q.off_topic) return false;
      if ((mode === 'miss' || mode === 'hit') && (q.off_topic || questionAt(q, k).hit !== (mode === 'hit' ? 1 : 0))) return false;
      if (tag && !(q.tags || []).includes(tag)) return false;
      if (source && (q.source || 'hand') !== source) return false;
      if (text) {
        const hay = [q.id, q.question, ...Object.keys(q.expected || {}), ...(q.top || []).slice(0, 1).map((h) => h.doc || h.id)].join(' ').toLowerCase();
        if (!hay.includes(text)) return false;
      }
      return true;
    });
    const { key, dir } = state.sort;
    const collator = new Intl.Collator(undefined, { numeric: true, sensitivity: 'base' });
    rows.sort((a, b) => {
      const va = sortValue(a, key, k); const vb = sortValue(b, key, k);
      const c = typeof va === 'string' ? collator.compare(va, vb) : va - vb;
      return c * dir || a._order - b._order;
    });
    return rows;
  }

  function renderQuestions() {
    const run = state.runs[state.active];
    const k = state.k;
    const rows = visibleQuestions(run);
    const body = $('q-body');
    const page = rows.slice(0, state.shown);
    const signature = `${run.index}|${page.map((q) => q.id).join('\u0000')}`;
    if (signature === state.rowsShown && page.length) {
      // Same rows in the same order (k moved): update the hit pills in place, nothing else moves.
      for (const tr of body.children) {
        const q = run.byId.get(tr.dataset.qid);
        if (q && !q.off_topic) setPill(tr.querySelector('.pill'), questionAt(q, k).hit);
      }
    } else {
      const fragment = document.createDocumentFragment();
      for (const q of page) fragment.append(questionRow(q, run, k));
      clear(body).append(fragment);
      state.rowsShown = signature;
    }
    if (!rows.length) body.append(el('tr', { class: 'empty' }, el('td', { colspan: 6, text: 'No question matches these filters.' })));
    const more = $('show-more');
    more.hidden = rows.length <= state.shown;
    more.textContent = `Show ${Math.min(rows.length - state.shown, PAGE_ROWS * 10)} more of ${rows.length}`;
    const agg = runAt(run, k);
    const misses = agg.n - agg.hits;
    const listed = rows.length > state.shown ? ` (first ${state.shown} listed)` : '';
    $('filter-count').textContent = `${rows.length} of ${run.questions.length} questions${listed} · ${misses} ${misses === 1 ? 'miss' : 'misses'} at k = ${k}`;
    for (const b of $('filter-mode').children) b.setAttribute('aria-pressed', b.dataset.mode === state.filter.mode ? 'true' : 'false');
    for (const th of document.querySelectorAll('#q-table th[data-sort]')) {
      const sorted = th.dataset.sort === state.sort.key;
      th.classList.toggle('sorted', sorted);
      th.setAttribute('aria-sort', sorted ? (state.sort.dir > 0 ? 'ascending' : 'descending') : 'none');
    }
  }

  function questionRow(q, run, k) {
    const pill = el('span', { class: 'pill off', text: 'off-topic' });
    if (!q.off_topic) setPill(pill, questionAt(q, k).hit);
    const first = firstHit(q, run);
    const firstCell = first
      ? el('td', {}, el('div', { class: 'first' }, el('span', { class: `fid${isExpected(q, first.hit) ? ' ok' : ''}`, text: first.label, title: first.label }), el('span', { class: 'score num', text: fscore(first.hit.score) })))
      : el('td', { class: 'muted', text: q.error ? 'error' : 'nothing retrieved' });
    let rankText = '—';
    if (!q.off_topic) rankText = q.rank === null || q.rank === undefined ? `>${run.depth}` : String(q.rank);
    const expected = Object.keys(q.expected || {});
    const tr = el('tr', { tabindex: 0, dataset: { qid: q.id }, class: q.id === state.selected ? 'selected' : null },
      el('td', { class: 'c-hit' }, pill),
      el('td', { class: 'mono', text: q.id, title: q.id }),
      el('td', { class: 'qtext' }, el('div', { class: 'clamp', text: q.question }), q.error ? el('span', { class: 'err-badge', text: 'retriever error' }) : null),
      el('td', { class: 'mono small' }, el('div', { class: 'clamp', text: expected.length ? expected.join(', ') : '(none: off-topic)' })),
      firstCell,
      el('td', { class: `num rank${q.rank ? '' : ' muted'}`, text: rankText }));
    tr.addEventListener('click', () => select(q.id));
    tr.addEventListener('keydown', (e) => { if (e.key === 'Enter') select(q.id); });
    return tr;
  }

  function setPill(pill, hit) {
    pill.className = `pill ${hit ? 'hit' : 'miss'}`;
    pill.textContent = hit ? 'hit' : 'miss';
  }

  function select(qid) {
    state.selected = qid;
    saveHash();
    for (const tr of $('q-body').children) tr.classList.toggle('selected', tr.dataset.qid === qid);
    renderDetails();
  }

  // ---------- details panel ----------
  function renderDetails() {
    const box = clear($('details'));
    const run = state.runs[state.active];
    const q = state.selected ? run.byId.get(state.selected) : null;
    if (!q) {
      box.append(el('p', { class: 'placeholder', text: 'Click a question to see what ranked, where each expected document landed, and why it missed.' }));
      return;
    }
    const k = state.k;
    box.append(el('div', { class: 'd-head' },
      el('span', { class: 'mono muted', text: q.id }),
      (q.tags || []).map((t) => el('span', { class: 'tag', text: t })),
      q.source && q.source !== 'hand' ? el('span', { class: 'tag src', text: q.source }) : null,
      el('button', { class: 'close', type: 'button', 'aria-label': 'close details', text: '×', onclick: () => { state.selected = null; select(null); } })));
    box.append(el('h3', { class: 'd-question', text: q.question }));
    box.append(el('p', { class: 'd-status', text: statusLine(q, run, k) }));
    if (q.error) box.append(el('div', { class: 'box error' }, el('strong', { text: 'The retriever failed on this question: ' }), q.error));
    if (q.diagnosis) box.append(diagnosisBox(q.diagnosis));
    if (!q.off_topic) box.append(expectedList(q, run));
    box.append(topList(q, run, k));
  }

  function statusLine(q, run, k) {
    const depth = run.depth;
    if (q.off_topic) {
      return `Off-topic: the corpus does not cover this question, so it is not averaged into the metrics. Top-1 score ${fscore(q.top1_score)}.`;
    }
    if (q.rank === null || q.rank === undefined) return `Miss: no expected document in the top ${depth} retrieved.`;
    if (q.rank <= k) return `Hit at k = ${k}: the first correct answer is at rank ${q.rank}.`;
    return `Miss at k = ${k}: the first correct answer is at rank ${q.rank}, a hit from k = ${q.rank} on.`;
  }

  function diagnosisBox(d) {
    const box = el('div', { class: 'box diag' }, el('div', { class: 'diag-cause' }, el('span', { class: 'muted', text: 'Diagnosis ' }), el('strong', { text: String(d.label ?? d.cause ?? 'unknown').replaceAll('_', ' ') })));
    if (d.evidence !== undefined && d.evidence !== null) box.append(el('div', { class: 'diag-row' }, el('span', { class: 'muted', text: 'Evidence ' }), renderValue(d.evidence)));
    if (d.suggestion) box.append(el('div', { class: 'diag-row' }, el('span', { class: 'muted', text: 'Try ' }), String(d.suggestion)));
    return box;
  }

  function expectedList(q, run) {
    const list = el('ul', { class: 'exp-list' });
    for (const [id, grade] of Object.entries(q.expected || {})) {
      const r = (q.ranks || {})[id];
      const snip = run.snippets[id];
      list.append(el('li', {},
        el('span', { class: `rank-badge${r ? (r <= state.k ? ' ok' : ' late') : ' none'}`, text: r ? `#${r}` : `>${run.depth}` }),
        el('span', { class: 'mono', text: id }),
        grade > 1 ? el('span', { class: 'muted small', text: ` grade ${grade}` }) : null,
        snip && snip.title ? el('div', { class: 'muted small clamp1', text: snip.title }) : null));
    }
    return el('div', { class: 'd-section' }, el('h4', { text: 'Where each expected document landed' }), list);
  }

  function topList(q, run, k) {
    const top = q.top || [];
    const section = el('div', { class: 'd-section' }, el('h4', { text: `Top ${top.length} retrieved` }));
    if (!top.length) { section.append(el('p', { class: 'muted', text: 'Nothing was retrieved.' })); return section; }
    const list = el('ol', { class: 'top-list' });
    top.forEach((hit, i) => {
      if (i === k) list.append(el('li', { class: 'cutoff', text: `cut-off k = ${k}` }));
      const snip = run.snippets[hit.id] || run.snippets[hit.doc] || {};
      const ok = isExpected(q, hit);
      list.append(el('li', { class: `hitrow${ok ? ' ok' : ''}${i >= k ? ' below' : ''}` },
        el('div', { class: 'hr-top' },
          el('span', { class: 'hr-rank num', text: String(i + 1) }),
          el('span', { class: 'mono hr-id', text: hit.id, title: hit.doc && hit.doc !== hit.id ? `document ${hit.doc}` : hit.id }),
          ok ? el('span', { class: 'ok-badge', text: 'expected' }) : null,
          el('span', { class: 'score num', text: fscore(hit.score) })),
        snip.title ? el('div', { class: 'hr-title', text: snip.title }) : null,
        snip.text ? el('div', { class: 'hr-text', text: snip.text }) : null));
    });
    section.append(list);
    return section;
  }

  // ---------- generic rendering of extras (stats written by other stages) ----------
  function renderValue(value, depth = 0) {
    if (value === null || value === undefined) return el('span', { class: 'muted', text: '—' });
    if (typeof value === 'number') return el('span', { class: 'num', text: Number.isInteger(value) ? String(value) : f3(value) });
    if (typeof value !== 'object') return el('span', { text: String(value) });
    if (depth > 4) return el('span', { class: 'muted', text: '…' });
    if (Array.isArray(value)) {
      if (value.every((x) => x === null || typeof x !== 'object')) {
        return el('span', { class: 'num', text: value.map((x) => (typeof x === 'number' && !Number.isInteger(x) ? f3(x) : String(x))).join(', ') });
      }
      if (value.every((x) => x && typeof x === 'object' && !Array.isArray(x))) return objectTable(value, depth);
      return el('ul', { class: 'plain' }, value.map((x) => el('li', {}, renderValue(x, depth + 1))));
    }
    const dl = el('dl', { class: 'kv' });
    for (const [key, v] of Object.entries(value)) dl.append(el('dt', { text: key.replaceAll('_', ' ') }), el('dd', {}, renderValue(v, depth + 1)));
    return dl;
  }

  function objectTable(rows, depth) {
    const keys = [...new Set(rows.flatMap((r) => Object.keys(r)))];
    const table = el('table', { class: 'kv-table' }, el('thead', {}, el('tr', {}, keys.map((key) => el('th', { text: key.replaceAll('_', ' ') })))));
    const body = el('tbody');
    for (const row of rows.slice(0, 200)) body.append(el('tr', {}, keys.map((key) => el('td', {}, renderValue(row[key], depth + 1)))));
    table.append(body);
    return el('div', { class: 'kv-wrap' }, table);
  }

  function extrasOf(run, key) { return run.file.data[key]; }

  /** The part of an extras block that belongs to one retriever: `{retrievers: {name: ...}}` or `{name: ...}`. */
  function perRetriever(ext, run) {
    if (!ext || typeof ext !== 'object' || Array.isArray(ext)) return ext;
    const byName = ext.retrievers && typeof ext.retrievers === 'object' && !Array.isArray(ext.retrievers) ? ext.retrievers : ext;
    return byName[run.r.name] !== undefined ? byName[run.r.name] : ext;
  }

  /** Rows of a `comparison` extras block (issue 4: one per metric and pair) that compare these two runs. */
  function comparisonRows(a, b) {
    if (a.file !== b.file || a === b) return [];
    const cmp = extrasOf(a, 'comparison');
    const rows = cmp && Array.isArray(cmp.results) ? cmp.results : [];
    const names = new Set([a.r.name, b.r.name]);
    return rows.filter((row) => row && names.has(row.a) && names.has(row.b) && row.a !== row.b);
  }

  function extrasSection(title, value, note) {
    if (value === undefined || value === null) return null;
    return el('details', { class: 'extras' }, el('summary', { text: title }), note ? el('p', { class: 'muted small', text: note }) : null, renderValue(value));
  }

  function verdictsIn(value, out = [], depth = 0) {
    if (!value || typeof value !== 'object' || depth > 5) return out;
    for (const [key, v] of Object.entries(value)) {
      if (key === 'verdict' && typeof v === 'string') out.push(v);
      else if (typeof v === 'object') verdictsIn(v, out, depth + 1);
    }
    return out;
  }

  // ---------- compare ----------
  function fillCompare(first) {
    for (const id of ['cmp-a', 'cmp-b']) {
      const select = clear($(id));
      for (const run of state.runs) select.append(el('option', { value: run.index, text: run.label }));
    }
    const last = state.runs.length - 1;
    if (first) state.cmpB = Math.min(1, last);
    state.cmpA = Math.min(state.cmpA, last);
    state.cmpB = Math.min(state.cmpB, last);
    $('cmp-a').value = String(state.cmpA);
    $('cmp-b').value = String(state.cmpB);
  }

  function renderCompare() {
    const body = clear($('cmp-body'));
    const a = state.runs[state.cmpA]; const b = state.runs[state.cmpB];
    const k = state.k;
    if (state.runs.length < 2) {
      $('cmp-summary').textContent = '';
      body.append(el('p', { class: 'empty-note', text: 'Only one retriever in these results. Evaluate several (--retriever bm25 --retriever dense:minilm) or open several result files to compare them question by question.' }));
      return;
    }
    const onlyA = a.questions.filter((q) => !b.byId.has(q.id)).length;
    const onlyB = b.questions.filter((q) => !a.byId.has(q.id)).length;
    const shared = a.questions.filter((q) => !q.off_topic && b.byId.has(q.id) && !b.byId.get(q.id).off_topic);
    const aWins = []; const bWins = []; let both = 0; let neither = 0;
    for (const qa of shared) {
      const qb = b.byId.get(qa.id);
      const ha = questionAt(qa, k).hit; const hb = questionAt(qb, k).hit;
      if (ha && !hb) aWins.push([qa, qb]); else if (hb && !ha) bWins.push([qa, qb]); else if (ha) both += 1; else neither += 1;
    }
    const net = aWins.length - bWins.length;
    const lead = net === 0 ? `A (${a.label}) and B (${b.label}) tie at hit@${k}`
      : net > 0 ? `A (${a.label}) leads B (${b.label}) by ${plural(net, 'question')} of ${shared.length} at hit@${k}`
        : `B (${b.label}) leads A (${a.label}) by ${plural(-net, 'question')} of ${shared.length} at hit@${k}`;
    $('cmp-summary').textContent = `${lead}: ${aWins.length} hit by A only, ${bWins.length} by B only; both hit ${both}, both miss ${neither}.`;
    if (state.cmpA === state.cmpB) body.append(el('p', { class: 'box warn', text: 'A and B are the same retriever: pick two different ones.' }));
    if (onlyA || onlyB) {
      body.append(el('p', { class: 'box warn', text: `The two sets of questions differ (${onlyA} only in A, ${onlyB} only in B): only the ${shared.length} shared answerable questions are compared.` }));
    }
    body.append(el('div', { class: 'flip-grid' },
      flipList(`Hit by A only at k = ${k}: ${aWins.length}`, aWins, a, b, 'A'),
      flipList(`Hit by B only at k = ${k}: ${bWins.length}`, bWins, a, b, 'B')));
    body.append(el('h4', { class: 'sub-head', text: 'Means over the shared questions' }), compareMetrics(a, b, shared, k));
    body.append(verdictTable(comparisonRows(a, b), k));
    const seen = new Set();
    for (const run of [a, b]) {
      if (seen.has(run.file)) continue;
      seen.add(run.file);
      body.append(extrasSection(`Statistical comparison in ${run.file.name}`, extrasOf(run, 'comparison'), 'Paired intervals, tests and verdicts computed when the results were written.'));
    }
  }

  function compareMetrics(a, b, shared, k) {
    const ids = new Set(shared.map((q) => q.id));
    const ma = runAt(a, k, a.questions.filter((q) => ids.has(q.id)));
    const mb = runAt(b, k, b.questions.filter((q) => ids.has(q.id)));
    const rows = METRICS.map((m) => {
      const d = mb[m.key] - ma[m.key];
      return el('tr', {}, el('th', { text: m.label(k) }), el('td', { class: 'num', text: f3(ma[m.key]) }), el('td', { class: 'num', text: f3(mb[m.key]) }),
        el('td', { class: `num ${d > 0 ? 'up' : d < 0 ? 'down' : ''}`, text: `${d > 0 ? '+' : d < 0 ? '−' : '±'}${Math.abs(d).toFixed(3)}` }));
    });
    const dot = (run) => { const s = el('span', { class: 'dot' }); s.style.background = run.color; return s; };
    return el('table', { class: 'cmp-table' },
      el('thead', {}, el('tr', {}, el('th', { text: `${shared.length} shared questions` }), el('th', { class: 'num' }, dot(a), ' A'), el('th', { class: 'num' }, dot(b), ' B'), el('th', { class: 'num', text: 'B − A' }))),
      el('tbody', {}, rows));
  }

  /** The paired statistics written by `goldeval eval`/`compare` for this pair, at the current k first. */
  function verdictTable(rows, k) {
    if (!rows.length) return null;
    const atK = rows.filter((r) => String(r.metric).endsWith(`@${k}`) || !String(r.metric).includes('@'));
    const shown = atK.length ? atK : rows;
    const table = el('table', { class: 'cmp-table verdict-table' }, el('thead', {}, el('tr', {},
      ['metric', 'wins', 'losses', 'ties', 'difference (95% CI)', 'p', 'verdict'].map((h, i) => el('th', { class: i && i < 6 ? 'num' : null, text: h })))));
    const body = el('tbody');
    for (const r of shown) {
      const ci = Array.isArray(r.ci) ? ` (${signed(r.ci[0])} to ${signed(r.ci[1])})` : '';
      body.append(el('tr', {}, el('th', { text: r.metric }),
        el('td', { class: 'num', text: r.wins ?? '—' }), el('td', { class: 'num', text: r.losses ?? '—' }), el('td', { class: 'num', text: r.ties ?? '—' }),
        el('td', { class: 'num', text: typeof r.diff === 'number' ? `${signed(r.diff)}${ci}` : '—' }),
        el('td', { class: 'num', text: typeof r.p === 'number' ? r.p.toPrecision(2) : '—' }),
        el('td', { class: 'verdict' }, String(r.verdict ?? ''), r.detectable ? el('div', { class: 'muted small', text: String(r.detectable) }) : null)));
    }
    table.append(body);
    const label = atK.length ? `Paired statistics at k = ${k} (wins/losses counted for ${shown[0].a} against ${shown[0].b})` : 'Paired statistics from the results file (none at this k)';
    return el('div', { class: 'd-section' }, el('h4', { text: label }), el('div', { class: 'kv-wrap' }, table));
  }

  function signed(x) { return `${x > 0 ? '+' : x < 0 ? '−' : '±'}${Math.abs(x * 100).toFixed(1)}`; }

  function flipList(title, pairs, a, b, winner) {
    const list = el('ul', { class: 'flip-list' });
    for (const [qa, qb] of pairs) {
      list.append(el('li', { tabindex: 0, onclick: () => openQuestion(winner === 'A' ? b : a, qa.id) },
        el('div', { class: 'fl-q' }, el('span', { class: 'mono muted', text: qa.id }), ' ', qa.question),
        el('div', { class: 'fl-ranks num' }, `rank in A: ${qa.rank ?? `>${a.depth}`} · rank in B: ${qb.rank ?? `>${b.depth}`}`)));
    }
    if (!pairs.length) list.append(el('li', { class: 'muted', text: 'none' }));
    const other = winner === 'A' ? 'B' : 'A';
    return el('div', { class: 'flip-col' }, el('h4', { text: title }),
      pairs.length ? el('p', { class: 'muted small', text: `Click one to see what ${other} ranked instead.` }) : null, list);
  }

  function openQuestion(run, qid) {
    state.filter = { mode: 'all', tag: '', source: '', text: '' };
    $('filter-text').value = '';
    state.selected = qid;
    if (state.active !== run.index) { state.active = run.index; refreshFilters(); }
    showTab('questions');
    update();
    const row = $('q-body').querySelector(`tr[data-qid="${CSS.escape(qid)}"]`);
    if (row) row.scrollIntoView({ block: 'center' });
  }

  // ---------- off-topic separability ----------
  function renderOffTopic() {
    const body = clear($('ot-body'));
    const run = state.runs[state.active];
    const score = (q) => (typeof q.top1_score === 'number' ? q.top1_score : null);
    const ans = run.questions.filter((q) => !q.off_topic);
    const off = run.questions.filter((q) => q.off_topic);
    body.append(el('h3', { class: 'sec-title', text: `Can a score threshold tell off-topic questions apart? (${run.label})` }));
    if (!off.length) {
      body.append(el('p', { class: 'empty-note', text: 'This golden set has no off-topic questions (questions with "expected": []). Add a few the corpus does not cover to learn whether a score threshold can refuse them.' }));
      return;
    }
    const aScores = ans.map(score).filter((s) => s !== null);
    const oScores = off.map(score).filter((s) => s !== null);
    const all = aScores.concat(oScores);
    if (!all.length) { body.append(el('p', { class: 'empty-note', text: 'No question retrieved anything, so there are no scores to compare.' })); return; }
    let lo = Math.min(...all); let hi = Math.max(...all);
    if (hi === lo) { lo -= 0.5; hi += 0.5; }
    const mine = perRetriever(extrasOf(run, 'off_topic'), run);
    if (state.thresholdRun !== run.index || state.threshold === null) {
      // Start where the stats stage put its best threshold, else at the one with the fewest mistakes.
      const given = mine && typeof mine.threshold === 'number' ? mine.threshold : null;
      state.threshold = given !== null ? Math.max(lo, Math.min(hi, given)) : bestThreshold(aScores, oScores, lo);
      state.thresholdRun = run.index;
    }
    const verdicts = verdictsIn(mine);
    body.append(summaryStats(aScores, oScores, ans.length, off.length, verdicts.length === 0));
    for (const v of verdicts) body.append(el('p', { class: 'box verdicts', text: v }));
    const plot = el('div', { class: 'ot-plot' });
    const slider = el('input', { type: 'range', min: lo, max: hi, step: (hi - lo) / 1000, value: state.threshold, 'aria-label': 'score threshold', id: 'ot-threshold' });
    const counts = el('div', { class: 'ot-counts' });
    const redraw = () => { drawStrip(plot, aScores, oScores, lo, hi, state.threshold); drawCounts(counts, ans, off, score); };
    slider.addEventListener('input', () => { state.threshold = Number(slider.value); redraw(); });
    body.append(el('div', { class: 'ot-chart' }, plot, el('div', { class: 'ot-slider' }, slider)), counts);
    const empty = ans.length - aScores.length + off.length - oScores.length;
    if (empty) body.append(el('p', { class: 'note', text: `${plural(empty, 'question')} retrieved nothing (${ans.length - aScores.length} answerable, ${off.length - oScores.length} off-topic): nothing is shown for them at any threshold, so they count as refused.` }));
    redraw();
    const worst = off.filter((q) => score(q) !== null).sort((x, y) => score(y) - score(x))[0];
    if (worst) {
      const caught = worst.top[0];
      body.append(el('p', { class: 'box' }, 'Highest-scoring off-topic question: ', el('strong', { text: worst.question }),
        ` (${worst.id}), top-1 score ${fscore(score(worst))}, caught by `, el('span', { class: 'mono', text: displayId(caught, run) }), '.'));
    }
    body.append(el('p', { class: 'note', text: 'Scores are not comparable across models or retrievers: choose a threshold per retriever.' }));
    body.append(extrasSection('Separability statistics from the results file', mine));
  }

  function median(xs) {
    if (!xs.length) return null;
    const s = [...xs].sort((a, b) => a - b); const m = s.length >> 1;
    return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
  }

  /** ROC AUC of "answerable scores higher than off-topic" (Mann-Whitney U / (n1 n2), ties count half). */
  function auc(aScores, oScores) {
    if (!aScores.length || !oScores.length) return null;
    let u = 0;
    for (const a of aScores) for (const o of oScores) u += a > o ? 1 : a === o ? 0.5 : 0;
    return u / (aScores.length * oScores.length);
  }

  /** The threshold that makes the fewest mistakes (answerable rejected + off-topic let through). */
  function bestThreshold(aScores, oScores, lo) {
    const candidates = [...new Set(aScores.concat(oScores))].sort((a, b) => a - b);
    let best = lo; let bestCost = Infinity;
    for (const t of candidates) {
      const cost = aScores.filter((s) => s < t).length + oScores.filter((s) => s >= t).length;
      if (cost < bestCost) { bestCost = cost; best = t; }
    }
    return best;
  }

  function summaryStats(aScores, oScores, nA, nO, withVerdict) {
    const row = (label, xs, n) => el('tr', {}, el('th', { text: label }), el('td', { class: 'num', text: String(n) }),
      el('td', { class: 'num', text: xs.length ? fscore(Math.min(...xs)) : '—' }), el('td', { class: 'num', text: fscore(median(xs)) }),
      el('td', { class: 'num', text: xs.length ? fscore(Math.max(...xs)) : '—' }));
    const a = auc(aScores, oScores);
    const overlap = aScores.length && oScores.length && Math.min(...aScores) <= Math.max(...oScores);
    return el('div', { class: 'ot-summary' },
      el('table', { class: 'cmp-table' },
        el('thead', {}, el('tr', {}, el('th', { text: 'top-1 score' }), el('th', { class: 'num', text: 'questions' }), el('th', { class: 'num', text: 'min' }), el('th', { class: 'num', text: 'median' }), el('th', { class: 'num', text: 'max' }))),
        el('tbody', {}, row('answerable', aScores, nA), row('off-topic', oScores, nO))),
      el('p', { class: 'ot-verdict' }, a === null ? '' : `ROC AUC ${a.toFixed(3)} · the ranges ${overlap ? 'overlap' : 'do not overlap'}`,
        withVerdict && a !== null ? [': ', el('strong', { text: !overlap ? 'a threshold separates them cleanly' : a >= 0.8 ? 'a threshold helps, at a cost' : 'a threshold cannot tell them apart' })] : null));
  }

  function drawStrip(box, aScores, oScores, lo, hi, t) {
    const W = 800; const H = 150; const L = 110; const R = 20;
    const x = (s) => L + ((s - lo) / (hi - lo)) * (W - L - R);
    const chart = svg('svg', { viewBox: `0 0 ${W} ${H}`, class: 'strip', role: 'img', 'aria-label': 'top-1 scores of answerable and off-topic questions' });
    const rows = [['answerable', aScores, 40, 'dot-a'], ['off-topic', oScores, 90, 'dot-o']];
    chart.append(svg('rect', { x: x(lo), y: 12, width: Math.max(0, x(t) - x(lo)), height: 106, class: 'reject-zone' }));
    for (const [label, xs, y, cls] of rows) {
      const text = svg('text', { x: 0, y: y + 4, class: 'strip-label' }); text.textContent = label; chart.append(text);
      chart.append(svg('line', { x1: L, x2: W - R, y1: y, y2: y, class: 'strip-axis' }));
      xs.forEach((s, i) => chart.append(svg('circle', { cx: x(s).toFixed(1), cy: (y + (((i * 7919) % 13) - 6) * 1.4).toFixed(1), r: 4.5, class: `${cls}${s < t ? ' rejected' : ''}` })));
    }
    for (let i = 0; i <= 4; i += 1) {
      const s = lo + ((hi - lo) * i) / 4;
      const tick = svg('text', { x: x(s), y: H - 8, class: 'strip-tick', 'text-anchor': 'middle' }); tick.textContent = fscore(s); chart.append(tick);
    }
    chart.append(svg('line', { x1: x(t), x2: x(t), y1: 8, y2: 122, class: 'threshold' }));
    clear(box).append(chart);
  }

  function drawCounts(box, ans, off, score) {
    const t = state.threshold;
    const rejected = (q) => score(q) === null || score(q) < t;
    const aRej = ans.filter(rejected).length; const oRej = off.filter(rejected).length;
    clear(box).append(
      el('p', { class: 'ot-rule' }, 'Refuse to answer when the top-1 score is below ', el('strong', { class: 'num', text: fscore(t) }), ':'),
      el('div', { class: 'ot-stats' },
        el('div', { class: 'stat bad' }, el('div', { class: 'stat-n num', text: `${aRej} of ${ans.length}` }), el('div', { class: 'stat-l', text: `answerable questions wrongly refused (${ans.length ? pct(aRej / ans.length) : '—'})` })),
        el('div', { class: 'stat good' }, el('div', { class: 'stat-n num', text: `${oRej} of ${off.length}` }), el('div', { class: 'stat-l', text: `off-topic questions rightly refused (${pct(oRej / off.length)})` })),
        el('div', { class: 'stat bad' }, el('div', { class: 'stat-n num', text: `${off.length - oRej}` }), el('div', { class: 'stat-l', text: 'off-topic questions let through' }))));
  }

  // ---------- breakdown by tag and source ----------
  function renderBreakdown() {
    const body = clear($('bd-body'));
    const run = state.runs[state.active];
    const k = state.k;
    const answerable = run.questions.filter((q) => !q.off_topic);
    const groups = (keyOf) => {
      const map = new Map();
      for (const q of answerable) for (const key of keyOf(q)) { if (!map.has(key)) map.set(key, []); map.get(key).push(q); }
      return [...map.entries()].sort((x, y) => y[1].length - x[1].length || String(x[0]).localeCompare(String(y[0])));
    };
    const bySource = groups((q) => [q.source || 'hand']);
    body.append(el('h3', { class: 'sec-title', text: `By source at k = ${k} (${run.label})` }), groupTable(bySource, run, k, 'source'));
    const hand = bySource.find(([s]) => s === 'hand'); const syn = bySource.find(([s]) => s === 'synthetic');
    if (hand && syn && runAt(run, k, syn[1]).hit > runAt(run, k, hand[1]).hit) {
      body.append(el('p', { class: 'box warn', text: 'Synthetic questions score higher than hand-written ones here. Questions written while reading the answer share its words and flatter search: report the hand-written number.' }));
    } else if (bySource.length === 1) {
      body.append(el('p', { class: 'note', text: `All questions are ${bySource[0][0]}-written.` }));
    }
    const byTag = groups((q) => ((q.tags || []).length ? q.tags : ['(untagged)']));
    body.append(el('h3', { class: 'sec-title', text: `By tag at k = ${k}` }), groupTable(byTag, run, k, 'tag'));
    const counts = perRetriever(extrasOf(run, 'diagnosis_counts'), run);
    if (counts && typeof counts === 'object') {
      const rows = Object.entries(counts).filter(([, n]) => typeof n === 'number' && n > 0).sort((x, y) => y[1] - x[1]);
      const st = run.file.data.stats;
      body.append(el('h3', { class: 'sec-title', text: `Why the misses missed${st && st.k ? ` (at k = ${st.k}, from the results file)` : ''}` }));
      body.append(rows.length
        ? el('table', { class: 'cmp-table' }, el('tbody', {}, rows.map(([cause, n]) => el('tr', {}, el('th', { text: cause.replaceAll('_', ' ') }), el('td', { class: 'num', text: String(n) })))))
        : el('p', { class: 'note', text: 'No miss to diagnose.' }));
    }
    body.append(extrasSection('Breakdown from the results file (with intervals)', perRetriever(extrasOf(run, 'breakdown'), run)));
    const known = new Set(['schema', 'goldeval_version', 'created', 'level', 'k', 'depth', 'metric_names', 'golden', 'corpus', 'retrievers', 'snippets', 'comparison', 'off_topic', 'breakdown', 'diagnosis_counts', 'stats']);
    for (const [key, value] of Object.entries(run.file.data)) if (!known.has(key)) body.append(extrasSection(`${key.replaceAll('_', ' ')} (from the results file)`, value));
  }

  function groupTable(groups, run, k, what) {
    const table = el('table', { class: 'cmp-table bd-table' }, el('thead', {}, el('tr', {},
      el('th', { text: what }), el('th', { class: 'num', text: 'questions' }), el('th', { text: `hit@${k}` }),
      el('th', { class: 'num', text: `recall@${k}` }), el('th', { class: 'num', text: `nDCG@${k}` }), el('th', { class: 'num', text: 'MRR' }))));
    const body = el('tbody');
    for (const [name, qs] of groups) {
      const m = runAt(run, k, qs);
      const bar = el('div', { class: 'bar small' }, el('div', { class: 'fill' }));
      bar.firstChild.style.width = `${m.hit * 100}%`; bar.firstChild.style.background = run.color;
      body.append(el('tr', {}, el('th', { text: name }), el('td', { class: 'num', text: String(qs.length) }),
        el('td', { class: 'bd-hit' }, bar, el('span', { class: 'num', text: `${f3(m.hit)} (${m.hits}/${m.n})` })),
        el('td', { class: 'num', text: f3(m.recall) }), el('td', { class: 'num', text: f3(m.ndcg) }), el('td', { class: 'num', text: f3(m.mrr) })));
    }
    table.append(body);
    return table;
  }

  // ---------- the view in the address (#k=5&tab=compare&run=1&q=q07), so a link reopens it ----------
  function saveHash() {
    if (!state.ready) return;
    const params = new URLSearchParams({ k: state.k, tab: state.tab, run: state.active });
    if (state.filter.mode !== 'all') params.set('show', state.filter.mode);
    if (state.selected) params.set('q', state.selected);
    try { history.replaceState(null, '', `#${params}`); } catch (err) { /* some file:// setups refuse; the page works without */ }
  }

  function loadHash() {
    const params = new URLSearchParams(location.hash.slice(1));
    const k = Number(params.get('k'));
    if (Number.isInteger(k) && k >= 1) state.k = Math.min(k, state.maxK);
    const run = Number(params.get('run'));
    if (params.has('run') && Number.isInteger(run) && run >= 0 && run < state.runs.length) state.active = run;
    if (['questions', 'compare', 'offtopic', 'breakdown'].includes(params.get('tab'))) state.tab = params.get('tab');
    if (['miss', 'hit', 'offtopic'].includes(params.get('show'))) state.filter.mode = params.get('show');
    const q = params.get('q');
    if (q && state.runs[state.active].byId.has(q)) state.selected = q;
  }

  // ---------- tabs, update loop ----------
  function showTab(tab) {
    state.tab = tab;
    for (const b of document.querySelectorAll('#tabs [role=tab]')) b.setAttribute('aria-selected', b.dataset.tab === tab ? 'true' : 'false');
    for (const name of ['questions', 'compare', 'offtopic', 'breakdown']) $(`tab-${name}`).hidden = name !== tab;
    renderTab();
  }

  function renderTab() {
    saveHash();
    if (state.tab === 'questions') { renderQuestions(); renderDetails(); } else if (state.tab === 'compare') renderCompare();
    else if (state.tab === 'offtopic') renderOffTopic();
    else renderBreakdown();
  }

  function update() {
    syncControls();
    updateMetricTable();
    renderTab();
  }

  /** Shortcuts outside form fields: [ and ] move k, Escape closes the details. */
  function onKey(event) {
    const tag = event.target && event.target.tagName;
    if (tag === 'INPUT' || tag === 'SELECT' || tag === 'TEXTAREA' || event.ctrlKey || event.metaKey || event.altKey) return;
    if (event.key === ']') setK(state.k + 1);
    else if (event.key === '[') setK(state.k - 1);
    else if (event.key === 'Escape' && state.selected) select(null);
  }

  function fail(message) {
    $('loading').hidden = true;
    const box = $('fatal');
    box.hidden = false;
    box.textContent = `goldeval could not show these results: ${message}`;
  }

  /** Event handlers that do not depend on the results: bound once. */
  function bindOnce() {
    $('k-slider').addEventListener('input', () => setK(Number($('k-slider').value)));
    setupFilters();
    for (const id of ['cmp-a', 'cmp-b']) {
      $(id).addEventListener('change', () => { state[id === 'cmp-a' ? 'cmpA' : 'cmpB'] = Number($(id).value); renderCompare(); });
    }
    for (const b of document.querySelectorAll('#tabs [role=tab]')) b.addEventListener('click', () => showTab(b.dataset.tab));
    document.addEventListener('keydown', onKey);
  }

  /** Show a payload; on a reload keep the reader's place (k, retriever, tab, filters, question). */
  function apply(payload, first) {
    const runs = buildRuns(payload.files);
    if (!runs.length) { fail('the results contain no retriever'); return false; }
    state.files = payload.files;
    state.runs = runs;
    state.version = payload.version || null;
    cache.clear();
    state.rowsShown = null;
    state.thresholdRun = -1;
    const depths = state.files.map((f) => f.data.depth || Math.max(1, ...(f.data.k || [10])));
    state.maxK = Math.max(1, Math.min(...depths));
    if (first) {
      const ks = state.files[0].data.k || [];
      state.k = Math.min(state.maxK, ks.includes(5) ? 5 : ks.length ? ks[Math.floor(ks.length / 2)] : 5);
      loadHash();
    } else {
      state.k = Math.min(state.k, state.maxK);
      state.active = Math.min(state.active, runs.length - 1);
      if (state.selected && !runs[state.active].byId.has(state.selected)) state.selected = null;
    }
    renderContext();
    renderControls();
    renderMetricTable();
    refreshFilters();
    fillCompare(first);
    state.ready = true;
    showTab(state.tab);
    update();
    window.goldeval = {
      state, runs, setK, version: state.version, ready: true,
      metricsAt: (i, k) => runAt(state.runs[i], k), questionAt: (i, qid, k) => questionAt(state.runs[i].byId.get(qid), k),
    };
    return true;
  }

  /** Served pages follow their results files: poll the version, reload when it changes. */
  async function poll() {
    const live = $('live');
    try {
      const response = await fetch('version', { cache: 'no-store' });
      if (!response.ok) throw new Error(`HTTP ${response.status}`);
      const info = await response.json();
      if (info.version && info.version !== state.version && apply(await loadPayload(), false)) {
        live.textContent = `results reloaded at ${new Date().toLocaleTimeString()}`;
      }
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
    try { payload = await loadPayload(); } catch (err) { fail(err.message || String(err)); return; }
    bindOnce();
    if (!apply(payload, true)) return;
    $('loading').hidden = true;
    for (const id of ['controls', 'scorecard', 'tabs']) $(id).hidden = false;
    $('foot').textContent = `goldeval ${state.files[0].data.goldeval_version || ''} · metrics follow trec_eval (hit = success, precision divides by k, nDCG with linear gains) · keys: [ and ] move k, Esc closes details`;
    if (state.selected) {
      const row = $('q-body').querySelector(`tr[data-qid="${CSS.escape(state.selected)}"]`);
      if (row) row.scrollIntoView({ block: 'center' });
    }
    document.body.dataset.ready = 'true';
    const served = !$('goldeval-data').textContent.trim();
    if (served && state.version && state.version !== 'fixed') {
      $('live').textContent = 'live: follows the results files';
      setTimeout(poll, POLL_MS);
    }
  }

  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', start); else start();
}());
