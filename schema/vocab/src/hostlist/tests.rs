use proptest::prelude::*;

use super::*;

fn ex(expr: &str) -> Vec<String> {
    match expand(expr) {
        Ok(names) => names,
        Err(e) => panic!("expand({expr:?}) failed: {e}"),
    }
}

fn names(list: &str) -> Vec<String> {
    list.split(' ').map(str::to_owned).collect()
}

#[test]
fn expands_ranges_lists_and_plain_names() {
    assert_eq!(
        ex("node[1-3,5,7-9]"),
        names("node1 node2 node3 node5 node7 node8 node9")
    );
    assert_eq!(ex("n1,n2"), names("n1 n2"));
    assert_eq!(ex("login"), names("login"));
    assert_eq!(
        ex("node[01-03,20],gpu[1-2]"),
        names("node01 node02 node03 node20 gpu1 gpu2")
    );
    assert_eq!(ex("[1-2]"), names("1 2"));
    assert_eq!(ex("n[7]"), names("n7"));
    assert_eq!(ex("rack1-n[1-2]-ib"), names("rack1-n1-ib rack1-n2-ib"));
    assert!(ex("").is_empty());
    assert_eq!(ex("a,,b,"), names("a b"));
}

#[test]
fn padding_is_the_width_of_the_lower_bound() {
    assert_eq!(ex("node[001-003]"), names("node001 node002 node003"));
    assert_eq!(ex("n[8-11]"), names("n8 n9 n10 n11"));
    assert_eq!(ex("n[08-11]"), names("n08 n09 n10 n11"));
    assert_eq!(ex("n[098-101]"), names("n098 n099 n100 n101"));
    assert_eq!(ex("n[1-010]"), ex("n[1-10]"));
    let long = ex("node[001-100]");
    assert_eq!(
        (long.len(), long[0].as_str(), long[99].as_str()),
        (100, "node001", "node100")
    );
}

#[test]
fn bracket_groups_expand_as_a_cartesian_product_leftmost_slowest() {
    assert_eq!(ex("a[1-2]b[3-4]"), names("a1b3 a1b4 a2b3 a2b4"));
    assert_eq!(ex("r[1-2]n[1,3]x"), names("r1n1x r1n3x r2n1x r2n3x"));
    assert_eq!(ex("[0-1][0-1]").len(), 4);
}

#[test]
fn duplicates_are_kept_on_expand_and_removed_by_uniq() {
    assert_eq!(ex("n[1-2],n1,n[2,2]"), names("n1 n2 n1 n2 n2"));
    let list = Hostlist::parse("n3,n[1-2],n1").unwrap();
    assert_eq!(list.len(), 4);
    let uniq = list.uniq();
    assert_eq!(uniq.iter().collect::<Vec<_>>(), names("n1 n2 n3"));
    assert_eq!(uniq.len(), 3);
}

#[test]
fn errors_are_structured() {
    use HostlistError::*;
    let cases: Vec<(&str, HostlistError)> = vec![
        (
            "n[1-3",
            UnbalancedBracket {
                expr: "n[1-3".into(),
                pos: 1,
            },
        ),
        (
            "n1-3]",
            UnbalancedBracket {
                expr: "n1-3]".into(),
                pos: 4,
            },
        ),
        (
            "n[1[2]]",
            UnbalancedBracket {
                expr: "n[1[2]]".into(),
                pos: 3,
            },
        ),
        (
            "n1, n2",
            Whitespace {
                expr: "n1, n2".into(),
                pos: 3,
            },
        ),
        ("n[]", EmptyRange { text: "n[]".into() }),
        (
            "n[1,]",
            EmptyRange {
                text: "n[1,]".into(),
            },
        ),
        ("n[a-3]", BadNumber { text: "a-3".into() }),
        (
            "n[1-10:2]",
            BadNumber {
                text: "1-10:2".into(),
            },
        ),
        ("n[-3]", BadNumber { text: "-3".into() }),
        ("n[+3]", BadNumber { text: "+3".into() }),
        (
            "n[1-2-3]",
            BadNumber {
                text: "1-2-3".into(),
            },
        ),
        (
            "n[1-99999999999999999999999]",
            BadNumber {
                text: "1-99999999999999999999999".into(),
            },
        ),
        ("n[5-1]", DescendingRange { text: "5-1".into() }),
        (
            "n[1-2000000]",
            TooManyHosts {
                text: "n[1-2000000]".into(),
                max: MAX_HOSTS,
            },
        ),
        (
            "n[0-18446744073709551615]",
            TooManyHosts {
                text: "n[0-18446744073709551615]".into(),
                max: MAX_HOSTS,
            },
        ),
        (
            "a[1-1024]b[1-1025]",
            TooManyHosts {
                text: "a[1-1024]b[1-1025]".into(),
                max: MAX_HOSTS,
            },
        ),
        (
            "a[1-1048576],b",
            TooManyHosts {
                text: "b".into(),
                max: MAX_HOSTS,
            },
        ),
    ];
    for (expr, want) in cases {
        assert_eq!(expand(expr), Err(want), "{expr}");
    }
    let long = format!("n[{}1-2]", "0".repeat(300));
    assert_eq!(
        expand(&long),
        Err(NameTooLong {
            text: long.clone(),
            max: MAX_NAME_LEN
        })
    );
    assert_eq!(
        expand("n[5-1]").unwrap_err().to_string(),
        "invalid range: `5-1' (descending)"
    );
}

