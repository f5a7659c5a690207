//! The rows of the message index as the rules see them: [`RowView`], a stored row with its
//! index, read through [`MessageRecord`] so the rules run on the index directly.

use crate::rules::action::settled_status;
use crate::rules::model::{MessageKind, MessageRecord, RequestStatus, RowFlags};
use crate::rules::time::Timestamp;

use super::slots::{RequestInfo, Row};
use super::Index;

impl Index {
    pub(super) fn view(&self, slot: u32) -> Option<RowView<'_>> {
        let row = self.row(slot)?;
        Some(RowView {
            index: self,
            slot,
            row,
            created: self.times.get(row.created).unwrap_or_default(),
            settled: false,
        })
    }

    /// Every row in creation order (tests, digests).
    pub fn rows(&self) -> impl Iterator<Item = RowView<'_>> + '_ {
        self.order.iter().filter_map(|slot| self.view(slot))
    }
}

/// A stored row seen through [`MessageRecord`], so the rules run on the index directly.
#[derive(Clone, Debug)]
pub(crate) struct RowView<'a> {
    index: &'a Index,
    slot: u32,
    pub row: &'a Row,
    /// The unpacked `created_at` (the rules read it by reference).
    created: Timestamp,
    /// The row's bundle was settled by the user's reply (SPEC §13): it counts as answered.
    pub settled: bool,
}

impl<'a> RowView<'a> {
    fn info(&self) -> Option<&'a RequestInfo> {
        self.index.requests_info.get(&self.slot)
    }

    pub fn id_str(&self) -> &'a str {
        self.index.id_of(self.row)
    }

    pub fn created(&self) -> &Timestamp {
        &self.created
    }

    pub fn updated(&self) -> Option<Timestamp> {
        self.index.times.get(self.row.updated)
    }

    pub fn pending_id_str(&self) -> Option<&'a str> {
        self.index.pending_ids.name(self.info()?.pending)
    }

    pub fn turn_id_str(&self) -> Option<&'a str> {
        self.index.turns.name(self.row.turn)
    }
}

impl MessageRecord for RowView<'_> {
    fn id(&self) -> &str {
        self.id_str()
    }
    fn turn_id(&self) -> Option<&str> {
        self.turn_id_str()
    }
    fn kind(&self) -> MessageKind {
        self.row.kind
    }
    fn status(&self) -> RequestStatus {
        settled_status(self.row.status, self.settled)
    }
    fn pending_id(&self) -> Option<&str> {
        self.pending_id_str()
    }
    fn question_total(&self) -> Option<f64> {
        self.info()?.question_total
    }
    fn flags(&self) -> RowFlags {
        self.info().map_or_else(RowFlags::default, |i| i.flags)
    }
    fn created_at(&self) -> &Timestamp {
        &self.created
    }
}
