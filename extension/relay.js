// The relay's socket to cdpilot serve (`/v1/extension`): the versioned
// envelope (hello / ack / reject with client "extension"), the heartbeat a
// service worker's lifetime needs, and reconnecting with backoff.
//
// Owns the WebSocket and the stored pairing (server + long-lived token in
// chrome.storage.local). Knows nothing of CDP: messages it cannot handle go
// to `onMessage`.

export const PROTOCOL_VERSION = 1;
/// A WebSocket message every 20 s keeps the service worker alive
/// (Chrome 116+) and tells the server the relay is still there.
const HEARTBEAT_MS = 20000;
const BACKOFF_MS = [250, 500, 1000, 2000, 4000];

/// Whether `server` (ws://host:port) is a loopback address.
export function isLoopback(server) {
  try {
    const url = new URL(server);
    return ["127.0.0.1", "localhost", "[::1]"].includes(url.hostname) && url.protocol === "ws:";
  } catch (e) {
    return false;
  }
}

/// A server address is accepted when it is loopback, or exactly the one
/// the user typed in the options page.
export async function serverAllowed(server) {
  if (isLoopback(server)) return true;
  const { allowedServer } = await chrome.storage.local.get("allowedServer");
  return !!allowedServer && allowedServer === server;
}

export class Relay {
  constructor(onMessage, onConnected) {
    this.onMessage = onMessage;
    this.onConnected = onConnected;
    this.socket = null;
    this.connected = false;
    this.attempt = 0;
    this.retry = null;
    this.heartbeat = null;
    this.lastError = "";
  }

  /// Sends one envelope message when connected (dropped otherwise: the
  /// server's connection to the engine failed its pending commands).
  send(message) {
    if (this.socket && this.connected) this.socket.send(JSON.stringify(message));
  }

  /// Connects with the stored pairing, unless connected or connecting.
  async start() {
    if (this.socket) return;
    const { server, token } = await chrome.storage.local.get(["server", "token"]);
    if (!server || !token) return;
    if (!(await serverAllowed(server))) {
      this.lastError = `${server} is not a loopback address; type it in the options page to allow it`;
      return;
    }
    this.open(server, { token }).catch(() => {});
  }

  /// Pairs with a one-time code: resolves with the stored pairing, or
  /// rejects with the server's reason.
  async pair(server, code) {
    if (!(await serverAllowed(server))) {
      throw new Error(`${server} is not a loopback address: type it in the options page first if you trust it`);
    }
    this.stop();
    const ack = await this.open(server, { code });
    await chrome.storage.local.set({ server, token: ack.token });
    return { server };
  }

  /// Forgets the pairing and closes the socket.
  async unpair() {
    await chrome.storage.local.remove(["server", "token"]);
    this.stop();
  }

  stop() {
    clearTimeout(this.retry);
    this.retry = null;
    const socket = this.socket;
    this.socket = null;
    this.connected = false;
    if (socket) {
      socket.onclose = null;
      socket.close();
    }
  }

  /// Opens the socket and says hello; resolves with the ack.
  open(server, credentials) {
    return new Promise((resolve, reject) => {
      let socket;
      try {
        socket = new WebSocket(server.replace(/\/+$/, "") + "/v1/extension");
      } catch (e) {
        this.lastError = String(e);
        reject(e);
        return;
      }
      this.socket = socket;
      let acked = false;
      socket.onopen = () => {
        socket.send(JSON.stringify({
          type: "hello",
          protocol_version: PROTOCOL_VERSION,
          client: "extension",
          extension_version: chrome.runtime.getManifest().version,
          ...credentials,
        }));
      };
      socket.onmessage = (event) => {
        let message;
        try {
          message = JSON.parse(event.data);
        } catch (e) {
          return;
        }
        if (!acked) {
          if (message.type === "ack") {
            acked = true;
            this.connected = true;
            this.attempt = 0;
            this.lastError = "";
            clearInterval(this.heartbeat);
            this.heartbeat = setInterval(() => this.send({ type: "ping" }), HEARTBEAT_MS);
            this.onConnected();
            resolve(message);
          } else if (message.type === "reject") {
            this.lastError = `${message.reason}: ${message.message}`;
            if (message.reason === "bad_token" && credentials.token) {
              // The server no longer knows this token: pair again.
              chrome.storage.local.remove(["token"]);
            }
            reject(new Error(this.lastError));
          }
          return;
        }
        if (message.type === "pong") return;
        this.onMessage(message);
      };
      socket.onclose = () => {
        clearInterval(this.heartbeat);
        const wasConnected = this.connected;
        this.connected = false;
        if (wasConnected && this.onDisconnected) this.onDisconnected();
        if (this.socket === socket) this.socket = null;
        if (!acked) {
          if (!this.lastError) this.lastError = `cannot reach ${server}`;
          reject(new Error(this.lastError));
        }
        if (wasConnected || credentials.token) this.scheduleReconnect();
      };
    });
  }

  scheduleReconnect() {
    if (this.retry) return;
    const delay = BACKOFF_MS[Math.min(this.attempt, BACKOFF_MS.length - 1)];
    this.attempt += 1;
    this.retry = setTimeout(() => {
      this.retry = null;
      this.start();
    }, delay);
  }
}
