//! `PrivateData` and the partitions' account and QOS lists.

use super::*;
use crate::private_data::Private;

fn parse(text: &str) -> Result<(CtldConf, Vec<ConfWarning>), ConfError> {
    CtldConf::parse(Path::new("slurm.conf"), text)
}

const BASE: &str = "ClusterName=a\nSlurmctldHost=ctl\nNodeName=n1\n";

#[test]
fn partition_account_and_qos_lists_are_read() {
    let (c, w) = parse(&format!(
        "{BASE}PartitionName=p Nodes=ALL AllowAccounts=phys,chem DenyQos=low AllowQos=ALL\n\
         PartitionName=q Nodes=ALL DenyAccounts=bio RootOnly=YES\n"
    ))
    .unwrap();
    assert!(w.is_empty(), "{w:?}");
    let p = &c.partitions[0].access;
    assert_eq!(
        p.allow_accounts.as_deref(),
        Some(&["phys".into(), "chem".into()][..])
    );
    assert_eq!(
        (p.allow_qos.clone(), p.deny_qos.clone()),
        (None, vec!["low".into()])
    );
    assert!(p.allows_account(Some("chem")) && !p.allows_account(Some("bio")));
    assert!(
        !p.allows_account(None),
        "an unknown account is refused by AllowAccounts"
    );
    let q = &c.partitions[1].access;
    assert!(q.root_only && !p.root_only);
    assert!(!q.allows_account(Some("bio")) && q.allows_account(Some("phys")));
    assert!(
        q.allows_account(None),
        "an unknown account passes DenyAccounts"
    );
}

#[test]
fn empty_lists_and_bad_private_data_name_the_key() {
    for (line, key) in [
        (
            "PartitionName=p Nodes=ALL AllowAccounts=,\n",
            "AllowAccounts",
        ),
        ("PartitionName=p Nodes=ALL DenyQos=\n", "DenyQos"),
        ("PrivateData=jobs,secrets\n", "PrivateData"),
    ] {
        let err = parse(&format!("{BASE}{line}")).unwrap_err().to_string();
        assert!(err.contains(key), "{line}: {err}");
    }
}

#[test]
fn private_data_is_read() {
    let (c, _) = parse(&format!("{BASE}PrivateData=jobs,nodes\n")).unwrap();
    assert!(c.private_data.has(Private::Jobs) && c.private_data.has(Private::Nodes));
    assert!(!c.private_data.has(Private::Partitions));
    let (c, _) = parse(BASE).unwrap();
    assert_eq!(c.private_data.to_string(), "none");
}
