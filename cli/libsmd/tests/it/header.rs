//! `include/smd.h` is written by hand: every exported `smd_*` function of `src/ffi` must be
//! declared in it, and every declared one exported, with the error codes' values matching.

use std::path::Path;

fn read(rel: &str) -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)).unwrap()
}

fn names_after(text: &str, marker: &str) -> Vec<String> {
    let mut names: Vec<String> = text
        .match_indices(marker)
        .map(|(i, _)| {
            text[i + marker.len()..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect::<String>()
        })
        .map(|n| format!("smd_{n}"))
        .collect();
    names.sort();
    names.dedup();
    names
}

#[test]
fn the_header_declares_exactly_the_exported_functions() {
    let header = read("include/smd.h");
    let exported = names_after(&read("src/ffi/mod.rs"), "extern \"C\" fn smd_");
    assert!(exported.len() >= 15, "{exported:?}");
    let declared = names_after(&header, "smd_")
        .into_iter()
        .filter(|n| header.contains(&format!(" {n}(")) || header.contains(&format!("*{n}(")))
        .collect::<Vec<_>>();
    assert_eq!(declared, exported);
}

#[test]
fn the_headers_error_codes_are_the_librarys() {
    let header = read("include/smd.h");
    for n in 0..13 {
        let code = smd::ErrorCode::from_i32(n).unwrap();
        let line = header
            .lines()
            .find(|l| {
                l.starts_with("#define SMD_")
                    && l.split_whitespace().nth(2) == Some(&n.to_string())
                    && !l.contains("NODE")
                    && !l.contains("EVENT")
            })
            .unwrap_or_else(|| panic!("no SMD_E* code {n} ({code:?})"));
        assert!(line.starts_with("#define SMD_"), "{line}");
    }
    assert!(header.contains("#define SMD_EREFUSED 8"));
    assert_eq!(smd::ErrorCode::Refused as i32, 8);
    assert!(header.contains("#define SMD_NODE_FAILING 2"));
    assert_eq!(smd::NodeState::Failing as i32, 2);
    assert!(header.contains("#define SMD_EVENT_JOB_ENDED 7"));
    assert_eq!(smd::EventKind::JobEnded as i32, 7);
}
