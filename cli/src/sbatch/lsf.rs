//! `#BSUB` directives: sbatch reads the options of an LSF script when it has `#BSUB` lines
//! (and then no `#PBS` ones), unless `--ignore-pbs` is given, translated into its own. They
//! sit where `#PBS` directives do in the order of precedence (see [`super::pbs`]).
//!
//! The letters Slurm 22.05's sbatch reads, as seen on the oracle (any other letter is refused
//! as an invalid option): `-J` name, `-W` time limit (Slurm's time forms: `-W 1:30` is one
//! minute and a half, shown as two minutes), `-n min[,max]` tasks (the larger count), `-o`,
//! `-e`, `-q` partition, `-x` exclusive, `-m` node list, `-M` memory per CPU (in kilobytes
//! without a unit, rounded up to whole megabytes), and `-cwd` (read as a long option, so `-c`
//! stands for it too) working directory.

use crate::jobspec::Opt;

use super::SbatchError;
use super::args::SbOpt;

/// The sbatch options the `#BSUB` words of a script stand for, in order.
pub fn options(words: &[String]) -> Result<Vec<(SbOpt, Option<String>)>, SbatchError> {
    let mut out = Vec::new();
    let mut rest = words.iter();
    while let Some(word) = rest.next() {
        let Some(body) = word.strip_prefix('-').filter(|b| !b.is_empty()) else {
            return Err(SbatchError::Directive(word.clone()));
        };
        let (name, attached) = match body.split_once('=') {
            Some((n, v)) => (n, Some(v.to_string())),
            None => (body, None),
        };
        // Read as getopt_long_only reads it: a prefix of `cwd` is that long option.
        let (letter, inline) = if "cwd".starts_with(name) {
            ('c', attached)
        } else {
            let mut chars = body.chars();
            let c = chars.next().unwrap_or('-');
            let tail: String = chars.collect();
            (c, (!tail.is_empty()).then_some(tail))
        };
        if letter == 'x' && inline.is_none() {
            out.push((SbOpt::Job(Opt::Exclusive), None));
            continue;
        }
        let opt = match letter {
            'c' => Opt::Chdir,
            'e' => Opt::Error,
            'J' => Opt::JobName,
            'm' => Opt::NodeList,
            'M' => Opt::MemPerCpu,
            'n' => Opt::Ntasks,
            'o' => Opt::Output,
            'q' => Opt::Partition,
            'W' => Opt::Time,
            other => return Err(SbatchError::ForeignOption(other)),
        };
        let value = match inline {
            Some(v) => v,
            None => rest
                .next()
                .cloned()
                .ok_or(SbatchError::ForeignOption(letter))?,
        };
        let value = match opt {
            Opt::Ntasks => max_count(&value),
            Opt::MemPerCpu => memory(&value),
            _ => value,
        };
        out.push((SbOpt::Job(opt), Some(value)));
    }
    Ok(out)
}

/// `-n min,max`: the larger count.
fn max_count(value: &str) -> String {
    match value.split_once(',') {
        Some((a, b)) => match (a.trim().parse::<u32>(), b.trim().parse::<u32>()) {
            (Ok(a), Ok(b)) => a.max(b).to_string(),
            _ => value.to_string(),
        },
        None => value.to_string(),
    }
}

/// `-M size`: kilobytes when no unit is given, in whole megabytes rounded up.
fn memory(value: &str) -> String {
    match value.trim().parse::<u64>() {
        Ok(kb) => format!("{}M", kb.div_ceil(1024).max(1)),
        Err(_) => value.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    fn job(opts: Vec<(SbOpt, Option<String>)>) -> Vec<(Opt, Option<String>)> {
        opts.into_iter()
            .map(|(o, v)| match o {
                SbOpt::Job(j) => (j, v),
                other => panic!("not a job option: {other:?}"),
            })
            .collect()
    }

    #[test]
    fn lsf_options_become_sbatch_options() {
        let got = options(&words(
            "-J bn -W 1:30 -n 2,4 -o o -e e -q debug -x -m n1 -M 100 -cwd /tmp -Jglued",
        ))
        .unwrap();
        let s = |x: &str| Some(x.to_string());
        assert_eq!(
            job(got),
            vec![
                (Opt::JobName, s("bn")),
                (Opt::Time, s("1:30")),
                (Opt::Ntasks, s("4")),
                (Opt::Output, s("o")),
                (Opt::Error, s("e")),
                (Opt::Partition, s("debug")),
                (Opt::Exclusive, None),
                (Opt::NodeList, s("n1")),
                (Opt::MemPerCpu, s("1M")),
                (Opt::Chdir, s("/tmp")),
                (Opt::JobName, s("glued")),
            ]
        );
        assert_eq!(memory("2G"), "2G");
        assert_eq!(memory("3000"), "3M");
        assert_eq!(
            job(options(&words("-c sub")).unwrap()),
            vec![(Opt::Chdir, s("sub"))]
        );
    }

    #[test]
    fn other_letters_are_refused() {
        for w in ["-B", "-P p", "-u a@b"] {
            assert!(
                matches!(options(&words(w)), Err(SbatchError::ForeignOption(_))),
                "{w}"
            );
        }
        assert!(matches!(
            options(&words("stray")),
            Err(SbatchError::Directive(_))
        ));
    }
}
