"""Drives submitit, unchanged, against the local cluster named by SLURM_CONF.

Usage: submitit_driver.py FOLDER. FOLDER is submitit's shared folder (the test's temp dir).
Prints one `ok <check>` line per check that passed; any failure raises, so the exit code is
non-zero and the traceback tells what went wrong.
"""

import sys
import time

import submitit

# Bounded waits: the cluster runs on a loaded CI host, and nothing here may hang forever.
DEADLINE_S = 120


def add(a, b):
    return a + b


def square(x):
    return x * x


def fail(message):
    raise ValueError(message)


def sleep_long():
    time.sleep(600)
    return "woke up"


def state(job):
    """The job's state as submitit reads it from sacct now."""
    return job.get_info(mode="force").get("State", "")


def until(what, check):
    end = time.monotonic() + DEADLINE_S
    while time.monotonic() < end:
        if check():
            return
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}")


def main(folder):
    executor = submitit.AutoExecutor(folder=folder)
    assert executor.cluster == "slurm", f"submitit sees no slurm cluster: {executor.cluster}"
    executor.update_parameters(timeout_min=5, name="sub")

    job = executor.submit(add, 2, 3)
    assert job.result() == 5, job.result()
    until("sacct to say COMPLETED", lambda: state(job) == "COMPLETED")
    print("ok function", flush=True)

    jobs = executor.map_array(square, [1, 2, 3])
    assert len({j.job_id.split("_")[0] for j in jobs}) == 1, [j.job_id for j in jobs]
    assert [j.result() for j in jobs] == [1, 4, 9]
    # srun's `--output %A_%a_%t_log.out` names the array and the element, as submitit reads it.
    for j in jobs:
        log = j.stdout() or ""
        assert "Starting with JobEnvironment" in log, (j.job_id, log)
    print("ok array", flush=True)

    job = executor.submit(fail, "broken on purpose")
    try:
        job.result()
    except submitit.core.utils.FailedJobError as e:
        assert "ValueError: broken on purpose" in str(e), str(e)
    else:
        raise AssertionError("the job's exception did not come back")
    until("sacct to say FAILED", lambda: state(job) == "FAILED")
    print("ok exception", flush=True)

    job = executor.submit(sleep_long)
    until("the job to run", lambda: state(job) == "RUNNING")
    job.cancel(check=True)
    until("the job to be cancelled", lambda: state(job).startswith("CANCELLED"))
    assert isinstance(job.exception(), submitit.core.utils.UncompletedJobError)
    print("ok cancel", flush=True)


if __name__ == "__main__":
    main(sys.argv[1])
