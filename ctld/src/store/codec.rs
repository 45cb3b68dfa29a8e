//! How saved records are encoded. Each job, node and launch spec row carries the format it was
//! written in, so a store written by an older controller still loads:
//!
//! * [`JSON`] (1): `serde_json`, what controllers wrote before MessagePack.
//! * [`MSGPACK`] (2): MessagePack with named fields (`rmp_serde::to_vec_named`): the same
//!   serde data model as JSON, so the snapshot structs' evolution rules hold unchanged (a new
//!   field with `#[serde(default)]` needs no new format; skipped fields may be absent), but
//!   strings are copied instead of escaped and numbers are not printed in decimal, which made
//!   JSON the larger part of a commit under a submission burst.
//!
//! Records are written in [`CURRENT`]; a record of another known format is decoded by it. A
//! job or node record is rewritten in the current format the next time it is saved; a launch
//! spec (written once per owner) keeps its format until it leaves the store.

use serde::Serialize;
use serde::de::DeserializeOwned;

/// `serde_json` (controllers before MessagePack).
pub const JSON: u32 = 1;
/// MessagePack with named fields.
pub const MSGPACK: u32 = 2;
/// The format new records are written in.
pub const CURRENT: u32 = MSGPACK;

/// `value` in the [`CURRENT`] format; our own types always encode, but a failure is reported
/// as SQLite would report a value it cannot bind.
pub fn encode<T: Serialize + ?Sized>(value: &T) -> rusqlite::Result<Vec<u8>> {
    rmp_serde::to_vec_named(value).map_err(|e| rusqlite::Error::ToSqlConversionFailure(Box::new(e)))
}

/// A record written in `format`, or why it cannot be read.
pub fn decode<T: DeserializeOwned>(format: u32, body: &[u8]) -> Result<T, String> {
    match format {
        MSGPACK => rmp_serde::from_slice(body).map_err(|e| e.to_string()),
        JSON => serde_json::from_slice(body).map_err(|e| e.to_string()),
        other => Err(format!("unknown record format {other}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::LaunchSpec;
    use crate::core::snapshot::{BaseSnap, NodeSnap};

    fn spec() -> LaunchSpec {
        LaunchSpec {
            script: "#!/bin/sh\necho \"hi\"\n".into(),
            workdir: "/home/alice".into(),
            env: vec![
                ("PATH".into(), "/bin:/usr/bin".into()),
                ("Z".into(), String::new()),
            ],
            stdout: Some("out-%j.txt".into()),
            open_append: Some(false),
            ..LaunchSpec::default()
        }
    }

    #[test]
    fn both_formats_read_back_what_they_wrote() {
        let spec = spec();
        let packed = encode(&spec).unwrap();
        assert_eq!(decode::<LaunchSpec>(CURRENT, &packed).unwrap(), spec);
        let json = serde_json::to_vec(&spec).unwrap();
        assert_eq!(decode::<LaunchSpec>(JSON, &json).unwrap(), spec);
        // Smaller than the JSON it replaces (no escapes, no quoted keys' punctuation).
        assert!(
            packed.len() < json.len(),
            "{} >= {}",
            packed.len(),
            json.len()
        );
    }

    #[test]
    fn fields_an_older_record_lacks_take_their_defaults() {
        // A node record as written before `power` existed, and with its skipped options absent.
        #[derive(Serialize)]
        struct OldNode<'a> {
            name: &'a str,
            base: &'a str,
        }
        let old = encode(&OldNode {
            name: "n1",
            base: "down",
        })
        .unwrap();
        let node: NodeSnap = decode(CURRENT, &old).unwrap();
        assert_eq!(node.name, "n1");
        assert_eq!(node.base, BaseSnap::Down);
        assert!(!node.drain && node.reason.is_none() && node.power.is_none());
    }

    #[test]
    fn unreadable_records_are_errors_not_panics() {
        assert!(decode::<LaunchSpec>(CURRENT, b"\xc1garbage").is_err());
        assert!(decode::<LaunchSpec>(CURRENT, &[]).is_err());
        assert!(decode::<LaunchSpec>(JSON, b"{").is_err());
        let err = decode::<LaunchSpec>(9, b"{}").unwrap_err();
        assert_eq!(err, "unknown record format 9");
    }
}
