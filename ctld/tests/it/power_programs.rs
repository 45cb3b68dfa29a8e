//! Power save programs run for real: ResumeProgram gets the hostlist and `SLURM_RESUME_FILE`
//! (removed afterwards), SuspendProgram the hostlist, and neither blocks the controller: a
//! program still running does not stop requests, node registrations or other programs.

use crate::runtime_support;
use sluice_testkit::{file_contents, file_gone};

use runtime_support::{Ctld, client, conf, conf_text, fake_nodes, job, next_event, register, temp};
use sluice_ctld::conf::CtldConf;
use sluice_ctld::core::{PowerCommand, ResumeFile, ResumeJob};
use sluice_ctld::runtime::programs::Programs;
use sluice_vocab::JobState;
use sluice_wire::proto::ListJobsRequest;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// A script recording its argument and resume file under `out`, then waiting (bounded) for
/// `out/<name>.release` to exist before it exits.
fn script(dir: &Path, name: &str) -> PathBuf {
    let path = dir.join(format!("{name}.sh"));
    let out = dir.display();
    let body = format!(
        "#!/bin/sh\n\
         echo \"$SLURM_RESUME_FILE\" > {out}/{name}.path.tmp\n\
         if [ -n \"$SLURM_RESUME_FILE\" ]; then cat \"$SLURM_RESUME_FILE\" > {out}/{name}.json; fi\n\
         mv {out}/{name}.path.tmp {out}/{name}.path\n\
         echo \"$@\" > {out}/{name}.args.tmp && mv {out}/{name}.args.tmp {out}/{name}.args\n\
         i=0\n\
         while [ ! -e {out}/{name}.release ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done\n"
    );
    std::fs::write(&path, body).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn programs_get_their_hostlist_and_resume_file_without_waiting_for_each_other() {
    let dir = tempfile::tempdir().unwrap();
    let suspend = script(dir.path(), "suspend");
    let resume = script(dir.path(), "resume");
    let text = format!(
        "ClusterName=c\nSlurmctldHost=h\nSuspendTime=60\nSuspendProgram={}\nResumeProgram={}\n\
         NodeName=cloud[1-3,7-8] CPUs=2 State=CLOUD\n",
        suspend.display(),
        resume.display()
    );
    let (conf, _) = CtldConf::parse(Path::new("slurm.conf"), &text).unwrap();
    let programs = Programs::new(&conf.power, dir.path());
    programs.run(PowerCommand::Suspend {
        nodes: Vec::new(),
        hostlist: "cloud[1-2]".into(),
    });
    let file = ResumeFile {
        all_nodes_resume: "cloud[3,7-8]".into(),
        jobs: vec![ResumeJob {
            extra: None,
            features: Some("c1,c2".into()),
            job_id: 140814,
            nodes_alloc: "cloud[3,7-8]".into(),
            nodes_resume: "cloud[3,7-8]".into(),
            oversubscribe: "OK".into(),
            partition: "cloud".into(),
            reservation: None,
        }],
    };
    programs.run(PowerCommand::Resume {
        nodes: Vec::new(),
        hostlist: "cloud[3,7-8]".into(),
        file: file.clone(),
    });
    // The suspend program is still waiting; the resume program ran anyway.
    assert_eq!(
        file_contents(&dir.path().join("suspend.args")).await,
        "cloud[1-2]\n"
    );
    assert_eq!(
        file_contents(&dir.path().join("resume.args")).await,
        "cloud[3,7-8]\n"
    );
    assert_eq!(
        file_contents(&dir.path().join("resume.json")).await,
        file.to_json()
    );
    let path = file_contents(&dir.path().join("resume.path")).await;
    let path = PathBuf::from(path.trim());
    assert!(path.starts_with(dir.path()), "{}", path.display());
    assert_eq!(file_contents(&dir.path().join("suspend.path")).await, "\n");
    std::fs::write(dir.path().join("resume.release"), "").unwrap();
    std::fs::write(dir.path().join("suspend.release"), "").unwrap();
    file_gone(&path).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_burst_job_resumes_its_cloud_node_through_the_program_then_launches() {
    let (dir, state) = temp();
    let resume = script(dir.path(), "resume");
    let suspend = script(dir.path(), "suspend");
    let extra = format!(
        "SuspendTime=3600\nSuspendProgram={}\nResumeProgram={}\n\
         NodeName=ec1 CPUs=2 RealMemory=1000 NodeAddr=127.0.0.1 Port=1 State=CLOUD\n\
         PartitionName=cloud Nodes=ec1\n",
        suspend.display(),
        resume.display()
    );
    let conf = conf(dir.path(), &conf_text(&state, 1, &extra));
    std::fs::create_dir_all(&state).unwrap();
    let ctld = Ctld::start(conf, None).await;
    let mut admin = client(ctld.port, 0).await;
    let mut user = client(ctld.port, 4242).await;
    let mut req = job("burst");
    req.partition = Some("cloud".into());
    let id = user.submit(req).await.unwrap().into_inner().job_id;

    let args = file_contents(&dir.path().join("resume.args")).await;
    assert_eq!(args, "ec1\n");
    let json: serde_json::Value =
        serde_json::from_str(&file_contents(&dir.path().join("resume.json")).await).unwrap();
    assert_eq!(json["all_nodes_resume"], "ec1");
    assert_eq!(json["jobs"][0]["job_id"], id);
    assert_eq!(json["jobs"][0]["nodes_alloc"], "ec1");
    assert_eq!(json["jobs"][0]["partition"], "cloud");

    // The ResumeProgram is still running: the controller answers, and shows the job CF.
    let jobs = admin
        .list_jobs(ListJobsRequest {
            job_ids: vec![id],
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner()
        .jobs;
    assert_eq!(
        JobState::from_stored(jobs[0].state),
        Some(JobState::Configuring)
    );
    // ... and `squeue -t CF` finds it.
    let configuring = admin
        .list_jobs(ListJobsRequest {
            states: vec![JobState::Configuring.stored()],
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner()
        .jobs;
    assert_eq!(
        configuring.iter().map(|j| j.job_id).collect::<Vec<_>>(),
        [id]
    );

    // The node comes up (as the program would make it) and the job launches there.
    let (ports, mut events) = fake_nodes(&["ec1"]).await;
    register(&mut admin, "ec1", ports[0], vec![]).await;
    let runtime_support::NodeEvent::Launch { node, req } = next_event(&mut events).await else {
        panic!("expected a launch");
    };
    assert_eq!((node.as_str(), req.job_id), ("ec1", id));
    std::fs::write(dir.path().join("resume.release"), "").unwrap();
    let path = file_contents(&dir.path().join("resume.path")).await;
    file_gone(Path::new(path.trim())).await;
    ctld.stop().await;
}
