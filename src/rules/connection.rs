//! What a connection's first frame means for the state a client holds (docs/server-api.md: the
//! server sends `server.hello` with its epoch first on every WebSocket connection). A hello starts
//! a connection. When the server resumed the client's stream (the client asked with `?since=` and
//! the server says `resumed`: it sends every event after that offset), nothing was lost and what
//! the client holds stays good. Otherwise whatever was published while the client had no
//! connection is lost to it (an old server, a first connection, an offset the server no longer
//! holds, another stream): the hello means "fetch the REST state again". The epoch tells why (a
//! first connection, a reconnection to the same server run, a restarted server), for what the
//! client shows and logs.
//!
//! The stream's own order: events are numbered by offset, and whoever forwards them (the server's
//! outbox follower, its WebSocket hub) forwards each once, in offset order: [`next_offset`] says
//! whether an offset is already past, the next one, or beyond a gap.

/// What a `server.hello` tells a client about the state it holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Hello {
    /// The first hello this client sees: what it holds (if anything) was fetched without
    /// knowing the server's epoch.
    First,
    /// The epoch the client saw last: the same server run.
    SameEpoch,
    /// Another epoch than the one the client saw last: a restarted (or another) server.
    NewEpoch,
    /// The server resumed the stream from the offset the client asked for: every event after it
    /// follows on this connection, so nothing was lost (whatever the epoch: a server whose stream
    /// outlives its run resumes across restarts, and offsets are only compared within a stream,
    /// which the server checked).
    Resumed,
}

impl Hello {
    /// Whether the client fetches its REST state (tasks, the open task's sessions, the open
    /// session's turns and messages) again: after every hello the server did not resume. A first
    /// hello: what is held (if anything) was fetched without this connection's events. The same
    /// epoch: a reconnection, and the events published while the socket was down are lost. A new
    /// epoch: a restarted server. A resumed stream: nothing was lost, nothing to fetch.
    pub fn refetch(self) -> bool {
        match self {
            Hello::First | Hello::SameEpoch | Hello::NewEpoch => true,
            Hello::Resumed => false,
        }
    }
}

/// The hello of a connection whose server says `incoming` (and `resumed`: whether it honoured
/// the client's `since`; an old server says nothing, which is `false`), for a client that last
/// saw `held`. Epochs are compared as text: they only identify a server run (not ordered: a
/// restarted server is new whether or not its epoch is greater).
pub fn hello(held: Option<&str>, incoming: &str, resumed: bool) -> Hello {
    if resumed {
        return Hello::Resumed;
    }
    match held {
        None => Hello::First,
        Some(held) if held == incoming => Hello::SameEpoch,
        Some(_) => Hello::NewEpoch,
    }
}

/// Where an event's offset stands for a forwarder that has forwarded every offset up to `cursor`
/// ([`next_offset`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NextOffset {
    /// At or before `cursor`: already forwarded (a duplicate, or read back), dropped.
    Past,
    /// `cursor + 1`: forwarded now.
    Next,
    /// Beyond `cursor + 1`: an offset between is missing (not committed yet, or never); forwarding
    /// this one now would break the order.
    Gap,
}

/// Where `offset` stands after `cursor` (see [`NextOffset`]).
pub fn next_offset(cursor: u64, offset: u64) -> NextOffset {
    if offset <= cursor {
        NextOffset::Past
    } else if cursor.checked_add(1) == Some(offset) {
        NextOffset::Next
    } else {
        NextOffset::Gap
    }
}

/// Where the state a client holds stands in the server's event stream: every event of `stream`
/// up to `offset` is in it. A reconnection asks to resume after it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Position<S> {
    pub stream: S,
    pub offset: u64,
}

