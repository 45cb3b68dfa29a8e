//! The words of an interactive line, as sacctmgr, sreport and scontrol read them: a line split
//! at whitespace with quotes grouping, and Slurm's case-insensitive keyword prefixes.

/// Splits an interactive line into words: whitespace separates, quotes group and are dropped.
pub fn split_line(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut cur = String::new();
    let mut in_word = false;
    let mut quote: Option<char> = None;
    for c in line.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => cur.push(c),
            (None, '"' | '\'') => {
                quote = Some(c);
                in_word = true;
            }
            (None, c) if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut cur));
                    in_word = false;
                }
            }
            (None, c) => {
                cur.push(c);
                in_word = true;
            }
        }
    }
    if in_word {
        words.push(cur);
    }
    words
}

/// Slurm's keyword test: `word` is a case-insensitive prefix of `keyword` at least `min` long.
pub fn is_keyword(word: &str, keyword: &str, min: usize) -> bool {
    let n = word.len();
    n >= min && n <= keyword.len() && keyword.as_bytes()[..n].eq_ignore_ascii_case(word.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn keywords_match_case_insensitive_prefixes_of_a_minimum_length() {
        assert!(is_keyword("fed", "Federation", 1));
        assert!(is_keyword("FEDERATION", "Federation", 1));
        assert!(!is_keyword("federations", "Federation", 1));
        assert!(!is_keyword("tre", "Tree", 4));
        assert!(is_keyword("tree", "Tree", 4));
        assert!(!is_keyword("", "Tree", 1));
    }

    #[test]
    fn lines_split_on_whitespace_and_quotes_group() {
        assert_eq!(
            split_line("  add account a1 description=\"two words\"  "),
            strings(&["add", "account", "a1", "description=two words"])
        );
        assert_eq!(split_line("x ''"), strings(&["x", ""]));
    }
}
