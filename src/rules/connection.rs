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

#[cfg(test)]
mod tests {
    use super::*;

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
