//! One mapping from a refused or failed request (a `tonic::Status`) to the words Slurm's
//! commands print. Slurm words the same failure differently depending on who asked whom, so
//! the caller names its [`Asker`]; every command goes through [`status_text`].

use std::io::Write;

use tonic::{Code, Status};

/// Slurm's text when the controller cannot be reached.
pub const CONNECT_FAILURE: &str = "Unable to contact slurm controller (connect failure)";

/// Slurm's text when a request got no reply within `MessageTimeout`.
pub const SOCKET_TIMEOUT: &str = "Socket timed out on send/recv operation";

/// Who asked, which decides Slurm's words for a failure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Asker {
    /// sacctmgr, sacct and sreport asking the accounting daemon: its message, else Slurm's
    /// text for the code (`Connection refused` when the daemon is down).
    Accounting,
    /// squeue, sinfo, scontrol and the `-M`/`--federation` lookups: an unreachable or
    /// silent daemon is the controller's connect failure, anything else reads as for
    /// [`Asker::Accounting`].
    Views,
    /// sbatch, srun and scancel talking to the controller: its message; a transport failure
    /// or an empty message is the connect failure.
    Jobs,
}

/// The text a command prints for `status`, as `asker` words it; a request that ran out of
/// `MessageTimeout` reads the same for every asker.
pub fn status_text(status: &Status, asker: Asker) -> String {
    if sluice_wire::client::is_timeout(status) {
        return SOCKET_TIMEOUT.to_string();
    }
    match asker {
        Asker::Accounting => daemon_text(status),
        Asker::Views => match status.code() {
            Code::Unavailable => CONNECT_FAILURE.to_string(),
            _ => daemon_text(status),
        },
        Asker::Jobs => job_text(status),
    }
}

/// Prints the controller's note on a refused job, if it sent one, as `prog`'s error line: the
/// line Slurm's commands print before the error itself (its controller's `err_msg`, e.g.
/// `sbatch: error: invalid partition specified: nope`).
pub fn print_note(err: &mut dyn Write, prog: &str, status: &Status) {
    if let Some(note) = status
        .metadata()
        .get_bin(sluice_wire::client::NOTE_KEY)
        .and_then(|v| v.to_bytes().ok())
    {
        crate::jobspec::print_error(err, prog, &String::from_utf8_lossy(&note));
    }
}

/// Slurm's line for an accounting daemon that refused a query or did not answer (`reason` is
/// from [`status_text`] or the connection error).
pub fn database_problem(prog: &str, reason: &str) -> String {
    format!("{prog}: error: Problem talking to the database: {reason}")
}

/// The daemon's reason for a refused request, with Slurm's text for the usual codes.
fn daemon_text(status: &Status) -> String {
    let msg = status.message().trim();
    if !msg.is_empty() {
        return msg.to_string();
    }
    match status.code() {
        Code::PermissionDenied => "Access/permission denied".to_string(),
        Code::Unauthenticated => sluice_wire::auth::AUTH_ERROR.to_string(),
        Code::Unavailable => "Connection refused".to_string(),
        other => other.description().to_string(),
    }
}

/// The controller's message, or the connect failure for a transport error or no message.
fn job_text(status: &Status) -> String {
    let msg = status.message();
    let transport = status.code() == Code::Unavailable
        && (msg.is_empty()
            || std::error::Error::source(status).is_some()
            || msg.contains("connect")
            || msg.contains("transport")
            || msg.contains("broken pipe"));
    if transport || msg.is_empty() {
        CONNECT_FAILURE.to_string()
    } else {
        msg.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_status_messages_get_slurm_text() {
        assert_eq!(
            status_text(&Status::permission_denied(""), Asker::Accounting),
            "Access/permission denied"
        );
        assert_eq!(
            status_text(&Status::invalid_argument("x y"), Asker::Accounting),
            "x y"
        );
    }

    #[test]
    fn status_texts() {
        assert_eq!(
            status_text(
                &Status::invalid_argument("Invalid partition name specified"),
                Asker::Jobs
            ),
            "Invalid partition name specified"
        );
        assert_eq!(
            status_text(&Status::unavailable("tcp connect error"), Asker::Jobs),
            CONNECT_FAILURE
        );
    }

    #[test]
    fn a_request_out_of_time_reads_as_slurms_socket_timeout_for_everyone() {
        let expired = Status::cancelled(tonic::TimeoutExpired(()).to_string());
        for asker in [Asker::Accounting, Asker::Views, Asker::Jobs] {
            assert_eq!(status_text(&expired, asker), SOCKET_TIMEOUT);
            assert_eq!(
                status_text(&Status::deadline_exceeded("late"), asker),
                SOCKET_TIMEOUT
            );
        }
        assert_eq!(
            status_text(&Status::cancelled("by the user"), Asker::Accounting),
            "by the user"
        );
    }

    #[test]
    fn views_see_an_unreachable_daemon_as_the_connect_failure() {
        assert_eq!(
            status_text(&Status::unavailable("refused"), Asker::Views),
            CONNECT_FAILURE
        );
        assert_eq!(
            status_text(&Status::unavailable("refused"), Asker::Accounting),
            "refused"
        );
        assert_eq!(
            status_text(&Status::not_found(""), Asker::Views),
            Code::NotFound.description()
        );
    }
}
