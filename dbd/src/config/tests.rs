use super::*;

fn parse(text: &str) -> Result<DbdConfig, ConfError> {
    let file = ConfFile::parse(Path::new("/etc/sluice/slurmdbd.conf"), text)?;
    DbdConfig::from_conf(&file, |name| match name {
        "root" => Some(0),
        "slurm" => Some(64030),
        _ => None,
    })
}

fn err(text: &str) -> String {
    parse(text).unwrap_err().to_string()
}

#[test]
fn defaults_are_slurms() {
    let c = parse("").unwrap();
    assert_eq!(c.dbd_port, 6819);
    assert_eq!(c.dbd_host, "localhost");
    assert_eq!(c.bind_host(), "localhost");
    assert_eq!(c.slurm_user, "root");
    assert_eq!(c.admin_uids(), vec![0]);
    assert_eq!(c.log_level, LevelFilter::INFO);
    assert_eq!(c.log_file, None);
    assert_eq!(c.pid_file, None);
    assert_eq!(c.storage.url(), "sqlite:///etc/sluice/slurm_acct_db");
    assert_eq!(c.key_path(), Path::new("/etc/sluice/slurm.key"));
    assert!(c.warnings.is_empty());
}

#[test]
fn sqlite_paths_are_relative_to_the_config_file() {
    let c = parse(
        "StorageType=accounting_storage/sqlite\nStorageLoc=data/acct.db\nLogFile=log/dbd.log PidFile=/run/dbd.pid\n",
    )
    .unwrap();
    assert_eq!(
        c.storage,
        Storage::Sqlite {
            path: PathBuf::from("/etc/sluice/data/acct.db")
        }
    );
    assert_eq!(
        c.log_file.as_deref(),
        Some(Path::new("/etc/sluice/log/dbd.log"))
    );
    assert_eq!(c.pid_file.as_deref(), Some(Path::new("/run/dbd.pid")));
}

#[test]
fn server_storage_urls_carry_defaults_and_encode_the_password() {
    let c = parse(
        "StorageType=accounting_storage/mysql\nStorageUser=slurm\nStoragePass=\"p@ss:w/rd %\"\n",
    )
    .unwrap();
    assert_eq!(
        c.storage.url(),
        "mysql://slurm:p%40ss%3Aw%2Frd%20%25@localhost:3306/slurm_acct_db"
    );
    assert_eq!(
        c.storage.display_url(),
        "mysql://slurm:***@localhost:3306/slurm_acct_db"
    );

    let c = parse(
        "StorageType=accounting_storage/pgsql\nStorageHost=db1 StoragePort=6543\nStorageUser=acct StorageLoc=acct\n",
    )
    .unwrap();
    assert_eq!(c.storage.url(), "postgres://acct@db1:6543/acct");
    let c = parse("StorageType=accounting_storage/pgsql\n").unwrap();
    assert_eq!(c.storage.url(), "postgres://localhost:5432/slurm_acct_db");
}

#[test]
fn listening_keys_and_admins() {
    let c = parse("DbdHost=head1\nDbdAddr=10.0.0.1\nDbdPort=0\nSlurmUser=slurm\n").unwrap();
    assert_eq!(c.bind_host(), "10.0.0.1");
    assert_eq!(c.dbd_port, 0);
    assert_eq!(c.slurm_uid, 64030);
    assert_eq!(c.admin_uids(), vec![0, 64030]);
    let c = parse("SlurmUser=1234\n").unwrap();
    assert_eq!(c.admin_uids(), vec![0, 1234]);
}

#[test]
fn debug_levels_map_onto_tracing() {
    for (name, level) in [
        ("quiet", LevelFilter::OFF),
        ("fatal", LevelFilter::ERROR),
        ("error", LevelFilter::ERROR),
        ("info", LevelFilter::INFO),
        ("verbose", LevelFilter::INFO),
        ("debug", LevelFilter::DEBUG),
        ("DEBUG2", LevelFilter::TRACE),
        ("debug5", LevelFilter::TRACE),
    ] {
        assert_eq!(
            parse(&format!("DebugLevel={name}\n")).unwrap().log_level,
            level,
            "{name}"
        );
    }
}

#[test]
fn unknown_keys_warn_with_file_line_and_key() {
    let c = parse("DbdPort=7000\nArchiveJobs=yes\n").unwrap();
    assert_eq!(c.dbd_port, 7000);
    assert_eq!(
        c.warnings,
        vec!["/etc/sluice/slurmdbd.conf:2: unknown key ArchiveJobs ignored"]
    );
}

#[test]
fn bad_values_name_file_line_and_key() {
    for (text, line, key) in [
        ("StorageType=accounting_storage/oracle\n", 1, "StorageType"),
        ("DbdHost=h\nDbdPort=http\n", 2, "DbdPort"),
        (
            "StorageType=accounting_storage/mysql\nStoragePort=99999\n",
            2,
            "StoragePort",
        ),
        ("\n\nDebugLevel=chatty\n", 3, "DebugLevel"),
        ("SlurmUser=nobody-here\n", 1, "SlurmUser"),
    ] {
        let e = err(text);
        assert!(
            e.starts_with(&format!("/etc/sluice/slurmdbd.conf:{line}:")) && e.contains(key),
            "{text:?} gave {e}"
        );
    }
}

#[test]
fn percent_encoding_keeps_unreserved_characters() {
    assert_eq!(percent_encode("aZ09-._~"), "aZ09-._~");
    assert_eq!(percent_encode("a b/é"), "a%20b%2F%C3%A9");
}

#[test]
fn purge_settings_take_slurms_syntax() {
    use sluice_reports::purge::{PurgeAfter, PurgeUnit};
    let c = parse(
        "PurgeJobAfter=12month\nPurgeStepAfter=30days\nPurgeEventAfter=24hours\nPurgeUsageAfter=-1\nPurgeSuspendAfter=2\n",
    )
    .unwrap();
    let after = |count, unit| Some(PurgeAfter { count, unit });
    assert_eq!(c.purge.jobs, after(12, PurgeUnit::Months));
    assert_eq!(c.purge.steps, after(30, PurgeUnit::Days));
    assert_eq!(c.purge.events, after(24, PurgeUnit::Hours));
    assert_eq!(c.purge.suspends, after(2, PurgeUnit::Months));
    assert_eq!(c.purge.usage, None, "-1 keeps usage");
    assert!(c.warnings.is_empty(), "{:?}", c.warnings);
    assert_eq!(parse("").unwrap().purge, PurgePolicy::default());
    let e = err("\nPurgeJobAfter=12weeks\n");
    assert!(
        e.contains("slurmdbd.conf") && e.contains(":2") && e.contains("PurgeJobAfter"),
        "{e}"
    );
}
