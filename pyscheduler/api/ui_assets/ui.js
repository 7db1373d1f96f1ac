// The operator's page of the DollyMP decision service. Plain JavaScript, no dependencies; every value
// from the service is put into the page as text (textContent), never as HTML.
"use strict";
// latencies: ms from a streamed decision's making to the frame that shows it in the feed; timelineLatencies:
// the same for the open application's decisions, to the render of its timeline (at most one a second)
const dmp = (window.dollymp = { firstRenderMs: null, latencies: [], timelineLatencies: [], events: 0, lastId: 0, app: null });
const TOKEN_KEY = "dollymp.token";
const MAX_FEED = 60;
const MAX_TIMELINE_PAGES = 200;
const MAX_EVENT_ROWS = 500; // the newest decisions of the open application listed (all are in the chart)
const $ = (id) => document.getElementById(id);

function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "class") e.className = v;
    else if (k === "style") e.setAttribute("style", v);
    else e.setAttribute(k, v);
  }
  for (const c of children) e.append(c instanceof Node ? c : document.createTextNode(c == null ? "" : String(c)));
  return e;
}

function tokenButton() {  // "Forget token" only while this tab keeps one
  $("logout").hidden = !sessionStorage.getItem(TOKEN_KEY);
}

function headers() {
  const t = sessionStorage.getItem(TOKEN_KEY);
  return t ? { Authorization: "Bearer " + t } : {};
}

class Unauthorised extends Error {}

async function api(path) {
  const r = await fetch(path, { headers: headers() });
  if (r.status === 401) {
    showLogin(sessionStorage.getItem(TOKEN_KEY) ? "The token was refused." : null);
    throw new Unauthorised(path);
  }
  if (!r.ok) throw new Error(path + ": HTTP " + r.status + " " + (await r.text()).slice(0, 300));
  return r.json();
}

function showError(e) {
  if (!(e instanceof Unauthorised)) $("error").textContent = String(e && e.message ? e.message : e);
}

function showLogin(why) {
  $("login").hidden = false;
  if (why) $("login-why").textContent = why;
  document.querySelectorAll(".view").forEach((v) => (v.hidden = true));
}

function fill(tbody, rows) {
  tbody.replaceChildren(...rows);
}

// ---- the cluster now ------------------------------------------------------------------------------
async function renderCluster() {
  const o = await api("/v1/ui/overview");
  if (!dmp.lastId) dmp.lastId = o.latest_id;
  fill(
    document.querySelector("#apps tbody"),
    o.applications.map((a) =>
      el(
        "tr",
        { "data-app": a.application_id, class: a.waiting_for !== "nothing" ? "waiting" : "" },
        el("td", { class: "num" }, a.position == null ? "–" : a.position),
        el("td", {}, el("a", { href: "#app=" + encodeURIComponent(a.application_id) }, a.application_id)),
        el("td", {}, a.name),
        el("td", { class: "num" }, a.priority == null ? "–" : a.priority),
        el("td", {}, a.queue),
        el("td", {}, a.state),
        el("td", { class: "num" }, a.running_containers),
        el("td", { class: "num" }, a.pending_asks),
        el("td", { class: "num" }, a.clones_running),
        el("td", {}, a.waiting_for),
        el("td", {}, a.detail)
      )
    )
  );
  fill(
    document.querySelector("#nodes tbody"),
    o.nodes.map((n) =>
      el(
        "tr",
        { "data-node": n.node_id },
        el("td", {}, n.node_id),
        el("td", {}, n.state),
        el("td", { class: "num" }, n.running_containers),
        el(
          "td",
          { title: Object.entries(n.used).map(([k, v]) => `${k} ${v}/${n.capacity[k]}`).join(", ") },
          el("span", { class: "use" }, el("span", { style: `width:${Math.round(n.use * 100)}%` })),
          ` ${Math.round(n.use * 100)}%`
        )
      )
    )
  );
  fill(
    document.querySelector("#queues tbody"),
    o.queues.map((q) => el("tr", {}, el("td", {}, q.queue), el("td", { class: "num" }, q.running),
      el("td", { class: "num" }, q.waiting), el("td", { class: "num" }, q.containers)))
  );
  const sessions = Object.entries(o.sessions).map(([k, v]) => `${k}: ${v}`).join(", ") || "none";
  $("summary").textContent = `${o.clones_running} clone(s) running; RM sessions: ${sessions}; log at id ${o.latest_id}`;
  if (dmp.firstRenderMs == null) dmp.firstRenderMs = performance.now();
}

// ---- one application's timeline -----------------------------------------------------------------
const OUTCOME = { won: "won", lost_race: "lost race", killed: "killed", failed: "failed" };

