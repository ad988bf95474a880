// ctxbench session view: draws the JSON of the element #data (bench/view/data.py) on canvases.
// Nothing is loaded from elsewhere. A request is selected by a click on a chart or an event row,
// by the arrow keys, or by the address's #req=N (&run=K); its blocks are then listed.
"use strict";
(function () {
  const D = JSON.parse(document.getElementById("data").textContent);
  const C = D.codes, B = D.blocks, runs = D.runs, bill = D.billed;
  const COL = { read: "#4a90d9", write: "#f0a030", unc: "#d9534f", est: "#222", cum: ["#1b6ac9", "#c9531b", "#555"] };
  const MARK = { compaction: "#7b3fbf", eviction: "#2a9d5c", other: "#999", miss: "#d9534f", error: "#000" };
  const fmt = (n) => (n == null ? "–" : Math.round(n).toLocaleString("en-US"));
  const usd = (n) => (n == null ? "–" : "$" + n.toFixed(4));
  const el = (tag, attrs, text) => {
    const e = document.createElement(tag);
    for (const k in attrs || {}) e.setAttribute(k, attrs[k]);
    if (text != null) e.textContent = text;
    return e;
  };
  let sel = { run: 0, i: -1 };

  // ---------------------------------------------------------------- series per panel
  function panels() {
    const out = [];
    runs.forEach((r, k) => {
      const q = r.req;
      if (bill) {
        out.push({ run: k, title: "predicted (replay under " + r.policy + ")", read: bill.pread, write: bill.pwrite, unc: bill.punc, n: q.read.length, fallback: q });
        out.push({ run: k, title: "billed (the log)", read: bill.read, write: bill.write, unc: bill.unc, n: q.read.length, billed: true });
      } else {
        out.push({ run: k, title: r.label + " · " + r.provider + " · " + r.model, read: q.read, write: q.write, unc: q.unc, n: q.read.length });
      }
    });
    return out;
  }
  const P = panels();
  const N = Math.max(...runs.map((r) => r.req.read.length), 1);
  let ymax = 1;
  P.forEach((p) => {
    for (let i = 0; i < p.n; i++) {
      const v = (p.read[i] || 0) + (p.write[i] || 0) + (p.unc[i] || 0);
      if (v > ymax) ymax = v;
    }
    runs[p.run].thresholds.forEach((t) => { if (t[1] > ymax && t[1] < 4 * ymax) ymax = t[1]; });
  });
  ymax *= 1.06;

  // ---------------------------------------------------------------- drawing
  const M = { l: 64, r: 12, t: 8, b: 22 };
  function setup(cv, h) {
    const w = cv.clientWidth || 1000, dpr = window.devicePixelRatio || 1;
    cv.width = w * dpr; cv.height = h * dpr; cv.style.height = h + "px";
    const g = cv.getContext("2d");
    g.setTransform(dpr, 0, 0, dpr, 0, 0);
    g.font = "11px system-ui,sans-serif";
    return { g, w, h, pw: w - M.l - M.r, ph: h - M.t - M.b };
  }
  const xOf = (S, i) => M.l + (i / N) * S.pw;
  function axes(S, top, label, money) {
    const g = S.g;
    g.strokeStyle = "#ccc"; g.fillStyle = "#555"; g.lineWidth = 1;
    for (let k = 0; k <= 4; k++) {
      const v = (top * k) / 4, y = M.t + S.ph - (v / top) * S.ph;
      g.beginPath(); g.moveTo(M.l, y + 0.5); g.lineTo(M.l + S.pw, y + 0.5); g.stroke();
      g.textAlign = "right";
      g.fillText(money ? "$" + v.toFixed(v < 1 ? 3 : 2) : v >= 1000 ? Math.round(v / 1000) + "k" : fmt(v), M.l - 4, y + 4);
    }
    g.textAlign = "left";
    const raw = Math.max(1, N / 10), pw = Math.pow(10, Math.floor(Math.log10(raw)));
    const step = [1, 2, 5, 10].find((m) => m * pw >= raw) * pw;
    for (let i = 0; i <= N; i += step) g.fillText(String(i), xOf(S, i) - 3, S.h - 6);
    g.save(); g.translate(10, M.t + S.ph / 2); g.rotate(-Math.PI / 2); g.textAlign = "center"; g.fillText(label, 0, 0); g.restore();
  }
  function drawStack(cv, p) {
    const S = setup(cv, 250), g = S.g, r = runs[p.run], q = r.req;
    axes(S, ymax, "prompt tokens");
    const bw = Math.max(1, S.pw / N - (S.pw / N > 3 ? 1 : 0));
    const y = (v) => M.t + S.ph - (v / ymax) * S.ph;
    for (let i = 0; i < p.n; i++) {
      const x = xOf(S, i);
      let base = 0;
      for (const [key, c] of [["read", COL.read], ["write", COL.write], ["unc", COL.unc]]) {
        const v = p[key][i];
        if (!v) continue;
        g.fillStyle = c;
        g.fillRect(x, y(base + v), bw, y(base) - y(base + v));
        base += v;
      }
    }
    if (!p.billed) { // the harness's own estimate of each prompt: one path
      g.strokeStyle = COL.est; g.lineWidth = 1; g.beginPath();
      for (let i = 0; i < q.est.length; i++) { const X = xOf(S, i) + bw / 2, Y = y(q.est[i]); i ? g.lineTo(X, Y) : g.moveTo(X, Y); }
      g.stroke();
    }
    g.setLineDash([6, 4]);
    r.thresholds.forEach((t, k) => {
      if (t[1] > ymax) return;
      g.strokeStyle = k === 0 ? "#000" : "#7b3fbf"; g.beginPath(); g.moveTo(M.l, y(t[1]) + 0.5); g.lineTo(M.l + S.pw, y(t[1]) + 0.5); g.stroke();
      g.fillStyle = g.strokeStyle; g.textAlign = "right"; g.fillText(t[0] + " " + fmt(t[1]), M.l + S.pw - 4, y(t[1]) - 3);
    });
    g.setLineDash([]); g.textAlign = "left";
    marks(S, p);
    if (sel.run === p.run && sel.i >= 0) { g.strokeStyle = "#000"; g.strokeRect(xOf(S, sel.i) - 1, M.t, bw + 2, S.ph); }
  }
  function marks(S, p) { // compactions, evictions, cache breaks (cause), errors: along the top edge
    const g = S.g, q = runs[p.run].req;
    for (let i = 0; i < q.edit.length; i++) {
      const x = xOf(S, i), e = C[q.edit[i]], m = C[q.miss[i]];
      const cause = p.billed && bill.within[i] === 0 ? C[bill.cause[i]] || "mismatch" : m;
      if (e === "compaction") { g.fillStyle = MARK.compaction; g.beginPath(); g.moveTo(x - 5, M.t); g.lineTo(x + 5, M.t); g.lineTo(x, M.t + 9); g.fill(); }
      else if (/evict|trim|mask|turn/.test(e)) { g.fillStyle = MARK.eviction; g.fillRect(x - 3, M.t + 1, 6, 6); }
      else if (e) { g.fillStyle = MARK.other; g.beginPath(); g.arc(x, M.t + 4, 3, 0, 7); g.fill(); }
      if (cause && cause !== "first_request") { g.fillStyle = MARK.miss; g.fillRect(x, M.t + 11, 1.5, 10); }
      if (q.err[i]) { g.fillStyle = MARK.error; g.fillText("✕", x - 3, M.t + 30); }
    }
  }
  function drawCost(cv) {
    const S = setup(cv, 170), g = S.g;
    const lines = runs.map((r) => r.req.cost);
    const names = runs.map((r) => (bill ? "predicted" : r.label));
    if (bill) { lines.splice(0, 1, bill.pcost.map((v, i) => (v == null ? runs[0].req.cost[i] : v))); lines.push(bill.cost.map((v) => v || 0)); names.push("billed"); }
    const cums = lines.map((l) => { let s = 0; return l.map((v) => (s += v || 0)); });
    const top = Math.max(...cums.map((c) => c[c.length - 1] || 0), 1e-6) * 1.06;
    axes(S, top, "cumulative cost", true);
    cums.forEach((c, k) => {
      g.strokeStyle = COL.cum[k % 3]; g.lineWidth = 1.6; g.beginPath();
      c.forEach((v, i) => { const X = xOf(S, i + 1), Y = M.t + S.ph - (v / top) * S.ph; i ? g.lineTo(X, Y) : g.moveTo(X, Y); });
      g.stroke(); g.fillStyle = g.strokeStyle;
      g.fillText(names[k] + " " + usd(c[c.length - 1] || 0), M.l + 6, M.t + 12 + 13 * k);
    });
  }

  // ---------------------------------------------------------------- requests and their blocks
  function promptOf(k, i) { // rebuild the block ids of request i of run k from its deltas
    const pr = runs[k].prompt, chain = [];
    for (let j = i; j >= 0; j = pr.base[j]) chain.push(j);
    let ids = [];
    for (let c = chain.length - 1; c >= 0; c--) { const j = chain[c]; ids = ids.slice(0, pr.keep[j]).concat(pr.add[j]); }
    return ids;
  }
  function describe(k, i) {
    const q = runs[k].req;
    const t = ["request " + i + " · " + C[q.kind[i]] + (runs.length > 1 ? " · " + runs[k].label : ""),
      "cache read " + fmt(q.read[i]) + " · write " + fmt(q.write[i]) + " · uncached " + fmt(q.unc[i]),
      "prompt " + fmt(q.size[i]) + " (estimated " + fmt(q.est[i]) + ") · output " + fmt(q.out[i]) + " · " + usd(q.cost[i])];
    if (q.miss[i]) t.push("cache break: " + C[q.miss[i]] + " (" + fmt(q.mtok[i]) + " tokens not read)");
    if (q.edit[i]) t.push("before it: " + C[q.edit[i]] + (q.saved[i] ? " (" + fmt(q.saved[i]) + " tokens saved)" : ""));
    if (q.err[i]) t.push("error: " + C[q.err[i]]);
    if (bill && bill.read[i] != null) {
      t.push("billed: read " + fmt(bill.read[i]) + " · write " + fmt(bill.write[i]) + " · uncached " + fmt(bill.unc[i]) + " · " + usd(bill.cost[i]));
      t.push(bill.within[i] ? "prediction within tolerance" : "prediction off: " + (C[bill.cause[i]] || "no cause named"));
    }
    return t;
  }
  function select(k, i) {
    const n = runs[k].req.read.length;
    if (i < 0 || i >= n) return;
    sel = { run: k, i };
    document.body.setAttribute("data-selected", k + ":" + i);
    const box = document.getElementById("details");
    box.innerHTML = "";
    box.appendChild(el("h2", {}, "Request " + i));
    describe(k, i).forEach((line) => box.appendChild(el("div", { class: "sum" }, line)));
    const ids = promptOf(k, i), keep = runs[k].prompt.keep[i], q = runs[k].req;
    const tbl = el("table", { id: "blocks" }), head = el("tr");
    ["#", "kind", "role", "tokens", "digest", "name", "as billed (approx.)"].forEach((h, c) => head.appendChild(el("th", { class: c === 1 || c === 2 || c >= 4 ? "l" : "" }, h)));
    tbl.appendChild(head);
    let cum = 0;
    const LIMIT = 3000;
    ids.slice(0, LIMIT).forEach((b, j) => {
      cum += B.tok[b];
      const part = cum <= q.read[i] ? "read" : cum <= q.read[i] + q.write[i] ? "write" : "unc";
      const tr = el("tr", { class: (j >= keep ? "new " : "") + "b-" + part });
      [j, C[B.kind[b]], C[B.role[b]], fmt(B.tok[b]), B.dig[b], C[B.name[b]], part === "unc" ? "uncached" : part === "read" ? "cache read" : "cache write"].forEach((v, c) => tr.appendChild(el("td", { class: c === 1 || c === 2 || c >= 4 ? "l" : "" }, String(v))));
      tbl.appendChild(tr);
    });
    box.appendChild(el("div", { class: "note" }, ids.length + " blocks" + (ids.length > LIMIT ? " (first " + LIMIT + " listed)" : "") + "; a green edge marks the blocks this request added after the previous request's prefix (" + keep + " kept). The billed column splits the prompt in order by the request's cache read and write."));
    const sc = el("div", { class: "scroll" }); sc.appendChild(tbl); box.appendChild(sc);
    document.querySelectorAll("#events tbody tr").forEach((tr) => tr.classList.toggle("sel", tr.dataset.run == k && tr.dataset.i == i));
    draw();
  }

  // ---------------------------------------------------------------- events table
  function events() {
    const body = document.querySelector("#events tbody");
    let count = 0;
    const LIMIT = 2000;
    runs.forEach((r, k) => {
      const q = r.req;
      for (let i = 0; i < q.read.length; i++) {
        const rows = [];
        if (q.edit[i]) rows.push([C[q.edit[i]], q.saved[i] ? fmt(q.saved[i]) + " tokens saved" : ""]);
        if (q.miss[i]) rows.push(["cache break", C[q.miss[i]] + " · " + fmt(q.mtok[i]) + " tokens not read"]);
        if (q.err[i]) rows.push(["error", C[q.err[i]]]);
        if (bill && bill.within[i] === 0) rows.push(["off the bill", C[bill.cause[i]] || "no cause named"]);
        rows.forEach(([what, why]) => {
          count++;
          if (count > LIMIT) return;
          const tr = el("tr", { "data-run": k, "data-i": i, class: "ev", "data-what": what });
          [runs.length > 1 ? r.label : "", i, what, why].forEach((v, c) => tr.appendChild(el("td", { class: c === 1 ? "" : "l" }, String(v))));
          tr.addEventListener("click", () => select(k, i));
          body.appendChild(tr);
        });
      }
    });
    document.body.setAttribute("data-events", String(count));
    document.getElementById("evnote").textContent = count + " events" + (count > LIMIT ? " (first " + LIMIT + " listed)" : "") + "; click one to see its request.";
  }

  // ---------------------------------------------------------------- page
  const canvases = [];
  function build() {
    const host = document.getElementById("charts");
    P.forEach((p) => {
      const d = el("div", { class: "panel" });
      d.appendChild(el("h3", {}, p.title));
      const cv = el("canvas", { class: "stack", "data-run": p.run });
      d.appendChild(cv); host.appendChild(d);
      canvases.push([cv, p]);
      hover(cv, p.run);
    });
    const d = el("div", { class: "panel" });
    d.appendChild(el("h3", {}, "cost (cumulative)"));
    const cv = el("canvas", { id: "cost" });
    d.appendChild(cv); host.appendChild(d);
    canvases.push([cv, null]);
    hover(cv, 0);
  }
  function draw() { canvases.forEach(([cv, p]) => (p ? drawStack(cv, p) : drawCost(cv))); }
  function hover(cv, k) {
    const tip = document.getElementById("tip");
    const at = (ev) => { const r = cv.getBoundingClientRect(); return Math.floor(((ev.clientX - r.left - M.l) / (r.width - M.l - M.r)) * N); };
    cv.addEventListener("mousemove", (ev) => {
      const i = at(ev);
      if (i < 0 || i >= runs[k].req.read.length) { tip.style.display = "none"; return; }
      tip.textContent = describe(k, i).join("\n");
      tip.style.display = "block"; tip.style.left = ev.clientX + 14 + "px"; tip.style.top = ev.clientY + 10 + "px";
    });
    cv.addEventListener("mouseleave", () => (tip.style.display = "none"));
    cv.addEventListener("click", (ev) => select(k, at(ev)));
  }
  document.addEventListener("keydown", (ev) => {
    if (sel.i < 0) return;
    if (ev.key === "ArrowRight") select(sel.run, sel.i + 1);
    if (ev.key === "ArrowLeft") select(sel.run, sel.i - 1);
  });
  build();
  events();
  draw();
  window.addEventListener("resize", draw);
  const m = /req=(\d+)/.exec(location.hash), mr = /run=(\d+)/.exec(location.hash);
  if (m) select(mr ? Math.min(+mr[1], runs.length - 1) : 0, +m[1]);
  document.body.setAttribute("data-requests", runs.map((r) => r.req.read.length).join(","));
  document.body.setAttribute("data-ready", "1");
})();
