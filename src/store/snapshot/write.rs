//! The writing side of snapshots: [`ProjectionStore::dehydrate`] and the pieces of JSON it
//! writes (sessions with their turns, messages and tombstones; the answers), with the `Json`
//! helpers for the snapshot's rows (timestamps, revisions, sequences, question totals, turns).

use super::{
    kind_code, state_str, status_code, Scope, DISPATCH_ATTEMPTED, DISPATCH_PENDING, FORMAT,
    LIFECYCLE_ONLY, VERSION,
};
use crate::hash::IdIndex;
use crate::json::Json;
use crate::rules::clarification;
use crate::rules::model::{MessageRecord, Revision, Turn};
use crate::rules::time::Timestamp;
use crate::rules::turn::CurrentTurn;
use crate::store::rejections::{Rejection, Rev};
use crate::store::session::SessionEntry;
use crate::store::ProjectionStore;
use crate::text::push_uint;

impl Json {
    #[inline(never)]
    fn timestamp(&mut self, time: Option<&Timestamp>) {
        self.sep();
        self.timestamp_value(time);
    }

    #[inline(never)]
    fn timestamp_value(&mut self, time: Option<&Timestamp>) {
        match time {
            Some(t) => self.text(&t.text()),
            None => self.push_raw("null"),
        }
    }

    #[inline(never)]
    fn item(&mut self, value: Option<&str>) {
        self.sep();
        match value {
            Some(v) => self.text(v),
            None => self.push_raw("null"),
        }
    }

    #[inline(never)]
    fn item_raw(&mut self, raw: &str) {
        self.sep();
        self.push_raw(raw);
    }

    /// A revision in a row: two items, its epoch and sequence (`null, null` for none).
    #[inline(never)]
    fn row_revision(&mut self, revision: Option<&Revision>) {
        match revision {
            Some(r) => {
                self.item(Some(&r.epoch));
                self.sequence(r.sequence);
            }
            None => {
                self.item_raw("null");
                self.item_raw("null");
            }
        }
    }

    /// A sequence: a number, or beyond 2^53 − 1 (where a JS Number would round it) its decimal
    /// text.
    #[inline(never)]
    fn sequence(&mut self, sequence: u64) {
        self.sep();
        if sequence > (1 << 53) - 1 {
            self.text(&crate::text::decimal(sequence));
        } else {
            push_uint(&mut self.0, sequence);
        }
    }

    #[inline(never)]
    fn revision_value(&mut self, revision: Option<&Revision>) {
        match revision {
            None => self.push_raw("null"),
            Some(r) => {
                self.ch('{');
                self.str("epoch", Some(&r.epoch));
                self.num("sequence", Some(r.sequence));
                self.ch('}');
            }
        }
    }

    /// A question total as the count its gate waits for ([`clarification::gate`]: the same
    /// answers, written as an integer), or null when it does not gate.
    #[inline(never)]
    fn total(&mut self, total: Option<f64>) {
        self.sep();
        match clarification::gate(total) {
            Some(count) => push_uint(&mut self.0, count),
            None => self.push_raw("null"),
        }
    }

    #[inline(never)]
    fn turns(&mut self, turns: &[Turn]) {
        for t in turns {
            self.sep();
            self.ch('[');
            self.item(Some(&t.id));
            self.item_raw(if t.completed { "true" } else { "false" });
            self.timestamp(Some(&t.started_at));
            self.timestamp(Some(&t.created_at));
            self.timestamp(t.updated_at.as_ref());
            let bit = |set: bool, bit: u64| if set { bit } else { 0 };
            let flags = bit(t.flags.lifecycle_only, LIFECYCLE_ONLY)
                | bit(t.flags.prompt_dispatch_pending, DISPATCH_PENDING)
                | bit(t.flags.prompt_dispatch_attempted, DISPATCH_ATTEMPTED);
            self.sep();
            push_uint(&mut self.0, flags);
            self.ch(']');
        }
    }
}

