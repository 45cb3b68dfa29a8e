//! The token format: `sluice3.<uid>.<gid>.<issued>.<nonce>.<method>.<hint>.<mac>`.
//!
//! A token is good for one request only: it names the RPC method (the request's path,
//! `/sluice.v1.Controller/SubmitJob`) and a random nonce the servers remember while the token is
//! fresh ([`super::replay`]), and its MAC covers the SHA-256 of the request's body as sent on the
//! wire (the encoded protobuf message in its gRPC frame). The MAC is HMAC-SHA256 under the key
//! over everything before it, a `.` and the 32 bytes of the body's digest.
//!
//! The digest itself does not travel: the server digests the body it received and checks the
//! MAC over that, so a token for another body fails like a forged one. Only its first bytes go
//! along (`hint`), so that such a token is refused as "issued for another request body" rather
//! than as badly signed; the hint is a diagnosis, never believed for admission. Nonce, hint and
//! MAC are base64url without padding (the token is ~135 characters where hex made it ~225: less
//! for HTTP/2 to Huffman-code, send and decode on every request).
//!
//! The method is the only field that may contain dots, so the token is split from the left for
//! the fixed fields and from the right for the hint and MAC.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64;
use hmac::Mac;
use sha2::{Digest as _, Sha256};

use super::{AuthError, Key};

/// What every token starts with: its format (a new format gets a new prefix).
pub const TOKEN_PREFIX: &str = "sluice3";
/// A nonce's bytes (128 random bits).
const NONCE_BYTES: usize = 16;
/// A nonce in base64url (in tokens).
const NONCE_B64: usize = 22;
/// A nonce in hex (the credential service's requests, MUNGE payloads).
const NONCE_HEX: usize = 32;
/// A body digest in hex (ditto).
const DIGEST_HEX: usize = 64;
/// How many of the digest's bytes travel in a token (the hint): enough that another body's
/// digest differs in them but for a chance of 2^-48.
const HINT_BYTES: usize = 6;
/// The hint in base64url.
const HINT_B64: usize = 8;
/// The MAC in base64url.
const MAC_B64: usize = 43;

/// The SHA-256 of a request body (as sent on the wire).
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct BodyDigest(pub [u8; 32]);

impl BodyDigest {
    /// The digest of `body`.
    pub fn of(body: &[u8]) -> Self {
        Self(Sha256::digest(body).into())
    }

    /// In lowercase hex (the credential service's requests, MUNGE payloads).
    pub fn to_hex(&self) -> String {
        to_hex(&self.0)
    }

    /// From 64 lowercase hex digits.
    pub fn from_hex(s: &str) -> Option<Self> {
        let mut bytes = [0u8; 32];
        if is_hex(s, DIGEST_HEX) && hex::decode_to_slice(s, &mut bytes).is_ok() {
            Some(Self(bytes))
        } else {
            None
        }
    }

    /// The bytes of the digest a token carries.
    fn hint(&self) -> &[u8] {
        &self.0[..HINT_BYTES]
    }
}

impl std::fmt::Debug for BodyDigest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "BodyDigest({})", self.to_hex())
    }
}

/// 128 random bits naming one request: what the replay caches remember.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Nonce(pub [u8; NONCE_BYTES]);

impl Nonce {
    /// The nonce as one integer (the replay caches' key).
    pub fn bits(&self) -> u128 {
        u128::from_be_bytes(self.0)
    }

    /// In lowercase hex (the credential service's requests, MUNGE payloads).
    pub fn to_hex(&self) -> String {
        to_hex(&self.0)
    }

    /// From 32 lowercase hex digits.
    pub fn from_hex(s: &str) -> Option<Self> {
        let mut bytes = [0u8; NONCE_BYTES];
        if is_hex(s, NONCE_HEX) && hex::decode_to_slice(s, &mut bytes).is_ok() {
            Some(Self(bytes))
        } else {
            None
        }
    }
}

impl std::fmt::Debug for Nonce {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Nonce({})", self.to_hex())
    }
}

