// goldeval review: one item at a time, keyboard first. Runs after items.js (state, fetchItems, send, move, el,
// highlighted, showError); every text goes into the page through textContent, as there.
"use strict";

state.editing = false;
state.payload = null;

async function load() {
  const response = await fetchItems();
  if (!response.ok) { showError(`cannot load the items: ${await failure(response)}`); return; }
  state.payload = await response.json();
  state.items = state.payload.items || [];
  $("file").textContent = state.payload.file || "";
  $("golden-name").textContent = state.payload.golden || "the golden set";
  const first = state.items.findIndex((item) => item.status === "unreviewed");
  state.index = first >= 0 ? first : 0;
  render();
}

async function verdict(name) {
  const item = await send({ action: name });
  if (!item) return;
  if (name !== "reset" && state.index < state.items.length - 1) state.index += 1;
  render();
}

async function setExpected(docs) {
  if (await send({ action: "expected", docs })) render();
}

function toggleOther(n) {
  const item = current();
  const others = item.passages.filter((p) => p.role === "other");
  const other = others[n];
  if (!other) return;
  const docs = item.expected.includes(other.doc)
    ? item.expected.filter((d) => d !== other.doc)
    : item.expected.concat([other.doc]);
  setExpected(docs);
}

function startEdit() {
  state.editing = true;
  $("edit-form").hidden = false;
  $("edit-text").value = current().question;
  $("edit-text").focus();
  $("edit-text").select();
}

function stopEdit() {
  state.editing = false;
  $("edit-form").hidden = true;
}

async function saveEdit() {
  const text = $("edit-text").value.trim();
  if (!text) { showError("the question cannot be empty"); return; }
  stopEdit();
  if (text !== current().question && await send({ action: "edit", question: text })) render();
}

function renderLeakage(leak) {
  if (!leak || leak.content_words === undefined) return "";
  const parts = [];
  if (leak.content_share !== null) parts.push(`${Math.round(leak.content_share * 100)}% of its words are in the passage`);
  if (leak.longest_copy) parts.push(`copies "${leak.copied_phrase}" (${leak.longest_copy} words)`);
  if (leak.repeats_heading) parts.push(`repeats the heading "${leak.repeats_heading}"`);
  if (leak.rank_stale) parts.push("BM25 rank: not re-ranked after the edit");
  else parts.push(leak.source_rank ? `BM25 ranks the source #${leak.source_rank}` : "BM25 misses the source");
  return "Leakage: " + parts.join(" · ");
}

function render() {
  const counts = { unreviewed: 0, accepted: 0, rejected: 0 };
  for (const item of state.items) counts[item.status] = (counts[item.status] || 0) + 1;
  $("counts").textContent = `${counts.accepted} accepted · ${counts.rejected} rejected · ${counts.unreviewed} to review`;
  const item = current();
  $("main").hidden = !item;
  $("empty").hidden = Boolean(item);
  if (!item) return;
  $("position").textContent = `question ${state.index + 1} of ${state.items.length}`;
  $("status").textContent = item.status;
  $("status").className = `status ${item.status}`;
  const meta = item.meta || {};
  $("meta").textContent = [meta.generator, meta.model, meta.created].filter(Boolean).join(" · ");
  $("question").textContent = item.question;
  $("leakage").textContent = renderLeakage(item.leakage);
  renderExpected(item);
  renderSource(item);
  renderLog(item.log);
  renderOthers(item);
  const history = $("history");
  history.replaceChildren(...(item.history || []).map((h) => el("li",
    `${h.at} ${h.by}: ${h.action}` + (h.from !== undefined ? ` (${JSON.stringify(h.from)} → ${JSON.stringify(h.to)})` : ""))));
  stopEdit();
}

// A question written from a passage shows it; one from a search log has none (golden suggest), so its
// box stays hidden and the log's figures show instead.
function renderSource(item) {
  const source = item.passages.find((p) => p.role === "source");
  $("source-box").hidden = !source;
  if (!source) return;
  $("source-id").textContent = source.id;
  $("source-title").textContent = source.title;
  $("source-text").replaceChildren(highlighted(source.text, source.highlights));
}

function plural(n, word) { return `${n} ${word}${n === 1 ? "" : "s"}`; }

