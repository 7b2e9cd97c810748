// What cdpilot's engine sees as "the browser": its browser-level session
// ("") is answered here, from the tabs this extension owns; commands for a
// tab (and its cross-origin frames' flattened child sessions) go through
// chrome.debugger.
//
// Owns: the agent's browser contexts (one per cdpilot session), the tabs
// each opened (in one window of the agent's, created unfocused on first
// use), the session ids handed out, and their copy in
// chrome.storage.session (so a restarted service worker finds them again).
// The user's other tabs are never attached, listed or touched.

import { audit, blockedBy, holdForTabs, hostOf } from "./gate.js";

/// A command refused by the consent gate or by this module; `code` is the
/// relay's error code (the server maps it to the contract's).
export class Refusal extends Error {
  constructor(code, message, data) {
    super(message);
    this.code = code;
    this.data = data;
  }
}

/// The commands the popup names as a session's last action (the engine's
/// own reads, such as a snapshot's evaluations, are not actions).
const USER_ACTIONS = {
  "Page.navigate": "navigate",
  "Input.dispatchMouseEvent": "click",
  "Input.dispatchKeyEvent": "type",
  "Input.insertText": "type",
  "Page.handleJavaScriptDialog": "dialog",
};

export class Browser {
  constructor(emit) {
    // (method, params, sessionId) → the server, as a CDP event.
    this.emit = emit;
    // context id → {id, created, lastUsed, lastAction, domain, client}
    this.contexts = new Map();
    // tab id → {tabId, targetId, context, session (primary), attached}
    this.tabs = new Map();
    // session id → {tabId, child (Chrome's id of a frame's session) | null, alias}
    this.sessions = new Map();
    this.windowId = null;
    this.counter = 0;
    // debuggee (JSON) → resolves the pause a termination waits for
    this.pausedWaiters = new Map();
    this.ready = this.rehydrate();
  }

  // ---- state kept across service worker restarts ----

  async rehydrate() {
    const { relayState } = await chrome.storage.session.get("relayState");
    if (!relayState) return;
    this.counter = relayState.counter || 0;
    this.windowId = relayState.windowId ?? null;
    for (const c of relayState.contexts || []) this.contexts.set(c.id, c);
    for (const t of relayState.tabs || []) {
      try {
        const chromeTab = await chrome.tabs.get(t.tabId);
        // Sessions handed out before the restart are gone with the engine's
        // connection; the engine attaches again.
        this.tabs.set(t.tabId, { ...t, session: null, url: chromeTab.url || "" });
      } catch (e) {
        // closed meanwhile
      }
    }
    await this.holdRules();
  }

  /// The blocklist's rule follows the agent's tabs (gate.js).
  holdRules() {
    return holdForTabs([...this.tabs.keys()]);
  }

  persist() {
    const relayState = {
      counter: this.counter,
      windowId: this.windowId,
      contexts: [...this.contexts.values()],
      tabs: [...this.tabs.values()].map(({ tabId, targetId, context, attached }) => ({ tabId, targetId, context, attached })),
    };
    chrome.storage.session.set({ relayState }).catch(() => {});
  }

  /// Who drives each context, as the server says (`sessions`): the
  /// popup shows the client's name rather than the context's id.
  nameClients(sessions) {
    let changed = false;
    for (const { context, client } of sessions) {
      const c = this.contexts.get(context);
      if (c && typeof client === "string" && c.client !== client) {
        c.client = client;
        changed = true;
      }
    }
    if (changed) this.persist();
  }

  /// The engine's connection ended (socket closed): its sessions go.
  connectionLost() {
    this.sessions.clear();
    for (const tab of this.tabs.values()) tab.session = null;
  }

  // ---- what the popup shows ----

  overview() {
    const now = Date.now();
    return [...this.contexts.values()].map((c) => ({
      context: c.id,
      client: c.client || "",
      domain: c.domain || "",
      last_action: c.lastAction || "",
      age_s: Math.round((now - c.created) / 1000),
      tabs: [...this.tabs.values()].filter((t) => t.context === c.id).length,
    }));
  }

