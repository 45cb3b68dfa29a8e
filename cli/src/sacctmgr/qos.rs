//! `add|modify|delete|show qos`: quality of service with its priority, flags and limits
//! (`Priority`, `Description`, `Flags=DenyOnLimit,OverPartQOS`, `MaxWall`, `MaxTRES[PerJob]`,
//! `MaxTRESMins[PerJob]`, `MaxTRESPerUser`, `MaxJobsPerUser`, `MaxSubmitJobsPerUser`,
//! `MaxTRESPerAccount`, `MaxJobsPerAccount`, `MaxSubmitJobsPerAccount`, `MinTRESPerJob`,
//! `MaxTRESPerNode`, `GrpTRESMins`, `UsageFactor`,
//! `GrpTRES`, `GrpJobs`, `GrpSubmitJobs`; `-1` clears a limit), with Slurm's messages and
//! table.

use sluice_vocab::assoc_limits::{Tres, parse_edit};
use sluice_vocab::cluster_conf::{TimeLimit, parse_time_limit};
use sluice_vocab::qos::{QosFlags, UsageFactor};
use sluice_wire::proto::{self, AddQosRequest, DeleteQosRequest, ModifyQosRequest, QosEdit};

use super::Verb;
use super::args::{Parts, Word, split_list};
use super::error::SacctmgrError;
use super::federation::indented;
use super::fields::{Field, parse_format};
use super::session::{Change, Done, Outcome, Session};
use crate::words::is_keyword;

/// Slurm's default `show qos` format.
pub const DEFAULT_FORMAT: &str = "Name,Prio,GraceT,Preempt,PreemptE,PreemptM,Flags%40,\
UsageThres,UsageFactor,GrpTRES,GrpTRESMins,GrpTRESRunMins,GrpJ,GrpS,GrpW,MaxTRES,MaxTRESPerN,\
MaxTRESMins,MaxW,MaxTRESPU,MaxJobsPU,MaxSubmitPU,MaxTRESPA,MaxJobsPA,MaxSubmitPA,MinTRES";

/// Runs a QOS command.
pub async fn run(s: &mut Session<'_>, verb: Verb, words: &[String]) -> Outcome {
    match verb {
        Verb::Add => add(s, &Parts::all(words)).await,
        Verb::List => list(s, &Parts::all(words)).await,
        Verb::Modify => modify(s, Parts::split(words)).await,
        Verb::Delete => delete(s, &Parts::all(words)).await,
    }
}

/// Conditions of a QOS command.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct QosCond {
    pub names: Vec<String>,
    pub with_deleted: bool,
    pub format: Vec<String>,
}

fn is_name_key(key: &str) -> bool {
    is_keyword(key, "Names", 1) || is_keyword(key, "QOS", 1)
}

/// Parses condition words.
pub fn parse_cond(words: &[Word]) -> Result<QosCond, SacctmgrError> {
    let mut c = QosCond::default();
    for w in words {
        match w {
            Word::Bare(b) if is_keyword(b, "WithDeleted", 5) => c.with_deleted = true,
            Word::Bare(b) => c.names.extend(split_list(b)),
            Word::Pair { key, value, .. } if is_name_key(key) => c.names.extend(split_list(value)),
            Word::Pair { key, value, .. } if is_keyword(key, "Format", 1) => {
                c.format.push(value.clone())
            }
            other => return Err(SacctmgrError::UnknownCondition(other.raw())),
        }
    }
    Ok(c)
}

/// A count: `-1` clears, otherwise a whole number.
fn count(key: &str, value: &str) -> Result<i64, SacctmgrError> {
    let v = value.trim();
    if v == "-1" {
        return Ok(-1);
    }
    v.parse::<u32>()
        .ok()
        .filter(|n| *n < u32::MAX)
        .map(i64::from)
        .ok_or_else(|| SacctmgrError::InvalidLimit(format!("{key}={value}")))
}

/// Checks a TRES list the way the dbd will read it, so a typo is named here.
fn tres_list(key: &str, value: &str) -> Result<String, SacctmgrError> {
    parse_edit(value).map_err(|e| SacctmgrError::InvalidLimit(format!("{key}: {e}")))?;
    Ok(value.to_string())
}

