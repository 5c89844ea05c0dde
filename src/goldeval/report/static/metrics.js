/* goldeval page: the metric table (retrievers x metrics at the current k, bars with interval whiskers,
 * the best marked, `n/a` past what a retriever returned) and the headline above it. Every value is a
 * lookup (see data.js).
 */
'use strict';
(function (G) {
  const { $, el, clear, f3 } = G;
  const S = () => G.state;

  // ---------- the metric table: retrievers x metrics, bars with interval whiskers, best marked ----------
  G.renderMetricTable = function renderMetricTable() {
    const state = S();
    const table = clear($('metric-table'));
    table.style.setProperty('--n-metrics', String(G.metricsOf(state.runs).length));
    const head = el('div', { class: 'mt-row mt-headrow' }, el('div', { class: 'mt-head mt-name', text: 'retriever' }));
    for (const m of G.metricsOf(state.runs)) head.append(el('div', { class: `mt-head${m.fixed ? ' fixed' : ''}`, dataset: { head: m.key }, title: m.title }));
    table.append(head);
    for (const run of state.runs) {
      const row = el('div', { class: 'mt-row', dataset: { run: run.index } },
        el('button', { class: 'mt-run', type: 'button', dataset: { run: run.index }, onclick: () => G.setActive(run.index), title: `show ${run.label} below` },
          G.dot(run.color), el('span', { class: 'mt-run-name', text: run.label }), el('span', { class: 'mt-run-sub', text: runSubtitle(run) })));
      for (const m of G.metricsOf(state.runs)) {
        const cell = el('div', { class: 'mcell', dataset: { run: run.index, metric: m.key } },
          el('div', { class: 'mc-label' }),
          el('div', { class: 'mc-top' }, el('span', { class: 'val num' }), el('span', { class: 'best-mark', text: 'best', title: 'the best value of this metric at this k' }), el('span', { class: 'cnt num' })),
          el('div', { class: 'bar' }, el('div', { class: 'fill' }), el('div', { class: 'whisker' })));
        cell.querySelector('.fill').style.background = run.color;
        row.append(cell);
      }
      table.append(row);
    }
    const depths = [...new Set(state.runs.map((r) => r.depth))].join(', ');
    $('fixed-note').textContent = `MRR and MAP do not move with k: they score the whole ranking of the ${depths} results retrieved per question. ` +
      'Every value is looked up in the results file, where goldeval computed it (trec_eval\'s definitions).';
    const lines = state.runs.map((run) => (G.returnedOf(run) || {}).line).filter(Boolean);
    const box = clear($('returned-note'));
    for (const line of lines) box.append(el('p', { class: 'returned-line', text: line }));
    box.hidden = !lines.length;
    renderApiCost(state);
  };

  /** What the API models cost: one row per usage record (`G.apiUsageOf`), the numbers as the results hold
   * them; dollars at list price, or "no price in the table", as the terminal says it. */
  function renderApiCost(state) {
    const box = clear($('api-cost'));
    const rows = state.runs.flatMap((run) => G.apiUsageOf(run).map((used) => el('tr', { dataset: { run: run.index, role: used.role } },
      el('td', {}, G.dot(run.color), ` ${run.label}`),
      el('td', {}, `${used.model} (${used.role})`,
        used.same_as ? el('span', { class: 'api-shared', text: ` (the same requests as ${used.same_as}: sent once)` }) : null),
      el('td', { class: 'num', dataset: { field: 'requests' }, text: `${count(used.requests)}${used.retries ? ` (${count(used.retries)} retried)` : ''}` }),
      el('td', { class: 'num', dataset: { field: 'tokens' }, text: `${count(used.tokens)}${used.tokens_estimated ? ` (+${count(used.tokens_estimated)} estimated)` : ''}` }),
      el('td', { class: 'num', dataset: { field: 'seconds' }, text: `${used.seconds ?? 0} s` }),
      el('td', { class: 'num', dataset: { field: 'dollars' }, text: typeof used.dollars === 'number' ? `$${used.dollars.toLocaleString('en-US', { minimumFractionDigits: 4, maximumFractionDigits: 4 })} at list price` : 'no price in the table' }))));
    box.hidden = !rows.length;
    if (!rows.length) return;
    const heads = ['retriever', 'API model', 'requests', 'tokens', 'waited', 'cost'];
    box.append(el('h3', { class: 'sec-title', text: 'What the API calls cost' }),
      el('table', { class: 'cmp-table api-table' },
        el('thead', {}, el('tr', {}, heads.map((h, i) => el('th', { class: i > 1 ? 'num' : null, text: h })))), el('tbody', {}, rows)),
      el('p', { class: 'note', text: 'Requests sent by this run (retries included; a pair or text read from the workspace\'s caches costs none; ' +
        'a hybrid\'s part evaluated on its own too lists the same requests under both, sent once), ' +
        'tokens as the server counted them (estimated at 4 bytes a token where it did not), dollars at the list prices of goldeval/data/prices.toml ' +
        '(or your own table): recorded by goldeval in the results, looked up here.' }));
  }

  /** A whole number with thousands separators, as the terminal writes counts (1,234). */
  const count = (n) => (typeof n === 'number' ? n.toLocaleString('en-US') : '0');

  function runSubtitle(run) {
    const r = run.r;
    const beside = G.syntheticOf(run);
    const parts = beside ? [`${G.nHeadline(run)} headline`, `${beside.n} synthetic beside`, `${r.n_off_topic ?? 0} off-topic`]
      : [`${G.nAnswerable(run)} answerable`, `${r.n_off_topic ?? 0} off-topic`];
    if (r.n_errors) parts.push(G.plural(r.n_errors, 'error'));
    return parts.join(' · ');
  }

  G.updateMetricTable = function updateMetricTable() {
    const state = S();
    const k = state.k;
    const metrics = G.metricsOf(state.runs);
    for (const head of document.querySelectorAll('.mt-head[data-head]')) head.textContent = metrics.find((m) => m.key === head.dataset.head).label(k);
    for (const row of document.querySelectorAll('.mt-row[data-run]')) row.classList.toggle('active', Number(row.dataset.run) === state.active);
    const best = {};
    for (const m of metrics) {
      const values = state.runs.filter((run) => !G.unmeasurable(run, m.key, k)).map((run) => G.valueAt(run, m.key, k)).filter((v) => v !== null);
      const top = Math.max(...values);
      best[m.key] = values.length > 1 && values.some((v) => v !== top) ? top : null;
    }
    for (const cell of document.querySelectorAll('.mcell')) {
      const run = state.runs[Number(cell.dataset.run)];
      const m = metrics.find((x) => x.key === cell.dataset.metric);
      const gone = G.unmeasurable(run, m.key, k);  // past what the retriever returned: its word, no bar
      const value = gone ? null : G.valueAt(run, m.key, k);
      const n = G.nHeadline(run);
      cell.dataset.value = value === null ? '' : String(value);
      cell.classList.toggle('unmeasurable', gone);
      cell.classList.toggle('active', run.index === state.active);
      cell.classList.toggle('best', value !== null && value === best[m.key]);
      cell.querySelector('.mc-label').textContent = m.label(k);
      cell.querySelector('.val').textContent = G.shown(run, m.key, k, value);
      const hits = m.key === 'hit' && !gone ? G.headlineQuestions(run).filter((q) => G.hitAt(q, k)).length : null;
      cell.querySelector('.cnt').textContent = hits === null ? '' : `${hits}/${n}`;
      cell.querySelector('.fill').style.width = `${Math.max(0, Math.min(1, value || 0)) * 100}%`;
      const name = G.jsonName(m, k);
      const ci = gone ? null : G.intervalOf(run, name);
      const whisker = cell.querySelector('.whisker');
      whisker.hidden = !ci;
      if (ci) {
        whisker.style.left = `${ci[0] * 100}%`;
        whisker.style.width = `${Math.max(0, ci[1] - ci[0]) * 100}%`;
        cell.title = `${m.label(k)} = ${f3(value)}, interval ${f3(ci[0])} to ${f3(ci[1])} (${n} questions)`;
      } else if (gone) {
        cell.title = `${m.label(k)}: ${G.unmeasuredWord(run)}, past the ${(G.returnedOf(run) || {}).measurable_k} results ${run.label} returned (raise its own k)`;
      } else {
        const computed = (run.file.data.k || []).join(', ');
        const hasAny = Object.keys(run.r.intervals || {}).length > 0;
        cell.title = `${m.label(k)} = ${f3(value)} over ${n} questions${hasAny && !m.fixed ? ` (intervals were computed at k = ${computed})` : ''}`;
      }
    }
    renderHeadline();
    G.renderJudged();
  };

  /** The headline metrics (chosen once, in Python) for the active retriever, and Python's verdicts on them. */
  function renderHeadline() {
    const state = S();
    const run = state.runs[state.active];
    const names = G.headlineOf(run.file);
    const box = clear($('headline'));
    box.append(el('span', { class: 'hl-label', text: 'Headline' }), ' ', G.dot(run.color), ' ', el('strong', { text: run.label }), ': ');
    names.forEach((name, i) => {
      const value = (run.r.metrics || {})[name];
      const { key, k } = G.parseMetric(name);
      box.append(i ? ' · ' : '', el('span', { class: 'hl-metric', dataset: { metric: name } }, `${name} `,
        el('strong', { class: 'num', text: G.shown(run, key, k, typeof value === 'number' ? value : null) })));
    });
    const beside = G.syntheticOf(run);
    if (beside) {  // always beside the headline, never pooled into it (goldeval.golden.model.headline_split)
      box.append(el('div', { class: 'hl-beside', id: 'headline-synthetic' }, el('span', { class: 'hl-label', text: `Synthetic, beside (${beside.n})` }), ' ',
        names.map((name, i) => [i ? ' · ' : '', el('span', { class: 'hl-metric', dataset: { metric: name } }, `${name} `,
          el('strong', { class: 'num', text: f3(typeof beside.metrics[name] === 'number' ? beside.metrics[name] : null) }))]),
        el('span', { class: 'muted small', text: ' — synthetic questions flatter search: never pooled into the headline or a verdict' })));
    }
    const list = clear($('headline-verdicts'));
    const st = G.statistics(run);
    const rows = st && st.comparison ? (st.comparison.results || []).filter((r) => r.metric === names[0] && (r.a === run.r.name || r.b === run.r.name)) : [];
    rows.sort((x, y) => Number(y.significant) - Number(x.significant));
    for (const r of rows.slice(0, 3)) list.append(el('li', { class: r.significant ? 'sig' : '', text: r.verdict }));
    if (rows.length > 3) list.append(el('li', { class: 'muted', text: `${rows.length - 3} more on ${names[0]} in the Compare tab` }));
    const k = state.k;
    const hits = G.headlineQuestions(run).filter((q) => G.hitAt(q, k)).length;
    const n = G.nHeadline(run);
    const gone = G.unmeasurable(run, 'hit', k);
    const withCI = state.runs.some((r) => Object.keys(r.r.intervals || {}).length);
    const what = beside ? 'headline questions (hand-written, log and incident; the synthetic ones are beside)' : 'answerable questions';
    const found = gone ? `${run.label} returned at most ${(G.returnedOf(run) || {}).measurable_k} results, so the top ${k} is ${G.unmeasuredWord(run)}`
      : `${run.label} puts a correct answer in the top ${k} for ${hits} of ${n} ${what}`;
    $('scorecard-sub').textContent = `At k = ${k}, ${found}. ` +
      `Means over ${what}; off-topic questions are counted apart, never averaged in as zeros.` +
      (withCI ? ` Whiskers: ${ciMethod(run)}.` : '');
  }

  function ciMethod(run) {
    const st = G.statistics(run);
    if (!st) return 'confidence intervals from the results file';
    const conf = typeof st.confidence === 'number' ? `${Math.round(st.confidence * 100)}% ` : '';
    return `${conf}intervals, ${st.method || 'bootstrap'}${st.resamples ? `, ${st.resamples} resamples` : ''}${st.seed !== undefined ? `, seed ${st.seed}` : ''}; at the computed k only`;
  }
}(window.GE = window.GE || {}));