  contextOfSession(sessionId) {
    const s = this.sessions.get(sessionId);
    return s ? this.tabs.get(s.tabId)?.context : undefined;
  }

  // ---- one command ----

  async command(method, params = {}, sessionId = "") {
    await this.ready;
    if (!sessionId) return this.browserCommand(method, params);
    const session = this.sessions.get(sessionId);
    if (!session) throw new Refusal("cdp_error", `Session with given id not found.`, { cdp_code: -32001 });
    const tab = this.tabs.get(session.tabId);
    if (!tab) throw new Refusal("cdp_error", "No target with given id found", { cdp_code: -32602 });
    const context = this.contexts.get(tab.context);
    // The tab's address as chrome.tabs last said it (asking Chrome on
    // every command would add a round trip to each).
    // A frame's session is judged by the frame's own address.
    const current = (session.child ? session.url : tab.url) || tab.url || "";
    const destination = method === "Page.navigate" ? params.url : current;
    const blocked = blockedBy(destination);
    if (blocked) {
      audit(tab.context, method, destination, "domain_blocked");
      throw new Refusal("domain_blocked", `${hostOf(destination)} is on the cdpilot extension's blocklist (${blocked})`, { domain: hostOf(destination) });
    }
    if (context) {
      context.lastUsed = Date.now();
      const action = USER_ACTIONS[method];
      if (action) {
        context.lastAction = action;
        context.domain = hostOf(destination) || context.domain;
      }
      // The TTL restarts with each action; the alarm is moved at most
      // every 30 s (each move is a round trip to the browser), or every
      // half TTL when that is shorter.
      if (!context.alarmSet || Date.now() - context.alarmSet > Math.min(30000, ttlMinutes() * 30000)) {
        context.alarmSet = Date.now();
        chrome.alarms.create(`ttl:${context.id}`, { delayInMinutes: ttlMinutes() });
      }
    }
    if (method === "Runtime.evaluate" || method === "Runtime.callFunctionOn") {
      // Through chrome.debugger a `timeout` answers "Internal error"
      // (Chromium 156); the engine stops a runaway script with
      // Runtime.terminateExecution instead.
      delete params.timeout;
    }
    if (method === "Page.bringToFront") {
      // Chrome's own would also focus the agent's window and take the
      // user's typing. Being the tab its window shows is what the engine
      // asks it for: a tab behind another draws nothing and takes no input.
      await chrome.tabs.update(session.tabId, { active: true });
      audit(tab.context, method, destination, "ok");
      return {};
    }
    const debuggee = session.child ? { tabId: session.tabId, sessionId: session.child } : { tabId: session.tabId };
    if (method === "Runtime.terminateExecution") return this.terminate(debuggee, tab);
    if (method === "Debugger.enable") tab.engineDebugger = true;
    if (method === "Runtime.evaluate" && session.alias && !tab.debuggerReady) {
      // Evaluate's lane runs the agent's script: make sure it can be
      // stopped (see `terminate`) before it starts and holds the page.
      await this.prepareTermination({ tabId: session.tabId });
      tab.debuggerReady = true;
    }
    try {
      const result = await chrome.debugger.sendCommand(debuggee, method, params);
      audit(tab.context, method, destination, "ok");
      return result || {};
    } catch (e) {
      audit(tab.context, method, destination, "error");
      throw new Refusal("cdp_error", String(e.message || e), { cdp_code: -32000 });
    }
  }

