-- Job accounting on PostgreSQL: job runs, steps and node events sent by the controllers, and each
-- cluster's applied-record cursor. One `cluster` column, never per-cluster tables.
-- Column names avoid words some backend reserves (partition, signal, constraint, user, end).
CREATE TABLE job_runs (
  cluster TEXT NOT NULL,
  job_id BIGINT NOT NULL,
  run INTEGER NOT NULL,
  array_job_id BIGINT NOT NULL,
  -- -1 when the job is not an array task.
  array_task_id BIGINT NOT NULL,
  name TEXT NOT NULL,
  uid BIGINT NOT NULL,
  gid BIGINT NOT NULL,
  user_name TEXT NOT NULL,
  account TEXT NOT NULL,
  partition_name TEXT NOT NULL,
  state BIGINT NOT NULL,
  exit_code INTEGER NOT NULL,
  exit_signal INTEGER NOT NULL,
  time_submit BIGINT NOT NULL,
  time_eligible BIGINT NOT NULL,
  time_start BIGINT NOT NULL,
  time_end BIGINT NOT NULL,
  suspended_secs BIGINT NOT NULL,
  -- When the current suspension began; 0 when not suspended.
  suspend_since BIGINT NOT NULL,
  time_limit_min BIGINT NOT NULL,
  node_list TEXT NOT NULL,
  node_count BIGINT NOT NULL,
  cpus BIGINT NOT NULL,
  mem_mb BIGINT NOT NULL,
  req_cpus BIGINT NOT NULL,
  req_mem_mb BIGINT NOT NULL,
  workdir TEXT NOT NULL,
  reason TEXT NOT NULL,
  job_comment TEXT NOT NULL,
  -- Whether this is the job's newest run (sacct without --duplicates shows only these).
  latest BOOLEAN NOT NULL,
  -- Who cancelled the run (sacct's `CANCELLED by <uid>`); -1 when unknown.
  requester_uid BIGINT NOT NULL,
  PRIMARY KEY (cluster, job_id, run)
);
CREATE INDEX job_runs_submit ON job_runs (cluster, time_submit, job_id, run);
CREATE INDEX job_runs_start ON job_runs (cluster, time_start);
-- sacct's query walks one cluster at a time in (time_submit, job_id, run) order: runs still
-- going through job_runs_end (time_end = 0), finished runs through a bounded range of
-- job_runs_submit, or of job_runs_uid / job_runs_account when it selects users or accounts.
CREATE INDEX job_runs_end ON job_runs (cluster, time_end, time_submit, job_id, run);
-- Only array tasks: most runs are not, and a planner that knows it would skip a full index.
CREATE INDEX job_runs_array ON job_runs (cluster, array_job_id) WHERE array_job_id != 0;
CREATE INDEX job_runs_uid ON job_runs (cluster, uid, time_submit, job_id, run);
CREATE INDEX job_runs_account ON job_runs (cluster, account, time_submit, job_id, run);

CREATE TABLE job_steps (
  cluster TEXT NOT NULL,
  job_id BIGINT NOT NULL,
  run INTEGER NOT NULL,
  -- The step number, or -4 (batch) / -5 (extern) as Slurm numbers them.
  step_id INTEGER NOT NULL,
  name TEXT NOT NULL,
  time_start BIGINT NOT NULL,
  time_end BIGINT NOT NULL,
  state BIGINT NOT NULL,
  exit_code INTEGER NOT NULL,
  exit_signal INTEGER NOT NULL,
  node_list TEXT NOT NULL,
  node_count BIGINT NOT NULL,
  ntasks BIGINT NOT NULL,
  cpus BIGINT NOT NULL,
  PRIMARY KEY (cluster, job_id, run, step_id)
);

CREATE TABLE node_events (
  id BIGSERIAL PRIMARY KEY,
  cluster TEXT NOT NULL,
  node_name TEXT NOT NULL,
  time_start BIGINT NOT NULL,
  -- 0 while the event is open.
  time_end BIGINT NOT NULL,
  kind TEXT NOT NULL,
  reason TEXT NOT NULL,
  reason_uid BIGINT NOT NULL,
  cpus BIGINT NOT NULL
);
CREATE INDEX node_events_node ON node_events (cluster, node_name, time_end);
CREATE INDEX node_events_start ON node_events (cluster, time_start);

-- One cursor per controller outbox stream: `stream_id` is the random id a controller made
-- with its state store (stored as the signed view of its 64 bits), so a controller whose state
-- was wiped starts a new stream whose seqs count from 1 again.
CREATE TABLE record_cursors (
  cluster TEXT NOT NULL REFERENCES clusters (name),
  stream_id BIGINT NOT NULL,
  applied_seq BIGINT NOT NULL,
  PRIMARY KEY (cluster, stream_id)
);

-- Per cluster, the longest a finished run took from submission to its end. sacct's windowed
-- query bounds the submit times it scans with it: a run that ended at or after the window's
-- start was submitted at most this long before it. It only grows (ingest keeps the maximum).
CREATE TABLE job_spans (
  cluster TEXT PRIMARY KEY NOT NULL,
  max_span BIGINT NOT NULL
);
