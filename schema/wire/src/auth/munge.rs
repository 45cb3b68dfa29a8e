//! `AuthType=auth/munge`: credentials of the MUNGE daemon (`munged`) through libmunge. The
//! caller's uid and gid are what munged puts in the credential; munged refuses a credential it
//! decoded before (replay) or whose time-to-live is over, and the payload binds the request as
//! a token does (method, body digest, nonce; see [`super::token`]).
//!
//! The only unsafe code of the workspace: the FFI of `munge_encode`/`munge_decode`, each call
//! in one small function with its safety argument.
#![allow(unsafe_code)]

use std::ffi::{CStr, CString, c_char, c_int, c_void};
use std::path::{Path, PathBuf};

use super::AuthError;
use super::token::{Binding, BodyDigest, Nonce};

/// An opaque libmunge context.
#[repr(C)]
struct MungeCtx {
    _private: [u8; 0],
}

const MUNGE_OPT_SOCKET: c_int = 8;
const EMUNGE_SUCCESS: c_int = 0;
const EMUNGE_CRED_REPLAYED: c_int = 17;

// Linked by the build script (pkg-config's `munge`).
unsafe extern "C" {
    fn munge_ctx_create() -> *mut MungeCtx;
    fn munge_ctx_destroy(ctx: *mut MungeCtx);
    fn munge_ctx_set(ctx: *mut MungeCtx, opt: c_int, ...) -> c_int;
    fn munge_encode(
        cred: *mut *mut c_char,
        ctx: *mut MungeCtx,
        buf: *const c_void,
        len: c_int,
    ) -> c_int;
    fn munge_decode(
        cred: *const c_char,
        ctx: *mut MungeCtx,
        buf: *mut *mut c_void,
        len: *mut c_int,
        uid: *mut nix::libc::uid_t,
        gid: *mut nix::libc::gid_t,
    ) -> c_int;
    fn munge_strerror(e: c_int) -> *const c_char;
}

/// The payload's first word: a new format gets a new word.
const PAYLOAD_PREFIX: &str = "sluice-munge1";

/// Where munged listens (`AuthInfo=socket=...`; `None`: libmunge's default).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Munge {
    pub socket: Option<PathBuf>,
}

/// What a decoded credential says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decoded {
    pub uid: u32,
    pub gid: u32,
    pub nonce: Nonce,
    pub binding: Binding,
}

/// A libmunge context, destroyed on drop.
struct Ctx(*mut MungeCtx);

impl Drop for Ctx {
    fn drop(&mut self) {
        // SAFETY: the pointer came from munge_ctx_create and is destroyed once, here.
        unsafe { munge_ctx_destroy(self.0) }
    }
}

fn munge_error(code: c_int) -> AuthError {
    // SAFETY: munge_strerror returns a pointer to a static string for any code.
    let text = unsafe { CStr::from_ptr(munge_strerror(code)) };
    let text = text.to_string_lossy().into_owned();
    if code == EMUNGE_CRED_REPLAYED {
        AuthError::Replayed
    } else {
        AuthError::Munge { why: text }
    }
}

impl Munge {
    fn ctx(&self) -> Result<Ctx, AuthError> {
        // SAFETY: munge_ctx_create has no preconditions; a null result is checked.
        let ctx = unsafe { munge_ctx_create() };
        if ctx.is_null() {
            return Err(AuthError::Munge {
                why: "cannot create a context".into(),
            });
        }
        let ctx = Ctx(ctx);
        if let Some(socket) = &self.socket {
            let path = path_cstring(socket)?;
            // SAFETY: ctx is live; MUNGE_OPT_SOCKET takes a NUL-terminated string, which
            // libmunge copies before returning.
            let rc = unsafe { munge_ctx_set(ctx.0, MUNGE_OPT_SOCKET, path.as_ptr()) };
            if rc != EMUNGE_SUCCESS {
                return Err(munge_error(rc));
            }
        }
        Ok(ctx)
    }