  async browserCommand(method, params) {
    switch (method) {
      case "Browser.getVersion":
        return { protocolVersion: "1.3", product: "Chrome (cdpilot extension)", revision: "", userAgent: navigator.userAgent, jsVersion: "" };
      case "Target.setDiscoverTargets":
        for (const tab of this.tabs.values()) {
          const info = await this.targetInfo(tab);
          if (info) this.emit("Target.targetCreated", { targetInfo: info });
        }
        return {};
      case "Target.setAutoAttach":
      case "Fetch.enable":
      case "Fetch.disable":
      case "Browser.setDownloadBehavior":
      case "Target.activateTarget":
        // Auto-attach: the agent's tabs are attached when it asks. Fetch
        // at the browser level judges unattached pages: there are none of
        // the agent's. Downloads follow the user's settings. Activating
        // would steal the user's focus.
        return {};
      case "Target.createBrowserContext": {
        const id = `ext-${Date.now().toString(36)}-${++this.counter}`;
        this.contexts.set(id, { id, created: Date.now(), lastUsed: Date.now(), lastAction: "", domain: "", client: "" });
        chrome.alarms.create(`ttl:${id}`, { delayInMinutes: ttlMinutes() });
        this.persist();
        return { browserContextId: id };
      }
      case "Target.disposeBrowserContext":
        await this.closeContext(params.browserContextId);
        return {};
      case "Target.createTarget":
        return this.createTarget(params.url || "about:blank", params.browserContextId);
      case "Target.attachToTarget":
        return this.attach(params.targetId);
      case "Target.detachFromTarget":
        await this.detachSession(params.sessionId);
        return {};
      case "Target.closeTarget": {
        const tab = this.byTarget(params.targetId);
        if (!tab) throw new Refusal("cdp_error", "No target with given id found", { cdp_code: -32602 });
        await chrome.tabs.remove(tab.tabId).catch(() => {});
        return { success: true };
      }
      case "Target.getTargetInfo": {
        const tab = this.byTarget(params.targetId);
        const info = tab && (await this.targetInfo(tab));
        if (!info) throw new Refusal("cdp_error", "No target with given id found", { cdp_code: -32602 });
        return { targetInfo: info };
      }
      case "Target.getTargets": {
        const infos = [];
        for (const tab of this.tabs.values()) {
          const info = await this.targetInfo(tab);
          if (info) infos.push(info);
        }
        return { targetInfos: infos };
      }
      case "Storage.getCookies":
        return { cookies: await this.contextCookies(params.browserContextId) };
      case "Storage.setCookies":
        await this.setContextCookies(params.browserContextId, params.cookies || []);
        return {};
      case "Storage.clearCookies":
        // The agent's tabs share the user's cookie jar: clearing it would
        // sign the user out everywhere.
        throw new Refusal("cdp_error", "clearing cookies is not available through the cdpilot extension: the agent's tabs share your Chrome's cookies, and clearing them would sign you out of every site; delete the cookies you mean in Chrome's settings", { cdp_code: -32601 });
      default:
        throw new Refusal("cdp_error", `${method} is not available through the cdpilot extension (it would reach beyond the agent's tabs)`, { cdp_code: -32601 });
    }
  }

  // ---- cookies: the user's own jar, seen through the agent's tabs ----

  /// The context's tabs showing a web page, attached (a debuggee to ask).
  webTabs(context) {
    return [...this.tabs.values()].filter((t) => t.context === context && t.session && /^https?:/.test(t.url || ""));
  }

  /// The cookies the context's pages are sent (`Network.getCookies` for
  /// their URLs), never the rest of the user's jar.
  async contextCookies(context) {
    const tabs = this.webTabs(context);
    if (!tabs.length) return [];
    const urls = [...new Set(tabs.map((t) => t.url))];
    const { cookies } = await chrome.debugger.sendCommand({ tabId: tabs[0].tabId }, "Network.getCookies", { urls });
    return cookies || [];
  }

