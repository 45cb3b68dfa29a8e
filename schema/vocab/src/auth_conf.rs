//! `AuthType` and `AuthInfo`, as `slurm.conf` and `slurmdbd.conf` give them: how requests are
//! authenticated. `auth/slurm` (the default): tokens signed with `slurm.key`, or by the local
//! credential service for users who cannot read it. `auth/munge`: credentials of the MUNGE
//! daemon; `AuthInfo=socket=<path>` names munged's socket (else libmunge's default).

use std::path::PathBuf;

use crate::conf::{ConfError, ConfFile, Pair};

/// How requests are authenticated.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum AuthConf {
    /// `auth/slurm`: `slurm.key` tokens.
    #[default]
    Slurm,
    /// `auth/munge`: MUNGE credentials, from munged at `socket` (`None`: libmunge's default).
    Munge { socket: Option<PathBuf> },
}

impl AuthConf {
    /// The `AuthType` and `AuthInfo` of `file` (`auth/slurm` when not given).
    pub fn from_file(file: &ConfFile) -> Result<Self, ConfError> {
        let info = file.get("AuthInfo");
        match file.get("AuthType") {
            Some(p) => Self::read(file, p, info),
            None => Self::read_info(file, info, false).map(|_| Self::Slurm),
        }
    }

    /// The value of an `AuthType` pair, with `AuthInfo` if given.
    pub fn read(file: &ConfFile, p: &Pair, info: Option<&Pair>) -> Result<Self, ConfError> {
        match p.value.trim().to_ascii_lowercase().as_str() {
            "auth/slurm" => Self::read_info(file, info, false).map(|_| Self::Slurm),
            "auth/munge" => Self::read_info(file, info, true).map(|socket| Self::Munge { socket }),
            _ => Err(file.bad_value(p, "expected auth/slurm or auth/munge")),
        }
    }

    /// `AuthInfo`'s options: only `socket=<path>`, and only with `auth/munge`.
    fn read_info(
        file: &ConfFile,
        info: Option<&Pair>,
        munge: bool,
    ) -> Result<Option<PathBuf>, ConfError> {
        let Some(p) = info else { return Ok(None) };
        let mut socket = None;
        for option in p.value.split(',').map(str::trim).filter(|o| !o.is_empty()) {
            match option.split_once('=') {
                Some((name, path)) if name.eq_ignore_ascii_case("socket") && munge => {
                    if path.is_empty() {
                        return Err(file.bad_value(p, "socket= needs a path"));
                    }
                    socket = Some(PathBuf::from(path));
                }
                _ => {
                    let why = if munge {
                        format!("option {option} is not supported (only socket=<path>)")
                    } else {
                        format!("option {option} is not supported with auth/slurm")
                    };
                    return Err(file.bad_value(p, why));
                }
            }
        }
        Ok(socket)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn conf(text: &str) -> Result<AuthConf, ConfError> {
        AuthConf::from_file(&ConfFile::parse(Path::new("/x/slurm.conf"), text).unwrap())
    }

    #[test]
    fn auth_types_and_the_munge_socket_are_read() {
        assert_eq!(conf("ClusterName=c\n").unwrap(), AuthConf::Slurm);
        assert_eq!(conf("AuthType=auth/slurm\n").unwrap(), AuthConf::Slurm);
        assert_eq!(
            conf("AuthType=auth/munge\n").unwrap(),
            AuthConf::Munge { socket: None }
        );
        assert_eq!(
            conf("AuthType=auth/munge\nAuthInfo=socket=/run/m.sock\n").unwrap(),
            AuthConf::Munge {
                socket: Some("/run/m.sock".into())
            }
        );
    }

    #[test]
    fn unknown_types_and_options_are_errors_naming_them() {
        let e = conf("AuthType=auth/none\n").unwrap_err().to_string();
        assert!(e.contains("expected auth/slurm or auth/munge"), "{e}");
        let e = conf("AuthType=auth/munge\nAuthInfo=ttl=5\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("option ttl=5 is not supported"), "{e}");
        let e = conf("AuthInfo=socket=/s\n").unwrap_err().to_string();
        assert!(e.contains("not supported with auth/slurm"), "{e}");
    }
}
