// cdpilot dashboard: polls /v1/dashboard/state once a second, shows a live
// view of the selected session's tab over /v1/dashboard/screencast, and
// answers dialogs / stops sessions through POSTs. No framework, no build.
//
// The token: opened once as /#token=… (or /?token=…), kept in this tab's
// sessionStorage (this origin's alone: no other port or site reads it, and
// no cookie is set, which every port of the host would get and any page
// of the host could overwrite), taken out of the address bar, and sent as
// `Authorization: Bearer` and as the live view's first message.
"use strict";

const TOKEN_KEY = "cdpilot_token";
{
  const offered = new URLSearchParams(location.hash.slice(1)).get("token")
    || new URLSearchParams(location.search).get("token");
  if (offered) {
    sessionStorage.setItem(TOKEN_KEY, offered);
    history.replaceState(null, "", "/");
  }
}
const token = () => sessionStorage.getItem(TOKEN_KEY) || "";

// fetch with the token.
function call(path, init) {
  const headers = Object.assign({}, (init && init.headers) || {}, { Authorization: `Bearer ${token()}` });
  return fetch(path, Object.assign({}, init || {}, { headers }));
}

const $ = (selector) => document.querySelector(selector);
let selected = null;      // session id whose tab is shown live
let liveKey = null;       // "session|tab" the screencast socket shows
let live = null;          // the screencast WebSocket
const drafts = {};        // prompt text typed so far, by dialog key

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (key === "class") node.className = value;
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value);
  }
  for (const child of children) {
    if (child !== null && child !== undefined) node.append(child);
  }
  return node;
}

async function post(path, body) {
  const response = await call(path, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify(body),
  });
  const data = await response.json().catch(() => ({}));
  if (!response.ok) $("#status").textContent = (data.error && data.error.message) || response.statusText;
  return data;
}

function age(seconds) {
  if (seconds < 60) return seconds + " s";
  if (seconds < 3600) return Math.floor(seconds / 60) + " min";
  return Math.floor(seconds / 3600) + " h";
}

function activeTab(session) {
  return session.tabs.find((t) => t.active) || session.tabs[0] || null;
}

function renderSessions(sessions) {
  const body = $("#sessions tbody");
  body.replaceChildren();
  $("#no-sessions").hidden = sessions.length > 0;
  $("#count").textContent = sessions.length ? `(${sessions.length})` : "";
  for (const s of sessions) {
    const tab = activeTab(s);
    const last = s.last_call
      ? el("span", { class: s.last_call.outcome === "ok" ? "ok" : "err" },
          `${s.last_call.tool.replace("browser_", "")} → ${s.last_call.outcome}`)
      : el("span", { class: "muted" }, s.running ? "running…" : "—");
    const row = el("tr", { "data-session": s.id, class: s.id === selected ? "selected" : "",
                           onclick: () => { selected = s.id; refresh(); } },
      el("td", {}, s.kept_as ? `${s.kept_as} ` : "", el("small", { class: "muted" }, s.id)),
      el("td", {}, s.client || "—",
        s.grid ? el("small", { class: "muted", title: `Grid session ${s.grid.session}` }, ` · on ${s.grid.node || "a Grid node"}`) : null),
      el("td", {}, String(s.tabs.length)),
      el("td", { class: "url", title: tab ? tab.url : "" }, tab ? tab.url : "—"),
      el("td", {}, age(s.age_s)),
      el("td", {}, last, s.running ? el("small", { class: "muted" }, ` (${s.running} running)`) : null),
      el("td", {}, s.trace ? el("a", { class: "timeline", href: "/timeline#trace=" + encodeURIComponent(s.trace), title: "This session's trace, step by step", onclick: (e) => e.stopPropagation() }, "timeline ") : null,
        el("button", { class: "stop", onclick: (e) => { e.stopPropagation(); post("/v1/dashboard/stop", { session: s.id }); } }, "Stop")));
    body.append(row);
  }
}