  /// Sets cookies for the sites the context's tabs show (a host of one of
  /// them, or a parent domain of it); any other site is refused.
  async setContextCookies(context, cookies) {
    const tabs = this.webTabs(context);
    const hosts = [...new Set(tabs.map((t) => hostOf(t.url)))];
    for (const cookie of cookies) {
      const host = (cookie.url ? hostOf(cookie.url) : (cookie.domain || "").replace(/^\./, "")).toLowerCase();
      const shown = host && hosts.some((h) => h === host || h.endsWith("." + host));
      if (!shown) {
        audit(context, "Storage.setCookies", cookie.url || host, "refused");
        throw new Refusal("cdp_error", `a cookie for ${host || "no site"} is not set through the cdpilot extension: it sets cookies only for the sites the agent's tabs show (${hosts.join(", ") || "none"})`, { cdp_code: -32000 });
      }
    }
    await chrome.debugger.sendCommand({ tabId: tabs[0].tabId }, "Network.setCookies", { cookies });
    audit(context, "Storage.setCookies", tabs[0].url, "ok");
  }

  // ---- tabs ----

  byTarget(targetId) {
    return [...this.tabs.values()].find((t) => t.targetId === targetId);
  }

  async targetInfo(tab) {
    let chromeTab;
    try {
      chromeTab = await chrome.tabs.get(tab.tabId);
    } catch (e) {
      return null;
    }
    return {
      targetId: tab.targetId,
      type: "page",
      title: chromeTab.title || "",
      url: chromeTab.url || chromeTab.pendingUrl || "about:blank",
      attached: !!tab.session,
      canAccessOpener: false,
      browserContextId: tab.context,
    };
  }

  async targetIdOf(tabId) {
    const targets = await chrome.debugger.getTargets();
    return targets.find((t) => t.tabId === tabId)?.id;
  }

  /// A tab of `context` in the agent's window (made, unfocused, on first
  /// use; a window the user closed is made again).
  async createTarget(url, context) {
    if (!this.contexts.has(context)) {
      throw new Refusal("cdp_error", "Failed to find browser context with id " + context, { cdp_code: -32602 });
    }
    const blocked = blockedBy(url);
    if (blocked) throw new Refusal("domain_blocked", `${hostOf(url)} is on the cdpilot extension's blocklist (${blocked})`, { domain: hostOf(url) });
    // Opened blank: the blocklist's rule covers the tab before its first
    // request (a redirect to a blocked host included).
    const blank = "about:blank";
    let chromeTab = null;
    if (this.windowId !== null) {
      try {
        chromeTab = await chrome.tabs.create({ windowId: this.windowId, url: blank, active: false });
      } catch (e) {
        this.windowId = null;
      }
    }
    if (!chromeTab) {
      // Unfocused, so the user's typing stays where it was. Not minimized:
      // Chromium (156) delivers no input to the cross-origin frames of a
      // minimized window's tabs (a click there never reaches the frame).
      const window = await chrome.windows.create({ url: blank, focused: false, state: "normal" });
      this.windowId = window.id;
      chromeTab = window.tabs[0];
    }
    const targetId = await this.targetIdOf(chromeTab.id);
    const tab = { tabId: chromeTab.id, targetId, context, session: null, attached: false, url };
    this.tabs.set(chromeTab.id, tab);
    this.persist();
    await this.holdRules();
    if (url && url !== blank) await chrome.tabs.update(chromeTab.id, { url });
    audit(context, "Target.createTarget", url, "ok");
    const info = await this.targetInfo(tab);
    if (info) this.emit("Target.targetCreated", { targetInfo: info });
    return { targetId };
  }

  /// A session for an agent's tab: the tab's own (chrome.debugger attached
  /// once), or one more on the same debuggee (evaluate's lane).
  async attach(targetId) {
    const tab = this.byTarget(targetId);
    if (!tab) throw new Refusal("cdp_error", "No target with given id found", { cdp_code: -32602 });
    if (!tab.attached) {
      await this.debuggerAttach(tab.tabId);
      tab.attached = true;
      this.persist();
    }
    const sessionId = `tab-${tab.tabId}-${++this.counter}`;
    const alias = !!tab.session;
    this.sessions.set(sessionId, { tabId: tab.tabId, child: null, alias });
    if (!alias) tab.session = sessionId;
    const info = await this.targetInfo(tab);
    this.emit("Target.attachedToTarget", { sessionId, targetInfo: { ...info, attached: true }, waitingForDebugger: false });
    return { sessionId };
  }

