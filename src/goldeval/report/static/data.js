/* goldeval page: the results payload and every lookup into it.
 *
 * One source of truth (issue 8): the page computes no metric and no statistic. Python writes them into
 * the results JSON (schema 3, docs/results-json.md) and this file only looks them up:
 * - hit@k, recall@k, precision@k and nDCG@k at any k from 1 to the depth: `curves[metric][k - 1]`
 *   (goldeval.scorecard.curves, from the one metric engine); MRR and MAP: `metrics`;
 * - whether one question is a hit at k: its stored `rank` (first correct answer) is at most k;
 * - "A finds, B misses" counts at every k: `flips["A|B"]`;
 * - off-topic separability (AUC, Youden's J threshold, the count of mistakes at every candidate cut, the
 *   verdict): `statistics.off_topic.retrievers[name]` (goldeval.stats.offtopic);
 * - paired tests and verdicts: `statistics.comparison`; breakdowns: `statistics.breakdown`;
 *   miss causes: each question's `diagnosis`, made at the k it names;
 * - which questions make the headline (hand-written, log, incident; synthetic ones beside): each question's
 *   `headline`, the retriever's `n_headline` and `synthetic` (goldeval.golden.model.headline_split);
 * - what each retrieved result counted for (relevant with a grade, a repeat, judged not relevant, unjudged):
 *   its `counted` and `grade` (goldeval.scorecard.scoring.hit_marks: no level rule here; the file writes a
 *   result's `doc` only when it is not its id and its `grade` only when relevant: `G.buildRuns` fills both in);
 * - the k the page opens at: `headline_k`; B − A on the Compare tab: the payload's `differences`;
 * - how many results came back, the deepest k that measures something (past it: the terminal's word,
 *   `n/a`) and each miss's rank as the terminal words it (`not in the 4 returned`): `views.returned`
 *   (goldeval.scorecard.depth through goldeval.report.page_views);
 * - the question's words in each snippet: `views.words` (goldeval.words: content stems and spans);
 * - what each API model a retriever called used and cost (requests, tokens, seconds, dollars at list price):
 *   `views.api` (the records of its `config.api`, its parts' and `config.reranker.api`, through
 *   goldeval.retrievers.usage.api_records and goldeval.report.page_views).
 */
