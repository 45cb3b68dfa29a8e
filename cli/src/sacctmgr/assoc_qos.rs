//! The QOS of associations in `modify user|account ... set`: `QOS=a,b` (the list; empty: as
//! the parent's again), `QOS+=c`, `QOS-=d`, `DefaultQOS=x` (`-1` or empty: as the parent's).

use sluice_wire::proto::ModifyAssocQosRequest;

use super::args::{ModeList, Op, Word};
use super::error::SacctmgrError;
use super::session::{Change, Outcome, Session};
use crate::words::is_keyword;

/// A QOS change to associations, before it names them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct QosSetting {
    /// `QOS=`: the new list.
    pub set_list: Option<Vec<String>>,
    /// `QOS+=`.
    pub add: Vec<String>,
    /// `QOS-=`.
    pub remove: Vec<String>,
    /// `DefaultQOS=` (`""` clears).
    pub default_qos: Option<String>,
}

impl QosSetting {
    /// The request for the associations named.
    pub fn request(
        self,
        user_associations: bool,
        users: Vec<String>,
        accounts: Vec<String>,
        clusters: Vec<String>,
    ) -> ModifyAssocQosRequest {
        ModifyAssocQosRequest {
            user_associations,
            users,
            accounts,
            clusters,
            set_list: self.set_list.is_some(),
            list: self.set_list.unwrap_or_default(),
            add: self.add,
            remove: self.remove,
            default_qos: self.default_qos,
            commit: false,
        }
    }
}

/// Takes the QOS words out of `words`: the rest, and the change they make (`None` when there
/// are none).
pub fn take(words: &[Word]) -> Result<(Vec<Word>, Option<QosSetting>), SacctmgrError> {
    let mut rest = Vec::new();
    let mut list = ModeList::default();
    let mut default_qos = None;
    for w in words {
        match w {
            Word::Pair { key, op, value } if is_keyword(key, "QosLevel", 3) => {
                if *op != Op::Set && value.trim().is_empty() {
                    return Err(SacctmgrError::EmptyEdit {
                        what: "QOS",
                        action: if *op == Op::Add { "add" } else { "remove" },
                    });
                }
                list.apply(*op, value)?;
            }
            Word::Pair {
                key,
                op: Op::Set,
                value,
            } if is_keyword(key, "DefaultQOS", 8) => {
                let v = value.trim();
                default_qos = Some(if v == "-1" {
                    String::new()
                } else {
                    v.to_string()
                });
            }
            other => rest.push(other.clone()),
        }
    }
    if !list.given && default_qos.is_none() {
        return Ok((rest, None));
    }
    let mut s = QosSetting {
        default_qos,
        ..QosSetting::default()
    };
    if list.given {
        if list.is_edit() {
            for item in &list.items {
                match item.split_at(1) {
                    ("+", name) => s.add.push(name.to_string()),
                    (_, name) => s.remove.push(name.to_string()),
                }
            }
        } else {
            s.set_list = Some(list.items);
        }
    }
    Ok((rest, Some(s)))
}

/// Sends the QOS change and prints Slurm's report: the associations changed.
pub async fn modify(s: &mut Session<'_>, req: ModifyAssocQosRequest, heading: &str) -> Outcome {
    let users = req.user_associations;
    super::limits::modify_assocs(s, Change::ModifyAssocQos(req), users, heading).await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(ws: &[&str]) -> Vec<Word> {
        ws.iter().map(|w| Word::parse(w)).collect()
    }

    #[test]
    fn qos_words_are_taken_and_the_rest_kept() {
        let (rest, s) = take(&words(&["QOS=high,normal", "DefaultQOS=high", "MaxJobs=2"])).unwrap();
        assert_eq!(rest, words(&["MaxJobs=2"]));
        let s = s.unwrap();
        assert_eq!(
            s.set_list,
            Some(vec!["high".to_string(), "normal".to_string()])
        );
        assert_eq!(s.default_qos.as_deref(), Some("high"));
        let (_, s) = take(&words(&["qos+=high", "qos-=low"])).unwrap();
        let s = s.unwrap();
        assert_eq!((s.add, s.remove), (vec!["high".into()], vec!["low".into()]));
        let (_, s) = take(&words(&["DefaultQOS=-1"])).unwrap();
        assert_eq!(s.unwrap().default_qos.as_deref(), Some(""));
        let (_, none) = take(&words(&["Fairshare=2"])).unwrap();
        assert!(none.is_none());
    }

    #[test]
    fn mixed_modes_and_empty_edits_are_refused() {
        let e = take(&words(&["QOS=a", "QOS+=b"])).unwrap_err();
        assert!(e.to_string().contains("can't use '=' and '+'"), "{e}");
        let e = take(&words(&["QOS+="])).unwrap_err();
        assert_eq!(e.to_string(), " You didn't specify any QOS to add");
    }
}
