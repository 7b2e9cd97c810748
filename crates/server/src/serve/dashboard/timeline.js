// cdpilot timeline: a trace read by a person (docs/src/spec/trace.md).
// The steps as a list; the selected step's screenshot, snapshot, console
// and requests up to it; arrow keys (j/k, Home/End) move the selection.
// A trace still being written (a live session) is read again every
// 1.5 s. No framework, no build.
//
// Everything a trace holds came from pages (titles, text, URLs, console
// lines): it is put in text nodes and attribute values only, never parsed
// as markup (no innerHTML anywhere in this file).
//
// The token: as the dashboard's (/#token=… once, kept in this tab's
// sessionStorage, sent as `Authorization: Bearer`). `#trace=NAME` picks a
// trace.
"use strict";

const TOKEN_KEY = "cdpilot_token";
const wanted = new URLSearchParams(location.hash.slice(1));
{
  const offered = wanted.get("token") || new URLSearchParams(location.search).get("token");
  if (offered) sessionStorage.setItem(TOKEN_KEY, offered);
  const keep = wanted.get("trace");
  history.replaceState(null, "", "/timeline" + (keep ? "#trace=" + encodeURIComponent(keep) : ""));
}
const token = () => sessionStorage.getItem(TOKEN_KEY) || "";
const call = (path) => fetch(path, { cache: "no-store", headers: { Authorization: `Bearer ${token()}` } });
const $ = (selector) => document.querySelector(selector);

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (key === "class") node.className = value;
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, String(value));
  }
  for (const child of children) {
    if (child !== null && child !== undefined) node.append(child);  // a string is a text node
  }
  return node;
}

let current = null;   // the trace's name
let trace = null;     // the trace as read (GET /v1/timeline/traces/{name})
let selected = 0;     // index into trace.steps
let shownKey = null;  // what the step list shows, to keep it while it holds

function describe(target) {
  let text = target.role;
  if (target.name) text += ` "${target.name}"`;
  if (target.of > 1) text += ` (${target.ordinal + 1} of ${target.of})`;
  return text;
}

function targetsOf(step) {
  const targets = Object.values(step.targets || {});
  if (targets.length) return targets.map(describe).join(", ");
  const a = step.arguments || {};
  if (a.url) return a.url;
  if (a.selector) return a.selector;
  if (a.key) return a.key;
  return "";
}

function time(at) { return (at || "").slice(11, 19); }

function renderSteps() {
  const list = $("#steps");
  const key = `${current}|${trace.steps.length}|${trace.chapters.length}`;
  if (key !== shownKey) {
    shownKey = key;
    list.replaceChildren();
    const chapters = trace.chapters.slice();
    const chapter = (after) => {
      while (chapters.length && chapters[0].after_step <= after) {
        list.append(el("li", { class: "chapter" }, chapters.shift().name));
      }
    };
    chapter(0);
    trace.steps.forEach((step, i) => {
      const ok = step.outcome === "ok";
      list.append(el("li", { "data-step": step.step, "data-index": i, onclick: () => select(i) },
        el("span", { class: "n" }, String(step.step)),
        el("span", { class: "tool" }, step.tool.replace(/^browser_/, ""), " ",
          el("span", { class: ok ? "ok" : "err" }, step.outcome)),
        el("span", { class: "when" }, `${time(step.at)} · ${step.ms} ms`),
        el("span", { class: "target" }, targetsOf(step))));
      chapter(step.step);
    });
  }
  for (const li of list.querySelectorAll("li[data-index]")) {
    const on = Number(li.dataset.index) === selected;
    li.classList.toggle("selected", on);
    li.setAttribute("aria-selected", on ? "true" : "false");
  }
  const now = list.querySelector("li.selected");
  if (now) now.scrollIntoView({ block: "nearest" });
  $("#step-count").textContent = `(${trace.steps.length}${trace.live ? ", still being written" : ""})`;
}

