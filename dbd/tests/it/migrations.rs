//! The three backends' migrations make the same schema: one diesel `schema.rs` serves them all,
//! so a table, column or index that one backend lacks or types differently is a bug that only
//! shows on that backend.
//!
//! Each backend's migrations run on a fresh database (through `conn::open`, as the daemon runs
//! them); the catalogs are then read back and normalised:
//! * columns by name, with a type class (integer, text, real, blob; booleans count as
//!   integers, as MariaDB stores them so) and nullability;
//! * the primary key as its column list (each backend names its primary-key index its own way);
//! * secondary indexes as uniqueness plus column list, and by name when not unique; unique
//!   indexes come from inline `UNIQUE (...)` constraints, which each backend names itself
//!   (`sqlite_autoindex_*`, MariaDB after the first column, PostgreSQL `*_key`).
//!   Partial-index predicates (SQLite and PostgreSQL only) are not compared.
//!
//! Differences are listed; the few that are known and intended are in [`KNOWN`], with why.

use std::collections::{BTreeMap, BTreeSet};

use diesel::QueryableByName;
use diesel::RunQueryDsl;
use diesel::sql_types::{BigInt, Text};
use sluice_dbd::store::conn::{self, AnyConnection};
use sluice_testkit::dbd::{Backend, TestDatabase};

/// Differences between the SQLite schema and another backend's that are intended, with why.
/// Each entry is a line of [`differences`]' output.
const KNOWN: &[&str] = &[];

/// diesel's own bookkeeping table, not part of the schema.
const MIGRATIONS_TABLE: &str = "__diesel_schema_migrations";

/// One column of one table, as a catalog lists it.
#[derive(Debug, QueryableByName)]
struct ColumnRow {
    #[diesel(sql_type = Text)]
    tbl: String,
    #[diesel(sql_type = Text)]
    col: String,
    #[diesel(sql_type = Text)]
    ty: String,
    /// 1 when the column is NOT NULL.
    #[diesel(sql_type = BigInt)]
    not_null: i64,
    /// Position in the primary key from 1 (SQLite only; 0 elsewhere or when not in it).
    #[diesel(sql_type = BigInt)]
    pk: i64,
}

/// One column of one index, as a catalog lists it.
#[derive(Debug, QueryableByName)]
struct IndexRow {
    #[diesel(sql_type = Text)]
    tbl: String,
    #[diesel(sql_type = Text)]
    idx: String,
    #[diesel(sql_type = BigInt)]
    uniq: i64,
    /// 1 for the primary key's index.
    #[diesel(sql_type = BigInt)]
    prim: i64,
    #[diesel(sql_type = BigInt)]
    seq: i64,
    #[diesel(sql_type = Text)]
    col: String,
}

const SQLITE_COLUMNS: &str = "SELECT m.name AS tbl, p.name AS col, p.type AS ty, \
     p.\"notnull\" AS not_null, p.pk AS pk \
     FROM sqlite_master m, pragma_table_info(m.name) p \
     WHERE m.type = 'table' AND m.name NOT LIKE 'sqlite_%'";
const SQLITE_INDEXES: &str = "SELECT m.name AS tbl, il.name AS idx, il.\"unique\" AS uniq, \
     CASE WHEN il.origin = 'pk' THEN 1 ELSE 0 END AS prim, ii.seqno AS seq, ii.name AS col \
     FROM sqlite_master m, pragma_index_list(m.name) il, pragma_index_info(il.name) ii \
     WHERE m.type = 'table' AND m.name NOT LIKE 'sqlite_%'";
const MYSQL_COLUMNS: &str = "SELECT CAST(TABLE_NAME AS CHAR) AS tbl, \
     CAST(COLUMN_NAME AS CHAR) AS col, CAST(COLUMN_TYPE AS CHAR) AS ty, \
     CAST(IS_NULLABLE = 'NO' AS SIGNED) AS not_null, CAST(0 AS SIGNED) AS pk \
     FROM information_schema.columns WHERE TABLE_SCHEMA = DATABASE()";
const MYSQL_INDEXES: &str = "SELECT CAST(TABLE_NAME AS CHAR) AS tbl, \
     CAST(INDEX_NAME AS CHAR) AS idx, CAST(1 - NON_UNIQUE AS SIGNED) AS uniq, \
     CAST(INDEX_NAME = 'PRIMARY' AS SIGNED) AS prim, CAST(SEQ_IN_INDEX AS SIGNED) AS seq, \
     CAST(COLUMN_NAME AS CHAR) AS col \
     FROM information_schema.statistics WHERE TABLE_SCHEMA = DATABASE()";
