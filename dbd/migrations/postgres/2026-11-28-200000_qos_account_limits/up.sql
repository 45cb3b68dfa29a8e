-- A QOS's per-account limits (sacctmgr MaxTRESPerAccount=, MaxJobsPerAccount=,
-- MaxSubmitJobsPerAccount=): what the running (submitted, for MaxSubmit) jobs of one account
-- under this QOS may hold; MinTRESPerJob=, the least one job may ask for; MaxTRESPerNode=,
-- the most one job may ask for on each of its nodes; GrpTRESMins=, what all jobs of the QOS
-- may use (TRES-minutes, decayed as fair share decays usage). TRES lists are
-- in the stored form ("cpu=4,mem=2048,node=1", memory in megabytes; '' = no limit), counts
-- NULL when not limited.
ALTER TABLE qos ADD COLUMN max_tres_per_account TEXT NOT NULL DEFAULT '';
ALTER TABLE qos ADD COLUMN max_jobs_per_account BIGINT;
ALTER TABLE qos ADD COLUMN max_submit_jobs_per_account BIGINT;
ALTER TABLE qos ADD COLUMN min_tres_per_job TEXT NOT NULL DEFAULT '';
ALTER TABLE qos ADD COLUMN max_tres_per_node TEXT NOT NULL DEFAULT '';
ALTER TABLE qos ADD COLUMN grp_tres_mins TEXT NOT NULL DEFAULT '';
-- UsageFactor= in millionths (1.0 = 1000000): what a second of the QOS's jobs counts for in
-- the usage charged to their associations and to the QOS.
ALTER TABLE qos ADD COLUMN usage_factor BIGINT NOT NULL DEFAULT 1000000;
