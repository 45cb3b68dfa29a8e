//! `sluice-noded`, the node daemon (Slurm's slurmd): registers its node with the controller,
//! heartbeats, runs batch scripts and srun step tasks as real processes and reports how they
//! ended.
//!
//! Map: [`config`] reads this node's part of `slurm.conf`; [`daemon`] binds and serves (the
//! in-process entry point is [`daemon::serve`]); [`service`] is the `NodeDaemon` RPC edge;
//! [`batch`] and [`step`] start processes through [`spawn`] with the environment of [`env`] and
//! the output names of [`pattern`]; [`jobs`] tracks their process groups; [`link`] talks to the
//! controller and [`outbox`] keeps exit reports in the [`spool`] until acknowledged; a batch
//! script runs under its own [`supervise`]or process (`sluice-stepd`), an srun task under
//! [`supervise_task`] (taken back after a restart by [`step_adopt`]), and [`adopt`] takes back
//! the jobs that outlived a restart of the daemon, with their true exit status (and
//! [`launch_request`] the launches a restart interrupted, and adopted jobs' epilogs); [`job_scripts`]
//! runs slurm.conf's prolog and epilog programs around a batch script through [`prolog`],
//! [`node_scripts`] on the nodes running only a job's steps; [`unkillable`] watches a killed
//! job's processes (`UnkillableStepTimeout`); [`user_env`] loads a user's login environment for
//! `sbatch --get-user-env`. [`credential`] is the launch check: nothing starts without the
//! controller's job credential for it.

pub mod acct;
pub mod adopt;
pub mod affinity;
pub mod attach;
pub mod batch;
pub mod bcast;
pub mod config;
pub mod cpufreq;
pub mod credential;
pub mod daemon;
pub mod env;
pub mod error;
pub mod here_file;
pub mod job_scripts;
pub mod jobs;
pub mod launch_request;
pub mod link;
pub mod mempolicy;
pub mod node;
pub mod node_scripts;
pub mod outbox;
pub mod pattern;
pub mod prolog;
pub mod pty;
pub mod resources;
pub mod service;
pub mod spawn;
pub mod spool;
pub mod stdin;
pub mod step;
pub mod step_adopt;
pub mod step_debug;
pub mod step_io;
pub mod supervise;
pub mod supervise_task;
pub mod task_output;
pub mod unkillable;
pub mod user_env;

pub use config::NodedConfig;
pub use daemon::{Prepared, bind, serve};
pub use error::NodedError;
