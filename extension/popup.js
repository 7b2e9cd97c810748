// The popup: the live sessions (client, domain, last action, age) with
// Stop and Stop all, and the pairing state. Refreshed every second.
const rows = document.getElementById("sessions");

function cell(text) {
  const td = document.createElement("td");
  td.textContent = text;
  return td;
}

async function render() {
  const state = await chrome.runtime.sendMessage({ type: "state" });
  const pairing = document.getElementById("pairing");
  pairing.textContent = !state.paired
    ? "Not paired: run `cdpilot pair` and open the link it prints."
    : `${state.connected ? "Connected to" : "Not connected to"} ${state.server}${state.error ? ` (${state.error})` : ""}`;
  pairing.className = state.connected ? "ok" : "error";
  rows.replaceChildren();
  for (const s of state.sessions) {
    const tr = document.createElement("tr");
    tr.dataset.context = s.context;
    tr.append(cell(s.client || s.context), cell(s.domain || "-"), cell(s.last_action || "-"), cell(`${s.age_s}s`));
    const td = document.createElement("td");
    const stop = document.createElement("button");
    stop.textContent = "Stop";
    stop.className = "stop";
    stop.onclick = () => chrome.runtime.sendMessage({ type: "stop", context: s.context }).then(render);
    td.append(stop);
    tr.append(td);
    rows.append(tr);
  }
  if (!state.sessions.length) {
    const tr = document.createElement("tr");
    const td = cell("No session");
    td.colSpan = 5;
    tr.append(td);
    rows.append(tr);
  }
}

document.getElementById("stop-all").onclick = () => chrome.runtime.sendMessage({ type: "stop_all" }).then(render);
render();
setInterval(render, 1000);
