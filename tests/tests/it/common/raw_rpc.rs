//! Requests sent with a credential chosen by the test (a forged, replayed or misdirected token,
//! another user's), as an attacker on the host would send them: the message is encoded as the
//! client library would put it on the wire, so the test can bind (or not) a token to it.

use std::path::Path;

use prost::Message;
use sluice_wire::auth::token::{TOKEN_PREFIX, new_nonce};
use sluice_wire::auth::{Binding, Claims, Key};
use sluice_wire::protocol::{PROTOCOL_METADATA, PROTOCOL_VERSION};
use tonic::transport::Channel;
use tonic::{Request, Status};

use super::users::TestUser;

/// `msg` in its gRPC frame (uncompressed), as a unary request's body.
pub fn frame(msg: &impl Message) -> Vec<u8> {
    let body = msg.encode_to_vec();
    let mut framed = vec![0u8];
    framed.extend(u32::try_from(body.len()).unwrap().to_be_bytes());
    framed.extend(body);
    framed
}

/// The current unix time.
pub fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64
}

/// A `slurm.key` token for `uid` binding `method` with `msg`.
pub fn key_token(key: &Key, uid: u32, method: &str, msg: &impl Message) -> String {
    key.sign(&Claims {
        uid,
        gid: uid,
        issued: now(),
        nonce: new_nonce(),
        binding: Binding::new(method, &frame(msg)),
    })
}

/// The token the credential service at `socket` gives `user` for `method` with `msg`: what any
/// program of that user can get.
pub fn user_token(user: &TestUser, socket: &Path, method: &str, msg: &impl Message) -> String {
    let binding = Binding::new(method, &frame(msg));
    let line = format!(
        "{} {} {}",
        binding.method,
        binding.digest.to_hex(),
        new_nonce().to_hex()
    );
    let script = r#"$SIG{PIPE} = "IGNORE";
        my $s = IO::Socket::UNIX->new(Peer => $ARGV[0]) or die "connect: $!\n";
        print $s "$ARGV[1]\n"; local $/; my $t = <$s>; print $t;"#;
    let out = user.run(
        "perl",
        &[
            "-MIO::Socket::UNIX",
            "-e",
            script,
            socket.to_str().unwrap(),
            &line,
        ],
    );
    assert_eq!(out.code, 0, "{out:?}");
    let token = out.stdout.trim().to_string();
    assert!(token.starts_with(&format!("{TOKEN_PREFIX}.")), "{out:?}");
    token
}

/// An interceptor sending `authorization: <scheme><credential>` and our protocol version.
pub fn sending(
    scheme: &'static str,
    credential: String,
) -> impl FnMut(Request<()>) -> Result<Request<()>, Status> + Clone {
    move |mut req: Request<()>| {
        let value = format!("{scheme}{credential}")
            .parse()
            .map_err(|_| Status::internal("bad credential"))?;
        req.metadata_mut().insert("authorization", value);
        req.metadata_mut().insert(
            PROTOCOL_METADATA,
            PROTOCOL_VERSION.to_string().parse().unwrap(),
        );
        Ok(req)
    }
}

/// A plain channel to `host:port`.
pub async fn channel(host: &str, port: u16) -> Channel {
    tonic::transport::Endpoint::from_shared(format!("http://{host}:{port}"))
        .unwrap()
        .connect()
        .await
        .unwrap()
}
