//! The options naming files the submitting command reads: `--export-file` (variables for the
//! job) and `-F/--nodefile` (the nodes it needs, also `-w` with a `/` in its value).

use super::OptError;

/// `--export-file=<file|fd>`: the `NAME=value` definitions of a file, or of an open descriptor
/// when the value is a number from 3 up (0 to 2 are not accepted, as in Slurm). Definitions
/// are separated by NUL characters, so values may hold newlines; a file without any NUL holds
/// one definition a line (both forms checked on Slurm 22.05). Items without `=` are skipped.
pub fn export_file(value: &str) -> Result<Vec<(String, String)>, OptError> {
    let path = match value.parse::<u32>() {
        Ok(fd) if fd >= 3 => format!("/proc/self/fd/{fd}"),
        _ => value.to_string(),
    };
    let bytes = std::fs::read(&path).map_err(|_| OptError::ExportFile(value.to_string()))?;
    Ok(parse_env_file(&String::from_utf8_lossy(&bytes)))
}

/// The definitions of an environment file's text (see [`export_file`]).
pub fn parse_env_file(text: &str) -> Vec<(String, String)> {
    let sep = if text.contains('\0') { '\0' } else { '\n' };
    text.split(sep)
        .filter_map(|item| item.split_once('='))
        .filter(|(name, _)| !name.is_empty())
        .map(|(name, value)| (name.to_string(), value.to_string()))
        .collect()
}

/// `-F/--nodefile=<file>`: the node names in a file, one or more a line, separated by
/// newlines, commas or blanks, each a hostlist expression; expanded.
pub fn node_file(path: &str) -> Result<Vec<String>, OptError> {
    let text = std::fs::read_to_string(path).map_err(|e| OptError::NodeFile {
        path: path.to_string(),
        reason: io_reason(&e),
    })?;
    parse_node_file(&text).ok_or(OptError::NodeList)
}

/// The nodes of a node file's text (`None`: a word is not a hostlist).
pub fn parse_node_file(text: &str) -> Option<Vec<String>> {
    let mut nodes = Vec::new();
    for word in text.split(|c: char| c == ',' || c.is_whitespace()) {
        if !word.is_empty() {
            nodes.extend(super::values::hostlist(word)?);
        }
    }
    Some(nodes)
}

/// An I/O error as `strerror` words it (`No such file or directory`).
fn io_reason(e: &std::io::Error) -> String {
    let text = e.to_string();
    // std appends " (os error N)" to the C library's words.
    text.split(" (os error").next().unwrap_or(&text).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs(v: &[(&str, &str)]) -> Vec<(String, String)> {
        v.iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect()
    }

    #[test]
    fn env_files_are_nul_or_newline_separated() {
        assert_eq!(
            parse_env_file("A=1\0B=two words\nline2\0"),
            pairs(&[("A", "1"), ("B", "two words\nline2")])
        );
        assert_eq!(
            parse_env_file("C=3\nD=x=y\nnoequals\n=v\n"),
            pairs(&[("C", "3"), ("D", "x=y")])
        );
    }

    #[test]
    fn export_file_reads_a_file_or_says_it_cannot() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("env");
        std::fs::write(&f, "X=1\0Y=2\0").unwrap();
        let got = export_file(f.to_str().unwrap()).unwrap();
        assert_eq!(got, pairs(&[("X", "1"), ("Y", "2")]));
        assert_eq!(
            export_file("/nonexistent/env").unwrap_err().to_string(),
            "Could not open user environment file /nonexistent/env"
        );
        // Standard input is not a descriptor Slurm accepts: "0" is a file name.
        assert!(export_file("0").is_err());
    }

    #[test]
    fn node_files_list_hostlists() {
        assert_eq!(
            parse_node_file("n1\nn[2-3],m1\n\n  x4\n"),
            Some(vec![
                "n1".to_string(),
                "n2".into(),
                "n3".into(),
                "m1".into(),
                "x4".into()
            ])
        );
        assert_eq!(parse_node_file("n[1-\n"), None);
        assert_eq!(
            node_file("/nonexistent/nodes").unwrap_err().to_string(),
            "slurm_allocate_resources error opening file /nonexistent/nodes, \
             No such file or directory\nInvalid --nodefile node file"
        );
    }
}
