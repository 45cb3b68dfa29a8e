//! Diesel table definitions of the accounting database, as `diesel print-schema` prints them
//! (the per-backend migrations in `migrations/` create these tables).
//!
//! Times are unix seconds. Rows are never removed: `deleted` marks them, as slurmdbd does.

diesel::table! {
    /// Accounts: the tree of charge accounts rooted at `root`.
    accounts (name) {
        name -> Text,
        description -> Text,
        organization -> Text,
        /// The parent account; `''` for `root`.
        parent -> Text,
        creation_time -> BigInt,
        mod_time -> BigInt,
        deleted -> Bool,
    }
}

diesel::table! {
    /// Associations of (cluster, account, user); `user_name` is `''` for an account's own one.
    associations (id) {
        id -> BigInt,
        cluster -> Text,
        account -> Text,
        user_name -> Text,
        parent_account -> Text,
        creation_time -> BigInt,
        mod_time -> BigInt,
        deleted -> Bool,
    }
}

diesel::table! {
    /// Fair-share shares of associations whose `Fairshare=` was set (-1: `parent`).
    assoc_fairshare (assoc_id) {
        assoc_id -> BigInt,
        shares -> BigInt,
    }
}

diesel::table! {
    /// The QOS list and default QOS of associations that set them (NULL: inherited).
    /// `qos_ids` is a comma-joined list of `qos.id`.
    assoc_qos (assoc_id) {
        assoc_id -> BigInt,
        qos_ids -> Nullable<Text>,
        default_qos_id -> Nullable<BigInt>,
        mod_time -> BigInt,
    }
}

diesel::table! {
    /// Clusters; `federation` (`''` when none) is the only record of federation membership.
    clusters (name) {
        name -> Text,
        control_host -> Text,
        control_port -> Integer,
        rpc_version -> Integer,
        classification -> Text,
        federation -> Text,
        fed_id -> Integer,
        fed_state -> Integer,
        /// Comma-joined cluster features.
        features -> Text,
        creation_time -> BigInt,
        mod_time -> BigInt,
        deleted -> Bool,
    }
}

diesel::table! {
    /// The running controller of each cluster, as it last registered with the federation service.
    fed_controllers (cluster) {
        cluster -> Text,
        start_time -> BigInt,
        registered_at -> BigInt,
    }
}

diesel::table! {
    /// Per cluster, the seq of its newest federation event and the seq it acknowledged.
    fed_event_heads (cluster) {
        cluster -> Text,
        last_seq -> BigInt,
        acked_seq -> BigInt,
    }
}

diesel::table! {
    /// Each cluster's federation event log, in `seq` order (see the federation migration).
    fed_events (cluster, seq) {
        cluster -> Text,
        seq -> BigInt,
        kind -> Integer,
        federation -> Text,
        job_id -> BigInt,
        other_cluster -> Text,
        state -> BigInt,
        exit_code -> Integer,
        flags -> Integer,
        viable -> Text,
        job_desc -> Binary,
        time_created -> BigInt,
    }
}

diesel::table! {
    /// Federated jobs: origin, sibling sets (comma-joined names), start lock, winner, phase.
    fed_jobs (federation, job_id) {
        federation -> Text,
        job_id -> BigInt,
        origin -> Text,
        phase -> Integer,
        held -> Bool,
        is_array -> Bool,
        req_clusters -> Text,
        cluster_features -> Text,
        viable -> Text,
        active -> Text,
        lock_cluster -> Text,
        lock_token -> BigInt,
        lock_expires -> BigInt,
        winner -> Text,
        requeue -> Integer,
        final_state -> BigInt,
        exit_code -> Integer,
        version -> BigInt,
        time_submit -> BigInt,
        time_start -> BigInt,
        time_end -> BigInt,
        mod_time -> BigInt,
        job_desc -> Binary,
    }
}

diesel::table! {
    /// Association limits set by sacctmgr: one row per association setting any (NULL or an
    /// empty TRES list: not set here).
    assoc_limits (assoc_id) {
        assoc_id -> BigInt,
        max_jobs -> Nullable<BigInt>,
        max_submit_jobs -> Nullable<BigInt>,
        max_wall_minutes -> Nullable<BigInt>,
        max_tres_per_job -> Text,
        grp_jobs -> Nullable<BigInt>,
        grp_submit_jobs -> Nullable<BigInt>,
        grp_tres -> Text,
        mod_time -> BigInt,
        grp_tres_mins -> Text,
    }
}

diesel::table! {
    /// Account coordinators: direct grants only (a coordinator of an account is one of every
    /// account below it); `deleted` marks a removed grant.
    coordinators (user_name, account) {
        user_name -> Text,
        account -> Text,
        creation_time -> BigInt,
        mod_time -> BigInt,
        deleted -> Bool,
    }
}

