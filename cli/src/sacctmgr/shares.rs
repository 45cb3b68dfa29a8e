//! `Fairshare=` (also `Shares=`) of `add|modify user|account`: a number of shares or `parent`.

use super::error::SacctmgrError;
use crate::words::is_keyword;

/// Whether `key` names the fair-share setting.
pub fn is_fairshare_key(key: &str) -> bool {
    is_keyword(key, "FairShare", 2) || is_keyword(key, "Shares", 2)
}

/// The value as the dbd takes it, checked first so a bad one changes nothing.
pub fn checked(value: &str) -> Result<String, SacctmgrError> {
    sluice_vocab::fairshare::Shares::parse(value)
        .map(|s| s.to_string())
        .ok_or_else(|| SacctmgrError::InvalidFairshare(value.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_and_parent_are_shares() {
        assert!(is_fairshare_key("fairshare") && is_fairshare_key("Shares"));
        assert!(!is_fairshare_key("f"));
        assert_eq!(checked("10").unwrap(), "10");
        assert_eq!(checked("Parent").unwrap(), "parent");
        assert!(matches!(
            checked("x"),
            Err(SacctmgrError::InvalidFairshare(_))
        ));
    }
}