const PG_COLUMNS: &str = "SELECT table_name::text AS tbl, column_name::text AS col, \
     data_type::text AS ty, (CASE WHEN is_nullable = 'NO' THEN 1 ELSE 0 END)::bigint AS not_null, \
     0::bigint AS pk \
     FROM information_schema.columns WHERE table_schema = current_schema()";
const PG_INDEXES: &str = "SELECT t.relname::text AS tbl, i.relname::text AS idx, \
     (CASE WHEN ix.indisunique THEN 1 ELSE 0 END)::bigint AS uniq, \
     (CASE WHEN ix.indisprimary THEN 1 ELSE 0 END)::bigint AS prim, k.n::bigint AS seq, \
     a.attname::text AS col \
     FROM pg_index ix \
     JOIN pg_class t ON t.oid = ix.indrelid \
     JOIN pg_class i ON i.oid = ix.indexrelid \
     JOIN pg_namespace ns ON ns.oid = t.relnamespace \
     CROSS JOIN LATERAL unnest(ix.indkey::smallint[]) WITH ORDINALITY AS k(attnum, n) \
     JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = k.attnum \
     WHERE ns.nspname = current_schema()";

/// One index's rows gathered: its kind and its columns with their positions.
struct IndexColumns {
    unique: bool,
    primary: bool,
    cols: Vec<(i64, String)>,
}

/// A table as the comparison sees it.
#[derive(Debug, Default, PartialEq, Eq)]
struct Table {
    /// Column name → (type class, NOT NULL).
    columns: BTreeMap<String, (&'static str, bool)>,
    primary_key: Vec<String>,
    /// "unique (cols)" or "<name> (cols)".
    indexes: BTreeSet<String>,
}

/// The type class of a catalog's type name.
fn class(ty: &str) -> &'static str {
    let ty = ty.to_ascii_lowercase();
    if ty.contains("int") || ty.starts_with("bool") {
        "integer"
    } else if ty.contains("char") || ty.contains("text") || ty.contains("clob") {
        "text"
    } else if ty.contains("blob") || ty.contains("bytea") || ty.contains("binary") {
        "blob"
    } else if ty.contains("real") || ty.contains("double") || ty.contains("float") {
        "real"
    } else {
        panic!("unclassified column type {ty}")
    }
}

/// Runs the migrations of `backend` on a fresh database and reads its schema back.
fn migrated_schema(backend: Backend) -> BTreeMap<String, Table> {
    let db = TestDatabase::create(backend);
    let mut conn = conn::open(db.url()).unwrap_or_else(|e| panic!("migrate {backend:?}: {e}"));
    let (columns, indexes): (Vec<ColumnRow>, Vec<IndexRow>) = match &mut conn {
        AnyConnection::Sqlite(c) => (
            diesel::sql_query(SQLITE_COLUMNS).load(c).expect("columns"),
            diesel::sql_query(SQLITE_INDEXES).load(c).expect("indexes"),
        ),
        AnyConnection::Mysql(c) => (
            diesel::sql_query(MYSQL_COLUMNS).load(c).expect("columns"),
            diesel::sql_query(MYSQL_INDEXES).load(c).expect("indexes"),
        ),
        AnyConnection::Postgresql(c) => (
            diesel::sql_query(PG_COLUMNS).load(c).expect("columns"),
            diesel::sql_query(PG_INDEXES).load(c).expect("indexes"),
        ),
    };
    drop(conn);
    let mut tables: BTreeMap<String, Table> = BTreeMap::new();
    let mut sqlite_pk: BTreeMap<String, Vec<(i64, String)>> = BTreeMap::new();
    for c in columns.into_iter().filter(|c| c.tbl != MIGRATIONS_TABLE) {
        if c.pk > 0 {
            sqlite_pk
                .entry(c.tbl.clone())
                .or_default()
                .push((c.pk, c.col.clone()));
        }
        tables
            .entry(c.tbl)
            .or_default()
            .columns
            .insert(c.col, (class(&c.ty), c.not_null == 1));
    }
    for (tbl, mut cols) in sqlite_pk {
        cols.sort();
        let table = tables.get_mut(&tbl).expect("table of its columns");
        table.primary_key = cols.into_iter().map(|(_, c)| c).collect();
    }
    let mut by_index: BTreeMap<(String, String), IndexColumns> = BTreeMap::new();
    for i in indexes.into_iter().filter(|i| i.tbl != MIGRATIONS_TABLE) {
        let entry = by_index.entry((i.tbl, i.idx)).or_insert(IndexColumns {
            unique: i.uniq == 1,
            primary: i.prim == 1,
            cols: Vec::new(),
        });
        entry.cols.push((i.seq, i.col));
    }
    for ((tbl, name), index) in by_index {
        let IndexColumns {
            unique,
            primary,
            mut cols,
        } = index;
        cols.sort();
        let cols: Vec<String> = cols.into_iter().map(|(_, c)| c).collect();
        let table = tables.entry(tbl).or_default();
        if primary {
            // SQLite's primary key is read from its columns (an INTEGER PRIMARY KEY has no index).
            if backend != Backend::Sqlite {
                table.primary_key = cols;
            }
        } else if unique {
            table
                .indexes
                .insert(format!("unique ({})", cols.join(", ")));
        } else {
            table
                .indexes
                .insert(format!("{name} ({})", cols.join(", ")));
        }
    }
    tables
}

