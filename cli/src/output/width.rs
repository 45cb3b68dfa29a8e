//! Column widths as users write them (`jobid%70000`, `%.65536i`, `Name:.99999999999`), read
//! once for every command.
//!
//! Slurm reads a width with `atoi`/`strtol` and pads with `printf("%*s")`: it documents no
//! maximum and has none short of `int`, so `%.4294967296i` is undefined behaviour in C and a
//! width of two billion asks for gigabytes per line. Sluice clamps instead of refusing, so every
//! format Slurm accepts is still accepted: a width's magnitude is at most [`MAX_WIDTH`]. That is
//! 65535, the widest pad Rust's formatter accepts and wide enough for any real value (a node list
//! or a comment), while a line of a hundred such columns stays a few megabytes.

/// The widest column any command pads to; wider requests are cut down to it.
pub const MAX_WIDTH: u16 = u16::MAX;

/// Reads a width as C's `atoi` does (leading blanks, an optional sign, the digits that follow,
/// anything after them ignored; no digits is 0), saturating at ±[`MAX_WIDTH`]. A negative width
/// means left-justified in the commands that take one.
pub fn parse_signed(text: &str) -> i32 {
    let text = text.trim_start();
    let (negative, rest) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text.strip_prefix('+').unwrap_or(text)),
    };
    let magnitude = i32::try_from(parse_digits(rest).0).unwrap_or(i32::from(MAX_WIDTH));
    if negative { -magnitude } else { magnitude }
}

/// Reads the leading digits of `text` as an unsigned width, at most [`MAX_WIDTH`], and how many
/// bytes of digits there were (squeue's and sinfo's `%[.]size` and `name:[.]size`).
pub fn parse_digits(text: &str) -> (usize, usize) {
    let digits = text.bytes().take_while(u8::is_ascii_digit).count();
    let width = text[..digits].bytes().fold(0usize, |n, d| {
        n.saturating_mul(10)
            .saturating_add(usize::from(d - b'0'))
            .min(usize::from(MAX_WIDTH))
    });
    (width, digits)
}

/// A width computed rather than read (the widest value of a column), cut to [`MAX_WIDTH`].
pub fn clamp(width: usize) -> usize {
    width.min(usize::from(MAX_WIDTH))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn reads_like_atoi_and_saturates() {
        assert_eq!(parse_signed("20x"), 20);
        assert_eq!(parse_signed("-5"), -5);
        assert_eq!(parse_signed(" +7"), 7);
        assert_eq!(parse_signed("x"), 0);
        assert_eq!(parse_signed("70000"), 65535);
        assert_eq!(parse_signed("-99999999999999999999"), -65535);
        assert_eq!(parse_digits("4294967296abc"), (65535, 10));
        assert_eq!(parse_digits("18i"), (18, 2));
        assert_eq!(clamp(1 << 40), 65535);
    }

    proptest! {
        #[test]
        fn never_panics_and_stays_within_bounds(text in "\\PC*") {
            let max = i32::from(MAX_WIDTH);
            let signed = parse_signed(&text);
            prop_assert!((-max..=max).contains(&signed));
            let (width, digits) = parse_digits(&text);
            prop_assert!(width <= usize::from(MAX_WIDTH));
            prop_assert!(digits <= text.len());
        }

        #[test]
        fn digit_strings_keep_their_value_below_the_bound(n in 0u64..u64::MAX, sign in "[-+]?") {
            let got = i64::from(parse_signed(&format!("{sign}{n}garbage")));
            let want = i64::try_from(n.min(u64::from(MAX_WIDTH))).unwrap();
            prop_assert_eq!(got, if sign == "-" { -want } else { want });
        }
    }
}
