//! `AuthType=auth/munge` (`sluice up --auth munge`): users' commands sign with MUNGE
//! credentials, the daemons take uid and gid from munged, and a credential is good for one
//! request only. munged runs privately for the test (its own key and socket).

use crate::common;

use common::cluster::Cluster;
use common::raw_rpc::{channel, frame, sending};
use common::users::TestUser;
use sluice_cli::slurm_conf::SlurmConf;
use sluice_testkit::munged::Munged;
use sluice_tool::up::AuthMode;
use sluice_wire::auth::token::new_nonce;
use sluice_wire::auth::{AUTH_ERROR, Binding};
use sluice_wire::proto::accounting_client::AccountingClient;
use sluice_wire::proto::{ListClustersRequest, PingRequest};
use tonic::Code;

/// A MUNGE credential made by `user` (with the `munge` command) binding `method` with an
/// empty message.
fn user_credential(user: &TestUser, munged: &Munged, method: &str) -> String {
    let binding = Binding::new(method, &frame(&PingRequest {}));
    let payload = format!(
        "sluice-munge1 {} {} {}",
        binding.method,
        binding.digest.to_hex(),
        new_nonce().to_hex()
    );
    let socket = munged.socket();
    let out = user.run("munge", &["-S", socket.to_str().unwrap(), "-s", &payload]);
    assert_eq!(out.code, 0, "{out:?}");
    out.stdout.trim().to_string()
}

#[test]
#[cfg_attr(
    not(test_as_root),
    ignore = "needs root to create a user and run munged"
)]
fn with_auth_munge_users_are_who_munged_says_once_per_credential() {
    let munged = match Munged::start() {
        Ok(m) => m,
        Err(why) => {
            eprintln!("SKIP with_auth_munge_users_are_who_munged_says_once_per_credential: {why}");
            return;
        }
    };
    let user = TestUser::create("munge");
    let c = Cluster::start_args(&[], |args| {
        args.nodes = Some(1);
        args.auth = Some(AuthMode::Munge);
        args.munge_socket = Some(munged.socket());
    });
    {
        use std::os::unix::fs::PermissionsExt;
        let open = |p: &std::path::Path, m| {
            std::fs::set_permissions(p, std::fs::Permissions::from_mode(m)).unwrap()
        };
        open(c.dir().parent().unwrap(), 0o755);
        open(&c.work, 0o1777);
    }
    let conf = c.conf();
    let text = std::fs::read_to_string(&conf).unwrap();
    assert!(text.contains("AuthType=auth/munge"), "{text}");
    let as_user = |program: &str, args: &[&str]| {
        let mut cmd = c.command(program, args);
        cmd.env("SLURM_CONF", &conf);
        common::run(user.apply(&mut cmd), None)
    };

    // A batch job and a step run as the user munged vouches for.
    let out = as_user("sbatch", &["--parsable", "--wrap", "id -u"]);
    assert_eq!(out.code, 0, "{out:?}\n{}", c.logs());
    let job: u32 = out.stdout.trim().parse().unwrap();
    assert_eq!(c.wait_done(job), "COMPLETED");
    assert_eq!(
        c.wait_file(&format!("slurm-{job}.out"), "\n"),
        format!("{}\n", user.uid)
    );
    let out = as_user("srun", &["id", "-u"]);
    assert_eq!(
        (out.code, out.stdout.as_str()),
        (0, format!("{}\n", user.uid).as_str()),
        "{out:?}"
    );

    // The accounting daemon takes the uid from the credential, once.
    let slurm = SlurmConf::read(&conf).unwrap();
    common::block_on(async {
        let ch = channel(&slurm.dbd_host, slurm.dbd_port).await;
        let dbd = |cred: &str| {
            AccountingClient::with_interceptor(ch.clone(), sending("Munge ", cred.to_string()))
        };
        let cred = user_credential(&user, &munged, "/sluice.v1.Accounting/Ping");
        let reply = dbd(&cred).ping(PingRequest {}).await.unwrap().into_inner();
        assert_eq!((reply.caller_uid, reply.caller_is_admin), (user.uid, false));
        let status = dbd(&cred).ping(PingRequest {}).await.unwrap_err();
        assert_eq!(status.code(), Code::Unauthenticated);
        assert_eq!(
            status.message(),
            format!("{AUTH_ERROR}: credential already used (replayed)")
        );
        let cred = user_credential(&user, &munged, "/sluice.v1.Accounting/Ping");
        let status = dbd(&cred)
            .list_clusters(ListClustersRequest::default())
            .await
            .unwrap_err();
        assert_eq!(
            status.message(),
            format!(
                "{AUTH_ERROR}: credential was issued for /sluice.v1.Accounting/Ping, not /sluice.v1.Accounting/ListClusters"
            )
        );
    });
}
