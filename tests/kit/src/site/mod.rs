//! A local site for end-to-end tests: one accounting daemon and one or more clusters started
//! with the real `sluice up`, driven through the real command binaries. A
//! [`Federation`](federation::Federation) has N clusters; a [`Cluster`](cluster::Cluster) is a
//! site of one cluster outside any federation.

pub mod cluster;
pub mod federation;
pub mod ports;
pub mod procs;
