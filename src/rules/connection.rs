//! What a connection's first frame means for the state a client holds (docs/server-api.md: the
//! server sends `server.hello` with its epoch first on every WebSocket connection). A hello starts
//! a connection, and the reference server cannot resume a stream: whatever was published while
//! the client had no connection is lost to it, so every hello means "fetch the REST state again".
//! The epoch tells why (a first connection, a reconnection to the same server run, a restarted
//! server), for what the client shows and logs.

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
}

impl Hello {
    /// Whether the client fetches its REST state (tasks, the open task's sessions, the open
    /// session's turns and messages) again: after every hello, as long as the server cannot
    /// resume a stream from an offset. A first hello: what is held (if anything) was fetched
    /// without this connection's events. The same epoch: a reconnection, and the events published
    /// while the socket was down are lost. A new epoch: a restarted server.
    pub fn refetch(self) -> bool {
        match self {
            Hello::First | Hello::SameEpoch | Hello::NewEpoch => true,
        }
    }
}

/// The hello of a connection whose server says `incoming`, for a client that last saw `held`.
/// Epochs are compared as text: they only identify a server run (not ordered: a restarted server
/// is new whether or not its epoch is greater).
pub fn hello(held: Option<&str>, incoming: &str) -> Hello {
    match held {
        None => Hello::First,
        Some(held) if held == incoming => Hello::SameEpoch,
        Some(_) => Hello::NewEpoch,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_same_and_new_epochs() {
        assert_eq!(hello(None, "7"), Hello::First);
        assert_eq!(hello(Some("7"), "7"), Hello::SameEpoch);
        assert_eq!(hello(Some("7"), "8"), Hello::NewEpoch);
        // Not ordered: an older-looking epoch is still another server run.
        assert_eq!(hello(Some("8"), "7"), Hello::NewEpoch);
        assert_eq!(hello(Some(""), ""), Hello::SameEpoch);
    }

    #[test]
    fn every_hello_refetches_because_nothing_resumes() {
        // A reconnection to the same server run has missed what was published meanwhile.
        for hello in [Hello::First, Hello::SameEpoch, Hello::NewEpoch] {
            assert!(hello.refetch(), "{hello:?}");
        }
    }
}
