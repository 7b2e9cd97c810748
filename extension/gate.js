// The consent gate: what the user decided in this browser, checked before
// every command the relay sends to a tab.
//
// Owns the blocklist (chrome.storage.local "blocklist": host names, one
// entry also blocks its subdomains) and the audit log (the last 1000
// actions, chrome.storage.local "audit").

const AUDIT_MAX = 1000;
/// Commands worth a line in the audit log (a snapshot's dozens of reads
/// are not the user's idea of an action).
const AUDITED = new Set([
  "Page.navigate", "Input.dispatchMouseEvent", "Input.dispatchKeyEvent", "Input.insertText",
  "Runtime.evaluate", "Target.createTarget", "Page.handleJavaScriptDialog",
]);

let blocklist = [];
let pendingAudit = [];
let flushing = null;

export async function load() {
  const stored = await chrome.storage.local.get("blocklist");
  blocklist = normalize(stored.blocklist || []);
}

chrome.storage.onChanged.addListener((changes, area) => {
  if (area === "local" && changes.blocklist) blocklist = normalize(changes.blocklist.newValue || []);
});

function normalize(list) {
  return list.map((h) => String(h).trim().toLowerCase().replace(/^\*\./, "")).filter(Boolean);
}

/// The host of `url`, or "" (about:blank, data: URLs).
export function hostOf(url) {
  try {
    return new URL(url).hostname.toLowerCase();
  } catch (e) {
    return "";
  }
}

/// The blocklist entry `url` falls under, or null.
export function blockedBy(url) {
  const host = hostOf(url);
  if (!host) return null;
  return blocklist.find((entry) => host === entry || host.endsWith("." + entry)) || null;
}

/// Appends an action to the audit log (written in batches).
export function audit(context, action, url, outcome) {
  if (!AUDITED.has(action) && outcome === "ok") return;
  pendingAudit.push({ at: new Date().toISOString(), session: context || "", action, domain: hostOf(url || ""), outcome });
  if (!flushing) flushing = setTimeout(flush, 500);
}

async function flush() {
  flushing = null;
  const batch = pendingAudit;
  pendingAudit = [];
  const { audit: log = [] } = await chrome.storage.local.get("audit");
  const next = log.concat(batch).slice(-AUDIT_MAX);
  await chrome.storage.local.set({ audit: next });
}