impl<P: Clone> ProjectionStore<P> {
    /// The snapshot of `scope` as JSON text (docs/snapshot-format.md). `payload` writes a held
    /// status summary (the caller's object) as JSON.
    pub fn dehydrate(&self, scope: Scope<'_>, payload: impl Fn(&P, &mut String)) -> String {
        let mut tasks: Vec<&str> = Vec::new();
        let mut sessions: Vec<&str> = Vec::new();
        for (id, task) in &self.tasks {
            if !scope.has_task(id) {
                continue;
            }
            tasks.push(id);
            sessions.extend(task.sessions.iter().flatten().map(|s| &**s));
        }
        for (id, entry) in &self.sessions {
            let of_task = entry.task_id.as_deref().is_some_and(|t| scope.has_task(t));
            if scope.everything() || of_task || scope.names_session(id) {
                sessions.push(id);
            }
        }
        crate::sort::stable_sort_by(&mut tasks, |a, b| a.cmp(b));
        crate::sort::stable_sort_by(&mut sessions, |a, b| a.cmp(b));
        sessions.dedup();
        sessions.retain(|s| self.sessions.contains_key(*s));

        let mut j = Json::with_capacity(256);
        j.ch('{');
        j.str("format", Some(FORMAT));
        j.num("version", Some(VERSION));
        j.str("epoch", self.server_epoch.as_deref());
        let (stream, offset) = self.stream_position();
        j.str("stream", stream);
        j.num("offset", offset);

        j.open("tasks", '[');
        for id in &tasks {
            let Some(task) = self.tasks.get(*id) else {
                continue;
            };
            j.element();
            j.str("id", Some(id));
            j.bool("known", task.known);
            match &task.summary {
                Some(held) => {
                    j.key("summary");
                    payload(&held.payload, &mut j.0);
                }
                None => j.raw("summary", "null"),
            }
            j.action("legacy", task.task_pending_action);
            match &task.sessions {
                None => j.raw("sessions", "null"),
                Some(list) => {
                    j.open("sessions", '[');
                    for s in list {
                        j.item(Some(s));
                    }
                    j.close(']');
                }
            }
            j.close('}');
        }
        j.close(']');

        j.open("sessions", '[');
        for id in &sessions {
            let Some(entry) = self.sessions.get(*id) else {
                continue;
            };
            j.element();
            Self::write_session(&mut j, id, entry);
            j.close('}');
        }
        j.close(']');

        j.open("removed", '{');
        fn removed<'r>(
            ids: &'r crate::store::remembered::Remembered,
            keep: &dyn Fn(&str) -> bool,
        ) -> Vec<&'r str> {
            ids.ordered()
                .filter(|(id, _)| keep(id))
                .map(|(id, _)| id)
                .collect()
        }
        let removed_tasks = removed(&self.removed_tasks, &|id| scope.has_task(id));
        let removed_sessions = removed(&self.removed_sessions, &|id| {
            scope.everything() || scope.names_session(id)
        });
        for (key, ids) in [("tasks", removed_tasks), ("sessions", removed_sessions)] {
            j.open(key, '[');
            for id in ids {
                j.item(Some(id));
            }
            j.close(']');
        }
        j.close('}');

        let in_scope = |r: &Rejection| {
            scope.everything()
                || r.task_id.as_deref().is_some_and(|t| scope.has_task(t))
                || r.session_id
                    .as_deref()
                    .is_some_and(|s| sessions.contains(&s))
        };
        j.open("rejected", '[');
        for r in self.rejected.oldest_first().filter(|r| in_scope(r)) {
            j.sep();
            j.ch('[');
            j.item(Some(r.input.as_str()));
            j.item(Some(r.reason.code()));
            j.item(r.task_id.as_deref());
            j.item(r.session_id.as_deref());
            j.item(r.message_id.as_deref());
            for rev in [&r.revision, &r.held] {
                match rev {
                    Some(Rev::Pending(p)) => j.row_revision(Some(p)),
                    Some(Rev::Summary(n)) => {
                        j.item_raw("null");
                        j.sequence(*n);
                    }
                    None => j.row_revision(None),
                }
            }
            j.ch(']');
        }
        j.close(']');

        self.write_answers(&mut j, &tasks, &sessions, &payload);
        j.ch('}');
        j.0
    }

    #[inline(never)]
    fn write_session(j: &mut Json, id: &str, entry: &SessionEntry) {
        j.str("id", Some(id));
        j.str("task", entry.task_id.as_deref());
        j.bool("listed", entry.listed);
        j.str("state", entry.state.map(state_str));
        j.key("state_at");
        j.timestamp_value(entry.state_clock.as_ref());
        j.bool("primary", entry.is_primary);
        j.key("primary_at");
        j.timestamp_value(entry.primary_clock.as_ref());
        // `action` absent: no projection held (unknown); null: clean.
        if let Some(action) = entry.projection.action {
            j.action("action", action);
        }
        j.key("revision");
        j.revision_value(entry.projection.revision.as_ref());
        match &entry.turns {
            None => j.raw("turns", "null"),
            Some(turns) => {
                j.open("turns", '[');
                j.turns(turns);
                j.close(']');
            }
        }
        j.open("early", '[');
        j.turns(&entry.early_turns);
        j.close(']');
        // A message's turn by its index in `turns` when listed there (most are): the id once.
        // Indexed from the last turn back: an id listed twice gets its last index.
        let turns = entry.turns.as_deref().unwrap_or_default();
        let turn_at = |i: usize| turns.get(i).map(|t| t.id.as_str());
        let mut turn_index = IdIndex::with_capacity(turns.len());
        for (i, t) in turns.iter().enumerate().rev() {
            turn_index.get_or_insert(&t.id, i, &turn_at);
        }
        j.open("messages", '[');
        for row in entry.messages.rows() {
            j.sep();
            j.ch('[');
            j.item(Some(row.id_str()));
            match row.turn_id_str() {
                Some(turn) => match turn_index.get(turn, &turn_at) {
                    Some(i) => {
                        j.sep();
                        push_uint(&mut j.0, i as u64);
                    }
                    None => j.item(Some(turn)),
                },
                None => j.item_raw("null"),
            }
            j.sep();
            push_uint(&mut j.0, u64::from(kind_code(row.kind())));
            j.sep();
            push_uint(&mut j.0, status_code(row.status()) as u64);
            j.item(row.pending_id_str());
            j.total(row.question_total());
            let created = row.created();
            j.timestamp(Some(created));
            match row.updated() {
                // The common case, written once.
                Some(updated) if updated == *created => j.item_raw("true"),
                updated => j.timestamp(updated.as_ref()),
            }
            let flags = row.flags().0;
            if flags != 0 {
                j.sep();
                push_uint(&mut j.0, u64::from(flags));
            }
            j.ch(']');
        }
        j.close(']');
        j.open("deleted", '[');
        for (message, revision) in entry.messages.tombstones_ordered() {
            j.sep();
            j.ch('[');
            j.item(Some(message));
            j.row_revision(revision);
            j.ch(']');
        }
        j.close(']');
        if !entry.settled.is_empty() {
            j.open("settled", '[');
            for settled in &entry.settled {
                j.sep();
                j.ch('[');
                j.item(Some(&settled.pending_id));
                j.row_revision(settled.position.as_ref());
                if let Some(summary) = settled.summary {
                    j.sequence(summary);
                }
                j.ch(']');
            }
            j.close(']');
        }
        j.bool("paged", entry.paged);
    }

    /// The answers of the snapshot's tasks and sessions, each key named after its query and
    /// absent while the answer is unknown.
    #[inline(never)]
    fn write_answers(
        &self,
        j: &mut Json,
        tasks: &[&str],
        sessions: &[&str],
        payload: &impl Fn(&P, &mut String),
    ) {
        j.open("answers", '{');
        j.open("tasks", '{');
        for id in tasks {
            j.key(id).ch('{');
            if let Some(action) = self.task_pending_action(id).0 {
                j.action("taskPendingAction", action);
            }
            match self.task_status_summary(id).0 {
                None => {}
                Some(None) => j.raw("taskStatusSummary", "null"),
                Some(Some(summary)) => {
                    j.key("taskStatusSummary");
                    payload(summary, &mut j.0);
                }
            }
            if let Some(owner) = self.pending_owner(id, None).0 {
                j.str("pendingOwner", Some(owner.unwrap_or("")));
            }
            j.close('}');
        }
        j.close('}');
        j.open("sessions", '{');
        for id in sessions {
            j.key(id).ch('{');
            if let Some(action) = self.session_pending_action(id).0 {
                j.action("sessionPendingAction", action);
            }
            match self.current_turn_id(id).0 {
                CurrentTurn::Unknown => {}
                CurrentTurn::None => j.raw("currentTurnId", "null"),
                CurrentTurn::Turn(t) => j.str("currentTurnId", Some(t)),
            }
            if let Some(bundle) = self.pending_clarification(id).0 {
                match bundle {
                    None => j.raw("pendingClarification", "null"),
                    Some(bundle) => {
                        j.open("pendingClarification", '{');
                        j.str("pending_id", bundle.pending_id);
                        j.open("message_ids", '[');
                        for m in &bundle.message_ids {
                            j.item(Some(m));
                        }
                        j.close(']');
                        j.close('}');
                    }
                }
            }
            if let Some(ids) = self.hidden_message_ids(id).0 {
                j.open("hiddenMessageIds", '[');
                for m in ids {
                    j.item(Some(m));
                }
                j.close(']');
            }
            if let Some(blocked) = self.has_pending_permission(id).0 {
                j.bool("hasPendingPermission", blocked);
            }
            j.close('}');
        }
        j.close('}');
        j.close('}');
    }
}
