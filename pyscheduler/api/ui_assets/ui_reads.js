// Delay assignment on the operator's page: which map copy each reduce copy read (the log's `map_read`
// decisions, pyscheduler/service/state/mapreads.py), as marks on the reduce task's row of the time axis and as the
// "Map reads" table. Loaded before ui.js, which calls mapReadsOf, readMarks and renderReads. No data is
// ever put into the page as HTML.
"use strict";

const READ_KIND = { own_copy: "own copy", first_copy: "first copy" };

// One entry per read: the reduce task and copy, the map copy read, own or first, how long it waited.
function mapReadsOf(decisions) {
  const reads = [];
  for (const d of decisions) {
    if (d.kind !== "map_read") continue;
    const i = d.inputs || {};
    reads.push({ id: d.id, task: d.task_id, attempt: i.attempt_id || "", clone: !!i.is_clone, mapTask: i.map_task_id || "",
      mapCopy: i.map_attempt_id || "", kind: d.reason, waited: Number(i.waited_s || 0), why: i.why || "",
      at: i.time_ms ? i.time_ms / 1000 : d.time });
  }
  return reads.sort((a, b) => a.at - b.at || (a.attempt < b.attempt ? -1 : 1));
}

// Marks on the chart's task rows (data-task): filled for the reduce copy's own map copy, hollow for the first.
// A reduce task with no copy on the chart yet (no clone launched, none ended) gets its row here.
function readMarks(chart, reads, x) {
  for (const r of reads) {
    let row = [...chart.querySelectorAll(".row")].find((e) => e.dataset.task === r.task);
    if (!row) {
      row = el("div", { class: "row", "data-task": r.task }, el("span", { class: "label" }, r.task));
      chart.append(row);
    }
    row.append(el("span", { class: "read " + r.kind, "data-attempt": r.attempt, "data-map": r.mapCopy,
      title: `${r.attempt} read ${r.mapCopy} (${READ_KIND[r.kind] || r.kind}, waited ${r.waited.toFixed(1)} s)`,
      style: `left:${x(r.at)}%` }));
  }
}

// Whether the read came within ω by the reduce copy's own clock (the AM may cap or pin the service's ω):
// its own copy always does; the first copy after "omega elapsed" does not; other first-copy reads never
// waited (no reduce clones, too few map copies, own copy lost).
function withinOmega(r) {
  if (r.kind === "own_copy") return "yes";
  return r.why === "omega elapsed" ? "no" : "–";
}

// The "Map reads" table; `omega` is the job's latest ω from the service (s) or null.
function renderReads(reads, t0, omega) {
  $("reads-note").textContent = reads.length
    ? `${reads.length} read(s): ${reads.filter((r) => r.kind === "own_copy").length} of the reduce copy's own map copy, ` +
      `${reads.filter((r) => r.kind === "first_copy").length} of the first copy` + (omega != null ? `; ω = ${omega} s` : "")
    : "no map reads reported (the job has no reduce clones under delay assignment, or none has read yet)";
  fill(document.querySelector("#reads tbody"), reads.map((r) =>
    el("tr", { class: "read", "data-attempt": r.attempt, "data-map": r.mapCopy, "data-kind": r.kind },
      el("td", { class: "num" }, (r.at - t0).toFixed(1)), el("td", {}, r.task),
      el("td", {}, `${r.attempt} (${r.clone ? "clone" : "original"})`), el("td", {}, r.mapTask), el("td", {}, r.mapCopy),
      el("td", {}, READ_KIND[r.kind] || r.kind), el("td", { class: "num" }, r.waited.toFixed(1)),
      el("td", {}, withinOmega(r)), el("td", {}, r.why))));
}
