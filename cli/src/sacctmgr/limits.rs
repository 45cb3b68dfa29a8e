//! Association limits in `modify user|account ... set`: `MaxJobs`, `MaxSubmitJobs`, `MaxWall`,
//! `MaxTRES[PerJob]`, `MaxCPUs`, `MaxNodes`, `GrpJobs`, `GrpSubmitJobs`, `GrpTRES`, `GrpCPUs`,
//! `GrpMemory`, `GrpNodes`, `GrpTRESMins`, `GrpCPUMins` (`-1` clears one), and how
//! `show association` prints them.

use sluice_vocab::assoc_limits::{Tres, parse_edit};
use sluice_vocab::cluster_conf::{TimeLimit, parse_time_limit};
use sluice_wire::proto::{self, AssocLimitsEdit, ModifyAssocLimitsRequest};

use super::args::Word;
use super::error::SacctmgrError;
use super::fields::Field;
use super::session::{Change, Done, Outcome, Session};
use crate::words::is_keyword;

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

/// A TRES-minutes count: `-1` clears, otherwise a whole number (wider than a job count).
fn minutes(key: &str, value: &str) -> Result<i64, SacctmgrError> {
    let v = value.trim();
    if v == "-1" {
        return Ok(-1);
    }
    v.parse::<u64>()
        .ok()
        .and_then(|n| i64::try_from(n).ok())
        .ok_or_else(|| SacctmgrError::InvalidLimit(format!("{key}={value}")))
}

/// Adds `entry` (`cpu=4`) to a TRES list being built.
fn push_tres(list: &mut Option<String>, entry: String) {
    match list {
        Some(l) => {
            l.push(',');
            l.push_str(&entry);
        }
        None => *list = Some(entry),
    }
}

/// Checks a TRES list the way the dbd will read it, so a typo is named here.
fn tres_list(key: &str, value: &str) -> Result<String, SacctmgrError> {
    parse_edit(value).map_err(|e| SacctmgrError::InvalidLimit(format!("{key}: {e}")))?;
    Ok(value.to_string())
}

/// Takes the limit words out of `words`: the rest, and the edit they make (`None` when there
/// are none).
pub fn take(words: &[Word]) -> Result<(Vec<Word>, Option<AssocLimitsEdit>), SacctmgrError> {
    let mut rest = Vec::new();
    let mut e = AssocLimitsEdit::default();
    for w in words {
        let Word::Pair { key, value, .. } = w else {
            rest.push(w.clone());
            continue;
        };
        let k = key.as_str();
        if is_keyword(k, "MaxJobs", 4) {
            e.max_jobs = Some(count(k, value)?);
        } else if is_keyword(k, "MaxSubmitJobs", 4) {
            e.max_submit_jobs = Some(count(k, value)?);
        } else if is_keyword(k, "MaxWallDurationPerJob", 4) {
            e.max_wall_minutes = Some(match parse_time_limit(value) {
                Ok(TimeLimit::Minutes(m)) => i64::from(m),
                Ok(TimeLimit::Unlimited) => -1,
                Err(_) => return Err(SacctmgrError::InvalidLimit(format!("{k}={value}"))),
            });
        } else if is_keyword(k, "MaxTRESPerJob", 7) {
            e.max_tres_per_job = Some(tres_list(k, value)?);
        } else if is_keyword(k, "MaxCPUs", 4) {
            push_tres(&mut e.max_tres_per_job, format!("cpu={}", count(k, value)?));
        } else if is_keyword(k, "MaxNodes", 4) {
            push_tres(
                &mut e.max_tres_per_job,
                format!("node={}", count(k, value)?),
            );
        } else if is_keyword(k, "GrpJobs", 4) {
            e.grp_jobs = Some(count(k, value)?);
        } else if is_keyword(k, "GrpSubmitJobs", 4) {
            e.grp_submit_jobs = Some(count(k, value)?);
        } else if is_keyword(k, "GrpTRESMins", 8) {
            e.grp_tres_mins = Some(tres_list(k, value)?);
        } else if is_keyword(k, "GrpCPUMins", 7) {
            push_tres(&mut e.grp_tres_mins, format!("cpu={}", minutes(k, value)?));
        } else if is_keyword(k, "GrpTRES", 7) {
            e.grp_tres = Some(tres_list(k, value)?);
        } else if is_keyword(k, "GrpCPUs", 4) {
            push_tres(&mut e.grp_tres, format!("cpu={}", count(k, value)?));
        } else if is_keyword(k, "GrpMemory", 4) {
            let v = if value.trim() == "-1" {
                "-1".to_string()
            } else {
                value.clone()
            };
            push_tres(&mut e.grp_tres, tres_list(k, &format!("mem={v}"))?);
        } else if is_keyword(k, "GrpNodes", 4) {
            push_tres(&mut e.grp_tres, format!("node={}", count(k, value)?));
        } else {
            rest.push(w.clone());
        }
    }
    let edit = (e != AssocLimitsEdit::default()).then_some(e);
    Ok((rest, edit))
}

