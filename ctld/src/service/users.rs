//! Users and groups as this host knows them. A request says which groups its sender is in,
//! but only what the controller can check is trusted: as Slurm does, the uid's groups are
//! looked up here (`getgrouplist`). Lookups are cached for a minute, since every submission
//! needs them and the system's databases may be slow.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

const TTL: Duration = Duration::from_secs(60);

/// A user as this host knows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UserInfo {
    /// Login name (the uid as a number when the host has no such user).
    pub name: String,
    /// Primary group.
    pub gid: u32,
    /// Every group, primary included (empty for an unknown user).
    pub groups: Vec<u32>,
}

/// A cache of user lookups.
#[derive(Debug, Default)]
pub struct Users {
    cache: Mutex<HashMap<u32, (Instant, UserInfo)>>,
}

impl Users {
    /// `uid` as this host knows it.
    pub fn get(&self, uid: u32) -> UserInfo {
        if let Ok(cache) = self.cache.lock()
            && let Some((at, info)) = cache.get(&uid)
            && at.elapsed() < TTL
        {
            return info.clone();
        }
        let info = lookup(uid);
        if let Ok(mut cache) = self.cache.lock() {
            cache.insert(uid, (Instant::now(), info.clone()));
        }
        info
    }

    /// The login name of `uid`.
    pub fn name(&self, uid: u32) -> String {
        self.get(uid).name
    }
}

fn lookup(uid: u32) -> UserInfo {
    use nix::unistd::{Uid, User, getgrouplist};
    let Some(user) = User::from_uid(Uid::from_raw(uid)).ok().flatten() else {
        return UserInfo {
            name: uid.to_string(),
            gid: uid,
            groups: Vec::new(),
        };
    };
    let groups = std::ffi::CString::new(user.name.clone())
        .ok()
        .and_then(|name| getgrouplist(&name, user.gid).ok())
        .map(|g| g.into_iter().map(|g| g.as_raw()).collect())
        .unwrap_or_else(|| vec![user.gid.as_raw()]);
    UserInfo {
        name: user.name,
        gid: user.gid.as_raw(),
        groups,
    }
}

/// The name of group `gid` (its number when the host has no such group).
pub fn group_name(gid: u32) -> String {
    nix::unistd::Group::from_gid(nix::unistd::Gid::from_raw(gid))
        .ok()
        .flatten()
        .map_or_else(|| gid.to_string(), |g| g.name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn root_is_known_with_its_groups_and_unknown_uids_have_none() {
        let users = Users::default();
        let root = users.get(0);
        assert_eq!((root.name.as_str(), root.gid), ("root", 0));
        assert!(root.groups.contains(&0));
        let ghost = users.get(3_999_999_999);
        assert_eq!(ghost.name, "3999999999");
        assert!(ghost.groups.is_empty());
        assert_eq!(users.get(0), root, "cached answers are the same");
    }
}
