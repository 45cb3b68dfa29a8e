//! The integration tests of `dbd/`, compiled as one binary: each module was once its own
//! test target; the support modules are compiled once and shared.

#[macro_use]
mod common;
mod store_fed_support;
mod usage_support;

mod migrations;
mod store_accounts;
mod store_assoc_limits;
mod store_clusters;
mod store_coordinators;
mod store_fairshare;
mod store_fed_control;
mod store_fed_group;
mod store_fed_hold;
mod store_fed_jobs;
mod store_fed_lock;
mod store_fed_log;
mod store_fed_states;
mod store_fed_submit;
mod store_federation;
mod store_jobs;
mod store_jobs_bulk;
mod store_jobs_federation;
mod store_jobs_het;
mod store_jobs_query;
mod store_jobs_sacct;
mod store_jobs_wckey;
mod store_leases;
mod store_qos;
mod store_step_usage;
mod store_usage;
mod store_usage_late;
mod store_usage_resize;
mod store_usage_scale;
mod store_usage_sizes;
