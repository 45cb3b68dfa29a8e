//! Reading the store back: the cursors at open, and the [`Snapshot`] the core is restored from.
//! Saved records are decoded by their `format` ([`codec::decode`]), which is where a later
//! format migrates the records of an older one.

use super::{StateStore, StoreError, codec};
use crate::core::LaunchSpec;
use crate::core::snapshot::Snapshot;
use rusqlite::OptionalExtension;
use std::collections::HashMap;
use std::sync::Arc;

impl StateStore {
    /// Reads the outbox seq, the saved id source, cluster name and launch owners.
    pub(super) fn read_cursors(&mut self) -> Result<(), StoreError> {
        let next_seq = self.meta("next_seq")?.map_or(Ok(1), |v| {
            decode_i64(&v).ok_or_else(|| self.corrupt("meta", "next_seq", "not an integer"))
        })?;
        // Never behind the outbox, whatever the meta row says.
        let max_seq: Option<i64> = self
            .conn
            .query_row("SELECT MAX(seq) FROM acct_outbox", [], |r| r.get(0))
            .map_err(|e| self.sql(e))?;
        let next = next_seq.max(max_seq.map_or(1, |m| m.saturating_add(1)));
        self.next_seq = u64::try_from(next).unwrap_or(1);
        self.stream_id = super::schema::stream_id(&self.conn)
            .map_err(|e| self.sql(e))?
            .ok_or_else(|| self.corrupt("meta", "stream_id", "missing"))?;
        self.saved_ids = self.saved_ids()?;
        self.saved_fed = self
            .load_fed()?
            .map(|(view, cursor)| super::fed::SavedFed { view, cursor })
            .unwrap_or_default();
        self.saved_cluster = self.saved_cluster()?;
        let mut stmt = self
            .conn
            .prepare("SELECT owner FROM launch")
            .map_err(|e| self.sql(e))?;
        let owners = stmt
            .query_map([], |r| r.get::<_, u32>(0))
            .and_then(|rows| rows.collect::<Result<Vec<u32>, _>>())
            .map_err(|e| self.sql(e))?;
        drop(stmt);
        self.launches = owners.into_iter().collect();
        Ok(())
    }

    /// Everything saved: jobs (with their launch specs, shared per owner), node states, the
    /// id source and the cluster name.
    pub fn load(&self) -> Result<Snapshot, StoreError> {
        let mut launches: HashMap<u32, Arc<LaunchSpec>> = HashMap::new();
        for (owner, format, body) in self.rows3::<u32>("SELECT owner, format, body FROM launch")? {
            let spec: LaunchSpec = codec::decode(format, &body)
                .map_err(|why| self.corrupt("launch spec", &owner.to_string(), &why))?;
            launches.insert(owner, Arc::new(spec));
        }
        let mut jobs = Vec::new();
        for (id, format, body) in
            self.rows3::<u32>("SELECT id, format, body FROM jobs ORDER BY id")?
        {
            let mut job: crate::core::snapshot::JobSnap = codec::decode(format, &body)
                .map_err(|why| self.corrupt("job", &id.to_string(), &why))?;
            job.launch = launches
                .get(&job.launch_owner())
                .cloned()
                .unwrap_or_default();
            jobs.push(job);
        }
        let mut nodes = Vec::new();
        for (name, format, body) in self.rows3::<String>("SELECT name, format, body FROM nodes")? {
            let node: crate::core::snapshot::NodeSnap =
                codec::decode(format, &body).map_err(|why| self.corrupt("node", &name, &why))?;
            nodes.push(node);
        }
        Ok(Snapshot {
            cluster: self.saved_cluster()?,
            jobs,
            nodes,
            job_ids: self.saved_ids()?,
            partitions: self.saved_partitions()?,
        })
    }

    fn saved_partitions(&self) -> Result<Vec<(String, String)>, StoreError> {
        Ok(self
            .meta("partitions")?
            .map(|v| {
                serde_json::from_slice(&v)
                    .map_err(|e| self.corrupt("meta", "partitions", &e.to_string()))
            })
            .transpose()?
            .unwrap_or_default())
    }

    fn saved_ids(&self) -> Result<Option<Vec<(u32, u32)>>, StoreError> {
        self.meta("job_ids")?
            .map(|v| {
                serde_json::from_slice(&v)
                    .map_err(|e| self.corrupt("meta", "job_ids", &e.to_string()))
            })
            .transpose()
    }

    fn saved_cluster(&self) -> Result<Option<String>, StoreError> {
        Ok(self
            .meta("cluster")?
            .map(|v| String::from_utf8_lossy(&v).into_owned()))
    }

    pub(super) fn meta(&self, key: &str) -> Result<Option<Vec<u8>>, StoreError> {
        self.conn
            .query_row("SELECT value FROM meta WHERE key = ?1", [key], |r| {
                r.get::<_, rusqlite::types::Value>(0)
            })
            .optional()
            .map(|v| v.map(value_bytes))
            .map_err(|e| self.sql(e))
    }

    fn rows3<K: rusqlite::types::FromSql>(
        &self,
        sql: &str,
    ) -> Result<Vec<(K, u32, Vec<u8>)>, StoreError> {
        let mut stmt = self.conn.prepare(sql).map_err(|e| self.sql(e))?;
        stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .and_then(|rows| rows.collect())
            .map_err(|e| self.sql(e))
    }

    pub(super) fn corrupt(&self, what: &'static str, key: &str, reason: &str) -> StoreError {
        StoreError::Corrupt {
            path: self.path.clone(),
            what,
            key: key.to_string(),
            reason: reason.to_string(),
        }
    }
}

fn value_bytes(v: rusqlite::types::Value) -> Vec<u8> {
    use rusqlite::types::Value;
    match v {
        Value::Blob(b) => b,
        Value::Text(t) => t.into_bytes(),
        Value::Integer(i) => i.to_string().into_bytes(),
        Value::Real(r) => r.to_string().into_bytes(),
        Value::Null => Vec::new(),
    }
}

fn decode_i64(v: &[u8]) -> Option<i64> {
    std::str::from_utf8(v).ok()?.parse().ok()
}