diesel::table! {
    /// Federations.
    federations (name) {
        name -> Text,
        flags -> Integer,
        creation_time -> BigInt,
        mod_time -> BigInt,
        deleted -> Bool,
    }
}

diesel::table! {
    /// Per-cluster cursor of the next local job id to lease.
    job_id_cursors (cluster) {
        cluster -> Text,
        next_id -> BigInt,
    }
}

diesel::table! {
    /// The QOS of each job (sacct `QOS`), apart from `job_runs` (at diesel's 32 columns).
    job_qos (cluster, job_id) {
        cluster -> Text,
        job_id -> BigInt,
        qos -> Text,
    }
}

diesel::table! {
    /// One run of a job (`run` grows by one at each requeue), as the controller reported it.
    /// `array_task_id` is -1 for a job that is not an array task; `latest` marks the job's
    /// newest run; `suspend_since` is when the current suspension began (0 when not suspended).
    job_runs (cluster, job_id, run) {
        cluster -> Text,
        job_id -> BigInt,
        run -> Integer,
        array_job_id -> BigInt,
        array_task_id -> BigInt,
        name -> Text,
        uid -> BigInt,
        gid -> BigInt,
        user_name -> Text,
        account -> Text,
        partition_name -> Text,
        state -> BigInt,
        exit_code -> Integer,
        exit_signal -> Integer,
        time_submit -> BigInt,
        time_eligible -> BigInt,
        time_start -> BigInt,
        time_end -> BigInt,
        suspended_secs -> BigInt,
        suspend_since -> BigInt,
        time_limit_min -> BigInt,
        node_list -> Text,
        node_count -> BigInt,
        cpus -> BigInt,
        mem_mb -> BigInt,
        req_cpus -> BigInt,
        req_mem_mb -> BigInt,
        workdir -> Text,
        reason -> Text,
        job_comment -> Text,
        latest -> Bool,
        requester_uid -> BigInt,
    }
}

diesel::table! {
    /// A run's earlier allocations (failure management changed its nodes), each in force until
    /// `time_end`; `suspended_secs` is the run's suspended time up to then, `time_limit_min` its
    /// time limit then.
    job_resizes (cluster, job_id, run, time_end) {
        cluster -> Text,
        job_id -> BigInt,
        run -> Integer,
        time_end -> BigInt,
        node_list -> Text,
        node_count -> BigInt,
        cpus -> BigInt,
        mem_mb -> BigInt,
        suspended_secs -> BigInt,
        time_limit_min -> BigInt,
    }
}

diesel::table! {
    /// The heterogeneous job (leader id, offset) of each component job; `time_submit` is the
    /// job's first submission (the purge's bound).
    job_het (cluster, job_id) {
        cluster -> Text,
        job_id -> BigInt,
        time_submit -> BigInt,
        het_job_id -> BigInt,
        het_offset -> Integer,
    }
}

diesel::table! {
    /// The wckey (`--wckey`) of each job that has one; `time_submit` is the job's first
    /// submission (the purge's bound).
    job_wckeys (cluster, job_id) {
        cluster -> Text,
        job_id -> BigInt,
        time_submit -> BigInt,
        wckey -> Text,
    }
}

diesel::table! {
    /// Per cluster, the longest any finished run took from submission to its end (bounds the
    /// submit times sacct's windowed query scans).
    job_spans (cluster) {
        cluster -> Text,
        max_span -> BigInt,
    }
}

diesel::table! {
    /// Suspensions of a job run, open while `time_end` is 0.
    job_suspends (cluster, job_id, run, time_start) {
        cluster -> Text,
        job_id -> BigInt,
        run -> Integer,
        time_start -> BigInt,
        time_end -> BigInt,
    }
}

diesel::table! {
    /// Steps of a job run; `step_id` -4 is the batch step, -5 the extern step.
    job_steps (cluster, job_id, run, step_id) {
        cluster -> Text,
        job_id -> BigInt,
        run -> Integer,
        step_id -> Integer,
        name -> Text,
        time_start -> BigInt,
        time_end -> BigInt,
        state -> BigInt,
        exit_code -> Integer,
        exit_signal -> Integer,
        node_list -> Text,
        node_count -> BigInt,
        ntasks -> BigInt,
        cpus -> BigInt,
        usage_tasks -> Nullable<BigInt>,
        user_cpu_ms -> Nullable<BigInt>,
        sys_cpu_ms -> Nullable<BigInt>,
        tres_usage_in_tot -> Nullable<Text>,
        tres_usage_in_max -> Nullable<Text>,
        tres_usage_in_max_taskid -> Nullable<Text>,
        tres_usage_in_max_nodeid -> Nullable<Text>,
        tres_usage_in_min -> Nullable<Text>,
        tres_usage_in_ave -> Nullable<Text>,
        tres_usage_out_tot -> Nullable<Text>,
        tres_usage_out_max -> Nullable<Text>,
        tres_usage_out_max_taskid -> Nullable<Text>,
        tres_usage_out_max_nodeid -> Nullable<Text>,
        tres_usage_out_min -> Nullable<Text>,
        tres_usage_out_ave -> Nullable<Text>,
    }
}

