//! `scontrol reconfigure` and `scontrol update SuspendExc*` on a real local cluster, through
//! the real binaries: an edited `slurm.conf` takes effect without a restart, a bad file or a
//! change that needs a restart is refused with nothing changed, only administrators may do
//! either, and `ReconfigFlags=KeepPowerSaveSettings` decides whether a runtime exclusion
//! survives a reconfiguration (seen in whether an idle cloud node is powered down).

use crate::common;

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::time::Duration;

use common::cluster::Cluster;
use common::{CmdOutput, bin, run};

/// How long a cloud node may take to boot, or to be powered down after SuspendTime.
const POWER_TIMEOUT: Duration = Duration::from_secs(120);

fn edit_conf(c: &Cluster, edit: impl FnOnce(&str) -> String) {
    let text = std::fs::read_to_string(c.conf()).expect("read slurm.conf");
    let edited = edit(&text);
    assert_ne!(edited, text, "the edit changed nothing");
    std::fs::write(c.conf(), edited).expect("write slurm.conf");
}

fn reconfigure(c: &Cluster) -> CmdOutput {
    c.cmd("scontrol", &["reconfigure"])
}

/// `scontrol show config`'s value of `key`.
fn config(c: &Cluster, key: &str) -> String {
    let out = c.ok("scontrol", &["show", "config"]);
    out.lines()
        .find_map(|l| {
            let (k, v) = l.split_once(" = ")?;
            (k.trim() == key).then(|| v.trim().to_string())
        })
        .unwrap_or_else(|| panic!("no {key} in show config:\n{out}"))
}

fn max_time(c: &Cluster) -> String {
    let out = c.ok("scontrol", &["show", "partition", "debug"]);
    out.split_whitespace()
        .find_map(|w| w.strip_prefix("MaxTime="))
        .unwrap_or_else(|| panic!("no MaxTime in\n{out}"))
        .to_string()
}

/// Runs `scontrol args` as `uid`, with a private copy of the configuration and key.
fn scontrol_as(c: &Cluster, uid: u32, args: &[&str]) -> CmdOutput {
    let home = tempfile::tempdir().expect("temp dir");
    let conf_dir = c.conf().parent().expect("conf dir").to_path_buf();
    for name in ["slurm.conf", sluice_wire::auth::KEY_FILE] {
        let to = home.path().join(name);
        std::fs::copy(conf_dir.join(name), &to).expect("copy conf");
        std::fs::set_permissions(&to, std::fs::Permissions::from_mode(0o600)).expect("chmod");
    }
    for path in [
        home.path().to_path_buf(),
        home.path().join("slurm.conf"),
        home.path().join(sluice_wire::auth::KEY_FILE),
    ] {
        nix::unistd::chown(&path, Some(uid.into()), Some(uid.into()))
            .expect("chown (tests run as root)");
    }
    let mut cmd = std::process::Command::new(bin("scontrol"));
    cmd.args(args)
        .env("SLURM_CONF", home.path().join("slurm.conf"))
        .current_dir(home.path())
        .uid(uid)
        .gid(uid);
    run(&mut cmd, None)
}

#[test]
fn reconfigure_applies_the_edited_file_and_refuses_what_it_cannot_take() {
    let c = Cluster::start(1);
    assert_eq!(max_time(&c), "UNLIMITED");
    edit_conf(&c, |t| {
        t.replace("Default=YES MaxTime=INFINITE", "Default=YES MaxTime=30")
    });
    let out = reconfigure(&c);
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!((out.stdout.as_str(), out.stderr.as_str()), ("", ""));
    assert_eq!(max_time(&c), "00:30:00");

    // A bad value anywhere: the error names file, line and key, and nothing changes.
    edit_conf(&c, |t| {
        t.replace("MaxTime=30", "MaxTime=10") + "SuspendTimeout=soon\n"
    });
    let out = reconfigure(&c);
    assert_eq!(out.code, 1, "{out:?}");
    assert!(
        out.stderr.starts_with("slurm_reconfigure error: ")
            && out.stderr.contains(&c.conf().display().to_string())
            && out.stderr.contains("SuspendTimeout"),
        "{out:?}"
    );
    assert_eq!(max_time(&c), "00:30:00");

    // A node's CPUs need a restart: refused as a whole, the new MaxTime with it.
    edit_conf(&c, |t| {
        let t = t.replace("SuspendTimeout=soon\n", "");
        double_cpus(&t)
    });
    let out = reconfigure(&c);
    assert_eq!(out.code, 1, "{out:?}");
    assert!(
        out.stderr.contains("need a controller restart") && out.stderr.contains("CPUs changed on"),
        "{out:?}"
    );
    assert_eq!(max_time(&c), "00:30:00");

    // Administrators only, for reconfigure and the exclusions alike.
    let out = scontrol_as(&c, 65534, &["reconfigure"]);
    assert_eq!(out.code, 1, "{out:?}");
    assert_eq!(
        out.stderr.trim(),
        "slurm_reconfigure error: Access/permission denied"
    );
    let out = scontrol_as(&c, 65534, &["update", "SuspendExcParts=debug"]);
    assert_eq!(out.code, 1, "{out:?}");
    assert_eq!(
        out.stderr.trim(),
        "slurm_update error: Access/permission denied"
    );
    assert_eq!(config(&c, "SuspendExcParts"), "(null)");

    // The exclusions in force, as `show config` prints them.
    assert_eq!(config(&c, "SuspendTime"), "INFINITE");
    let out = c.cmd("scontrol", &["update", "SuspendExcStates=down,Drain"]);
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(config(&c, "SuspendExcStates"), "DOWN,DRAIN");
    let out = c.cmd("scontrol", &["update", "SuspendExcStates-=DOWN"]);
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(config(&c, "SuspendExcStates"), "DRAIN");
    let out = c.cmd("scontrol", &["update", "SuspendExcStates=idle"]);
    assert_eq!(out.code, 1, "{out:?}");
    assert_eq!(
        out.stderr.trim(),
        "slurm_update error: Invalid SuspendExcState idle"
    );
    assert_eq!(config(&c, "SuspendExcStates"), "DRAIN");
}

