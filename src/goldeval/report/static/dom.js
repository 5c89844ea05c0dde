/* goldeval page: DOM and formatting helpers, shared by the other scripts through `window.GE`.
 *
 * Safety: every string that comes from the results (questions, document ids, titles, snippets, tags,
 * diagnoses) reaches the page through textContent or a text node, never innerHTML, so a document that
 * contains a script element or an img onerror attribute shows as text and cannot run.
 */
'use strict';
(function (G) {
  G.$ = (id) => document.getElementById(id);

  /** An element with properties (`class`, `text`, `dataset`, `on<event>`, attributes) and children. */
  G.el = function el(tag, props, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(props || {})) {
      if (value === undefined || value === null || value === false) continue;
      if (key === 'class') node.className = value;
      else if (key === 'text') node.textContent = String(value);
      else if (key === 'dataset') Object.assign(node.dataset, value);
      else if (key.startsWith('on')) node.addEventListener(key.slice(2), value);
      else node.setAttribute(key, String(value));
    }
    for (const child of children) G.append(node, child);
    return node;
  };

  G.append = function append(node, child) {
    if (child === null || child === undefined || child === false) return;
    if (Array.isArray(child)) child.forEach((c) => G.append(node, c));
    else node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  };

  G.svg = function svg(tag, attrs) {
    const node = document.createElementNS('http://www.w3.org/2000/svg', tag);
    for (const [key, value] of Object.entries(attrs || {})) node.setAttribute(key, String(value));
    return node;
  };

  G.clear = function clear(node) {
    while (node.firstChild) node.removeChild(node.firstChild);
    return node;
  };

  /** Text with the given [start, end) spans (UTF-16 code units, from Python) wrapped in <mark>: text nodes
   * only, so a hostile snippet stays text. Spans out of order or out of range are ignored. */
  G.marked = function marked(text, spans) {
    const value = String(text);
    const out = [];
    let at = 0;
    for (const [start, end] of spans || []) {
      if (!(Number.isInteger(start) && Number.isInteger(end)) || start < at || end <= start || end > value.length) continue;
      if (start > at) out.push(value.slice(at, start));
      out.push(G.el('mark', { class: 'qword', text: value.slice(start, end) }));
      at = end;
    }
    if (at < value.length) out.push(value.slice(at));
    return out;
  };

  G.dot = function dot(color) {
    const span = G.el('span', { class: 'dot' });
    span.style.background = color;
    return span;
  };

  const missing = (x) => x === null || x === undefined || Number.isNaN(x);
  // Python's format(x, '.3f') rounds the exact binary value half to even (0.0625 -> 0.062) where
  // toFixed rounds half up (0.063): the page prints what the terminal prints.
  const fixed = (digits) => {
    try {
      const nf = new Intl.NumberFormat('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits, roundingMode: 'halfEven', useGrouping: false });
      return (x) => nf.format(x);
    } catch (err) { return (x) => x.toFixed(digits); }
  };
  const fixed3 = fixed(3);
  const fixed1 = fixed(1);
  /** A metric value as the terminal prints it: three decimals. */
  G.f3 = (x) => (missing(x) ? '—' : fixed3(x));
  /** A retriever score: three decimals, one when it is large (BM25 sums). */
  G.fscore = (x) => (missing(x) ? '—' : Math.abs(x) >= 100 ? fixed1(x) : fixed3(x));
  /** A share already computed in Python (a ROC rate), as a percentage. */
  G.percent = (x) => (missing(x) ? '—' : `${(x * 100).toFixed(1)}%`);
  G.plural = (n, word, many) => `${n} ${n === 1 ? word : many || `${word}s`}`;
  G.words = (key) => String(key).replaceAll('_', ' ');

  /** A generic, text-only view of any JSON value (for parts of the results the page has no view for). */
  G.renderValue = function renderValue(value, depth = 0) {
    const { el } = G;
    if (value === null || value === undefined) return el('span', { class: 'muted', text: '—' });
    if (typeof value === 'number') return el('span', { class: 'num', text: Number.isInteger(value) ? String(value) : G.f3(value) });
    if (typeof value !== 'object') return el('span', { text: String(value) });
    if (depth > 4) return el('span', { class: 'muted', text: '…' });
    if (Array.isArray(value)) {
      if (value.every((x) => x === null || typeof x !== 'object')) {
        const shown = value.slice(0, 50).map((x) => (typeof x === 'number' && !Number.isInteger(x) ? G.f3(x) : String(x)));
        return el('span', { class: 'num', text: shown.join(', ') + (value.length > 50 ? `, … (${value.length})` : '') });
      }
      return el('ul', { class: 'plain' }, value.slice(0, 200).map((x) => el('li', {}, renderValue(x, depth + 1))));
    }
    const dl = el('dl', { class: 'kv' });
    for (const [key, v] of Object.entries(value)) dl.append(el('dt', { text: G.words(key) }), el('dd', {}, renderValue(v, depth + 1)));
    return dl;
  };

  G.extrasSection = function extrasSection(title, value, note) {
    if (value === undefined || value === null) return null;
    return G.el('details', { class: 'extras' }, G.el('summary', { text: title }),
      note ? G.el('p', { class: 'muted small', text: note }) : null, G.renderValue(value));
  };
}(window.GE = window.GE || {}));
