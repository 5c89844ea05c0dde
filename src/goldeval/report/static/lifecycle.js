/* goldeval page: the golden set's life (issues 10 and 11). Every number is looked up, none computed:
 * - judged@k and each metric's range if the unjudged passages were all relevant / all not:
 *   `retrievers[].judged[k - 1]` and `retrievers[].ranges[metric]` (goldeval.metrics.judged);
 *   the label fixes since the last frozen version: `golden.changes.text` (goldeval.golden.changelog);
 * - the leakage of synthetic vs hand-written questions and the measured metric gap between the two
 *   sets: `views.leakage`, labelled and formatted by Python (goldeval.report.lifecycle);
 * - each retriever's trend on one frozen golden-set version: `lifecycle.trend` (goldeval.history.trend),
 *   with the chart's axis, ticks and every value's text made in Python.
 */
'use strict';
(function (G) {
  const { $, el, clear, f3 } = G;
  const S = () => G.state;

  /** Served by `goldeval serve` (results fetched), or the offline file (results inlined). */
  G.served = () => !$('goldeval-data').textContent.trim();

  /** The lifecycle block: inlined in the offline file (`payload.lifecycle`), else `/api/lifecycle.json`. */
  G.loadLifecycle = async function loadLifecycle(payload) {
    if (!G.served()) return payload.lifecycle || null;
    try {
      const response = await G.fetchData('lifecycle.json');
      return response.ok ? await response.json() : null;
    } catch (err) { return null; }
  };

  G.reloadLifecycle = async function reloadLifecycle() {
    const state = S();
    const next = await G.loadLifecycle({});
    if (!next) return;
    state.lifecycle = next;
    G.renderContext();
    G.syncOptionalTabs();
    if (!G.tabAvailable(state.tab)) { G.showTab('questions'); return; }
    G.update();
  };

  const leakageOf = (run) => ((run.file.data.views || {}).leakage || null);
  const trendOf = () => (S().lifecycle && S().lifecycle.trend) || null;

  /** The Synthetic tab when some file has leakage figures; the Trend tab when there is a history. */
  G.tabAvailable = function tabAvailable(tab) {
    if (tab === 'synthetic') return S().runs.some((run) => leakageOf(run));
    if (tab === 'trend') return Boolean(trendOf());
    if (tab === 'judges') return Boolean(G.judgesOf());
    return true;
  };

  G.syncOptionalTabs = function syncOptionalTabs() {
    for (const tab of ['synthetic', 'trend', 'judges']) document.querySelector(`#tabs [data-tab="${tab}"]`).hidden = !G.tabAvailable(tab);
  };

  // ---------- judged coverage: judged@k, the ranges, the label fixes since the last version ----------
  function rangeAt(run, m, k) {
    const range = (run.r.ranges || {})[G.jsonName(m, k)];
    return Array.isArray(range) && range.length === 2 ? range : null;
  }

  /** The judged box under the metric table, and a band in each metric bar where a range is open. */
  G.renderJudged = function renderJudged() {
    const state = S();
    const k = state.k;
    for (const cell of document.querySelectorAll('.mcell')) {
      const run = state.runs[Number(cell.dataset.run)];
      const m = G.metricsOf(state.runs).find((x) => x.key === cell.dataset.metric);
      const range = m && !G.unmeasurable(run, m.key, k) ? rangeAt(run, m, k) : null;
      let band = cell.querySelector('.range-band');
      if (!band) { band = el('div', { class: 'range-band' }); cell.querySelector('.bar').prepend(band); }
      const open = range && range[1] > range[0];
      band.hidden = !open;
      if (open) {
        band.style.left = `${range[0] * 100}%`;
        band.style.width = `${(range[1] - range[0]) * 100}%`;
        band.title = `${f3(range[0])} to ${f3(range[1])} if the unjudged passages were all not relevant / all relevant`;
      }
    }
    const box = clear($('judged'));
    const changes = state.files.map((f) => [f, G.goldenChanges(f)]).filter(([, c]) => c && c.text);
    const judgedRuns = state.runs.filter((run) => Array.isArray(run.r.judged) && run.r.judged.length);
    const partial = judgedRuns.some((run) => run.r.judged.some((v) => v < 1));
    box.hidden = !partial && !changes.length;
    if (box.hidden) return;
    box.append(el('h3', { class: 'sec-title', text: 'How much rests on judged passages?' }));
    for (const [f, c] of changes) {
      box.append(el('p', { class: 'judged-changes' }, el('strong', { text: 'Golden set: ' }), state.files.length > 1 ? `${f.name}: ` : '', `${c.text}.`));
    }
    if (!partial) return;
    box.append(judgedTable(judgedRuns, k));
    const first = state.files[0];
    const golden = first.data.golden || {};
    box.append(el('p', { class: 'note' }, 'judged@k: the share of each top k that carries a judgment; goldeval reads an unjudged passage as a miss, ',
      'so the value shown is the low end of its range. ', ...(golden.shipped ? [G.SHIPPED] : ['Judge them: ',
        el('code', { text: `goldeval pool ${first.name} --golden ${golden.path || 'GOLDEN.jsonl'}` }), '.'])));
  };

  function judgedTable(runs, k) {
    // the same columns at every k (a metric with a range at any computed k), so the layout stays put
    const computedKs = S().files[0].data.k || [];
    const metrics = G.metricsOf(runs).filter((m) => runs.some((run) => computedKs.some((at) => rangeAt(run, m, at))));
    const heads = ['retriever', `judged@${k}`, ...metrics.map((m) => `${m.label(k)} range`)];
    const body = el('tbody');
    for (const run of runs) {
      const judged = k <= run.r.judged.length ? run.r.judged[k - 1] : null;
      body.append(el('tr', { dataset: { run: run.index } }, el('th', {}, G.dot(run.color), ' ', run.label),
        el('td', { class: 'num', dataset: { judged: judged === null ? '' : String(judged) },
          text: judged === null ? '—' : f3(judged) }),
        metrics.map((m) => {
          const range = G.unmeasurable(run, m.key, k) ? null : rangeAt(run, m, k);
          return el('td', { class: 'num', dataset: { metric: m.key }, text: range ? `${f3(range[0])} – ${f3(range[1])}` : G.unmeasurable(run, m.key, k) ? G.unmeasuredWord(run) : '—' });
        })));
    }
    const table = el('table', { class: 'cmp-table judged-table', dataset: { columns: metrics.length } },
      el('thead', {}, el('tr', {}, heads.map((h, i) => el('th', { class: i ? 'num' : null, text: h })))), body);
    const computed = (S().files[0].data.k || []).join(', ');
    const kept = Math.max(...runs.map((run) => run.r.judged.length));
    // always the same lines, so nothing below moves when k does
    return el('div', {}, el('div', { class: 'kv-wrap' }, table),
      el('p', { class: 'muted small', text: `judged@k is kept up to k = ${kept}; ranges at a cut-off are computed at k = ${computed}.` }));
  }

  // ---------- synthetic questions: leakage beside the hand-written ones, and the measured gap ----------
  G.renderSynthetic = function renderSynthetic() {
    const state = S();
    const body = clear($('syn-body'));
    const run = state.runs[state.active];
    const view = leakageOf(run);
    body.append(el('h3', { class: 'sec-title', text: 'How much easier are the synthetic questions?' }));
    if (!view) {
      body.append(el('p', { class: 'empty-note', text: `${run.label}: these results have no leakage figures (no synthetic question, or written without statistics).` }));
      return;
    }
    body.append(el('p', { class: 'note', text: 'A question written while reading its answer borrows its words, and search rewards that. ' +
      `Each figure is measured the same way for every set (${view.retriever} over the same passages, depth ${view.depth}): ` +
      'a synthetic question against its source passage, a hand-written one against its expected passages.' }));
    const kinds = view.kinds;
    const heads = ['leakage', ...kinds.map((kind) => `${kind} (${view.counts[kind]})`), view.gap_of ? `gap (${view.gap_of.join(' − ')})` : null].filter(Boolean);
    const rows = view.rows.map((row) => el('tr', { dataset: { figure: row.figure } }, el('th', { text: row.label }),
      kinds.map((kind) => el('td', { class: 'num', dataset: { kind }, text: row.values[kind] })),
      view.gap_of ? el('td', { class: 'num gap', text: row.gap }) : null));
    body.append(el('div', { class: 'kv-wrap' }, el('table', { class: 'cmp-table leak-table' },
      el('thead', {}, el('tr', {}, heads.map((h, i) => el('th', { class: i ? 'num' : null, text: h })))), el('tbody', {}, rows))));
    if (!view.gap_of) body.append(el('p', { class: 'box warn', text: 'No hand-written questions to compare with: the gap needs both sets.' }));
    if (view.unmeasured) body.append(el('p', { class: 'muted small', text: `${G.plural(view.unmeasured, 'question')} not measured: none of its expected ids is in the corpus.` }));
    body.append(metricGap(run, view));
    body.append(questionsTable(view));
  };

  function metricGap(run, view) {
    const gap = view.metric_gap[run.r.name];
    const section = el('div', { class: 'd-section' }, el('h4', { text: `Measured on ${run.label}: hand-written vs synthetic, never pooled` }));
    if (!gap || !gap.rows.length) {
      section.append(el('p', { class: 'muted', text: 'No breakdown by source for this retriever (it needs both hand-written and synthetic questions, and statistics).' }));
      return section;
    }
    const heads = ['metric', `hand-written (${gap.n_hand})`, `synthetic (${gap.n_synthetic})`, 'synthetic − hand', ''];
    const body = el('tbody');
    for (const row of gap.rows) {
      body.append(el('tr', { class: row.beyond_noise ? 'sig' : null, dataset: { metric: row.metric } }, el('th', { text: row.metric }),
        el('td', { class: 'num', title: row.hand_ci ? `interval ${row.hand_ci}` : null, text: row.hand }),
        el('td', { class: 'num', title: row.synthetic_ci ? `interval ${row.synthetic_ci}` : null, text: row.synthetic }),
        el('td', { class: 'num gap', text: row.gap }),
        el('td', { class: 'small', text: row.beyond_noise ? `beyond noise (${row.gap_ci})` : 'within noise' })));
    }
    section.append(el('div', { class: 'kv-wrap' }, el('table', { class: 'cmp-table gap-table' },
      el('thead', {}, el('tr', {}, heads.map((h, i) => el('th', { class: i && i < 4 ? 'num' : null, text: h })))), body)),
    el('p', { class: 'note', text: 'Report the hand-written number: synthetic questions flatter search. Each mean is over its own questions.' }));
    return section;
  }

  function questionsTable(view) {
    const heads = ['question', 'source', 'words from the passage', 'longest copy', 'copied phrase', 'repeats heading', `${view.retriever} rank`];
    const body = el('tbody');
    for (const q of view.questions) {
      body.append(el('tr', { dataset: { qid: q.id } },
        el('th', {}, el('button', { type: 'button', class: 'linkish mono', text: q.id, title: 'open this question', onclick: () => openQuestion(q.id) })),
        el('td', { text: q.kind }), el('td', { class: 'num', text: q.share }), el('td', { class: 'num', text: q.longest_copy }),
        el('td', { class: 'small', text: q.phrase }), el('td', { class: 'small', text: q.heading }), el('td', { class: 'num', text: q.rank })));
    }
    return el('details', { class: 'extras' }, el('summary', { text: `Per question (${view.questions.length}, the leakiest first)` }),
      el('div', { class: 'kv-wrap' }, el('table', { class: 'cmp-table leak-questions' },
        el('thead', {}, el('tr', {}, heads.map((h) => el('th', { text: h })))), body)));
  }

  function openQuestion(qid) {
    const state = S();
    if (!state.runs[state.active].byId.has(qid)) return;
    G.showTab('questions');
    G.select(qid);
  }

  // ---------- the trend: each retriever's metric over the recorded runs of one golden-set version ----------
  G.renderTrend = function renderTrend() {
    const state = S();
    const body = clear($('trend-body'));
    const view = trendOf();
    if (!view) return;
    if (view.error) { body.append(el('p', { class: 'box error', text: `The run history could not be read: ${view.error}` })); return; }
    if (!view.metrics.includes(state.trendMetric)) state.trendMetric = view.metrics[0];
    const versions = view.versions || [];
    if (!versions.includes(state.trendVersion)) state.trendVersion = view.golden_version;
    const trends = (view.by_version || {})[String(state.trendVersion)] || view.trends;
    const trend = trends[state.trendMetric];
    const version = trend.golden_version === null ? 'an unfrozen golden set' : `golden-set version ${trend.golden_version}`;
    const select = el('select', { id: 'trend-metric', 'aria-label': 'metric' }, view.metrics.map((m) => el('option', { value: m, text: m })));
    select.value = state.trendMetric;
    select.addEventListener('change', () => { state.trendMetric = select.value; G.renderTrend(); });
    const filters = el('div', { class: 'filters' }, el('label', { class: 'select-wrap' }, 'Metric ', select));
    if (versions.length > 1) {  // each frozen version is its own trend: numbers compare only on one set
      const pick = el('select', { id: 'trend-version', 'aria-label': 'golden-set version' },
        versions.map((v) => el('option', { value: String(v), text: `version ${v}` })));
      pick.value = String(trend.golden_version);
      pick.addEventListener('change', () => { state.trendVersion = Number(pick.value); G.renderTrend(); });
      filters.append(el('label', { class: 'select-wrap' }, 'Golden set ', pick));
    }
    body.append(el('h3', { class: 'sec-title' }, `${trend.metric} over ${G.plural(trend.runs.length, 'run')} on ${version}`), filters);
    const names = Object.keys(trend.retrievers);
    if (!names.length || !trend.runs.length) { body.append(el('p', { class: 'empty-note', text: `No recorded run has ${trend.metric}.` })); }
    else body.append(chart(trend, names), legend(names), trendTable(trend, names));
    if (trend.runs.length === 1) body.append(el('p', { class: 'note', text: 'One run so far: every `goldeval eval` on this version adds a point.' }));
    for (const note of trend.notes || []) body.append(el('p', { class: 'note', text: `Note: ${note}.` }));
    body.append(el('p', { class: 'muted small', text: 'Points are the means, bars their confidence intervals, as recorded for each run (see `goldeval history trend`). ' +
      'Overlapping intervals are a rough reading only: `goldeval compare @A @B` runs the paired test.' }));
  };

  function colorOf(name, i) {
    const run = S().runs.find((r) => r.r.name === name);
    return run ? run.color : ['#2f6fde', '#d9480f', '#2b8a3e', '#9c36b5'][i % 4];
  }

  function chart(trend, names) {
    const W = Math.max(320, Math.min(900, window.innerWidth - 48)); const H = 240;
    const L = 44; const R = 16; const T = 12; const B = 40;
    const { low, high, ticks } = trend.axis;
    const n = trend.runs.length;
    const x = (i) => (n === 1 ? (L + W - R) / 2 : L + ((W - L - R) * i) / (n - 1));
    const y = (v) => T + ((high - v) * (H - T - B)) / (high - low);
    const svg = G.svg('svg', { viewBox: `0 0 ${W} ${H}`, class: 'trend-chart', role: 'img', 'aria-label': `${trend.metric} per run` });
    const text = (attrs, value) => { const t = G.svg('text', attrs); t.textContent = value; svg.append(t); };
    for (const tick of ticks) {
      svg.append(G.svg('line', { x1: L, x2: W - R, y1: y(tick.value), y2: y(tick.value), class: 'grid' }));
      text({ x: L - 6, y: y(tick.value) + 4, class: 'tick', 'text-anchor': 'end' }, tick.text);
    }
    trend.runs.forEach((run, i) => text({ x: x(i), y: H - 22, class: 'tick', 'text-anchor': 'middle' }, run.label));
    const index = new Map(trend.runs.map((run, i) => [run.id, i]));
    names.forEach((name, j) => {
      const color = colorOf(name, j);
      const shift = (j - (names.length - 1) / 2) * 7;  // side by side, so the bars do not hide each other
      const points = trend.retrievers[name].filter((p) => index.has(p.run));
      const line = G.svg('polyline', { points: points.map((p) => `${x(index.get(p.run)) + shift},${y(p.value)}`).join(' '), class: 'trend-line' });
      line.style.stroke = color;
      svg.append(line);
      for (const p of points) {
        const cx = x(index.get(p.run)) + shift;
        const g = G.svg('g', { class: 'trend-point', 'data-name': name, 'data-run': p.run, 'data-value': p.value });
        if (p.low !== null && p.high !== null) {
          for (const [x1, y1, x2, y2] of [[cx, y(p.low), cx, y(p.high)], [cx - 4, y(p.low), cx + 4, y(p.low)], [cx - 4, y(p.high), cx + 4, y(p.high)]]) {
            const bar = G.svg('line', { x1, y1, x2, y2, class: 'ci' }); bar.style.stroke = color; g.append(bar);
          }
        }
        const dot = G.svg('circle', { cx, cy: y(p.value), r: 4.5 }); dot.style.fill = color; g.append(dot);
        const tip = G.svg('title', {}); tip.textContent = `${name}, run ${p.run}: ${p.text}`; g.append(tip);
        svg.append(g);
      }
    });
    return el('div', { class: 'trend-wrap' }, svg);
  }

  function legend(names) {
    return el('p', { class: 'trend-legend' }, names.map((name, j) => el('span', { class: 'ctx' }, G.dot(colorOf(name, j)), ' ', name)));
  }

  function trendTable(trend, names) {
    const cells = new Map();
    for (const name of names) for (const p of trend.retrievers[name]) cells.set(`${p.run}|${name}`, p.text);
    const body = el('tbody', {}, trend.runs.map((run) => el('tr', { dataset: { run: run.id } },
      el('th', { text: run.label }), el('td', { class: 'small', text: run.date }),
      names.map((name) => el('td', { class: 'num', text: cells.get(`${run.id}|${name}`) || '—' })))));
    return el('div', { class: 'kv-wrap' }, el('table', { class: 'cmp-table trend-table' },
      el('thead', {}, el('tr', {}, ['run', 'created', ...names].map((h, i) => el('th', { class: i > 1 ? 'num' : null, text: h })))), body));
  }
}(window.GE = window.GE || {}));