function copiesOf(decisions) {
  // attempt id -> {task, phase, attempt, clone, node, start, end, outcome, duration}
  const copies = new Map();
  for (const d of decisions) {
    if (d.kind !== "attempt") continue;
    const i = d.inputs || {};
    const c = copies.get(i.attempt_id) || { task: d.task_id, phase: i.phase_id || "", attempt: i.attempt_id,
      clone: !!i.is_clone, node: d.node_id, start: null, end: null, outcome: "running", duration: null };
    if (d.reason === "clone_launched") c.start = i.launch_ms ? i.launch_ms / 1000 : d.time;
    else {
      c.outcome = d.reason;
      c.end = d.time;
      c.duration = i.duration_s;
      if (c.start == null && i.duration_s != null) c.start = d.time - i.duration_s;
    }
    if (d.node_id) c.node = d.node_id;
    copies.set(i.attempt_id, c);
  }
  return [...copies.values()].sort((a, b) => (a.task < b.task ? -1 : a.task > b.task ? 1 : (a.start || 0) - (b.start || 0)));
}

function renderChart(copies, reads, t0, t1) {
  const chart = $("chart");
  const span = Math.max(t1 - t0, 1e-3);
  const x = (t) => ((t - t0) / span) * 100;
  const phases = new Map();
  for (const c of copies) {
    if (c.start == null) continue;
    const p = phases.get(c.phase) || [c.start, c.end || t1];
    phases.set(c.phase, [Math.min(p[0], c.start), Math.max(p[1], c.end || t1)]);
  }
  const nodes = [...phases].map(([name, [a, b]]) =>
    el("div", { class: "phase", "data-phase": name, style: `left:${x(a)}%;width:${Math.max(x(b) - x(a), 0.3)}%` }, el("b", {}, name)));
  const tasks = [...new Set(copies.map((c) => c.task))];
  const rows = [el("div", { class: "row" })];
  for (const task of tasks) {
    const row = el("div", { class: "row", "data-task": task }, el("span", { class: "label" }, task));
    for (const c of copies.filter((k) => k.task === task && k.start != null)) {
      const cls = ["bar", c.clone ? "clone" : "original", c.outcome === "won" ? "won" : "",
        OUTCOME[c.outcome] && c.outcome !== "won" ? "lost" : ""].join(" ");
      const end = c.end == null ? t1 : c.end;
      row.append(el("span", { class: cls, title: `${c.attempt} ${c.outcome}`,
        style: `left:${x(c.start)}%;width:${Math.max(x(end) - x(c.start), 0.3)}%` }));
    }
    rows.push(row);
  }
  chart.replaceChildren(...nodes, ...rows);
  readMarks(chart, reads, x);
}

function renderEvents(decisions, t0) {
  const kinds = [...new Set(decisions.map((d) => d.kind))].sort();
  const shown = new Set([...document.querySelectorAll("#kinds input:checked")].map((i) => i.value));
  const keep = shown.size ? shown : new Set(kinds.filter((k) => k !== "priority"));
  $("kinds").replaceChildren(...kinds.map((k) => {
    const box = el("input", { type: "checkbox", value: k });
    box.checked = keep.has(k);
    box.addEventListener("change", () => renderApp(false));
    return el("label", {}, box, " " + k);
  }));
  const rows = decisions.filter((d) => keep.has(d.kind)).slice(-MAX_EVENT_ROWS).map((d) =>
    el("tr", { "data-kind": d.kind, "data-id": d.id }, el("td", { class: "num" }, (d.time - t0).toFixed(1)),
      el("td", {}, d.kind), el("td", {}, d.reason), el("td", {}, d.task_id), el("td", {}, d.node_id),
      el("td", {}, d.detail || (d.kind === "omega" && typeof d.inputs.omega === "number" ? `ω = ${d.inputs.omega} s` : ""))));
  fill(document.querySelector("#events tbody"), rows);
}

async function loadApp(appId) {
  const items = [];
  let cursor = null;
  for (let i = 0; i < MAX_TIMELINE_PAGES; i++) {
    const q = "limit=1000" + (cursor ? "&cursor=" + cursor : "");
    const page = await api(`/v1/applications/${encodeURIComponent(appId)}/timeline?${q}`);
    items.push(...page.items);
    cursor = page.next_cursor;
    if (!cursor) break;
  }
  dmp.app = { id: appId, decisions: items };
}

