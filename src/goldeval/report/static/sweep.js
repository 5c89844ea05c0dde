/* goldeval sweep view. It draws the sweep JSON that Python wrote (goldeval.sweep): values, intervals,
   tests against the best, Pareto fronts and heatmaps are all computed there; this file only lays them
   out. Every string from the data goes into the page as text (textContent), never as markup. */
(function () {
  "use strict";

  var AXES = {
    latency_p50_ms: { name: "p50 latency", unit: "ms" },
    latency_p95_ms: { name: "p95 latency", unit: "ms" },
    index_seconds: { name: "index time", unit: "s" },
    embedding_seconds: { name: "embedding time", unit: "s" },
    index_bytes: { name: "index size", unit: "bytes" },
    api_dollars: { name: "API cost", unit: "USD" }
  };
  var SVG = "http://www.w3.org/2000/svg";

  function h(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }
  function s(tag, attrs, text) {
    var e = document.createElementNS(SVG, tag);
    Object.keys(attrs || {}).forEach(function (k) { e.setAttribute(k, String(attrs[k])); });
    if (text !== undefined) e.textContent = String(text);
    return e;
  }
  function fmt(v, digits) { return v === null || v === undefined ? "–" : Number(v).toFixed(digits === undefined ? 3 : digits); }
  function size(n) {
    if (n === null || n === undefined) return "–";
    var units = ["B", "KB", "MB", "GB"], i = 0;
    while (n >= 1024 && i < units.length - 1) { n /= 1024; i += 1; }
    return (i === 0 ? n.toFixed(0) : n.toFixed(1)) + " " + units[i];
  }
  function cost(axis, v) {
    if (v === null || v === undefined) return "–";
    if (axis === "index_bytes") return size(v);
    return fmt(v, AXES[axis].unit === "ms" ? 1 : 2) + " " + AXES[axis].unit;
  }
  function dialText(v) { return v === null || v === undefined ? "n/a" : String(v); }
  function fatal(text) { var f = document.getElementById("fatal"); f.textContent = text; f.hidden = false; }

  var data;
  try {
    data = JSON.parse(document.getElementById("goldeval-sweep").textContent);
  } catch (err) {
    fatal("The sweep data could not be read: " + err);
    return;
  }
  var primary = data.primary;
  var byLabel = {};
  data.cells.forEach(function (c) { byLabel[c.label] = c; });

  function standing(c) {
    if (!c.vs_best) return { cls: "best", text: "best" };
    if (c.vs_best.within_noise) return { cls: "noise", text: "within noise" };
    return { cls: "worse", text: "worse" };
  }

  function renderContext() {
    var id = data.identity || {}, box = document.getElementById("context");
    var items = [
      ["corpus", (id.corpus || {}).name || (id.corpus || {}).path],
      ["golden set", ((id.golden || {}).path || "") + " (" + (id.golden || {}).n_answerable + " answerable)"],
      ["configurations", data.cells.length], ["ranked by", primary], ["level", data.level],
      ["ran on", id.executor], ["created", id.created]
    ];
    items.forEach(function (it) {
      var span = h("span", "ctx");
      span.appendChild(h("span", "ctx-label", it[0]));
      span.appendChild(document.createTextNode(dialText(it[1])));
      box.appendChild(span);
    });
  }

  function renderSummary() {
    var ul = document.getElementById("summary"), st = data.statistics || {}, best = byLabel[data.best];
    if (best) {
      var ci = best.intervals[primary];
      ul.appendChild(h("li", "", "Best on " + primary + ": " + best.label + " — " + fmt(best.metrics[primary]) +
        (ci ? " (" + Math.round((st.confidence || 0.95) * 100) + "% CI " + fmt(ci[0]) + "–" + fmt(ci[1]) + ")" : "")));
    }
    if (st.n_tests) {
      ul.appendChild(h("li", "", st.within_noise + " of the other " + st.n_tests + " configurations are within noise of it; " +
        (st.n_tests - st.within_noise) + " are worse beyond noise. Tests: " + st.tests + ", Holm's correction over the " +
        st.n_tests + " tests."));
    }
    var runs = (data.stages || {}).runs || {}, emb = (data.stages || {}).embeddings || {};
    ul.appendChild(h("li", "", runs.computed ? "Searched " + runs.computed + " run(s) and embedded " + emb.texts_embedded +
      " text(s); " + runs.cached + " run(s) came from the workspace." :
      "Served from the workspace: all " + runs.cached + " stored run(s); nothing searched or embedded."));
  }

  function renderTable() {
    var table = document.getElementById("cells"), head = table.tHead, body = table.tBodies[0];
    var others = data.headline.slice(1), dials = data.varying || [];
    var tr = h("tr"), numeric = [primary].concat(others, ["p50 ms", "p95 ms", "index s", "embed s", "size", "#"]);
    ["#"].concat(dials, [primary], others, ["vs best", "p50 ms", "p95 ms", "index s", "embed s", "size", "front"])
      .forEach(function (name) { var th = h("th", numeric.indexOf(name) >= 0 ? "num" : "", name); th.scope = "col"; tr.appendChild(th); });
    head.appendChild(tr);
    data.cells.forEach(function (c, i) {
      var row = h("tr", "row-" + standing(c).cls);
      row.title = c.label;
      row.dataset.label = c.label;
      row.appendChild(sortBy(h("td", "num", i + 1), i));
      dials.forEach(function (d) { row.appendChild(h("td", "dial", dialText(c.dials[d]))); });
      var main = h("td", "num value");
      sortBy(main, c.metrics[primary]);
      main.appendChild(h("span", "v", fmt(c.metrics[primary])));
      var ci = c.intervals[primary];
      if (ci) main.appendChild(h("span", "ci", fmt(ci[0]) + "–" + fmt(ci[1])));
      row.appendChild(main);
      others.forEach(function (m) { row.appendChild(sortBy(h("td", "num", fmt(c.metrics[m])), c.metrics[m])); });
      var st = standing(c), vs = sortBy(h("td", "vs"), c.vs_best ? c.vs_best.diff : 0);
      vs.appendChild(h("span", "tag " + st.cls, st.text));
      if (c.vs_best) {
        vs.appendChild(h("span", "diff", " " + (c.vs_best.diff * 100).toFixed(1) + " pts"));
        vs.title = c.vs_best.verdict;
      }
      row.appendChild(vs);
      ["latency_p50_ms", "latency_p95_ms"].forEach(function (a) { row.appendChild(sortBy(h("td", "num", fmt(c.cost[a], 1)), c.cost[a])); });
      row.appendChild(sortBy(h("td", "num", fmt(c.cost.index_seconds, 2)), c.cost.index_seconds));
      row.appendChild(sortBy(h("td", "num", (c.cost.embedding_estimated ? "~" : "") + fmt(c.cost.embedding_seconds, 1)), c.cost.embedding_seconds));
      row.appendChild(sortBy(h("td", "num", size(c.cost.index_bytes)), c.cost.index_bytes));
      var front = h("td", "front-mark", c.pareto.length ? "★" : "");
      if (c.pareto.length) front.title = "on the front of " + c.pareto.map(function (a) { return AXES[a].name; }).join(", ");
      row.appendChild(sortBy(front, -c.pareto.length));
      body.appendChild(row);
    });
    if (window.matchMedia && window.matchMedia("(max-width: 640px)").matches) metricsFirst(table, dials.length, others.length);
    sortable(table);
  }

  /** At phone width the metrics come right after "#", before the dials, so they are on screen without
   * scrolling sideways; the dials follow (the row's title names the configuration too). */
  function metricsFirst(table, nDials, nOthers) {
    Array.prototype.forEach.call(table.rows, function (row) {
      var cells = Array.prototype.slice.call(row.cells, 1, 1 + nDials);
      var after = row.cells[1 + nDials + 1 + nOthers + 1];  // "#", dials, primary, others, "vs best"
      cells.forEach(function (cell) { row.insertBefore(cell, after); });
    });
  }

  /** The value a numeric column sorts by (the cell's number, not its text); none sorts last. */
  function sortBy(td, value) {
    td.dataset.sort = value === null || value === undefined ? "" : String(value);
    return td;
  }

  /** Click (or Enter on) a heading to sort the rows by that column; again to reverse. Numbers sort by value,
   * text by its words; a cell without a value sorts last either way. "#" restores best first. */
  function sortable(table) {
    var heads = table.tHead.rows[0].cells, body = table.tBodies[0], state = { col: 0, dir: 1 };
    var collator = new Intl.Collator(undefined, { numeric: true, sensitivity: "base" });
    function key(row, col) {
      var td = row.cells[col];
      if (td.dataset.sort === undefined) return td.textContent;
      return td.dataset.sort === "" ? null : Number(td.dataset.sort);
    }
    function sort(col) {
      state = { col: col, dir: state.col === col ? -state.dir : 1 };
      var rows = Array.prototype.slice.call(body.rows);
      rows.sort(function (a, b) {
        var va = key(a, col), vb = key(b, col);
        if (va === null || vb === null) return (va === null) - (vb === null);
        var c = typeof va === "string" ? collator.compare(va, vb) : va === vb ? 0 : va < vb ? -1 : 1;
        return c * state.dir || Number(a.cells[0].dataset.sort) - Number(b.cells[0].dataset.sort);
      });
      rows.forEach(function (r) { body.appendChild(r); });
      Array.prototype.forEach.call(heads, function (th, i) {
        th.setAttribute("aria-sort", i === col ? (state.dir > 0 ? "ascending" : "descending") : "none");
      });
    }
    Array.prototype.forEach.call(heads, function (th, i) {
      th.tabIndex = 0;
      th.classList.add("sortable");
      th.addEventListener("click", function () { sort(i); });
      th.addEventListener("keydown", function (e) { if (e.key === "Enter" || e.key === " ") { e.preventDefault(); sort(i); } });
    });
  }

  function renderHeatmapPicker() {
    var select = document.getElementById("hm-pair"), maps = data.heatmaps || [];
    if (!maps.length) {
      document.getElementById("hm-note").textContent = "Fewer than two dials take several values: no heatmap to draw.";
      select.disabled = true;
      return;
    }
    maps.forEach(function (m, i) { var o = h("option", "", m.rows + " × " + m.cols); o.value = String(i); select.appendChild(o); });
    select.addEventListener("change", function () { renderHeatmap(maps[Number(select.value)]); });
    renderHeatmap(maps[0]);
  }

  function renderHeatmap(m) {
    var table = document.getElementById("heatmap");
    table.textContent = "";
    document.getElementById("hm-note").textContent = "Each square: the best " + m.metric + " among the configurations " +
      "with that " + m.rows + " and " + m.cols + " (hover for which). ≈ within noise of the best; ● the best.";
    var known = [];
    m.values.forEach(function (row) { row.forEach(function (v) { if (v !== null) known.push(v); }); });
    var low = Math.min.apply(null, known), high = Math.max.apply(null, known);
    var head = h("tr");
    head.appendChild(h("th", "corner", m.rows + " \\ " + m.cols));
    m.col_values.forEach(function (v) { head.appendChild(h("th", "num", dialText(v))); });
    table.appendChild(head);
    m.row_values.forEach(function (rv, i) {
      var tr = h("tr");
      tr.appendChild(h("th", "", dialText(rv)));
      m.col_values.forEach(function (cv, j) {
        var v = m.values[i][j], td = h("td", "hm num");
        if (v === null) { td.classList.add("empty"); td.textContent = "–"; tr.appendChild(td); return; }
        var mark = m.labels[i][j] === data.best ? " ●" : m.within_noise[i][j] ? " ≈" : "";
        td.textContent = fmt(v) + mark;
        td.title = m.labels[i][j];
        var t = high > low ? (v - low) / (high - low) : 1;
        td.style.backgroundColor = "hsl(" + (8 + 122 * t).toFixed(0) + ", 62%, " + (88 - 22 * t).toFixed(0) + "%)";
        if (m.within_noise[i][j]) td.classList.add("noise");
        tr.appendChild(td);
      });
      table.appendChild(tr);
    });
  }

  function renderParetoPicker() {
    var select = document.getElementById("pareto-axis");
    var axes = Object.keys(AXES).filter(function (a) {
      return data.cells.some(function (c) { return c.cost[a] !== null && c.cost[a] !== undefined; });
    });
    axes.forEach(function (a) { var o = h("option", "", AXES[a].name); o.value = a; select.appendChild(o); });
    select.addEventListener("change", function () { renderPareto(select.value); });
    if (axes.length) renderPareto(axes[0]);
  }

  function ticks(lo, hi, log) {
    var out = [];
    if (log) {
      for (var e = Math.floor(Math.log10(lo)); e <= Math.ceil(Math.log10(hi)); e++) {
        [1, 2, 5].forEach(function (m) { var v = m * Math.pow(10, e); if (v >= lo && v <= hi) out.push(v); });
      }
      return out;
    }
    var raw = (hi - lo) / 4, mag = Math.pow(10, Math.floor(Math.log10(raw || 1)));
    var step = [1, 2, 5, 10].map(function (m) { return m * mag; }).filter(function (st) { return st >= raw; })[0] || raw;
    for (var v = Math.ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) out.push(+v.toPrecision(12));
    return out;
  }

  function renderPareto(axis) {
    var box = document.getElementById("pareto"), list = document.getElementById("front");
    box.textContent = "";
    list.textContent = "";
    var front = (data.pareto || {})[axis] || [];
    var pts = data.cells.filter(function (c) { return c.cost[axis] !== null && c.cost[axis] !== undefined && c.metrics[primary] !== undefined; });
    document.getElementById("pareto-note").textContent = primary + " (higher is better) against " + AXES[axis].name +
      " (lower is better). Filled points are on the Pareto front: no other configuration is both cheaper and better. " +
      (data.cells.length - pts.length ? (data.cells.length - pts.length) + " configuration(s) have no value for this cost." : "");
    if (!pts.length) return;
    var W = 760, H = 400, L = 64, R = 20, T = 16, B = 48;
    var xs = pts.map(function (c) { return c.cost[axis]; }), ys = pts.map(function (c) { return c.metrics[primary]; });
    var xlo = Math.min.apply(null, xs), xhi = Math.max.apply(null, xs);
    var log = xlo > 0 && xhi / xlo >= 30;
    if (xhi === xlo) { xhi = xlo + (xlo || 1); xlo = log ? xlo : Math.max(0, xlo - (xhi - xlo)); }
    if (log) { xlo /= 1.15; xhi *= 1.15; } else { var xpad = (xhi - xlo) * 0.04; xlo = Math.max(0, xlo - xpad); xhi += xpad; }
    var ylo = Math.min.apply(null, ys), yhi = Math.max.apply(null, ys), pad = (yhi - ylo) * 0.08 || 0.02;
    ylo -= pad; yhi += pad;
    function X(v) { var a = log ? Math.log10(v) : v, lo = log ? Math.log10(xlo) : xlo, hi = log ? Math.log10(xhi) : xhi; return L + (W - L - R) * (a - lo) / (hi - lo || 1); }
    function Y(v) { return T + (H - T - B) * (1 - (v - ylo) / (yhi - ylo || 1)); }
    var plot = s("svg", { viewBox: "0 0 " + W + " " + H, role: "img", "aria-label": primary + " against " + AXES[axis].name, class: "plot" });
    plot.appendChild(s("line", { x1: L, y1: H - B, x2: W - R, y2: H - B, class: "axis" }));
    plot.appendChild(s("line", { x1: L, y1: T, x2: L, y2: H - B, class: "axis" }));
    ticks(xlo, xhi, log).forEach(function (v) {
      plot.appendChild(s("line", { x1: X(v), y1: H - B, x2: X(v), y2: H - B + 4, class: "axis" }));
      plot.appendChild(s("text", { x: X(v), y: H - B + 16, class: "tick", "text-anchor": "middle" }, axis === "index_bytes" ? size(v) : +v.toPrecision(2)));
    });
    ticks(ylo, yhi, false).forEach(function (v) {
      plot.appendChild(s("line", { x1: L - 4, y1: Y(v), x2: W - R, y2: Y(v), class: "grid" }));
      plot.appendChild(s("text", { x: L - 8, y: Y(v) + 4, class: "tick", "text-anchor": "end" }, +v.toFixed(3)));
    });
    plot.appendChild(s("text", { x: (L + W - R) / 2, y: H - 8, class: "label", "text-anchor": "middle" },
      AXES[axis].name + (AXES[axis].unit === "bytes" ? "" : " (" + AXES[axis].unit + ")") + (log ? ", log scale" : "")));
    plot.appendChild(s("text", { x: 14, y: (T + H - B) / 2, class: "label", "text-anchor": "middle", transform: "rotate(-90 14 " + (T + H - B) / 2 + ")" }, primary));
    var onFront = front.map(function (l) { return byLabel[l]; }).filter(Boolean);
    if (onFront.length > 1) {
      var d = "";
      onFront.forEach(function (c, i) {
        var x = X(c.cost[axis]), y = Y(c.metrics[primary]);
        d += i === 0 ? "M" + x + " " + y : " H" + x + " V" + y;
      });
      plot.appendChild(s("path", { d: d, class: "front-line" }));
    }
    pts.forEach(function (c) {
      var isFront = front.indexOf(c.label) >= 0;
      var dot = s("circle", { cx: X(c.cost[axis]), cy: Y(c.metrics[primary]), r: isFront ? 6 : 4.5,
        class: "pt " + standing(c).cls + (isFront ? " on-front" : ""), "data-label": c.label });
      dot.appendChild(s("title", {}, c.label + "\n" + primary + " " + fmt(c.metrics[primary]) + ", " + AXES[axis].name + " " + cost(axis, c.cost[axis])));
      plot.appendChild(dot);
    });
    box.appendChild(plot);
    onFront.forEach(function (c) {
      list.appendChild(h("li", "", c.label + " — " + primary + " " + fmt(c.metrics[primary]) + ", " + cost(axis, c.cost[axis])));
    });
  }

  renderContext();
  renderSummary();
  renderTable();
  renderHeatmapPicker();
  renderParetoPicker();
})();
