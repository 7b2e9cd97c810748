// The service worker: wires the relay's socket to the emulated browser,
// and the user's controls (popup Stop / Stop all, the debugger bar's
// Cancel, the screen lock, idleness, a session's TTL) to ending sessions.
//
// Every listener is registered at the top level, as MV3 requires, so a
// worker Chrome restarted for an event gets it.

import { Browser, Refusal, setTtlMinutes } from "./browser.js";
import { blockedBy, load as loadGate } from "./gate.js";
import { PROTOCOL_VERSION, Relay } from "./relay.js";

const IDLE_SECONDS = 30 * 60;

const browser = new Browser((method, params, sessionId) => {
  relay.send({ type: "event", event: "cdp", data: sessionId ? { method, params, sessionId } : { method, params } });
});

const relay = new Relay(onServerMessage, () => {});
relay.onDisconnected = () => browser.connectionLost();

async function onServerMessage(message) {
  if (message.type === "sessions") {
    browser.nameClients(message.sessions || []);
    return;
  }
  if (message.type !== "request") return;
  const { id, method, params, sessionId } = message;
  if (typeof method !== "string") {
    relay.send({ type: "response", id, error: { code: "invalid_argument", message: "a request needs a method" } });
    return;
  }
  try {
    const result = await browser.command(method, params || {}, sessionId || "");
    relay.send({ type: "response", id, result });
  } catch (e) {
    const refusal = e instanceof Refusal ? e : new Refusal("cdp_error", String(e.message || e), { cdp_code: -32000 });
    relay.send({ type: "response", id, error: { code: refusal.code, message: refusal.message, data: refusal.data || {} } });
  }
}

/// Ends the cdpilot session of `context` at once: its tabs are detached
/// and closed, and the server hears why.
async function stopContext(context, reason) {
  if (!browser.contexts.has(context)) return;
  relay.send({ type: "event", event: "session_stopped", data: { context, reason } });
  await browser.closeContext(context);
}

async function stopAll(reason) {
  for (const context of [...browser.contexts.keys()]) await stopContext(context, reason);
}

/// A debugger detached from a tab: the debugger bar's Cancel
/// (`canceled_by_user`) ends that tab's session.
async function onDebuggerDetach(source, reason) {
  const cancelled = browser.onDebuggerDetach(source, reason);
  if (cancelled) await stopContext(cancelled, "stopped_by_user");
}

/// chrome.idle's new state: the screen locked ends every session at once
/// (`stopped_by_user`), and so does being idle for IDLE_SECONDS (`idle`).
async function onIdleState(state) {
  if (state === "locked") await stopAll("stopped_by_user");
  else if (state === "idle") await stopAll("idle");
}

/// An alarm: the keepalive tick, or a session's TTL run out (`idle`).
async function onAlarm(alarm) {
  if (alarm.name === "keepalive") relay.start();
  else if (alarm.name.startsWith("ttl:")) await stopContext(alarm.name.slice(4), "idle");
}

/// `ttl_minutes` in chrome.storage.local: the session TTL (default 15).
/// A test hook (documented as one): the extension's tests set a TTL of a
/// few seconds to see the real alarm end a session.
async function loadTtl() {
  const { ttl_minutes: minutes } = await chrome.storage.local.get("ttl_minutes");
  setTtlMinutes(minutes);
}

chrome.debugger.onEvent.addListener((source, method, params) => browser.onDebuggerEvent(source, method, params || {}));
chrome.debugger.onDetach.addListener(onDebuggerDetach);
chrome.tabs.onUpdated.addListener((tabId, change) => {
  if (change.url || change.title || change.status) browser.onTabUpdated(tabId, change);
});
chrome.tabs.onRemoved.addListener((tabId) => browser.onTabRemoved(tabId));
chrome.tabs.onCreated.addListener((tab) => browser.onTabCreated(tab));

chrome.idle.setDetectionInterval(IDLE_SECONDS);
chrome.idle.onStateChanged.addListener(onIdleState);
chrome.alarms.onAlarm.addListener(onAlarm);
chrome.storage.onChanged.addListener((changes, area) => {
  if (area === "local" && changes.ttl_minutes) setTtlMinutes(changes.ttl_minutes.newValue);
});
loadTtl();

// The handlers the listeners call, reachable from the worker's global
// scope: headless Chromium has no screen lock, idle state or debugger bar,
// so the tests call these same functions over CDP with the state Chrome
// would pass (and read the blocklist the gate holds, `blockedBy`).
// The relay itself is there for the extension benchmark's connect timing.
globalThis.cdpilot = { browser, relay, relayVersion: PROTOCOL_VERSION, onIdleState, onAlarm, onDebuggerDetach, blockedBy };
chrome.alarms.create("keepalive", { periodInMinutes: 0.5 });

chrome.runtime.onMessage.addListener((message, _sender, reply) => {
  handle(message).then(reply, (e) => reply({ error: String(e.message || e) }));
  return true; // answered asynchronously
});

async function handle(message) {
  switch (message.type) {
    case "pair":
      return relay.pair(message.server, message.code, message.replace === true);
    case "unpair":
      await stopAll("stopped_by_user");
      await relay.unpair();
      return {};
    case "state": {
      await browser.ready;
      const { server } = await chrome.storage.local.get("server");
      return { paired: !!server, server: server || "", connected: relay.connected, error: relay.lastError, sessions: browser.overview() };
    }
    case "stop":
      await stopContext(message.context, "stopped_by_user");
      return {};
    case "stop_all":
      await stopAll("stopped_by_user");
      return {};
    default:
      return { error: `unknown message ${message.type}` };
  }
}

chrome.runtime.onStartup.addListener(() => relay.start());
loadGate().then(() => relay.start());