/// The text with the `CPUs=` of its `NodeName=DEFAULT` line doubled.
fn double_cpus(text: &str) -> String {
    text.lines()
        .map(|l| {
            if !l.starts_with("NodeName=DEFAULT") {
                return l.to_string();
            }
            l.split(' ')
                .map(
                    |w| match w.strip_prefix("CPUs=").and_then(|n| n.parse::<u32>().ok()) {
                        Some(n) => format!("CPUs={}", n * 2),
                        None => w.to_string(),
                    },
                )
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect::<Vec<_>>()
        .join("\n")
        + "\n"
}

/// Each node's short state (`%t`, with its power suffix) as `sinfo -N` shows it.
fn node_states(c: &Cluster) -> BTreeMap<String, String> {
    let out = c.ok("sinfo", &["-h", "-N", "-o", "%N %t"]);
    out.lines()
        .filter_map(|l| {
            let (node, st) = l.split_once(' ')?;
            Some((node.trim().to_string(), st.trim().to_string()))
        })
        .collect()
}

fn node_state(c: &Cluster, node: &str) -> String {
    node_states(c).get(node).cloned().unwrap_or_default()
}

#[test]
fn keep_power_save_settings_decides_whether_a_runtime_exclusion_survives() {
    let c = Cluster::start_args(&[], |args| {
        args.nodes = Some(1);
        args.cloud_nodes = Some(2);
        args.suspend_time = Some(3);
    });
    c.wait_within(POWER_TIMEOUT, "the cloud nodes to be powered down", || {
        ["cloud1", "cloud2"]
            .iter()
            .all(|n| node_state(&c, n) == "idle~")
    });
    let original = std::fs::read_to_string(c.conf()).unwrap();
    assert!(!original.contains("SuspendExcNodes"), "{original}");

    let out = c.cmd("scontrol", &["update", "SuspendExcNodes=cloud1"]);
    assert_eq!((out.code, out.stdout.as_str()), (0, ""), "{out:?}");
    assert_eq!(config(&c, "SuspendExcNodes"), "cloud1");
    let out = c.cmd("scontrol", &["update", "SuspendExcNodes+=nosuch"]);
    assert_eq!(out.code, 1, "{out:?}");
    assert_eq!(
        out.stderr.trim(),
        "slurm_update error: Invalid node name specified"
    );

    // The file names no exclusion, but KeepPowerSaveSettings keeps the runtime one.
    edit_conf(&c, |t| format!("{t}ReconfigFlags=KeepPowerSaveSettings\n"));
    let out = reconfigure(&c);
    assert_eq!((out.code, out.stdout.as_str()), (0, ""), "{out:?}");
    assert_eq!(config(&c, "SuspendExcNodes"), "cloud1");

    // Both cloud nodes run a job and go idle together: cloud2 is powered down again after
    // SuspendTime, the excluded cloud1 stays up.
    let job = c.sbatch(&["-p", "cloud", "-N", "2", "--wrap", "true"]);
    c.wait_done(job);
    c.wait_within(POWER_TIMEOUT, "cloud2 to be powered down again", || {
        node_state(&c, "cloud2") == "idle~"
    });
    assert_eq!(node_state(&c, "cloud1"), "idle", "excluded, so still up");

    // Without the flag the file's (empty) exclusions replace the runtime one.
    std::fs::write(c.conf(), &original).unwrap();
    let out = reconfigure(&c);
    assert_eq!((out.code, out.stdout.as_str()), (0, ""), "{out:?}");
    assert_eq!(config(&c, "SuspendExcNodes"), "(null)");
    c.wait_within(POWER_TIMEOUT, "cloud1 to be powered down", || {
        node_state(&c, "cloud1") == "idle~"
    });
}
