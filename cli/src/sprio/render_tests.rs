//! Golden outputs of sprio's layouts.

use super::render::{self, PrioRow, Weights};

fn weights() -> Weights {
    Weights {
        age: 1000,
        fairshare: 10_000,
        job_size: 100,
        partition: 0,
        qos: 0,
        tres: Vec::new(),
        tres_text: "(null)".into(),
    }
}

fn rows() -> Vec<PrioRow> {
    vec![
        PrioRow {
            job_id: "12".into(),
            partition: "debug".into(),
            user: "alice".into(),
            account: "phys".into(),
            cluster: "c1".into(),
            priority: 5525,
            age: 0.5,
            fairshare: 0.5,
            job_size: 0.25,
            part: 1.0,
            qos: 0.0,
            tres: Vec::new(),
            nice: 0,
        },
        PrioRow {
            job_id: "13_2".into(),
            partition: "long_partition".into(),
            user: "bob".into(),
            account: "chem".into(),
            cluster: "c1".into(),
            priority: 1,
            nice: 100,
            ..PrioRow::default()
        },
    ]
}

fn show(format: &str, no_header: bool, weights_line: bool) -> String {
    let layout = render::parse(format).unwrap();
    render::lines(&layout, &rows(), &weights(), no_header, weights_line).join("\n") + "\n"
}

#[test]
fn default_columns_follow_the_weights() {
    let w = weights();
    let f = render::default_format(&w, false, false, false);
    assert_eq!(f, "%.15i %9r %.10Y %.10S %.10A %.10F %.10J");
    assert_eq!(
        show(&f, false, true),
        "          JOBID PARTITION   PRIORITY       SITE        AGE  FAIRSHARE    JOBSIZE
        Weights                                       1000      10000        100
             12 debug           5525          0        500       5000         25
           13_2 long_part          1          0          0          0          0
"
    );
    assert_eq!(
        render::default_format(&w, false, false, true),
        "%.15i %9r %.8u %.10Y %.10S %.10A %.10F %.10J"
    );
}

#[test]
fn normalized_values_have_seven_decimals() {
    let f = render::default_format(&weights(), false, true, false);
    assert_eq!(f, "%.15i %9r %10y %10a %10f %10j");
    assert_eq!(
        show(&f, true, false),
        "             12 debug     0.0000013  0.5000000  0.5000000  0.2500000 
           13_2 long_part 0.0000000  0.0000000  0.0000000  0.0000000 
"
    );
}

#[test]
fn long_format_adds_user_account_and_nice() {
    let f = render::default_format(&weights(), true, false, false);
    let out = show(&f, false, false);
    let mut lines = out.lines();
    assert_eq!(
        lines.next().unwrap(),
        "          JOBID PARTITION     USER  ACCOUNT   PRIORITY       SITE        AGE      ASSOC  FAIRSHARE    JOBSIZE  PARTITION    QOSNAME        QOS        NICE                 TRES"
    );
    assert_eq!(
        lines.next().unwrap(),
        "             12 debug        alice     phys       5525          0        500          0       5000         25          0                     0           0                     "
    );
}

#[test]
fn unknown_letters_are_refused_with_slurms_words() {
    assert_eq!(
        render::parse("%i %Z").unwrap_err(),
        "sprio: error: Invalid job format specification: Z"
    );
}

#[test]
fn tres_columns_show_each_weighted_tres() {
    let mut w = weights();
    w.tres = Weights::parse_tres("CPU=1000,Mem=20");
    w.tres_text = "CPU=1000,Mem=20".into();
    assert_eq!(w.tres, [("cpu".to_string(), 1000), ("mem".to_string(), 20)]);
    assert_eq!(
        render::default_format(&w, false, false, false),
        "%.15i %9r %.10Y %.10S %.10A %.10F %.10J %.20T"
    );
    assert_eq!(
        render::default_format(&w, false, true, false),
        "%.15i %9r %10y %10a %10f %10j %20t"
    );
    let mut r = rows();
    r[0].tres = vec![("cpu".into(), 0.5), ("mem".into(), 0.25)];
    let layout = render::parse("%.7i %.20T %.20t").unwrap();
    let out = render::lines(&layout, &r[..1], &w, false, true).join("\n") + "\n";
    assert_eq!(
        out,
        "  JOBID                 TRES                 TRES
Weights      CPU=1000,Mem=20      CPU=1000,Mem=20
     12        cpu=500,mem=5    cpu=0.50,mem=0.25
"
    );
}