// Screenshots, fetched with the token (an <img src> cannot send it), kept
// as blob URLs by step.
const shots = new Map();
function showShot(step) {
  const img = $("#shot");
  if (!step) { img.removeAttribute("src"); $("#shot-caption").textContent = "no screenshot yet"; return; }
  const n = step.step;
  $("#shot-caption").textContent = n === trace.steps[selected].step
    ? `after step ${n}` : `after step ${n} (the latest up to this step)`;
  const url = shots.get(n);
  if (url) { img.src = url; return; }
  img.removeAttribute("src");
  if (shots.has(n)) return;
  shots.set(n, null);
  const name = current;
  call(`/v1/timeline/traces/${encodeURIComponent(name)}/shots/${n}`)
    .then((r) => (r.ok ? r.blob() : null))
    .then((blob) => {
      if (!blob || name !== current) { shots.delete(n); return; }
      shots.set(n, URL.createObjectURL(blob));
      if (trace && trace.steps[selected] && latest(selected, (s) => s.shot) === step) img.src = shots.get(n);
    })
    .catch(() => shots.delete(n));
}

// The latest step at or before index `i` that `has` says has it.
function latest(i, has) {
  for (let j = i; j >= 0; j--) if (has(trace.steps[j])) return trace.steps[j];
  return null;
}

function row(values, now) {
  return el("tr", { class: now ? "now" : "" }, ...values.map((v) => el("td", {}, v === undefined || v === null ? "" : String(v))));
}

function renderDetail() {
  const step = trace.steps[selected];
  if (!step) { $("#selected-step").textContent = "No step yet"; return; }
  $("#selected-step").textContent = `Step ${step.step}: ${step.tool} → ${step.outcome}`;
  const detail = $("#detail");
  detail.replaceChildren();
  const add = (name, value) => { if (value !== undefined && value !== null && value !== "") detail.append(el("dt", {}, name), el("dd", {}, value)); };
  add("when", `${step.at} · ${step.ms} ms${step.budget_ms ? ` of ${step.budget_ms}` : ""}`);
  add("target", Object.values(step.targets || {}).map(describe).join(", "));
  add("arguments", JSON.stringify(step.arguments));
  add("URL before", step.url_before);
  add("URL after", step.url_after !== step.url_before ? step.url_after : "");
  if (step.error) add("error", `${step.error.code}: ${step.error.message} (next: ${step.error.next_step})`);
  if (step.text !== undefined && step.tool !== "browser_snapshot") add("answer", step.text.length > 2000 ? step.text.slice(0, 2000) + "…" : step.text);
  // Dialogs opened and answered, hand-offs, refusals during the call.
  for (const e of step.events || []) {
    const what = e.message !== undefined ? `${e.type || ""} "${e.message}"` : (e.url || e.reason || e.by || "");
    add(e.event.replace(/_/g, " "), `${what}${e.tab ? ` (tab ${e.tab})` : ""}`);
  }
  if (step.verdicts && step.verdicts.length) add("URL rules", JSON.stringify(step.verdicts));
  if (step.shot_dropped) add("screenshot", `not kept (${step.shot_dropped})`);

  showShot(latest(selected, (s) => s.shot));

  const snap = latest(selected, (s) => s.tool === "browser_snapshot" && s.outcome === "ok" && s.text);
  $("#snapshot").textContent = snap ? snap.text : "(no snapshot taken up to this step)";
  $("#snapshot-caption").textContent = snap ? `from step ${snap.step}${snap.arguments && snap.arguments.diff ? " (a diff)" : ""}` : "";

  const upto = trace.steps.slice(0, selected + 1);
  const consoleRows = [];
  const requestRows = [];
  for (const s of upto) {
    for (const m of s.console || []) consoleRows.push(row([s.step, m.level, m.text], s === step));
    for (const r of s.requests || []) requestRows.push(row([s.step, r.method, r.failed || r.status, r.url, r.ms], s === step));
  }
  const last = (rows) => rows.slice(-300);
  $("#console tbody").replaceChildren(...last(consoleRows));
  $("#requests tbody").replaceChildren(...last(requestRows));
  $("#console-count").textContent = `(${consoleRows.length})`;
  $("#requests-count").textContent = `(${requestRows.length})`;
}

