//! The relay handshake's cryptography (`docs/src/spec/protocol.md`,
//! "Relay handshake"): both ends prove they hold the pairing secret
//! without sending it.
//!
//! The secret is the extension token a pairing handed out (or, while
//! pairing, the one-time code). Its key is `K = SHA-256(secret)` (what
//! `extension-tokens` keeps, so pairings made before the handshake still
//! work); the extension names which key it holds by
//! `key_id = hex(SHA-256("cdpilot relay key id\n" ‖ K))[..32]`, which
//! tells nothing of K. Each side's proof is
//! `HMAC-SHA256(K, "cdpilot relay 2 <role>\n<server>\n<extension nonce>\n<server nonce>")`,
//! `role` being `server` or `extension` and `server` the address the
//! extension dialled (`ws://127.0.0.1:PORT`, as the pairing link says): a
//! proof answers one pair of fresh nonces, for one role and one address,
//! so it cannot be replayed, reflected, or relayed from another port.
//! `extension/relay.js` computes the same with WebCrypto.
//!
//! Pure functions; owns nothing.

use hmac::{Hmac, KeyInit, Mac};
use sha2::{Digest, Sha256};

/// The relay handshake's version (`hello.protocol_version`).
pub const RELAY_VERSION: u64 = 2;

/// A pairing key: `SHA-256(secret)`.
pub type Key = [u8; 32];

/// Which end a proof is from.
#[derive(Clone, Copy)]
pub enum Role {
    Server,
    Extension,
}

impl Role {
    fn name(self) -> &'static str {
        match self {
            Role::Server => "server",
            Role::Extension => "extension",
        }
    }
}

/// The key of a secret (an extension token or a pairing code).
pub fn key_of(secret: &str) -> Key {
    Sha256::digest(secret.as_bytes()).into()
}

/// The key from its hex form (a line of `extension-tokens`).
pub fn key_from_hex(hex: &str) -> Option<Key> {
    let bytes = decode_hex(hex)?;
    bytes.try_into().ok()
}

/// The name the extension gives its key in `hello`.
pub fn key_id(key: &Key) -> String {
    let mut digest = Sha256::new();
    digest.update(b"cdpilot relay key id\n");
    digest.update(key);
    encode_hex(&digest.finalize()[..16])
}

/// `role`'s proof (hex) for this handshake.
pub fn proof(key: &Key, role: Role, server: &str, extension_nonce: &str, server_nonce: &str) -> String {
    encode_hex(
        &mac(key, role, server, extension_nonce, server_nonce)
            .finalize()
            .into_bytes(),
    )
}

/// Whether `claimed` (hex) is `role`'s proof for this handshake, compared
/// in constant time.
pub fn verify(
    key: &Key,
    role: Role,
    server: &str,
    extension_nonce: &str,
    server_nonce: &str,
    claimed: &str,
) -> bool {
    let Some(claimed) = decode_hex(claimed) else {
        return false;
    };
    mac(key, role, server, extension_nonce, server_nonce)
        .verify_slice(&claimed)
        .is_ok()
}

/// A nonce is 32 bytes of randomness in lowercase hex.
pub fn nonce_well_formed(nonce: &str) -> bool {
    nonce.len() == 64 && nonce.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

fn mac(key: &Key, role: Role, server: &str, extension_nonce: &str, server_nonce: &str) -> Hmac<Sha256> {
    let mut mac = <Hmac<Sha256> as KeyInit>::new_from_slice(key).expect("HMAC takes any key length");
    mac.update(
        format!(
            "cdpilot relay {RELAY_VERSION} {}\n{server}\n{extension_nonce}\n{server_nonce}",
            role.name()
        )
        .as_bytes(),
    );
    mac
}

pub fn encode_hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn decode_hex(hex: &str) -> Option<Vec<u8>> {
    if !hex.len().is_multiple_of(2) {
        return None;
    }
    (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(hex.get(i..i + 2)?, 16).ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_proof_holds_for_its_role_address_and_nonces_only() {
        let key = key_of("token");
        let (e, s) = ("a".repeat(64), "b".repeat(64));
        let server = "ws://127.0.0.1:9";
        let p = proof(&key, Role::Server, server, &e, &s);
        assert!(verify(&key, Role::Server, server, &e, &s, &p));
        assert!(!verify(&key, Role::Extension, server, &e, &s, &p), "reflected");
        assert!(
            !verify(&key, Role::Server, "ws://127.0.0.1:10", &e, &s, &p),
            "relayed"
        );
        assert!(!verify(&key, Role::Server, server, &s, &e, &p), "other nonces");
        assert!(
            !verify(&key_of("other"), Role::Server, server, &e, &s, &p),
            "other key"
        );
        assert!(!verify(&key, Role::Server, server, &e, &s, "zz"));
        assert_eq!(key_from_hex(&encode_hex(&key)), Some(key));
        assert_eq!(key_id(&key).len(), 32);
        assert!(nonce_well_formed(&e) && !nonce_well_formed("A") && !nonce_well_formed(&"g".repeat(64)));
    }

    /// The figures `extension/proof.js` gives with WebCrypto (run under
    /// node 20 with the same inputs; Python's hmac agrees): the two
    /// implementations are one handshake.
    #[test]
    fn known_answers_shared_with_the_extension() {
        let key = key_of("secret");
        assert_eq!(
            encode_hex(&key),
            "2bb80d537b1da3e38bd30361aa855686bde0eacd7162fef6a25fe97bf527a25b"
        );
        assert_eq!(key_id(&key), "17ac24f92d9922689fbd8075d049aa23");
        let (e, s) = ("a".repeat(64), "b".repeat(64));
        assert_eq!(
            proof(&key, Role::Server, "ws://127.0.0.1:9", &e, &s),
            "faa5d7e7b35c1939a833314fb9d349dcfc57ca52d83e8e085d1fab61df55302c"
        );
        assert_eq!(
            proof(&key, Role::Extension, "ws://127.0.0.1:9", &e, &s),
            "e29302f81397011b96c20801074919c21e2731a7ea9b5cf448232769a5a2fca1"
        );
    }
}
