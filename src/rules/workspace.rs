//! The workspace's "needs you" inbox on the client (SPEC §14): which page the store keeps, where
//! each session's row comes from (the page, or what the store itself holds of the session since
//! the page was read), and whether the answer is known.
//!
//! A page is read at a place in the server's event stream (its `stream` and `offset`): it
//! reflects every event up to it. A session a frame changed after that place has *moved*: the
//! page says nothing about it any more, and the store's own answer for the session decides its
//! row. When the store cannot decide (it does not hold the session's rows, or the page may hide
//! what it sees), the answer is unknown and the app re-reads the page; it never says "caught up"
//! for rows it does not know.

use std::cmp::Ordering;

use super::time::Timestamp;

/// One inbox row's place: what orders it and names it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RowKey {
    pub created_at: Timestamp,
    pub pending_id: String,
}

/// The inbox order: `created_at` (timestamp order), then `pending_id`.
pub fn row_order(a: &RowKey, b: &RowKey) -> Ordering {
    order(&a.created_at, &a.pending_id, &b.created_at, &b.pending_id)
}

/// [`row_order`] over borrowed parts.
pub fn order(a_at: &Timestamp, a_id: &str, b_at: &Timestamp, b_id: &str) -> Ordering {
    a_at.cmp(b_at).then_with(|| a_id.cmp(b_id))
}

/// Whether a page read at `page` replaces the one held, read at `held` (each `(stream,
/// offset)`; `None`: the read's place is unknown, before every event). `live`: the stream the
/// store follows now. Within one stream the later read wins, and of two reads at one place the
/// one that arrived last (the requester's sidecar moves no offset: a read after a dismissal is at
/// the same place); across streams a page of the live stream wins over one of another, and
/// otherwise the page that arrived last.
pub fn page_replaces(
    held: Option<(&str, u64)>,
    page: Option<(&str, u64)>,
    live: Option<&str>,
) -> bool {
    match (held, page) {
        (None, _) => true,
        (Some(_), None) => false,
        (Some((hs, ho)), Some((ps, po))) if hs == ps => po >= ho,
        (Some((hs, _)), Some((ps, _))) => live == Some(ps) || live != Some(hs),
    }
}

/// Whether a failed read that began at `failed` (`None`: unknown) makes the answer an error while
/// the page read at `held` is held: not when that page was read at or after the failed read's
/// start (it already answers; a late failure of an earlier read changes nothing).
pub fn failure_counts(held: Option<Option<(&str, u64)>>, failed: Option<(&str, u64)>) -> bool {
    match (held, failed) {
        (Some(Some((hs, ho))), Some((fs, fo))) if hs == fs => fo > ho,
        _ => true,
    }
}

/// Whether a session changed after the page was read: a frame at an offset later than the
/// page's (`session`: the offset of the last frame that changed it, 0 for none). A page of
/// another stream than the store's (or of no known place) is before every frame the store took.
pub fn moved(session: u64, page: Option<u64>) -> bool {
    session > page.unwrap_or(0)
}

/// What the store itself holds of a session's live clarification bundle now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Live<'a> {
    /// Nothing decides it (neither its rows nor its projection arrived).
    Unknown,
    /// Its projection says a question waits, and the store does not hold the rows that name it.
    Asking,
    /// No bundle waits: no question, a terminal session, or a removed one.
    None,
    /// This bundle waits (its `pending_id`).
    Bundle(&'a str),
    /// The session is removed (its task or itself deleted): final (SPEC §5).
    Removed,
}

/// Where a session's inbox row comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    /// No row.
    Absent,
    /// The page's row stands.
    Page,
    /// A bundle the store holds and the page does not name: a row of its own.
    Store,
    /// The store cannot tell: the page must be read again.
    Unknown,
}

