//! A small hand-written Standard Workload Format trace exercising every field, `-1`s, each
//! status and malformed lines, shared by the parser and import tests.

/// 2026-11-01T00:00:00Z: the trace's UnixStartTime.
pub const T0: i64 = 1_793_491_200;

/// The trace. Line numbers matter: tests name them.
pub const TRACE: &str = "\
; Version: 2.2
; Computer: Test machine
; UnixStartTime: 1793491200
; TimeZoneString: Europe/Berlin
; MaxJobs: 11
; MaxNodes: 4
; MaxProcs: 16 (4 nodes of 4)
;
; A free comment: this one is not a header key because it has spaces.
1 0 10 3600 4 3000.5 1024 4 7200 2048 1 1 1 5 1 1 -1 -1
2 60 -1 1800 8 -1 -1 8 -1 -1 0 2 1 -1 -1 2 1 30
3 120 300 0 -1 -1 -1 2 600 -1 5 1 2 -1 -1 1 -1 -1
4 180 0 600 2 -1 -1 -1 900 -1 5 3 -1 -1 -1 -1 -1 -1
5 240 0 100.4 1 -1 -1 1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1
this is not a job
6 300 5 100 2 -1 -1 2 100 -1 7 1 1 -1 -1 1 -1 -1
7 360 5 100 2
8 420 5 100 2 -1 -1 2 100 -1 2 1 1 -1 -1 1 -1 -1
9 -5 5 100 2 -1 -1 2 100 -1 1 1 1 -1 -1 1 -1 -1

10 480 0 50 abc -1 -1 2 100 -1 1 1 1 -1 -1 1 -1 -1
0 490 0 50 1 -1 -1 1 100 -1 1 1 1 -1 -1 1 -1 -1
11 540 7200 7200 16 7000 2048 16 3600 4096 1 4 2 9 2 2 -1 -1
";

/// (job number, CPU-seconds allocated) of the jobs the trace loads.
pub const LOADED: [(u32, u64); 6] = [
    (1, 4 * 3600),
    (2, 8 * 1800),
    (3, 0),
    (4, 2 * 600),
    (5, 100),
    (11, 16 * 7200),
];

/// Malformed lines: numbers.
pub const MALFORMED_LINES: [u64; 6] = [15, 16, 17, 19, 21, 22];
