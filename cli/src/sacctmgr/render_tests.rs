//! Golden renderings of sacctmgr's tables and messages, without a daemon.

use sluice_wire::proto;

use super::args::Op;
use super::fields::parse_format;
use super::{account, cluster, federation, user};
use crate::output::{OutputMode, Printer};

fn table(format: &str, rows: &[Vec<String>], mode: OutputMode) -> String {
    let chosen = parse_format(format).unwrap();
    let p = Printer::new(mode, super::fields::columns(&chosen));
    let mut buf = Vec::new();
    p.print_header(&mut buf).unwrap();
    for r in rows {
        p.print_row(&mut buf, r).unwrap();
    }
    String::from_utf8(buf).unwrap()
}

fn member(name: &str, id: u32, state: u32, features: &[&str]) -> proto::Cluster {
    proto::Cluster {
        name: name.into(),
        federation: "fed1".into(),
        fed_id: id,
        fed_state: state,
        features: features.iter().map(|f| f.to_string()).collect(),
        ..Default::default()
    }
}

fn fed() -> proto::Federation {
    proto::Federation {
        name: "fed1".into(),
        clusters: vec![member("c1", 1, 1, &["a", "b"]), member("c2", 2, 17, &[])],
        ..Default::default()
    }
}

#[test]
fn show_federation_default_format() {
    let chosen = parse_format(federation::DEFAULT_FORMAT).unwrap();
    let rows = federation::rows(&[fed()], &chosen, false);
    assert_eq!(
        table(federation::DEFAULT_FORMAT, &rows, OutputMode::Fixed),
        "Federation    Cluster ID             Features     FedState \n\
         ---------- ---------- -- -------------------- ------------ \n\
         \x20     fed1         c1  1                  a,b       ACTIVE \n\
         \x20     fed1         c2  2                             DRAIN \n"
    );
}

#[test]
fn show_federation_tree_and_federation_only_formats() {
    let chosen = parse_format(federation::DEFAULT_FORMAT).unwrap();
    let rows = federation::rows(&[fed()], &chosen, true);
    let text = table(federation::DEFAULT_FORMAT, &rows, OutputMode::Parsable2);
    assert_eq!(
        text,
        "Federation|Cluster|ID|Features|FedState\nfed1||||\n|c1|1|a,b|ACTIVE\n|c2|2||DRAIN\n"
    );
    let only = parse_format("federation,features").unwrap();
    assert_eq!(
        federation::rows(&[fed()], &only, false),
        vec![vec!["fed1".to_string(), String::new()]]
    );
    let empty = proto::Federation {
        name: "f2".into(),
        ..Default::default()
    };
    assert_eq!(
        federation::rows(&[empty], &chosen, false),
        vec![vec![
            "f2".to_string(),
            String::new(),
            String::new(),
            String::new(),
            String::new()
        ]]
    );
}

#[test]
fn show_cluster_withfed_header_and_row() {
    let format = format!(
        "{},Fa,GrpJ,GrpTRES,GrpS,MaxJ,MaxTRES,MaxS,MaxW,QOS,DefaultQOS,Federation,ID,Features,FedState",
        cluster::DEFAULT_FORMAT
    );
    let chosen = parse_format(&format).unwrap();
    let c = proto::Cluster {
        name: "cluster4".into(),
        fed_state: 0,
        ..Default::default()
    };
    let row: Vec<String> = chosen.iter().map(|f| cluster::value(&c, f.field)).collect();
    let text = table(&format, &[row], OutputMode::Fixed);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines[0],
        "   Cluster     ControlHost  ControlPort   RPC     Share GrpJobs       GrpTRES GrpSubmit MaxJobs       MaxTRES MaxSubmit     MaxWall                  QOS   Def QOS Federation     ID             Features     FedState "
    );
    assert_eq!(
        lines[2],
        "  cluster4                            0     0         1                                                                                                                            0                                NA "
    );
}

