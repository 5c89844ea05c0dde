/* goldeval page: the questions table (hit or miss at the current k, what changed since the previous k)
 * and the details panel, which follows the k on screen. Every value is a lookup (see data.js).
 */
'use strict';
(function (G) {
  const { $, el, clear } = G;
  const PAGE_ROWS = 300;
  const MODES = [['all', 'All'], ['miss', 'Misses'], ['hit', 'Hits'], ['flipped', 'Changed'], ['offtopic', 'Off-topic']];
  const S = () => G.state;
  const collator = new Intl.Collator(undefined, { numeric: true, sensitivity: 'base' });

  G.refreshFilters = function refreshFilters() {
    const state = S();
    const run = state.runs[state.active];
    const tags = [...new Set(run.questions.flatMap((q) => q.tags || []))].sort();
    const tagSelect = clear($('filter-tag'));
    G.append(tagSelect, [el('option', { value: '', text: 'all tags' }), tags.map((t) => el('option', { value: t, text: t }))]);
    if (!tags.includes(state.filter.tag)) state.filter.tag = '';
    tagSelect.value = state.filter.tag;
    const sources = [...new Set(run.questions.map((q) => q.source || 'hand'))].sort();
    const sourceSelect = clear($('filter-source'));
    G.append(sourceSelect, [el('option', { value: '', text: 'all' }), sources.map((s) => el('option', { value: s, text: s }))]);
    if (!sources.includes(state.filter.source)) state.filter.source = '';
    sourceSelect.value = state.filter.source;
    $('filter-source-wrap').hidden = sources.length < 2;
  };

  G.bindQuestions = function bindQuestions() {
    const state = S();
    const seg = $('filter-mode');
    for (const [mode, label] of MODES) {
      seg.append(el('button', { type: 'button', dataset: { mode }, text: label,
        onclick: () => { state.filter.mode = mode; state.shown = PAGE_ROWS; G.renderQuestions(); G.saveHash(); } }));
    }
    $('filter-tag').addEventListener('change', (e) => { state.filter.tag = e.target.value; G.renderQuestions(); });
    $('filter-source').addEventListener('change', (e) => { state.filter.source = e.target.value; G.renderQuestions(); });
    $('filter-text').addEventListener('input', (e) => { state.filter.text = e.target.value.trim().toLowerCase(); G.renderQuestions(); });
    for (const th of document.querySelectorAll('#q-table th[data-sort]')) {
      th.tabIndex = 0;
      const sort = () => {
        const key = th.dataset.sort;
        state.sort = state.sort.key === key ? { key, dir: -state.sort.dir } : { key, dir: 1 };
        G.renderQuestions();
      };
      th.addEventListener('click', sort);
      th.addEventListener('keydown', (e) => { if (e.key === 'Enter' || e.key === ' ') { e.preventDefault(); sort(); } });
    }
    $('show-more').addEventListener('click', () => { state.shown += PAGE_ROWS * 10; G.renderQuestions(); });
  };

  /** 'hit' or 'miss' when the question changed between the previous k and this one, else ''. */
  function flipOf(q) {
    const { prevK, k } = S();
    if (q.off_topic || prevK === null || prevK === k || G.hitAt(q, prevK) === G.hitAt(q, k)) return '';
    return G.hitAt(q, k) ? 'hit' : 'miss';
  }

  function sortValue(q, key, k) {
    switch (key) {
      case 'hit': return q.off_topic ? null : Number(G.hitAt(q, k));
      case 'id': return String(q.id);
      case 'question': return q.question || '';
      case 'expected': return Object.keys(q.expected || {}).join(' ');
      case 'first': return (q.top || [])[0] ? (q.top[0].doc || q.top[0].id) : '';
      case 'rank': return q.off_topic ? null : (q.rank ?? Infinity);  // off-topic: last either way
      default: return q._order;
    }
  }

  /** The rows the filters let through, in the order on screen (the CSV export writes the same). */
  G.visibleQuestions = visibleQuestions;
  function visibleQuestions(run) {
    const state = S();
    const { mode, tag, source, text } = state.filter;
    const k = state.k;
    const rows = run.questions.filter((q) => {
      if (mode === 'offtopic' && !q.off_topic) return false;
      if ((mode === 'miss' || mode === 'hit') && (q.off_topic || G.hitAt(q, k) !== (mode === 'hit'))) return false;
      if (mode === 'flipped' && !flipOf(q)) return false;
      if (tag && !(q.tags || []).includes(tag)) return false;
      if (source && (q.source || 'hand') !== source) return false;
      if (text) {
        const hay = [q.id, q.question, ...Object.keys(q.expected || {}), ...(q.top || []).slice(0, 1).map((h) => h.doc || h.id)].join(' ').toLowerCase();
        if (!hay.includes(text)) return false;
      }
      return true;
    });
    const { key, dir } = state.sort;
    rows.sort((a, b) => {
      const va = sortValue(a, key, k); const vb = sortValue(b, key, k);
      if (va === null || vb === null) return (va === null) - (vb === null) || a._order - b._order;
      const c = typeof va === 'string' ? collator.compare(va, vb) : va === vb ? 0 : va < vb ? -1 : 1;
      return c * dir || a._order - b._order;
    });
    return rows;
  }

  G.renderQuestions = function renderQuestions() {
    const state = S();
    const run = state.runs[state.active];
    const k = state.k;
    const rows = visibleQuestions(run);
    const body = $('q-body');
    const page = rows.slice(0, state.shown);
    const signature = `${run.index}|${page.map((q) => q.id).join('\u0000')}`;
    if (signature === state.rowsShown && page.length) {
      // Same rows in the same order (k moved): update the pills and flip marks in place, nothing else moves.
      for (const tr of body.children) {
        const q = run.byId.get(tr.dataset.qid);
        if (q) markRow(tr, q, k);
      }
    } else {
      const fragment = document.createDocumentFragment();
      for (const q of page) fragment.append(questionRow(q, run, k));
      clear(body).append(fragment);
      state.rowsShown = signature;
    }
    if (!rows.length) {
      const why = state.filter.mode === 'flipped' && (state.prevK === null || state.prevK === k)
        ? 'Move k to see which questions become hits or misses.' : 'No question matches these filters.';
      body.append(el('tr', { class: 'empty' }, el('td', { colspan: 6, text: why })));
      state.rowsShown = null;
    }
    const more = $('show-more');
    more.hidden = rows.length <= state.shown;
    more.textContent = `Show ${Math.min(rows.length - state.shown, PAGE_ROWS * 10)} more of ${rows.length}`;
    renderCount(run, rows);
    for (const b of $('filter-mode').children) {
      b.setAttribute('aria-pressed', b.dataset.mode === state.filter.mode ? 'true' : 'false');
      if (b.dataset.mode === 'flipped') {
        const n = G.flippedBetween(run, state.prevK, k).length;
        b.textContent = state.prevK === null || state.prevK === k ? 'Changed' : `Changed ${state.prevK}→${k} (${n})`;
        b.title = 'questions that became hits or misses when k last moved';
      }
    }
    for (const th of document.querySelectorAll('#q-table th[data-sort]')) {
      const sorted = th.dataset.sort === state.sort.key;
      th.classList.toggle('sorted', sorted);
      th.setAttribute('aria-sort', sorted ? (state.sort.dir > 0 ? 'ascending' : 'descending') : 'none');
    }
  };

  function renderCount(run, rows) {
    const state = S();
    const k = state.k;
    const misses = G.answerable(run).filter((q) => !G.hitAt(q, k)).length;
    const listed = rows.length > state.shown ? ` (first ${state.shown} listed)` : '';
    const box = clear($('filter-count'));
    box.append(`${rows.length} of ${run.questions.length} questions${listed} · ${G.plural(misses, 'miss', 'misses')} at k = ${k}`);
    const flipped = G.flippedBetween(run, state.prevK, k);
    if (flipped.length || (state.prevK !== null && state.prevK !== k)) {
      const up = flipped.filter((q) => G.hitAt(q, k)).length;
      const down = flipped.length - up;
      const what = [up ? `${up} became ${up === 1 ? 'a hit' : 'hits'}` : '', down ? `${down} became ${down === 1 ? 'a miss' : 'misses'}` : ''].filter(Boolean);
      box.append(' · ', el('span', { class: 'flip-note', dataset: { from: state.prevK, to: k } },
        `k ${state.prevK} → ${k}: ${what.length ? what.join(', ') : 'no question changed'}`));
    }
  }

  function markRow(tr, q, k) {
    const pill = tr.querySelector('.pill');
    const flip = flipOf(q);
    tr.classList.toggle('flip-hit', flip === 'hit');
    tr.classList.toggle('flip-miss', flip === 'miss');
    tr.dataset.flip = flip;
    const arrow = tr.querySelector('.flip');
    arrow.textContent = flip === 'hit' ? '▲' : flip === 'miss' ? '▼' : '';
    arrow.title = flip ? `became a ${flip} when k moved from ${S().prevK} to ${k}` : '';
    if (q.off_topic) return;
    const hit = G.hitAt(q, k);
    pill.className = `pill ${hit ? 'hit' : 'miss'}`;
    pill.textContent = hit ? 'hit' : 'miss';
  }

  function questionRow(q, run, k) {
    const first = (q.top || [])[0];
    const firstCell = first
      ? el('td', { class: 'c-first' }, el('div', { class: 'first' },
        el('span', { class: `fid${G.isRelevant(first) ? ' ok' : ''}`, dataset: { counted: G.counted(first) }, text: G.displayId(first, run), title: G.displayId(first, run) }),
        el('span', { class: 'score num', text: G.fscore(first.score) })))
      : el('td', { class: 'c-first muted', text: q.error ? 'error' : 'nothing retrieved' });
    let rankText = '—';
    if (!q.off_topic) rankText = q.rank === null || q.rank === undefined ? G.missRank(run, q) : String(q.rank);
    const expected = Object.keys(q.expected || {});
    const tr = el('tr', { tabindex: 0, dataset: { qid: q.id }, class: q.id === S().selected ? 'selected' : null },
      el('td', { class: 'c-hit' }, el('span', { class: 'pill off', text: 'off-topic' }), el('span', { class: 'flip', 'aria-hidden': 'true' })),
      el('td', { class: 'c-id mono', text: q.id, title: q.id }),
      el('td', { class: 'qtext' }, el('div', { class: 'clamp', text: q.question }), el('div', { class: 'q-sub mono', text: q.id }),
        q.error ? el('span', { class: 'err-badge', text: 'retriever error' }) : null),
      el('td', { class: 'c-expected mono small' }, el('div', { class: 'clamp', text: expected.length ? expected.join(', ') : '(none: off-topic)' })),
      firstCell,
      el('td', { class: `num rank${q.rank ? '' : ' muted'}`, text: rankText }));
    markRow(tr, q, k);
    tr.addEventListener('click', () => G.select(q.id));
    tr.addEventListener('keydown', (e) => { if (e.key === 'Enter') G.select(q.id); });
    return tr;
  }

  G.select = function select(qid) {
    const state = S();
    state.selected = qid;
    G.saveHash();
    for (const tr of $('q-body').children) tr.classList.toggle('selected', tr.dataset.qid === qid);
    G.renderDetails();
  };

  // ---------- the details panel: everything at the k on screen ----------
  G.renderDetails = function renderDetails() {
    const state = S();
    const box = clear($('details'));
    const run = state.runs[state.active];
    const q = state.selected ? run.byId.get(state.selected) : null;
    box.classList.toggle('open', Boolean(q));
    $('backdrop').hidden = !q;
    document.body.classList.toggle('details-open', Boolean(q));
    if (!q) {
      box.append(el('p', { class: 'placeholder', text: 'Click a question to see what ranked, where each expected document landed, and why it missed.' }));
      return;
    }
    const k = state.k;
    box.append(el('div', { class: 'd-head' },
      el('span', { class: 'mono muted', text: q.id }),
      (q.tags || []).map((t) => el('span', { class: 'tag', text: t })),
      q.source && q.source !== 'hand' ? el('span', { class: 'tag src', text: q.source }) : null,
      el('span', { class: 'd-k', text: `k = ${k}` }),
      el('button', { class: 'close', type: 'button', 'aria-label': 'close details', text: '×', onclick: () => G.select(null) })));
    box.append(el('p', { class: 'd-run small' }, G.dot(run.color), ' ', el('strong', { text: run.label }), el('span', { class: 'muted', text: ' · what this retriever ranked' })));
    box.append(el('h3', { class: 'd-question', text: q.question }));
    box.append(el('p', { class: `d-status${q.off_topic ? '' : G.hitAt(q, k) ? ' hit' : ' miss'}`, text: statusLine(q, run, k) }));
    const flip = flipOf(q);
    if (flip) box.append(el('p', { class: `d-flip ${flip}`, text: `${flip === 'hit' ? '▲ Became a hit' : '▼ Became a miss'} when k moved from ${state.prevK} to ${k}.` }));
    if (q.error) box.append(el('div', { class: 'box error' }, el('strong', { text: 'The retriever failed on this question: ' }), q.error));
    const diag = diagnosisPart(q, run, k);
    if (diag) box.append(diag);
    if (!q.off_topic) box.append(scoresLine(q, run, k), expectedList(q, run, k));
    box.append(topList(q, run, k));
    G.append(box, G.fixesPart(q, run, k));
  };

  function statusLine(q, run, k) {
    if (q.off_topic) {
      return `Off-topic: the corpus does not cover this question, so it is not averaged into the metrics. Top-1 score ${G.fscore(q.top1_score)}.`;
    }
    if (q.rank === null || q.rank === undefined) return `Miss at k = ${k}: no expected answer retrieved (${G.missRank(run, q)}).`;
    if (q.rank <= k) return `Hit at k = ${k}: the first correct answer is at rank ${q.rank}.`;
    return `Miss at k = ${k}: the first correct answer is at rank ${q.rank}, a hit from k = ${q.rank} on.`;
  }

  /** The stored diagnosis only where it was made at the k on screen; elsewhere say at which k it was. */
  function diagnosisPart(q, run, k) {
    const d = q.diagnosis;
    if (!d || typeof d !== 'object') return null;
    if (d.k === k) {
      const box = el('div', { class: 'box diag' },
        el('div', { class: 'diag-cause' }, el('span', { class: 'muted', text: `Why it missed at k = ${k}: ` }), el('strong', { text: G.words(d.label ?? d.cause ?? 'unknown') })));
      if (d.evidence !== undefined && d.evidence !== null) box.append(el('div', { class: 'diag-row' }, el('span', { class: 'muted', text: 'Evidence ' }), G.renderValue(d.evidence)));
      if (d.suggestion) box.append(el('div', { class: 'diag-row' }, el('span', { class: 'muted', text: 'Try ' }), String(d.suggestion)));
      return box;
    }
    if (typeof d.k !== 'number' || d.k > S().maxK) return null;
    return el('p', { class: 'box diag-elsewhere' },
      `Misses are diagnosed at k = ${d.k} (the headline k). `,
      el('button', { type: 'button', class: 'linkish', text: `Show the diagnosis at k = ${d.k}`, onclick: () => G.setK(d.k) }));
  }

  /** This question's own values, where the file computed them (the computed k only). */
  function scoresLine(q, run, k) {
    const m = q.metrics || {};
    const names = ['hit', 'recall', 'precision', 'ndcg'].map((key) => `${key}@${k}`).concat(['mrr', 'map', 'bpref']).filter((n) => typeof m[n] === 'number');
    const computed = names.some((n) => n.includes('@'));
    const shown = (n) => { const { key, k: at } = G.parseMetric(n); return G.shown(run, key, at, m[n]); };
    const text = names.length ? names.map((n) => `${n} ${shown(n)}`).join(' · ') : '';
    const note = computed ? '' : ` (per-question values at k = ${(S().runs[S().active].file.data.k || []).join(', ')} only)`;
    return el('p', { class: 'd-scores small num', text: `${text}${note}` });
  }

  function expectedList(q, run, k) {
    const list = el('ul', { class: 'exp-list' });
    for (const [id, grade] of Object.entries(q.expected || {})) {
      const r = (q.ranks || {})[id];
      const snip = run.snippets[id];
      list.append(el('li', {},
        el('span', { class: `rank-badge${r ? (r <= k ? ' ok' : ' late') : ' none'}`, text: r ? `#${r}` : G.missRank(run, q) }),
        el('span', { class: 'mono', text: id }),
        grade > 1 ? el('span', { class: 'muted small', text: ` grade ${grade}` }) : null,
        snip && snip.title ? el('div', { class: 'muted small clamp1' }, G.marked(snip.title, G.highlightsOf(run, q.id, id, 'title'))) : null));
    }
    return el('div', { class: 'd-section' }, el('h4', { text: 'Where each expected answer landed' }), list);
  }

  /** The results down to the current k (as many as the file keeps), then a few below the cut-off. */
  function topList(q, run, k) {
    const top = q.top || [];
    const shown = top.slice(0, k + 3);
    const above = Math.min(k, top.length);
    const section = el('div', { class: 'd-section' }, el('h4', { text: `Top ${above} retrieved (k = ${k})` }));
    if (!top.length) { section.append(el('p', { class: 'muted', text: q.error ? 'Nothing: the retriever failed.' : 'Nothing was retrieved.' })); return section; }
    const list = el('ol', { class: 'top-list' });
    shown.forEach((hit, i) => {
      if (i === k) list.append(el('li', { class: 'cutoff', text: `cut-off k = ${k}` }));
      const sid = run.snippets[hit.id] ? hit.id : hit.doc;
      const snip = run.snippets[sid] || {};
      const marks = (part) => G.marked(snip[part], G.highlightsOf(run, q.id, sid, part));
      // what the result counted for, as Python's metrics counted it (hit.counted): looked up, no level rule here
      const counted = G.counted(hit);
      const ok = counted === 'relevant';
      list.append(el('li', { class: `hitrow${ok ? ' ok' : ''}${i >= k ? ' below' : ''}`, dataset: { counted, grade: hit.grade ?? '' } },
        el('div', { class: 'hr-top' },
          el('span', { class: 'hr-rank num', text: String(i + 1) }),
          el('span', { class: 'mono hr-id', text: hit.id, title: hit.doc && hit.doc !== hit.id ? `document ${hit.doc}` : hit.id }),
          ok ? el('span', { class: 'ok-badge', text: hit.grade > 1 ? `expected, grade ${hit.grade}` : 'expected' }) : null,
          counted === 'repeat' ? el('span', { class: 'repeat-badge', text: 'repeat', title: 'its document (or chunk) was counted already higher up: not counted again, so not relevant here' }) : null,
          counted === 'unjudged' && !q.off_topic ? el('span', { class: 'unjudged-badge', text: 'unjudged', title: 'nobody has judged this passage for this question: counted as not relevant' }) : null,
          el('span', { class: 'score num', text: G.fscore(hit.score) })),
        snip.title ? el('div', { class: 'hr-title' }, marks('title')) : null,
        snip.text ? el('div', { class: 'hr-text' }, marks('text')) : null));
    });
    section.append(list);
    if (top.length < k) {
      const kept = G.keptTop(run);
      section.append(el('p', { class: 'muted small', text: top.length >= kept
        ? `The results file keeps the top ${kept} of each question (the largest computed k); where the expected answers landed further down is listed above.`
        : `The retriever returned only ${top.length} results for this question.` }));
    }
    return section;
  }
}(window.GE = window.GE || {}));
