//! The simulated backend's side of the user's answer (SPEC §8, §13): a respond handled at a point
//! of the history, who wins, and the reply the reference server sends (`server/src/http/
//! actions.rs`): 200 `{outcome, success, claimed, status, response, session, status_summary}`
//! (won, or lost to another caller), 409 (no longer active), 503 / 500 after a claim, or no reply
//! (network, timeout), and sometimes the reference client's envelope (no `outcome`, no `session`:
//! no position). The handling's writes are published like every other write.

use serde_json::{json, Map, Value};
use task_projection::rules::model::{RequestStatus, SessionState};
use task_projection::rules::turn::current_turn;

use super::{action_json, Input, Sim};

/// Where a bundle stands on the server when a respond arrives (SPEC §8, as
/// `rules::respond::classify_bundle` decides over the server's rows).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Standing {
    /// Pending in the current turn of an input-capable session: the respond claims it.
    Active,
    /// No pending row, and a row records a winner (`answered` or `rejected`).
    Won(&'static str),
    /// Pending rows that are not the current turn's (superseded, quarantined), or no row at all.
    NotActive { pending: bool },
}

impl Sim {
    /// Whether bundle `pending_id` of session `s` is active by the server's rules (SPEC §8).
    pub(super) fn bundle_active(&self, s: usize, pending_id: &str) -> bool {
        self.standing(s, pending_id) == Standing::Active
    }

    fn standing(&self, s: usize, pending_id: &str) -> Standing {
        let session = &self.sessions[s];
        let rows: Vec<_> = session
            .messages
            .iter()
            .filter(|m| {
                !m.deleted
                    && m.kind == "clarification_request"
                    && m.pending_id.as_deref() == Some(pending_id)
            })
            .collect();
        let pending: Vec<_> = rows
            .iter()
            .filter(|m| RequestStatus::parse(Some(m.status)).is_pending())
            .collect();
        if pending.is_empty() {
            let winner = rows.iter().find_map(|m| match m.status {
                "answered" => Some("answered"),
                "rejected" => Some("rejected"),
                _ => None,
            });
            return winner.map_or(Standing::NotActive { pending: false }, Standing::Won);
        }
        let state = SessionState::parse(session.state);
        let turns = self.rule_turns(s);
        let messages = self.rule_messages(s);
        let referenced = |t: &str| messages.iter().any(|m| m.turn_id.as_deref() == Some(t));
        let current = current_turn(Some(&turns), Some(state), referenced)
            .0
            .turn()
            .map(|i| turns[i].id.clone());
        let in_current = current.is_some()
            && state.is_input_capable()
            && pending.iter().all(|m| m.turn_id == current);
        if in_current {
            Standing::Active
        } else {
            Standing::NotActive { pending: true }
        }
    }

    /// Whether a bundle a respond found no longer active is active again (a backend never does
    /// that: SPEC §8 "a terminal or superseded bundle never becomes active again").
    pub(super) fn revives_dead(&self) -> bool {
        self.dead
            .iter()
            .any(|(s, pending_id)| self.bundle_active(*s, pending_id))
    }

    /// The user answers (or skips) a bundle of session `s`: `b` picks the bundle among those with
    /// a row, `c` the fate of the request.
    pub(super) fn respond(&mut self, s: usize, b: u8, c: u8, project: bool) {
        let mut bundles: Vec<String> = Vec::new();
        for m in &self.sessions[s].messages {
            if let (false, "clarification_request", Some(p)) = (m.deleted, m.kind, &m.pending_id) {
                if !bundles.contains(p) {
                    bundles.push(p.clone());
                }
            }
        }
        // Mostly a bundle that is active (the user answers what they see): the agent asks one
        // now when none is.
        if b % 4 != 0
            && SessionState::parse(self.sessions[s].state).is_input_capable()
            && !bundles.iter().any(|p| self.bundle_active(s, p))
        {
            bundles.push(self.ask(s, b, project));
        }
        let active: Vec<String> = bundles
            .iter()
            .filter(|p| self.bundle_active(s, p))
            .cloned()
            .collect();
        let from = if !active.is_empty() && b % 4 != 0 {
            &active
        } else {
            &bundles
        };
        if from.is_empty() {
            return;
        }
        let pending_id = from[usize::from(b / 4) % from.len()].clone();
        // The user opened the session: the app loaded its turns and its newest messages.
        self.load_session(s);
        let skip = c & 0x80 != 0;
        let fate = c % 16;
        // The request never reached the server, or was refused before any write (retryable:
        // the claim was undone and the bundle restored).
        let unhandled = match fate {
            0 => Some(json!({"error": "network"})),
            1 => Some(json!({"error": "timeout"})),
            2 => Some(json!({"status": 503, "body": {
                "outcome": "retryable_error", "success": false, "claimed": true,
                "error": {"code": "retryable_error", "message": "…"},
            }})),
            _ => None,
        };
        if let Some(reply) = unhandled {
            self.tick();
            self.push_respond(s, &pending_id, reply);
            return;
        }
        // The request is handled here: every earlier input was produced before it.
        let at = self.inputs.len();
        let standing = self.standing(s, &pending_id);
        let status = if skip { "rejected" } else { "answered" };
        if standing == Standing::Active {
            self.claim(s, &pending_id, status, project);
        }
        if let Standing::NotActive { pending: true } = standing {
            self.dead.push((s, pending_id.clone()));
        }
        let mut body = Map::new();
        let (code, outcome) = match standing {
            Standing::Active => (200, "success"),
            Standing::Won(_) => (200, "conflict"),
            Standing::NotActive { .. } => (409, "conflict"),
        };
        body.insert("outcome".into(), json!(outcome));
        match standing {
            Standing::Active | Standing::Won(_) => {
                let won = match standing {
                    Standing::Won(winner) => winner,
                    _ => status,
                };
                body.insert("success".into(), json!(true));
                body.insert("claimed".into(), json!(standing == Standing::Active));
                body.insert("status".into(), json!(won));
                body.insert(
                    "response".into(),
                    json!({"pending_id": pending_id, "answers": [], "rejected": won == "rejected"}),
                );
            }
            Standing::NotActive { .. } => {
                body.insert("success".into(), json!(false));
                body.insert(
                    "error".into(),
                    json!({"code": "clarification_not_active", "message": "…"}),
                );
            }
        }
        // The server's position after handling: the projection, its revision reserved now.
        let task = self.sessions[s].task;
        let projection = self.projection(s);
        body.insert(
            "session".into(),
            json!({
                "id": self.sessions[s].id,
                "task_id": self.tasks[task].id,
                "pending_action": action_json(projection),
                "pending_action_revision": self.revision(),
            }),
        );
        body.insert("status_summary".into(), self.summary_json(task));
        let reply = match (fate, code) {
            // Handled, but the caller saw no reply (it timed out) or could not read it.
            (3, _) => json!({"error": "timeout"}),
            (4, _) => json!({"status": code}),
            // The reference client's envelope: no `outcome`, no position.
            (5, 200) => {
                body.remove("outcome");
                body.remove("session");
                json!({"status": code, "body": body})
            }
            // A failure after the claim that keeps the rows answered (non-retryable).
            (6, 200) if standing == Standing::Active => json!({"status": 500, "body": {
                "outcome": "non_retryable_error", "success": false, "claimed": true,
            }}),
            _ => json!({"status": code, "body": body}),
        };
        let input = self.respond_input(s, &pending_id, reply);
        self.inputs.insert(at, input);
    }

