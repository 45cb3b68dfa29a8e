//! Mail about jobs (`--mail-type`, `--mail-user`): the program the controller runs for it
//! (`MailProg`, an absolute path, Slurm's default `/bin/mail`) and the domain added to a user
//! name without one (`MailDomain`).

use std::path::PathBuf;

use super::non_empty;
use crate::conf::{ConfError, ConfFile, Pair};

/// Slurm's default `MailProg`.
pub const DEFAULT_MAIL_PROG: &str = "/bin/mail";

/// `MailProg` and `MailDomain`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MailConf {
    /// `MailProg`: run as `MailProg -s <subject> <recipient>`.
    pub mail_prog: PathBuf,
    /// `MailDomain`: appended (`user@domain`) to a recipient without `@`.
    pub mail_domain: Option<String>,
}

impl Default for MailConf {
    fn default() -> Self {
        Self {
            mail_prog: PathBuf::from(DEFAULT_MAIL_PROG),
            mail_domain: None,
        }
    }
}

impl MailConf {
    /// Applies one top-level pair; `false` when the key is not one of these.
    pub(crate) fn apply(&mut self, file: &ConfFile, p: &Pair) -> Result<bool, ConfError> {
        match p.key.to_ascii_lowercase().as_str() {
            "mailprog" => {
                let v = non_empty(file, p)?;
                if !v.starts_with('/') {
                    return Err(file.bad_value(p, "expected an absolute path"));
                }
                self.mail_prog = PathBuf::from(v);
            }
            "maildomain" => {
                let v = non_empty(file, p)?;
                self.mail_domain = Some(v.trim_start_matches('@').to_string());
            }
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// The address mail for `user` goes to: `user` itself when it names a domain, else with
    /// `MailDomain` when set.
    pub fn recipient(&self, user: &str) -> String {
        match &self.mail_domain {
            Some(domain) if !user.contains('@') => format!("{user}@{domain}"),
            _ => user.to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster_conf::CtldConf;
    use std::path::Path;

    const BASE: &str = "ClusterName=a\nSlurmctldHost=ctl\n";

    #[test]
    fn defaults_and_settings() {
        let (c, _) = CtldConf::parse(Path::new("slurm.conf"), BASE).unwrap();
        assert_eq!(c.mail.mail_prog, PathBuf::from("/bin/mail"));
        assert_eq!(c.mail.recipient("alice"), "alice");
        let text = format!("{BASE}MailProg=/usr/bin/mailx\nMailDomain=example.org\n");
        let (c, w) = CtldConf::parse(Path::new("slurm.conf"), &text).unwrap();
        assert!(w.is_empty(), "{w:?}");
        assert_eq!(c.mail.mail_prog, PathBuf::from("/usr/bin/mailx"));
        assert_eq!(c.mail.recipient("alice"), "alice@example.org");
        assert_eq!(c.mail.recipient("bob@x.net"), "bob@x.net");
        let bad = format!("{BASE}MailProg=mail\n");
        assert!(CtldConf::parse(Path::new("slurm.conf"), &bad).is_err());
    }
}
