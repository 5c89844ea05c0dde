// goldeval pool: judge the unjudged passages of the pooled top k, one at a time, keyboard first.
// Runs after items.js (state, fetchItems, send, move, el, highlighted, showError); every text goes into the page
// through textContent (never innerHTML), as there: a passage holding HTML shows as text.
"use strict";

const LABELS = { unjudged: "unjudged", relevant: "relevant", not_relevant: "not relevant", not_covered: "not covered" };

async function load(keep) {
  const response = await fetchItems();
  if (!response.ok) { showError(`cannot load the pool: ${await failure(response)}`); return; }
  const payload = await response.json();
  state.items = payload.items || [];
  $("file").textContent = `${payload.pool} · top ${payload.k} of ${(payload.systems || []).join(", ")}`;
  $("golden-name").textContent = payload.golden || "the golden set";
  $("judge").textContent = payload.judge || "you";
  $("notes").textContent = (payload.notes || []).join(" ");
  const first = state.items.findIndex((item) => item.status === "unjudged");
  state.index = keep !== undefined ? Math.min(keep, state.items.length - 1) : (first >= 0 ? first : 0);
  render();
}

// A question-level fix (not covered, wrong expected) changes every item of that question: reload them all.
async function judged(item, action) {
  if (action.action === "not_covered" || action.action === "wrong_expected") await load(state.index);
  else keepItem(item);
  $("reason").value = "";
}

function next() {
  const after = state.items.findIndex((item, i) => i > state.index && item.status === "unjudged");
  if (after >= 0) state.index = after;
  else if (state.index < state.items.length - 1) state.index += 1;
  render();
}

async function verdict(action) {
  if (await send(action, judged)) next();
}

function needReason(what) {
  const reason = $("reason").value.trim();
  if (!reason) {
    showError(`type the reason first (${what}), then press Enter`, true);
    $("reason").dataset.pending = what;
    $("reason").focus();
    return null;
  }
  return reason;
}

function notCovered() {
  const reason = needReason("not covered");
  if (reason) verdict({ action: "not_covered", reason });
}

function wrongExpected(doc) {
  const reason = needReason(`wrong:${doc}`);
  if (reason) verdict({ action: "wrong_expected", doc, reason });
}

function render() {
  const counts = { unjudged: 0, relevant: 0, not_relevant: 0, not_covered: 0 };
  for (const item of state.items) counts[item.status] = (counts[item.status] || 0) + 1;
  $("counts").textContent = `${counts.relevant} relevant · ${counts.not_relevant} not relevant · `
    + `${counts.not_covered} not covered · ${counts.unjudged} to judge`;
  const item = current();
  $("main").hidden = !item;
  $("empty").hidden = Boolean(item);
  if (!item) return;
  $("position").textContent = `passage ${state.index + 1} of ${state.items.length}`;
  const label = LABELS[item.status] + (item.status === "relevant" ? ` (grade ${item.grade})` : "");
  $("status").textContent = label;
  $("status").className = `status ${item.status}`;
  $("qid").textContent = item.question_id;
  $("miss").hidden = !item.miss;
  $("question").textContent = item.question;
  for (const span of document.querySelectorAll(".rel-label")) span.textContent = item.miss ? "Also answers" : "Relevant";
  renderExpected(item);
  $("passage-id").textContent = item.passage;
  $("found").textContent = "found by " + item.found_by.map((f) => `${f.system} #${f.rank}`).join(", ");
  $("passage-title").textContent = item.title || "";
  $("passage-text").replaceChildren(highlighted(item.text || "(no text: pass --corpus to see it)", item.highlights));
  const suggestion = item.suggestion;
  $("suggestion").hidden = !suggestion;
  $("btn-suggest").hidden = !suggestion;
  if (suggestion) {
    const grade = Number(suggestion.grade);  // the machine's 0-3 grade (goldeval judge), shown as it is
    $("suggestion").textContent = `Suggestion by ${suggestion.by}: grade ${grade}, `
      + `${grade > 0 ? "relevant" : "not relevant"} (a machine's grade: not written unless you accept it)`;
  }
}

function renderExpected(item) {
  const docs = item.expected || [];
  const list = $("expected");
  if (!docs.length) { list.replaceChildren(el("li", item.off_topic ? "none: off-topic" : "none")); return; }
  list.replaceChildren(...docs.map((doc) => {
    const li = el("li", doc);
    const wrong = el("button", "wrong");
    wrong.type = "button";
    wrong.title = `the expected document ${doc} is wrong (needs a reason)`;
    wrong.addEventListener("click", () => wrongExpected(doc));
    li.append(wrong);
    return li;
  }));
}

$("reason").addEventListener("keydown", (event) => {
  if (event.key === "Escape") { event.preventDefault(); $("reason").blur(); return; }
  if (event.key !== "Enter") return;
  event.preventDefault();
  const pending = $("reason").dataset.pending;
  $("reason").dataset.pending = "";
  $("reason").blur();
  if (pending === "not covered") notCovered();
  else if (pending && pending.startsWith("wrong:")) wrongExpected(pending.slice(6));
});

document.addEventListener("keydown", (event) => {
  if (["INPUT", "TEXTAREA"].includes(event.target.tagName)) return;
  if (event.ctrlKey || event.metaKey || event.altKey) return;
  const item = current();
  const key = event.key;
  if (key === "j" || key === "ArrowRight" || key === "ArrowDown") move(1);
  else if (key === "k" || key === "ArrowLeft" || key === "ArrowUp") move(-1);
  else if (!item) return;
  else if (/^[123]$/.test(key)) verdict({ action: "relevant", grade: Number(key), reason: $("reason").value.trim() });
  else if (key === "n" || key === "0") verdict({ action: "not_relevant" });
  else if (key === "x") notCovered();
  else if (key === "w" && (item.expected || []).length) wrongExpected(item.expected[0]);
  else if (key === "s" && item.suggestion) verdict({ action: "accept_suggestion" });
  else if (key === "r") $("reason").focus();
  else return;
  event.preventDefault();
});

for (const button of document.querySelectorAll("[data-grade]")) {
  button.addEventListener("click", () => verdict({ action: "relevant", grade: Number(button.dataset.grade),
    reason: $("reason").value.trim() }));
}
$("btn-not").addEventListener("click", () => verdict({ action: "not_relevant" }));
$("btn-gap").addEventListener("click", notCovered);
$("btn-suggest").addEventListener("click", () => verdict({ action: "accept_suggestion" }));
$("btn-prev").addEventListener("click", () => move(-1));
$("btn-next").addEventListener("click", () => move(1));

load().catch((error) => showError(String(error)));
