// The relay's socket to cdpilot serve (`/v1/extension`): the handshake in
// which both ends prove they hold the pairing secret and neither sends it
// (docs/src/spec/protocol.md, "Relay handshake"), the heartbeat a service
// worker's lifetime needs, and reconnecting with backoff.
//
// A handshake has a deadline (HANDSHAKE_MS, as the server's): a peer that
// accepts and never answers, or answers out of turn and keeps its TCP
// open, cannot stall the relay. A failed or timed-out socket is forgotten
// at once (its handlers detached, so its late `onclose` changes nothing)
// and a reconnect is scheduled; `start()` never waits on a dead socket.
//
// Owns the WebSocket and the stored pairing (server + long-lived token in
// chrome.storage.local). Knows nothing of CDP: after the server proved
// itself and acknowledged our proof, messages go to `onMessage`; before,
// nothing the peer says is obeyed.

import { keyOf, keyId, nonce, proof, sameHex } from "./proof.js";

export const PROTOCOL_VERSION = 2;
/// A WebSocket message every 20 s keeps the service worker alive
/// (Chrome 116+) and tells the server the relay is still there.
const HEARTBEAT_MS = 20000;
const BACKOFF_MS = [250, 500, 1000, 2000, 4000];
/// How long a handshake may take, from the socket's creation to the ack:
/// the server's own deadline.
export const HANDSHAKE_MS = 10000;

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
    this.open(server, token).catch(() => {});
  }

  /// Pairs with a one-time code: resolves with the stored pairing, or
  /// rejects with the server's reason. A server other than the one paired
  /// with is paired only when the person said so on the pairing page
  /// (`replace`): a link another program printed does not silently take
  /// the pairing over. A failed pairing leaves the stored one, reconnected.
  async pair(server, code, replace = false) {
    if (!(await serverAllowed(server))) {
      throw new Error(`${server} is not a loopback address: type it in the options page first if you trust it`);
    }
    const stored = await chrome.storage.local.get(["server", "token"]);
    if (stored.server && stored.token && stored.server !== server && !replace) {
      throw new Error(`this link pairs with ${server}, but the extension is paired with ${stored.server}: confirm on the pairing page to replace it`);
    }
    this.stop();
    let ack;
    try {
      ack = await this.open(server, code, true);
    } catch (e) {
      this.scheduleReconnect();
      throw e;
    }
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

  /// Opens the socket and runs the handshake with `secret` (the stored
  /// token, or a pairing code): resolves with the ack. The socket closes
  /// at the first message out of turn, and at a server that cannot prove
  /// it holds the secret (another program on the port): it learns a key
  /// id and a nonce, nothing else.
  open(server, secret, pairing = false) {
    const address = server.replace(/\/+$/, "");
    const reconnects = !pairing;
    return new Promise((resolve, reject) => {
      let socket;
      try {
        socket = new WebSocket(address + "/v1/extension");
      } catch (e) {
        this.lastError = String(e);
        reject(e);
        return;
      }
      this.socket = socket;
      // "hello" → "challenge" → "proved" (our proof sent) → "acked".
      let stage = "hello";
      let ours = "";
      const keyPromise = keyOf(secret);
      // The socket is forgotten at once: its closing handshake may never
      // end (a peer that keeps its TCP open), and `start()` must not wait
      // on it. Its handlers are detached, so nothing it does later counts.
      const forget = () => {
        clearTimeout(deadline);
        socket.onopen = socket.onmessage = socket.onclose = null;
        if (this.socket === socket) this.socket = null;
        // A page may close with 1000 or 3000–4999 only (1008 throws).
        try { socket.close(4008, "handshake"); } catch (e) { /* already closed */ }
        if (reconnects) this.scheduleReconnect();
      };
      const fail = (why) => {
        if (stage === "failed" || stage === "acked") return;
        this.lastError = why;
        stage = "failed";
        console.warn(`cdpilot relay: ${why}`);
        forget();
        reject(new Error(why));
      };
      const deadline = setTimeout(
        () => fail(`${address} did not finish the handshake within ${HANDSHAKE_MS / 1000} s: the connection was dropped (another program may hold the port)`),
        HANDSHAKE_MS,
      );
      socket.onopen = async () => {
        const key = await keyPromise;
        ours = nonce();
        socket.send(JSON.stringify({
          type: "hello",
          protocol_version: PROTOCOL_VERSION,
          client: "extension",
          extension_version: chrome.runtime.getManifest().version,
          key: await keyId(key),
          nonce: ours,
        }));
      };
      // Messages are handled one at a time, in order (the checks await
      // WebCrypto).
      let queue = Promise.resolve();
      socket.onmessage = (event) => {
        queue = queue.then(() => handle(event.data));
      };
      const handle = async (data) => {
        if (stage === "failed") return;
        let message;
        try {
          message = JSON.parse(data);
        } catch (e) {
          if (stage !== "acked") fail(`${address} sent something that is not JSON during the handshake`);
          return;
        }
        if (stage === "acked") {
          if (message.type === "pong") return;
          this.onMessage(message);
          return;
        }
        if (message.type === "reject") {
          // Unproved: never a reason to forget the pairing.
          fail(`${message.reason}: ${message.message}`);
          return;
        }
        if (stage === "hello" && message.type === "challenge") {
          const key = await keyPromise;
          const theirs = String(message.nonce || "");
          const expected = await proof(key, "server", address, ours, theirs);
          if (!/^[0-9a-f]{64}$/.test(theirs) || !sameHex(expected, String(message.proof || ""))) {
            fail(`the program at ${address} did not prove it holds the pairing: it is not the cdpilot you paired with (another program may have its port); nothing was sent to it`);
            return;
          }
          stage = "proved";
          socket.send(JSON.stringify({ type: "proof", proof: await proof(key, "extension", address, ours, theirs) }));
          return;
        }
        if (stage === "proved" && message.type === "ack") {
          clearTimeout(deadline);
          stage = "acked";
          this.connected = true;
          this.attempt = 0;
          this.lastError = "";
          clearInterval(this.heartbeat);
          this.heartbeat = setInterval(() => this.send({ type: "ping" }), HEARTBEAT_MS);
          this.onConnected();
          resolve(message);
          return;
        }
        fail(`${address} sent ${JSON.stringify(String(message.type))} out of turn in the handshake`);
      };
      socket.onclose = () => {
        clearTimeout(deadline);
        // A socket this relay no longer holds (replaced by a pairing,
        // stopped): its close is not the current connection's.
        if (this.socket !== socket) return;
        clearInterval(this.heartbeat);
        const wasConnected = this.connected;
        this.connected = false;
        if (wasConnected && this.onDisconnected) this.onDisconnected();
        if (this.socket === socket) this.socket = null;
        if (stage !== "acked" && stage !== "failed") {
          if (!this.lastError) this.lastError = `cannot reach ${address}`;
          reject(new Error(this.lastError));
        }
        if (wasConnected || reconnects) this.scheduleReconnect();
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