#[test]
fn settings_lines_match_slurm() {
    let mut set = cluster::ClusterSet {
        federation: Some("f1".into()),
        ..Default::default()
    };
    set.features.apply(Op::Add, "x,y").unwrap();
    set.fed_state = sluice_vocab::FedState::parse_settable("drain");
    assert_eq!(
        set.lines(),
        "  Feature     += x\n  Feature     += y\n  Federation     = f1\n  FedState       = DRAIN\n"
    );
    let mut clear = cluster::ClusterSet::default();
    clear.features.apply(Op::Set, "").unwrap();
    assert_eq!(clear.lines(), "  Feature     = \n");
    assert_eq!(
        federation::settings_lines(&["c1".into(), "+c3".into(), "-c2".into()]),
        "  Cluster       = c1\n  Cluster      += c3\n  Cluster      -= c2\n"
    );
}

#[test]
fn association_lines_are_padded_and_cut() {
    assert_eq!(
        account::assoc_line("a1", "c1"),
        "  A = a1         C = c1        \n"
    );
    assert_eq!(
        user::assoc_line("averylonguser", "acct", "averylongcluster"),
        "  U = averylong A = acct       C = averylongc\n"
    );
}

#[test]
fn user_and_account_default_formats() {
    let u = proto::User {
        name: "root".into(),
        default_account: "root".into(),
        admin_level: "Administrator".into(),
        ..Default::default()
    };
    let chosen = parse_format(user::DEFAULT_FORMAT).unwrap();
    let row: Vec<String> = chosen.iter().map(|c| user::value(&u, c.field)).collect();
    assert_eq!(
        table(user::DEFAULT_FORMAT, &[row], OutputMode::Fixed),
        "      User   Def Acct     Admin \n---------- ---------- --------- \n      root       root Administ+ \n"
    );
    let a = proto::Account {
        name: "root".into(),
        description: "default root account".into(),
        organization: "root".into(),
        ..Default::default()
    };
    let chosen = parse_format(account::DEFAULT_FORMAT).unwrap();
    let row: Vec<String> = chosen.iter().map(|c| account::value(&a, c.field)).collect();
    assert_eq!(
        table(account::DEFAULT_FORMAT, &[row], OutputMode::Parsable),
        "Account|Descr|Org|\nroot|default root account|root|\n"
    );
}

#[test]
fn withcoord_adds_slurms_coord_accounts_column() {
    use super::args::Word;
    let words = [Word::Bare("withcoord".into())];
    let cond = user::parse(&words, super::error::SacctmgrError::UnknownCondition).unwrap();
    assert!(cond.with_coord);
    let cond = account::parse_cond(&words).unwrap();
    assert!(cond.with_coord);
    let u = proto::User {
        name: "couser1".into(),
        default_account: "coacct".into(),
        admin_level: "None".into(),
        coord_accounts: vec!["coacct".into(), "subacct".into()],
        ..Default::default()
    };
    let format = format!("{},Coordinators", user::DEFAULT_FORMAT);
    let chosen = parse_format(&format).unwrap();
    let row: Vec<String> = chosen.iter().map(|c| user::value(&u, c.field)).collect();
    assert_eq!(
        table(&format, &[row], OutputMode::Fixed),
        "      User   Def Acct     Admin       Coord Accounts \n---------- ---------- --------- -------------------- \n   couser1     coacct      None       coacct,subacct \n"
    );
    let a = proto::Account {
        name: "subacct".into(),
        coordinators: vec!["couser1".into()],
        ..Default::default()
    };
    let chosen = parse_format("Account,Coord").unwrap();
    let row: Vec<String> = chosen.iter().map(|c| account::value(&a, c.field)).collect();
    assert_eq!(
        table("Account,Coord", &[row], OutputMode::Parsable2),
        "Account|Coord Accounts\nsubacct|couser1\n"
    );
}

