//! Revision comparison and projection merging (SPEC §5).
//!
//! Epochs are decimal strings of any length: they are compared as numbers by their digits, never
//! as floats or fixed-width integers (`"10" > "9"`, `"18446744073709551616" > "18446744073709551615"`).

use std::borrow::Cow;
use std::cmp::Ordering;

use super::model::{PendingAction, Revision};

/// An epoch is well formed when it is non-empty and all ASCII decimal digits.
pub fn epoch_is_well_formed(epoch: &str) -> bool {
    !epoch.is_empty() && epoch.bytes().all(|b| b.is_ascii_digit())
}

/// Numeric order of two well-formed epochs (leading zeros ignored).
pub fn compare_epochs(a: &str, b: &str) -> Ordering {
    let a = a.trim_start_matches('0');
    let b = b.trim_start_matches('0');
    a.len().cmp(&b.len()).then_with(|| a.cmp(b))
}

/// Which revision of a comparison has a malformed epoch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    Held,
    Incoming,
}

/// Order of two revisions by (epoch, sequence); `Err` names the first side whose epoch is
/// malformed (`a` is [`Side::Held`], `b` is [`Side::Incoming`]).
pub fn compare_revisions(a: &Revision, b: &Revision) -> Result<Ordering, Side> {
    if !epoch_is_well_formed(&a.epoch) {
        return Err(Side::Held);
    }
    if !epoch_is_well_formed(&b.epoch) {
        return Err(Side::Incoming);
    }
    Ok(compare_epochs(&a.epoch, &b.epoch).then(a.sequence.cmp(&b.sequence)))
}

/// Why [`can_replace`] decided what it did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReplaceReason {
    IncomingAbsent,
    IncomingEpochMalformed,
    NothingHeld,
    HeldEpochMalformed,
    NewerEpoch,
    OlderEpoch,
    NewerOrEqualSequence,
    OlderRevisionRejected,
}

/// May `incoming` replace `held` (SPEC §5)? Present, well-formed epoch, and: nothing held, a
/// malformed held epoch, a greater epoch, or an equal epoch with a sequence ≥ the held one
/// (equal re-delivery is idempotent).
pub fn can_replace(held: Option<&Revision>, incoming: Option<&Revision>) -> (bool, ReplaceReason) {
    let Some(incoming) = incoming else {
        return (false, ReplaceReason::IncomingAbsent);
    };
    if !epoch_is_well_formed(&incoming.epoch) {
        return (false, ReplaceReason::IncomingEpochMalformed);
    }
    let Some(held) = held else {
        return (true, ReplaceReason::NothingHeld);
    };
    if !epoch_is_well_formed(&held.epoch) {
        return (true, ReplaceReason::HeldEpochMalformed);
    }
    match compare_epochs(&incoming.epoch, &held.epoch) {
        Ordering::Greater => (true, ReplaceReason::NewerEpoch),
        Ordering::Less => (false, ReplaceReason::OlderEpoch),
        Ordering::Equal if incoming.sequence >= held.sequence => {
            (true, ReplaceReason::NewerOrEqualSequence)
        }
        Ordering::Equal => (false, ReplaceReason::OlderRevisionRejected),
    }
}

/// A session's pending projection: `action` is `None` when the key was omitted (unknown) and
/// `Some(None)` when clean.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PendingProjection {
    pub action: Option<Option<PendingAction>>,
    pub revision: Option<Revision>,
}

/// How a projection merge resolves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MergeDecision {
    /// The incoming revision replaces the held one: take the incoming value (an omitted incoming
    /// value keeps the held value) and the incoming revision.
    Advance,
    /// A revision exists on either side but the incoming one may not replace: keep everything held.
    KeepHeld,
    /// Neither side has a revision (legacy): the incoming value wins unless omitted.
    Legacy,
}

/// Decides a projection merge (SPEC §5) from the two revisions.
pub fn merge_decision(held: Option<&Revision>, incoming: Option<&Revision>) -> MergeDecision {
    if can_replace(held, incoming).0 {
        MergeDecision::Advance
    } else if held.is_some() || incoming.is_some() {
        MergeDecision::KeepHeld
    } else {
        MergeDecision::Legacy
    }
}

