/* goldeval page: the Compare, Off-topic and "By tag & run" tabs. Every number is looked up in the results
 * (flips, curves, statistics.comparison, statistics.off_topic, statistics.breakdown; see data.js).
 */
'use strict';
(function (G) {
  const { $, el, clear, f3, plural } = G;
  const S = () => G.state;

  G.bindPanels = function bindPanels() {
    for (const id of ['cmp-a', 'cmp-b']) {
      $(id).addEventListener('change', () => { S()[id === 'cmp-a' ? 'cmpA' : 'cmpB'] = Number($(id).value); G.renderCompare(); });
    }
    $('cmp-new').addEventListener('change', (e) => { S().cmpNew = e.target.checked; G.renderCompare(); });
  };

  G.fillCompare = function fillCompare(first) {
    const state = S();
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
  };

  // ---------- compare: A finds, B misses (and the reverse) at the current k ----------
  G.renderCompare = function renderCompare() {
    const state = S();
    const body = clear($('cmp-body'));
    const a = state.runs[state.cmpA]; const b = state.runs[state.cmpB];
    const k = state.k;
    if (state.runs.length < 2) {
      $('cmp-summary').textContent = '';
      body.append(el('p', { class: 'empty-note', text: 'Only one retriever in these results. Evaluate several (--retriever bm25 --retriever dense:minilm) or open several result files to compare them question by question.' }));
      return;
    }
    if (a === b) body.append(el('p', { class: 'box warn', text: 'A and B are the same retriever: pick two different ones.' }));
    // the headline questions of both (synthetic ones are beside, in no comparison: Python's rule, looked up)
    const shared = G.headlineQuestions(a).filter((q) => b.byId.has(q.id) && b.byId.get(q.id).headline === true);
    const side = (hitA, hitB, at) => shared.filter((q) => G.hitAt(q, at) === hitA && G.hitAt(b.byId.get(q.id), at) === hitB);
    const aOnly = side(true, false, k); const bOnly = side(false, true, k);
    const both = side(true, true, k).length; const neither = side(false, false, k).length;
    const flips = G.flipsOf(a, b, k);
    const nA = flips ? flips.aOnly : aOnly.length; const nB = flips ? flips.bOnly : bOnly.length;
    const summary = clear($('cmp-summary'));
    summary.append(`At k = ${k}: `, el('strong', { class: 'num', dataset: { count: 'a-only' }, text: `A finds ${nA}` }), ` that B misses, `,
      el('strong', { class: 'num', dataset: { count: 'b-only' }, text: `B finds ${nB}` }), ` that A misses; both find ${both}, both miss ${neither} (${shared.length} shared ${G.syntheticOf(a) ? 'headline' : 'answerable'} questions).`);
    const onlyA = a.questions.filter((q) => !b.byId.has(q.id)).length;
    const onlyB = b.questions.filter((q) => !a.byId.has(q.id)).length;
    if (onlyA || onlyB) body.append(el('p', { class: 'box warn', text: `The two sets of questions differ (${onlyA} only in A, ${onlyB} only in B): only the ${shared.length} shared answerable questions are compared.` }));
    if (flips) body.append(flipSeries(flips.series, k));
    const prev = state.prevK !== null && state.prevK !== k ? state.prevK : null;
    const earlier = (hitA) => new Set(prev === null ? [] : side(hitA, !hitA, prev).map((q) => q.id));
    body.append(el('div', { class: 'flip-grid' },
      flipList(`A finds, B misses at k = ${k}`, aOnly, earlier(true), prev, a, b, 'A'),
      flipList(`B finds, A misses at k = ${k}`, bOnly, earlier(false), prev, a, b, 'B')));
    body.append(el('h4', { class: 'sub-head', text: `Means at k = ${k}` }), compareMetrics(a, b, k));
    G.append(body, verdictTable(G.comparisonRows(a, b), k, a));
  };

  /** "A finds, B misses" at the common ks, from `flips` (Python), the current k marked. */
  function flipSeries(series, k) {
    const ks = [...new Set(G.COMMON_KS.concat([k]))].filter((x) => x <= series.aOnly.length).sort((x, y) => x - y);
    const row = (label, values) => el('tr', {}, el('th', { text: label }),
      ks.map((x) => el('td', { class: `num${x === k ? ' current' : ''}`, text: String(values[x - 1]) })));
    return el('div', { class: 'kv-wrap' }, el('table', { class: 'cmp-table flip-series' },
      el('thead', {}, el('tr', {}, el('th', { text: 'questions at k =' }), ks.map((x) => el('th', { class: `num${x === k ? ' current' : ''}`, text: String(x) })))),
      el('tbody', {}, row('A finds, B misses', series.aOnly), row('B finds, A misses', series.bOnly))));
  }

  function flipList(title, questions, earlier, prev, a, b, winner) {
    const state = S();
    const fresh = (q) => prev !== null && !earlier.has(q.id);
    const shown = state.cmpNew && prev !== null ? questions.filter(fresh) : questions;
    const list = el('ul', { class: 'flip-list' });
    for (const qa of shown) {
      const qb = b.byId.get(qa.id);
      list.append(el('li', { tabindex: 0, class: fresh(qa) ? 'new' : null, dataset: { qid: qa.id }, onclick: () => openQuestion(winner === 'A' ? b : a, qa.id) },
        el('div', { class: 'fl-q' }, el('span', { class: 'mono muted', text: qa.id }), ' ', qa.question,
          fresh(qa) ? el('span', { class: 'new-badge', text: `new since k = ${prev}` }) : null),
        el('div', { class: 'fl-ranks num' }, `rank in A: ${qa.rank ?? G.missRank(a, qa)} · rank in B: ${qb.rank ?? G.missRank(b, qb)}`)));
    }
    if (!shown.length) list.append(el('li', { class: 'muted', text: state.cmpNew && prev !== null ? `none new since k = ${prev}` : 'none' }));
    return el('div', { class: 'flip-col' }, el('h4', { text: `${title}: ${questions.length}` }),
      shown.length ? el('p', { class: 'muted small', text: `Click one to see what ${winner === 'A' ? 'B' : 'A'} ranked instead.` }) : null, list);
  }

  function openQuestion(run, qid) {
    const state = S();
    state.filter = { mode: 'all', tag: '', source: '', text: '' };
    $('filter-text').value = '';
    state.selected = qid;
    if (state.active !== run.index) { state.active = run.index; G.refreshFilters(); }
    G.showTab('questions');
    G.update();
    const row = $('q-body').querySelector(`tr[data-qid="${CSS.escape(qid)}"]`);
    if (row) row.scrollIntoView({ block: 'center' });
  }

  /** Means of A and B and B − A, each looked up: B − A is Python's (the payload's `differences`). */
  function compareMetrics(a, b, k) {
    const rows = G.metricsOf([a, b]).map((m) => {
      const va = G.valueAt(a, m.key, k); const vb = G.valueAt(b, m.key, k);
      const gone = G.unmeasurable(a, m.key, k) || G.unmeasurable(b, m.key, k);
      const d = gone ? null : G.differenceAt(S().payload, a, b, m.key, k);
      return el('tr', { dataset: { metric: m.key } }, el('th', { text: m.label(k) }), el('td', { class: 'num', text: G.shown(a, m.key, k, va) }), el('td', { class: 'num', text: G.shown(b, m.key, k, vb) }),
        el('td', { class: `num diff ${d > 0 ? 'up' : d < 0 ? 'down' : ''}`, text: gone ? G.unmeasuredWord(a) : d === null ? '—' : `${d > 0 ? '+' : d < 0 ? '−' : '±'}${f3(Math.abs(d))}` }));
    });
    const note = a.file !== b.file ? ' (each over the questions of its own file)' : '';
    return el('div', { class: 'kv-wrap' }, el('table', { class: 'cmp-table' },
      el('thead', {}, el('tr', {}, el('th', { text: `metric${note}` }), el('th', { class: 'num' }, G.dot(a.color), ' A'), el('th', { class: 'num' }, G.dot(b.color), ' B'), el('th', { class: 'num', text: 'B − A' }))),
      el('tbody', {}, rows)));
  }

  /** The paired statistics Python wrote for this pair, at the current k when computed there. Python
   * compares `a` with `b`; a row written the other way round is shown from A's side (B − A stays B − A). */
  function verdictTable(rows, k, a) {
    if (!rows.length) return null;
    const atK = rows.filter((r) => String(r.metric).endsWith(`@${k}`) || !String(r.metric).includes('@'));
    const shown = atK.some((r) => String(r.metric).includes('@')) ? atK : rows;
    const points = (x) => `${x > 0 ? '+' : x < 0 ? '−' : '±'}${Math.abs(x * 100).toFixed(1)}`;
    const heads = ['metric', 'A wins', 'A loses', 'ties', 'B − A, points (CI)', 'p', 'verdict'];
    const table = el('table', { class: 'cmp-table verdict-table' }, el('thead', {}, el('tr', {},
      heads.map((h, i) => el('th', { class: i && i < 6 ? 'num' : null, text: h })))));
    const body = el('tbody');
    for (const r of shown) {
      const asA = r.a === a.r.name;  // Python's diff is mean(r.a) - mean(r.b)
      const diff = typeof r.diff === 'number' ? (asA ? -r.diff : r.diff) : null;
      const ci = Array.isArray(r.ci) ? (asA ? [-r.ci[1], -r.ci[0]] : r.ci) : null;
      const cells = [asA ? r.wins : r.losses, asA ? r.losses : r.wins, r.ties,
        diff === null ? '—' : `${points(diff)}${ci ? ` (${points(ci[0])} to ${points(ci[1])})` : ''}`,
        typeof r.p === 'number' ? r.p.toPrecision(2) : '—'];
      body.append(el('tr', { class: r.significant ? 'sig' : null }, el('th', { text: r.metric }),
        cells.map((c, i) => el('td', { class: 'num', dataset: { label: heads[i + 1] }, text: c ?? '—' })),
        el('td', { class: 'verdict' }, String(r.verdict ?? ''), r.detectable ? el('div', { class: 'muted small', text: String(r.detectable) }) : null)));
    }
    table.append(body);
    const ks = [...new Set(rows.map((r) => G.parseMetric(r.metric).k).filter(Boolean))].join(', ');
    const label = shown === atK ? `Paired statistics at k = ${k}` : `Paired statistics (computed at k = ${ks}; none at k = ${k})`;
    return el('div', { class: 'd-section' }, el('h4', { text: label }), el('div', { class: 'kv-wrap' }, table));
  }

  // ---------- off-topic: Python's separability, the threshold slider over its ROC cuts ----------
  G.renderOffTopic = function renderOffTopic() {
    const state = S();
    const body = clear($('ot-body'));
    const run = state.runs[state.active];
    const off = run.questions.filter((q) => q.off_topic);
    const sep = G.offTopicOf(run);
    body.append(el('h3', { class: 'sec-title', text: `Can a score threshold tell off-topic questions apart? (${run.label})` }));
    if (!off.length) {
      body.append(el('p', { class: 'empty-note', text: 'This golden set has no off-topic questions (questions with "expected": []). Add a few the corpus does not cover to learn whether a score threshold can refuse them.' }));
      return;
    }
    if (!sep) {
      body.append(el('p', { class: 'empty-note', text: 'These results carry no statistics (written with --no-stats, or by evaluate() without compare()), so there is no separability analysis: run `goldeval eval` without --no-stats, or goldeval.compare(scorecard).' }));
      body.append(strip(run, null));
      return;
    }
    body.append(rangesTable(sep), el('p', { class: 'box verdicts ot-verdict', text: String(sep.verdict || '') }));
    const roc = sep.roc;
    if (roc && Array.isArray(roc.thresholds) && roc.thresholds.length) {
      if (!state.roc || state.roc.run !== run.index) state.roc = { run: run.index, i: G.rocStart(roc, sep.threshold) };
      const chart = el('div', { class: 'ot-chart' });
      const counts = el('div', { class: 'ot-counts' });
      const slider = el('input', { type: 'range', min: 0, max: roc.thresholds.length - 1, step: 1, value: state.roc.i, id: 'ot-threshold', 'aria-label': 'score threshold: one step per candidate cut' });
      const redraw = () => { clear(chart).append(strip(run, roc.thresholds[state.roc.i])); drawCounts(counts, roc, state.roc.i, sep.threshold); };
      slider.addEventListener('input', () => { state.roc.i = Number(slider.value); redraw(); });
      body.append(chart, el('div', { class: 'ot-slider' }, slider), counts);
      redraw();
    } else {
      body.append(strip(run, null));
    }
    if (sep.highest) {
      const h = sep.highest;
      body.append(el('p', { class: 'box' }, 'Highest-scoring off-topic question: ', el('strong', { text: h.question }),
        ` (${h.question_id}), top-1 score ${G.fscore(h.score)}, caught by `, el('span', { class: 'mono', text: h.doc || h.passage }), '.'));
    }
    const note = (G.statistics(run).off_topic || {}).note;
    if (note) body.append(el('p', { class: 'note', text: note }));
  };

  function rangesTable(sep) {
    const row = (label, s, n) => el('tr', {}, el('th', { text: label }), el('td', { class: 'num', text: String(n ?? '—') }),
      ['min', 'median', 'max'].map((key) => el('td', { class: 'num', text: s ? G.fscore(s[key]) : '—' })));
    const auc = typeof sep.auc === 'number' ? `ROC AUC ${sep.auc.toFixed(3)}` : 'no AUC';
    return el('div', { class: 'ot-summary' }, el('div', { class: 'kv-wrap' }, el('table', { class: 'cmp-table' },
      el('thead', {}, el('tr', {}, ['top-1 score', 'questions', 'min', 'median', 'max'].map((h, i) => el('th', { class: i ? 'num' : null, text: h })))),
      el('tbody', {}, row('answerable', sep.answerable, sep.n_answerable), row('off-topic', sep.off_topic, sep.n_off_topic)))),
    el('p', { class: 'ot-auc', text: `${auc}${sep.overlap === null || sep.overlap === undefined ? '' : ` · the ranges ${sep.overlap ? 'overlap' : 'do not overlap'}`}` }));
  }

  /** Each question's top-1 score as a dot on one axis (the headline's answerable questions, as the threshold analysis uses; synthetic ones are beside it); those below the threshold drawn as refused. */
  function strip(run, threshold) {
    const score = (q) => (typeof q.top1_score === 'number' ? q.top1_score : null);
    const rows = [['answerable', G.headlineQuestions(run).filter((q) => !q.error), 40, 'dot-a'], ['off-topic', run.questions.filter((q) => q.off_topic && !q.error), 90, 'dot-o']];
    const all = rows.flatMap((r) => r[1].map(score)).filter((s) => s !== null).concat(threshold === null ? [] : [threshold]);
    if (!all.length) return el('p', { class: 'empty-note', text: 'No question retrieved anything, so there are no scores to show.' });
    let lo = Math.min(...all); let hi = Math.max(...all);
    if (hi === lo) { lo -= 1; hi += 1; }  // one score only: an axis around it
    const W = Math.max(340, Math.min(980, window.innerWidth - 48)); const H = 150; const L = W < 600 ? 84 : 110; const R = 20;
    const x = (s) => L + ((s - lo) / (hi - lo)) * (W - L - R);
    const chart = G.svg('svg', { viewBox: `0 0 ${W} ${H}`, class: 'strip', role: 'img', 'aria-label': 'top-1 scores of answerable and off-topic questions' });
    if (threshold !== null) chart.append(G.svg('rect', { x: x(lo), y: 12, width: Math.max(0, x(threshold) - x(lo)), height: 106, class: 'reject-zone' }));
    for (const [label, qs, y, cls] of rows) {
      const text = G.svg('text', { x: 0, y: y + 4, class: 'strip-label' }); text.textContent = label; chart.append(text);
      chart.append(G.svg('line', { x1: L, x2: W - R, y1: y, y2: y, class: 'strip-axis' }));
      qs.filter((q) => score(q) !== null).forEach((q, i) => {
        const dot = G.svg('circle', { cx: x(score(q)).toFixed(1), cy: (y + (((i * 7919) % 13) - 6) * 1.4).toFixed(1), r: 4.5, class: `${cls}${threshold !== null && score(q) < threshold ? ' rejected' : ''}` });
        const tip = G.svg('title', {}); tip.textContent = `${q.id}: ${G.fscore(score(q))}`; dot.append(tip);
        chart.append(dot);
      });
    }
    for (let i = 0; i <= 4; i += 1) {
      const s = lo + ((hi - lo) * i) / 4;
      const tick = G.svg('text', { x: x(s), y: H - 8, class: 'strip-tick', 'text-anchor': 'middle' }); tick.textContent = G.fscore(s); chart.append(tick);
    }
    if (threshold !== null) chart.append(G.svg('line', { x1: x(threshold), x2: x(threshold), y1: 8, y2: 122, class: 'threshold' }));
    return chart;
  }

  /** The counts at one ROC cut, as Python counted them (answerable refused, off-topic let through). */
  function drawCounts(box, roc, i, chosen) {
    const t = roc.thresholds[i];
    const rejected = roc.rejects_answerable[i]; const passed = roc.passes_off_topic[i];
    const nA = roc.n_answerable; const nO = roc.n_off_topic;
    const isChosen = typeof chosen === 'number' && t === chosen;
    clear(box).append(
      el('p', { class: 'ot-rule' }, 'Refuse to answer when the top-1 score is below ', el('strong', { class: 'num', text: G.fscore(t) }),
        isChosen ? el('span', { class: 'chosen', text: " (goldeval's threshold: Youden's J, both error rates weighed equally)" }) : null, ':'),
      el('div', { class: 'ot-stats' },
        el('div', { class: 'stat bad' }, el('div', { class: 'stat-n num', text: `${rejected} of ${nA}` }), el('div', { class: 'stat-l', text: `answerable questions wrongly refused (${G.percent(roc.fpr[i])})` })),
        el('div', { class: 'stat good' }, el('div', { class: 'stat-n num', text: `${nO - passed} of ${nO}` }), el('div', { class: 'stat-l', text: `off-topic questions rightly refused (${G.percent(roc.tpr[i])})` })),
        el('div', { class: 'stat bad' }, el('div', { class: 'stat-n num', text: String(passed) }), el('div', { class: 'stat-l', text: 'off-topic questions let through' }))),
      el('p', { class: 'note', text: 'Questions that retrieved nothing count as refused at every threshold; questions whose retriever errored are left out.' }));
  }

  // ---------- by tag, by source, and the run itself ----------
  G.renderBreakdown = function renderBreakdown() {
    const state = S();
    const body = clear($('bd-body'));
    const run = state.runs[state.active];
    const st = G.statistics(run);
    const bd = st && st.breakdown && st.breakdown.retrievers ? st.breakdown.retrievers[run.r.name] : null;
    const computed = run.file.data.k || [];
    const k = computed.includes(state.k) ? state.k : G.startK(run.file);
    body.append(el('h3', { class: 'sec-title', text: `By source and by tag (${run.label})` }));
    if (!bd) {
      body.append(el('p', { class: 'empty-note', text: 'These results carry no statistics, so there is no breakdown with intervals. The counts below are found in the top k, per group.' }));
    } else if (k !== state.k) {
      body.append(el('p', { class: 'note', text: `The breakdown was computed at k = ${computed.join(', ')}; shown at k = ${k}, the headline k.` }));
    }
    body.append(groupTable(run, 'source', groups(run, (q) => [q.source || 'hand']), bd && bd.by_source, k));
    for (const w of (st && st.breakdown && st.breakdown.warnings) || []) {
      if (!w || (w.retriever && w.retriever !== run.r.name)) continue;
      body.append(el('p', { class: 'box warn', text: String(w.text || '') }));
    }
    body.append(groupTable(run, 'tag', groups(run, (q) => ((q.tags || []).length ? q.tags : ['(untagged)'])), bd && bd.by_tag, k));
    G.append(body, [missCauses(run), aboutRun(run)]);
  };

  function groups(run, keyOf) {
    const map = new Map();
    for (const q of G.answerable(run)) for (const key of keyOf(q)) { if (!map.has(key)) map.set(key, []); map.get(key).push(q); }
    return [...map.entries()].sort((x, y) => y[1].length - x[1].length || String(x[0]).localeCompare(String(y[0])));
  }

  function groupTable(run, what, rows, stats, k) {
    const k0 = S().k;
    const names = [`hit@${k}`, `recall@${k}`, `ndcg@${k}`, 'mrr', 'map'];
    const table = el('table', { class: 'cmp-table bd-table' }, el('thead', {}, el('tr', {},
      el('th', { text: what }), el('th', { class: 'num', text: 'questions' }), el('th', { class: 'num', text: `found in top ${k0}` }),
      stats ? names.map((n) => el('th', { class: 'num', text: n })) : null)));
    const body = el('tbody');
    for (const [name, qs] of rows) {
      const group = stats ? stats[name] : null;
      const cell = (n) => {
        const v = group && group.metrics ? group.metrics[n] : null;
        const ci = group && group.intervals ? group.intervals[n] : null;
        const { key, k: at } = G.parseMetric(n);
        return el('td', { class: 'num', title: Array.isArray(ci) ? `interval ${f3(ci[0])} to ${f3(ci[1])}` : null, text: G.shown(run, key, at, typeof v === 'number' ? v : null) });
      };
      body.append(el('tr', {}, el('th', { text: name }), el('td', { class: 'num', text: String(qs.length) }),
        el('td', { class: 'num', text: `${qs.filter((q) => G.hitAt(q, k0)).length} of ${qs.length}` }), stats ? names.map(cell) : null));
    }
    table.append(body);
    return el('div', { class: 'kv-wrap' }, table);
  }

  function missCauses(run) {
    const st = G.statistics(run);
    const counts = st && st.diagnosis_counts ? st.diagnosis_counts[run.r.name] : null;
    if (!counts) return null;
    const rows = Object.entries(counts).filter(([, n]) => typeof n === 'number' && n > 0).sort((x, y) => y[1] - x[1]);
    const k = G.startK(run.file);
    return el('div', {}, el('h3', { class: 'sec-title', text: `Why the misses missed (at k = ${k}, the headline k)` }),
      rows.length ? el('table', { class: 'cmp-table' }, el('tbody', {}, rows.map(([cause, n]) => el('tr', {}, el('th', { text: G.words(cause) }), el('td', { class: 'num', text: String(n) })))))
        : el('p', { class: 'note', text: 'No miss to diagnose.' }));
  }

  function aboutRun(run) {
    const data = run.file.data;
    const known = new Set(['schema', 'tool', 'goldeval_version', 'created', 'identity', 'level', 'k', 'depth', 'metric_names', 'headline',
      'golden', 'corpus', 'retrievers', 'flips', 'snippets', 'statistics', 'notes', 'views']);
    const extras = Object.entries(data).filter(([key]) => !known.has(key)).map(([key, value]) => G.extrasSection(`${G.words(key)} (from the results file)`, value));
    return el('div', {}, el('h3', { class: 'sec-title', text: 'The run' }),
      G.extrasSection(`${run.r.name}: resolved configuration`, run.r.config || {}),
      G.extrasSection('Run identity (fingerprints, version, machine)', data.identity || {}),
      G.extrasSection('Golden set and corpus', { golden: data.golden, corpus: data.corpus, level: data.level, depth: data.depth, computed_k: data.k, headline: data.headline }),
      extras);
  }
}(window.GE = window.GE || {}));
