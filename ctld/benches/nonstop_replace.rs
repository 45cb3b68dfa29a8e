//! Failure management benchmark on an idle controller, end to end over gRPC: a real
//! controller (its runtime, store and `Nonstop` service) in a temp dir on loopback, 64 nodes
//! registered by RPC (no node daemons: nothing runs), one `--no-kill` allocation of 4 nodes
//! followed by `WatchJob`. Each round sets one of the job's nodes DOWN, then asks for its
//! replacement by a hot spare, then resumes the node (it refills the pool).
//!
//! - event: from the `UpdateNode State=DOWN` request to the FAILED event reaching the
//!   subscriber (target: under 20 ms);
//! - replace: from the `ReplaceNode` request to its answer, sent once the new node list is
//!   committed and in force (target: under 50 ms).
//!
//! Run with `cargo bench -p sluice-ctld --bench nonstop_replace`; prints the median and the
//! worst of the rounds.

use sluice_ctld::conf::CtldConf;
use sluice_ctld::service::server;
use sluice_wire::auth::{KEY_FILE, Key, Signer};
use sluice_wire::client::{CtldClient, SignedChannel, connect};
use sluice_wire::proto::nonstop_client::NonstopClient;
use sluice_wire::proto::{
    NodeChangeRequest, NonstopEventKind, NonstopJobRequest, RegisterNodeRequest, SubmitJobRequest,
    UpdateNodeRequest, allocation_event::Event,
};
use std::time::{Duration, Instant};

const NODES: u32 = 64;
const ROUNDS: usize = 50;

fn median(mut v: Vec<Duration>) -> (Duration, Duration) {
    v.sort();
    (v[v.len() / 2], v[v.len() - 1])
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let dir = tempfile::tempdir().expect("temp dir");
    let d = dir.path().display();
    let slurm_conf = format!(
        "ClusterName=bench\nSlurmctldHost=localhost(127.0.0.1)\nSlurmctldPort=0\n\
         StateSaveLocation={d}/state\nSlurmdTimeout=0\nSlurmctldPlugin=slurmctld/nonstop\n\
         NodeName=bn[1-{NODES}] CPUs=4 RealMemory=100 Port=9\n\
         PartitionName=batch Nodes=ALL Default=YES MaxTime=INFINITE\n"
    );
    std::fs::write(dir.path().join("slurm.conf"), slurm_conf).expect("slurm.conf");
    std::fs::write(
        dir.path().join("nonstop.conf"),
        "HotSpareCount=batch:8\nTimeLimitExtend=1\n",
    )
    .expect("nonstop.conf");
    let (conf, _) = CtldConf::load(&dir.path().join("slurm.conf")).expect("conf");
    let key = Key::create_if_missing(&dir.path().join(KEY_FILE)).expect("key");
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let port = listener.local_addr().expect("addr").port();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let served = tokio::spawn(server::serve(conf, key.clone(), listener, async {
        let _ = stopped.await;
    }));
    let channel: SignedChannel = connect("127.0.0.1", port, Signer::for_current_user(key))
        .await
        .expect("connect");
    let mut ctld = CtldClient::new(channel.clone());
    let mut nonstop = NonstopClient::new(channel);
    for i in 1..=NODES {
        ctld.register_node(RegisterNodeRequest {
            name: format!("bn{i}"),
            cpus: 4,
            real_memory_mb: 100,
            addr: "127.0.0.1".into(),
            port: 9,
            ..Default::default()
        })
        .await
        .expect("register");
    }
    let mut alloc = ctld
        .allocate(SubmitJobRequest {
            name: "bench".into(),
            min_nodes: Some(4),
            no_kill: true,
            ..Default::default()
        })
        .await
        .expect("allocate")
        .into_inner();
    let job = loop {
        let ev = alloc.message().await.expect("stream").expect("event");
        if let Some(Event::Granted(_)) = ev.event {
            break ev.job_id;
        }
    };
    let mut events = nonstop
        .watch_job(NonstopJobRequest { job_id: job })
        .await
        .expect("watch")
        .into_inner();
    let (mut event_times, mut replace_times) = (Vec::new(), Vec::new());
    for _ in 0..ROUNDS {
        let nodes = nonstop
            .job_nodes(NonstopJobRequest { job_id: job })
            .await
            .expect("job nodes")
            .into_inner();
        let victim = nodes.nodes[1].name.clone();
        let t = Instant::now();
        ctld.update_node(UpdateNodeRequest {
            nodes: vec![victim.clone()],
            state: Some("DOWN".into()),
            reason: Some("bench".into()),
            ..Default::default()
        })
        .await
        .expect("down");
        loop {
            let ev = events.message().await.expect("stream").expect("event");
            if ev.kind() == NonstopEventKind::Failed && ev.node == victim {
                break;
            }
        }
        event_times.push(t.elapsed());
        let t = Instant::now();
        let after = nonstop
            .replace_node(NodeChangeRequest {
                job_id: job,
                node: victim.clone(),
            })
            .await
            .expect("replace")
            .into_inner();
        replace_times.push(t.elapsed());
        assert!(!after.nodes.iter().any(|n| n.name == victim), "replaced");
        ctld.update_node(UpdateNodeRequest {
            nodes: vec![victim],
            state: Some("RESUME".into()),
            ..Default::default()
        })
        .await
        .expect("resume");
    }
    let (event_med, event_max) = median(event_times);
    let (rep_med, rep_max) = median(replace_times);
    println!(
        "nonstop event to subscriber: median {event_med:?}, worst {event_max:?} (target < 20 ms)"
    );
    println!(
        "nonstop replacement in force: median {rep_med:?}, worst {rep_max:?} (target < 50 ms)"
    );
    // Every connection closes before the graceful shutdown, which waits for them.
    drop((alloc, events, ctld, nonstop));
    let _ = stop.send(());
    let _ = tokio::time::timeout(Duration::from_secs(10), served).await;
}