/// The row of one session: `page_row` the page's bundle for it (`pending_id`), `moved` whether
/// it changed after the page ([`moved`]), `live` what the store holds of it, `settled` whether
/// the user's answer to a bundle settled it (SPEC §13), `hides_none` whether the page said the
/// requester's sidecar hides no bundle (then a bundle the page does not name cannot be a hidden
/// one).
pub fn session_row(
    page_row: Option<&str>,
    moved: bool,
    live: Live<'_>,
    settled: impl Fn(&str) -> bool,
    hides_none: bool,
) -> Source {
    if live == Live::Removed || page_row.is_some_and(&settled) {
        return Source::Absent;
    }
    if !moved {
        return if page_row.is_some() {
            Source::Page
        } else {
            Source::Absent
        };
    }
    match live {
        Live::None | Live::Removed => Source::Absent,
        Live::Bundle(p) if page_row == Some(p) => Source::Page,
        Live::Bundle(p) if settled(p) => Source::Absent,
        Live::Bundle(_) if hides_none => Source::Store,
        Live::Bundle(_) | Live::Asking | Live::Unknown => Source::Unknown,
    }
}

/// Whether the inbox answer is known, and why not.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum State {
    /// The rows and their count are the server's.
    Known,
    /// No page of this workspace was read yet.
    NotRead,
    /// The last read failed, and no page came after it: an error with no rows, never "caught up".
    Failed,
    /// A session changed in a way the store cannot place: read the page again.
    Moved,
    /// A row of a truncated page is gone: the row after the page's last is not known.
    Truncated,
    /// A snooze that hid a bundle has ended: the bundle is back, and the page does not hold it.
    SnoozeEnded,
}

impl State {
    /// Whether the app should read the page again (every unknown answer but a failed read,
    /// whose retry is the app's).
    pub const fn reread(self) -> bool {
        matches!(
            self,
            State::NotRead | State::Moved | State::Truncated | State::SnoozeEnded
        )
    }

    /// The reason code (`lastReason()` after `inbox`).
    pub const fn as_str(self) -> &'static str {
        match self {
            State::Known => "inbox_known",
            State::NotRead => "inbox_not_read",
            State::Failed => "inbox_read_failed",
            State::Moved => "inbox_session_moved",
            State::Truncated => "inbox_truncated_removal",
            State::SnoozeEnded => "inbox_snooze_ended",
        }
    }
}

