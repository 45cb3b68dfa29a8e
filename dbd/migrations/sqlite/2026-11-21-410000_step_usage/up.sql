-- What a step's tasks used (jobacct_gather/linux), as slurmdbd's job_step_table keeps it: CPU
-- times in milliseconds, and per TRES (1 cpu ms, 2 mem bytes, 6 fs/disk bytes, 7 vmem bytes,
-- 8 pages) `id=value,...` maps of the total, the largest task (its rank and node index in the
-- step's node list), the smallest and the average; "in" is memory, CPU and reads, "out" writes.
-- NULL when nothing was measured (jobacct_gather/none, a node failure, older records).
ALTER TABLE job_steps ADD COLUMN usage_tasks BIGINT NULL;
ALTER TABLE job_steps ADD COLUMN user_cpu_ms BIGINT NULL;
ALTER TABLE job_steps ADD COLUMN sys_cpu_ms BIGINT NULL;
ALTER TABLE job_steps ADD COLUMN tres_usage_in_tot TEXT NULL;
ALTER TABLE job_steps ADD COLUMN tres_usage_in_max TEXT NULL;
ALTER TABLE job_steps ADD COLUMN tres_usage_in_max_taskid TEXT NULL;
ALTER TABLE job_steps ADD COLUMN tres_usage_in_max_nodeid TEXT NULL;
ALTER TABLE job_steps ADD COLUMN tres_usage_in_min TEXT NULL;
ALTER TABLE job_steps ADD COLUMN tres_usage_in_ave TEXT NULL;
ALTER TABLE job_steps ADD COLUMN tres_usage_out_tot TEXT NULL;
ALTER TABLE job_steps ADD COLUMN tres_usage_out_max TEXT NULL;
ALTER TABLE job_steps ADD COLUMN tres_usage_out_max_taskid TEXT NULL;
ALTER TABLE job_steps ADD COLUMN tres_usage_out_max_nodeid TEXT NULL;
ALTER TABLE job_steps ADD COLUMN tres_usage_out_min TEXT NULL;
ALTER TABLE job_steps ADD COLUMN tres_usage_out_ave TEXT NULL;