/// The position after a connection's `server.hello` (its `stream` and `offset`; `resumed`: the
/// server honoured the client's `since`): a resumed stream keeps the held position (the events
/// after it follow), and a hello that did not resume leaves none, since the state held is then at
/// no known place of the stream until a REST read says where ([`position_after_rest`]).
pub fn position_after_hello<S: AsRef<str>>(
    held: Option<Position<S>>,
    stream: Option<S>,
    offset: Option<u64>,
    resumed: bool,
) -> Option<Position<S>> {
    if !resumed {
        return None;
    }
    match (held, stream, offset) {
        (Some(held), Some(stream), _) if held.stream.as_ref() == stream.as_ref() => Some(held),
        (_, Some(stream), Some(offset)) => Some(Position { stream, offset }),
        _ => None,
    }
}

/// The position after a frame at `offset` was taken: later in the stream than the held one, it
/// moves there; without a held position (no hello resumed, no REST read) there is none.
pub fn position_after_frame<S>(held: Option<Position<S>>, offset: u64) -> Option<Position<S>> {
    held.map(|held| Position {
        offset: held.offset.max(offset),
        stream: held.stream,
    })
}

/// The position after REST state read at `offset` of `stream` was applied: the held one when it
/// is of the same stream and not behind (the frames taken since are in the state too), else the
/// read's (the events after it may be replayed: every input is idempotent).
pub fn position_after_rest<S: AsRef<str>>(
    held: Option<Position<S>>,
    stream: S,
    offset: u64,
) -> Option<Position<S>> {
    match held {
        Some(held) if held.stream.as_ref() == stream.as_ref() && held.offset >= offset => {
            Some(held)
        }
        _ => Some(Position { stream, offset }),
    }
}

/// The position after another page's snapshot (taken at `incoming`) was merged into the state
/// held (SPEC §12): a store that holds nothing takes the snapshot's place; one at no place of the
/// stream stays at none (its hello refetches); of one stream, the earlier of the two, since a
/// snapshot vouches only for what it holds (the events after the earlier place may be replayed:
/// every input is idempotent, and frames move it forward again); of another stream, the held
/// place stands (its hello says what the state held is worth).
pub fn position_after_snapshot<S: AsRef<str>>(
    held: Option<Position<S>>,
    incoming: Option<Position<S>>,
    holds_nothing: bool,
) -> Option<Position<S>> {
    match (held, incoming) {
        (None, incoming) if holds_nothing => incoming,
        (Some(held), Some(incoming))
            if held.stream.as_ref() == incoming.stream.as_ref()
                && incoming.offset < held.offset =>
        {
            Some(incoming)
        }
        (held, _) => held,
    }
}

