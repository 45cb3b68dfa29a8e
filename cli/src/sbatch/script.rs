//! The batch script: `--wrap`, the checks sbatch makes before sending it, and its `#SBATCH`
//! (and `#PBS`, see [`super::pbs`]) directives, read until the first line that is neither
//! blank nor a comment.

use super::SbatchError;

/// The script `--wrap=<cmd>` submits.
pub fn wrap(cmd: &str) -> String {
    format!("#!/bin/sh\n# This script was created by sbatch --wrap.\n\n{cmd}\n")
}

/// Refuses what Slurm refuses: an empty or blank script, one without `#!`, DOS line breaks,
/// NUL characters.
pub fn check(body: &[u8]) -> Result<(), SbatchError> {
    if body.is_empty() {
        return Err(SbatchError::EmptyScript);
    }
    if body.iter().all(u8::is_ascii_whitespace) {
        return Err(SbatchError::BlankScript);
    }
    if !body.starts_with(b"#!") {
        return Err(SbatchError::NotAScript);
    }
    if body.windows(2).any(|w| w == b"\r\n") {
        return Err(SbatchError::DosLineBreaks);
    }
    if body.contains(&0) {
        return Err(SbatchError::NulInScript);
    }
    Ok(())
}

/// The words of the `#SBATCH` lines, in order, stopping at the first command line.
/// `file` names the script in error messages.
pub fn directives(file: &str, body: &str) -> Result<Vec<String>, SbatchError> {
    directives_of("#SBATCH", file, body)
}

/// The words of the lines starting with `prefix` (`#SBATCH`, `#PBS`), in order, stopping at
/// the first command line.
pub fn directives_of(prefix: &str, file: &str, body: &str) -> Result<Vec<String>, SbatchError> {
    let mut words = Vec::new();
    for (n, line) in body.lines().enumerate() {
        if let Some(rest) = line.strip_prefix(prefix) {
            split_directive(rest, &mut words).map_err(|quote| SbatchError::UnmatchedQuote {
                file: file.to_string(),
                line: n + 1,
                quote,
                text: line.to_string(),
            })?;
            continue;
        }
        let first = line.trim_start().chars().next();
        if first.is_some_and(|c| c != '#') {
            break;
        }
    }
    Ok(words)
}

/// Splits a directive's text into words: quotes group, a backslash escapes the next character,
/// an unquoted `#` starts a comment. Returns the unmatched quote character on error.
fn split_directive(text: &str, words: &mut Vec<String>) -> Result<(), char> {
    let mut chars = text.chars().peekable();
    loop {
        while chars.next_if(|c| c.is_whitespace()).is_some() {}
        if chars.peek().is_none() {
            return Ok(());
        }
        let mut word = String::new();
        let mut quote: Option<char> = None;
        let mut comment = false;
        while let Some(&c) = chars.peek() {
            if quote.is_none() && c.is_whitespace() {
                break;
            }
            chars.next();
            match (quote, c) {
                (_, '\\') => {
                    if let Some(next) = chars.next() {
                        word.push(next);
                    }
                }
                (Some(q), c) if c == q => quote = None,
                (Some(_), c) => word.push(c),
                (None, '"' | '\'') => quote = Some(c),
                (None, '#') => {
                    comment = true;
                    break;
                }
                (None, c) => word.push(c),
            }
        }
        if let Some(q) = quote {
            return Err(q);
        }
        if !word.is_empty() {
            words.push(word);
        }
        if comment {
            return Ok(());
        }
    }
}

/// The job name a script gives when `-J` is absent: its file name.
pub fn default_name(script: Option<&str>) -> String {
    match script {
        Some(path) => std::path::Path::new(path)
            .file_name()
            .map_or_else(|| path.to_string(), |n| n.to_string_lossy().into_owned()),
        None => "sbatch".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checks_in_slurm_order() {
        assert!(matches!(check(b""), Err(SbatchError::EmptyScript)));
        assert!(matches!(check(b" \n\t"), Err(SbatchError::BlankScript)));
        assert!(matches!(check(b"echo hi\n"), Err(SbatchError::NotAScript)));
        assert!(matches!(
            check(b"#!/bin/sh\r\necho\r\n"),
            Err(SbatchError::DosLineBreaks)
        ));
        assert!(matches!(
            check(b"#!/bin/sh\necho \0\n"),
            Err(SbatchError::NulInScript)
        ));
        assert!(check(wrap("hostname").as_bytes()).is_ok());
    }

    #[test]
    fn directives_stop_at_the_first_command() {
        let body = "#!/bin/bash\n#SBATCH -J one\n\n  # a comment\n#SBATCH --time=10 -p debug\n\
                    echo hi\n#SBATCH -J never\n";
        assert_eq!(
            directives("job.sh", body).unwrap(),
            vec!["-J", "one", "--time=10", "-p", "debug"]
        );
    }

    #[test]
    fn directive_quotes_escapes_and_comments() {
        let body = "#!/bin/sh\n#SBATCH --job-name=\"my job\" --comment='a b' # trailing note\n\
                    #SBATCH -o out\\ file.txt\n#SBATCH --constraint=x#y\n";
        assert_eq!(
            directives("s", body).unwrap(),
            vec![
                "--job-name=my job",
                "--comment=a b",
                "-o",
                "out file.txt",
                "--constraint=x"
            ]
        );
        let err = directives("s", "#!/bin/sh\n#SBATCH -J \"open\n").unwrap_err();
        assert_eq!(
            err.to_string(),
            "s: line 2: Unmatched `\"` in [#SBATCH -J \"open]"
        );
    }

    #[test]
    fn default_names() {
        assert_eq!(default_name(Some("/a/b/run.sh")), "run.sh");
        assert_eq!(default_name(None), "sbatch");
    }
}
