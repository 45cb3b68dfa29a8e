"""Drives dask-jobqueue, unchanged, against the local cluster named by SLURM_CONF: a
SLURMCluster of two workers, each a batch job, computes a sum.

Usage: dask_driver.py LOG_DIRECTORY. Prints `ok sum <value>` when the workers computed it;
any failure raises.
"""

import sys

from dask.distributed import Client
from dask_jobqueue import SLURMCluster

TIMEOUT_S = 120


def main(log_directory):
    cluster = SLURMCluster(
        cores=1,
        processes=1,
        memory="1GB",
        walltime="00:05:00",
        log_directory=log_directory,
        scheduler_options={"host": "127.0.0.1"},
    )
    try:
        cluster.scale(jobs=2)
        with Client(cluster) as client:
            client.wait_for_workers(2, timeout=TIMEOUT_S)
            futures = client.map(lambda x: x * 10, range(10))
            total = client.submit(sum, futures).result(timeout=TIMEOUT_S)
            assert total == 450, total
            workers = {w["host"] for w in client.scheduler_info()["workers"].values()}
            print(f"ok sum {total} on {len(client.scheduler_info()['workers'])} workers", flush=True)
            assert workers, workers
    finally:
        cluster.close()
    print("ok closed", flush=True)


if __name__ == "__main__":
    main(sys.argv[1])
