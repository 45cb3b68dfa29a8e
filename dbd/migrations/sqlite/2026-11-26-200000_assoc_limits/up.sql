-- Association limits (sacctmgr set MaxJobs=... GrpTRES=...), one row per association that
-- sets any; NULL (or an empty TRES list) is "not set here". Max* limits not set on an
-- association are inherited from its account tree when read; Grp* limits are not.
CREATE TABLE assoc_limits (
  assoc_id BIGINT PRIMARY KEY NOT NULL REFERENCES associations (id),
  max_jobs BIGINT,
  max_submit_jobs BIGINT,
  max_wall_minutes BIGINT,
  max_tres_per_job TEXT NOT NULL DEFAULT '',
  grp_jobs BIGINT,
  grp_submit_jobs BIGINT,
  grp_tres TEXT NOT NULL DEFAULT '',
  mod_time BIGINT NOT NULL
);
