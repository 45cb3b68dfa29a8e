-- The heterogeneous job each component job belongs to (`sbatch A : B`): its leader's id
-- (Slurm's HetJobId) and the component's offset, one row per component. `job_runs` is at
-- diesel's 32-column limit, hence a table of its own; a job's runs share it. `time_submit`
-- (the job's first submission) lets the purge find the rows of jobs whose runs are gone.
CREATE TABLE job_het (
  cluster TEXT NOT NULL,
  job_id BIGINT NOT NULL,
  time_submit BIGINT NOT NULL,
  het_job_id BIGINT NOT NULL,
  het_offset INTEGER NOT NULL,
  PRIMARY KEY (cluster, job_id)
);
CREATE INDEX job_het_leader ON job_het (cluster, het_job_id);
CREATE INDEX job_het_submit ON job_het (cluster, time_submit);
