/* goldeval page: the metrics against k, one small panel per metric (hit@k, recall@k, nDCG@k, then MRR and
 * MAP, and bpref where the file has it), one line per retriever, the current k marked. Every point is a
 * lookup: a curve point (`curves[metric][k - 1]`), or the whole-ranking value drawn flat so it is plain why
 * it does not move with k. Intervals are drawn as bands where the file has them: at the computed k for the
 * curves, across every k for the flat metrics. Points past what a retriever returned are not drawn
 * (unmeasurable, see data.js). Inline SVG, nothing fetched.
 */
'use strict';
(function (G) {
  const { $, el, clear, f3 } = G;
  const S = () => G.state;
  const PANEL = { W: 260, H: 170, L: 36, R: 10, T: 24, B: 26 };
  const PLOTTED = ['hit', 'recall', 'ndcg'];

  /** The panels: the three curves people drag k for, then the metrics of the whole ranking. */
  function panels(runs) {
    const curves = G.CURVES.filter((m) => PLOTTED.includes(m.key)).map((m) => ({ ...m, fixed: false }));
    return curves.concat(G.metricsOf(runs).filter((m) => m.fixed));
  }

  const xOf = (k, maxK) => PANEL.L + (maxK > 1 ? (k - 1) / (maxK - 1) : 0.5) * (PANEL.W - PANEL.L - PANEL.R);
  const yOf = (v) => PANEL.T + (1 - v) * (PANEL.H - PANEL.T - PANEL.B);
  const text = (attrs, value) => { const t = G.svg('text', attrs); t.textContent = value; return t; };

  /** The whole plot, drawn once per payload; `G.updatePlot` moves the current k. */
  G.renderPlot = function renderPlot() {
    const state = S();
    const box = clear($('k-plot'));
    const legend = el('p', { class: 'plot-legend small' }, el('span', { class: 'muted', text: 'Against k: ' }),
      state.runs.map((run) => el('span', { class: 'plot-key' }, G.dot(run.color), ` ${run.label} `)),
      el('span', { class: 'muted', text: ' · shaded: intervals where the file has them · MRR, MAP: the whole ranking, flat in k' }));
    const grid = el('div', { class: 'plot-grid' });
    for (const m of panels(state.runs)) grid.append(panel(m, state));
    box.append(legend, grid);
    G.updatePlot();
  };

  function panel(m, state) {
    const { W, H } = PANEL;
    const maxK = state.maxK;
    const svg = G.svg('svg', { viewBox: `0 0 ${W} ${H}`, class: 'kplot', role: 'img', 'aria-label': `${m.label('k')} against k for every retriever`,
      'data-metric': m.key, 'data-kmax': maxK, 'data-x1': xOf(1, maxK), 'data-xmax': xOf(maxK, maxK), 'data-y0': yOf(0), 'data-y1': yOf(1) });
    svg.append(text({ x: PANEL.L, y: 14, class: 'plot-title' }, m.fixed ? `${m.label('k')} (flat: no k)` : m.label('k')));
    for (const v of [0, 0.5, 1]) {
      svg.append(G.svg('line', { x1: PANEL.L, x2: W - PANEL.R, y1: yOf(v), y2: yOf(v), class: 'plot-grid-line' }),
        text({ x: PANEL.L - 4, y: yOf(v) + 3, class: 'plot-tick', 'text-anchor': 'end' }, v.toFixed(1)));
    }
    svg.append(text({ x: xOf(1, maxK), y: H - 8, class: 'plot-tick', 'text-anchor': 'start' }, 'k=1'),
      text({ x: xOf(maxK, maxK), y: H - 8, class: 'plot-tick', 'text-anchor': 'end' }, `k=${maxK}`));
    for (const run of state.runs) svg.append(series(run, m, maxK));
    svg.append(G.svg('line', { class: 'plot-k', x1: 0, x2: 0, y1: PANEL.T - 4, y2: yOf(0) }));
    return svg;
  }

  /** One retriever on one panel: its bands, its line and one point per k (data-k, data-value). */
  function series(run, m, maxK) {
    const g = G.svg('g', { class: 'plot-run', 'data-run': run.index });
    const points = [];
    for (let k = 1; k <= maxK; k += 1) {
      const value = G.unmeasurable(run, m.key, k) ? null : G.valueAt(run, m.key, k);
      if (value !== null) points.push([k, value]);
    }
    for (const band of bands(run, m, maxK)) g.append(band);
    if (points.length > 1) {
      g.append(G.svg('polyline', { points: points.map(([k, v]) => `${xOf(k, maxK).toFixed(2)},${yOf(v).toFixed(2)}`).join(' '),
        fill: 'none', stroke: run.color, 'stroke-width': 2, class: m.fixed ? 'plot-line flat' : 'plot-line' }));
    }
    for (const [k, v] of points) {
      const dot = G.svg('circle', { cx: xOf(k, maxK).toFixed(2), cy: yOf(v).toFixed(2), r: 2.2, fill: run.color, class: 'plot-pt', 'data-k': k, 'data-value': v });
      dot.append(titleOf(`${run.label}: ${m.label(k)} = ${f3(v)}`));
      g.append(dot);
    }
    return g;
  }

  function titleOf(value) { const t = G.svg('title', {}); t.textContent = value; return t; }

  /** The intervals the file has: a band across every k for a flat metric, one per computed k for a curve. */
  function bands(run, m, maxK) {
    const out = [];
    const half = Math.max(3, (PANEL.W - PANEL.L - PANEL.R) / Math.max(1, maxK - 1) / 3);
    const add = (x, width, ci, label) => {
      const rect = G.svg('rect', { x: x.toFixed(2), width: width.toFixed(2), y: yOf(ci[1]).toFixed(2), height: Math.max(1, yOf(ci[0]) - yOf(ci[1])).toFixed(2),
        fill: run.color, class: 'plot-band', 'data-lo': ci[0], 'data-hi': ci[1] });
      rect.append(titleOf(`${run.label}: ${label} interval ${f3(ci[0])} to ${f3(ci[1])}`));
      out.push(rect);
    };
    if (m.fixed) {
      const ci = G.intervalOf(run, m.key);
      if (ci) add(PANEL.L, PANEL.W - PANEL.L - PANEL.R, ci, m.label());
      return out;
    }
    for (const k of run.file.data.k || []) {
      const ci = k <= maxK && !G.unmeasurable(run, m.key, k) ? G.intervalOf(run, `${m.key}@${k}`) : null;
      if (ci) add(Math.max(PANEL.L, xOf(k, maxK) - half), 2 * half, ci, m.label(k));
    }
    return out;
  }

  /** Move the current-k line and mark each retriever's point at k. */
  G.updatePlot = function updatePlot() {
    const state = S();
    for (const svg of document.querySelectorAll('#k-plot svg.kplot')) {
      const x = xOf(state.k, Number(svg.dataset.kmax)).toFixed(2);
      const line = svg.querySelector('.plot-k');
      line.setAttribute('x1', x);
      line.setAttribute('x2', x);
      for (const dot of svg.querySelectorAll('.plot-pt')) {
        const current = Number(dot.dataset.k) === state.k;
        dot.classList.toggle('cur', current);
        dot.setAttribute('r', current ? 4.5 : 2.2);
      }
    }
  };
}(window.GE = window.GE || {}));
