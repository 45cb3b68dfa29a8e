-- GrpTRESMins (sacctmgr set GrpTRESMins=cpu=N, GrpCPUMins=N): the TRES-minutes the jobs of an
-- association and everything below it may use, in the stored TRES form ("cpu=600,mem=1024",
-- memory in megabyte-minutes; '' = not set here). A group limit: not inherited.
ALTER TABLE assoc_limits ADD COLUMN grp_tres_mins TEXT NOT NULL DEFAULT '';
