//! What a connection's first frame means for the state a client holds (docs/server-api.md: the
//! server sends `server.hello` with its epoch first on every WebSocket connection; a new epoch is
//! a restarted server, whose events the client may have missed, so it refetches its REST state).

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
    /// Whether the client refetches its REST state (tasks, the open task's sessions, the open
    /// session's turns and messages). A reconnection to the same epoch may also have missed
    /// events while the socket was down: that is the connection's to know (`connect()` refetches
    /// after every reconnection), not the hello's.
    pub fn refetch(self) -> bool {
        !matches!(self, Hello::SameEpoch)
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
    fn only_the_same_epoch_keeps_what_is_held() {
        assert!(Hello::First.refetch());
        assert!(Hello::NewEpoch.refetch());
        assert!(!Hello::SameEpoch.refetch());
    }
}
