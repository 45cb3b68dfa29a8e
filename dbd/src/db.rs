//! The accounting database schema: diesel table definitions and the embedded per-backend
//! migrations that `sluice-dbd` runs at start.

pub mod schema;

use diesel_migrations::{EmbeddedMigrations, embed_migrations};

/// Migrations for SQLite.
pub const SQLITE_MIGRATIONS: EmbeddedMigrations = embed_migrations!("migrations/sqlite");
/// Migrations for MariaDB / MySQL.
pub const MYSQL_MIGRATIONS: EmbeddedMigrations = embed_migrations!("migrations/mysql");
/// Migrations for PostgreSQL.
pub const POSTGRES_MIGRATIONS: EmbeddedMigrations = embed_migrations!("migrations/postgres");
