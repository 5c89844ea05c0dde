// What the pages of `goldeval review` and `goldeval pool` share: one item at a time, saved at once.
// Loaded before the page's own script, which defines render() (called by move) and its keys.
// Every text enters the page through textContent (never innerHTML): a passage holding HTML shows as text.
"use strict";

const token = document.querySelector('meta[name="goldeval-token"]').content;
// This page's items on the one server: /api/review/items or /api/pool/items (its route's name).
const API = `/api/${document.body.dataset.page}/items`;
const $ = (id) => document.getElementById(id);
const state = { items: [], index: 0 };

function el(tag, text, cls) {
  const node = document.createElement(tag);
  if (text !== undefined && text !== null) node.textContent = String(text);
  if (cls) node.className = cls;
  return node;
}

function showError(message, hint) {
  const box = $("error");
  box.textContent = message;
  box.className = hint ? "hint" : "";
  box.hidden = false;
  clearTimeout(showError.timer);
  showError.timer = setTimeout(() => { box.hidden = true; }, 6000);
}

// What a failed answer says: the server answers an error with one line of JSON, `{"error": ...}`
// (a golden set that no longer reads, say); its HTTP status when there is none.
async function failure(response) {
  try {
    const data = await response.json();
    if (data && data.error) return data.error;
  } catch (err) { /* not JSON: the status says it */ }
  return `HTTP ${response.status}`;
}

// GET this page's items. The server answers its API (/api/...) only to the page itself, reads as writes:
// the session token goes with every request, so another site open in the browser cannot read the items.
function fetchItems() {
  return fetch(API, { cache: "no-store", headers: { "X-Goldeval-Token": token } });
}

function current() { return state.items[state.index]; }

function move(step) {
  if (!state.items.length) return;
  state.index = Math.min(state.items.length - 1, Math.max(0, state.index + step));
  render();
}

function keepItem(item) { state.items[state.index] = item; }

// POST one action for the current item; `saved(item, action)` takes in the server's answer (by default
// the item replaces the one shown) before body[data-saved] counts the save, which the browser tests await.
async function send(action, saved = keepItem) {
  const item = current();
  if (!item) return null;
  const response = await fetch(`${API}/${encodeURIComponent(item.id)}`, {
    method: "POST",
    headers: { "Content-Type": "application/json", "X-Goldeval-Token": token },
    body: JSON.stringify(action),
  });
  const data = await response.json().catch(() => ({}));
  if (!response.ok) { showError(data.error || `HTTP ${response.status}`); return null; }
  await saved(data.item, action);
  $("error").hidden = true;  // the last error no longer holds once an action is saved
  document.body.dataset.saved = String(Number(document.body.dataset.saved || 0) + 1);
  return data.item;
}

// The text with the question's words marked (spans in UTF-16 code units, as the server counts them).
function highlighted(text, spans) {
  const box = document.createDocumentFragment();
  let at = 0;
  for (const [start, end] of spans || []) {
    if (start > at) box.append(text.slice(at, start));
    box.append(el("mark", text.slice(start, end)));
    at = end;
  }
  box.append(text.slice(at));
  return box;
}