/// Merges an incoming projection into the held one (SPEC §5).
pub fn merge_projection(
    held: &PendingProjection,
    incoming: &PendingProjection,
) -> PendingProjection {
    let mut merged = held.clone();
    merge_projection_into(
        &mut merged,
        incoming.action,
        incoming.revision.as_ref().map(Cow::Borrowed),
    );
    merged
}

/// What [`merge_projection_into`] did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Merged<'a> {
    /// `held` changed.
    pub changed: bool,
    /// The incoming revision, when the rule kept the held projection instead of it (an input
    /// that is not newer than what is held).
    pub kept_held_over: Option<Cow<'a, Revision>>,
}

/// [`merge_projection`] in place. The incoming revision is borrowed or handed over (`Cow`): it
/// is copied, or moved, only when it is taken and differs from the held one (a session list
/// hands each row's over: 10⁶ rows, no copy); a revision the rule refuses is handed back.
pub fn merge_projection_into<'a>(
    held: &mut PendingProjection,
    action: Option<Option<PendingAction>>,
    revision: Option<Cow<'a, Revision>>,
) -> Merged<'a> {
    let revision = match merge_decision(held.revision.as_ref(), revision.as_deref()) {
        MergeDecision::Advance => revision,
        MergeDecision::KeepHeld => {
            return Merged {
                changed: false,
                kept_held_over: revision,
            }
        }
        MergeDecision::Legacy => None,
    };
    let action = action.or(held.action);
    let mut changed = held.action != action;
    held.action = action;
    if held.revision.as_ref() != revision.as_deref() {
        held.revision = revision.map(Cow::into_owned);
        changed = true;
    }
    Merged {
        changed,
        kept_held_over: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(epoch: &str, sequence: u64) -> Revision {
        Revision {
            epoch: epoch.into(),
            sequence,
        }
    }

    #[test]
    fn epochs_compare_by_value_at_any_length() {
        assert_eq!(compare_epochs("10", "9"), Ordering::Greater);
        assert_eq!(compare_epochs("007", "7"), Ordering::Equal);
        assert_eq!(
            compare_epochs("18446744073709551616", "18446744073709551615"),
            Ordering::Greater
        );
        assert_eq!(compare_epochs("0", "000"), Ordering::Equal);
    }

    #[test]
    fn replace_rule() {
        assert!(can_replace(None, Some(&r("1", 0))).0);
        assert!(!can_replace(None, None).0);
        assert!(!can_replace(None, Some(&r("", 0))).0);
        assert!(can_replace(Some(&r("abc", 9)), Some(&r("1", 0))).0);
        assert!(can_replace(Some(&r("7", 3)), Some(&r("7", 3))).0);
        assert!(!can_replace(Some(&r("7", 3)), Some(&r("7", 2))).0);
        assert!(can_replace(Some(&r("9", 5)), Some(&r("10", 1))).0);
        assert!(!can_replace(Some(&r("10", 1)), Some(&r("9", 6))).0);
    }

    #[test]
    fn merge_keeps_value_when_omitted() {
        let held = PendingProjection {
            action: Some(Some(PendingAction::Clarification)),
            revision: Some(r("7", 1)),
        };
        let incoming = PendingProjection {
            action: None,
            revision: Some(r("7", 2)),
        };
        let merged = merge_projection(&held, &incoming);
        assert_eq!(merged.action, Some(Some(PendingAction::Clarification)));
        assert_eq!(merged.revision, Some(r("7", 2)));
    }

    #[test]
    fn a_refused_revision_is_handed_back() {
        let mut held = PendingProjection {
            action: Some(Some(PendingAction::Clarification)),
            revision: Some(r("2", 5)),
        };
        let before = held.clone();
        let older = merge_projection_into(&mut held, Some(None), Some(Cow::Owned(r("2", 4))));
        assert_eq!(older.kept_held_over.as_deref(), Some(&r("2", 4)));
        assert!(!older.changed);
        assert_eq!(held, before);
        let newer = merge_projection_into(&mut held, Some(None), Some(Cow::Owned(r("2", 6))));
        assert_eq!((newer.changed, newer.kept_held_over), (true, None));
        assert_eq!(held.revision, Some(r("2", 6)));
        // No incoming revision while one is held: kept, nothing to hand back.
        let none = merge_projection_into(&mut held, Some(None), None);
        assert_eq!((none.changed, none.kept_held_over), (false, None));
    }
}

