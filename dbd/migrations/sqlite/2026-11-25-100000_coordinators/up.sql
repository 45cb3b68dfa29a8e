-- Account coordinators (sacctmgr add/delete coordinator): a user named coordinator of an account
-- is one of every account below it too, now and later, so only the direct grants are stored.
-- `deleted` marks a removed grant, as slurmdbd's acct_coord_table does.
CREATE TABLE coordinators (
  user_name TEXT NOT NULL,
  account TEXT NOT NULL,
  creation_time BIGINT NOT NULL,
  mod_time BIGINT NOT NULL,
  deleted BOOLEAN NOT NULL DEFAULT 0,
  PRIMARY KEY (user_name, account)
);
CREATE INDEX coordinators_account ON coordinators (account);
