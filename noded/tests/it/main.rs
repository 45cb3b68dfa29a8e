//! The integration tests of `noded/`, compiled as one binary: each module was once its own
//! test target; the support modules are compiled once and shared.

mod common;

mod batch_jobs;
mod binary;
mod controller_link;
mod job_usage;
mod step_stats;
mod steps;
mod supervisor;
