/* goldeval page: take it with you. CSV of the questions table (the rows the filters show, in the order on
 * screen, at the current k) and of the metric table (every retriever, every metric at the current k, its
 * interval where the file has one, the terminal's `n/a` past what a retriever returned), and a button that
 * copies the link of this view (the address already holds it: k, tab, retriever, filter, question).
 * Values are the results file's own numbers at full precision, looked up (see data.js); nothing computed.
 */
'use strict';
(function (G) {
  const { $, el } = G;
  const S = () => G.state;

  /** One CSV field (RFC 4180). A text cell that a spreadsheet would run as a formula (=, +, -, @, tab,
   * CR first) is written with a leading apostrophe: a hostile question or document id stays text. */
  function field(value, text) {
    if (value === null || value === undefined) return '';
    let s = String(value);
    if (text && /^[=+\-@\t\r]/.test(s)) s = `'${s}`;
    return /[",\r\n]/.test(s) ? `"${s.replaceAll('"', '""')}"` : s;
  }

  const csv = (rows) => rows.map((row) => row.map(([value, text]) => field(value, text)).join(',')).join('\r\n') + '\r\n';
  const num = (v) => [v, false];
  const txt = (v) => [v, true];

  /** The questions table as shown: the active retriever, the filtered rows in their order, at k. */
  G.questionsCsv = function questionsCsv() {
    const state = S();
    const run = state.runs[state.active];
    const k = state.k;
    const head = ['retriever', 'id', 'question', `hit@${k}`, 'rank', 'expected', 'ranked first', 'ranked first score', 'tags', 'source']
      .map(txt);
    const rows = G.visibleQuestions(run).map((q) => {
      const first = (q.top || [])[0];
      const hit = q.off_topic ? 'off-topic' : G.hitAt(q, k) ? 1 : 0;
      const rank = q.off_topic ? '' : q.rank ?? G.missRank(run, q);
      return [txt(run.label), txt(q.id), txt(q.question), num(hit), typeof rank === 'number' ? num(rank) : txt(rank),
        txt(Object.keys(q.expected || {}).join(' ')), txt(first ? G.displayId(first, run) : ''), num(first ? first.score : null),
        txt((q.tags || []).join(' ')), txt(q.source || 'hand')];
    });
    return csv([head, ...rows]);
  };

  /** The metric table as shown: one row per retriever and metric at k, with its interval where there is one. */
  G.metricsCsv = function metricsCsv() {
    const state = S();
    const k = state.k;
    const rows = [['retriever', 'metric', 'value', 'interval low', 'interval high', 'questions'].map(txt)];
    for (const run of state.runs) {
      for (const m of G.metricsOf(state.runs)) {
        const gone = G.unmeasurable(run, m.key, k);
        const value = gone ? null : G.valueAt(run, m.key, k);
        const ci = gone ? null : G.intervalOf(run, G.jsonName(m, k));
        rows.push([txt(run.label), txt(G.jsonName(m, k)), gone ? txt(G.unmeasuredWord(run)) : num(value),
          num(ci ? ci[0] : null), num(ci ? ci[1] : null), num(G.nHeadline(run))]);
      }
    }
    return csv(rows);
  };

  function download(name, text) {
    const url = URL.createObjectURL(new Blob([text], { type: 'text/csv;charset=utf-8' }));
    const a = el('a', { href: url, download: name });
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 0);
  }

  /** Copy the address of this view; where the clipboard is refused, show the link to copy by hand. */
  async function copyLink() {
    G.saveHash();
    const status = $('copy-status');
    try {
      await navigator.clipboard.writeText(location.href);
      status.textContent = 'link copied';
    } catch (err) {
      status.textContent = '';
      status.append(el('input', { class: 'link-field', readonly: 'readonly', value: location.href, 'aria-label': 'the link of this view' }));
      status.querySelector('input').select();
    }
  }

  G.bindExport = function bindExport() {
    $('export-questions').addEventListener('click', () => download(`goldeval-questions-k${S().k}.csv`, G.questionsCsv()));
    $('export-metrics').addEventListener('click', () => download(`goldeval-metrics-k${S().k}.csv`, G.metricsCsv()));
    $('copy-link').addEventListener('click', copyLink);
  };
}(window.GE = window.GE || {}));