'use strict';
(function (G) {
  const PALETTE = ['#2f6fde', '#d9480f', '#2b8a3e', '#9c36b5', '#c2255c', '#0b7285', '#e67700', '#5c677d'];
  /** The cut-offs people use; the k buttons show those up to the depth, plus the computed ones. */
  G.COMMON_KS = [1, 3, 5, 10, 20, 50, 100];
  /** Metrics with a value at every k (curves) and metrics of the whole ranking (fixed). */
  G.CURVES = [
    { key: 'hit', label: (k) => `hit@${k}`, title: 'share of questions with a correct answer in the top k' },
    { key: 'recall', label: (k) => `recall@${k}`, title: 'share of the expected answers found in the top k' },
    { key: 'precision', label: (k) => `precision@${k}`, title: 'correct answers in the top k, divided by k' },
    { key: 'ndcg', label: (k) => `nDCG@${k}`, title: 'graded gain, discounted the lower it ranks, against the ideal ordering' },
  ];
  G.FIXED = [
    { key: 'mrr', label: () => 'MRR', title: '1 / rank of the first correct answer, within the retrieved depth' },
    { key: 'map', label: () => 'MAP', title: 'mean precision at the rank of each expected answer, within the retrieved depth' },
  ];
  /** bpref: in the results only when the golden set holds judged-not-relevant passages. */
  G.OPTIONAL = [
    { key: 'bpref', label: () => 'bpref', title: 'how often judged-relevant answers rank above judged-not-relevant ones; unjudged passages skipped' },
  ];
  G.METRICS = G.CURVES.map((m) => ({ ...m, fixed: false })).concat(G.FIXED.map((m) => ({ ...m, fixed: true })));
  /** The metrics the page shows for these runs: every curve and MRR, MAP, and bpref where a run has it. */
  G.metricsOf = (runs) => G.METRICS.concat(G.OPTIONAL.filter((m) => runs.some((run) => typeof (run.r.metrics || {})[m.key] === 'number'))
    .map((m) => ({ ...m, fixed: true })));

  /** The server's session token, from the page's goldeval-token meta tag; '' in the offline file,
   * which reads nothing from a server and writes nothing. */
  G.token = () => { const meta = document.querySelector('meta[name="goldeval-token"]'); return meta ? meta.content : ''; };

  /** GET one of the served page's data (`results.json`, `version`, `lifecycle.json`, under `api/`). The
   * server answers everything under /api/ only to the page itself, reads as writes: the session token goes
   * with every read, so another site open in the same browser cannot read the results. */
  G.fetchData = (name) => fetch(`api/${name}`, { cache: 'no-store', headers: { 'X-Goldeval-Token': G.token() } });

  /** The payload: inlined in the static report, else fetched from the server. */
  G.loadPayload = async function loadPayload() {
    const tag = G.$('goldeval-data');
    const text = tag ? tag.textContent.trim() : '';
    let payload;
    if (text) payload = JSON.parse(text);
    else {
      const response = await G.fetchData('results.json');
      if (!response.ok) throw new Error(`could not load the results (HTTP ${response.status})`);
      payload = await response.json();
    }
    if (!payload || !Array.isArray(payload.files) || !payload.files.length) throw new Error('no results in the payload');
    for (const f of payload.files) {
      if (!f || !f.data || !Array.isArray(f.data.retrievers)) throw new Error(`${f && f.name}: not a results file`);
    }
    return payload;
  };

  /** One run per (file, retriever), in order. */
  G.buildRuns = function buildRuns(files) {
    const runs = [];
    const multi = files.length > 1;
    files.forEach((file, fileIndex) => {
      for (const r of file.data.retrievers) {
        const questions = r.questions || [];
        questions.forEach((q, i) => {
          q._order = i;
          for (const hit of q.top || []) {  // schema 3 leaves out a document that is its id, a grade that is null
            if (hit.doc === undefined) hit.doc = hit.id;
            if (hit.grade === undefined) hit.grade = null;
          }
        });
        runs.push({
          index: runs.length, file, fileIndex, r, questions,
          byId: new Map(questions.map((q) => [q.id, q])),
          label: multi ? `${file.name} · ${r.name}` : r.name,
          color: PALETTE[runs.length % PALETTE.length],
          depth: file.data.depth || 0,
          snippets: file.data.snippets || {},
        });
      }
    });
    return runs;
  };

  /** `hit@5` -> {key: 'hit', k: 5}; `mrr` -> {key: 'mrr', k: null}. */
  G.parseMetric = function parseMetric(name) {
    const [key, k] = String(name).split('@');
    return { key, k: k === undefined ? null : Number(k) };
  };

  /** The value of a metric for a run at k: a curve point, or a whole-ranking metric; null if absent. */
  G.valueAt = function valueAt(run, key, k) {
    const curve = (run.r.curves || {})[key];
    if (Array.isArray(curve)) return k >= 1 && k <= curve.length ? curve[k - 1] : null;
    const value = (run.r.metrics || {})[key];
    return typeof value === 'number' ? value : null;
  };

  /** The metric's name in the results JSON at k (`ndcg@5`, `mrr`). */
  G.jsonName = (m, k) => (m.fixed ? m.key : `${m.key}@${k}`);

  G.intervalOf = function intervalOf(run, name) {
    const ci = (run.r.intervals || {})[name];
    return Array.isArray(ci) && ci.length === 2 && ci.every((x) => typeof x === 'number') ? ci : null;
  };

  G.answerable = (run) => run.questions.filter((q) => !q.off_topic);
  G.nAnswerable = (run) => (typeof run.r.n_answerable === 'number' ? run.r.n_answerable : G.answerable(run).length);
  /** The questions the headline and every verdict are made of (each question's `headline`, from Python). */
  G.headlineQuestions = (run) => run.questions.filter((q) => q.headline === true);
  G.nHeadline = (run) => run.r.n_headline;
  /** The synthetic questions beside the headline: {n, metrics, curves}, as Python wrote them. */
  G.syntheticOf = (run) => (run.r.synthetic && run.r.synthetic.n ? run.r.synthetic : null);

  /** Is this question's first correct answer within the top k? (its stored rank, looked up) */
  G.hitAt = (q, k) => !q.off_topic && q.rank !== null && q.rank !== undefined && q.rank <= k;

  /** The questions whose hit/miss differs between two cut-offs: the page's "what changed when k moved". */
  G.flippedBetween = (run, from, to) => (from === null || from === to ? []
    : G.answerable(run).filter((q) => G.hitAt(q, from) !== G.hitAt(q, to)));

  G.statistics = (run) => run.file.data.statistics || null;

  G.offTopicOf = function offTopicOf(run) {
    const st = G.statistics(run);
    const all = st && st.off_topic && st.off_topic.retrievers;
    return all && all[run.r.name] ? all[run.r.name] : null;
  };

  /** Paired comparisons (statistics.comparison.results) between two runs of one file. */
  G.comparisonRows = function comparisonRows(a, b) {
    if (a.file !== b.file || a === b) return [];
    const st = G.statistics(a);
    const rows = st && st.comparison && Array.isArray(st.comparison.results) ? st.comparison.results : [];
    const names = new Set([a.r.name, b.r.name]);
    return rows.filter((row) => row && names.has(row.a) && names.has(row.b) && row.a !== row.b);
  };

  /** `flips` for the pair at k: {aOnly, bOnly, series: {aOnly: [...], bOnly: [...]}}; null across files. */
  G.flipsOf = function flipsOf(a, b, k) {
    if (a.file !== b.file || a === b) return null;
    const flips = a.file.data.flips || {};
    const forward = flips[`${a.r.name}|${b.r.name}`];
    const backward = flips[`${b.r.name}|${a.r.name}`];
    const entry = forward ? { aOnly: forward.a_only, bOnly: forward.b_only }
      : backward ? { aOnly: backward.b_only, bOnly: backward.a_only } : null;
    if (!entry || !Array.isArray(entry.aOnly) || k < 1 || k > entry.aOnly.length) return null;
    return { aOnly: entry.aOnly[k - 1], bOnly: entry.bOnly[k - 1], series: entry };
  };

  /** The headline metric names of a file (chosen once, in Python, for every view). */
  G.headlineOf = (file) => (Array.isArray(file.data.headline) ? file.data.headline : []);

  /** The page opens at the headline k, as Python wrote it (`Scorecard.headline_k`, the one rule). */
  G.startK = (file) => file.data.headline_k;

  /** k buttons: the common cut-offs, the computed ones and the headline k, up to the depth. */
  G.kButtons = function kButtons(maxK, file) {
    const ks = new Set(G.COMMON_KS.concat(file.data.k || [], [G.startK(file), maxK]));
    return [...ks].filter((k) => Number.isInteger(k) && k >= 1 && k <= maxK).sort((x, y) => x - y);
  };

  /** The ROC cut the stored threshold sits on (the slider starts there); 0 (accept all) when none. */
  G.rocStart = function rocStart(roc, threshold) {
    if (typeof threshold !== 'number') return 0;
    let best = 0;
    roc.thresholds.forEach((t, i) => { if (Math.abs(t - threshold) < Math.abs(roc.thresholds[best] - threshold)) best = i; });
    return best;
  };

  /** How an id is shown: the document at doc level, the chunk id at chunk level. */
  G.displayId = (hit, run) => (run.file.data.level === 'chunk' || hit.doc === hit.id ? hit.id : hit.doc);

  /** What a retrieved result counted for, as the metrics counted it: `relevant` (with `hit.grade`),
   * `repeat` (an id counted already: not relevant, never counted twice), `nonrelevant` or `unjudged`. */
  G.counted = (hit) => hit.counted;
  G.isRelevant = (hit) => hit.counted === 'relevant';

  /** B − A for two runs (by their index in the payload), as Python computed it: a curve point or a
   * whole-ranking metric; null when the payload has none. */
  G.differenceAt = function differenceAt(payload, a, b, key, k) {
    const d = ((payload && payload.differences) || {})[`${a.index}|${b.index}`];
    if (!d) return null;
    const curve = (d.curves || {})[key];
    if (Array.isArray(curve)) return k >= 1 && k <= curve.length ? curve[k - 1] : null;
    return typeof (d.metrics || {})[key] === 'number' ? d.metrics[key] : null;
  };

  /** `views.returned.retrievers[name]`: {measurable_k, line, miss_rank}; null in a payload without it. */
  G.returnedOf = (run) => (((run.file.data.views || {}).returned || {}).retrievers || {})[run.r.name] || null;
  /** The terminal's word for a metric past what the retriever returned. */
  G.unmeasuredWord = (run) => ((run.file.data.views || {}).returned || {}).word || 'n/a';
  /** Is this metric at k past what the retriever returned? Its deepest measurable k, looked up (Python's
   * `Returned.measurable_k`); for a metric without a cut-off, the file's own `returned.unmeasurable`. */
  G.unmeasurable = function unmeasurable(run, key, k) {
    const curve = Array.isArray((run.r.curves || {})[key]);
    if (!curve) return ((run.r.returned || {}).unmeasurable || []).includes(key);
    const deepest = (G.returnedOf(run) || {}).measurable_k;
    return typeof deepest === 'number' && k > deepest;
  };
  /** A metric's value as shown: three decimals, or the unmeasured word past what came back. */
  G.shown = (run, key, k, value) => (G.unmeasurable(run, key, k) ? G.unmeasuredWord(run) : G.f3(value));
  /** A miss's rank as the terminal words it (`>100`, `not in the 4 returned`, `error`), looked up. */
  G.missRank = (run, q) => ((G.returnedOf(run) || {}).miss_rank || {})[q.id] || '—';
  /** The spans of the question's words in one snippet part ('title' or 'text'): [[start, end], ...], the
   * snippet's words (Python's spans and stems) whose stem is one of the question's (Python's list). */
  G.highlightsOf = (run, qid, sid, part) => {
    const words = (run.file.data.views || {}).words || {};
    const wanted = new Set((words.questions || {})[qid] || []);
    const spans = ((words.snippets || {})[sid] || {})[part];
    return Array.isArray(spans) ? spans.filter((w) => wanted.has(w[2])).map((w) => [w[0], w[1]]) : [];
  };

  /** The API usage records of a run, as Python wrote them (`views.api`): [{role, model, requests, retries,
   * tokens, tokens_estimated, seconds, dollars}], dollars null where the price table has no price; [] when
   * the run called no API. */
  G.apiUsageOf = (run) => ((((run.file.data.views || {}).api || {}).retrievers || {})[run.r.name]) || [];

  /** How many results per question the file keeps (`top`): the largest computed k. */
  G.keptTop = (run) => Math.max(0, ...(run.file.data.k || []));
}(window.GE = window.GE || {}));
