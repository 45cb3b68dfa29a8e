//! The output of one srun task kept by its supervisor across a restart of the node daemon, so
//! that srun gets every byte once and in order.
//!
//! While the daemon runs, the supervisor copies each stream (stdout, stderr) to the daemon's
//! pipe and keeps the last [`RING`] bytes written in memory: bytes the daemon read but had not
//! passed on to srun when it died are among them. Once the daemon is gone (a write fails, or the
//! supervisor was handed to another parent), the supervisor spills: it writes that memory and
//! everything the task prints from then on to a private file beside the task's launch record
//! (`<record>.out` / `<record>.err`, mode 0600), whose first line `start=<offset>` says at
//! which byte of the stream it begins. The daemon back streams the files to srun from the byte
//! srun says it has (see [`crate::step_adopt`]).

use std::collections::VecDeque;
use std::fs::File;
use std::io::{BufRead, BufReader, Read, Seek, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

/// Bytes of a stream kept in memory while the daemon reads it (what it may have read and not
/// passed on when it dies: its pipe, its queue to srun).
pub const RING: usize = 2 << 20;

/// The spill file of stream `stderr` of the task whose launch record is `record`.
pub fn spill_path(record: &Path, stderr: bool) -> PathBuf {
    let mut path = record.as_os_str().to_owned();
    path.push(if stderr { ".err" } else { ".out" });
    PathBuf::from(path)
}

enum Mode<W> {
    /// Copied to the daemon's pipe.
    Daemon(W),
    /// The daemon is gone: into the spill file.
    Spill(File),
    /// The spill file failed too (logged): dropped, so the task never blocks.
    Dropped,
}

/// One stream of a task on its way to the daemon, or to the spill file once it is gone.
pub struct Keeper<W: Write> {
    mode: Mode<W>,
    spill: PathBuf,
    /// The last bytes written to the daemon.
    ring: VecDeque<u8>,
    /// Bytes of the stream so far.
    offset: u64,
}

impl<W: Write> Keeper<W> {
    /// Copies to `to` (the daemon's pipe), spilling into `spill` once it is gone.
    pub fn new(to: W, spill: PathBuf) -> Self {
        Self {
            mode: Mode::Daemon(to),
            spill,
            ring: VecDeque::new(),
            offset: 0,
        }
    }

    /// Passes `data` on.
    pub fn write(&mut self, data: &[u8]) {
        if let Mode::Daemon(to) = &mut self.mode {
            if to.write_all(data).and_then(|()| to.flush()).is_ok() {
                self.ring.extend(data);
                let over = self.ring.len().saturating_sub(RING);
                self.ring.drain(..over);
                self.offset += data.len() as u64;
                return;
            }
            self.spill();
        }
        if let Mode::Spill(f) = &mut self.mode
            && let Err(e) = f.write_all(data)
        {
            note(&self.spill, &e);
            self.mode = Mode::Dropped;
        }
        self.offset += data.len() as u64;
    }

    /// The daemon is gone: from now on into the spill file, starting with what it may not
    /// have passed on. Nothing when spilling already.
    pub fn spill(&mut self) {
        if !matches!(self.mode, Mode::Daemon(_)) {
            return;
        }
        let start = self.offset - self.ring.len() as u64;
        let opened = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(&self.spill)
            .and_then(|mut f| {
                let (a, b) = self.ring.as_slices();
                f.write_all(format!("start={start}\n").as_bytes())?;
                f.write_all(a)?;
                f.write_all(b)?;
                Ok(f)
            });
        self.ring = VecDeque::new();
        self.mode = match opened {
            Ok(f) => Mode::Spill(f),
            Err(e) => {
                note(&self.spill, &e);
                Mode::Dropped
            }
        };
    }
}

/// Says on stderr (the daemon's log while it runs; nowhere once it is gone, never a panic)
/// that the spill file failed.
fn note(spill: &Path, e: &std::io::Error) {
    let _ = writeln!(
        std::io::stderr(),
        "{}: {e}; the task's output is dropped",
        spill.display()
    );
}

/// A spill file being read from the byte srun has (see the module doc).
#[derive(Debug)]
pub struct SpillReader {
    file: BufReader<File>,
}

impl SpillReader {
    /// Opens `path` positioned at byte `from` of the stream (at its first byte kept when
    /// `from` is older); `None` when it does not exist (yet) or is not a spill file.
    pub fn open(path: &Path, from: u64) -> Option<Self> {
        let mut file = BufReader::new(File::open(path).ok()?);
        let mut header = String::new();
        file.read_line(&mut header).ok()?;
        let start: u64 = header.strip_prefix("start=")?.trim_end().parse().ok()?;
        if !header.ends_with('\n') {
            return None;
        }
        let skip = from.saturating_sub(start);
        let skip = i64::try_from(skip).ok()?;
        file.seek_relative(skip).ok()?;
        Some(Self { file })
    }

    /// What was written since the last read (empty at its current end).
    pub fn read_more(&mut self, max: usize) -> std::io::Result<Vec<u8>> {
        let mut buf = vec![0u8; max];
        let n = self.file.read(&mut buf)?;
        buf.truncate(n);
        Ok(buf)
    }

    /// Its position in the file, for tests.
    pub fn position(&mut self) -> u64 {
        self.file.stream_position().unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::MetadataExt;

    struct Daemon {
        got: Vec<u8>,
        alive: bool,
    }

    impl Write for &mut Daemon {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            if !self.alive {
                return Err(std::io::ErrorKind::BrokenPipe.into());
            }
            self.got.extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    fn read_all(path: &Path, from: u64) -> Vec<u8> {
        let mut r = SpillReader::open(path, from).expect("a spill file");
        let mut all = Vec::new();
        loop {
            let more = r.read_more(7).unwrap();
            if more.is_empty() {
                return all;
            }
            all.extend(more);
        }
    }

    #[test]
    fn a_gone_daemon_leaves_the_rest_of_the_stream_in_a_private_file_from_any_byte() {
        let dir = tempfile::tempdir().unwrap();
        let spill = spill_path(&dir.path().join("step.1.0.0"), false);
        assert!(spill.ends_with("step.1.0.0.out"));
        let mut daemon = Daemon {
            got: Vec::new(),
            alive: true,
        };
        {
            let mut k = Keeper::new(&mut daemon, spill.clone());
            k.write(b"1\n2\n");
            k.write(b"3\n");
            assert!(SpillReader::open(&spill, 0).is_none(), "nothing spilled");
            k.spill();
            k.write(b"4\n");
            k.write(b"5\n");
        }
        assert_eq!(daemon.got, b"1\n2\n3\n");
        let mode = std::fs::metadata(&spill).unwrap().mode();
        assert_eq!(mode & 0o777, 0o600);
        // srun got "1\n2\n" (4 bytes) before the daemon died: it gets the rest once.
        assert_eq!(read_all(&spill, 4), b"3\n4\n5\n");
        assert_eq!(read_all(&spill, 0), b"1\n2\n3\n4\n5\n");
        assert_eq!(read_all(&spill, 10), b"");
    }

    #[test]
    fn a_failed_write_spills_and_only_the_last_ring_is_kept() {
        let dir = tempfile::tempdir().unwrap();
        let spill = spill_path(&dir.path().join("step.1.0.0"), true);
        let mut daemon = Daemon {
            got: Vec::new(),
            alive: true,
        };
        let big = vec![b'x'; RING + 10];
        {
            let mut k = Keeper::new(&mut daemon, spill.clone());
            k.write(&big);
        }
        daemon.alive = false;
        {
            let mut k = Keeper::new(&mut daemon, spill.clone());
            k.write(b"lost-to-the-ring-test");
        }
        // A fresh keeper whose first write fails spills from byte 0.
        assert_eq!(read_all(&spill, 0), b"lost-to-the-ring-test");
        daemon.alive = true;
        let spill2 = spill_path(&dir.path().join("step.1.0.1"), true);
        let mut k = Keeper::new(&mut daemon, spill2.clone());
        k.write(&big);
        k.spill();
        drop(k);
        let mut r = SpillReader::open(&spill2, 0).unwrap();
        // The first 10 bytes fell out of the ring; reading starts at byte 10.
        let header = format!("start={}\n", 10).len() as u64;
        assert_eq!(r.position(), header);
        assert_eq!(read_all(&spill2, 0).len(), RING);
    }
}
