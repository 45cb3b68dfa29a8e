-- Account coordinators (sacctmgr add/delete coordinator): a user named coordinator of an account
-- is one of every account below it too, now and later, so only the direct grants are stored.
-- `deleted` marks a removed grant, as slurmdbd's acct_coord_table does.
CREATE TABLE coordinators (
  user_name VARCHAR(255) NOT NULL,
  account VARCHAR(255) NOT NULL,
  creation_time BIGINT NOT NULL,
  mod_time BIGINT NOT NULL,
  deleted BOOLEAN NOT NULL DEFAULT FALSE,
  PRIMARY KEY (user_name, account)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
CREATE INDEX coordinators_account ON coordinators (account);
