-- A run's earlier allocations. Failure management (smd replace and drop) changes a running
-- job's nodes; Slurm then ends the job's record in state RESIZING and starts a new one from the
-- change, so usage is exact on each side of it. Here each row is one earlier allocation of a
-- run, in force until `time_end` (the change) from the run's start or the run's previous change;
-- the run row holds the allocation in force now. `suspended_secs` is the run's suspended time up
-- to `time_end` (so each record's share of it is exact too), `time_limit_min` its limit then.
-- Two changes in one second keep the first row (the allocation between them lasted no time).
CREATE TABLE job_resizes (
  cluster TEXT NOT NULL,
  job_id BIGINT NOT NULL,
  run INTEGER NOT NULL,
  time_end BIGINT NOT NULL,
  node_list TEXT NOT NULL,
  node_count BIGINT NOT NULL,
  cpus BIGINT NOT NULL,
  mem_mb BIGINT NOT NULL,
  suspended_secs BIGINT NOT NULL,
  -- The run's time limit then (-1 = UNLIMITED).
  time_limit_min BIGINT NOT NULL,
  PRIMARY KEY (cluster, job_id, run, time_end)
);
-- The purge walks a cluster's rows by time.
CREATE INDEX job_resizes_end ON job_resizes (cluster, time_end);
