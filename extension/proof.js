// The relay handshake's cryptography, with WebCrypto: the same figures as
// the server's `crates/server/src/serve/extension_proof.rs`
// (docs/src/spec/protocol.md, "Relay handshake").
//
// key    = SHA-256(secret)          (secret: the token, or a pairing code)
// key id = hex(SHA-256("cdpilot relay key id\n" ‖ key))[0..32]
// proof  = hex(HMAC-SHA256(key, "cdpilot relay 2 <role>\n<server>\n<extension nonce>\n<server nonce>"))
//
// Pure functions; owns nothing.

const encoder = new TextEncoder();

function hex(bytes) {
  return [...new Uint8Array(bytes)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/// The key of a secret (bytes).
export async function keyOf(secret) {
  return new Uint8Array(await crypto.subtle.digest("SHA-256", encoder.encode(String(secret))));
}

/// The name of a key the server looks it up by; tells nothing of the key.
export async function keyId(key) {
  const label = encoder.encode("cdpilot relay key id\n");
  const data = new Uint8Array(label.length + key.length);
  data.set(label);
  data.set(key, label.length);
  return hex(await crypto.subtle.digest("SHA-256", data)).slice(0, 32);
}

/// 32 random bytes, hex.
export function nonce() {
  return hex(crypto.getRandomValues(new Uint8Array(32)));
}

/// `role`'s proof ("server" or "extension") for one handshake.
export async function proof(key, role, server, extensionNonce, serverNonce) {
  const hmac = await crypto.subtle.importKey("raw", key, { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  const text = `cdpilot relay 2 ${role}\n${server}\n${extensionNonce}\n${serverNonce}`;
  return hex(await crypto.subtle.sign("HMAC", hmac, encoder.encode(text)));
}

/// Whether two hex strings are equal, in time that does not depend on
/// where they differ.
export function sameHex(a, b) {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}
