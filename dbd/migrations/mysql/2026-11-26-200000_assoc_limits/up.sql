-- Association limits (sacctmgr set MaxJobs=... GrpTRES=...), one row per association that
-- sets any; NULL (or an empty TRES list) is "not set here". Max* limits not set on an
-- association are inherited from its account tree when read; Grp* limits are not.
CREATE TABLE assoc_limits (
  assoc_id BIGINT NOT NULL PRIMARY KEY,
  max_jobs BIGINT,
  max_submit_jobs BIGINT,
  max_wall_minutes BIGINT,
  max_tres_per_job VARCHAR(1024) NOT NULL DEFAULT '',
  grp_jobs BIGINT,
  grp_submit_jobs BIGINT,
  grp_tres VARCHAR(1024) NOT NULL DEFAULT '',
  mod_time BIGINT NOT NULL,
  FOREIGN KEY (assoc_id) REFERENCES associations (id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