#[test]
fn the_host_cap_is_inclusive_and_large_lists_expand() {
    let list = Hostlist::parse("n[1-1048576]").unwrap();
    assert_eq!(list.len(), MAX_HOSTS);
    let names = ex("node[000001-100000]");
    assert_eq!(names.len(), 100_000);
    assert_eq!(names.last().map(String::as_str), Some("node100000"));
    assert_eq!(compress(&names), "node[000001-100000]");
}

#[test]
fn compress_groups_by_prefix_and_width() {
    assert_eq!(compress(&["n1"]), "n1");
    assert_eq!(compress(&["n1", "n2"]), "n[1-2]");
    assert_eq!(compress(&["n1", "n3"]), "n[1,3]");
    assert_eq!(compress(&["n9", "n10"]), "n[9-10]");
    assert_eq!(compress(&["n08", "n09", "n10", "n11"]), "n[08-11]");
    assert_eq!(compress(&["n08", "n100"]), "n[08,100]");
    assert_eq!(compress(&ex("node[001-003]")), "node[001-003]");
    assert_eq!(compress(&["n1", "n01", "n2", "n02"]), "n[1-2],n[01-02]");
    assert_eq!(compress(&["n001", "n10"]), "n10,n001");
    assert_eq!(compress(&["login", "login", "db"]), "db,login");
    assert_eq!(compress(&["n", "n1", "n2"]), "n,n[1-2]");
    assert_eq!(compress(&["7", "5", "6"]), "[5-7]");
    assert_eq!(compress(&["", "a"]), "a");
    assert_eq!(compress::<&str>(&[]), "");
}

#[test]
fn compress_sorts_and_dedups_like_sinfo() {
    let hosts = names("node10 gpu2 node9 node1 gpu1 node2 node10 n05");
    assert_eq!(compress(&hosts), "gpu[1-2],n05,node[1-2,9-10]");
    assert_eq!(compress(&names("n10 n2 n1")), "n[1-2,10]");
    let big = "n99999999999999999999999";
    assert_eq!(compress(&[big, "n1"]), format!("n1,{big}"));
    assert_eq!(
        ex(&compress(&[big, "n1"])),
        vec!["n1".to_owned(), big.to_owned()]
    );
}

#[test]
fn hostlist_api() {
    let list: Hostlist = "node[01-03],gpu[1-2]x,a[1-2]b[3-4]".parse().unwrap();
    assert_eq!(list.len(), 9);
    assert!(!list.is_empty());
    for host in list.iter() {
        assert!(list.contains(&host), "{host}");
    }
    for absent in [
        "node1", "node04", "node001", "gpu1", "gpu3x", "a1b5", "a1b", "", "node01x",
    ] {
        assert!(!list.contains(absent), "{absent}");
    }
    assert_eq!(
        list.to_string(),
        "a1b[3-4],a2b[3-4],gpu1x,gpu2x,node[01-03]"
    );
    assert!(Hostlist::new().is_empty());
    assert_eq!(Hostlist::new().to_string(), "");
    assert!("n[".parse::<Hostlist>().is_err());
    // Numbers next to digit literals: n[1-2]0 holds n10 and n20, not n1 or n2.
    let tricky = Hostlist::parse("n[1-2]0,m[1-12][1-2]").unwrap();
    assert!(tricky.contains("n10") && tricky.contains("n20") && !tricky.contains("n1"));
    assert!(tricky.contains("m112") && tricky.contains("m11") && !tricky.contains("m13"));
}