function renderLog(log) {
  $("log-box").hidden = !log;
  if (!log) return;
  $("log-name").textContent = log.log || "";
  const parts = [`searched ${plural(log.count || 0, "time")}`];
  if (log.first_seen && log.last_seen && log.first_seen !== log.last_seen) parts[0] += ` between ${log.first_seen} and ${log.last_seen}`;
  else if (log.last_seen || log.first_seen) parts[0] += ` on ${log.last_seen || log.first_seen}`;
  if (log.clicks) parts.push(`${plural(log.clicks, "click")} on results`);
  if (log.negative_feedback) parts.push(`${log.negative_feedback} with negative feedback`);
  $("log-searches").textContent = parts.join(" · ");
  $("log-variants").replaceChildren(...(log.variants || []).map((v) => el("li", v)));
  $("log-coverage").textContent = log.nearest_question
    ? `Closest golden question: ${log.nearest_question} (cosine similarity ${Number(log.coverage).toFixed(2)}).`
    : "The golden set had no answerable question to compare it with.";
}

function renderExpected(item) {
  const list = $("expected");
  list.replaceChildren(...item.expected.map((doc) => {
    const li = el("li", doc);
    if (!item.locked.includes(doc)) {
      const remove = el("button", "×");
      remove.type = "button";
      remove.title = `remove ${doc}`;
      remove.addEventListener("click", () => setExpected(item.expected.filter((d) => d !== doc)));
      li.append(remove);
    }
    return li;
  }));
}

function renderOthers(item) {
  const others = item.passages.filter((p) => p.role === "other");
  $("others-box").hidden = !others.length;  // an empty list is no answer to pick
  $("others").replaceChildren(...others.map((p, i) => {
    const li = el("li", null, p.selected ? "selected" : "");
    li.dataset.doc = p.doc;
    const head = el("div", null, "row");
    const toggle = el("button", p.selected ? `${i + 1} remove` : `${i + 1} add as expected`);
    toggle.type = "button";
    toggle.addEventListener("click", () => toggleOther(i));
    const ranks = Object.entries(p.ranks || {}).map(([name, rank]) => `${name} #${rank}`).join(", ");
    head.append(toggle, el("strong", p.doc), el("span", p.title, "muted"), el("span", ranks, "muted"));
    li.append(head, el("pre", null, "passage"));
    li.lastChild.append(highlighted(p.text, p.highlights));
    return li;
  }));
}

document.addEventListener("keydown", (event) => {
  const typing = ["INPUT", "TEXTAREA"].includes(event.target.tagName);
  if (state.editing) {
    if (event.key === "Escape") { event.preventDefault(); stopEdit(); }
    else if (event.key === "Enter" && !event.shiftKey) { event.preventDefault(); saveEdit(); }
    return;
  }
  if (typing || event.ctrlKey || event.metaKey || event.altKey) return;
  const key = event.key;
  if (key === "j" || key === "ArrowRight" || key === "ArrowDown") move(1);
  else if (key === "k" || key === "ArrowLeft" || key === "ArrowUp") move(-1);
  else if (key === "a") verdict("accept");
  else if (key === "r") verdict("reject");
  else if (key === "u") verdict("reset");
  else if (key === "e") startEdit();
  else if (/^[1-9]$/.test(key)) toggleOther(Number(key) - 1);
  else return;
  event.preventDefault();
});

for (const button of document.querySelectorAll("#verdicts [data-action]")) {
  button.addEventListener("click", () => verdict(button.dataset.action));
}
$("btn-edit").addEventListener("click", startEdit);
$("btn-prev").addEventListener("click", () => move(-1));
$("btn-next").addEventListener("click", () => move(1));
$("edit-cancel").addEventListener("click", stopEdit);
$("edit-form").addEventListener("submit", (event) => { event.preventDefault(); saveEdit(); });
$("add-form").addEventListener("submit", (event) => {
  event.preventDefault();
  const doc = $("add-doc").value.trim();
  if (!doc) return;
  $("add-doc").value = "";
  $("add-doc").blur();
  if (!current().expected.includes(doc)) setExpected(current().expected.concat([doc]));
});

load().catch((error) => showError(String(error)));