/// The stored epoch cannot be advanced (SPEC §5). The caller must leave the stored value untouched
/// and fail startup.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum EpochError {
    /// The stored text is not a canonical positive integer (non-empty ASCII digits, no leading
    /// zero, not `"0"`): `"007"`, `"x"`, `""`, `"0"`, `"-1"`, `" 1"`.
    #[error("stored epoch {stored:?} is not a canonical positive integer")]
    NotCanonical { stored: String },
}

impl EpochError {
    /// A stable machine code for logs and startup errors.
    pub const fn code(&self) -> &'static str {
        match self {
            EpochError::NotCanonical { .. } => "epoch_not_canonical",
        }
    }
}

/// A canonical positive integer: non-empty ASCII decimal digits without a leading zero (so `"0"`
/// is not one either).
pub fn epoch_is_canonical(text: &str) -> bool {
    epoch_is_well_formed(text) && !text.starts_with('0')
}

/// The epoch this start allocates (SPEC §5): absent → `"1"`; a canonical positive integer →
/// that value + 1, computed on the decimal digits (any length, `"99"` → `"100"`, no overflow);
/// anything else → [`EpochError::NotCanonical`] and the caller leaves the stored value as it is.
///
/// The caller persists the returned value (compare-and-set against `stored`) before serving.
pub fn next_epoch(stored: Option<&str>) -> Result<String, EpochError> {
    let Some(stored) = stored else {
        return Ok(String::from("1"));
    };
    if !epoch_is_canonical(stored) {
        return Err(EpochError::NotCanonical {
            stored: stored.to_owned(),
        });
    }
    // Add one from the least significant digit; a carry out of the top digit prepends a '1'.
    let mut digits: Vec<u8> = stored.bytes().collect();
    let mut carry = true;
    for digit in digits.iter_mut().rev() {
        if *digit == b'9' {
            *digit = b'0';
        } else {
            *digit = digit.wrapping_add(1);
            carry = false;
            break;
        }
    }
    if carry {
        digits.insert(0, b'1');
    }
    // Only ASCII digits were written, so the bytes are valid UTF-8.
    String::from_utf8(digits).map_err(|_| EpochError::NotCanonical {
        stored: stored.to_owned(),
    })
}

#[cfg(test)]
mod epoch_allocation_tests {
    use super::*;

    fn not_canonical(stored: &str) -> Result<String, EpochError> {
        Err(EpochError::NotCanonical {
            stored: stored.into(),
        })
    }

    #[test]
    fn scenario_55_absent_then_increment() {
        let first = next_epoch(None).unwrap();
        assert_eq!(first, "1");
        assert_eq!(next_epoch(Some(&first)).unwrap(), "2");
    }

    #[test]
    fn scenario_55_corrupt_values_are_errors() {
        for stored in [
            "007", "x", "", "0", "-1", " 1", "1 ", "+1", "1.0", "1e3", "٣", "00",
        ] {
            assert_eq!(
                next_epoch(Some(stored)),
                not_canonical(stored),
                "{stored:?}"
            );
        }
    }

    #[test]
    fn carries_at_any_length() {
        assert_eq!(next_epoch(Some("9")).unwrap(), "10");
        assert_eq!(next_epoch(Some("99")).unwrap(), "100");
        assert_eq!(next_epoch(Some("109")).unwrap(), "110");
        assert_eq!(next_epoch(Some("1999")).unwrap(), "2000");
        assert_eq!(
            next_epoch(Some("18446744073709551615")).unwrap(),
            "18446744073709551616"
        );
        let long = "9".repeat(200);
        let next = next_epoch(Some(&long)).unwrap();
        assert_eq!(next.len(), 201);
        assert!(next.starts_with('1') && next[1..].bytes().all(|b| b == b'0'));
    }

    #[test]
    fn allocated_epochs_strictly_increase_and_compare_newer() {
        let mut epoch = next_epoch(None).unwrap();
        for _ in 0..120 {
            let next = next_epoch(Some(&epoch)).unwrap();
            assert_eq!(compare_epochs(&next, &epoch), Ordering::Greater);
            assert!(epoch_is_canonical(&next));
            epoch = next;
        }
        assert_eq!(epoch, "121");
    }

    #[test]
    fn error_code_and_message() {
        let err = next_epoch(Some("007")).unwrap_err();
        assert_eq!(err.code(), "epoch_not_canonical");
        assert!(err.to_string().contains("\"007\""));
    }
}
