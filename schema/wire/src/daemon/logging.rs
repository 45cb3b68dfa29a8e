//! Logging set-up: a level from the configuration raised by `-v`, to a log file or stderr.

use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::Path;

use tracing::level_filters::LevelFilter;

use super::ProcessError;

/// `level` raised by `steps` levels (one per `-v`), saturating at TRACE.
pub fn raise(level: LevelFilter, steps: u8) -> LevelFilter {
    const ORDER: [LevelFilter; 6] = [
        LevelFilter::OFF,
        LevelFilter::ERROR,
        LevelFilter::WARN,
        LevelFilter::INFO,
        LevelFilter::DEBUG,
        LevelFilter::TRACE,
    ];
    let at = ORDER.iter().position(|l| *l == level).unwrap_or(3);
    ORDER[(at + usize::from(steps)).min(ORDER.len() - 1)]
}

/// Installs the global subscriber logging at `level`, appending to `log_file` (created with
/// its directory, mode 0600) or writing to stderr.
pub fn init_logging(level: LevelFilter, log_file: Option<&Path>) -> Result<(), ProcessError> {
    let mut directives = level.to_string();
    if level >= LevelFilter::DEBUG {
        // The HTTP/2 stack's own debug output drowns the daemon's.
        directives.push_str(",h2=info,hyper=info,hyper_util=info,tower=info");
    }
    let filter = tracing_subscriber::EnvFilter::new(directives);
    let builder = tracing_subscriber::fmt().with_env_filter(filter);
    match log_file {
        Some(path) => {
            let err = |error| ProcessError::File {
                path: path.to_path_buf(),
                error,
            };
            if let Some(dir) = path.parent() {
                std::fs::create_dir_all(dir).map_err(err)?;
            }
            // Logs name users, jobs and paths: readable by the daemon's user only (0600), an
            // older, looser log file included.
            let file = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .mode(0o600)
                .open(path)
                .map_err(err)?;
            std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600)).map_err(err)?;
            builder
                .with_ansi(false)
                .with_writer(std::sync::Mutex::new(file))
                .init();
        }
        None => builder.with_writer(std::io::stderr).init(),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verbosity_raises_the_configured_level() {
        assert_eq!(raise(LevelFilter::INFO, 0), LevelFilter::INFO);
        assert_eq!(raise(LevelFilter::INFO, 1), LevelFilter::DEBUG);
        assert_eq!(raise(LevelFilter::OFF, 2), LevelFilter::WARN);
        assert_eq!(raise(LevelFilter::ERROR, 9), LevelFilter::TRACE);
    }
}
