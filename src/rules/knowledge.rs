//! What a client knows (SPEC §11): which inputs make each answer known. Before they have
//! arrived an answer is *unknown*, which a client tells apart from every known answer (a UI shows
//! "loading", never "nothing needs you"): fail closed, an unknown answer is never reported as
//! clean.
//!
//! Knowledge is a function of what the client holds: which inputs arrived (each predicate below
//! is monotone in them) and the session's state, which the state's own clock orders (SPEC §5).
//! So the known/unknown state after any delivery order equals that of in-order delivery.

/// An input an unknown answer waits for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Awaiting {
    /// The session's listing (a REST session list of its task) or an event carrying its
    /// projection; for a task's pending owner, the task's session list.
    SessionList,
    /// The session's turn list.
    TurnList,
    /// A page of the session's messages (the newest rows).
    MessagePage,
    /// The task itself: a task snapshot, `task.updated`, a status-summary event, or its session
    /// list.
    Task,
}

/// Whether an answer is known.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Knowledge {
    Known,
    /// The task (or the session's task) was removed: known, and clean (removal is final).
    Removed,
    /// Not known yet: the first input it waits for.
    Awaiting(Awaiting),
}

impl Knowledge {
    pub fn is_known(self) -> bool {
        !matches!(self, Knowledge::Awaiting(_))
    }
}

/// What has arrived about one session.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SessionInputs {
    /// The session belongs to a removed task.
    pub removed: bool,
    /// The session's state is known and not input-capable: it has no current turn and no live
    /// question, whatever its rows say (SPEC §2 quarantine).
    pub quarantined: bool,
    /// An input carried the session's projection (a session list row or an event with its
    /// `pending_action` key present, `null` included).
    pub projection: bool,
    /// A turn list arrived.
    pub turns: bool,
    /// A message page arrived.
    pub messages: bool,
}

/// What has arrived about one task.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TaskInputs {
    pub removed: bool,
    /// A task snapshot, `task.updated` or a status-summary event described the task.
    pub described: bool,
    /// The task's session list arrived.
    pub sessions: bool,
}

/// The session's pending action (SPEC §4): known once its projection arrived, or once the rows
/// its fallback derivation reads (turns and messages) have. A listing row that omits
/// `pending_action` carries no projection (docs/decisions.md).
pub fn session_action(inputs: SessionInputs) -> Knowledge {
    if inputs.removed {
        return Knowledge::Removed;
    }
    if inputs.projection || (inputs.turns && inputs.messages) {
        return Knowledge::Known;
    }
    if !inputs.turns && !inputs.messages {
        return Knowledge::Awaiting(Awaiting::SessionList);
    }
    // Half of the rows the fallback reads: what it still waits for.
    session_rows(inputs)
}

/// The session's current turn, live clarification and hidden ids: known once its turn list and a
/// message page have arrived (events after them keep them current), or while the session is
/// quarantined (its state alone decides: none).
pub fn session_discovery(inputs: SessionInputs) -> Knowledge {
    if inputs.quarantined && !inputs.removed {
        Knowledge::Known
    } else {
        session_rows(inputs)
    }
}

/// The session's rows: known once its turn list and a message page have arrived. The pending
/// permission reads them whatever the state (SPEC §3).
pub fn session_rows(inputs: SessionInputs) -> Knowledge {
    if inputs.removed {
        Knowledge::Removed
    } else if !inputs.turns {
        Knowledge::Awaiting(Awaiting::TurnList)
    } else if !inputs.messages {
        Knowledge::Awaiting(Awaiting::MessagePage)
    } else {
        Knowledge::Known
    }
}

/// Every input the session's answers still wait for, in the order a client loads them (for
/// explanations).
pub fn session_missing(inputs: SessionInputs) -> Vec<Awaiting> {
    if inputs.removed {
        return Vec::new();
    }
    let mut missing = Vec::new();
    if !session_action(inputs).is_known() {
        missing.push(Awaiting::SessionList);
    }
    if !inputs.turns {
        missing.push(Awaiting::TurnList);
    }
    if !inputs.messages {
        missing.push(Awaiting::MessagePage);
    }
    missing
}

/// The task's effective pending action and its status summary: known once the task was
/// described or its session list arrived.
pub fn task_action(inputs: TaskInputs) -> Knowledge {
    if inputs.removed {
        Knowledge::Removed
    } else if inputs.described || inputs.sessions {
        Knowledge::Known
    } else {
        Knowledge::Awaiting(Awaiting::Task)
    }
}

/// Every input the task's answers still wait for (for explanations).
pub fn task_missing(inputs: TaskInputs) -> Vec<Awaiting> {
    let mut missing = Vec::new();
    if !task_action(inputs).is_known() {
        missing.push(Awaiting::Task);
    }
    if !owner(inputs).is_known() {
        missing.push(Awaiting::SessionList);
    }
    missing
}