/// The settings lines `add user|account` prints for the limits it gives the new
/// associations, in Slurm's order (`  MaxJobs       = 2`); `-1` (nothing to clear on a new
/// association) prints nothing.
pub fn settings_lines(e: &AssocLimitsEdit) -> String {
    let mut out = String::new();
    let mut line = |name: &str, value: String| out.push_str(&format!("  {name:<14}= {value}\n"));
    let n = |v: Option<i64>| v.filter(|v| *v >= 0).map(|v| v.to_string());
    let t = |v: &Option<String>| {
        let edit = parse_edit(v.as_deref()?).ok()?;
        let mut tres = Tres::default();
        tres.apply(&edit);
        (!tres.is_empty()).then(|| tres.to_string())
    };
    if let Some(v) = n(e.grp_jobs) {
        line("GrpJobs", v);
    }
    if let Some(v) = n(e.grp_submit_jobs) {
        line("GrpSubmitJobs", v);
    }
    if let Some(v) = t(&e.grp_tres) {
        line("GrpTRES", v);
    }
    if let Some(v) = t(&e.grp_tres_mins) {
        line("GrpTRESMins", v);
    }
    if let Some(v) = n(e.max_jobs) {
        line("MaxJobs", v);
    }
    if let Some(v) = n(e.max_submit_jobs) {
        line("MaxSubmitJobs", v);
    }
    if let Some(v) = t(&e.max_tres_per_job) {
        line("MaxTRESPerJob", v);
    }
    if let Some(m) = e.max_wall_minutes.and_then(|m| u32::try_from(m).ok()) {
        line("MaxWall", TimeLimit::Minutes(m).to_string());
    }
    out
}

/// Sends the limit change and prints Slurm's report: the associations changed.
pub async fn modify(s: &mut Session<'_>, req: ModifyAssocLimitsRequest, heading: &str) -> Outcome {
    let users = req.user_associations;
    modify_assocs(s, Change::ModifyAssocLimits(req), users, heading).await
}

/// Sends `change`, a change of associations (of users when `users`), and prints Slurm's
/// report under `heading`: the associations changed.
pub async fn modify_assocs(
    s: &mut Session<'_>,
    mut change: Change,
    users: bool,
    heading: &str,
) -> Outcome {
    let reply = s.preview(&mut change, "Error with request").await?;
    if reply.names.is_empty() {
        s.out(" Nothing modified\n");
        return Ok(Done::Failed);
    }
    let mut text = format!(" {heading}\n");
    for name in &reply.names {
        let mut parts = name.split('\t');
        let (c, a, u) = (
            parts.next().unwrap_or(""),
            parts.next().unwrap_or(""),
            parts.next().unwrap_or(""),
        );
        if users {
            text.push_str(&format!("  C = {c:<10} A = {a:<10} U = {u:<9}\n"));
        } else {
            text.push_str(&format!("  C = {c:<10} A = {a:<10}\n"));
        }
    }
    s.out(&text);
    s.confirm(&mut change, "Error with request").await
}

/// A TRES list as the dbd stores it, as sacctmgr shows it (`cpu=4,mem=2048M`).
fn shown(stored: &str) -> String {
    Tres::from_stored(stored)
        .map(|t| t.to_string())
        .unwrap_or_default()
}

/// One resource of a stored TRES list (`GrpNodes`, `MaxNodes` ...), blank when not limited.
fn one(stored: &str, pick: fn(&Tres) -> Option<u64>) -> String {
    Tres::from_stored(stored)
        .and_then(|t| pick(&t))
        .map(|v| v.to_string())
        .unwrap_or_default()
}

