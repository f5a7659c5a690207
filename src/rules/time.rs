//! Timestamp order (SPEC §2 "Timestamp order").
//!
//! A timestamp of the form `<YYYY-MM-DD>T<hh:mm:ss>[.<1-9 digits>]Z` compares by its value with
//! the fraction right-padded to 9 digits, so `…:00Z` < `…:00.000000001Z` < `…:00.1Z`. Any other
//! string compares as raw text. Nothing is parsed into floating point and no nanosecond is lost.
//!
//! To keep the order total (sorting with a non-total order may panic), a value-form timestamp
//! compares with a raw one through its canonical text `YYYY-MM-DDThh:mm:ss.nnnnnnnnnZ`; two
//! value-form timestamps compare exactly as their canonical texts would.

use std::cmp::Ordering;

/// A wire timestamp in the order of SPEC §2.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Timestamp {
    /// The value form: `secs` holds the digits `YYYYMMDDhhmmss` as one number, `nanos` the
    /// fraction right-padded to 9 digits.
    Instant { secs: u64, nanos: u32 },
    /// Any other string, compared as raw text.
    Text(Box<str>),
}

impl Default for Timestamp {
    /// The empty text: the lowest timestamp (used for an absent `created_at`).
    fn default() -> Self {
        Timestamp::Text(Box::from(""))
    }
}

fn digit(b: u8) -> Option<u64> {
    b.is_ascii_digit().then(|| u64::from(b.wrapping_sub(b'0')))
}

fn digits(bytes: &[u8]) -> Option<u64> {
    bytes.iter().try_fold(0u64, |acc, &b| {
        Some(acc.wrapping_mul(10).wrapping_add(digit(b)?))
    })
}

/// The first year [`Timestamp::packed`] covers.
pub(crate) const PACKED_FIRST_YEAR: u64 = 1970;
/// 256 years × 12 × 31 × 24 × 60 × 61 = 8,362,425,600 < 2^33.
const PACKED_YEARS: u64 = 256;
/// The low bits of a packed timestamp: its nanoseconds.
pub(crate) const PACKED_NANO_BITS: u32 = 30;

impl Timestamp {
    /// A value-form timestamp whose fields are a calendar instant of the years 1970–2225 (every
    /// timestamp a backend sends today) as one `u64` whose integer order is the timestamp order:
    /// the fields in mixed radix (year, month, day, hour, minute, second with a leap second) in
    /// 33 bits, the nanoseconds in the low 30. `None` for anything else (raw text, other years,
    /// out-of-range fields). The store's message index keeps timestamps so, and
    /// [`super::turn::visible_turn_history`] sorts by them.
    // Bounded arithmetic: every field is checked in range before it is combined, and the result
    // is below 2^63 (see `PACKED_YEARS`); divisors are non-zero constants.
    #[allow(clippy::arithmetic_side_effects)]
    pub fn packed(&self) -> Option<u64> {
        let Timestamp::Instant { secs, nanos } = *self else {
            return None;
        };
        let field = |div: u64| (secs / div) % 100;
        let year = secs / 10_000_000_000;
        let (month, day) = (field(100_000_000), field(1_000_000));
        let (hour, minute, second) = (field(10_000), field(100), secs % 100);
        let in_range = (PACKED_FIRST_YEAR..PACKED_FIRST_YEAR + PACKED_YEARS).contains(&year)
            && (1..=12).contains(&month)
            && (1..=31).contains(&day)
            && hour < 24
            && minute < 60
            && second <= 60
            && nanos < 1_000_000_000;
        if !in_range {
            return None;
        }
        let rank = (((((year - PACKED_FIRST_YEAR) * 12 + month - 1) * 31 + day - 1) * 24 + hour)
            * 60
            + minute)
            * 61
            + second;
        Some(rank << PACKED_NANO_BITS | u64::from(nanos))
    }

