-- The accounting schema on SQLite. Times are unix seconds; deleted rows are kept with
-- deleted = TRUE, as slurmdbd keeps them. Every row carries its cluster as a column.
CREATE TABLE federations (
  name TEXT PRIMARY KEY NOT NULL,
  flags INTEGER NOT NULL DEFAULT 0,
  creation_time BIGINT NOT NULL,
  mod_time BIGINT NOT NULL,
  deleted BOOLEAN NOT NULL DEFAULT FALSE
);

CREATE TABLE clusters (
  name TEXT PRIMARY KEY NOT NULL,
  control_host TEXT NOT NULL DEFAULT '',
  control_port INTEGER NOT NULL DEFAULT 0,
  rpc_version INTEGER NOT NULL DEFAULT 0,
  classification TEXT NOT NULL DEFAULT '',
  federation TEXT NOT NULL DEFAULT '',
  fed_id INTEGER NOT NULL DEFAULT 0,
  fed_state INTEGER NOT NULL DEFAULT 0,
  features TEXT NOT NULL DEFAULT '',
  creation_time BIGINT NOT NULL,
  mod_time BIGINT NOT NULL,
  deleted BOOLEAN NOT NULL DEFAULT FALSE
);
CREATE INDEX clusters_federation_fed_id ON clusters (federation, fed_id);

CREATE TABLE accounts (
  name TEXT PRIMARY KEY NOT NULL,
  description TEXT NOT NULL DEFAULT '',
  organization TEXT NOT NULL DEFAULT '',
  parent TEXT NOT NULL DEFAULT '',
  creation_time BIGINT NOT NULL,
  mod_time BIGINT NOT NULL,
  deleted BOOLEAN NOT NULL DEFAULT FALSE
);
CREATE INDEX accounts_parent ON accounts (parent);

CREATE TABLE users (
  name TEXT PRIMARY KEY NOT NULL,
  default_account TEXT NOT NULL DEFAULT '',
  admin_level INTEGER NOT NULL DEFAULT 0,
  creation_time BIGINT NOT NULL,
  mod_time BIGINT NOT NULL,
  deleted BOOLEAN NOT NULL DEFAULT FALSE
);
CREATE INDEX users_default_account ON users (default_account);

CREATE TABLE associations (
  id INTEGER PRIMARY KEY AUTOINCREMENT NOT NULL,
  cluster TEXT NOT NULL REFERENCES clusters (name),
  account TEXT NOT NULL REFERENCES accounts (name),
  user_name TEXT NOT NULL DEFAULT '',
  parent_account TEXT NOT NULL DEFAULT '',
  creation_time BIGINT NOT NULL,
  mod_time BIGINT NOT NULL,
  deleted BOOLEAN NOT NULL DEFAULT FALSE,
  UNIQUE (cluster, account, user_name)
);
CREATE INDEX associations_account_user ON associations (account, user_name);
CREATE INDEX associations_user ON associations (user_name);

CREATE TABLE job_id_cursors (
  cluster TEXT PRIMARY KEY NOT NULL REFERENCES clusters (name),
  next_id BIGINT NOT NULL
);