  async debuggerAttach(tabId) {
    try {
      await chrome.debugger.attach({ tabId }, "1.3");
    } catch (e) {
      const message = String(e.message || e);
      if (/already attached/i.test(message)) {
        // Still ours from before a service worker restart: start afresh,
        // so no domain stays enabled for a session that is gone.
        await chrome.debugger.detach({ tabId }).catch(() => {});
        try {
          await chrome.debugger.attach({ tabId }, "1.3");
          return;
        } catch (again) {
          throw new Refusal("cdp_error", `chrome.debugger.attach refused: ${again.message || again} (another debugger, such as DevTools, may be attached to the tab)`, { cdp_code: -32000 });
        }
      }
      throw new Refusal("cdp_error", `chrome.debugger.attach refused: ${message}`, { cdp_code: -32000 });
    }
  }

  async detachSession(sessionId) {
    const session = this.sessions.get(sessionId);
    if (!session) return;
    this.sessions.delete(sessionId);
    const tab = this.tabs.get(session.tabId);
    if (session.child) {
      await chrome.debugger.sendCommand({ tabId: session.tabId }, "Target.detachFromTarget", { sessionId: session.child }).catch(() => {});
    } else if (!session.alias && tab) {
      tab.session = null;
    }
    this.emit("Target.detachedFromTarget", { sessionId, targetId: tab?.targetId });
  }

  /// Closes a context's tabs and forgets it.
  async closeContext(id) {
    const ids = [...this.tabs.values()].filter((t) => t.context === id).map((t) => t.tabId);
    for (const tabId of ids) {
      await chrome.debugger.detach({ tabId }).catch(() => {});
      await chrome.tabs.remove(tabId).catch(() => {});
      this.forgetTab(tabId);
    }
    this.contexts.delete(id);
    chrome.alarms.clear(`ttl:${id}`);
    this.persist();
  }

  forgetTab(tabId) {
    const tab = this.tabs.get(tabId);
    if (!tab) return;
    this.tabs.delete(tabId);
    this.holdRules();
    for (const [id, s] of this.sessions) {
      if (s.tabId === tabId) {
        this.sessions.delete(id);
        if (!s.child) this.emit("Target.detachedFromTarget", { sessionId: id, targetId: tab.targetId });
      }
    }
    this.emit("Target.targetDestroyed", { targetId: tab.targetId });
    this.persist();
  }

  /// Stops the script running in `debuggee`. Through chrome.debugger,
  /// `Runtime.terminateExecution` is refused ("not allowed for untrusted
  /// clients", Chromium 156) and so is `Runtime.evaluate`'s `timeout`; a
  /// pause does reach a busy page (it interrupts the script), and resuming
  /// with `terminateOnResume` ends it. With nothing running, the pause is
  /// dropped by disabling the debugger again.
  async terminate(debuggee, tab) {
    const key = JSON.stringify(debuggee);
    tab.terminating = (tab.terminating || 0) + 1;
    try {
      const paused = new Promise((resolve) => {
        this.pausedWaiters.set(key, resolve);
        setTimeout(() => resolve(false), 2000);
      });
      await chrome.debugger.sendCommand(debuggee, "Debugger.pause", {});
      if (await paused) {
        await chrome.debugger.sendCommand(debuggee, "Debugger.resume", { terminateOnResume: true });
      } else {
        // Nothing was running: drop the pending pause.
        await chrome.debugger.sendCommand(debuggee, "Debugger.resume", {}).catch(() => {});
      }
      return {};
    } catch (e) {
      throw new Refusal("cdp_error", String(e.message || e), { cdp_code: -32000 });
    } finally {
      this.pausedWaiters.delete(key);
      tab.terminating -= 1;
    }
  }

