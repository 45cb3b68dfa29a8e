use super::*;
use proptest::prelude::*;

const PARTS: &[&str] = &["batch", "debug"];

fn parse(text: &str) -> Result<NonstopConf, ConfError> {
    NonstopConf::parse(Path::new("/etc/slurm/nonstop.conf"), text, PARTS)
}

#[test]
fn reads_the_guides_sample() {
    let c = parse(
        "# Sample nonstop.conf file\nBackupAddr=bacco\nControlAddr=prometeo\nDebug=0\n\
         HotSpareCount=batch:8\nMaxSpareNodeCount=4\nPort=9114\nTimeLimitDelay=600\n\
         TimeLimitExtend=2\nUserDrainAllow=alan,brenda\n",
    )
    .unwrap();
    assert_eq!(c.backup_addr.as_deref(), Some("bacco"));
    assert_eq!(c.control_addr.as_deref(), Some("prometeo"));
    assert_eq!(c.hot_spare_count, [("batch".to_string(), 8)]);
    assert_eq!(c.spares_of("batch"), 8);
    assert_eq!(c.spares_of("debug"), 0);
    assert_eq!(
        (
            c.max_spare_node_count,
            c.port,
            c.time_limit_delay_min,
            c.time_limit_extend_min,
            c.time_limit_drop_min
        ),
        (4, 9114, 600, 2, 0)
    );
    assert_eq!(c.user_drain_allow.users, ["alan", "brenda"]);
    assert!(!c.user_drain_allow.all && c.user_drain_deny.is_empty());
    assert_eq!((c.read_timeout_ms, c.write_timeout_ms), (2000, 2000));
}

#[test]
fn reads_every_other_key() {
    let c = parse(
        "HotSpareCount=batch:1,debug:2 TimeLimitDrop=30 UserDrainAllow=ALL\n\
         UserDrainDeny=mallory,1001 ReadTimeout=500 WriteTimeout=700 Debug=3\n",
    )
    .unwrap();
    assert_eq!(
        c.hot_spare_count,
        [("batch".to_string(), 1), ("debug".to_string(), 2)]
    );
    assert!(c.user_drain_allow.all);
    assert_eq!(c.user_drain_deny.users, ["mallory", "1001"]);
    assert_eq!((c.read_timeout_ms, c.write_timeout_ms), (500, 700));
    assert_eq!((c.time_limit_drop_min, c.debug), (30, 3));
}

#[test]
fn an_empty_file_gives_the_defaults() {
    let c = parse("").unwrap();
    assert_eq!(
        c,
        NonstopConf::defaults(PathBuf::from("/etc/slurm/nonstop.conf"))
    );
}

#[test]
fn errors_name_file_line_and_key() {
    let cases = [
        (
            "Debug=0\nHotSpareCount=nosuch:2\n",
            2,
            "HotSpareCount",
            "nosuch",
        ),
        (
            "HotSpareCount=batch\n",
            1,
            "HotSpareCount",
            "partition:count",
        ),
        ("HotSpareCount=batch:x\n", 1, "HotSpareCount", "node count"),
        (
            "\nMaxSpareNodeCount=-1\n",
            2,
            "MaxSpareNodeCount",
            "invalid",
        ),
        ("TimeLimitExtend=2min\n", 1, "TimeLimitExtend", "invalid"),
        ("ReadTimeout=0\n", 1, "ReadTimeout", "at least 1"),
        ("Port=70000\n", 1, "Port", "invalid"),
        ("UserDrainAllow=alan,,bob\n", 1, "UserDrainAllow", "empty"),
        ("ControlAddr=a,b\n", 1, "ControlAddr", "one host"),
        ("Debug=0\n\nSpareNodes=3\n", 3, "SpareNodes", "unknown key"),
    ];
    for (text, line, key, what) in cases {
        let e = parse(text).unwrap_err().to_string();
        assert!(
            e.starts_with(&format!("/etc/slurm/nonstop.conf:{line}:")),
            "{text:?}: {e}"
        );
        assert!(e.contains(key) && e.contains(what), "{text:?}: {e}");
    }
}

#[test]
fn the_file_is_found_beside_slurm_conf() {
    assert_eq!(
        NonstopConf::path_beside(Path::new("/etc/slurm/slurm.conf")),
        PathBuf::from("/etc/slurm/nonstop.conf")
    );
    let e = NonstopConf::load(Path::new("/nonexistent/nonstop.conf"), PARTS)
        .unwrap_err()
        .to_string();
    assert!(e.starts_with("/nonexistent/nonstop.conf:"), "{e}");
}

proptest! {
    #[test]
    fn spare_counts_round_trip(a in 0u32..10_000, b in 0u32..10_000) {
        let c = parse(&format!("HotSpareCount=debug:{a},batch:{b}\n")).unwrap();
        prop_assert_eq!(c.spares_of("debug"), a);
        prop_assert_eq!(c.spares_of("batch"), b);
    }

    #[test]
    fn numbers_round_trip(delay in any::<u32>(), extend in any::<u32>(), port in any::<u16>()) {
        let c = parse(&format!("TimeLimitDelay={delay}\nTimeLimitExtend={extend}\nPort={port}\n"))
            .unwrap();
        prop_assert_eq!((c.time_limit_delay_min, c.time_limit_extend_min, c.port), (delay, extend, port));
    }

    #[test]
    fn arbitrary_text_never_panics(text in "[ -~\n]{0,200}") {
        let _ = parse(&text);
    }

    #[test]
    fn user_lists_keep_their_names(names in proptest::collection::vec("[a-z][a-z0-9_]{0,8}", 1..6)) {
        let c = parse(&format!("UserDrainAllow={}\n", names.join(","))).unwrap();
        let expected: Vec<String> = names.iter().filter(|n| !n.eq_ignore_ascii_case("all")).cloned().collect();
        prop_assert_eq!(c.user_drain_allow.users, expected);
    }
}