    /// Reads a wire timestamp; never fails (non-conforming text is kept as text).
    pub fn parse(text: &str) -> Timestamp {
        Self::parse_instant(text.as_bytes()).unwrap_or_else(|| Timestamp::Text(Box::from(text)))
    }

    fn parse_instant(bytes: &[u8]) -> Option<Timestamp> {
        let [y0, y1, y2, y3, b'-', mo0, mo1, b'-', d0, d1, b'T', h0, h1, b':', mi0, mi1, b':', s0, s1, rest @ ..] =
            bytes
        else {
            return None;
        };
        let secs = digits(&[
            *y0, *y1, *y2, *y3, *mo0, *mo1, *d0, *d1, *h0, *h1, *mi0, *mi1, *s0, *s1,
        ])?;
        let nanos = match rest {
            [b'Z'] => 0,
            [b'.', fraction @ .., b'Z'] if (1..=9).contains(&fraction.len()) => {
                let value = digits(fraction)?;
                let pad = 9u32.saturating_sub(u32::try_from(fraction.len()).ok()?);
                let scaled = value.checked_mul(10u64.checked_pow(pad)?)?;
                u32::try_from(scaled).ok()?
            }
            _ => return None,
        };
        Some(Timestamp::Instant { secs, nanos })
    }

    /// The shortest text that parses back to the timestamp: the value form without the
    /// fraction's trailing zeros (`…:05Z`, `…:05.5Z`), the raw text otherwise (snapshots write
    /// timestamps so).
    pub fn text(&self) -> std::borrow::Cow<'_, str> {
        match self {
            Timestamp::Instant { secs, nanos } => {
                let full = Self::canonical(*secs, *nanos);
                // `…ss.nnnnnnnnnZ`: keep the fraction up to its last non-zero digit.
                let digits = full.get(20..29).unwrap_or_default();
                let keep = digits
                    .iter()
                    .rposition(|d| *d != b'0')
                    .map_or(0, |i| i.saturating_add(1));
                let mut text = String::with_capacity(30);
                text.push_str(
                    std::str::from_utf8(full.get(..19).unwrap_or_default()).unwrap_or_default(),
                );
                if keep > 0 {
                    text.push('.');
                    text.push_str(
                        std::str::from_utf8(digits.get(..keep).unwrap_or_default())
                            .unwrap_or_default(),
                    );
                }
                text.push('Z');
                std::borrow::Cow::Owned(text)
            }
            Timestamp::Text(text) => std::borrow::Cow::Borrowed(text),
        }
    }

    /// The canonical text of a value-form timestamp, `YYYY-MM-DDThh:mm:ss.nnnnnnnnnZ`.
    fn canonical(secs: u64, nanos: u32) -> [u8; 30] {
        let mut out = *b"0000-00-00T00:00:00.000000000Z";
        let positions: [usize; 14] = [0, 1, 2, 3, 5, 6, 8, 9, 11, 12, 14, 15, 17, 18];
        let mut rest = secs;
        for &pos in positions.iter().rev() {
            if let Some(slot) = out.get_mut(pos) {
                *slot =
                    b'0'.wrapping_add(u8::try_from(rest.checked_rem(10).unwrap_or(0)).unwrap_or(0));
            }
            rest = rest.checked_div(10).unwrap_or(0);
        }
        let mut rest = nanos;
        for pos in (20..29).rev() {
            if let Some(slot) = out.get_mut(pos) {
                *slot =
                    b'0'.wrapping_add(u8::try_from(rest.checked_rem(10).unwrap_or(0)).unwrap_or(0));
            }
            rest = rest.checked_div(10).unwrap_or(0);
        }
        out
    }
}

