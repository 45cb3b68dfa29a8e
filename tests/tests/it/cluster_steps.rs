//! Steps sharing a batch job's CPUs on a real local cluster (`select/cons_tres`, so a job
//! holds exactly the CPUs it asked for): parallel `srun`s each take their own CPUs, one that
//! finds them taken waits with Slurm's messages until a step ends, `--overlap` runs on CPUs
//! other steps hold, and a step larger than the job is refused at once.

use crate::common;

use common::cluster::Cluster;

const CONS_TRES: &[&str] = &["SelectType=select/cons_tres", "SelectTypeParameters=CR_CPU"];

#[test]
fn a_step_whose_cpus_are_taken_waits_for_them() {
    let c = Cluster::start_with(1, CONS_TRES);
    // Two steps hold the job's two CPUs until srun says a step waits for them; the
    // overlapping step runs meanwhile; then the third step gets a CPU once one is done.
    let script = r#"hold='touch held.$SLURM_STEP_ID; until grep -q "creation temporarily disabled" slurm-$SLURM_JOB_ID.out; do sleep 0.1; done'
srun -n1 sh -c "$hold" &
srun -n1 sh -c "$hold" &
until [ "$(ls held.* 2>/dev/null | wc -l)" -ge 2 ]; do sleep 0.1; done
srun --overlap -n2 echo overlapping
srun -n1 echo third
wait
srun -n3 true; echo refused=$?
"#;
    let id = c.sbatch(&["-n2", "--wrap", script]);
    assert_eq!(
        c.wait_done(id),
        "COMPLETED",
        "{}",
        c.read(&format!("slurm-{id}.out"))
    );
    let out = c.read(&format!("slurm-{id}.out"));
    let waited = format!(
        "srun: Job {id} step creation temporarily disabled, retrying (Requested nodes are busy)"
    );
    assert!(out.contains(&waited), "one step waited:\n{out}");
    assert!(
        out.lines()
            .any(|l| l.starts_with(&format!("srun: Step created for StepId={id}."))),
        "the waiting step says when it was created:\n{out}"
    );
    assert_eq!(
        out.matches(&waited).count(),
        1,
        "only one step waited:\n{out}"
    );
    assert!(out.contains("third\n"), "{out}");
    assert_eq!(out.matches("overlapping\n").count(), 2, "{out}");
    let first_overlap = out.find("overlapping").unwrap_or(usize::MAX);
    assert!(
        first_overlap < out.find(&waited).unwrap_or(0),
        "the overlapping step ran while the CPUs were held:\n{out}"
    );
    assert!(
        out.contains(&format!(
            "srun: error: Unable to create step for job {id}: More processors requested than permitted"
        )),
        "{out}"
    );
    assert!(out.contains("refused=1"), "{out}");
}
