-- Quality of service (sacctmgr add|modify|delete|show qos). Ids are given by the dbd (the
-- largest plus one); `normal` is id 1, as a fresh Slurm database has it. A deleted QOS keeps
-- its row (`deleted`) and gets it back when added again. NULL or an empty TRES list: no limit.
CREATE TABLE qos (
  id BIGINT NOT NULL PRIMARY KEY,
  name TEXT NOT NULL,
  description TEXT NOT NULL DEFAULT '',
  priority BIGINT NOT NULL DEFAULT 0,
  flags TEXT NOT NULL DEFAULT '',
  max_wall_minutes BIGINT,
  max_tres_per_job TEXT NOT NULL DEFAULT '',
  max_tres_per_user TEXT NOT NULL DEFAULT '',
  max_jobs_per_user BIGINT,
  max_submit_jobs_per_user BIGINT,
  grp_tres TEXT NOT NULL DEFAULT '',
  grp_jobs BIGINT,
  grp_submit_jobs BIGINT,
  deleted BOOLEAN NOT NULL DEFAULT FALSE,
  mod_time BIGINT NOT NULL,
  UNIQUE (name)
);
INSERT INTO qos (id, name, description, priority, flags, max_tres_per_job, max_tres_per_user,
  grp_tres, deleted, mod_time)
  VALUES (1, 'normal', 'Normal QOS default', 0, '', '', '', '', FALSE, 0);

-- The QOS an association may use and its default QOS, where set on it (sacctmgr ... set
-- QOS= DefaultQOS=); NULL: inherited from the parent account (the root's list is `normal`).
-- `qos_ids` is a comma-joined list of qos ids.
CREATE TABLE assoc_qos (
  assoc_id BIGINT NOT NULL PRIMARY KEY,
  qos_ids TEXT,
  default_qos_id BIGINT,
  mod_time BIGINT NOT NULL
);

-- The QOS of each job (sacct -o qos), apart from job_runs, which is at diesel's 32 columns.
CREATE TABLE job_qos (
  cluster TEXT NOT NULL,
  job_id BIGINT NOT NULL,
  qos TEXT NOT NULL,
  PRIMARY KEY (cluster, job_id)
);