#[test]
fn admin_levels_take_prefixes() {
    assert_eq!(user::parse_admin_level("a").unwrap(), "Administrator");
    assert_eq!(user::parse_admin_level("OPER").unwrap(), "Operator");
    assert_eq!(user::parse_admin_level("n").unwrap(), "None");
    assert_eq!(
        user::parse_admin_level("superuser").unwrap(),
        "Administrator"
    );
    assert!(user::parse_admin_level("boss").is_err());
}

#[test]
fn users_with_their_associations_one_row_each() {
    use super::args::Word;
    let words: Vec<Word> = ["withassoc", "alice"]
        .iter()
        .map(|w| Word::Bare((*w).to_string()))
        .collect();
    let cond = user::parse(&words, super::error::SacctmgrError::UnknownCondition).unwrap();
    assert!(cond.with_assoc);
    assert_eq!(cond.names, vec!["alice"]);

    let person = |name: &str, def: &str| proto::User {
        name: name.into(),
        default_account: def.into(),
        admin_level: "None".into(),
        ..Default::default()
    };
    let assoc = |cluster: &str, account: &str, user: &str, parent: &str| proto::Association {
        cluster: cluster.into(),
        account: account.into(),
        user: user.into(),
        parent_account: parent.into(),
        shares: 1,
        ..Default::default()
    };
    let users = [person("alice", "physics"), person("bob", "")];
    let parent_shares = proto::Association {
        shares: -1,
        ..assoc("c1", "chem", "alice", "chem")
    };
    let assocs = [
        assoc("c1", "root", "", ""),
        assoc("c1", "physics", "", "root"),
        assoc("c1", "chem", "", "root"),
        assoc("c1", "physics", "alice", "physics"),
        parent_shares.clone(),
    ];
    let format = "User,Cluster,Account%256,Share";
    let chosen = parse_format(format).unwrap();
    let fields: Vec<_> = chosen.iter().map(|c| c.field).collect();
    let rows = user::rows_with_assocs(&users, &assocs, &fields);
    assert_eq!(
        table(format, &rows, OutputMode::Parsable2),
        "User|Cluster|Account|Share\n\
         alice|c1|physics|1\n\
         alice|c1|chem|parent\n\
         bob|||\n"
    );

    // The default format with associations is Slurm's, and every column is known.
    let default = format!("{},{}", user::DEFAULT_FORMAT, user::ASSOC_FORMAT);
    let chosen = parse_format(&default).unwrap();
    assert_eq!(chosen.len(), 16);
}

#[test]
fn accounts_with_their_associations_one_row_each() {
    use super::account;
    use super::args::Word;
    let words: Vec<Word> = ["withassoc", "chem"]
        .iter()
        .map(|w| Word::Bare((*w).to_string()))
        .collect();
    let cond = account::parse_cond(&words).unwrap();
    assert!(cond.with_assoc);
    assert_eq!(cond.names, vec!["chem"]);
    let acct = |name: &str| proto::Account {
        name: name.into(),
        description: name.into(),
        organization: name.into(),
        ..Default::default()
    };
    let assoc = |account: &str, user: &str, parent: &str, shares: i64| proto::Association {
        cluster: "c1".into(),
        account: account.into(),
        user: user.into(),
        parent_account: parent.into(),
        shares,
        ..Default::default()
    };
    let accounts = [acct("chem"), acct("empty")];
    let assocs = [
        assoc("chem", "", "root", 4),
        assoc("chem", "carol", "", -1),
        assoc("chem", "dave", "", 1),
    ];
    let format = "Account,Descr,Cluster,ParentName,User,Share";
    let chosen = parse_format(format).unwrap();
    let fields: Vec<_> = chosen.iter().map(|c| c.field).collect();
    let rows = account::rows_with_assocs(&accounts, &assocs, &fields);
    assert_eq!(
        table(format, &rows, OutputMode::Parsable2),
        "Account|Descr|Cluster|ParentName|User|Share\n\
         chem|chem|c1|root||4\n\
         chem|chem|c1||carol|parent\n\
         chem|chem|c1||dave|1\n\
         empty|empty||||\n"
    );
}