let dialogsShown = null;  // what the dialog cards show, to leave them be while it holds

function renderDialogs(sessions) {
  const box = $("#dialogs");
  const shown = JSON.stringify(sessions.map((s) => [s.id, s.dialogs.map((d) => [d.id, d.tab])]));
  if (shown === dialogsShown) return;  // keep the cards (and what is typed in them)
  dialogsShown = shown;
  const focused = document.activeElement && document.activeElement.dataset.key;
  box.replaceChildren();
  let count = 0;
  for (const s of sessions) {
    for (const d of s.dialogs) {
      count++;
      const key = `${s.id}|${d.id}`;
      const input = d.type === "prompt"
        ? el("input", { class: "prompt", "data-key": key, placeholder: "answer to the prompt",
                        value: drafts[key] !== undefined ? drafts[key] : (d.default_prompt || ""),
                        oninput: (e) => { drafts[key] = e.target.value; } })
        : null;
      const answer = (action) => {
        const body = { session: s.id, tab: d.tab, dialog_id: d.id, action };
        if (input && action === "accept") body.prompt_text = input.value;
        delete drafts[key];
        post("/v1/dashboard/dialog", body).then(refresh);
      };
      box.append(el("div", { class: "dialog", "data-session": s.id, "data-dialog": d.id },
        el("div", { class: "muted" }, `${d.type} in ${s.kept_as || s.id} · tab ${d.tab}`),
        el("div", { class: "message" }, d.message),
        input,
        el("div", { class: "buttons" },
          el("button", { class: "accept primary", onclick: () => answer("accept") }, "Accept"),
          el("button", { class: "dismiss", onclick: () => answer("dismiss") }, "Dismiss"))));
      if (focused === key && input) { input.focus(); input.setSelectionRange(input.value.length, input.value.length); }
    }
  }
  $("#nothing-waiting").hidden = count > 0;
}

let asksShown = null;

function renderAsks(asks) {
  const shown = JSON.stringify(asks.map((a) => a.id));
  if (shown === asksShown) return;
  asksShown = shown;
  const box = $("#asks");
  box.replaceChildren();
  for (const a of asks) {
    const decide = (allow) => post("/v1/dashboard/decide", { id: a.id, allow }).then(refresh);
    box.append(el("div", { class: "dialog ask", "data-ask": a.id },
      el("div", { class: "muted" }, `${a.session} wants to open (rule ${a.rule})`),
      el("div", { class: "message" }, a.url),
      el("div", { class: "buttons" },
        el("button", { class: "once primary", onclick: () => decide("once") }, "Allow once"),
        el("button", { class: "always", onclick: () => decide("always") }, "Allow this site"),
        el("button", { class: "deny", onclick: () => decide("deny") }, "Deny"))));
  }
}

// Audit thumbnails, fetched with the token (an <img src> cannot send it)
// and kept as blob URLs by path; the image shows once it is here.
const thumbs = new Map();
function thumbnail(path, alt) {
  const url = thumbs.get(path);
  if (url) return el("img", { src: url, alt });
  if (!thumbs.has(path)) {
    thumbs.set(path, null);
    call(path).then((r) => (r.ok ? r.blob() : null)).then((blob) => {
      if (blob) thumbs.set(path, URL.createObjectURL(blob)); else thumbs.delete(path);
    }).catch(() => thumbs.delete(path));
  }
  return null;
}

