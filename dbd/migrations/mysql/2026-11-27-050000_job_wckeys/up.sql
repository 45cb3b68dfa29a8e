-- The wckey a job was submitted under (`--wckey`), one row per job that has one. The job's runs
-- live in `job_runs`, which is at diesel's 32-column limit, hence a table of its own; a job's
-- runs share its wckey. `time_submit` (the job's first submission) lets the purge find the rows
-- of jobs whose runs are gone without reading the whole table.
CREATE TABLE job_wckeys (
  cluster VARCHAR(255) NOT NULL,
  job_id BIGINT NOT NULL,
  time_submit BIGINT NOT NULL,
  wckey TEXT NOT NULL,
  PRIMARY KEY (cluster, job_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
CREATE INDEX job_wckeys_submit ON job_wckeys (cluster, time_submit);