/// The task's pending owner (SPEC §6): known once its action and its session list are known.
pub fn owner(inputs: TaskInputs) -> Knowledge {
    match task_action(inputs) {
        Knowledge::Known if !inputs.sessions => Knowledge::Awaiting(Awaiting::SessionList),
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn session(removed: bool, projection: bool, turns: bool, messages: bool) -> SessionInputs {
        SessionInputs {
            removed,
            quarantined: false,
            projection,
            turns,
            messages,
        }
    }

    #[test]
    fn a_session_action_is_known_from_its_projection_or_its_rows() {
        let k = |p, t, m| session_action(session(false, p, t, m));
        assert_eq!(
            k(false, false, false),
            Knowledge::Awaiting(Awaiting::SessionList)
        );
        assert_eq!(k(true, false, false), Knowledge::Known);
        // Turns alone: the fallback cannot read the messages yet.
        assert_eq!(
            k(false, true, false),
            Knowledge::Awaiting(Awaiting::MessagePage)
        );
        assert_eq!(
            k(false, false, true),
            Knowledge::Awaiting(Awaiting::TurnList)
        );
        assert_eq!(k(false, true, true), Knowledge::Known);
        assert_eq!(
            session_action(session(true, false, false, false)),
            Knowledge::Removed
        );
    }

    #[test]
    fn a_sessions_rows_need_its_turns_and_its_messages() {
        let k = |p, t, m| session_rows(session(false, p, t, m));
        // A projection says nothing about which turn is current or which rows are the question.
        assert_eq!(
            k(true, false, false),
            Knowledge::Awaiting(Awaiting::TurnList)
        );
        assert_eq!(
            k(true, true, false),
            Knowledge::Awaiting(Awaiting::MessagePage)
        );
        assert_eq!(
            k(false, false, true),
            Knowledge::Awaiting(Awaiting::TurnList)
        );
        assert_eq!(k(false, true, true), Knowledge::Known);
        assert_eq!(
            session_rows(session(true, false, false, false)),
            Knowledge::Removed
        );
    }

    #[test]
    fn a_quarantined_session_has_no_current_turn_whatever_its_rows() {
        let quarantined = SessionInputs {
            quarantined: true,
            ..SessionInputs::default()
        };
        assert_eq!(session_discovery(quarantined), Knowledge::Known);
        // The permission still reads the rows (SPEC §3 does not quarantine it).
        assert_eq!(
            session_rows(quarantined),
            Knowledge::Awaiting(Awaiting::TurnList)
        );
        let removed = SessionInputs {
            removed: true,
            ..quarantined
        };
        assert_eq!(session_discovery(removed), Knowledge::Removed);
        // Not quarantined: discovery waits for the rows like the permission.
        for bits in 0..8u8 {
            let inputs = session(false, bits & 1 != 0, bits & 2 != 0, bits & 4 != 0);
            assert_eq!(session_discovery(inputs), session_rows(inputs));
        }
    }

    #[test]
    fn missing_lists_every_input_still_awaited() {
        use Awaiting::*;
        let m = |p, t, ms| session_missing(session(false, p, t, ms));
        assert_eq!(m(false, false, false), [SessionList, TurnList, MessagePage]);
        assert_eq!(m(true, false, false), [TurnList, MessagePage]);
        assert_eq!(m(false, true, false), [SessionList, MessagePage]);
        assert_eq!(m(false, true, true), []);
        assert_eq!(session_missing(session(true, false, false, false)), []);
    }

    #[test]
    fn a_task_is_known_once_described_or_listed_and_its_owner_once_listed() {
        let t = |described, sessions| TaskInputs {
            removed: false,
            described,
            sessions,
        };
        assert_eq!(
            task_action(t(false, false)),
            Knowledge::Awaiting(Awaiting::Task)
        );
        assert_eq!(task_action(t(true, false)), Knowledge::Known);
        assert_eq!(task_action(t(false, true)), Knowledge::Known);
        assert_eq!(owner(t(false, false)), Knowledge::Awaiting(Awaiting::Task));
        assert_eq!(
            owner(t(true, false)),
            Knowledge::Awaiting(Awaiting::SessionList)
        );
        assert_eq!(owner(t(false, true)), Knowledge::Known);
        let removed = TaskInputs {
            removed: true,
            ..TaskInputs::default()
        };
        assert_eq!(task_action(removed), Knowledge::Removed);
        assert_eq!(owner(removed), Knowledge::Removed);
        use Awaiting::*;
        assert_eq!(task_missing(t(false, false)), [Task, SessionList]);
        assert_eq!(task_missing(t(true, false)), [SessionList]);
        assert_eq!(task_missing(t(false, true)), []);
        assert_eq!(task_missing(removed), []);
    }

    /// Knowledge depends on which inputs arrived, not on their order: every predicate is
    /// monotone (an input arriving never makes a known answer unknown), checked over every pair
    /// of input sets.
    #[test]
    fn knowledge_only_grows_with_inputs() {
        let all = |bits: u8| session(bits & 1 != 0, bits & 2 != 0, bits & 4 != 0, bits & 8 != 0);
        for a in 0..16u8 {
            for b in 0..16u8 {
                if a & b != a {
                    continue; // a ⊆ b only
                }
                for f in [session_action, session_rows, session_discovery] {
                    assert!(
                        !f(all(a)).is_known() || f(all(b)).is_known(),
                        "{a:04b} {b:04b}"
                    );
                }
            }
        }
        let tasks = |bits: u8| TaskInputs {
            removed: bits & 1 != 0,
            described: bits & 2 != 0,
            sessions: bits & 4 != 0,
        };
        for a in 0..8u8 {
            for b in (0..8u8).filter(|b| a & b == a) {
                for f in [task_action, owner] {
                    assert!(
                        !f(tasks(a)).is_known() || f(tasks(b)).is_known(),
                        "{a:03b} {b:03b}"
                    );
                }
            }
        }
    }
}
