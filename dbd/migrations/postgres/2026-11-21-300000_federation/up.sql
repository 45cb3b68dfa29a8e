-- Federated jobs arbitrated by the accounting daemon (PostgreSQL): one row per federated job
-- (origin, viable and active sibling sets, start lock, winner), a per-cluster event log with a
-- durable sequence, and each cluster's log head and acknowledged cursor.
-- Sibling sets are comma-joined, sorted cluster names (not fed-id bitmaps), so a cluster leaving
-- and another taking its fed id never confuses an old job's siblings.
CREATE TABLE fed_jobs (
  federation TEXT NOT NULL,
  job_id BIGINT NOT NULL,
  origin TEXT NOT NULL,
  -- 0 pending, 1 started (running on `winner`), 2 ended, 3 cancelled, 4 left the federation.
  phase INTEGER NOT NULL,
  -- Held or dependent: kept on the origin, offered to no sibling.
  held BOOLEAN NOT NULL,
  is_array BOOLEAN NOT NULL,
  -- The `-M/--clusters` list and `--cluster-constraint` as the user gave them.
  req_clusters TEXT NOT NULL,
  cluster_features TEXT NOT NULL,
  viable TEXT NOT NULL,
  active TEXT NOT NULL,
  -- The start lock: holder ('' when none), its token and lease expiry (unix seconds).
  lock_cluster TEXT NOT NULL,
  lock_token BIGINT NOT NULL,
  lock_expires BIGINT NOT NULL,
  winner TEXT NOT NULL,
  -- A requeue asked of the running cluster: 0 none, 1 requeue, 2 requeue held.
  requeue INTEGER NOT NULL,
  final_state BIGINT NOT NULL,
  exit_code INTEGER NOT NULL,
  -- Grows at every change; lock tokens are taken from it, so a stale token never matches.
  version BIGINT NOT NULL,
  time_submit BIGINT NOT NULL,
  time_start BIGINT NOT NULL,
  time_end BIGINT NOT NULL,
  mod_time BIGINT NOT NULL,
  -- The origin controller's serialized submit request, stored and forwarded as is.
  job_desc BYTEA NOT NULL,
  PRIMARY KEY (federation, job_id)
);
CREATE INDEX fed_jobs_live ON fed_jobs (federation, phase);

CREATE TABLE fed_events (
  cluster TEXT NOT NULL,
  seq BIGINT NOT NULL,
  -- 1 offered, 2 revoked, 3 cancelled, 4 updated, 5 started elsewhere, 6 ended, 7 requeued,
  -- 8 left the federation, 9 federation changed.
  kind INTEGER NOT NULL,
  federation TEXT NOT NULL,
  job_id BIGINT NOT NULL,
  -- The winner, starter or reporting cluster, or the origin of an offered sibling.
  other_cluster TEXT NOT NULL,
  state BIGINT NOT NULL,
  exit_code INTEGER NOT NULL,
  flags INTEGER NOT NULL,
  viable TEXT NOT NULL,
  job_desc BYTEA NOT NULL,
  time_created BIGINT NOT NULL,
  PRIMARY KEY (cluster, seq)
);

-- Appending takes the head row's lock (last_seq + 1), so a cluster's events commit in seq order
-- and a reader never skips one that commits late.
CREATE TABLE fed_event_heads (
  cluster TEXT NOT NULL PRIMARY KEY,
  last_seq BIGINT NOT NULL,
  acked_seq BIGINT NOT NULL
);

-- The running controller of each cluster, as it last registered.
CREATE TABLE fed_controllers (
  cluster TEXT NOT NULL PRIMARY KEY,
  start_time BIGINT NOT NULL,
  registered_at BIGINT NOT NULL
);
