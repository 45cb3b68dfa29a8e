//! The token format: `sluice2.<uid>.<gid>.<issued>.<nonce>.<method>.<digest>.<mac>`.
//!
//! A token is good for one request only: it names the RPC method (the request's path,
//! `/sluice.v1.Controller/SubmitJob`), the SHA-256 of the request's body as sent on the wire
//! (the encoded protobuf message in its gRPC frame) and a random nonce the servers remember
//! while the token is fresh ([`super::replay`]). The MAC is HMAC-SHA256 under the key over
//! everything before it, in hex. The method is the only field that may contain dots, so the
//! token is split from the left for the fixed fields and from the right for the digest and MAC.

use hmac::Mac;

use super::{AuthError, Key};

/// What every token starts with: its format (a new format gets a new prefix).
pub const TOKEN_PREFIX: &str = "sluice2";
/// The length of a nonce in hex (128 random bits).
const NONCE_HEX: usize = 32;
/// The length of a SHA-256 digest in hex.
const DIGEST_HEX: usize = 64;

/// What a request's token binds it to: its method and the digest of its body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Binding {
    /// The gRPC path, `/<package>.<Service>/<Method>`.
    pub method: String,
    /// SHA-256 of the request body, in hex ([`body_digest`]).
    pub digest: String,
}

impl Binding {
    /// The binding of a request to `method` whose body is `body`.
    pub fn new(method: &str, body: &[u8]) -> Self {
        Self {
            method: method.to_string(),
            digest: body_digest(body),
        }
    }

    /// Checks that the fields could be carried in a token (the credential service checks what
    /// clients send it).
    pub fn validate(&self) -> Result<(), AuthError> {
        let bad = |why: &str| AuthError::BadSignature(why.to_string());
        if !self.method.starts_with('/')
            || !self.method.bytes().all(|b| b.is_ascii_graphic())
            || self.method.len() > 256
        {
            return Err(bad("malformed method"));
        }
        if !is_hex(&self.digest, DIGEST_HEX) {
            return Err(bad("malformed digest"));
        }
        Ok(())
    }
}

/// SHA-256 of a request body, in hex.
pub fn body_digest(body: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    to_hex(&Sha256::digest(body))
}

/// A fresh random nonce, in hex: 128 bits from the kernel. (Not `rand`'s thread generator,
/// whose first use probes the CPU's features, a dozen `cpuid` instructions that each trap to
/// the hypervisor on a virtual machine: more than the whole signing costs a one-shot command.)
pub fn new_nonce() -> String {
    let mut bytes = [0u8; NONCE_HEX / 2];
    if getrandom::fill(&mut bytes).is_err() {
        // The kernel's generator does not fail once booted; the fallback is as random.
        bytes = rand::random();
    }
    to_hex(&bytes)
}

/// `bytes` in lowercase hex (`hex::encode` builds the string a `char` at a time: this is the
/// same text, written into a buffer of the right size).
pub(crate) fn to_hex(bytes: &[u8]) -> String {
    let mut out = vec![0u8; bytes.len() * 2];
    hex::encode_to_slice(bytes, &mut out).expect("the buffer is twice the input's length");
    String::from_utf8(out).expect("hex digits are ASCII")
}

/// Whether `s` is `len` lowercase hex digits.
pub fn is_hex(s: &str, len: usize) -> bool {
    s.len() == len && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// Whether `s` is a well-formed nonce.
pub fn is_nonce(s: &str) -> bool {
    is_hex(s, NONCE_HEX)
}

/// What a token says, once its MAC is checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Claims {
    pub uid: u32,
    pub gid: u32,
    /// Unix time of issue.
    pub issued: i64,
    /// 128 random bits in hex: what the replay caches remember.
    pub nonce: String,
    pub binding: Binding,
}

impl Key {
    /// The token carrying `claims`.
    pub fn sign(&self, claims: &Claims) -> String {
        let Claims {
            uid,
            gid,
            issued,
            nonce,
            binding,
        } = claims;
        let text = format!(
            "{TOKEN_PREFIX}.{uid}.{gid}.{issued}.{nonce}.{}.{}",
            binding.method, binding.digest
        );
        let mac = to_hex(&self.mac(&text).finalize().into_bytes());
        format!("{text}.{mac}")
    }