    /// The agent asks a bundle of 1–3 questions in an open turn (one is started when the newest
    /// turn is not an ordinary open one).
    fn ask(&mut self, s: usize, b: u8, project: bool) -> String {
        let ordinary = self.sessions[s]
            .turns
            .last()
            .is_some_and(|t| t.completed_at.is_none() && !t.lifecycle && !t.reserved);
        if !ordinary {
            self.complete_open_turn(s);
            let now = self.tick();
            let id = self.fresh("turn-");
            self.sessions[s].turns.push(super::SimTurn {
                id,
                started_at: now,
                updated_at: now,
                completed_at: None,
                lifecycle: false,
                reserved: false,
                attempted: false,
            });
            let index = self.sessions[s].turns.len() - 1;
            self.emit_turn(s, index);
        }
        let size = 1 + usize::from(b % 3);
        let pending_id = self.fresh("p-");
        // Sometimes without `question_total`: a bundle that shows before all its rows arrived.
        let total = (b & 0xc0 != 0).then_some(size as u32);
        for _ in 0..size {
            let pending = Some((pending_id.clone(), total));
            self.add_message(s, "clarification_request", pending, false, project);
        }
        pending_id
    }

    /// The handling's writes: every pending row of the bundle gets the winner's status, each
    /// published with the projection (or, unprojected, followed by a session event).
    fn claim(&mut self, s: usize, pending_id: &str, status: &'static str, project: bool) {
        let rows: Vec<usize> = (0..self.sessions[s].messages.len())
            .filter(|&i| {
                let m = &self.sessions[s].messages[i];
                !m.deleted
                    && m.pending_id.as_deref() == Some(pending_id)
                    && RequestStatus::parse(Some(m.status)).is_pending()
            })
            .collect();
        for i in rows {
            let now = self.tick();
            let m = &mut self.sessions[s].messages[i];
            m.status = status;
            m.updated_at = now;
            self.emit_message(s, i, "updated", project);
        }
    }

    fn load_session(&mut self, s: usize) {
        let id = self.sessions[s].id.clone();
        let turns: Vec<Value> = self.sessions[s]
            .turns
            .iter()
            .map(|t| self.turn_json(s, t))
            .collect();
        self.inputs
            .push(Input::call("applyTurnList", vec![json!(id), json!(turns)]));
        let mut rows: Vec<_> = self.sessions[s]
            .messages
            .iter()
            .filter(|m| !m.deleted)
            .collect();
        rows.sort_by_key(|m| m.created_at);
        let rows: Vec<Value> = rows
            .iter()
            .map(|m| Value::Object(self.message_json(s, m, "id")))
            .collect();
        self.inputs.push(Input::call(
            "applyMessagePage",
            vec![json!(id), json!(rows)],
        ));
    }

    fn respond_input(&self, s: usize, pending_id: &str, reply: Value) -> Input {
        Input::Respond {
            session: self.sessions[s].id.clone(),
            task: self.tasks[self.sessions[s].task].id.clone(),
            pending_id: pending_id.to_owned(),
            reply,
        }
    }

    fn push_respond(&mut self, s: usize, pending_id: &str, reply: Value) {
        let input = self.respond_input(s, pending_id, reply);
        self.inputs.push(input);
    }
}
