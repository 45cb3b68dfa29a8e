//! `#PBS` directives: sbatch reads the options of a PBS/Torque script and translates them into
//! its own, unless `--ignore-pbs` (or `SBATCH_IGNORE_PBS`) is given. They are applied after the
//! `#SBATCH` directives and before the environment and the command line, so on Slurm 22.05 a
//! `#PBS -N` wins over an `#SBATCH -J` and `SBATCH_JOB_NAME` wins over both (seen on the
//! oracle).
//!
//! The translation, as Slurm 22.05's sbatch documents and does it:
//! `-N name`, `-o`, `-e`, `-A`, `-q` (partition), `-a` (begin, in Slurm's time forms),
//! `-h` (hold), `-t`/`-J` (array), `-m a|b|e|n` (mail types FAIL, BEGIN, END, NONE),
//! `-M` (mail user), `-p` (nice), `-v list` (exported along with everything), `-V` (export
//! everything), `-W depend=...` (dependency), and `-l` resources: `walltime`, `nodes=N[:ppn=M]`,
//! `select`, `mpiprocs`, `ncpus`, `mem`, `vmem`, `pmem`, `file`, `nice`, `naccelerators`
//! (a GRES request, refused here as `--gres` is).
//!
//! Read and without effect, as in Slurm: `-c`, `-C`, `-I`, `-j` (stderr already goes with
//! stdout unless `-e` names a file), `-k`, `-r` (on the oracle `-r n` left `Requeue=1`), `-S`,
//! `-u`, `-z`, the `-W` attributes other than `depend=`, and the `-l` resources no Slurm
//! option stands for (`arch`, `cput`, `host`, `opsys`, `other`, `pcput`, `proc`, `pvmem`,
//! `software`, ...).

use crate::getopt::{self, GetoptError, HasArg, Mode, OptSpec};
use crate::jobspec::Opt;

use super::SbatchError;
use super::args::SbOpt;

/// A PBS option letter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Pbs {
    /// Translated directly into this sbatch option.
    To(Opt),
    /// `-l` resource list.
    Resources,
    /// `-m` mail events.
    Mail,
    /// `-v` exported variables.
    Vars,
    /// `-V` every variable.
    AllVars,
    /// `-W` attributes.
    Attributes,
    /// Read and without effect (see the module comment).
    Ignored,
}

/// qsub's letters as sbatch reads them (Slurm's PBS option string).
fn table() -> Vec<OptSpec<Pbs>> {
    const R: HasArg = HasArg::Required;
    const N: HasArg = HasArg::No;
    [
        ('a', R, Pbs::To(Opt::Begin)),
        ('A', R, Pbs::To(Opt::Account)),
        ('c', R, Pbs::Ignored),
        ('C', R, Pbs::Ignored),
        ('e', R, Pbs::To(Opt::Error)),
        ('h', N, Pbs::To(Opt::Hold)),
        ('I', N, Pbs::Ignored),
        ('j', R, Pbs::Ignored),
        ('J', R, Pbs::To(Opt::Array)),
        ('k', R, Pbs::Ignored),
        ('l', R, Pbs::Resources),
        ('m', R, Pbs::Mail),
        ('M', R, Pbs::To(Opt::MailUser)),
        ('N', R, Pbs::To(Opt::JobName)),
        ('o', R, Pbs::To(Opt::Output)),
        ('p', R, Pbs::To(Opt::Nice)),
        ('q', R, Pbs::To(Opt::Partition)),
        ('r', R, Pbs::Ignored),
        ('S', R, Pbs::Ignored),
        ('t', R, Pbs::To(Opt::Array)),
        ('u', R, Pbs::Ignored),
        ('v', R, Pbs::Vars),
        ('V', N, Pbs::AllVars),
        ('W', R, Pbs::Attributes),
        ('z', N, Pbs::Ignored),
    ]
    .into_iter()
    .map(|(short, arg, id)| OptSpec {
        // Never matched: `#PBS` lines have no long options.
        long: "\u{0}pbs",
        short: Some(short),
        arg,
        id,
    })
    .collect()
}

/// The sbatch options the `#PBS` words of a script stand for, in order.
pub fn options(words: &[String]) -> Result<Vec<(SbOpt, Option<String>)>, SbatchError> {
    let parsed = getopt::parse(&table(), words, Mode::StopAtOperand).map_err(|e| match e {
        GetoptError::UnknownShort(c) => SbatchError::ForeignOption(c),
        other => SbatchError::Getopt(other),
    })?;
    if let Some(word) = parsed.operands.first() {
        return Err(SbatchError::Directive(word.clone()));
    }
    let mut out = Vec::new();
    let mut to = |opt: Opt, value: Option<String>| out.push((SbOpt::Job(opt), value));
    for (pbs, value) in parsed.opts {
        let v = value.clone().unwrap_or_default();
        match pbs {
            Pbs::To(opt) => to(opt, value),
            Pbs::Resources => {
                for (opt, value) in resources(&v) {
                    to(opt, value);
                }
            }
            Pbs::Mail => to(Opt::MailType, Some(mail_types(&v))),
            Pbs::Vars => to(Opt::Export, Some(format!("ALL,{v}"))),
            Pbs::AllVars => to(Opt::Export, Some("ALL".to_string())),
            Pbs::Attributes => {
                if let Some(dep) = strip_prefix_ci(&v, "depend=") {
                    to(Opt::Dependency, Some(dep.to_string()));
                }
            }
            Pbs::Ignored => {}
        }
    }
    Ok(out)
}

