/* goldeval page: label fixes from a miss (issue 11). A miss may be a labelling error: a retrieved passage
 * that also answers, a question the corpus does not cover (a content gap), an expected document that is
 * wrong. Served with `goldeval serve RESULTS.json --golden G`, the details of a miss offer those three
 * fixes with a reason; the server writes each into the golden set and its changelog (who, when, why) and
 * answers with the fixes recorded, shown here. Without --golden (or in the offline file) the panel says
 * how to enable them. The page never changes a number: re-run the evaluation to re-score.
 */
'use strict';
(function (G) {
  const { el } = G;
  const S = () => G.state;
  const LABELS = {
    also_answers: 'also answers',
    not_covered: 'not covered (a content gap)',
    wrong_expected: 'expected document is wrong',
  };

  const fixesOf = () => (S().lifecycle && S().lifecycle.fixes) || { enabled: false };

  /** The passage a fix names: the document at doc level, the chunk at chunk level (as the results rank). */
  const keyOf = (hit, run) => (run.file.data.level === 'chunk' ? hit.id : hit.doc || hit.id);

  /** Judged (relevant, or judged not relevant) in the golden set the results were scored with: Python's mark. */
  G.isJudged = (hit) => G.counted(hit) !== 'unjudged';

  G.SHIPPED = 'This golden set ships with goldeval and is not edited from here: judge and fix labels in your own set (goldeval eval --golden FILE, then goldeval pool or goldeval serve with --golden FILE).';

  /** The label-fix section of a miss's details, or null for a hit or an off-topic question. */
  G.fixesPart = function fixesPart(q, run, k) {
    if (q.off_topic || G.hitAt(q, k)) return null;
    const section = el('div', { class: 'd-section fixes', id: 'fixes' }, el('h4', { text: 'Is this miss a labelling error?' }));
    const top = (q.top || []).slice(0, k);
    const unjudged = top.filter((hit) => !G.isJudged(hit));
    const golden = (run.file.data.golden || {}).path || 'GOLDEN.jsonl';
    if ((run.file.data.golden || {}).shipped) {  // the demo's set lives inside goldeval: no command edits it
      if (unjudged.length) section.append(el('p', { class: 'small' }, `Unjudged in the top ${top.length}: ${unjudged.length} (goldeval counts a passage nobody judged as not relevant). `));
      section.append(el('p', { class: 'box fix-off' }, G.SHIPPED));
      return section;
    }
    if (unjudged.length) {
      section.append(el('p', { class: 'small' }, `Unjudged in the top ${top.length}: ${unjudged.length} (goldeval counts a passage nobody judged as not relevant). Judge them: `,
        el('code', { text: `goldeval pool ${run.file.name} --golden ${golden}` })));
    }
    const fixes = fixesOf();
    const done = (fixes.done || []).filter((c) => c.question === q.id);
    if (done.length) section.append(doneList(done, fixes));
    if (!fixes.enabled) {
      section.append(el('p', { class: 'box fix-off' }, 'Fix labels from here (this retrieved passage also answers; relabel as not covered; the expected document is wrong): ',
        G.served() ? 'restart the server with the golden set, ' : 'serve these results with the golden set, ',
        el('code', { text: `goldeval serve ${run.file.name} --golden ${golden}` }), '. Each fix is written into the golden set with its reason, in its changelog.'));
      return section;
    }
    // what the reader typed and the last answer survive a re-render (k moved, the page reloaded its data)
    const draft = S().fixDraft && S().fixDraft.q === q.id ? S().fixDraft : (S().fixDraft = { q: q.id, reason: '', status: '', cls: '' });
    const reason = el('textarea', { id: 'fix-reason', rows: 2, maxlength: 2000, placeholder: 'Why? (required, recorded in the changelog)', 'aria-label': 'reason for the fix' });
    reason.value = draft.reason;
    reason.addEventListener('input', () => { draft.reason = reason.value; });
    const grade = el('select', { id: 'fix-grade', 'aria-label': 'grade of the passage' }, [1, 2, 3].map((g) => el('option', { value: g, text: `grade ${g}` })));
    const status = el('p', { class: `fix-status small ${draft.cls}`, id: 'fix-status', 'aria-live': 'polite', text: draft.status });
    const send = (action) => post({ ...action, question: q.id, reason: reason.value }, draft);
    const recorded = (action, doc) => done.some((c) => c.action === action && (doc === undefined || c.doc === doc));
    section.append(el('label', { class: 'fix-reason' }, el('span', { class: 'muted small', text: `Reason (written to ${fixes.golden} and its changelog, by ${fixes.judge})` }), reason));
    // an expected result, or a repeat of one counted already, is no candidate for "also answers"
    const candidates = top.filter((hit) => !['relevant', 'repeat'].includes(G.counted(hit)));
    const seen = new Set();
    const rows = candidates.filter((hit) => { const key = keyOf(hit, run); if (seen.has(key)) return false; seen.add(key); return true; })
      .map((hit) => fixRow(keyOf(hit, run), `#${(q.top || []).indexOf(hit) + 1}`, 'also answers', recorded('also_answers', keyOf(hit, run)),
        () => send({ action: 'also_answers', doc: keyOf(hit, run), grade: Number(grade.value) }), 'also_answers'));
    section.append(el('div', { class: 'fix-group' }, el('div', { class: 'fix-title' }, el('strong', { text: 'This retrieved passage also answers' }), ' ', grade),
      rows.length ? el('ul', { class: 'fix-list' }, rows) : el('p', { class: 'muted small', text: `Nothing in the top ${k} besides the expected answers.` })));
    const expected = Object.keys(q.expected || {});
    section.append(el('div', { class: 'fix-group' }, el('div', { class: 'fix-title' }, el('strong', { text: 'The expected document is wrong' })),
      el('ul', { class: 'fix-list' }, expected.map((id) => fixRow(id, `${(q.ranks || {})[id] ? `#${q.ranks[id]}` : `>${run.depth}`}`, 'is wrong',
        recorded('wrong_expected', id), () => send({ action: 'wrong_expected', doc: id }), 'wrong_expected')))));
    section.append(el('div', { class: 'fix-group' }, el('div', { class: 'fix-title' }, el('strong', { text: 'The corpus does not answer it' })),
      el('button', { type: 'button', class: 'fix-btn', dataset: { fix: 'not_covered' }, disabled: recorded('not_covered') ? 'disabled' : null,
        text: recorded('not_covered') ? 'relabelled: not covered' : 'relabel as not covered (a content gap)', onclick: () => send({ action: 'not_covered' }) })));
    section.append(status);
    return section;
  };

  function fixRow(id, where, label, done, onclick, action) {
    return el('li', { dataset: { doc: id } }, el('span', { class: 'rank-badge', text: where }), el('span', { class: 'mono fix-doc', text: id }),
      el('button', { type: 'button', class: 'fix-btn', dataset: { fix: action, doc: id }, disabled: done ? 'disabled' : null, text: done ? 'recorded' : label, onclick }));
  }

  function doneList(done, fixes) {
    return el('div', { class: 'box fix-done' }, el('strong', { text: `Recorded in ${fixes.golden || 'the golden set'}:` }),
      el('ul', { class: 'plain' }, done.map((c) => el('li', { dataset: { action: c.action } },
        `${LABELS[c.action] || c.action}${c.doc ? ` · ${c.doc}` : ''}: `, el('em', { text: c.reason || '' }), el('span', { class: 'muted small', text: ` (${c.by}, ${String(c.at).replace('T', ' ')})` })))),
      el('div', { class: 'muted small', text: 'The numbers on this page are those of the results file: re-run the evaluation to re-score.' }));
  }

  /** Show a message under the fixes, and keep it in the draft so a re-render shows it again. */
  function say(draft, text, cls) {
    Object.assign(draft, { status: text, cls });
    const status = G.$('fix-status');
    if (status) { status.textContent = text; status.className = `fix-status small ${cls}`; }
  }

  async function post(action, draft) {
    if (!action.reason.trim()) { say(draft, 'Write a reason first: every fix is recorded with why.', 'bad'); G.$('fix-reason').focus(); return; }
    say(draft, 'Saving…', '');
    try {
      const response = await fetch('api/fix', {
        method: 'POST', cache: 'no-store',
        headers: { 'Content-Type': 'application/json', 'X-Goldeval-Token': G.token() },
        body: JSON.stringify(action),
      });
      const answer = await response.json();
      if (!response.ok) throw new Error(answer.error || `HTTP ${response.status}`);
      S().lifecycle = { ...(S().lifecycle || {}), fixes: answer.fixes };
      Object.assign(draft, { reason: '', status: `Saved: ${LABELS[action.action]}. Re-run the evaluation to re-score.`, cls: 'ok' });
      G.renderContext();  // the header's count of label fixes, as the server now counts them
      G.renderJudged();
      G.renderDetails();
    } catch (err) {
      say(draft, `Not saved: ${err.message || err}`, 'bad');
    }
  }
}(window.GE = window.GE || {}));