    /// Checks a token's MAC and reads its claims (freshness and binding are the verifier's).
    pub fn open(&self, token: &str) -> Result<Claims, AuthError> {
        let bad = |why: &str| AuthError::BadSignature(why.to_string());
        let (text, mac_hex) = token
            .rsplit_once('.')
            .ok_or_else(|| bad("malformed token"))?;
        let mut mac = [0u8; DIGEST_HEX / 2];
        hex::decode_to_slice(mac_hex, &mut mac).map_err(|_| bad("malformed token"))?;
        // Constant-time comparison of the MAC before anything in the claims is believed.
        self.mac(text)
            .verify_slice(&mac)
            .map_err(|_| bad("signature does not match"))?;
        let mut fixed = text.splitn(6, '.');
        let (Some(TOKEN_PREFIX), Some(uid), Some(gid), Some(issued), Some(nonce), Some(rest)) = (
            fixed.next(),
            fixed.next(),
            fixed.next(),
            fixed.next(),
            fixed.next(),
            fixed.next(),
        ) else {
            return Err(bad("malformed token"));
        };
        let (method, digest) = rest
            .rsplit_once('.')
            .ok_or_else(|| bad("malformed token"))?;
        let binding = Binding {
            method: method.to_string(),
            digest: digest.to_string(),
        };
        binding.validate()?;
        if !is_nonce(nonce) {
            return Err(bad("malformed nonce"));
        }
        Ok(Claims {
            uid: uid.parse().map_err(|_| bad("malformed uid"))?,
            gid: gid.parse().map_err(|_| bad("malformed gid"))?,
            issued: issued.parse().map_err(|_| bad("malformed issue time"))?,
            nonce: nonce.to_string(),
            binding,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn claims() -> Claims {
        Claims {
            uid: 1000,
            gid: 100,
            issued: 5_000,
            nonce: new_nonce(),
            binding: Binding::new("/sluice.v1.Controller/SubmitJob", b"body"),
        }
    }

    #[test]
    fn tokens_carry_their_claims_and_the_method_may_contain_dots() {
        let k = Key::from_bytes(vec![1; 64]);
        let c = claims();
        let token = k.sign(&c);
        assert!(token.starts_with("sluice2.1000.100.5000."), "{token}");
        assert_eq!(k.open(&token).unwrap(), c);
    }

    #[test]
    fn a_changed_field_or_another_key_breaks_the_token() {
        let k = Key::from_bytes(vec![1; 64]);
        let c = claims();
        let token = k.sign(&c);
        assert!(Key::from_bytes(vec![2; 64]).open(&token).is_err());
        for (from, to) in [
            (".1000.", ".0."),
            (".100.", ".0."),
            ("SubmitJob", "CancelJob"),
            (&c.nonce[..], &new_nonce()[..]),
            (&c.binding.digest[..], &body_digest(b"other")[..]),
        ] {
            let changed = token.replacen(from, to, 1);
            assert_ne!(changed, token);
            assert!(
                matches!(k.open(&changed), Err(AuthError::BadSignature(_))),
                "{from} -> {to} accepted"
            );
        }
    }

    #[test]
    fn well_signed_but_malformed_claims_are_refused() {
        let k = Key::from_bytes(vec![1; 64]);
        let n = new_nonce();
        let d = body_digest(b"");
        for text in [
            format!("sluice1.1.1.1.{n}./a/b.{d}"),
            format!("sluice2.x.1.1.{n}./a/b.{d}"),
            format!("sluice2.1.x.1.{n}./a/b.{d}"),
            format!("sluice2.1.1.y.{n}./a/b.{d}"),
            format!("sluice2.1.1.1.short./a/b.{d}"),
            format!("sluice2.1.1.1.{n}.a/b.{d}"),
            format!("sluice2.1.1.1.{n}./a/b.abc"),
            format!("sluice2.1.1.1.{n}./a/b"),
            "sluice2".to_string(),
        ] {
            let mac = hex::encode(k.mac(&text).finalize().into_bytes());
            assert!(k.open(&format!("{text}.{mac}")).is_err(), "{text}");
        }
        for bad in ["", ".", "not.a.token", "sluice2.1.1.1.zz"] {
            assert!(k.open(bad).is_err(), "{bad:?}");
        }
    }
}
