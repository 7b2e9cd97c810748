// The consent gate: what the user decided in this browser, checked before
// every command the relay sends to a tab, and held on every request of the
// agent's tabs by a declarativeNetRequest session rule limited to their
// tab ids (frames, subresources, and navigations the page starts itself
// included): a blocked host gets nothing from the agent's tabs.
//
// Hosts are compared in one canonical form on both sides: what URL parsing
// gives (lowercase, internationalised names in punycode) without trailing
// dots, so `Bank.example.`, `bank.example` and an IDN as the user typed it
// are one host.
//
// Owns the blocklist (chrome.storage.local "blocklist": host names, one
// entry also blocks its subdomains), the session rule that holds it for the
// agent's tabs, and the audit log (the last 1000 actions,
// chrome.storage.local "audit").

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

/// The id of the session rule that blocks the blocklist in the agent's tabs.
const RULE_ID = 1;
/// Every kind of request (a rule without `resourceTypes` leaves out
/// `main_frame`: the navigations a page starts would pass).
const ALL_TYPES = [
  "main_frame", "sub_frame", "stylesheet", "script", "image", "font", "object", "xmlhttprequest",
  "ping", "csp_report", "media", "websocket", "webtransport", "webbundle", "other",
];
/// The agent's tab ids, as the browser module last said.
let agentTabs = [];
/// Rule updates, one at a time, in order.
let ruling = Promise.resolve();

export async function load() {
  const stored = await chrome.storage.local.get("blocklist");
  blocklist = normalize(stored.blocklist || []);
  await holdForTabs(agentTabs);
}

chrome.storage.onChanged.addListener((changes, area) => {
  if (area === "local" && changes.blocklist) {
    blocklist = normalize(changes.blocklist.newValue || []);
    holdForTabs(agentTabs);
  }
});

function normalize(list) {
  return [...new Set(list.map(canonicalHost).filter(Boolean))];
}

/// A host in its canonical form: as URL parsing gives it (lowercase,
/// punycode), without a leading `*.` or trailing dots; "" if it is not a
/// host. An entry pasted as a URL gives its host.
export function canonicalHost(entry) {
  let text = String(entry).trim().replace(/^\*\./, "");
  if (!text) return "";
  try {
    text = new URL(text.includes("://") ? text : `http://${text}`).hostname;
  } catch (e) {
    return "";
  }
  return text.replace(/\.+$/, "");
}

/// The canonical host of `url`, or "" (about:blank, data: URLs).
export function hostOf(url) {
  try {
    return new URL(url).hostname.replace(/\.+$/, "");
  } catch (e) {
    return "";
  }
}

/// Holds the blocklist on every request of `tabIds` (the agent's tabs):
/// one session rule, replaced whenever the tabs or the list change.
/// Resolves once Chrome has the rule.
export function holdForTabs(tabIds) {
  agentTabs = [...new Set(tabIds)];
  const tabs = agentTabs;
  const list = blocklist;
  ruling = ruling.then(async () => {
    // Names as requests carry them: with and without a trailing dot.
    const domains = list.filter((h) => !h.startsWith("[")).flatMap((h) => [h, `${h}.`]);
    const addRules = tabs.length && domains.length
      ? [{
          id: RULE_ID,
          priority: 1,
          action: { type: "block" },
          condition: { requestDomains: domains, tabIds: tabs, resourceTypes: ALL_TYPES },
        }]
      : [];
    try {
      await chrome.declarativeNetRequest.updateSessionRules({ removeRuleIds: [RULE_ID], addRules });
    } catch (e) {
      console.error("cdpilot: the blocklist's rule was refused", e);
    }
  });
  return ruling;
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
