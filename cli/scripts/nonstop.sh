#!/bin/sh
# nonstop.sh - run it between the steps of a batch job submitted with --no-kill:
#
#   srun ./my_step
#   nonstop.sh || exit 1
#   [ -f /tmp/smd_job_${SLURM_JOB_ID}_nodes.sh ] && . /tmp/smd_job_${SLURM_JOB_ID}_nodes.sh
#
# It runs `smd --auto`: finds the job's failed (and failing) nodes and does what
# SMD_NONSTOP_FAILED (SMD_NONSTOP_FAILING) says: REPLACE, DROP, TIME_LIMIT_DELAY=min,
# TIME_LIMIT_EXTEND=min, TIME_LIMIT_DROP=min, EXIT_JOB, joined by ':'. After a replacement or a
# drop the new job environment is in /tmp/smd_job_<jobid>_nodes.sh. Exits 1 when the job should
# exit (EXIT_JOB, nodes that could not be fixed, or smd could not ask the controller), else 0.
# SMD names the smd binary to run (default: smd on PATH).
# Installed by `sluice up`; part of Sluice (Apache-2.0).

if [ -z "$SLURM_JOB_ID" ]; then
    echo "nonstop.sh: error: SLURM_JOB_ID is not set: run it inside a job" >&2
    exit 1
fi
smd=${SMD:-smd}
if ! command -v "$smd" >/dev/null 2>&1; then
    echo "nonstop.sh: error: $smd not found (set PATH or SMD)" >&2
    exit 1
fi
if "$smd" --auto; then
    exit 0
fi
exit 1