async function renderNow(appId) {
  // the application as the service sees it now (GET /why): its class, position and what it waits for
  const r = await fetch(`/v1/applications/${encodeURIComponent(appId)}/why`, { headers: headers() });
  const a = r.ok ? (await r.json()).application : null;
  $("app-now").textContent = a
    ? `now: ${a.state || "known"}, position ${a.position ?? "–"}, DollyMP class ${a.priority ?? "–"}, ` +
      `${a.running_containers} container(s), ${a.pending_asks} pending ask(s), ${a.clones_running} clone(s) running; ` +
      `waits for ${a.waiting_for}${a.detail ? ": " + a.detail : ""}`
    : "not known to the service now (finished, or before its restart): its decisions below are from the log";
}

function renderApp(reload) {
  const run = async () => {
    const appId = dmp.app && dmp.app.id;
    if (!appId) return;
    if (reload) {
      await loadApp(appId);
      await renderNow(appId);
    }
    const ds = dmp.app.decisions;
    $("app-title").textContent = appId;
    const copies = copiesOf(ds);
    const reads = mapReadsOf(ds);
    let t0 = Infinity;
    let t1 = -Infinity;
    for (const d of ds) { t0 = Math.min(t0, d.time); t1 = Math.max(t1, d.time); }
    for (const c of copies) {
      if (c.start != null) t0 = Math.min(t0, c.start);
      if (c.end != null) t1 = Math.max(t1, c.end);
    }
    for (const r of reads) { t0 = Math.min(t0, r.at); t1 = Math.max(t1, r.at); }
    if (!isFinite(t0)) { t0 = 0; t1 = 1; }
    const clones = copies.filter((c) => c.clone);
    const won = copies.filter((c) => c.outcome === "won");
    const omega = ds.filter((d) => d.kind === "omega" && typeof d.inputs.omega === "number").map((d) => d.inputs.omega);
    $("app-summary").textContent =
      `${ds.length} decisions; ${new Set(copies.map((c) => c.task)).size} task(s) reported, ${clones.length} clone(s), ` +
      `${won.filter((c) => c.clone).length} won by a clone, ${copies.filter((c) => c.outcome === "lost_race").length} loser(s) killed; ` +
      `${ds.filter((d) => d.kind === "placement").length} placement(s), ${ds.filter((d) => d.kind === "deferral").length} deferral(s)` +
      (omega.length ? `; ω (reduce clones read their own map copy for up to) ${omega[omega.length - 1]} s` : "");
    renderChart(copies, reads, t0, t1);
    fill(document.querySelector("#copies tbody"), copies.map((c) =>
      el("tr", { class: "copy", "data-attempt": c.attempt, "data-clone": String(c.clone), "data-outcome": c.outcome },
        el("td", {}, c.task), el("td", {}, c.phase), el("td", {}, c.attempt), el("td", {}, c.clone ? "clone" : "original"),
        el("td", {}, c.node), el("td", {}, OUTCOME[c.outcome] || c.outcome),
        el("td", { class: "num" }, c.duration == null ? "" : Number(c.duration).toFixed(1)))));
    renderReads(reads, t0, omega.length ? omega[omega.length - 1] : null);
    renderEvents(ds, t0);
    if (dmp.firstRenderMs == null) dmp.firstRenderMs = performance.now();
  };
  return run().catch(showError);
}

// ---- clone economics -----------------------------------------------------------------------------
async function renderEconomics() {
  const e = await api("/v1/ui/economics?window_s=" + encodeURIComponent($("window").value));
  const card = (label, value, key) => el("div", { class: "card", "data-figure": key }, el("b", {}, value), label);
  $("econ").replaceChildren(
    card("tasks cloned", e.tasks_cloned, "tasks_cloned"),
    card("clones launched", e.clones_launched, "clones_launched"),
    card("won by a clone", e.clone_wins, "clone_wins"),
    card("original still won", e.original_wins, "original_wins"),
    card("extra container-s", e.extra_container_s.toFixed(1), "extra_container_s"),
    card("task-s saved", e.saved_s.toFixed(1), "saved_s"),
    card("clone wins without estimate", e.tasks_without_estimate, "tasks_without_estimate"));
  const top = Math.max(e.extra_container_s, e.saved_s, 1e-9);
  $("econ-bars").replaceChildren(
    el("div", { class: "hbar extra", style: `width:${(60 * e.extra_container_s) / top}%` }, `extra ${e.extra_container_s.toFixed(1)} container-s`),
    el("div", { class: "hbar saved", style: `width:${(60 * e.saved_s) / top}%` }, `saved ${e.saved_s.toFixed(1)} s`),
    el("p", { class: "note" }, `${e.scanned} outcome record(s) read` + (e.truncated ? " (row limit reached: partial)" : "")));
  if (dmp.firstRenderMs == null) dmp.firstRenderMs = performance.now();
}

