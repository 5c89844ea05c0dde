/* goldeval page: every retriever side by side. A rank table (one row per question, one column per
 * retriever: the rank of its first correct answer, hit or miss at the current k), sortable by any column and
 * filterable, and the per-tag breakdown for every retriever at once. Ranks, hits and miss places are
 * lookups (each question's `rank`, `views.returned` for "not in the N returned"; see data.js).
 */
'use strict';
(function (G) {
  const { $, el, clear } = G;
  const S = () => G.state;
  const MODES = [['all', 'All'], ['disagree', 'Retrievers disagree'], ['missed', 'Missed by all']];
  const collator = new Intl.Collator(undefined, { numeric: true, sensitivity: 'base' });

  const side = () => {
    const state = S();
    if (!state.side) state.side = { sort: { col: 'order', dir: 1 }, mode: 'all', text: '' };
    return state.side;
  };

  /** Every question of every run, once, in the order of first appearance. */
  function questionIds(runs) {
    const seen = new Map();
    for (const run of runs) for (const q of run.questions) if (!seen.has(q.id)) seen.set(q.id, q);
    return [...seen.values()];
  }

  /** A run's rank of a question for sorting: its rank, after it every miss, off-topic or absent last. */
  function rankKey(run, id) {
    const q = run.byId.get(id);
    if (!q || q.off_topic) return null;
    return q.rank ?? Infinity;
  }

  function rows(runs, k) {
    const view = side();
    const text = view.text.toLowerCase();
    const list = questionIds(runs).filter((q0) => {
      const qs = runs.map((run) => run.byId.get(q0.id)).filter((q) => q && !q.off_topic);
      if (view.mode !== 'all' && !qs.length) return false;
      const hits = qs.filter((q) => G.hitAt(q, k)).length;
      if (view.mode === 'disagree' && (hits === 0 || hits === qs.length)) return false;
      if (view.mode === 'missed' && hits > 0) return false;
      return !text || `${q0.id} ${q0.question}`.toLowerCase().includes(text);
    });
    const { col, dir } = view.sort;
    const value = (q) => (col === 'order' ? q._order : col === 'id' ? q.id : col === 'question' ? q.question : rankKey(runs[Number(col)], q.id));
    return list.sort((a, b) => {
      const va = value(a); const vb = value(b);
      if (va === null || vb === null) return (va === null) - (vb === null) || a._order - b._order;
      const c = typeof va === 'string' ? collator.compare(va, vb) : va === vb ? 0 : va < vb ? -1 : 1;
      return c * dir || a._order - b._order;
    });
  }

  function rankCell(run, q, k) {
    if (!q) return el('td', { class: 'num muted', text: '', dataset: { run: run.index } });
    if (q.off_topic) return el('td', { class: 'num muted', text: 'off-topic', dataset: { run: run.index, hit: '' } });
    const hit = G.hitAt(q, k);
    return el('td', { class: `num side-rank ${hit ? 'hit' : 'miss'}`, dataset: { run: run.index, hit: hit ? '1' : '0' },
      text: q.rank === null || q.rank === undefined ? G.missRank(run, q) : String(q.rank) });
  }

  G.renderSide = function renderSide() {
    const state = S();
    const view = side();
    const k = state.k;
    const runs = state.runs;
    const body = clear($('side-body'));
    const seg = el('div', { class: 'seg', role: 'group', 'aria-label': 'Show', id: 'side-mode' },
      MODES.map(([mode, label]) => el('button', { type: 'button', dataset: { mode }, text: label, 'aria-pressed': mode === view.mode ? 'true' : 'false',
        onclick: () => { view.mode = mode; G.renderSide(); } })));
    const search = el('input', { type: 'search', id: 'side-text', placeholder: 'Filter questions, ids…', 'aria-label': 'Filter the rank table', value: view.text });
    search.addEventListener('input', () => { view.text = search.value.trim(); renderTable(); });
    const tableBox = el('div', { class: 'table-wrap side-wrap' });
    body.append(el('h3', { class: 'sec-title', text: `Every retriever, question by question: the rank of the first correct answer (hit at k = ${k} in green)` }),
      el('div', { class: 'filters' }, seg, search), el('p', { class: 'count', id: 'side-count' }), tableBox, tagTable(runs, k));
    function renderTable() {
      const shown = rows(runs, k);
      $('side-count').textContent = `${shown.length} of ${questionIds(runs).length} questions`;
      const th = (col, label, cls) => {
        const sorted = view.sort.col === col;
        const cell = el('th', { scope: 'col', tabindex: 0, class: cls || null, dataset: { sort: col }, 'aria-sort': sorted ? (view.sort.dir > 0 ? 'ascending' : 'descending') : 'none' }, label);
        const sort = () => { view.sort = sorted ? { col, dir: -view.sort.dir } : { col, dir: 1 }; renderTable(); };
        cell.addEventListener('click', sort);
        cell.addEventListener('keydown', (e) => { if (e.key === 'Enter' || e.key === ' ') { e.preventDefault(); sort(); } });
        return cell;
      };
      const table = el('table', { class: 'cmp-table side-table', id: 'side-table' },
        el('thead', {}, el('tr', {}, th('id', 'id'), th('question', 'question'), runs.map((run) => th(String(run.index), [G.dot(run.color), ' ', run.label], 'num')))),
        el('tbody', {}, shown.map((q0) => el('tr', { dataset: { qid: q0.id } }, el('th', { class: 'mono', text: q0.id }),
          el('td', { class: 'side-q', text: q0.question }), runs.map((run) => rankCell(run, run.byId.get(q0.id), k))))));
      clear(tableBox).append(table);
    }
    renderTable();
  };

  /** Per tag, for every retriever: found in the top k (a lookup of each question's rank), and the
   * breakdown's nDCG@k where the statistics computed it at this k. */
  function tagTable(runs, k) {
    const tags = new Map();
    for (const run of runs) {
      for (const q of G.answerable(run)) {
        for (const tag of (q.tags || []).length ? q.tags : ['(untagged)']) {
          if (!tags.has(tag)) tags.set(tag, new Map());
          const perRun = tags.get(tag);
          if (!perRun.has(run.index)) perRun.set(run.index, []);
          perRun.get(run.index).push(q);
        }
      }
    }
    const ordered = [...tags.entries()].sort((x, y) => String(x[0]).localeCompare(String(y[0])));
    const cell = (run, tag, qs) => {
      if (!qs) return el('td', { class: 'num muted', text: '—' });
      const found = qs.filter((q) => G.hitAt(q, k)).length;
      const st = G.statistics(run);
      const group = st && st.breakdown && st.breakdown.retrievers && st.breakdown.retrievers[run.r.name]
        ? (st.breakdown.retrievers[run.r.name].by_tag || {})[tag] : null;
      const ndcg = group && group.metrics ? group.metrics[`ndcg@${k}`] : undefined;
      return el('td', { class: 'num', dataset: { run: run.index, found, n: qs.length } }, `${found} of ${qs.length}`,
        typeof ndcg === 'number' ? el('span', { class: 'muted small', text: ` · nDCG ${G.shown(run, 'ndcg', k, ndcg)}` }) : null);
    };
    return el('div', { class: 'd-section' }, el('h3', { class: 'sec-title', text: `By tag, every retriever: found in the top ${k}` }),
      el('div', { class: 'kv-wrap' }, el('table', { class: 'cmp-table side-tags', id: 'side-tags' },
        el('thead', {}, el('tr', {}, el('th', { text: 'tag' }), runs.map((run) => el('th', { class: 'num' }, G.dot(run.color), ' ', run.label)))),
        el('tbody', {}, ordered.map(([tag, perRun]) => el('tr', { dataset: { tag } }, el('th', { text: tag }),
          runs.map((run) => cell(run, tag, perRun.get(run.index)))))))));
  }
}(window.GE = window.GE || {}));
