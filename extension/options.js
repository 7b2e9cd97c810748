// Options: the server address and pairing, the blocklist, the audit log.
const $ = (id) => document.getElementById(id);

async function render() {
  const stored = await chrome.storage.local.get(["server", "allowedServer", "blocklist", "audit"]);
  $("pairing").textContent = stored.server ? `Paired with ${stored.server}` : "Not paired: run `cdpilot pair` and open the link it prints.";
  $("allowed").value = stored.allowedServer || "";
  $("blocklist").value = (stored.blocklist || []).join("\n");
  const body = $("audit");
  body.replaceChildren();
  for (const entry of (stored.audit || []).slice().reverse()) {
    const tr = document.createElement("tr");
    for (const key of ["at", "session", "action", "domain", "outcome"]) {
      const td = document.createElement("td");
      td.textContent = entry[key] || "";
      tr.append(td);
    }
    body.append(tr);
  }
}

$("save-allowed").onclick = async () => {
  await chrome.storage.local.set({ allowedServer: $("allowed").value.trim() });
  render();
};
$("save-blocklist").onclick = async () => {
  const blocklist = $("blocklist").value.split("\n").map((l) => l.trim()).filter(Boolean);
  await chrome.storage.local.set({ blocklist });
  $("saved").textContent = "Saved";
};
$("unpair").onclick = async () => {
  await chrome.runtime.sendMessage({ type: "unpair" });
  render();
};
render();
