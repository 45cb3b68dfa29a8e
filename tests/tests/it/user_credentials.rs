//! Users who cannot read `slurm.key` use the cluster through the local credential service
//! (`sack.socket` next to `slurm.conf`, offered by the node daemons of `sluice up` and by
//! `sluice-sackd` on login hosts): it signs for the uid the kernel reports, whatever the user
//! claims, and the controller's rules for that uid apply.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Child, Command};

use common::cluster::Cluster;
use common::users::TestUser;
use sluice_wire::auth::token::{BodyDigest, new_nonce};
use sluice_wire::auth::{Binding, KEY_FILE, Key, sack};

/// Lets the other user reach the site (the temp dir is 0700 by itself) and write in the work
/// directory, as on a shared host.
fn open_site(c: &Cluster) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(
        c.dir().parent().unwrap(),
        std::fs::Permissions::from_mode(0o755),
    )
    .unwrap();
    std::fs::set_permissions(&c.work, std::fs::Permissions::from_mode(0o1777)).unwrap();
}

/// `program args…` as `user` with `conf` as `SLURM_CONF`, in the work directory.
fn as_user(
    c: &Cluster,
    user: &TestUser,
    conf: &Path,
    program: &str,
    args: &[&str],
) -> common::CmdOutput {
    let mut cmd = c.command(program, args);
    cmd.env("SLURM_CONF", conf);
    common::run(user.apply(&mut cmd), None)
}

fn job_id(out: &common::CmdOutput) -> u32 {
    assert_eq!(out.code, 0, "{out:?}");
    out.stdout
        .trim()
        .parse()
        .unwrap_or_else(|_| panic!("not a job id: {out:?}"))
}

/// The token the socket at `socket` gives `user` for a request to `method` with an empty body
/// (asked as any program may, with a line of text).
fn token_asked_by(user: &TestUser, socket: &Path, method: &str) -> String {
    let binding = Binding::new(method, b"");
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
    out.stdout.trim().to_string()
}

#[test]
#[cfg_attr(not(test_as_root), ignore = "needs root to create a user")]
fn a_user_without_the_key_submits_watches_and_cancels_own_jobs_only() {
    let user = TestUser::create("cred");
    let c = Cluster::start(1);
    open_site(&c);
    let conf = c.conf();
    let key_path = conf.parent().unwrap().join(KEY_FILE);
    assert!(!user.can_read(&key_path), "{} reads the key", user.name);

    let out = as_user(&c, &user, &conf, "squeue", &[]);
    assert_eq!(out.code, 0, "{out:?}");
    assert!(out.stdout.contains("JOBID"), "{out:?}");

    // A batch job runs as the user, its output theirs.
    let job = job_id(&as_user(
        &c,
        &user,
        &conf,
        "sbatch",
        &["--parsable", "--wrap", "id"],
    ));
    assert_eq!(c.wait_done(job), "COMPLETED");
    let out_file = format!("slurm-{job}.out");
    let text = c.wait_file(&out_file, "uid=");
    assert!(
        text.starts_with(&format!("uid={}({})", user.uid, user.name)),
        "{text}"
    );
    let meta = std::fs::metadata(c.work.join(&out_file)).unwrap();
    use std::os::unix::fs::MetadataExt;
    assert_eq!((meta.uid(), meta.gid()), (user.uid, user.gid));

    // An interactive step too (srun talks to the controller and the node daemon).
    let out = as_user(&c, &user, &conf, "srun", &["id", "-u"]);
    assert_eq!(
        (out.code, out.stdout.as_str()),
        (0, format!("{}\n", user.uid).as_str()),
        "{out:?}"
    );

    // Their own job they may cancel.
    let own = job_id(&as_user(
        &c,
        &user,
        &conf,
        "sbatch",
        &["--parsable", "--wrap", "sleep 300"],
    ));
    c.wait_state(own, "RUNNING");
    let out = as_user(&c, &user, &conf, "scancel", &[&own.to_string()]);
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(c.wait_done(own), "CANCELLED");

    // Root's they may not.
    let roots = c.sbatch(&["--wrap", "sleep 300"]);
    c.wait_state(roots, "RUNNING");
    let out = as_user(&c, &user, &conf, "scancel", &[&roots.to_string()]);
    assert_eq!(
        (out.code, out.stderr.as_str()),
        (
            1,
            format!("scancel: error: Kill job error on job id {roots}: Access/permission denied\n")
                .as_str()
        ),
        "{out:?}"
    );
    assert_eq!(c.state(&roots.to_string()), "RUNNING");
    c.ok("scancel", &[&roots.to_string()]);

    // The token carries the uid and gid the kernel reports, bound to the method asked for.
    let socket = sack::socket_path(conf.parent().unwrap());
    let method = "/sluice.v1.Controller/CancelJob";
    let token = token_asked_by(&user, &socket, method);
    let claims = Key::load(&key_path)
        .unwrap()
        .open(&token, &BodyDigest::of(b""))
        .unwrap();
    assert_eq!((claims.uid, claims.gid), (user.uid, user.gid), "{token}");
    assert_eq!(claims.method, method);
}