impl Ord for Timestamp {
    fn cmp(&self, other: &Self) -> Ordering {
        match (self, other) {
            (
                Timestamp::Instant { secs: a, nanos: an },
                Timestamp::Instant { secs: b, nanos: bn },
            ) => (a, an).cmp(&(b, bn)),
            (Timestamp::Text(a), Timestamp::Text(b)) => a.as_bytes().cmp(b.as_bytes()),
            (Timestamp::Instant { secs, nanos }, Timestamp::Text(b)) => {
                Self::canonical(*secs, *nanos).as_slice().cmp(b.as_bytes())
            }
            (Timestamp::Text(a), Timestamp::Instant { secs, nanos }) => {
                a.as_bytes().cmp(Self::canonical(*secs, *nanos).as_slice())
            }
        }
    }
}

impl PartialOrd for Timestamp {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: &str) -> Timestamp {
        Timestamp::parse(s)
    }

    #[test]
    fn nanosecond_order() {
        assert!(t("2026-11-29T12:00:00Z") < t("2026-11-29T12:00:00.000000001Z"));
        assert!(t("2026-11-29T12:00:00.000000001Z") < t("2026-11-29T12:00:00.1Z"));
        assert_eq!(
            t("2026-11-29T12:00:00.1Z"),
            t("2026-11-29T12:00:00.100000000Z")
        );
        assert!(t("2026-11-29T12:00:00.9Z") < t("2026-11-29T12:00:01Z"));
        assert!(t("2026-11-29T23:59:59.999999999Z") < t("2026-11-30T00:00:00Z"));
    }

    #[test]
    fn raw_text_for_other_forms() {
        assert!(matches!(t("2026-11-29 12:00:00Z"), Timestamp::Text(_)));
        assert!(matches!(
            t("2026-11-29T12:00:00.0000000001Z"),
            Timestamp::Text(_)
        ));
        assert!(matches!(t("2026-11-29T12:00:00.Z"), Timestamp::Text(_)));
        assert!(matches!(t("2026-11-29T12:00:00+00:00"), Timestamp::Text(_)));
        assert!(t("b") > t("a"));
        assert!(t("") < t("a"));
    }

    #[test]
    fn text_is_short_and_parses_back_to_the_same_timestamp() {
        for raw in [
            "2026-12-01T09:00:05Z",
            "2026-12-01T09:00:05.5Z",
            "2026-12-01T09:00:05.000000001Z",
            "2026-12-01T09:00:05.120000000Z",
            "0001-01-01T00:00:00Z",
            "heute",
            "",
        ] {
            let t = Timestamp::parse(raw);
            assert_eq!(Timestamp::parse(&t.text()), t, "{raw}");
        }
        assert_eq!(
            Timestamp::parse("2026-12-01T09:00:05.000000000Z").text(),
            "2026-12-01T09:00:05Z"
        );
        assert_eq!(
            Timestamp::parse("2026-12-01T09:00:05.120Z").text(),
            "2026-12-01T09:00:05.12Z"
        );
    }

    #[test]
    fn canonical_text_matches_value_order() {
        let a = t("2026-11-29T12:00:00.5Z");
        assert_eq!(a.cmp(&t("2026-11-29T12:00:00.500000000Z")), Ordering::Equal);
        // mixed comparisons go through the canonical text
        assert_eq!(
            a.cmp(&Timestamp::Text(Box::from(
                "2026-11-29T12:00:00.500000000Z"
            ))),
            Ordering::Equal
        );
        assert!(a > Timestamp::Text(Box::from("2026-11-29T12:00:00.4")));
        assert!(Timestamp::Text(Box::from("2026-11-29T12:00:00.6")) > a);
    }

    #[test]
    fn order_is_total_on_a_mixed_set() {
        let mut all = vec![
            t("2026-11-29T12:00:00Z"),
            t("2026-11-29T12:00:00.000000001Z"),
            t("2026-11-29T12:00:00.5"),
            t("2026-11-29T12:00:00.1Z"),
            t("zzz"),
            t(""),
        ];
        all.sort();
        for w in all.windows(2) {
            assert!(w[0] <= w[1]);
        }
        for a in &all {
            for b in &all {
                for c in &all {
                    if a <= b && b <= c {
                        assert!(a <= c);
                    }
                }
            }
        }
    }
}
