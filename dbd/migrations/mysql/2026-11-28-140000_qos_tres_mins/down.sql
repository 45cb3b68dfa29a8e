ALTER TABLE qos DROP COLUMN max_tres_mins_per_job;
