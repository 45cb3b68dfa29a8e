//! `sbatch --get-user-env`: a batch script whose environment has `SLURM_GET_USER_ENV=1` also
//! gets its user's login environment, loaded here (root only, see
//! [`sluice_wire::login_env`]), as Slurm's node daemon does. The job's own variables win over
//! the login ones; a failure fails the launch.

use crate::env::Env;

/// The job variable asking for the login environment.
pub const FLAG: &str = "SLURM_GET_USER_ENV";

/// Whether `env` asks for the login environment.
pub fn asked(env: &Env) -> bool {
    env.get(FLAG).is_some_and(|v| v.trim() == "1")
}

/// Adds `user`'s login environment to `env` (whose variables win).
pub async fn add_login_env(env: &mut Env, user: &str) -> Result<(), String> {
    for (name, value) in sluice_wire::login_env::load(user).await? {
        env.entry(name).or_insert(value);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_flag_set_to_one_asks() {
        let mut env = Env::new();
        assert!(!asked(&env));
        env.insert(FLAG.into(), "0".into());
        assert!(!asked(&env));
        env.insert(FLAG.into(), "1".into());
        assert!(asked(&env));
    }
}