/// What a request's token binds it to: its method and the digest of its body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Binding {
    /// The gRPC path, `/<package>.<Service>/<Method>`.
    pub method: String,
    /// SHA-256 of the request body.
    pub digest: BodyDigest,
}

impl Binding {
    /// The binding of a request to `method` whose body is `body`.
    pub fn new(method: &str, body: &[u8]) -> Self {
        Self {
            method: method.to_string(),
            digest: BodyDigest::of(body),
        }
    }

    /// Checks that the method could be carried in a token (the credential service checks what
    /// clients send it).
    pub fn validate(&self) -> Result<(), AuthError> {
        validate_method(&self.method)
    }
}

fn validate_method(method: &str) -> Result<(), AuthError> {
    if !method.starts_with('/')
        || !method.bytes().all(|b| b.is_ascii_graphic())
        || method.len() > 256
    {
        return Err(AuthError::BadSignature("malformed method".to_string()));
    }
    Ok(())
}

/// SHA-256 of a request body, in hex.
pub fn body_digest(body: &[u8]) -> String {
    BodyDigest::of(body).to_hex()
}

/// A fresh random nonce: 128 bits from the kernel. (Not `rand`'s thread generator, whose first
/// use probes the CPU's features, a dozen `cpuid` instructions that each trap to the hypervisor
/// on a virtual machine: more than the whole signing costs a one-shot command.)
pub fn new_nonce() -> Nonce {
    let mut bytes = [0u8; NONCE_BYTES];
    if getrandom::fill(&mut bytes).is_err() {
        // The kernel's generator does not fail once booted; the fallback is as random.
        bytes = rand::random();
    }
    Nonce(bytes)
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

/// Whether `s` is a well-formed nonce in hex.
pub fn is_nonce(s: &str) -> bool {
    is_hex(s, NONCE_HEX)
}

/// What a token is signed to say.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Claims {
    pub uid: u32,
    pub gid: u32,
    /// Unix time of issue.
    pub issued: i64,
    pub nonce: Nonce,
    pub binding: Binding,
}

/// What a token says, once its MAC is checked against the body it came with; the method is
/// the token's own text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Opened<'t> {
    pub uid: u32,
    pub gid: u32,
    /// Unix time of issue.
    pub issued: i64,
    pub nonce: Nonce,
    /// The method the token was issued for (the verifier compares it with the request's).
    pub method: &'t str,
}

