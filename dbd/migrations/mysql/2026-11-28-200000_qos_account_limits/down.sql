ALTER TABLE qos DROP COLUMN usage_factor;
ALTER TABLE qos DROP COLUMN grp_tres_mins;
ALTER TABLE qos DROP COLUMN max_tres_per_node;
ALTER TABLE qos DROP COLUMN min_tres_per_job;
ALTER TABLE qos DROP COLUMN max_submit_jobs_per_account;
ALTER TABLE qos DROP COLUMN max_jobs_per_account;
ALTER TABLE qos DROP COLUMN max_tres_per_account;
