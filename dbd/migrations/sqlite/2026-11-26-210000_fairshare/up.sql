-- Fair-share shares of associations (sacctmgr ... set fairshare=N|parent), apart from the
-- associations table so other association settings grow without touching it. An association
-- without a row has Slurm's default of 1 share; -1 is `parent`.
CREATE TABLE assoc_fairshare (
  assoc_id BIGINT NOT NULL PRIMARY KEY,
  shares BIGINT NOT NULL
);