  /// The Debugger domain on (a pause needs it, and enabling it needs the
  /// page's main thread, so it cannot wait until a script runs away), with
  /// the page's own `debugger;` statements and breakpoints inactive.
  async prepareTermination(debuggee) {
    await chrome.debugger.sendCommand(debuggee, "Debugger.enable", {});
    await chrome.debugger.sendCommand(debuggee, "Debugger.setBreakpointsActive", { active: false });
  }

  // ---- what Chrome says ----

  /// An event of a debuggee: routed to the session it belongs to (the
  /// tab's own, or a frame's child session).
  onDebuggerEvent(source, method, params) {
    const tab = this.tabs.get(source.tabId);
    if (!tab) return;
    if (method === "Target.attachedToTarget" && params.sessionId) {
      this.sessions.set(params.sessionId, { tabId: tab.tabId, child: params.sessionId, alias: false, url: params.targetInfo?.url || "" });
    } else if (method === "Target.targetInfoChanged" && source.sessionId && this.sessions.has(source.sessionId)) {
      this.sessions.get(source.sessionId).url = params.targetInfo?.url || "";
    } else if (method === "Target.detachedFromTarget" && params.sessionId) {
      this.sessions.delete(params.sessionId);
    }
    if (method.startsWith("Debugger.") && !tab.engineDebugger) {
      // Our own pause to stop a script: not the engine's business.
      if (method === "Debugger.paused") {
        const key = JSON.stringify(source.sessionId ? { tabId: tab.tabId, sessionId: source.sessionId } : { tabId: tab.tabId });
        this.pausedWaiters.get(key)?.(true);
      }
      return;
    }
    const sessionId = source.sessionId || tab.session;
    if (!sessionId) return;
    this.emit(method, params, sessionId);
  }

  /// chrome.debugger let go of a tab: the user pressed Cancel on the
  /// debugger bar (`canceled_by_user`), the tab closed, or Chrome did.
  onDebuggerDetach(source, reason) {
    const tab = this.tabs.get(source.tabId);
    if (!tab) return null;
    tab.attached = false;
    for (const [id, s] of this.sessions) {
      if (s.tabId === tab.tabId) {
        this.sessions.delete(id);
        if (!s.child) this.emit("Target.detachedFromTarget", { sessionId: id, targetId: tab.targetId });
      }
    }
    tab.session = null;
    this.persist();
    return reason === "canceled_by_user" ? tab.context : null;
  }

  onTabUpdated(tabId, change) {
    const tab = this.tabs.get(tabId);
    if (!tab) return;
    if (change.url) tab.url = change.url;
    this.targetInfo(tab).then((info) => info && this.emit("Target.targetInfoChanged", { targetInfo: info }));
  }

  onTabRemoved(tabId) {
    if (this.tabs.has(tabId)) this.forgetTab(tabId);
  }

  /// A tab one of the agent's tabs opened (a popup, target=_blank) is the
  /// agent's too, in the same context.
  async onTabCreated(chromeTab) {
    const opener = chromeTab.openerTabId !== undefined && this.tabs.get(chromeTab.openerTabId);
    if (!opener || this.tabs.has(chromeTab.id)) return;
    // The rule first, before anything is awaited: the popup's own
    // requests are the agent's.
    const ruled = holdForTabs([...this.tabs.keys(), chromeTab.id]);
    const targetId = await this.targetIdOf(chromeTab.id);
    if (!targetId) return;
    const tab = { tabId: chromeTab.id, targetId, context: opener.context, session: null, attached: false, url: chromeTab.pendingUrl || chromeTab.url || "" };
    this.tabs.set(chromeTab.id, tab);
    this.persist();
    await ruled;
    await this.holdRules();
    const info = await this.targetInfo(tab);
    if (info) this.emit("Target.targetCreated", { targetInfo: info });
  }
}

/// A session's lifetime without an action (chrome.alarms), in minutes:
/// 15 unless `ttl_minutes` in chrome.storage.local says otherwise.
let ttl = 15;

export function ttlMinutes() {
  return ttl;
}

export function setTtlMinutes(minutes) {
  ttl = Number(minutes) > 0 ? Number(minutes) : 15;
}
