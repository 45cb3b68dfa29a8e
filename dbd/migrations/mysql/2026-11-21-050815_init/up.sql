-- The accounting schema on MariaDB / MySQL. Keys are VARCHAR(255) (TEXT cannot be a key) with a
-- binary collation, so names compare byte for byte as on SQLite and PostgreSQL. Times are unix
-- seconds; deleted rows are kept with deleted = TRUE, as slurmdbd keeps them.
CREATE TABLE federations (
  name VARCHAR(255) NOT NULL PRIMARY KEY,
  flags INTEGER NOT NULL DEFAULT 0,
  creation_time BIGINT NOT NULL,
  mod_time BIGINT NOT NULL,
  deleted BOOLEAN NOT NULL DEFAULT FALSE
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

CREATE TABLE clusters (
  name VARCHAR(255) NOT NULL PRIMARY KEY,
  control_host VARCHAR(255) NOT NULL DEFAULT '',
  control_port INTEGER NOT NULL DEFAULT 0,
  rpc_version INTEGER NOT NULL DEFAULT 0,
  classification VARCHAR(255) NOT NULL DEFAULT '',
  federation VARCHAR(255) NOT NULL DEFAULT '',
  fed_id INTEGER NOT NULL DEFAULT 0,
  fed_state INTEGER NOT NULL DEFAULT 0,
  features TEXT NOT NULL,
  creation_time BIGINT NOT NULL,
  mod_time BIGINT NOT NULL,
  deleted BOOLEAN NOT NULL DEFAULT FALSE,
  INDEX clusters_federation_fed_id (federation, fed_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

CREATE TABLE accounts (
  name VARCHAR(255) NOT NULL PRIMARY KEY,
  description TEXT NOT NULL,
  organization TEXT NOT NULL,
  parent VARCHAR(255) NOT NULL DEFAULT '',
  creation_time BIGINT NOT NULL,
  mod_time BIGINT NOT NULL,
  deleted BOOLEAN NOT NULL DEFAULT FALSE,
  INDEX accounts_parent (parent)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

CREATE TABLE users (
  name VARCHAR(255) NOT NULL PRIMARY KEY,
  default_account VARCHAR(255) NOT NULL DEFAULT '',
  admin_level INTEGER NOT NULL DEFAULT 0,
  creation_time BIGINT NOT NULL,
  mod_time BIGINT NOT NULL,
  deleted BOOLEAN NOT NULL DEFAULT FALSE,
  INDEX users_default_account (default_account)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

CREATE TABLE associations (
  id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  cluster VARCHAR(255) NOT NULL,
  account VARCHAR(255) NOT NULL,
  user_name VARCHAR(255) NOT NULL DEFAULT '',
  parent_account VARCHAR(255) NOT NULL DEFAULT '',
  creation_time BIGINT NOT NULL,
  mod_time BIGINT NOT NULL,
  deleted BOOLEAN NOT NULL DEFAULT FALSE,
  UNIQUE KEY associations_cluster_account_user (cluster, account, user_name),
  INDEX associations_account_user (account, user_name),
  INDEX associations_user (user_name),
  FOREIGN KEY (cluster) REFERENCES clusters (name),
  FOREIGN KEY (account) REFERENCES accounts (name)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

CREATE TABLE job_id_cursors (
  cluster VARCHAR(255) NOT NULL PRIMARY KEY,
  next_id BIGINT NOT NULL,
  FOREIGN KEY (cluster) REFERENCES clusters (name)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
