//! Why a call failed, and the stable numbers the C ABI gives each kind of failure.

use std::ffi::CStr;

use tonic::{Code, Status};

/// Slurm's text when a request got no reply within `MessageTimeout`.
pub const SOCKET_TIMEOUT: &str = "Socket timed out on send/recv operation";

/// The C ABI's error codes (`SMD_E*` in `smd.h`). Their values never change.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(i32)]
pub enum ErrorCode {
    /// Success.
    Ok = 0,
    /// slurm.conf or nonstop.conf could not be read or holds a bad value.
    Config = 1,
    /// Neither the key nor the local credential service could sign requests.
    Credential = 2,
    /// No controller address answered.
    Connect = 3,
    /// A request got no reply within `MessageTimeout`.
    Timeout = 4,
    /// The caller does not own the job and is no administrator (or may not drain).
    Permission = 5,
    /// No such job, or no such node in the job's allocation.
    NotFound = 6,
    /// A bad argument (a node name, a number of minutes).
    InvalidArgument = 7,
    /// The request cannot be met now: no spare node, no time extension left, job not running.
    Refused = 8,
    /// The controller runs without `SlurmctldPlugin=slurmctld/nonstop`.
    NotEnabled = 9,
    /// An event stream ended (the job ended, or the controller closed it).
    StreamEnded = 10,
    /// Any other failure reported by the controller.
    Server = 11,
    /// A C caller passed a null pointer or a string that is not UTF-8.
    BadInput = 12,
}

impl ErrorCode {
    /// The short fixed text of a code.
    pub fn text(self) -> &'static str {
        self.c_text().to_str().unwrap_or("")
    }

    /// [`ErrorCode::text`] as a C string (`smd_strerror`).
    pub fn c_text(self) -> &'static CStr {
        match self {
            Self::Ok => c"Success",
            Self::Config => c"Bad or missing configuration",
            Self::Credential => c"No credential to sign requests",
            Self::Connect => c"Unable to contact the failure management service",
            Self::Timeout => c"Socket timed out on send/recv operation",
            Self::Permission => c"Access/permission denied",
            Self::NotFound => c"Invalid job id or node name",
            Self::InvalidArgument => c"Invalid argument",
            Self::Refused => c"Request refused",
            Self::NotEnabled => c"Failure management is not enabled on this cluster",
            Self::StreamEnded => c"Event stream ended",
            Self::Server => c"Controller error",
            Self::BadInput => c"Null pointer or invalid string argument",
        }
    }

    /// The code for a number, if it is one.
    pub fn from_i32(n: i32) -> Option<Self> {
        use ErrorCode::*;
        [
            Ok,
            Config,
            Credential,
            Connect,
            Timeout,
            Permission,
            NotFound,
            InvalidArgument,
            Refused,
            NotEnabled,
            StreamEnded,
            Server,
            BadInput,
        ]
        .into_iter()
        .find(|c| *c as i32 == n)
    }
}

/// A failed call, with the words to show a user.
#[derive(Debug, thiserror::Error)]
pub enum SmdError {
    /// slurm.conf or nonstop.conf (names file, line and key).
    #[error("{0}")]
    Config(#[from] sluice_vocab::conf::ConfError),
    /// Nothing could sign the caller's requests.
    #[error("{0}")]
    Credential(#[from] sluice_wire::auth::NoCredential),
    /// No address of the service could be reached.
    #[error("Unable to contact slurm controller (connect failure): {host}:{port}: {reason}")]
    Connect {
        host: String,
        port: u16,
        reason: String,
    },
    /// The controller refused or failed the request; `message` is its reason.
    #[error("{message}")]
    Rpc { code: ErrorCode, message: String },
    /// The event stream ended.
    #[error("Event stream ended")]
    StreamEnded,
    /// A C caller's bad argument (names it).
    #[error("{0}")]
    BadInput(String),
}

impl SmdError {
    /// The C ABI's code for this error.
    pub fn code(&self) -> ErrorCode {
        match self {
            Self::Config(_) => ErrorCode::Config,
            Self::Credential(_) => ErrorCode::Credential,
            Self::Connect { .. } => ErrorCode::Connect,
            Self::Rpc { code, .. } => *code,
            Self::StreamEnded => ErrorCode::StreamEnded,
            Self::BadInput(_) => ErrorCode::BadInput,
        }
    }
}

impl From<Status> for SmdError {
    fn from(status: Status) -> Self {
        if sluice_wire::client::is_timeout(&status) {
            return Self::Rpc {
                code: ErrorCode::Timeout,
                message: SOCKET_TIMEOUT.to_string(),
            };
        }
        let code = match status.code() {
            Code::PermissionDenied | Code::Unauthenticated => ErrorCode::Permission,
            Code::NotFound => ErrorCode::NotFound,
            Code::InvalidArgument => ErrorCode::InvalidArgument,
            Code::FailedPrecondition | Code::ResourceExhausted | Code::OutOfRange => {
                ErrorCode::Refused
            }
            Code::Unimplemented => ErrorCode::NotEnabled,
            Code::Unavailable => ErrorCode::Connect,
            _ => ErrorCode::Server,
        };
        let message = match status.message().trim() {
            "" => code.text().to_string(),
            // A controller without the plugin has no words of its own for it.
            _ if code == ErrorCode::NotEnabled => code.text().to_string(),
            m => m.to_string(),
        };
        Self::Rpc { code, message }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_map_to_codes_and_keep_the_controllers_words() {
        let e = SmdError::from(Status::failed_precondition("Failed to replace the node"));
        assert_eq!(
            (e.code(), e.to_string().as_str()),
            (ErrorCode::Refused, "Failed to replace the node")
        );
        let e = SmdError::from(Status::permission_denied(""));
        assert_eq!(
            (e.code(), e.to_string().as_str()),
            (ErrorCode::Permission, "Access/permission denied")
        );
        let e = SmdError::from(Status::unimplemented("Nonstop.JobNodes"));
        assert_eq!(e.code(), ErrorCode::NotEnabled);
        assert!(e.to_string().contains("not enabled"));
        let e = SmdError::from(Status::deadline_exceeded("late"));
        assert_eq!(
            (e.code(), e.to_string().as_str()),
            (ErrorCode::Timeout, SOCKET_TIMEOUT)
        );
    }

    #[test]
    fn codes_round_trip_through_their_numbers() {
        for n in 0..13 {
            let code = ErrorCode::from_i32(n).unwrap();
            assert_eq!(code as i32, n);
            assert!(!code.text().is_empty());
        }
        assert_eq!(ErrorCode::from_i32(13), None);
        assert_eq!(ErrorCode::from_i32(-1), None);
        assert_eq!(ErrorCode::Timeout.text(), SOCKET_TIMEOUT);
    }
}