/// `-m` events: `a` abort (FAIL), `b` begin, `e` end, `n` none.
fn mail_types(value: &str) -> String {
    let mut types: Vec<&str> = Vec::new();
    for c in value.chars() {
        let t = match c {
            'a' => "FAIL",
            'b' => "BEGIN",
            'e' => "END",
            'n' => "NONE",
            _ => continue,
        };
        if !types.contains(&t) {
            types.push(t);
        }
    }
    if types.is_empty() {
        // Handed on as given: the mail-type check refuses it with Slurm's words.
        return value.to_string();
    }
    types.join(",")
}

/// The options a `-l` resource list stands for.
fn resources(list: &str) -> Vec<(Opt, Option<String>)> {
    let mut out = Vec::new();
    for item in list.split(',') {
        let Some((key, value)) = item.split_once('=') else {
            continue;
        };
        let value = value.trim();
        let some = |s: &str| Some(s.to_string());
        match key.trim().to_ascii_lowercase().as_str() {
            "walltime" => out.push((Opt::Time, some(value))),
            "mem" | "vmem" => out.push((Opt::Mem, Some(pbs_size(value)))),
            "pmem" => out.push((Opt::MemPerCpu, Some(pbs_size(value)))),
            "file" => out.push((Opt::Tmp, Some(pbs_size(value)))),
            "ncpus" => out.push((Opt::MinCpus, some(value))),
            "mpiprocs" => out.push((Opt::NtasksPerNode, some(value))),
            "select" => out.push((Opt::Nodes, some(value))),
            "nice" => out.push((Opt::Nice, some(value))),
            "naccelerators" => out.push((Opt::Other("gres"), Some(format!("mic:{value}")))),
            "nodes" => out.extend(nodes(value)),
            _ => {}
        }
    }
    out
}

/// `nodes=N[:ppn=M][:property...]`: N nodes, M tasks on each.
fn nodes(value: &str) -> Vec<(Opt, Option<String>)> {
    let mut parts = value.split(':');
    let count = parts.next().unwrap_or_default();
    let mut out = vec![(Opt::Nodes, Some(count.to_string()))];
    if let Some(ppn) = parts.find_map(|p| strip_prefix_ci(p, "ppn=")) {
        out.push((Opt::NtasksPerNode, Some(ppn.to_string())));
        if let (Ok(n), Ok(p)) = (count.parse::<u64>(), ppn.parse::<u64>()) {
            out.push((Opt::Ntasks, Some((n * p).to_string())));
        }
    }
    out
}

/// A PBS size (`100mb`, `2gb`, `512kb`, `1024` bytes-less megabytes) in sbatch's form.
fn pbs_size(value: &str) -> String {
    let lower = value.to_ascii_lowercase();
    lower.strip_suffix('b').unwrap_or(&lower).to_string()
}

fn strip_prefix_ci<'a>(text: &'a str, prefix: &str) -> Option<&'a str> {
    text.get(..prefix.len())
        .filter(|head| head.eq_ignore_ascii_case(prefix))
        .map(|_| &text[prefix.len()..])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    fn job(opts: &[(SbOpt, Option<String>)]) -> Vec<(Opt, String)> {
        opts.iter()
            .map(|(o, v)| match o {
                SbOpt::Job(j) => (*j, v.clone().unwrap_or_default()),
                other => panic!("not a job option: {other:?}"),
            })
            .collect()
    }

    #[test]
    fn pbs_options_become_sbatch_options() {
        let got = options(&words(
            "-N pn -l walltime=00:05:00,nodes=2:ppn=3,mem=100mb -q debug -m be -M a@b \
             -j oe -o out -e err -A acct -W depend=afterok:12 -t 1-3 -h -r n",
        ))
        .unwrap();
        let s = |x: &str| x.to_string();
        assert_eq!(
            job(&got),
            vec![
                (Opt::JobName, s("pn")),
                (Opt::Time, s("00:05:00")),
                (Opt::Nodes, s("2")),
                (Opt::NtasksPerNode, s("3")),
                (Opt::Ntasks, s("6")),
                (Opt::Mem, s("100m")),
                (Opt::Partition, s("debug")),
                (Opt::MailType, s("BEGIN,END")),
                (Opt::MailUser, s("a@b")),
                (Opt::Output, s("out")),
                (Opt::Error, s("err")),
                (Opt::Account, s("acct")),
                (Opt::Dependency, s("afterok:12")),
                (Opt::Array, s("1-3")),
                (Opt::Hold, s("")),
            ]
        );
    }

    #[test]
    fn variables_and_other_resources() {
        let got = options(&words("-v A=1,B -V -l pmem=2gb,ncpus=4,arch=x86 -p 10")).unwrap();
        let s = |x: &str| x.to_string();
        assert_eq!(
            job(&got),
            vec![
                (Opt::Export, s("ALL,A=1,B")),
                (Opt::Export, s("ALL")),
                (Opt::MemPerCpu, s("2g")),
                (Opt::MinCpus, s("4")),
                (Opt::Nice, s("10")),
            ]
        );
        assert_eq!(mail_types("a"), "FAIL");
        assert_eq!(mail_types("n"), "NONE");
    }

    #[test]
    fn unknown_letters_and_stray_words_are_refused() {
        let e = options(&words("-X foo")).unwrap_err();
        assert!(matches!(e, SbatchError::ForeignOption('X')), "{e:?}");
        let mut text = Vec::new();
        e.print(&mut text);
        assert_eq!(
            String::from_utf8(text).unwrap(),
            "sbatch: invalid option -- 'X'\n\
             sbatch: error: Unrecognized command line parameter ?\n"
        );
        assert!(matches!(
            options(&words("-N a stray")),
            Err(SbatchError::Directive(w)) if w == "stray"
        ));
    }
}