// ---- live updates ---------------------------------------------------------------------------------
let pending = [];
let clusterDue = false;
let appDue = null; // decisions of the open application waiting for its next render

function renderAppSoon(d) {
  if (appDue) { appDue.push(d); return; }
  appDue = [d];
  setTimeout(() => {
    const shown = appDue;
    appDue = null;
    if ($("view-app").hidden) return;
    renderApp(false).then(() => {
      const now = Date.now();
      for (const x of shown) dmp.timelineLatencies.push(now - x.time * 1000);
      if (dmp.timelineLatencies.length > 20000) dmp.timelineLatencies.splice(0, 10000);
    });
  }, 1000);
}

function flush() {
  const now = Date.now();
  const feed = $("feed");
  for (const d of pending) {
    dmp.latencies.push(now - d.time * 1000);
    feed.prepend(el("li", { "data-id": d.id }, `${d.id} ${d.kind} ${d.reason} ${d.application_id} ${d.task_id} ${d.detail}`));
    if (dmp.app && d.application_id === dmp.app.id) {
      dmp.app.decisions.push(d);
      renderAppSoon(d);
    }
  }
  if (dmp.latencies.length > 20000) dmp.latencies.splice(0, dmp.latencies.length - 20000);
  while (feed.childElementCount > MAX_FEED) feed.lastElementChild.remove();
  pending = [];
  if (!$("view-cluster").hidden && !clusterDue) {
    clusterDue = true;
    setTimeout(() => { clusterDue = false; renderCluster().catch(showError); }, 1000);
  }
}

async function live() {
  const badge = $("live");
  try {
    // after the newest decision seen; none seen yet: new decisions only (the stream's default)
    const after = dmp.lastId ? "?after=" + dmp.lastId : "";
    const r = await fetch("/v1/decisions/stream" + after, { headers: headers() });
    if (r.status === 401) { showLogin(null); return; }
    if (!r.ok || !r.body) throw new Error("stream: HTTP " + r.status);
    badge.textContent = "live"; badge.className = "live on";
    const reader = r.body.getReader();
    const text = new TextDecoder();
    let buf = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buf += text.decode(value, { stream: true });
      let i;
      while ((i = buf.indexOf("\n\n")) >= 0) {
        const block = buf.slice(0, i);
        buf = buf.slice(i + 2);
        const data = block.split("\n").filter((l) => l.startsWith("data: ")).map((l) => l.slice(6)).join("\n");
        if (!/^event: decision$/m.test(block) || !data) continue;
        const d = JSON.parse(data);
        dmp.events++;
        dmp.lastId = Math.max(dmp.lastId, d.id);
        if (!pending.length) requestAnimationFrame(flush);
        pending.push(d);
      }
      badge.textContent = `live: ${dmp.events} new`;
    }
  } catch (e) {
    showError(e);
  }
  badge.className = "live off"; badge.textContent = "live: reconnecting";
  setTimeout(live, 2000);
}

// ---- navigation ------------------------------------------------------------------------------------
function route() {
  const hash = location.hash || "#cluster";
  const [name, arg] = hash.slice(1).split("=");
  const view = ["cluster", "app", "economics"].includes(name) ? name : "cluster";
  document.querySelectorAll(".view").forEach((v) => (v.hidden = v.id !== "view-" + view));
  document.querySelectorAll("header nav a").forEach((a) => a.classList.toggle("active", a.id === "nav-" + view));
  $("error").textContent = "";
  if (view === "cluster") return renderCluster().catch(showError);
  if (view === "economics") return renderEconomics().catch(showError);
  if (arg) {
    const appId = decodeURIComponent(arg);
    $("app-id").value = appId;
    dmp.app = { id: appId, decisions: [] };
    return renderApp(true);
  }
}

$("login-form").addEventListener("submit", (ev) => {
  ev.preventDefault();
  sessionStorage.setItem(TOKEN_KEY, $("token").value);
  $("login").hidden = true;
  tokenButton();
  Promise.resolve(route()).then(live);
});
$("logout").addEventListener("click", () => { sessionStorage.removeItem(TOKEN_KEY); location.reload(); });
$("app-form").addEventListener("submit", (ev) => { ev.preventDefault(); location.hash = "#app=" + encodeURIComponent($("app-id").value.trim()); });
$("window").addEventListener("change", () => renderEconomics().catch(showError));
window.addEventListener("hashchange", route);
tokenButton();
Promise.resolve(route()).then(() => { if ($("login").hidden) live(); });
