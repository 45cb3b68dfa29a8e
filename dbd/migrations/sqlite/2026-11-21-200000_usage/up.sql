-- Usage rollups on SQLite: per cluster and TRES (hour, day and month rows in one table, told
-- apart by `period`: 0 hour, 1 day, 2 month) and per association (cluster, account, user: a
-- small integer id from `usage_assocs`, so rollup rows repeat no strings). TRES ids are
-- Slurm's: 1 cpu, 2 mem, 4 node. Values are TRES-seconds.

-- Cluster capacity is stored as Slurm stores it: node events with an empty node name, whose
-- counts are `cpus`, `mem_mb` and `node_count`.
ALTER TABLE node_events ADD COLUMN mem_mb BIGINT NOT NULL DEFAULT 0;
ALTER TABLE node_events ADD COLUMN node_count BIGINT NOT NULL DEFAULT 0;

-- Suspensions of job runs (suspended CPU time is not allocated time); open while time_end is 0.
CREATE TABLE job_suspends (
  cluster TEXT NOT NULL,
  job_id BIGINT NOT NULL,
  run INTEGER NOT NULL,
  time_start BIGINT NOT NULL,
  time_end BIGINT NOT NULL,
  PRIMARY KEY (cluster, job_id, run, time_start)
) WITHOUT ROWID;

-- Per cluster: hours before `rolled_until` are rolled up (ingest lowers it when a late record
-- touches an hour already rolled, so those hours roll again); records before `purged_until`
-- were purged, so hours before it never roll again.
CREATE TABLE usage_state (
  cluster TEXT PRIMARY KEY NOT NULL,
  rolled_until BIGINT NOT NULL,
  purged_until BIGINT NOT NULL
);

CREATE TABLE usage_cluster (
  cluster TEXT NOT NULL,
  period INTEGER NOT NULL,
  time_start BIGINT NOT NULL,
  tres INTEGER NOT NULL,
  tres_count BIGINT NOT NULL,
  total_secs BIGINT NOT NULL,
  alloc_secs BIGINT NOT NULL,
  down_secs BIGINT NOT NULL,
  pdown_secs BIGINT NOT NULL,
  idle_secs BIGINT NOT NULL,
  plan_secs BIGINT NOT NULL,
  over_secs BIGINT NOT NULL,
  PRIMARY KEY (cluster, period, time_start, tres)
) WITHOUT ROWID;

CREATE TABLE usage_assocs (
  id INTEGER PRIMARY KEY AUTOINCREMENT NOT NULL,
  cluster TEXT NOT NULL,
  account TEXT NOT NULL,
  user_name TEXT NOT NULL,
  UNIQUE (cluster, account, user_name)
);

CREATE TABLE usage_assoc (
  cluster TEXT NOT NULL,
  period INTEGER NOT NULL,
  time_start BIGINT NOT NULL,
  assoc_id BIGINT NOT NULL,
  tres INTEGER NOT NULL,
  alloc_secs BIGINT NOT NULL,
  PRIMARY KEY (cluster, period, time_start, assoc_id, tres)
) WITHOUT ROWID;