/// A running `sluice-sackd -D`; killed on drop.
struct Sackd(Child);

impl Drop for Sackd {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
#[cfg_attr(not(test_as_root), ignore = "needs root to create a user")]
fn on_a_login_host_sackd_signs_for_users_and_without_it_both_ways_are_named() {
    let user = TestUser::create("login");
    let c = Cluster::start(1);
    open_site(&c);
    // A login host's configuration: the cluster's slurm.conf and key, no node daemon.
    let login: PathBuf = c.dir().parent().unwrap().join("login");
    std::fs::create_dir(&login).unwrap();
    std::fs::copy(c.conf(), login.join("slurm.conf")).unwrap();
    std::fs::hard_link(c.dir().join(KEY_FILE), login.join(KEY_FILE)).unwrap();
    let conf = login.join("slurm.conf");
    let socket = sack::socket_path(&login);

    let out = as_user(&c, &user, &conf, "squeue", &[]);
    assert_eq!(out.code, 1, "{out:?}");
    assert_eq!(
        out.stderr,
        format!(
            "squeue: error: cannot sign requests: {}: Permission denied (os error 13); credential service {}: No such file or directory (os error 2)\n",
            login.join(KEY_FILE).display(),
            socket.display()
        )
    );

    let sackd = Sackd(
        Command::new(common::bin("sluice-sackd"))
            .arg("-D")
            .arg("-f")
            .arg(&conf)
            .spawn()
            .expect("start sluice-sackd"),
    );
    c.wait_for("sluice-sackd to answer", || sack::probe(&socket).is_ok());
    let mode = std::fs::metadata(&socket).unwrap();
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(mode.permissions().mode() & 0o777, 0o666);

    let out = as_user(&c, &user, &conf, "squeue", &[]);
    assert_eq!(out.code, 0, "{out:?}");
    let job = job_id(&as_user(
        &c,
        &user,
        &conf,
        "sbatch",
        &["--parsable", "--wrap", "id -u"],
    ));
    assert_eq!(c.wait_done(job), "COMPLETED");
    assert_eq!(
        c.wait_file(&format!("slurm-{job}.out"), "\n"),
        format!("{}\n", user.uid)
    );

    // One service per socket: a second daemon says so and stops.
    let mut second = Command::new(common::bin("sluice-sackd"));
    second.arg("-D").arg("-f").arg(&conf);
    let out = common::run(&mut second, None);
    assert_eq!(out.code, 1, "{out:?}");
    assert_eq!(
        out.stderr,
        format!(
            "sluice-sackd: error: a credential service already answers at {}\n",
            socket.display()
        )
    );
    drop(sackd);
}