diesel::table! {
    /// Node events (down, drain, fail, power_down), open while `time_end` is 0.
    node_events (id) {
        id -> BigInt,
        cluster -> Text,
        node_name -> Text,
        time_start -> BigInt,
        time_end -> BigInt,
        kind -> Text,
        reason -> Text,
        reason_uid -> BigInt,
        cpus -> BigInt,
        /// Memory (MB) the event covers; for capacity rows, the cluster's memory.
        mem_mb -> BigInt,
        /// Nodes the event covers; for capacity rows (empty `node_name`), the cluster's nodes.
        node_count -> BigInt,
    }
}

diesel::table! {
    /// Per cluster, the sequence number of the last accounting record applied.
    record_cursors (cluster, stream_id) {
        cluster -> Text,
        stream_id -> BigInt,
        applied_seq -> BigInt,
    }
}

diesel::table! {
    /// Allocated TRES-seconds per association, TRES and period (`period` 0 hour, 1 day, 2 month;
    /// `tres` Slurm's TRES id).
    usage_assoc (cluster, period, time_start, assoc_id, tres) {
        cluster -> Text,
        period -> Integer,
        time_start -> BigInt,
        assoc_id -> BigInt,
        tres -> Integer,
        alloc_secs -> BigInt,
    }
}

diesel::table! {
    /// The (cluster, account, user) triples usage is kept for, numbered.
    usage_assocs (id) {
        id -> BigInt,
        cluster -> Text,
        account -> Text,
        user_name -> Text,
    }
}

diesel::table! {
    /// Cluster usage per TRES and period (`period` 0 hour, 1 day, 2 month), in TRES-seconds.
    usage_cluster (cluster, period, time_start, tres) {
        cluster -> Text,
        period -> Integer,
        time_start -> BigInt,
        tres -> Integer,
        tres_count -> BigInt,
        total_secs -> BigInt,
        alloc_secs -> BigInt,
        down_secs -> BigInt,
        pdown_secs -> BigInt,
        idle_secs -> BigInt,
        plan_secs -> BigInt,
        over_secs -> BigInt,
    }
}

diesel::table! {
    /// Per cluster, how far usage is rolled up and how far records were purged.
    usage_state (cluster) {
        cluster -> Text,
        rolled_until -> BigInt,
        purged_until -> BigInt,
    }
}

diesel::table! {
    /// Users, with their default account and admin level (0 None, 1 Operator, 2 Administrator).
    users (name) {
        name -> Text,
        default_account -> Text,
        admin_level -> Integer,
        creation_time -> BigInt,
        mod_time -> BigInt,
        deleted -> Bool,
    }
}

diesel::table! {
    /// Quality of service: priority, flags and limits (NULL or an empty TRES list: none);
    /// `deleted` marks a removed QOS, which an add brings back.
    qos (id) {
        id -> BigInt,
        name -> Text,
        description -> Text,
        priority -> BigInt,
        flags -> Text,
        max_wall_minutes -> Nullable<BigInt>,
        max_tres_per_job -> Text,
        max_tres_per_user -> Text,
        max_jobs_per_user -> Nullable<BigInt>,
        max_submit_jobs_per_user -> Nullable<BigInt>,
        grp_tres -> Text,
        grp_jobs -> Nullable<BigInt>,
        grp_submit_jobs -> Nullable<BigInt>,
        deleted -> Bool,
        mod_time -> BigInt,
        max_tres_mins_per_job -> Text,
        max_tres_per_account -> Text,
        max_jobs_per_account -> Nullable<BigInt>,
        max_submit_jobs_per_account -> Nullable<BigInt>,
        min_tres_per_job -> Text,
        max_tres_per_node -> Text,
        grp_tres_mins -> Text,
        usage_factor -> BigInt,
    }
}

diesel::joinable!(associations -> accounts (account));
diesel::joinable!(associations -> clusters (cluster));
diesel::joinable!(job_id_cursors -> clusters (cluster));
diesel::joinable!(record_cursors -> clusters (cluster));

diesel::allow_tables_to_appear_in_same_query!(
    accounts,
    assoc_limits,
    assoc_fairshare,
    assoc_qos,
    associations,
    clusters,
    coordinators,
    federations,
    job_het,
    job_id_cursors,
    job_resizes,
    job_qos,
    job_runs,
    job_spans,
    job_steps,
    job_suspends,
    job_wckeys,
    node_events,
    qos,
    record_cursors,
    usage_assoc,
    usage_assocs,
    usage_cluster,
    usage_state,
    users,
);