/// The answer's state: `read` whether a page is held, `failed` whether a read failed after it,
/// `unknown_row` whether some session's row is [`Source::Unknown`], `truncated_gone` whether the
/// page was truncated and one of its rows is gone, `snooze_end` when the earliest snooze hiding
/// a bundle ends and `now` the caller's clock (`None`: not compared).
pub fn state(
    read: bool,
    failed: bool,
    unknown_row: bool,
    truncated_gone: bool,
    snooze_end: Option<&Timestamp>,
    now: Option<&Timestamp>,
) -> State {
    if failed {
        State::Failed
    } else if !read {
        State::NotRead
    } else if unknown_row {
        State::Moved
    } else if truncated_gone {
        State::Truncated
    } else if matches!((snooze_end, now), (Some(end), Some(now)) if now >= end) {
        State::SnoozeEnded
    } else {
        State::Known
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn never(_: &str) -> bool {
        false
    }

    #[test]
    fn a_later_read_of_the_same_stream_replaces_an_earlier_one_never_the_reverse() {
        assert!(page_replaces(None, Some(("s", 4)), Some("s")));
        assert!(page_replaces(Some(("s", 4)), Some(("s", 5)), Some("s")));
        assert!(!page_replaces(Some(("s", 5)), Some(("s", 4)), Some("s")));
        assert!(page_replaces(Some(("s", 5)), Some(("s", 5)), Some("s")));
        // Across streams: the live one wins; between two old ones the later arrival.
        assert!(page_replaces(
            Some(("old", 9)),
            Some(("new", 1)),
            Some("new")
        ));
        assert!(!page_replaces(
            Some(("new", 1)),
            Some(("old", 9)),
            Some("new")
        ));
        assert!(page_replaces(Some(("a", 1)), Some(("b", 1)), Some("c")));
        // A page of no known place never replaces one that has a place.
        assert!(!page_replaces(Some(("s", 1)), None, Some("s")));
        assert!(page_replaces(None, None, None));
    }

    #[test]
    fn a_late_failure_of_an_earlier_read_changes_nothing() {
        assert!(failure_counts(None, Some(("s", 3))));
        assert!(failure_counts(Some(Some(("s", 3))), None));
        assert!(failure_counts(Some(Some(("s", 3))), Some(("s", 4))));
        assert!(!failure_counts(Some(Some(("s", 3))), Some(("s", 3))));
        assert!(!failure_counts(Some(Some(("s", 3))), Some(("s", 2))));
        assert!(failure_counts(Some(None), Some(("s", 2))));
        assert!(failure_counts(Some(Some(("a", 9))), Some(("b", 1))));
    }

    #[test]
    fn a_session_moved_only_by_a_frame_after_the_page() {
        assert!(!moved(0, Some(3)));
        assert!(!moved(3, Some(3)));
        assert!(moved(4, Some(3)));
        assert!(moved(1, None));
        assert!(!moved(0, None));
    }

    #[test]
    fn an_unmoved_session_keeps_the_pages_row() {
        assert_eq!(
            session_row(Some("p"), false, Live::None, never, false),
            Source::Page
        );
        assert_eq!(
            session_row(None, false, Live::Bundle("q"), never, true),
            Source::Absent
        );
        assert_eq!(
            session_row(Some("p"), false, Live::Unknown, never, false),
            Source::Page
        );
    }

    #[test]
    fn removal_and_a_settled_answer_end_a_row_whatever_the_page_says() {
        assert_eq!(
            session_row(Some("p"), false, Live::Removed, never, false),
            Source::Absent
        );
        assert_eq!(
            session_row(Some("p"), false, Live::Bundle("p"), |p| p == "p", false),
            Source::Absent
        );
        assert_eq!(
            session_row(Some("p"), true, Live::Bundle("q"), |p| p == "q", false),
            Source::Absent
        );
    }

    #[test]
    fn a_moved_session_is_decided_by_what_the_store_holds() {
        assert_eq!(
            session_row(Some("p"), true, Live::None, never, false),
            Source::Absent
        );
        assert_eq!(
            session_row(Some("p"), true, Live::Bundle("p"), never, false),
            Source::Page
        );
        // A new bundle: the store's row when the page hides nothing, else unknown.
        assert_eq!(
            session_row(Some("p"), true, Live::Bundle("q"), never, true),
            Source::Store
        );
        assert_eq!(
            session_row(None, true, Live::Bundle("q"), never, false),
            Source::Unknown
        );
        // The projection asks but no row names the bundle: unknown, page row or not.
        assert_eq!(
            session_row(Some("p"), true, Live::Asking, never, true),
            Source::Unknown
        );
        assert_eq!(
            session_row(None, true, Live::Unknown, never, true),
            Source::Unknown
        );
    }

    #[test]
    fn the_state_is_never_known_while_something_is_not() {
        let t = |s: &str| Timestamp::parse(s);
        let (end, before, after) = (
            t("2026-01-01T10:00:00Z"),
            t("2026-01-01T09:59:59Z"),
            t("2026-01-01T10:00:00Z"),
        );
        assert_eq!(
            state(false, false, false, false, None, None),
            State::NotRead
        );
        assert_eq!(state(true, true, false, false, None, None), State::Failed);
        assert_eq!(state(false, true, false, false, None, None), State::Failed);
        assert_eq!(state(true, false, true, false, None, None), State::Moved);
        assert_eq!(
            state(true, false, false, true, None, None),
            State::Truncated
        );
        assert_eq!(
            state(true, false, false, false, Some(&end), Some(&after)),
            State::SnoozeEnded
        );
        assert_eq!(
            state(true, false, false, false, Some(&end), Some(&before)),
            State::Known
        );
        assert_eq!(
            state(true, false, false, false, Some(&end), None),
            State::Known
        );
        assert!(State::Moved.reread() && State::NotRead.reread() && !State::Failed.reread());
        assert!(!State::Known.reread());
    }
}