function select(i) {
  if (!trace || !trace.steps.length) return;
  selected = Math.max(0, Math.min(trace.steps.length - 1, i));
  renderSteps();
  renderDetail();
}

document.addEventListener("keydown", (event) => {
  if (!trace || event.target.tagName === "SELECT" || event.altKey || event.ctrlKey || event.metaKey) return;
  const moves = { ArrowDown: 1, ArrowRight: 1, j: 1, ArrowUp: -1, ArrowLeft: -1, k: -1, PageDown: 10, PageUp: -10 };
  if (event.key in moves) select(selected + moves[event.key]);
  else if (event.key === "Home") select(0);
  else if (event.key === "End") select(trace.steps.length - 1);
  else return;
  event.preventDefault();
});

async function load(name, keepSelection) {
  // A live trace read again: only its steps from the last one read on
  // (that one again: it may have been completed since).
  const since = keepSelection && trace && name === current ? Math.max(0, trace.steps.length - 1) : 0;
  const response = await call(`/v1/timeline/traces/${encodeURIComponent(name)}?from=${since}`);
  const data = await response.json().catch(() => ({}));
  if (!response.ok) {
    $("#status").textContent = response.status === 401
      ? "not signed in: open /timeline#token=<token> in this tab (cdpilot serve or cdpilot trace view prints it)"
      : (data.error && data.error.message) || response.statusText;
    return;
  }
  if (data.from > 0 && trace && name === current) data.steps = trace.steps.slice(0, data.from).concat(data.steps);
  const followed = trace && selected === trace.steps.length - 1;
  const grew = !trace || trace.steps.length !== data.steps.length || trace.live !== data.live;
  if (name !== current) {
    for (const url of shots.values()) if (url) URL.revokeObjectURL(url);
    shots.clear();
    shownKey = null;
  }
  current = name;
  trace = data;
  if (!keepSelection) selected = 0;
  else if (followed) selected = trace.steps.length - 1;  // a live trace: follow its new steps
  $("#status").textContent = `${trace.header.session} · started ${trace.header.started}`
    + (trace.live ? " · live" : trace.end ? ` · ended (${trace.end.reason})` : "")
    + (trace.cut ? ` · ${trace.cut}` : "");
  if (trace.steps.length) select(selected); else { renderSteps(); renderDetail(); }
  if (grew) refreshList().catch(() => {});
}

async function refreshList() {
  const response = await call("/v1/timeline/traces");
  if (response.status === 401) {
    $("#status").textContent = "not signed in: open /timeline#token=<token> in this tab (cdpilot serve or cdpilot trace view prints it)";
    return [];
  }
  const { traces } = await response.json();
  const box = $("#trace");
  const shown = JSON.stringify(traces.map((t) => [t.name, t.steps, t.live]));
  if (box.dataset.shown !== shown) {
    box.dataset.shown = shown;
    box.replaceChildren(...traces.map((t) => el("option", { value: t.name },
      t.error ? `${t.name} (cannot be read)` : `${t.started.slice(0, 19).replace("T", " ")} · ${t.session} · ${t.steps} steps${t.live ? " · live" : ""}`)));
    if (current) box.value = current;
  }
  return traces;
}

$("#trace").addEventListener("change", (e) => {
  history.replaceState(null, "", "/timeline#trace=" + encodeURIComponent(e.target.value));
  load(e.target.value, false);
  $("#steps").focus();
});

(async () => {
  const traces = await refreshList().catch(() => []);
  const first = wanted.get("trace") || (traces[0] && traces[0].name);
  if (!first) { $("#status").textContent = $("#status").textContent === "loading…" ? "no trace on this server yet" : $("#status").textContent; return; }
  $("#trace").value = first;
  await load(first, false);
  $("#steps").focus();
  // Only while someone looks: a hidden tab asks the server nothing.
  const shown = () => document.visibilityState === "visible";
  setInterval(() => { if (shown() && trace && trace.live) load(current, true); }, 1500);
  setInterval(() => { if (shown()) refreshList().catch(() => {}); }, 5000);
})();
