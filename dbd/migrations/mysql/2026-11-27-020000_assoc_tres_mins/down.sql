ALTER TABLE assoc_limits DROP COLUMN grp_tres_mins;