#[test]
fn push_coalesces_neighbours_and_keeps_order() {
    let list: Hostlist = names("n1 n2 n3 n09 n10 n1 x").into_iter().collect();
    assert_eq!(list.patterns.len(), 4, "{list:?}");
    assert_eq!(
        list.iter().collect::<Vec<_>>(),
        names("n1 n2 n3 n09 n10 n1 x")
    );
    assert_eq!(list, Hostlist::parse("n[1-3],n[09-10],n1,x").unwrap());
    assert_ne!(list, Hostlist::parse("n[1-3],n[09-10],x,n1").unwrap());
    assert!(list.contains("n10") && !list.contains("n9"));
}

/// Names from a small alphabet, with an optional number that may be zero-padded.
fn host_name() -> impl Strategy<Value = String> {
    let prefix = prop::sample::select(vec!["", "n", "node", "gpu-", "a1b", "r0n"]);
    let number = prop::option::of((0u64..130, 0usize..4));
    (prefix, number).prop_map(|(prefix, number)| match number {
        Some((value, pad)) => format!("{prefix}{value:0pad$}"),
        None if prefix.is_empty() => "x".to_owned(),
        None => prefix.to_owned(),
    })
}

/// Valid hostlist expressions built from the grammar (at most two bracket groups per item).
fn expression() -> impl Strategy<Value = String> {
    let spec = (0u64..40, 0u64..40, 0usize..4).prop_map(|(a, b, pad)| {
        let (lo, hi) = (a.min(b), a.max(b));
        if lo == hi {
            format!("{lo:0pad$}")
        } else {
            format!("{lo:0pad$}-{hi}")
        }
    });
    let bracket =
        prop::collection::vec(spec, 1..4).prop_map(|specs| format!("[{}]", specs.join(",")));
    let part = prop_oneof![bracket, "[a-z]{1,3}", "[0-9]{1,2}"];
    let item = prop::collection::vec(part, 1..3).prop_map(|parts| parts.concat());
    prop::collection::vec(item, 1..4).prop_map(|items| items.join(","))
}

proptest! {
    #[test]
    fn compress_round_trips_to_sorted_distinct_names(hosts in prop::collection::vec(host_name(), 0..40)) {
        let compressed = compress(&hosts);
        let expanded = expand(&compressed).unwrap();
        let mut want = hosts.clone();
        want.sort();
        want.dedup();
        let mut got = expanded.clone();
        got.sort();
        prop_assert_eq!(&got, &want, "{}", compressed);
        prop_assert_eq!(expanded.len(), want.len(), "duplicates in {}", compressed);
        prop_assert_eq!(compress(&expanded), compressed.clone());
        let list: Hostlist = hosts.iter().collect();
        prop_assert_eq!(list.uniq().iter().collect::<Vec<_>>(), expanded);
        prop_assert_eq!(list.to_string(), compressed);
        for host in &hosts {
            prop_assert!(list.contains(host), "{} not in {:?}", host, list);
        }
    }

    #[test]
    fn compress_of_an_expansion_is_stable(expr in expression()) {
        let expanded = expand(&expr).unwrap();
        let list = Hostlist::parse(&expr).unwrap();
        prop_assert_eq!(list.len(), expanded.len());
        let once = compress(&expanded);
        prop_assert_eq!(compress(&expand(&once).unwrap()), once.clone());
        for host in &expanded {
            prop_assert!(list.contains(host), "{} not in {}", host, expr);
        }
        let mut suffixed: Vec<String> = expanded.iter().map(|h| format!("{h}z")).collect();
        suffixed.retain(|h| !expanded.contains(h));
        for host in &suffixed {
            prop_assert!(!list.contains(host), "{} in {}", host, expr);
        }
    }

    #[test]
    fn arbitrary_input_never_panics(expr in "\\PC{0,40}") {
        if let Ok(list) = Hostlist::parse(&expr) {
            let expanded: Vec<String> = list.iter().collect();
            prop_assert_eq!(expanded.len(), list.len());
            let _ = list.to_string();
            let _ = list.contains(&expr);
        }
    }

    #[test]
    fn bracket_heavy_input_never_panics(expr in "[\\[\\]0-9,\\-:a ]{0,30}") {
        if let Ok(list) = Hostlist::parse(&expr) {
            prop_assert_eq!(list.iter().count(), list.len());
        }
    }
}