/// What an add or modify sets: names (add only) and the edit.
#[derive(Debug, Default, PartialEq)]
pub struct QosSet {
    pub names: Vec<String>,
    pub edit: QosEdit,
    /// The settings as Slurm lists them under " Settings" (key, value).
    pub shown: Vec<(&'static str, String)>,
}

/// Parses setting words (`allow_names`: bare words and `Name=` name the QOS, as in add).
pub fn parse_set(words: &[Word], allow_names: bool) -> Result<QosSet, SacctmgrError> {
    let mut set = QosSet::default();
    let e = &mut set.edit;
    for w in words {
        let (k, value) = match w {
            Word::Bare(b) if allow_names => {
                set.names.extend(split_list(b));
                continue;
            }
            Word::Pair { key, value, .. } if allow_names && is_name_key(key) => {
                set.names.extend(split_list(value));
                continue;
            }
            Word::Pair { key, value, .. } => (key.as_str(), value.as_str()),
            other => return Err(SacctmgrError::UnknownOption(other.raw())),
        };
        let show = value.to_string();
        let shown = if is_keyword(k, "Description", 1) {
            e.description = Some(value.to_string());
            "Description"
        } else if is_keyword(k, "Priority", 3) {
            let p = value.trim();
            e.priority = Some(match p {
                "-1" => -1,
                _ => p
                    .parse::<u32>()
                    .map(i64::from)
                    .map_err(|_| SacctmgrError::InvalidLimit(format!("{k}={value}")))?,
            });
            "Priority"
        } else if is_keyword(k, "Flags", 2) {
            QosFlags::parse(value).map_err(|e| SacctmgrError::InvalidLimit(format!("{k}: {e}")))?;
            e.flags = Some(value.to_string());
            "Flags"
        } else if is_keyword(k, "MaxWallDurationPerJob", 4) {
            e.max_wall_minutes = Some(match parse_time_limit(value) {
                Ok(TimeLimit::Minutes(m)) => i64::from(m),
                Ok(TimeLimit::Unlimited) => -1,
                Err(_) => return Err(SacctmgrError::InvalidLimit(format!("{k}={value}"))),
            });
            "MaxWall"
        } else if is_keyword(k, "MaxTRESPerUser", 11) || is_keyword(k, "MaxTRESPU", 9) {
            e.max_tres_per_user = Some(tres_list(k, value)?);
            "MaxTRESPerUser"
        } else if is_keyword(k, "MaxTRESMinsPerJob", 11) {
            e.max_tres_mins_per_job = Some(tres_list(k, value)?);
            "MaxTRESMins"
        } else if is_keyword(k, "MaxTRESPerJob", 7) {
            e.max_tres_per_job = Some(tres_list(k, value)?);
            "MaxTRESPerJob"
        } else if is_keyword(k, "MaxJobsPerUser", 8) || is_keyword(k, "MaxJobsPU", 9) {
            e.max_jobs_per_user = Some(count(k, value)?);
            "MaxJobsPU"
        } else if is_keyword(k, "MaxSubmitJobsPerUser", 14) || is_keyword(k, "MaxSubmitPU", 11) {
            e.max_submit_jobs_per_user = Some(count(k, value)?);
            "MaxSubmitJobsPU"
        } else if is_keyword(k, "MaxTRESPerAccount", 11) || is_keyword(k, "MaxTRESPA", 9) {
            e.max_tres_per_account = Some(tres_list(k, value)?);
            "MaxTRESPerAccount"
        } else if is_keyword(k, "MaxJobsPerAccount", 11) || is_keyword(k, "MaxJobsPA", 9) {
            e.max_jobs_per_account = Some(count(k, value)?);
            "MaxJobsPA"
        } else if is_keyword(k, "MaxSubmitJobsPerAccount", 17)
            || is_keyword(k, "MaxSubmitPA", 11)
            || is_keyword(k, "MaxSubmitJobsPA", 15)
        {
            e.max_submit_jobs_per_account = Some(count(k, value)?);
            "MaxSubmitJobsPA"
        } else if is_keyword(k, "MaxTRESPerNode", 11) {
            e.max_tres_per_node = Some(tres_list(k, value)?);
            "MaxTRESPerNode"
        } else if is_keyword(k, "MinTRESPerJob", 7) {
            e.min_tres_per_job = Some(tres_list(k, value)?);
            "MinTRESPerJob"
        } else if is_keyword(k, "GrpTRESMins", 8) {
            e.grp_tres_mins = Some(tres_list(k, value)?);
            "GrpTRESMins"
        } else if is_keyword(k, "GrpTRES", 7) {
            e.grp_tres = Some(tres_list(k, value)?);
            "GrpTRES"
        } else if is_keyword(k, "UsageFactor", 6) {
            // A number from 0 to 1000; -1 is Slurm's default again (1.0).
            let f: f64 = value
                .trim()
                .parse()
                .ok()
                .filter(|f: &f64| *f == -1.0 || UsageFactor::from_f64(*f).is_some())
                .ok_or_else(|| SacctmgrError::InvalidLimit(format!("{k}={value}")))?;
            e.usage_factor = Some(f);
            "UsageFactor"
        } else if is_keyword(k, "GrpJobs", 4) {
            e.grp_jobs = Some(count(k, value)?);
            "GrpJobs"
        } else if is_keyword(k, "GrpSubmitJobs", 4) {
            e.grp_submit_jobs = Some(count(k, value)?);
            "GrpSubmitJobs"
        } else {
            return Err(SacctmgrError::UnknownOption(w.raw()));
        };
        set.shown.retain(|(key, _)| *key != shown);
        set.shown.push((shown, show));
    }
    Ok(set)
}

/// The " Settings" lines of an add or modify.
fn settings(shown: &[(&'static str, String)]) -> String {
    shown
        .iter()
        .map(|(k, v)| format!("  {k:<15}= {v}\n"))
        .collect()
}

async fn add(s: &mut Session<'_>, words: &[Word]) -> Outcome {
    let set = parse_set(words, true)?;
    if set.names.is_empty() {
        return Err(SacctmgrError::NeedName("qos"));
    }
    if set.names.iter().any(|n| n.trim().is_empty()) {
        return Err(SacctmgrError::BlankName);
    }
    let mut change = Change::AddQos(AddQosRequest {
        names: set.names.clone(),
        set: Some(set.edit.clone()),
        commit: false,
    });
    let reply = s.preview(&mut change, "Problem adding QOS").await?;
    if reply.names.is_empty() {
        s.out(" Nothing new added.\n");
        return Ok(Done::Failed);
    }
    let mut shown = set.shown.clone();
    if !shown.iter().any(|(k, _)| *k == "Description") {
        // Slurm describes a new QOS by its name; several names get their own each.
        let names = reply.names.join(",");
        shown.insert(0, ("Description", names));
    }
    s.out(&format!(
        " Adding QOS(s)\n{} Settings\n{}",
        indented(&reply.names),
        settings(&shown)
    ));
    s.confirm(&mut change, "Problem adding QOS").await
}

async fn modify(s: &mut Session<'_>, parts: Parts) -> Outcome {
    let cond = parse_cond(&parts.cond)?;
    let set = parse_set(&parts.set, false)?;
    if set.edit == QosEdit::default() {
        return Err(SacctmgrError::NothingToSet);
    }
    let names = if cond.names.is_empty() {
        if !s.commit_check(
            "You didn't set any conditions with 'WHERE'.\nAre you sure you want to continue?",
        ) {
            s.out("Aborted\n");
            return Ok(Done::Ok);
        }
        s.list_qos(proto::ListQosRequest::default())
            .await?
            .into_iter()
            .map(|q| q.name)
            .collect()
    } else {
        cond.names
    };
    let mut change = Change::ModifyQos(ModifyQosRequest {
        names,
        set: Some(set.edit),
        commit: false,
    });
    let reply = s.preview(&mut change, "Error with request").await?;
    if reply.names.is_empty() {
        s.out(" Nothing modified\n");
        return Ok(Done::Failed);
    }
    s.out(&format!(" Modified qos...\n{}", indented(&reply.names)));
    s.confirm(&mut change, "Error with request").await
}

async fn delete(s: &mut Session<'_>, words: &[Word]) -> Outcome {
    let cond = parse_cond(words)?;
    if cond.names.is_empty() {
        return Err(SacctmgrError::NoConditions);
    }
    let mut change = Change::DeleteQos(DeleteQosRequest {
        names: cond.names,
        commit: false,
    });
    let reply = s.preview(&mut change, "Error with request").await?;
    if reply.names.is_empty() {
        s.out(" Nothing deleted\n");
        return Ok(Done::Failed);
    }
    s.out(&format!(" Deleting QOS(s)...\n{}", indented(&reply.names)));
    s.confirm(&mut change, "Error with request").await
}

async fn list(s: &mut Session<'_>, words: &[Word]) -> Outcome {
    let cond = parse_cond(words)?;
    let format = match cond.format.is_empty() {
        true => DEFAULT_FORMAT.to_string(),
        false => cond.format.join(","),
    };
    let chosen = parse_format(&format)?;
    let qos = s
        .list_qos(proto::ListQosRequest {
            names: cond.names,
            with_deleted: cond.with_deleted,
            ..Default::default()
        })
        .await?;
    let rows: Vec<Vec<String>> = qos
        .iter()
        .map(|q| chosen.iter().map(|c| value(q, c.field)).collect())
        .collect();
    s.print_table(&chosen, &rows);
    Ok(Done::Ok)
}

/// A TRES list as the dbd stores it, as sacctmgr shows it (`cpu=4,mem=2048M`).
fn shown(stored: &str) -> String {
    Tres::from_stored(stored)
        .map(|t| t.to_string())
        .unwrap_or_default()
}

/// A QOS's value for a field. Preemption, grace time and usage thresholds are not QOS
/// settings Sluice has: they show what Slurm shows for a QOS that sets none (no grace time,
/// the cluster's preempt mode).
pub fn value(q: &proto::Qos, field: Field) -> String {
    let l = q.limits.clone().unwrap_or_default();
    let n = |v: Option<u32>| v.map(|v| v.to_string()).unwrap_or_default();
    match field {
        Field::Name => q.name.clone(),
        Field::Id => q.id.to_string(),
        Field::Description => q.description.clone(),
        Field::Priority => q.priority.to_string(),
        Field::Flags => q.flags.clone(),
        Field::GraceTime => "00:00:00".to_string(),
        Field::PreemptMode => "cluster".to_string(),
        // Absent from an older dbd's answer: Slurm's default.
        Field::UsageFactor => q
            .usage_factor
            .and_then(UsageFactor::from_f64)
            .unwrap_or_default()
            .to_string(),
        Field::MaxWall => l
            .max_wall_minutes
            .map(|m| TimeLimit::Minutes(m).to_string())
            .unwrap_or_default(),
        Field::MaxTres => shown(&l.max_tres_per_job),
        Field::MaxTresPerUser => shown(&l.max_tres_per_user),
        Field::MaxTresMins => shown(&l.max_tres_mins_per_job),
        Field::MaxTresPerAccount => shown(&l.max_tres_per_account),
        Field::MaxJobsPerAccount => n(l.max_jobs_per_account),
        Field::MaxSubmitPerAccount => n(l.max_submit_jobs_per_account),
        Field::MinTres => shown(&l.min_tres_per_job),
        Field::MaxTresPerNode => shown(&l.max_tres_per_node),
        Field::GrpTresMins => shown(&l.grp_tres_mins),
        Field::MaxJobsPerUser => n(l.max_jobs_per_user),
        Field::MaxSubmitPerUser => n(l.max_submit_jobs_per_user),
        Field::GrpTres => shown(&l.grp_tres),
        Field::GrpJobs => n(l.grp_jobs),
        Field::GrpSubmit => n(l.grp_submit_jobs),
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(ws: &[&str]) -> Vec<Word> {
        ws.iter().map(|w| Word::parse(w)).collect()
    }

    #[test]
    fn settings_are_parsed_and_named() {
        let set = parse_set(
            &words(&[
                "high",
                "Priority=10",
                "MaxWall=1:00:00",
                "MaxTRESPU=cpu=4",
                "MaxJobsPU=2",
                "MaxSubmitJobsPerUser=5",
                "GrpTRES=cpu=8,mem=2G",
                "GrpJobs=-1",
                "Flags=DenyOnLimit",
                "MaxTRESMins=cpu=600",
                "MaxTRESPA=cpu=12",
                "MaxJobsPerAccount=3",
                "MaxSubmitPA=5",
                "MinTRES=node=2",
                "MaxTRESPerNode=cpu=4",
                "GrpTRESMins=cpu=6000",
                "UsageFactor=1.5",
            ]),
            true,
        )
        .unwrap();
        assert_eq!(set.names, vec!["high"]);
        let e = &set.edit;
        assert_eq!(e.priority, Some(10));
        assert_eq!(e.max_wall_minutes, Some(60));
        assert_eq!(e.max_tres_per_user.as_deref(), Some("cpu=4"));
        assert_eq!(e.max_jobs_per_user, Some(2));
        assert_eq!(e.max_submit_jobs_per_user, Some(5));
        assert_eq!(e.grp_tres.as_deref(), Some("cpu=8,mem=2G"));
        assert_eq!(e.grp_jobs, Some(-1));
        assert_eq!(e.flags.as_deref(), Some("DenyOnLimit"));
        assert_eq!(e.max_tres_mins_per_job.as_deref(), Some("cpu=600"));
        assert_eq!(e.max_tres_per_account.as_deref(), Some("cpu=12"));
        assert_eq!(e.max_jobs_per_account, Some(3));
        assert_eq!(e.max_submit_jobs_per_account, Some(5));
        assert_eq!(e.min_tres_per_job.as_deref(), Some("node=2"));
        assert_eq!(e.max_tres_per_node.as_deref(), Some("cpu=4"));
        assert_eq!(e.grp_tres_mins.as_deref(), Some("cpu=6000"));
        assert_eq!(e.usage_factor, Some(1.5));
        let reset = parse_set(&words(&["UsageFactor=-1"]), false).unwrap();
        assert_eq!(reset.edit.usage_factor, Some(-1.0));
        assert_eq!(
            settings(&set.shown[..2]),
            "  Priority       = 10\n  MaxWall        = 1:00:00\n"
        );
    }

    #[test]
    fn bad_settings_are_refused_by_name() {
        for (w, msg) in [
            ("Priority=high", " Invalid limit Priority=high"),
            ("MaxJobsPU=x", " Invalid limit MaxJobsPU=x"),
            ("UsageFactor=-2", " Invalid limit UsageFactor=-2"),
            ("UsageFactor=fast", " Invalid limit UsageFactor=fast"),
            (
                "GrpTRES=gpu=1",
                " Invalid limit GrpTRES: Invalid TRES name 'gpu'",
            ),
            (
                "Flags=Bogus",
                " Invalid limit Flags: Unknown QOS flag Bogus",
            ),
        ] {
            let e = parse_set(&words(&[w]), false).unwrap_err();
            assert_eq!(e.to_string(), msg);
        }
        let e = parse_set(&words(&["Color=red"]), false).unwrap_err();
        assert!(e.to_string().contains("Unknown option: Color=red"), "{e}");
    }

    #[test]
    fn values_print_as_sacctmgr_shows_them() {
        let q = proto::Qos {
            id: 2,
            name: "high".into(),
            priority: 10,
            limits: Some(proto::QosLimits {
                max_wall_minutes: Some(90),
                max_tres_per_user: "cpu=4".into(),
                grp_tres: "cpu=8,mem=2048".into(),
                max_jobs_per_user: Some(2),
                max_tres_mins_per_job: "cpu=600,node=90".into(),
                max_tres_per_account: "cpu=12".into(),
                max_jobs_per_account: Some(3),
                max_submit_jobs_per_account: Some(5),
                min_tres_per_job: "node=2".into(),
                max_tres_per_node: "cpu=4".into(),
                grp_tres_mins: "cpu=6000".into(),
                ..Default::default()
            }),
            usage_factor: Some(0.25),
            ..Default::default()
        };
        let v = |f| value(&q, f);
        assert_eq!(v(Field::UsageFactor), "0.250000");
        let older = proto::Qos {
            usage_factor: None,
            ..q.clone()
        };
        assert_eq!(value(&older, Field::UsageFactor), "1.000000");
        assert_eq!(v(Field::MaxTresMins), "cpu=600,node=90");
        assert_eq!(v(Field::MaxTresPerAccount), "cpu=12");
        assert_eq!(v(Field::MaxJobsPerAccount), "3");
        assert_eq!(v(Field::MaxSubmitPerAccount), "5");
        assert_eq!(v(Field::MinTres), "node=2");
        assert_eq!(v(Field::MaxTresPerNode), "cpu=4");
        assert_eq!(v(Field::GrpTresMins), "cpu=6000");
        assert_eq!(v(Field::Priority), "10");
        assert_eq!(v(Field::MaxWall), "01:30:00");
        assert_eq!(v(Field::MaxTresPerUser), "cpu=4");
        assert_eq!(v(Field::GrpTres), "cpu=8,mem=2048M");
        assert_eq!(v(Field::MaxJobsPerUser), "2");
        assert_eq!(v(Field::GrpJobs), "");
    }
}