/// Appends `n` in decimal (what `format!` would write, without its machinery).
fn push_int(out: &mut String, n: i64) {
    if n < 0 {
        out.push('-');
    }
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    let mut v = n.unsigned_abs();
    loop {
        at -= 1;
        digits[at] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    out.push_str(std::str::from_utf8(&digits[at..]).expect("decimal digits are ASCII"));
}

impl Key {
    /// The token carrying `claims`.
    pub fn sign(&self, claims: &Claims) -> String {
        let mut out = String::with_capacity(96 + claims.binding.method.len());
        self.sign_into(claims, &mut out);
        out
    }

    /// Appends the token carrying `claims` to `out` (the signer writes it after the scheme).
    pub fn sign_into(&self, claims: &Claims, out: &mut String) {
        let start = out.len();
        out.push_str(TOKEN_PREFIX);
        out.push('.');
        push_int(out, i64::from(claims.uid));
        out.push('.');
        push_int(out, i64::from(claims.gid));
        out.push('.');
        push_int(out, claims.issued);
        out.push('.');
        B64.encode_string(claims.nonce.0, out);
        out.push('.');
        out.push_str(&claims.binding.method);
        out.push('.');
        B64.encode_string(claims.binding.digest.hint(), out);
        let tag = self.tag(&out[start..], &claims.binding.digest);
        out.push('.');
        B64.encode_string(tag, out);
    }

    /// The MAC of a token whose text before the MAC is `text`, for a body of digest `digest`.
    fn tag(&self, text: &str, digest: &BodyDigest) -> Hmac256 {
        let mut mac = self.mac(text);
        mac.update(b".");
        mac.update(&digest.0);
        mac.finalize().into_bytes()
    }

    /// Checks a token's MAC for a request whose body has digest `body`, and reads its claims
    /// (freshness and the method are the verifier's). A token whose MAC fails is refused as
    /// issued for another body when its hint says so, else as badly signed.
    pub fn open<'t>(&self, token: &'t str, body: &BodyDigest) -> Result<Opened<'t>, AuthError> {
        let bad = |why: &str| AuthError::BadSignature(why.to_string());
        let (text, mac_b64) = token
            .rsplit_once('.')
            .ok_or_else(|| bad("malformed token"))?;
        let mut mac = [0u8; 33];
        if mac_b64.len() != MAC_B64 || B64.decode_slice(mac_b64, &mut mac) != Ok(32) {
            return Err(bad("malformed token"));
        }
        let mut check = self.mac(text);
        check.update(b".");
        check.update(&body.0);
        // Constant-time comparison of the MAC before anything in the claims is believed.
        if check.verify_slice(&mac[..32]).is_err() {
            let mut hint = [0u8; HINT_BYTES];
            let other_body = text.rsplit_once('.').is_some_and(|(_, h)| {
                h.len() == HINT_B64
                    && B64.decode_slice(h, &mut hint) == Ok(HINT_BYTES)
                    && hint != body.hint()
            });
            return Err(if other_body {
                AuthError::OtherBody
            } else {
                bad("signature does not match")
            });
        }
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
        let (method, _hint) = rest
            .rsplit_once('.')
            .ok_or_else(|| bad("malformed token"))?;
        validate_method(method)?;
        let mut nonce_bytes = [0u8; 18];
        if nonce.len() != NONCE_B64 || B64.decode_slice(nonce, &mut nonce_bytes) != Ok(NONCE_BYTES)
        {
            return Err(bad("malformed nonce"));
        }
        let mut nonce = [0u8; NONCE_BYTES];
        nonce.copy_from_slice(&nonce_bytes[..NONCE_BYTES]);
        Ok(Opened {
            uid: uid.parse().map_err(|_| bad("malformed uid"))?,
            gid: gid.parse().map_err(|_| bad("malformed gid"))?,
            issued: issued.parse().map_err(|_| bad("malformed issue time"))?,
            nonce: Nonce(nonce),
            method,
        })
    }
}

type Hmac256 = hmac::digest::Output<hmac::Hmac<Sha256>>;

#[cfg(test)]
mod tests {
    use super::*;

    const SUBMIT: &str = "/sluice.v1.Controller/SubmitJob";

    fn claims() -> Claims {
        Claims {
            uid: 1000,
            gid: 100,
            issued: 5_000,
            nonce: new_nonce(),
            binding: Binding::new(SUBMIT, b"body"),
        }
    }

