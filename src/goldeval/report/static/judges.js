/* goldeval page: the Judges tab, what `goldeval judge --json` found (`goldeval report --judges FILE`).
 *
 * It shows, computing nothing: the calibration against people (`judges.calibration`: the confusion
 * matrix, kappa, weighted kappa, interval alpha, relevant-vs-not agreement, bias, their intervals, the pairs
 * needed, the disagreements worst first), the ranking check (`judges.ranking.metrics[]`: the orderings,
 * tau and tau_AP, judged@k, the verdicts that change) and the covered judge (`judges.covered`), all made by
 * goldeval.judging and written into the payload as they are.
 */
'use strict';
(function (G) {
  const { el, $ } = G;
  const NAMES = {
    kappa: "Cohen's kappa", weighted_kappa: 'linear-weighted kappa', alpha: "Krippendorff's alpha (interval)",
    relevant_agreement: 'agreement, relevant vs not', bias: 'bias (machine − people, grade points)',
  };
  const SCHEMES = { people: 'people only', filled: 'people + machine filling the unjudged', machine: 'machine only' };
  const num = (x, d = 3) => (x === null || x === undefined ? 'n/a' : Number(x).toFixed(d));

  /** The judge's results in the payload, or null. */
  G.judgesOf = function judgesOf() {
    const payload = G.state && G.state.payload;
    return (payload && payload.judges) || null;
  };

  function calibration(c) {
    const box = el('div', { class: 'box', id: 'jd-calibration' },
      el('h3', { class: 'sec-title', text: `Calibration against people: ${c.pairs} passage(s) both graded, over ${c.questions} question(s)` }));
    for (const note of c.notes || []) box.append(el('p', { class: 'empty-note', text: note }));
    if (!c.pairs) return box;
    const matrix = el('table', { class: 'jd-confusion' },
      el('tr', {}, el('th', { text: 'people \\ machine' }), [0, 1, 2, 3].map((g) => el('th', { text: String(g) }))),
      c.confusion.matrix.map((row, g) => el('tr', {}, el('th', { text: String(g) }), row.map((n) => el('td', { text: String(n) })))));
    const stats = el('table', { class: 'jd-stats' }, Object.entries(NAMES).map(([key, name]) => {
      const ci = c.intervals[key];
      return el('tr', { dataset: { stat: key } }, el('th', { text: name }), el('td', { text: num(c.values[key]) }),
        el('td', { class: 'muted', text: ci ? `[${num(ci[0])}, ${num(ci[1])}]` : 'no interval (fewer than 10 questions)' }));
    }));
    box.append(matrix, stats);
    const needed = c['pairs_needed_for_kappa_within_0.1'];
    if (needed !== null && needed !== undefined) box.append(el('p', { text: `To pin kappa within ±0.1 (95%): about ${needed} graded pairs (${c.pairs} here).` }));
    const worst = c.disagreements.slice(0, 20);
    if (worst.length) {
      box.append(el('h4', { text: `Disagreements, worst first (${c.disagreements.length} in all)` }), el('table', { class: 'jd-disagreements' },
        el('tr', {}, ['question', 'passage', 'people', 'machine', 'reply'].map((h) => el('th', { text: h }))),
        worst.map((d) => el('tr', {}, [d.question, d.passage, d.people, d.machine, d.reply].map((v) => el('td', { text: String(v) }))))));
    }
    return box;
  }

  function ranking(r) {
    const box = el('div', { class: 'box', id: 'jd-ranking' }, el('h3', { class: 'sec-title', text: 'Does the ranking survive?' }));
    for (const m of r.metrics) {
      box.append(el('h4', { text: `${m.metric} (judged@${m.k} beside)` }), el('table', { class: 'jd-schemes' },
        el('tr', {}, ['labels', 'order', 'tau', 'tau_AP', `judged@${m.k}`].map((h) => el('th', { text: h }))),
        Object.entries(m.schemes).map(([name, s]) => el('tr', { dataset: { scheme: name } }, el('td', { text: SCHEMES[name] || name }),
          el('td', { text: s.order.map((x) => `${x} ${num(s.means[x])}`).join(' > ') }), el('td', { text: num(s.kendall_tau) }),
          el('td', { text: num(s.tau_ap) }), el('td', { text: Object.entries(s.judged_at_k).map(([x, v]) => `${x} ${num(v, 2)}`).join(', ') })))));
      for (const ch of m.changes) {
        box.append(el('p', { class: 'jd-change', text: `With ${SCHEMES[ch.scheme]}: ${ch.a} vs ${ch.b} is “${ch.verdict}”; people say “${ch.people}”.` }));
      }
    }
    box.append(el('p', { class: 'box verdicts', id: 'jd-conclusion', text: r.conclusion_changes
      ? 'The machine labels CHANGE a conclusion: do not let them stand in for people\'s labels as they are.'
      : 'The machine labels change no ordering and no paired verdict.' }));
    return box;
  }

  function covered(c) {
    const t = c.threshold || {};
    return el('div', { class: 'box', id: 'jd-covered' },
      el('h3', { class: 'sec-title', text: `Does the corpus answer it? Covered / not covered on ${c.retriever}'s top ${c.k}` }),
      el('p', { text: `Judge: accuracy ${num(c.accuracy)}, off-topic caught ${num(c.roc_point.tpr)}, answerable refused ${num(c.roc_point.fpr)}, Youden's J ${num(c.youden_j)}.` }),
      el('p', { text: `Score threshold: AUC ${num(t.auc)}, best Youden's J ${num(t.youden_j)}. ${t.verdict || ''}` }),
      c.beats_threshold === null ? null : el('p', { class: 'verdicts', text: `The judge ${c.beats_threshold ? 'beats' : 'does not beat'} the score threshold on this golden set.` }));
  }

  G.renderJudges = function renderJudges() {
    const body = $('jd-body');
    body.replaceChildren();
    const j = G.judgesOf();
    if (!j) return;
    G.append(body, [el('p', { class: 'count', text: `judge ${j.model} (prompt ${j.prompt_version}): ${j.labels.length} passage(s), ${j.failed} failed; ${j.calls.made} call(s), ${j.calls.cached} cached. Machine labels are suggestions: none is a person's judgment.` }),
      calibration(j.calibration), j.ranking ? ranking(j.ranking) : null, j.covered ? covered(j.covered) : null]);
  };
}(window.GE = window.GE || {}));
