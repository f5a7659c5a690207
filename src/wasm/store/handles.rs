//! The fast path of message events and message-page rows: `store.js` passes the strings that
//! repeat (ids, types, statuses, epochs) by handle, interned once (`__intern`), and writes the
//! text that does not repeat into one scratch buffer (`__scratch`), so a message event crosses
//! the boundary without a tape or a string copy per field.

use wasm_bindgen::prelude::*;

use super::JsProjectionStore;
use crate::rules::model::{PendingAction, Revision, RowFlags};
use crate::rules::revision::PendingProjection;
use crate::store::{MessageEventKind, MessageParts, Reason};
use crate::wasm::convert::{js_error, misuse};
use crate::wire::{fast, integral_u64, MessageMeaning};

#[wasm_bindgen(js_class = ProjectionStore)]
impl JsProjectionStore {
    /// `__intern(text)` → a handle for `text` in the fast-path calls below (`store.js` keeps
    /// the reverse map, and resets both with `__internReset` when they grow large).
    #[wasm_bindgen(js_name = __intern, skip_typescript)]
    pub fn intern(&self, text: JsValue) -> Result<u32, JsValue> {
        let text = text.as_string().ok_or_else(|| misuse("text"))?;
        let mut names = self.names.borrow_mut();
        names.push(text.into_boxed_str());
        u32::try_from(names.len()).map_err(|_| misuse("text"))
    }

    /// `__internReset()`: forgets every handle.
    #[wasm_bindgen(js_name = __internReset, skip_typescript)]
    pub fn intern_reset(&self) {
        *self.names.borrow_mut() = Vec::new();
    }

    /// `__scratch(capacity)` → the address of a buffer of at least `capacity` bytes where
    /// `store.js` writes the text of its next fast-path call (valid until the next
    /// `__scratch`). A capacity the memory cannot hold is a typed error, not an abort.
    #[wasm_bindgen(js_name = __scratch, skip_typescript)]
    pub fn scratch(&self, capacity: f64) -> Result<u32, JsValue> {
        let capacity = crate::wire::integral_u64(capacity)
            .and_then(|c| usize::try_from(c).ok())
            .ok_or_else(|| misuse("capacity"))?;
        let mut scratch = self.scratch.borrow_mut();
        if let Some(more) = capacity.checked_sub(scratch.len()).filter(|&n| n > 0) {
            scratch.try_reserve_exact(more).map_err(|_| {
                js_error(crate::WireError::from(
                    crate::error::WireErrorKind::InvalidValue {
                        field: "text".into(),
                        problem: "too long for the memory left".into(),
                    },
                ))
            })?;
            scratch.resize(capacity, 0);
        }
        // wasm32: an address fits u32.
        u32::try_from(scratch.as_ptr() as usize).map_err(|_| misuse("capacity"))
    }

    /// The fast path of `applyMessageEvent` and of one row of `applyMessagePage`, with the
    /// repeating strings by handle (0: absent) and the message id and timestamps in the scratch
    /// buffer, one after the other (a length of -1: absent). `kind` and `action` are the codes of
    /// [`crate::wire::fast`]; the revision is present when `epoch` is. The fields mean what they
    /// mean to the decoder: both map them with [`crate::wire::MessageMeaning::of`].
    #[allow(clippy::too_many_arguments)]
    #[wasm_bindgen(js_name = __applyMessage, skip_typescript)]
    pub fn apply_message_handles(
        &self,
        kind: u8,
        session: u32,
        task: u32,
        id_len: i32,
        turn: u32,
        message_type: u32,
        status: u32,
        pending: u32,
        question_total: Option<f64>,
        flags: u8,
        created_len: i32,
        updated_len: i32,
        action_code: u8,
        epoch: u32,
        sequence: f64,
    ) -> Result<(), JsValue> {
        let names = self.names.borrow();
        let name = |handle: u32| -> Result<Option<&str>, JsValue> {
            match handle.checked_sub(1) {
                None => Ok(None),
                Some(h) => usize::try_from(h)
                    .ok()
                    .and_then(|h| names.get(h))
                    .map(|n| Some(&**n))
                    .ok_or_else(|| misuse("handle")),
            }
        };
        let scratch = self.scratch.borrow();
        let mut at = 0usize;
        let mut text = |len: i32| -> Result<Option<&str>, JsValue> {
            let Ok(len) = usize::try_from(len) else {
                return Ok(None);
            };
            let end = at.checked_add(len).ok_or_else(|| misuse("length"))?;
            let bytes = scratch.get(at..end).ok_or_else(|| misuse("length"))?;
            at = end;
            std::str::from_utf8(bytes)
                .map(Some)
                .map_err(|_| misuse("text"))
        };
        let id = text(id_len)?.ok_or_else(|| misuse("id"))?;
        let created_at = text(created_len)?;
        let updated_at = text(updated_len)?;
        let session_id = name(session)?.ok_or_else(|| misuse("session"))?;
        let task_id = name(task)?;
        let meaning = MessageMeaning::of(
            name(turn)?,
            name(message_type)?,
            name(status)?,
            name(pending)?,
            created_at,
            updated_at,
        );
        let parts = MessageParts {
            id,
            turn_id: meaning.turn_id,
            kind: meaning.kind,
            status: meaning.status,
            pending_id: meaning.pending_id,
            question_total,
            flags: RowFlags(flags & (RowFlags::IDENTIFIED | RowFlags::DETACHED)),
            created_at: &meaning.created_at,
            updated_at: meaning.updated_at.as_ref(),
        };
        let event_kind = match kind {
            fast::kind::ADDED => Some(MessageEventKind::Added),
            fast::kind::UPDATED => Some(MessageEventKind::Updated),
            fast::kind::DELETED => Some(MessageEventKind::Deleted),
            fast::kind::PAGE_ROW | fast::kind::PAGE_FIRST => None,
            _ => return Err(misuse("kind")),
        };
        let action = match action_code {
            fast::action::ABSENT => None,
            fast::action::CLEAN => Some(None),
            fast::action::CLARIFICATION => Some(Some(PendingAction::Clarification)),
            fast::action::PERMISSION => Some(Some(PendingAction::Permission)),
            _ => return Err(misuse("action")),
        };
        let revision = match name(epoch)? {
            Some(epoch) => Some(Revision {
                epoch: epoch.to_owned(),
                sequence: integral_u64(sequence).ok_or_else(|| misuse("sequence"))?,
            }),
            None => None,
        };
        let projection = (action.is_some() || revision.is_some())
            .then_some(PendingProjection { action, revision });
        let Some(event_kind) = event_kind else {
            let page_changed = self.page_changed.get() && kind == fast::kind::PAGE_ROW;
            return self.mutate(|s| {
                let row = s.apply_message_rows(session_id, [parts]);
                let changed = page_changed || row == Reason::Applied;
                self.page_changed.set(changed);
                Ok(if changed {
                    Reason::Applied
                } else {
                    Reason::Unchanged
                })
            });
        };
        self.mutate(|s| {
            Ok(s.apply_message(event_kind, session_id, task_id, &parts, projection.as_ref()))
        })
    }
}