/// What `other` (on `backend`) has that differs from `base` (SQLite's), one line each.
fn differences(
    backend: Backend,
    base: &BTreeMap<String, Table>,
    other: &BTreeMap<String, Table>,
) -> Vec<String> {
    let mut out = Vec::new();
    let names: BTreeSet<&String> = base.keys().chain(other.keys()).collect();
    for name in names {
        let (a, b) = match (base.get(name), other.get(name)) {
            (Some(a), Some(b)) => (a, b),
            (Some(_), None) => {
                out.push(format!("{backend:?}: table {name} missing"));
                continue;
            }
            (None, _) => {
                out.push(format!("{backend:?}: table {name} not on SQLite"));
                continue;
            }
        };
        let cols: BTreeSet<&String> = a.columns.keys().chain(b.columns.keys()).collect();
        for col in cols {
            let (x, y) = (a.columns.get(col), b.columns.get(col));
            if x != y {
                out.push(format!(
                    "{backend:?}: {name}.{col}: SQLite {x:?}, {backend:?} {y:?}"
                ));
            }
        }
        if a.primary_key != b.primary_key {
            out.push(format!(
                "{backend:?}: {name} primary key: SQLite {:?}, {backend:?} {:?}",
                a.primary_key, b.primary_key
            ));
        }
        for idx in a.indexes.symmetric_difference(&b.indexes) {
            let side = if a.indexes.contains(idx) {
                "only on SQLite"
            } else {
                "not on SQLite"
            };
            out.push(format!("{backend:?}: {name} index {idx} {side}"));
        }
    }
    out
}

#[test]
fn every_backend_migrates_to_the_same_schema() {
    let sqlite = migrated_schema(Backend::Sqlite);
    assert!(
        sqlite.contains_key("job_runs") && sqlite.contains_key("clusters"),
        "the catalog read found the tables: {:?}",
        sqlite.keys().collect::<Vec<_>>()
    );
    let mut found = Vec::new();
    for backend in [Backend::Mysql, Backend::Postgres] {
        let other = migrated_schema(backend);
        // The catalog reads see keys and indexes at all (an empty read would compare equal).
        let runs = &other["job_runs"];
        assert_eq!(
            runs.primary_key,
            ["cluster", "job_id", "run"],
            "{backend:?}"
        );
        assert!(
            runs.indexes
                .contains("job_runs_submit (cluster, time_submit, job_id, run)"),
            "{backend:?}: {:?}",
            runs.indexes
        );
        assert_eq!(runs.columns["latest"], ("integer", true), "{backend:?}");
        found.extend(differences(backend, &sqlite, &other));
    }
    assert_eq!(found, KNOWN, "schema differences between backends");
}

/// diesel knows a migration by the version before the first `_` of its folder's name: two
/// folders of one version are one migration to it, and the second is never run (two
/// branches once each added a `2026-11-26-200000_*` migration, and one table was missing).
#[test]
fn every_migration_has_a_version_of_its_own() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("migrations");
    for backend in ["sqlite", "mysql", "postgres"] {
        let mut seen = BTreeMap::new();
        for entry in std::fs::read_dir(root.join(backend)).expect("migrations folder") {
            let name = entry
                .expect("entry")
                .file_name()
                .to_string_lossy()
                .into_owned();
            let version = name.split('_').next().unwrap_or_default().to_string();
            if let Some(other) = seen.insert(version.clone(), name.clone()) {
                panic!("{backend}: {name} and {other} share version {version}");
            }
        }
    }
}