/// Whether a snapshot taken at `incoming` is older than the state held at `held`: both of one
/// stream, the snapshot's place before the held one. Its parts that carry no order of their own
/// (a task's legacy pending action) then give way to the held ones; at no comparable place, the
/// later arrival wins, as for any input without an order.
pub fn snapshot_is_older<S: AsRef<str>>(
    held: Option<&Position<S>>,
    incoming: Option<&Position<S>>,
) -> bool {
    matches!((held, incoming), (Some(h), Some(i))
        if h.stream.as_ref() == i.stream.as_ref() && i.offset < h.offset)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_position_moves_with_resumed_hellos_frames_and_rest_reads_only() {
        let at = |stream: &'static str, offset| Some(Position { stream, offset });
        // A hello that did not resume: the state is at no place of the stream.
        assert_eq!(
            position_after_hello(at("a", 5), Some("a"), Some(9), false),
            None
        );
        // Resumed: the held place stands (the server replays what follows it).
        assert_eq!(
            position_after_hello(at("a", 5), Some("a"), Some(5), true),
            at("a", 5)
        );
        assert_eq!(
            position_after_hello(None, Some("a"), Some(5), true),
            at("a", 5)
        );
        assert_eq!(
            position_after_hello(None::<Position<&str>>, None, Some(5), true),
            None
        );
        // Frames move it forward only, and only once it is known.
        assert_eq!(position_after_frame(at("a", 5), 7), at("a", 7));
        assert_eq!(position_after_frame(at("a", 7), 6), at("a", 7));
        assert_eq!(position_after_frame(None::<Position<&str>>, 7), None);
        // A REST read: behind the held place of the same stream it changes nothing.
        assert_eq!(position_after_rest(at("a", 7), "a", 4), at("a", 7));
        assert_eq!(position_after_rest(at("a", 7), "a", 9), at("a", 9));
        assert_eq!(position_after_rest(at("a", 7), "b", 2), at("b", 2));
        assert_eq!(position_after_rest(None, "b", 2), at("b", 2));
    }

    #[test]
    fn a_merged_snapshot_moves_the_position_back_only() {
        let at = |stream: &'static str, offset| Some(Position { stream, offset });
        // A store that holds nothing takes the snapshot's place (or none).
        assert_eq!(position_after_snapshot(None, at("a", 5), true), at("a", 5));
        assert_eq!(position_after_snapshot::<&str>(None, None, true), None);
        // A store at no place stays there: what it holds is at no known place.
        assert_eq!(position_after_snapshot(None, at("a", 5), false), None);
        // One stream: the earlier place (what the snapshot holds is only as new as it).
        assert_eq!(
            position_after_snapshot(at("a", 7), at("a", 5), false),
            at("a", 5)
        );
        assert_eq!(
            position_after_snapshot(at("a", 7), at("a", 9), false),
            at("a", 7)
        );
        assert_eq!(
            position_after_snapshot(at("a", 7), at("a", 7), false),
            at("a", 7)
        );
        // Another stream, or a snapshot at no place: the held place stands.
        assert_eq!(
            position_after_snapshot(at("a", 7), at("b", 1), false),
            at("a", 7)
        );
        assert_eq!(position_after_snapshot(at("a", 7), None, false), at("a", 7));
    }

    #[test]
    fn a_snapshot_is_older_only_before_the_held_place_of_its_stream() {
        let at = |stream: &'static str, offset| Position { stream, offset };
        assert!(snapshot_is_older(Some(&at("a", 7)), Some(&at("a", 5))));
        assert!(!snapshot_is_older(Some(&at("a", 7)), Some(&at("a", 7))));
        assert!(!snapshot_is_older(Some(&at("a", 7)), Some(&at("a", 9))));
        assert!(!snapshot_is_older(Some(&at("a", 7)), Some(&at("b", 1))));
        assert!(!snapshot_is_older(None, Some(&at("a", 1))));
        assert!(!snapshot_is_older(Some(&at("a", 7)), None));
    }

    #[test]
    fn offsets_are_past_next_or_beyond_a_gap() {
        assert_eq!(next_offset(4, 3), NextOffset::Past);
        assert_eq!(next_offset(4, 4), NextOffset::Past);
        assert_eq!(next_offset(4, 5), NextOffset::Next);
        assert_eq!(next_offset(4, 6), NextOffset::Gap);
        assert_eq!(next_offset(0, 1), NextOffset::Next);
        assert_eq!(next_offset(u64::MAX, u64::MAX), NextOffset::Past);
        assert_eq!(next_offset(u64::MAX - 1, u64::MAX), NextOffset::Next);
    }

    #[test]
    fn first_same_and_new_epochs() {
        assert_eq!(hello(None, "7", false), Hello::First);
        assert_eq!(hello(Some("7"), "7", false), Hello::SameEpoch);
        assert_eq!(hello(Some("7"), "8", false), Hello::NewEpoch);
        // Not ordered: an older-looking epoch is still another server run.
        assert_eq!(hello(Some("8"), "7", false), Hello::NewEpoch);
        assert_eq!(hello(Some(""), "", false), Hello::SameEpoch);
    }

    #[test]
    fn a_hello_that_is_not_resumed_refetches() {
        // A reconnection to the same server run that did not resume has missed what was
        // published meanwhile.
        for hello in [Hello::First, Hello::SameEpoch, Hello::NewEpoch] {
            assert!(hello.refetch(), "{hello:?}");
        }
    }

    #[test]
    fn a_resumed_hello_does_not_refetch_whatever_the_epoch() {
        for held in [None, Some("7"), Some("8")] {
            let h = hello(held, "7", true);
            assert_eq!(h, Hello::Resumed, "{held:?}");
            assert!(!h.refetch(), "{held:?}");
        }
    }
}