    fn opened(c: &Claims) -> Opened<'_> {
        Opened {
            uid: c.uid,
            gid: c.gid,
            issued: c.issued,
            nonce: c.nonce,
            method: &c.binding.method,
        }
    }

    #[test]
    fn tokens_carry_their_claims_and_the_method_may_contain_dots() {
        let k = Key::from_bytes(vec![1; 64]);
        let c = claims();
        let token = k.sign(&c);
        assert!(token.starts_with("sluice3.1000.100.5000."), "{token}");
        assert_eq!(k.open(&token, &c.binding.digest).unwrap(), opened(&c));
        let dotted = Claims {
            binding: Binding::new("/a.b.c/D", b"body"),
            ..c
        };
        let token = k.sign(&dotted);
        assert_eq!(
            k.open(&token, &dotted.binding.digest).unwrap(),
            opened(&dotted)
        );
    }

    #[test]
    fn the_digest_travels_as_a_hint_only_and_tokens_are_short() {
        let k = Key::from_bytes(vec![1; 64]);
        let c = claims();
        let token = k.sign(&c);
        assert!(!token.contains(&B64.encode(c.binding.digest.0)), "{token}");
        // prefix, uid, gid, issue time, nonce, then method, hint, MAC (the method has dots).
        let fields: Vec<&str> = token.splitn(6, '.').collect();
        assert_eq!(fields[4].len(), NONCE_B64, "{token}");
        let tail: Vec<&str> = fields[5].rsplitn(3, '.').collect();
        assert_eq!(tail[2], SUBMIT);
        assert_eq!(tail[1].len(), HINT_B64);
        assert_eq!(tail[0].len(), MAC_B64);
        assert!(token.len() < 140, "{} characters: {token}", token.len());
    }

    #[test]
    fn a_token_used_with_another_body_is_told_from_a_forged_one() {
        let k = Key::from_bytes(vec![1; 64]);
        let c = claims();
        let token = k.sign(&c);
        let other = BodyDigest::of(b"other body");
        assert!(matches!(k.open(&token, &other), Err(AuthError::OtherBody)));
        // The MAC covers the whole digest, not only the hint that travels: a body whose
        // digest shares the hint still fails, as badly signed.
        let mut same_hint = other;
        same_hint.0[..HINT_BYTES].copy_from_slice(c.binding.digest.hint());
        assert!(matches!(
            k.open(&token, &same_hint),
            Err(AuthError::BadSignature(why)) if why == "signature does not match"
        ));
        // Another key, with the right body: forged.
        assert!(matches!(
            Key::from_bytes(vec![2; 64]).open(&token, &c.binding.digest),
            Err(AuthError::BadSignature(why)) if why == "signature does not match"
        ));
    }

    #[test]
    fn a_changed_field_or_another_key_breaks_the_token() {
        let k = Key::from_bytes(vec![1; 64]);
        let c = claims();
        let token = k.sign(&c);
        let nonce = B64.encode(c.nonce.0);
        let other_nonce = B64.encode(new_nonce().0);
        for (from, to) in [
            (".1000.", ".0."),
            (".100.", ".0."),
            (".5000.", ".5001."),
            ("SubmitJob", "CancelJob"),
            (&nonce[..], &other_nonce[..]),
        ] {
            let changed = token.replacen(from, to, 1);
            assert_ne!(changed, token);
            assert!(
                matches!(
                    k.open(&changed, &c.binding.digest),
                    Err(AuthError::BadSignature(_))
                ),
                "{from} -> {to} accepted"
            );
        }
    }

    #[test]
    fn well_signed_but_malformed_claims_are_refused() {
        let k = Key::from_bytes(vec![1; 64]);
        let n = B64.encode(new_nonce().0);
        let d = BodyDigest::of(b"");
        let h = B64.encode(d.hint());
        for text in [
            format!("sluice2.1.1.1.{n}./a/b.{h}"),
            format!("sluice3.x.1.1.{n}./a/b.{h}"),
            format!("sluice3.1.x.1.{n}./a/b.{h}"),
            format!("sluice3.1.1.y.{n}./a/b.{h}"),
            format!("sluice3.1.1.1.short./a/b.{h}"),
            format!("sluice3.1.1.1.{n}.a/b.{h}"),
            format!("sluice3.1.1.1.{n}"),
            "sluice3".to_string(),
        ] {
            let tag = B64.encode(k.tag(&text, &d));
            assert!(k.open(&format!("{text}.{tag}"), &d).is_err(), "{text}");
        }
        for bad in ["", ".", "not.a.token", "sluice3.1.1.1.zz"] {
            assert!(k.open(bad, &d).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn decimal_fields_are_written_as_format_would() {
        for n in [0, 7, 10, 4_294_967_295, -1, -5_000, i64::MAX, i64::MIN] {
            let mut s = String::new();
            push_int(&mut s, n);
            assert_eq!(s, n.to_string());
        }
    }

    #[test]
    fn hex_forms_read_back() {
        let n = new_nonce();
        assert_eq!(Nonce::from_hex(&n.to_hex()), Some(n));
        let d = BodyDigest::of(b"x");
        assert_eq!(BodyDigest::from_hex(&d.to_hex()), Some(d));
        assert_eq!(d.to_hex(), body_digest(b"x"));
        assert_eq!(BodyDigest::from_hex("00"), None);
        assert_eq!(Nonce::from_hex(&"G".repeat(32)), None);
    }
}