function renderAudit(records, cost) {
  const kept = new Set(records.map((r) => r.thumbnail).filter(Boolean));
  for (const [path, url] of thumbs) {
    if (!kept.has(path)) { if (url) URL.revokeObjectURL(url); thumbs.delete(path); }
  }
  const body = $("#audit tbody");
  body.replaceChildren();
  for (const r of records) {
    body.append(el("tr", {},
      el("td", {}, r.at.slice(11, 19)),
      el("td", {}, el("small", {}, r.session)),
      el("td", {}, r.tool.replace("browser_", "")),
      el("td", { class: r.outcome === "ok" ? "ok" : "err" }, r.outcome),
      el("td", {}, String(r.ms)),
      el("td", { class: "url", title: r.url_after || "" }, r.url_after || ""),
      el("td", {}, r.thumbnail ? thumbnail(r.thumbnail, "after " + r.tool) : null)));
  }
  $("#thumb-cost").textContent = cost.taken
    ? `Thumbnails: ${cost.taken} taken, ${cost.avg_ms.toFixed(1)} ms and ${Math.round(cost.avg_bytes / 1024)} KB each on average (last ${cost.kept} kept).`
    : "";
}

function watch(sessions) {
  const session = sessions.find((s) => s.id === selected);
  const tab = session && activeTab(session);
  const key = session && tab ? `${session.id}|${tab.id}` : null;
  $("#live-title").textContent = session ? `${session.kept_as || session.id} · ${tab ? tab.url : ""}` : "select a session";
  if (key === liveKey) return;
  if (live) { live.close(); live = null; }
  liveKey = key;
  $("#live").removeAttribute("src");
  if (!key) return;
  const scheme = location.protocol === "https:" ? "wss:" : "ws:";
  live = new WebSocket(`${scheme}//${location.host}/v1/dashboard/screencast?session=${encodeURIComponent(session.id)}&tab=${encodeURIComponent(tab.id)}`);
  const socket = live;
  live.onopen = () => socket.send(JSON.stringify({ token: token() }));
  live.onmessage = (event) => {
    if (typeof event.data === "string" && !event.data.startsWith("error:")) $("#live").src = "data:image/jpeg;base64," + event.data;
  };
  live.onclose = () => { if (liveKey === key) liveKey = null; };
}

async function refresh() {
  try {
    const response = await call("/v1/dashboard/state", { cache: "no-store" });
    if (response.status === 401) {
      $("#status").textContent = "not signed in: open /#token=<token> in this tab (printed by cdpilot serve; cdpilot sessions prints the link)";
      return;
    }
    const state = await response.json();
    if (selected && !state.sessions.some((s) => s.id === selected)) selected = null;
    if (!selected && state.sessions.length) selected = state.sessions[0].id;
    renderSessions(state.sessions);
    renderDialogs(state.sessions);
    renderAsks(state.asks || []);
    renderAudit(state.audit, state.thumbnails);
    watch(state.sessions);
    $("#status").textContent = `${state.sessions.length} of ${state.max_sessions} sessions · updated ${new Date().toLocaleTimeString()}`;
  } catch (e) {
    $("#status").textContent = "the server does not answer (" + e.message + ")";
  }
}

// The paired Chrome (the cdpilot extension): its state, and a pairing link
// on demand (what `cdpilot pair` prints).
async function refreshChrome() {
  const response = await call("/v1/extension/status", { cache: "no-store" }).catch(() => null);
  if (!response || !response.ok) return;
  const s = await response.json();
  const box = $("#chrome-box");
  box.dataset.paired = s.paired;
  box.dataset.connected = s.connected;
  $("#chrome-state").textContent = !s.paired ? "not paired"
    : s.connected ? `paired · connected · ${s.sessions} session${s.sessions === 1 ? "" : "s"}`
    : "paired · not connected";
  $("#chrome-hint").hidden = s.enabled !== false;
  if (s.connected) $("#pairing").hidden = true;
}

$("#pair").addEventListener("click", async () => {
  const answer = await post("/v1/extension/pair", {});
  if (!answer.link) return;
  $("#pair-link").value = answer.link;
  $("#pair-ttl").textContent = `${Math.round(answer.expires_in_s / 60)} minutes`;
  $("#pairing").hidden = false;
  $("#pair-link").select();
});

$("#stop-all").addEventListener("click", () => post("/v1/dashboard/stop", { all: true }).then(refresh));
refresh();
setInterval(refresh, 1000);
refreshChrome();
setInterval(refreshChrome, 1000);
