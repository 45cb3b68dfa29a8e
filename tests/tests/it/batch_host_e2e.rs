//! `sbatch --batch=features` through the real binaries: the script runs on the first node of
//! its allocation with those features; without a `--constraint` holding them sbatch fails
//! with Slurm's words.

use crate::common;

use common::cluster::Cluster;

#[test]
fn the_script_runs_on_a_node_with_the_batch_features() {
    let c = Cluster::start(2);
    // Node features, given by a reconfigure (they are live).
    let conf = std::fs::read_to_string(c.conf()).unwrap();
    let conf = conf
        .replace("NodeName=clustern1 ", "NodeName=clustern1 Features=small ")
        .replace("NodeName=clustern2 ", "NodeName=clustern2 Features=big ");
    std::fs::write(c.conf(), conf).unwrap();
    c.ok("scontrol", &["reconfigure"]);
    let id = c.sbatch(&[
        "-N2",
        "-C",
        "small|big",
        "--batch=big",
        "--wrap",
        "echo $SLURMD_NODENAME > host.txt",
    ]);
    assert_eq!(c.wait_done(id), "COMPLETED");
    assert_eq!(c.read("host.txt"), "clustern2\n");
    let out = c.cmd("sbatch", &["--batch=big", "--wrap", "true"]);
    assert_eq!(
        (out.code, out.stderr.as_str()),
        (
            1,
            "sbatch: error: Batch job submission failed: Job --batch option is invalid or \
             not a subset of --constraints\n"
        ),
        "{out:?}"
    );
}