/// An association's limit column, `None` for fields that are not limits.
pub fn value(l: &proto::AssocLimits, field: Field) -> Option<String> {
    let n = |v: Option<u32>| v.map(|v| v.to_string()).unwrap_or_default();
    Some(match field {
        Field::MaxJobs => n(l.max_jobs),
        Field::MaxSubmit => n(l.max_submit_jobs),
        Field::MaxWall => l
            .max_wall_minutes
            .map(|m| TimeLimit::Minutes(m).to_string())
            .unwrap_or_default(),
        Field::MaxTres => shown(&l.max_tres_per_job),
        Field::MaxNodes => one(&l.max_tres_per_job, |t| t.node),
        Field::GrpJobs => n(l.grp_jobs),
        Field::GrpSubmit => n(l.grp_submit_jobs),
        Field::GrpTres => shown(&l.grp_tres),
        Field::GrpTresMins => shown(&l.grp_tres_mins),
        Field::GrpNodes => one(&l.grp_tres, |t| t.node),
        Field::GrpMemory => one(&l.grp_tres, |t| t.mem_mb),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(ws: &[&str]) -> Vec<Word> {
        ws.iter().map(|w| Word::parse(w)).collect()
    }

    #[test]
    fn limit_words_are_taken_and_the_rest_kept() {
        let (rest, edit) = take(&words(&[
            "MaxJobs=3",
            "maxsubmit=-1",
            "MaxWall=1-00:00:00",
            "GrpCPUs=8",
            "GrpMem=2G",
            "MaxNodes=2",
            "GrpCPUMins=600",
            "DefaultAccount=x",
        ]))
        .unwrap();
        assert_eq!(rest, words(&["DefaultAccount=x"]));
        let e = edit.unwrap();
        assert_eq!(e.max_jobs, Some(3));
        assert_eq!(e.max_submit_jobs, Some(-1));
        assert_eq!(e.max_wall_minutes, Some(1440));
        assert_eq!(e.grp_tres.as_deref(), Some("cpu=8,mem=2G"));
        assert_eq!(e.max_tres_per_job.as_deref(), Some("node=2"));
        assert_eq!(e.grp_tres_mins.as_deref(), Some("cpu=600"));
        let (_, edit) = take(&words(&["GrpTRESMins=cpu=100,node=-1", "GrpTRES=cpu=2"])).unwrap();
        let e = edit.unwrap();
        assert_eq!(e.grp_tres_mins.as_deref(), Some("cpu=100,node=-1"));
        assert_eq!(e.grp_tres.as_deref(), Some("cpu=2"));
        let (_, none) = take(&words(&["Description=x"])).unwrap();
        assert!(none.is_none());
    }

    #[test]
    fn add_prints_the_limits_it_sets_in_slurms_order() {
        let (_, edit) = take(&words(&[
            "MaxWall=90",
            "MaxJobs=2",
            "GrpTRES=cpu=4,mem=1G",
            "GrpCPUMins=600",
            "GrpJobs=-1",
        ]))
        .unwrap();
        assert_eq!(
            settings_lines(&edit.unwrap()),
            "  GrpTRES       = cpu=4,mem=1024M\n  GrpTRESMins   = cpu=600\n  \
             MaxJobs       = 2\n  MaxWall       = 01:30:00\n"
        );
    }

    #[test]
    fn bad_limits_are_named() {
        for (w, msg) in [
            ("MaxJobs=lots", " Invalid limit MaxJobs=lots"),
            (
                "GrpTRES=gpu=1",
                " Invalid limit GrpTRES: Invalid TRES name 'gpu'",
            ),
            ("MaxWall=soon", " Invalid limit MaxWall=soon"),
        ] {
            let e = take(&words(&[w])).unwrap_err();
            assert_eq!(e.to_string(), msg);
        }
    }

    #[test]
    fn limits_print_as_sacctmgr_shows_them() {
        let l = proto::AssocLimits {
            max_jobs: Some(2),
            max_wall_minutes: Some(90),
            max_tres_per_job: "cpu=4,node=1".into(),
            grp_tres: "cpu=8,mem=2048".into(),
            grp_tres_mins: "cpu=600".into(),
            ..Default::default()
        };
        let v = |f| value(&l, f).unwrap();
        assert_eq!(v(Field::MaxJobs), "2");
        assert_eq!(v(Field::MaxWall), "01:30:00");
        assert_eq!(v(Field::MaxTres), "cpu=4,node=1");
        assert_eq!(v(Field::MaxNodes), "1");
        assert_eq!(v(Field::GrpTres), "cpu=8,mem=2048M");
        assert_eq!(v(Field::GrpMemory), "2048");
        assert_eq!(v(Field::GrpTresMins), "cpu=600");
        assert_eq!(v(Field::GrpJobs), "");
        assert!(value(&l, Field::Account).is_none());
    }
}