    /// A credential for the calling process binding one request (blocking: asks munged).
    pub fn encode(&self, binding: &Binding, nonce: &Nonce) -> Result<String, AuthError> {
        let payload = format!(
            "{PAYLOAD_PREFIX} {} {} {}",
            binding.method,
            binding.digest.to_hex(),
            nonce.to_hex()
        );
        let ctx = self.ctx()?;
        let mut cred: *mut c_char = std::ptr::null_mut();
        let len = c_int::try_from(payload.len()).map_err(|_| AuthError::Munge {
            why: "payload too long".into(),
        })?;
        // SAFETY: ctx is live, payload outlives the call and len is its length; on success
        // libmunge stores a malloc'd NUL-terminated string in cred, freed below.
        let rc = unsafe { munge_encode(&mut cred, ctx.0, payload.as_ptr().cast(), len) };
        if rc != EMUNGE_SUCCESS {
            return Err(munge_error(rc));
        }
        // SAFETY: cred is the NUL-terminated string libmunge allocated; copied, then freed once.
        let text = unsafe {
            let text = CStr::from_ptr(cred).to_string_lossy().into_owned();
            nix::libc::free(cred.cast());
            text
        };
        Ok(text)
    }

    /// Decodes `cred` (blocking: asks munged, which refuses replays and expired credentials).
    pub fn decode(&self, cred: &str) -> Result<Decoded, AuthError> {
        let ctx = self.ctx()?;
        let cred = CString::new(cred).map_err(|_| AuthError::Munge {
            why: "credential contains NUL".into(),
        })?;
        let mut buf: *mut c_void = std::ptr::null_mut();
        let mut len: c_int = 0;
        let (mut uid, mut gid): (nix::libc::uid_t, nix::libc::gid_t) = (0, 0);
        // SAFETY: ctx is live, cred is NUL-terminated and outlives the call, the out pointers
        // point at live locals; libmunge may store a malloc'd payload in buf (even on some
        // errors), freed below in every case.
        let rc =
            unsafe { munge_decode(cred.as_ptr(), ctx.0, &mut buf, &mut len, &mut uid, &mut gid) };
        let payload = if buf.is_null() {
            Vec::new()
        } else {
            let n = usize::try_from(len).unwrap_or(0);
            // SAFETY: buf holds len bytes allocated by libmunge; copied, then freed once.
            unsafe {
                let bytes = std::slice::from_raw_parts(buf.cast::<u8>(), n).to_vec();
                nix::libc::free(buf);
                bytes
            }
        };
        if rc != EMUNGE_SUCCESS {
            return Err(munge_error(rc));
        }
        let (binding, nonce) = parse_payload(&payload)?;
        Ok(Decoded {
            uid,
            gid,
            nonce,
            binding,
        })
    }
}

fn path_cstring(path: &Path) -> Result<CString, AuthError> {
    use std::os::unix::ffi::OsStrExt;
    CString::new(path.as_os_str().as_bytes()).map_err(|_| AuthError::Munge {
        why: format!("socket path {} contains NUL", path.display()),
    })
}

/// The binding and nonce of a payload.
fn parse_payload(payload: &[u8]) -> Result<(Binding, Nonce), AuthError> {
    let bad = || AuthError::BadSignature("malformed munge payload".into());
    let text = std::str::from_utf8(payload).map_err(|_| bad())?;
    let mut words = text.split(' ');
    let (Some(PAYLOAD_PREFIX), Some(method), Some(digest), Some(nonce), None) = (
        words.next(),
        words.next(),
        words.next(),
        words.next(),
        words.next(),
    ) else {
        return Err(bad());
    };
    let binding = Binding {
        method: method.to_string(),
        digest: BodyDigest::from_hex(digest).ok_or_else(bad)?,
    };
    binding.validate()?;
    let nonce = Nonce::from_hex(nonce).ok_or_else(bad)?;
    Ok((binding, nonce))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn payloads_carry_a_binding_and_a_nonce() {
        let b = Binding::new("/sluice.v1.Controller/Ping", b"");
        let nonce = super::super::token::new_nonce();
        let text = format!(
            "{PAYLOAD_PREFIX} {} {} {}",
            b.method,
            b.digest.to_hex(),
            nonce.to_hex()
        );
        assert_eq!(parse_payload(text.as_bytes()).unwrap(), (b, nonce));
        for bad in [
            "",
            "sluice-munge1",
            "other /a/b 00 11",
            "sluice-munge1 /a/b x y",
        ] {
            assert!(parse_payload(bad.as_bytes()).is_err(), "{bad}");
        }
    }

    #[test]
    fn an_absent_munged_is_an_error_naming_the_cause() {
        let dir = tempfile::tempdir().unwrap();
        let m = Munge {
            socket: Some(dir.path().join("none.socket")),
        };
        let b = Binding::new("/sluice.v1.Controller/Ping", b"");
        let e = m.encode(&b, &super::super::token::new_nonce()).unwrap_err();
        assert!(matches!(e, AuthError::Munge { .. }), "{e}");
    }
}
