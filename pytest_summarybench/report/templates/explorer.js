// The explorer: a list of the run's units (filtered, searched, sorted, rendered only as
// they scroll into view) and one unit opened below it. Every text of the data (code,
// summaries, judges' answers, names) reaches the page through textContent or a Text node,
// never through innerHTML. The state lives in the URL's fragment, so the report links
// straight to a unit or a filtered list.
(function () {
  "use strict";
  const ROW_H = 28, OVERSCAN = 12;
  const D = JSON.parse(document.getElementById("sb-data").textContent);
  const M = D.models, U = D.units, REFS = D.refs;
  const byId = new Map(U.map((u, i) => [u.id, i]));
  const modelIx = new Map(M.map((m, i) => [m, i]));
  const outBit = new Map(D.outcomes.map((o, i) => [o[0], 1 << i]));
  const evScored = new Map(D.evaluators.map(e => [e.name, e.scored]));
  const KEYS = ["q", "lang", "type", "model", "ev", "out", "sort", "a", "b", "unit"];
  const $ = id => document.getElementById(id);
  const viewport = $("viewport"), spacer = $("spacer"), detail = $("detail");
  let st = {}, view = [], pending = false, listKey = null;

  function h(tag, props) {
    const e = document.createElement(tag);
    if (props) {
      for (const k of Object.keys(props)) {
        const v = props[k];
        if (v === null || v === undefined || v === false) continue;
        if (k === "text") e.textContent = String(v);
        else if (k === "cls") e.className = v;
        else e.setAttribute(k, String(v));
      }
    }
    for (let i = 2; i < arguments.length; i++) add(e, arguments[i]);
    return e;
  }
  // Replace the children of ``e`` with ``items`` (nested arrays flattened, null skipped).
  function put(e, ...items) {
    e.replaceChildren();
    add(e, items);
    return e;
  }
  function add(e, c) {
    if (c === null || c === undefined) return;
    if (Array.isArray(c)) c.forEach(x => add(e, x));
    else e.append(c);  // a string becomes a Text node
  }
  const fmt = (v, d) => (v === null || v === undefined) ? "-" : Number(v).toFixed(d === undefined ? 3 : d);
  const signed = v => (v === null || v === undefined) ? "-" : (v >= 0 ? "+" : "") + v.toFixed(3);
  // Column labels: each model's name without what all of them share (a provider segment
  // when the rest stays distinct, then a common leading part), the full name in a title.
  const SHORT = (function () {
    let names = M.slice();
    const tail = names.map(m => m.slice(m.indexOf("/") + 1));
    if (new Set(tail).size === names.length) names = tail;
    if (names.length > 1) {
      let n = 0;
      while (names.every(x => x.length > n + 1 && x[n] === names[0][n])) n++;
      const cut = names[0].slice(0, n).search(/[^\/\-_:.]*$/);  // back to a separator
      if (cut > 0) names = names.map(x => x.slice(cut));
    }
    return names;
  })();
  const short = m => SHORT[modelIx.get(m)];

  // -- the state in the fragment ------------------------------------------------------
  function parseHash() {
    const p = new URLSearchParams(location.hash.replace(/^#/, ""));
    const out = {};
    for (const k of KEYS) { const v = p.get(k); if (v) out[k] = v; }
    return out;
  }
  function hashOf(state) {
    const p = new URLSearchParams();
    for (const k of KEYS) if (state[k]) p.set(k, state[k]);
    return "#" + p.toString();
  }
  function saveHash() {
    const target = hashOf(st);
    if (target === location.hash || (target === "#" && !location.hash)) return;
    try { history.replaceState(null, "", target); } catch (e) { location.hash = target; }
  }

  // -- controls -----------------------------------------------------------------------
  const controls = {q: $("f-q"), lang: $("f-lang"), type: $("f-type"), model: $("f-model"),
                    ev: $("f-ev"), out: $("f-out"), sort: $("f-sort"), a: $("f-a"), b: $("f-b")};
  function fill(select, pairs) {
    for (const [value, text] of pairs) select.append(new Option(text, value));
  }
  const distinct = key => Array.from(new Set(U.map(u => u[key]).filter(Boolean))).sort();
  fill(controls.lang, distinct("lang").map(x => [x, x]));
  fill(controls.type, distinct("type").map(x => [x, x]));
  fill(controls.model, M.map(m => [m, m]));
  fill(controls.ev, D.evaluators.map(e => [e.name, e.name]));
  fill(controls.out, D.outcomes.map(o => [o[0], o[1]]));
  fill(controls.a, M.map(m => [m, m]));
  fill(controls.b, M.map(m => [m, m]));

  function toControls() {
    for (const k of Object.keys(controls)) controls[k].value = st[k] || "";
    if (!controls.a.value && M.length) controls.a.value = M[0];
    if (!controls.b.value && M.length > 1) controls.b.value = M[1];
    if (!controls.sort.value) controls.sort.value = "path";
    for (const k of ["lang", "type", "model", "ev", "out", "sort"]) {
      if (st[k] && controls[k].value !== st[k]) controls[k].value = "";  // not in this run
    }
  }
  function fromControls() {
    const next = {};
    for (const k of Object.keys(controls)) if (controls[k].value) next[k] = controls[k].value;
    if (next.sort === "path") delete next.sort;
    if (st.unit) next.unit = st.unit;
    st = next;
  }

  // -- filtering and sorting ----------------------------------------------------------
  function score(u, m) {
    if (st.ev && evScored.get(st.ev)) return u.scores[st.ev] ? u.scores[st.ev][m] : null;
    return u.overall[m];
  }
  function matches(u) {
    if (st.lang && u.lang !== st.lang) return false;
    if (st.type && u.type !== st.type) return false;
    if (st.q) {
      for (const word of st.q.toLowerCase().split(/\s+/)) {
        if (word && u.hay.indexOf(word) < 0) return false;
      }
    }
    const ms = st.model ? [modelIx.get(st.model)] : M.map((_, i) => i);
    if (st.ev) {
      const seen = u.seen[st.ev] || 0;
      if (!ms.some(m => seen & (1 << m))) return false;
    } else if (st.model && !ms.some(m => u.seenAny & (1 << m) || u.overall[m] !== null)) return false;
    if (st.out) {
      const bit = outBit.get(st.out);
      if (!ms.some(m => u.out[m] & bit)) return false;
    }
    return true;
  }
  function diffOf(u) {
    const a = modelIx.get(controls.a.value), b = modelIx.get(controls.b.value);
    if (a === undefined || b === undefined) return null;
    const sa = score(u, a), sb = score(u, b);
    return (sa === null || sb === null || sa === undefined || sb === undefined) ? null : sa - sb;
  }
  function refresh() {
    view = [];
    for (let i = 0; i < U.length; i++) if (matches(U[i])) view.push(i);
    const sort = st.sort || "path";
    if (sort === "name") {
      view.sort((x, y) => U[x].name.localeCompare(U[y].name) || x - y);
    } else if (sort !== "path") {
      const key = sort === "disagree" ? d => Math.abs(d) : sort === "b-a" ? d => -d : d => d;
      const v = new Map(view.map(i => { const d = diffOf(U[i]); return [i, d === null ? null : key(d)]; }));
      view.sort((x, y) => {
        const dx = v.get(x), dy = v.get(y);
        if (dx === null || dy === null) return (dx === null) - (dy === null) || x - y;
        return dy - dx || x - y;
      });
    }
    spacer.style.height = (view.length * ROW_H) + "px";
    // Another list starts at its top (a whole row first), the same list stays where it was.
    const key = hashOf(Object.assign({}, st, {unit: ""}));
    if (key !== listKey) { listKey = key; viewport.scrollTop = 0; }
    const notes = [];
    if (st.out) notes.push(controls.out.options[controls.out.selectedIndex].text);
    if (st.model) notes.push(st.model + ": units it has a score or an outcome on, its column highlighted");
    if (st.ev && !view.some(i => U[i].scores[st.ev] && U[i].scores[st.ev].some(x => x !== null))) {
      const e = D.evaluators.find(x => x.name === st.ev);
      notes.push(st.ev + " has no per-unit score on these units" + (e && e.label ?
        " (its score is the " + e.label + "; see a unit's records below)" : " (it is not part of the score)"));
    }
    put($("count"), view.length + " of " + U.length + " units" +
      (notes.length ? " · " + notes.join(" · ") : ""),
      !view.length && st.q ? h("span", {cls: "empty", text: " · nothing matches “" + st.q +
        "”: the search finds each word in the path, the name, path:name or the dotted " +
        "module.name (e.g. pkg.mod.func)"}) : null);
    header();
    draw();
    stale();
  }
  // An open unit that the filters or the search leave out is greyed, and says so.
  function stale() {
    if (detail.hidden || !st.unit || !byId.has(st.unit)) return;
    const out = view.indexOf(byId.get(st.unit)) < 0;
    detail.classList.toggle("stale", out);
    const note = $("stale-note");
    if (note) note.hidden = !out;
  }

  // -- the list (rows exist only where the viewport is) --------------------------------
  function columns() {
    const diff = st.sort && st.sort !== "path" && st.sort !== "name";
    // Path and name give way first, so that the model columns keep their labels.
    return "minmax(90px, 2fr) minmax(90px, 2fr) 80px 64px " +
      M.map(() => "minmax(92px, 1fr)").join(" ") + (diff ? " 72px" : "");
  }
  function header() {
    const diff = st.sort && st.sort !== "path" && st.sort !== "name";
    const head = $("list-head");
    head.style.gridTemplateColumns = columns();
    const label = st.ev && evScored.get(st.ev) ? st.ev : "overall";
    put(head, h("span", {text: "Path"}), h("span", {text: "Name"}),
      h("span", {text: "Language"}), h("span", {text: "Type"}),
      M.map(m => h("span", {cls: "n" + (st.model === m ? " sel" : ""), title: m + " (" + label + ")",
                             "data-model": m, text: short(m)})),
      diff ? h("span", {cls: "n", title: controls.a.value + " minus " + controls.b.value,
                         text: "\u0394 A\u2212B"}) : null);
  }
  function rowOf(pos) {
    const u = U[view[pos]];
    const diff = st.sort && st.sort !== "path" && st.sort !== "name";
    const a = h("a", {cls: "row" + (st.unit === u.id ? " current" : ""),
                      href: hashOf(Object.assign({}, st, {unit: u.id})), "data-unit": u.id,
                      role: "row"},
      h("span", {title: u.path, text: u.path}), h("span", {title: u.name, text: u.name}),
      h("span", {text: u.lang}), h("span", {text: u.type}),
      M.map((m, i) => {
        const c = cell(u, i);
        return h("span", {cls: "n" + (c.bad ? " flag" : "") + (st.model === m ? " sel" : ""),
                          title: c.title, text: fmt(c.score) + (c.error ? " !" : "")});
      }),
      diff ? h("span", {cls: "n", text: signed(diffOf(u))}) : null);
    a.style.top = (pos * ROW_H) + "px";
    a.style.gridTemplateColumns = columns();
    return a;
  }
  // What a score cell shows and says: with an evaluator chosen, its score on the unit,
  // orange below the low-score threshold, ! when it could not score; else the overall
  // score with every outcome of the model on the unit.
  function cell(u, i) {
    const m = M[i], s = score(u, i);
    const scored = st.ev && evScored.get(st.ev);
    const error = scored ? u.errors.some(e => e[1] === st.ev && e[0].indexOf(i) >= 0)
                         : Boolean(u.out[i] & outBit.get("error"));
    const low = s !== null && s !== undefined && s < D.lowScore;
    const what = scored ? st.ev : "overall";
    const lines = [m + ": " + what + " " + fmt(s) +
                   (low ? " (below the low-score threshold " + fmt(D.lowScore, 2) + ")" : "")];
    if (error) lines.push((scored ? st.ev : "an evaluator") + " could not score it");
    if (!scored) {
      for (const [key, text] of D.outcomes) {
        if (key !== "low" && key !== "error" && u.out[i] & outBit.get(key)) lines.push(text);
      }
    }
    return {score: s, bad: low || error, error: error, title: lines.join("\n")};
  }
  function draw() {
    pending = false;
    const top = viewport.scrollTop, height = viewport.clientHeight || 400;
    const first = Math.max(0, Math.floor(top / ROW_H) - OVERSCAN);
    const last = Math.min(view.length, Math.ceil((top + height) / ROW_H) + OVERSCAN);
    const rows = [];
    for (let p = first; p < last; p++) rows.push(rowOf(p));
    put(spacer, rows);
  }
  viewport.addEventListener("scroll", () => {
    if (!pending) { pending = true; requestAnimationFrame(draw); }
  }, {passive: true});

  // -- one unit -----------------------------------------------------------------------
  // A link to a unit keeps the list as it is when followed (sort, A/B, filters): its
  // address is made at the click, see the click handler below.
  function unitLink(id, text) {
    if (byId.has(id)) return h("a", {href: hashOf(Object.assign({}, st, {unit: id})),
                                     "data-goto": id, text: text});
    const r = REFS[id];
    if (r && r.code) {  // not a sampled unit: its code, in place
      return h("details", {cls: "ref"}, h("summary", {text: text}), pre(r.code, "code"));
    }
    return h("span", {text: text});
  }
  function labelOf(id) {
    if (byId.has(id)) { const u = U[byId.get(id)]; return u.name + " (" + u.path + ")"; }
    const r = REFS[id];
    return r ? r.name + " (" + r.path + ")" : id;
  }
  function table(headers, rows, cls) {
    return h("div", {cls: "wide"}, h("table", {cls: cls || null},
      h("thead", null, h("tr", null, headers.map(x => h("th", {text: x})))),
      h("tbody", null, rows)));
  }
  function section(title, id, ...body) {
    return h("section", {cls: "part", id: id}, h("h3", {text: title}), body);
  }
  function pre(text, cls) { return h("pre", {cls: cls || "text", text: text}); }

  function summaries(u) {
    return section("Summaries", "part-summaries", h("p", {cls: "muted small", text: "Each as stored " +
      "(control characters shown as escapes); this page cuts a text only past " + D.textChars.toLocaleString("en") + " characters, and says " +
      "how many it left out."}), h("div", {cls: "cards"}, M.map((m, i) => {
      const flags = D.outcomes.filter((o, j) => u.out[i] & (1 << j)).map(o => o[1]);
      return h("div", {cls: "card" + (st.model === m ? " sel" : ""), "data-model": m},
        h("h4", {text: m}),
        h("p", {cls: "muted", text: "overall " + fmt(u.overall[i])}),
        u.sum[i] === null ? h("p", {cls: "muted", text: "no summary"}) : pre(u.sum[i], "summary"),
        flags.length ? h("ul", {cls: "flags"}, flags.map(f => h("li", {text: f}))) : null);
    })));
  }
  function scores(u) {
    const evs = D.evaluators.filter(e => e.scored && u.scores[e.name] &&
                                     u.scores[e.name].some(x => x !== null));
    const rows = [h("tr", null, h("th", {text: "overall"}),
                    M.map((m, i) => h("td", {cls: "n", text: fmt(u.overall[i])})))];
    for (const e of evs) {
      rows.push(h("tr", null, h("th", {title: e.label, text: e.name}),
                  M.map((m, i) => h("td", {cls: "n", text: fmt(u.scores[e.name][i])}))));
    }
    for (const e of D.evaluators) {
      if (evs.indexOf(e) >= 0 || !u.seen[e.name]) continue;
      rows.push(h("tr", {cls: "unscored"}, h("th", {title: e.label, text: e.name}),
        h("td", {colspan: M.length, cls: "muted", text: e.scored ?
          "no score on this unit: its records lack the " + e.label + " (see below)" :
          "recorded, not part of the score (see below)"})));
    }
    return section("Scores per evaluator (0-1)", "part-scores",
                   table(["", ...M], rows, "scores"),
                   D.evaluators.some(e => e.name === "judge/pointwise") ?
                     h("p", {cls: "muted small", text: "judge/pointwise: the 1-5 rubric score s as (s - 1) / 4."}) : null);
  }
  function pointwise(u) {
    if (!u.pointwise.length) return null;
    // [model, judge, score, criteria scores in D.criteria order, reasoning]
    return section("Judge: pointwise", "part-pointwise", table(
      ["Model", "Judge", "Score (1-5)", "Criteria", "Reasoning"],
      u.pointwise.map(p => h("tr", null, h("td", {text: M[p[0]]}), h("td", {text: D.judges[p[1]]}),
        h("td", {cls: "n", text: fmt(p[2], 2)}),
        h("td", {text: D.criteria.map((c, k) => c + " " + fmt(p[3][k], 0)).join(", ")}),
        h("td", {cls: "reasoning", text: p[4]})))));
  }
  function pairKey(p) { return p[0] + "|" + Math.min(p[1], p[2]) + "|" + Math.max(p[1], p[2]); }
  function pairwise(u) {
    if (!u.pairwise.length) return null;
    // [judge, first shown, second shown, winner (-1 tie), confidence, reasoning, criteria]
    const winners = new Map();
    for (const p of u.pairwise) {
      if (!winners.has(pairKey(p))) winners.set(pairKey(p), new Set());
      winners.get(pairKey(p)).add(p[3]);
    }
    const side = {A: "A", B: "B", T: "tie"};
    // With a model chosen, its pairs only; the pair A and B of the sort first.
    const only = st.model ? modelIx.get(st.model) : undefined;
    const a = modelIx.get(controls.a.value), b = modelIx.get(controls.b.value);
    const chosen = p => (p[1] === a && p[2] === b) || (p[1] === b && p[2] === a) ? 0 : 1;
    const shown = u.pairwise.filter(p => only === undefined || p[1] === only || p[2] === only);
    const rows = shown.sort((x, y) => (chosen(x) - chosen(y)) ||
      (Math.min(x[1], x[2]) - Math.min(y[1], y[2])) || (Math.max(x[1], x[2]) - Math.max(y[1], y[2])) ||
      (x[0] - y[0]) || (x[1] - y[1])).map(p => {
      const flip = winners.get(pairKey(p)).size > 1;
      const crit = D.pairCriteria.map((c, k) => [c, p[6][k] || "-"]).filter(x => x[1] !== "-");
      return h("tr", {cls: flip ? "flip" : null},
        h("td", {text: M[Math.min(p[1], p[2])] + " vs " + M[Math.max(p[1], p[2])]}),
        h("td", {text: D.judges[p[0]]}),
        h("td", {text: "A: " + M[p[1]] + ", B: " + M[p[2]]}),
        h("td", {cls: "verdict", text: p[3] < 0 ? "tie" : M[p[3]]}),
        h("td", {text: p[4] || "-"}),
        h("td", {text: crit.map(x => x[0] + " " + side[x[1]]).join(", ")}),
        h("td", {cls: "order", text: flip ? "changed with the order" : "same"}),
        h("td", {cls: "reasoning", text: p[5]}));
    });
    return section("Judge: pairwise (both orders)", "part-pairwise",
      shown.length < u.pairwise.length ? h("p", {cls: "muted", text: "The pairs of " + st.model +
        " (" + shown.length + " of " + u.pairwise.length + " verdicts); choose all models to see every pair."}) : null,
      table(
      ["Pair", "Judge", "Shown", "Winner", "Confidence", "Criteria (A/B as shown)",
       "Both orders (summarybench)", "Judge's reasoning"], rows));
  }
  function contrastive(u) {
    return u.contrastive.map(c => {
      const head = ["", "Option", "Tier", "Code similarity to target"];
      for (const b of c.byModel) head.push(M[b.m] + (b.sims ? " (summary similarity)" : ""));
      const rows = c.options.map((id, k) => h("tr", {cls: k === 0 ? "target" : null},
        h("td", {text: k === 0 ? "target" : String(k)}),
        h("td", null, k === 0 ? h("span", {text: labelOf(id)}) : unitLink(id, labelOf(id))),
        h("td", {text: c.tiers[k] === null || c.tiers[k] === undefined ? "-" : String(c.tiers[k])}),
        h("td", {cls: "n", text: fmt(c.codeSims[k])}),
        c.byModel.map(b => {
          const mark = b.picked === k;
          return h("td", {cls: "n" + (mark ? " picked" : ""),
                          title: mark ? "picked by " + M[b.m] : null,
                          text: (b.sims ? fmt(b.sims[k]) : "") + (mark ? " \u2605 picked" : "")});
        })));
      // The pick in the table's numbering; each model saw the options in its own order.
      const notes = c.byModel.filter(b => b.reasoning !== undefined).map(b =>
        h("li", null, h("strong", {text: M[b.m] + ": "}),
          "picked " + (b.picked === 0 ? "the target (its own code)" : b.picked < 0 ? "an option not listed" :
            "option " + b.picked + ", " + labelOf(c.options[b.picked])) +
          (b.order && b.order.indexOf(b.picked) >= 0 ? ", shown to it as " + (b.order.indexOf(b.picked) + 1) +
            " of " + b.order.length + " (the options are shuffled for each model)" : "") +
          "; confidence " + (b.confidence || "-") + ".",
          h("div", null, h("span", {cls: "muted", text: "Helper's reasoning: "}), b.reasoning)));
      return section("Contrastive: " + c.ev, "part-" + c.ev.replace("/", "-"),
        h("p", {cls: "muted", text: "Correct: " + c.byModel.map(b => M[b.m] + " " + fmt(b.correct, 2) +
          " (rank " + fmt(b.rank, 1) + ")").join("; ")}, " \u00b7 ",
          h("a", {href: "#", "data-show": "fooled-panel", text: "options picked instead of their target most often in the run"})),
        table(head, rows, "options"), notes.length ? h("ul", null, notes) : null);
    });
  }
  function retrieval(u) {
    const r = u.retrieval;
    if (!r) return null;
    const rows = r.queries.map((q, k) => h("tr", null,
      h("td", {text: q.type || "-"}), h("td", {cls: "query", text: q.text}),
      r.byModel.map(b => {
        const rank = b.ranks[k];
        const top = b.top && b.top[k];
        return h("td", {cls: "n" + (rank === 1 ? "" : " miss"),
                        title: top ? "found first: " + labelOf(top) : null},
          rank === null ? "not in top " + r.k : fmt(rank, rank % 1 ? 1 : 0),
          top ? h("div", {cls: "muted small"}, "first: ", unitLink(top, labelOf(top))) : null);
      })));
    return section("Retrieval: queries and the rank of this unit", "part-retrieval",
      table(["Type", "Query", ...r.byModel.map(b => M[b.m])], rows));
  }
  function downstream(u) {
    if (!u.downstream.length) return null;
    return section("Downstream tasks", "part-downstream", table(
      ["Evaluator", "Task", "Model", "Metrics", "Outcome", "Answer"],
      u.downstream.map(t => h("tr", null, h("td", {text: t.ev}), h("td", {text: t.task}),
        h("td", {text: M[t.m]}),
        h("td", {text: Object.keys(t.metrics).map(k => k + " " + fmt(t.metrics[k], 2)).join(", ")}),
        h("td", {text: (t.outcome === "untested" ? "no tests ran: similarity to the original only, not part of the score"
                        : t.outcome + (t.reason ? ": " + t.reason : "")) +
          (t.tests.length ? " (tests: " + t.tests.map(x => x.name + (x.passed ? " ok" : " failed")).join(", ") + ")" : "")}),
        h("td", null, t.answer ? pre(t.answer, "code") : null)))));
  }
  function others(u) {
    if (!u.other.length) return null;
    return section("Other evaluators", "part-other", table(["Evaluator", "Model", "Metrics", "Details"],
      u.other.map(o => h("tr", null, h("td", {text: o.ev}), h("td", {text: M[o.m]}),
        h("td", {text: Object.keys(o.metrics).map(k => k + " " + fmt(o.metrics[k])).join(", ")}),
        h("td", null, pre(o.details, "code"))))));
  }
  function errors(u) {
    if (!u.errors.length) return null;
    return section("Errors", "part-errors", table(["Evaluator", "Model", "Error"],
      u.errors.map(e => h("tr", null, h("td", {text: e[1]}), h("td", {text: e[0].map(m => M[m]).join(" vs ")}),
        h("td", {cls: "reasoning", text: e[2]})))));
  }
  function open(id, scroll) {
    const i = byId.get(id);
    if (i === undefined) {
      detail.hidden = false;
      put(detail, h("p", {cls: "muted", text: "No unit " + id + " in this run."}));
      return;
    }
    const u = U[i];
    detail.hidden = false;
    const pos = view.indexOf(i);
    const step = k => pos >= 0 && view[pos + k] !== undefined ?
      h("a", {href: hashOf(Object.assign({}, st, {unit: U[view[pos + k]].id})), "data-goto": U[view[pos + k]].id,
              id: k < 0 ? "prev" : "next",
              title: k < 0 ? "previous unit in the list (k)" : "next unit in the list (j)",
              text: k < 0 ? "\u2190 previous" : "next \u2192"}) : null;
    put(detail,
      h("p", {id: "stale-note", cls: "partial", hidden: "", text: "This unit is not in the list as " +
        "filtered or searched now; it stays open until you close it or open another."}),
      h("h2", {id: "unit-title", text: u.name}),
      h("p", {cls: "muted"}, u.path + (u.lines ? ":" + u.lines[0] + "-" + u.lines[1] : "") +
        " \u00b7 " + u.lang + " \u00b7 " + u.type + " \u00b7 ",
        h("a", {href: hashOf(Object.assign({}, st, {unit: ""})), "data-goto": "", text: "close"}),
        pos >= 0 ? [" \u00b7 ", step(-1), step(-1) && step(1) ? " " : null, step(1),
                    " (" + (pos + 1) + " of " + view.length + ")"] : null),
      h("details", {open: "", cls: "part", id: "part-code"}, h("summary", {text: "Code"}), pre(u.code, "code")),
      summaries(u), scores(u), pointwise(u), pairwise(u), contrastive(u), retrieval(u),
      downstream(u), others(u), errors(u));
    if (scroll !== false && pos >= 0 && (pos * ROW_H < viewport.scrollTop ||
                     (pos + 1) * ROW_H > viewport.scrollTop + viewport.clientHeight)) {
      viewport.scrollTop = Math.max(0, pos * ROW_H - viewport.clientHeight / 2);
    }
    detail.classList.remove("stale");
    stale();
    if (scroll !== false) detail.scrollIntoView({block: "start"});
  }

  // -- distractors that fooled the embedding ------------------------------------------
  // Each row: an option and how often a model's summary was matched to it instead of its
  // own code (the top pick; other options ranked above the target are not counted).
  function fooled() {
    const box = $("fooled");
    if (!D.fooled.length) { box.append(h("p", {cls: "muted", text: "No option was picked instead of its target."})); return; }
    box.append(h("p", {cls: "muted small", text: "A pick is one unit and one model whose summary " +
      "was matched to this option instead of its own code (the top pick only). = marks a count " +
      "that another option of the same evaluator shares."}));
    box.append(table(["Evaluator", "Option", "Picks", "By model", "Units (first " + 10 + ")"], D.fooled.map(f =>
      h("tr", {cls: f.tied ? "tied" : null}, h("td", {text: f.ev}), h("td", null, unitLink(f.id, labelOf(f.id))),
        h("td", {cls: "n", title: f.tied ? "tied with another option" : null,
                 text: (f.tied ? "= " : "") + f.count + " on " + f.nUnits + " unit" + (f.nUnits === 1 ? "" : "s")}),
        h("td", {text: f.byModel.map((n, m) => [n, m]).filter(x => x[0]).sort((x, y) => y[0] - x[0])
          .map(x => short(M[x[1]]) + " " + x[0]).join(", ")}),
        h("td", null, f.units.map((id, k) => [k ? ", " : "", unitLink(id, labelOf(id))]).flat())))));
  }

  // -- wiring -------------------------------------------------------------------------
  function route() {
    st = parseHash();
    toControls();
    refresh();
    if (st.unit) open(st.unit);
    else { detail.hidden = true; put(detail); }
  }
  for (const k of Object.keys(controls)) {
    controls[k].addEventListener(k === "q" ? "input" : "change", () => {
      fromControls();
      saveHash();
      refresh();
      // The open unit follows the model, A and B chosen (its highlight, its pairs first).
      if (k !== "q" && st.unit && byId.has(st.unit)) open(st.unit, false);
    });
  }
  $("controls").addEventListener("submit", e => e.preventDefault());
  document.addEventListener("click", e => {
    if (e.button || e.ctrlKey || e.metaKey || e.shiftKey || e.altKey) return;
    const a = e.target.closest && e.target.closest("a[data-goto], a[data-show]");
    if (!a) return;
    e.preventDefault();
    if (a.hasAttribute("data-goto")) {
      location.hash = hashOf(Object.assign({}, st, {unit: a.getAttribute("data-goto")}));
    } else {
      const panel = $(a.getAttribute("data-show"));
      panel.open = true;
      panel.scrollIntoView({block: "start"});
    }
  });
  // j / k: the next / previous unit of the list.
  document.addEventListener("keydown", e => {
    if (e.ctrlKey || e.metaKey || e.altKey || /^(INPUT|SELECT|TEXTAREA)$/.test(e.target.tagName)) return;
    const k = e.key === "j" ? 1 : e.key === "k" ? -1 : 0;
    if (!k || !view.length) return;
    const pos = st.unit && byId.has(st.unit) ? view.indexOf(byId.get(st.unit)) : -1;
    const next = pos < 0 ? (k > 0 ? 0 : view.length - 1) : pos + k;
    if (next >= 0 && next < view.length) {
      location.hash = hashOf(Object.assign({}, st, {unit: U[view[next]].id}));
    }
  });
  window.addEventListener("hashchange", route);
  for (const u of U) {
    // What the search looks in: the path, the name, path:name, module.name (the path
    // without its extension, dotted: pkg/mod.py + Cls.meth -> pkg.mod.Cls.meth).
    const dotted = u.path.replace(/\.[^./]*$/, "").split("/").join(".");
    u.hay = [u.path, u.name, u.path + ":" + u.name, dotted + "." + u.name].join("\n").toLowerCase();
    u.seenAny = 0;
    for (const e of Object.keys(u.seen)) u.seenAny |= u.seen[e];
  }
  fooled();
  route();
  performance.mark("explorer-ready");  // read by benchmarks/perf/explorer_size.py
  document.body.setAttribute("data-ready", "1");
})();
