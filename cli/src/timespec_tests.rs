//! Slurm's time specifications: examples, and properties over arbitrary instants.

use proptest::prelude::*;

use super::*;

/// 2026-11-21T10:00:00Z, a Saturday.
const NOW: i64 = 1_795_255_200;
const MIDNIGHT: i64 = 1_795_219_200;

fn p(spec: &str) -> Result<i64, TimeSpecError> {
    parse(spec, NOW, Zone::Utc)
}

fn err_pos(spec: &str) -> usize {
    p(spec).unwrap_err().pos
}

#[test]
fn named_times_are_today_even_when_still_to_come() {
    assert_eq!(p("now"), Ok(NOW));
    assert_eq!(p("today"), Ok(MIDNIGHT));
    assert_eq!(p("midnight"), Ok(MIDNIGHT));
    assert_eq!(p("TOMORROW"), Ok(MIDNIGHT + 86_400));
    assert_eq!(p("noon"), Ok(MIDNIGHT + 12 * 3600));
    assert_eq!(p("elevenses"), Ok(MIDNIGHT + 11 * 3600));
    assert_eq!(p("fika"), Ok(MIDNIGHT + 15 * 3600));
    assert_eq!(p("teatime"), Ok(MIDNIGHT + 16 * 3600));
}

#[test]
fn relative_times_take_every_unit() {
    assert_eq!(p("now-1hour"), Ok(NOW - 3600));
    assert_eq!(p("now+90"), Ok(NOW + 90));
    assert_eq!(p("now-2days"), Ok(NOW - 2 * 86_400));
    assert_eq!(p("now+1week"), Ok(NOW + 7 * 86_400));
    assert_eq!(p("now-30minutes"), Ok(NOW - 1800));
    assert_eq!(p("now-30min"), Ok(NOW - 1800));
    assert_eq!(p("now-5seconds"), Ok(NOW - 5));
    assert_eq!(err_pos("now-"), 3);
    assert_eq!(err_pos("now-3fortnights"), 3);
    assert_eq!(err_pos("now*3"), 3);
}

#[test]
fn dates_and_clock_times() {
    assert_eq!(p("2026-11-21T10:00"), Ok(NOW));
    assert_eq!(p("2026-11-21T10:00:30"), Ok(NOW + 30));
    assert_eq!(p("2026-11-21"), Ok(MIDNIGHT));
    assert_eq!(p("11/21"), Ok(MIDNIGHT));
    assert_eq!(p("11/21/26"), Ok(MIDNIGHT));
    assert_eq!(p("11.21.26"), Ok(MIDNIGHT));
    assert_eq!(p("1121"), Ok(MIDNIGHT));
    assert_eq!(p("112126"), Ok(MIDNIGHT));
    assert_eq!(p("11/21-10:00"), Ok(NOW));
    assert_eq!(p("10:00"), Ok(NOW));
    assert_eq!(p("22:15:05"), Ok(MIDNIGHT + 22 * 3600 + 15 * 60 + 5));
    assert_eq!(p("10:00pm"), Ok(MIDNIGHT + 22 * 3600));
    assert_eq!(p("12:00am"), Ok(MIDNIGHT));
}

#[test]
fn bad_specs_name_the_failing_position() {
    let e = p("yesterdayish").unwrap_err();
    assert_eq!(
        e.to_string(),
        "Invalid time specification (pos=0): yesterdayish"
    );
    assert_eq!(err_pos("2026-11-21T25:00"), 11);
    assert_eq!(err_pos("11/21-9"), 6);
    assert_eq!(err_pos("13/40"), 0);
    assert_eq!(err_pos(""), 0);
    assert_eq!(err_pos("10:61"), 0);
}

proptest! {
    #[test]
    fn iso_timestamps_round_trip(t in 0i64..4_102_444_800) {
        let shown = crate::timefmt::timestamp(t.max(1), Zone::Utc);
        prop_assert_eq!(parse(&shown, NOW, Zone::Utc), Ok(t.max(1)));
    }

    #[test]
    fn relative_offsets_move_now_by_whole_units(
        n in 0i64..100_000,
        unit in prop::sample::select(vec![("s", 1i64), ("minutes", 60), ("hours", 3600),
                                          ("days", 86_400), ("weeks", 604_800)]),
        now in 0i64..4_000_000_000,
    ) {
        let (name, secs) = unit;
        prop_assert_eq!(parse(&format!("now-{n}{name}"), now, Zone::Utc), Ok(now - n * secs));
        prop_assert_eq!(parse(&format!("now+{n}{name}"), now, Zone::Utc), Ok(now + n * secs));
    }

    #[test]
    fn clock_times_fall_on_the_day_of_now(
        h in 0u32..24, m in 0u32..60, s in 0u32..60, now in 0i64..4_000_000_000,
    ) {
        let t = parse(&format!("{h:02}:{m:02}:{s:02}"), now, Zone::Utc).unwrap();
        prop_assert_eq!(t - t.rem_euclid(86_400), now - now.rem_euclid(86_400));
        prop_assert_eq!(t.rem_euclid(86_400), i64::from(h * 3600 + m * 60 + s));
    }

    #[test]
    fn short_dates_agree_with_iso_dates(y in 0i32..100, m in 1u32..13, d in 1u32..29) {
        let iso = parse(&format!("{}-{m:02}-{d:02}", 2000 + y), NOW, Zone::Utc);
        prop_assert_eq!(parse(&format!("{m:02}/{d:02}/{y:02}"), NOW, Zone::Utc), iso.clone());
        prop_assert_eq!(parse(&format!("{m:02}{d:02}{y:02}"), NOW, Zone::Utc), iso);
    }

    #[test]
    fn arbitrary_text_never_panics(spec in ".{0,24}", now in any::<i64>()) {
        let _ = parse(&spec, now, Zone::Utc);
        let _ = parse(&spec, now, Zone::Local);
    }
}
