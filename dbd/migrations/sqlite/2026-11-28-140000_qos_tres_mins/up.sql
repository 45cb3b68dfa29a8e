-- MaxTRESMinsPerJob of a QOS (sacctmgr set MaxTRESMinsPerJob=cpu=N, MaxTRESMins=): what one job may
-- ask for times its time limit, in the stored TRES form ("cpu=600,mem=1024", memory in
-- megabyte-minutes; '' = no limit).
ALTER TABLE qos ADD COLUMN max_tres_mins_per_job TEXT NOT NULL DEFAULT '';
