//! The event outbox (PostgreSQL): how several instances on one database behave as one.
//!
//! Every event an instance publishes is a row of `event_outbox` (migration 5): its **offset**
//! (`offset_id`, a `BIGSERIAL`: one total order for every instance), its name and its payload
//! (JSON text). An insert fires `NOTIFY task_projection_events` (a statement trigger) whose payload
//! carries the inserted rows when they fit (migration 8; empty otherwise), which wakes every
//! instance's follower: rows that continue the last offset it delivered are handed to its
//! WebSocket hub as they came; otherwise (an empty payload, a gap, the poll) it reads the rows
//! after that offset, in offset order. So a client connected to any instance
//! receives every event, from every instance, in the same order, and a reconnecting client can
//! resume from the last offset it saw (`?since=`, docs/server-api.md) for as long as the outbox
//! holds it ([`prune`] drops rows older than the retention, 15 minutes by default).
//!
//! * Publishing ([`OutboxWriter`]) is an [`EventSink`]: events go through one channel to one
//!   writer task, which inserts whatever queued up in one statement, so an instance's events
//!   keep their publication order (a session's events are published in revision order under the
//!   session lock of the instance that wrote it). A failed insert is retried, never dropped.
//! * Offsets are handed out when a row is inserted and become visible when it commits, so a
//!   follower can see offset n + 2 before n + 1 commits. It delivers only the contiguous prefix
//!   and waits for the missing offset; an offset that stays missing for [`GAP_WAIT`] was rolled
//!   back (a sequence value is never returned) and is skipped. Inserts are single statements, so
//!   a gap closes within a commit.
//! * A missed notification (a lost listening connection) costs latency only: the follower also
//!   polls every [`POLL`].
//!
//! SQLite has no outbox: one instance, events go straight to its hub (offsets counted in
//! memory, resumable from the hub's recent history).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use sqlx::postgres::PgListener;
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;

use task_projection::rules::connection::{next_offset, NextOffset};

use super::db::{col, query, query_scalar, Db};
use super::error::{Result, ServerError};
use super::events::{Event, EventSink, PublishError};

/// The channel every insert notifies.
pub const CHANNEL: &str = "task_projection_events";
/// A follower also reads the outbox this often (a notification lost with its connection).
pub const POLL: Duration = Duration::from_secs(1);
/// How long a follower waits for a missing offset before it skips it.
pub const GAP_WAIT: Duration = Duration::from_secs(1);
/// How long notified rows beyond a missing offset wait for that offset's own notification (its
/// transaction took the offset first and committed later) before the follower reads the outbox.
pub const NOTIFIED_GAP_WAIT: Duration = Duration::from_millis(10);
/// Notified rows held beyond a missing offset at most (more: the follower reads instead).
const HELD_ROWS: usize = 4096;
/// How long the outbox keeps an event by default (how far back a client can resume).
pub const DEFAULT_RETENTION: Duration = Duration::from_secs(15 * 60);
/// Rows read per query.
const PAGE: i64 = 512;
/// Events inserted per statement at most.
const BATCH: usize = 256;

/// One outbox row.
#[derive(Clone, Debug, PartialEq)]
pub struct OutboxRow {
    pub offset: u64,
    pub name: String,
    /// The payload's JSON text.
    pub payload: String,
}

fn offset_of(value: i64) -> Result<u64> {
    u64::try_from(value)
        .map_err(|_| ServerError::corrupt("event_outbox", &value.to_string(), "negative offset"))
}

fn bind_offset(offset: u64) -> i64 {
    i64::try_from(offset).unwrap_or(i64::MAX)
}

/// The rows after `after`, up to `up_to` (inclusive) if given, in offset order, at most `limit`.
pub async fn read_after(
    db: &Db,
    after: u64,
    up_to: Option<u64>,
    limit: i64,
) -> Result<Vec<OutboxRow>> {
    let rows = query(
        "SELECT offset_id, name, payload FROM event_outbox \
         WHERE offset_id > $1 AND offset_id <= $2 ORDER BY offset_id LIMIT $3",
    )
    .bind(bind_offset(after))
    .bind(up_to.map_or(i64::MAX, bind_offset))
    .bind(limit)
    .fetch_all(db)
    .await?;
    rows.iter()
        .map(|row| {
            Ok(OutboxRow {
                offset: offset_of(col(row, "event_outbox", "offset_id")?)?,
                name: col(row, "event_outbox", "name")?,
                payload: col(row, "event_outbox", "payload")?,
            })
        })
        .collect()
}

/// The newest offset (0 when the outbox is empty).
pub async fn latest(db: &Db) -> Result<u64> {
    let value: Option<i64> = query_scalar("SELECT MAX(offset_id) FROM event_outbox")
        .fetch_one(db)
        .await?;
    offset_of(value.unwrap_or(0))
}

/// The oldest offset the outbox still holds (`None` when it is empty).
pub async fn oldest(db: &Db) -> Result<Option<u64>> {
    let oldest: Option<i64> = query_scalar("SELECT MIN(offset_id) FROM event_outbox")
        .fetch_one(db)
        .await?;
    oldest.map(offset_of).transpose()
}

/// This database's stream name (offsets are meaningful only within it).
pub async fn stream_id(db: &Db) -> Result<String> {
    let value: Option<String> = query_scalar("SELECT value FROM meta WHERE key = 'event_stream'")
        .fetch_optional(db)
        .await?;
    value.ok_or_else(|| ServerError::corrupt("meta", "event_stream", "missing"))
}

/// Deletes the events older than `keep`; returns how many.
pub async fn prune(db: &Db, keep: Duration) -> Result<u64> {
    let done =
        query("DELETE FROM event_outbox WHERE created_at < now() - make_interval(secs => $1)")
            .bind(keep.as_secs_f64())
            .execute(db)
            .await?;
    Ok(done.rows_affected())
}

/// Inserts `events` in one statement, in order (consecutive offsets, one commit).
pub async fn insert(db: &Db, events: &[Event]) -> Result<()> {
    if events.is_empty() {
        return Ok(());
    }
    let mut sql = String::from("INSERT INTO event_outbox (name, payload) VALUES ");
    for i in 0..events.len() {
        let n = i.saturating_mul(2);
        if i > 0 {
            sql.push_str(", ");
        }
        sql.push_str(&format!(
            "(${}, ${})",
            n.saturating_add(1),
            n.saturating_add(2)
        ));
    }
    let mut statement = query(&sql);
    for event in events {
        statement = statement.bind(event.name).bind(event.payload.to_string());
    }
    statement.execute(db).await?;
    Ok(())
}

enum Queued {
    Event(Event),
    Flush(oneshot::Sender<()>),
}

/// The [`EventSink`] of an instance on PostgreSQL: one writer task inserts the events in
/// publication order (see the module docs).
#[derive(Clone)]
pub struct OutboxWriter {
    queue: mpsc::UnboundedSender<Queued>,
    /// Publication instants, when recording (the load benchmark).
    log: Arc<std::sync::Mutex<Option<Vec<Instant>>>>,
    /// Insert statements that succeeded (one notification each).
    inserts: Arc<AtomicU64>,
}

impl OutboxWriter {
    /// Starts the writer task.
    pub fn start(db: Db) -> (OutboxWriter, JoinHandle<()>) {
        let (queue, mut rx) = mpsc::unbounded_channel::<Queued>();
        let inserts = Arc::new(AtomicU64::new(0));
        let counted = inserts.clone();
        let task = tokio::spawn(async move {
            let mut batch: Vec<Event> = Vec::new();
            let mut waiting: Vec<oneshot::Sender<()>> = Vec::new();
            while let Some(first) = rx.recv().await {
                let mut next = Some(first);
                while let Some(queued) = next.take() {
                    match queued {
                        Queued::Event(event) => batch.push(event),
                        Queued::Flush(done) => waiting.push(done),
                    }
                    if batch.len() < BATCH {
                        next = rx.try_recv().ok();
                    }
                }
                let mut delay = Duration::from_millis(50);
                while let Err(error) = insert(&db, &batch).await {
                    tracing::warn!(%error, events = batch.len(), "outbox insert failed; retrying");
                    tokio::time::sleep(delay).await;
                    delay = delay.saturating_mul(2).min(Duration::from_secs(5));
                }
                if !batch.is_empty() {
                    counted.fetch_add(1, Ordering::Relaxed);
                }
                batch.clear();
                for done in waiting.drain(..) {
                    let _ = done.send(());
                }
            }
        });
        let log = Arc::default();
        (
            OutboxWriter {
                queue,
                log,
                inserts,
            },
            task,
        )
    }

    /// How many insert statements the writer ran (each notifies every instance once).
    pub fn inserts(&self) -> u64 {
        self.inserts.load(Ordering::Relaxed)
    }

    /// Starts recording publication instants (the load benchmark).
    pub fn record(&self) {
        *self
            .log
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(Vec::new());
    }

    /// The publication instants recorded so far, in publication order.
    pub fn recorded(&self) -> Vec<Instant> {
        self.log
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
            .unwrap_or_default()
    }

    /// Waits until everything published before is in the outbox.
    pub async fn flush(&self) {
        let (done, wait) = oneshot::channel();
        if self.queue.send(Queued::Flush(done)).is_ok() {
            let _ = wait.await;
        }
    }
}

impl EventSink for OutboxWriter {
    fn publish(&self, event: Event) -> std::result::Result<(), PublishError> {
        if let Some(log) = self
            .log
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .as_mut()
        {
            log.push(Instant::now());
        }
        self.queue
            .send(Queued::Event(event))
            .map_err(|_| PublishError("the outbox writer stopped".into()))
    }
}

/// What the listener hands the follower.
#[derive(Debug)]
enum Wake {
    /// The rows a notification carried, in offset order.
    Rows(Vec<OutboxRow>),
    /// Read the outbox: a notification without rows (they did not fit), or a (re)connection that
    /// may have missed some.
    Read,
}

/// The rows a notification's payload carries (migration 8: a JSON array of
/// `[offset, name, payload text]`); `None` when it carries none (empty: they did not fit).
fn notified_rows(payload: &str) -> Option<Vec<OutboxRow>> {
    if payload.is_empty() {
        return None;
    }
    let rows: Vec<(u64, String, String)> = serde_json::from_str(payload).ok()?;
    Some(
        rows.into_iter()
            .map(|(offset, name, payload)| OutboxRow {
                offset,
                name,
                payload,
            })
            .collect(),
    )
}

/// Notified rows beyond a missing offset, held until the notification of that offset comes too
/// (commits of several instances reach the listeners in commit order, not offset order) or
/// [`NOTIFIED_GAP_WAIT`] passes and the follower reads the outbox instead.
#[derive(Debug, Default)]
struct Reorder {
    rows: std::collections::BTreeMap<u64, OutboxRow>,
    /// When rows began to be held (rows held since then may have been delivered meanwhile:
    /// the deadline runs from the first of them).
    since: Option<Instant>,
}

impl Reorder {
    /// Takes notified `rows`: returns, in offset order, every row (of these or held before) that
    /// now continues `cursor` without a gap ([`next_offset`]), advancing it; rows beyond a gap are
    /// held, rows at or before `cursor` dropped.
    fn take(&mut self, cursor: &mut u64, rows: Vec<OutboxRow>) -> Vec<OutboxRow> {
        for row in rows {
            if next_offset(*cursor, row.offset) != NextOffset::Past {
                self.rows.insert(row.offset, row);
            }
        }
        let mut fresh = Vec::new();
        while let Some(entry) = self.rows.first_entry() {
            match next_offset(*cursor, *entry.key()) {
                NextOffset::Past => {
                    entry.remove();
                }
                NextOffset::Next => {
                    let row = entry.remove();
                    *cursor = row.offset;
                    fresh.push(row);
                }
                NextOffset::Gap => break,
            }
        }
        if self.rows.is_empty() {
            self.since = None;
        } else if self.since.is_none() {
            self.since = Some(Instant::now());
        }
        fresh
    }

    /// When the held rows stop waiting for their missing offset (the follower then reads):
    /// `None` when nothing is held.
    fn deadline(&self) -> Option<Instant> {
        if self.rows.len() > HELD_ROWS {
            return Some(Instant::now());
        }
        let since = self.since?;
        Some(since.checked_add(NOTIFIED_GAP_WAIT).unwrap_or(since))
    }
}

/// Follows the outbox from `after`: every row, in offset order, is passed to `deliver` (see the
/// module docs for gaps and polling). Rows a notification carries that continue the last offset
/// delivered are delivered as they are, and rows beyond a missing offset wait a little for its
/// notification (`Reorder`); anything else (a notification without rows, a gap that stays,
/// the poll) reads the outbox. Runs until the task is aborted.
pub fn follow<F>(db: Db, url: String, after: u64, mut deliver: F) -> JoinHandle<()>
where
    F: FnMut(OutboxRow) + Send + 'static,
{
    let (wakes, mut woken) = mpsc::unbounded_channel::<Wake>();
    let listener = tokio::spawn(listen(url, wakes));
    tokio::spawn(async move {
        let _listener = AbortOnDrop(listener);
        let mut cursor = after;
        let mut gap: Option<(u64, Instant)> = None;
        let mut reorder = Reorder::default();
        // What was written before the listener was up is read first.
        let mut read = true;
        loop {
            if read {
                read = false;
                let mut again = false;
                match read_after(&db, cursor, None, PAGE).await {
                    Ok(rows) => {
                        let full = rows.len() >= usize::try_from(PAGE).unwrap_or(usize::MAX);
                        for row in rows {
                            if next_offset(cursor, row.offset) != NextOffset::Next {
                                // An offset not committed yet (or rolled back): wait a while.
                                let since = match gap {
                                    Some((missing, since))
                                        if missing == cursor.saturating_add(1) =>
                                    {
                                        since
                                    }
                                    _ => {
                                        let now = Instant::now();
                                        gap = Some((cursor.saturating_add(1), now));
                                        now
                                    }
                                };
                                if since.elapsed() < GAP_WAIT {
                                    again = true;
                                    break;
                                }
                                tracing::warn!(
                                    from = cursor.saturating_add(1),
                                    to = row.offset.saturating_sub(1),
                                    "outbox offsets never committed; skipping them"
                                );
                            }
                            gap = None;
                            cursor = row.offset;
                            deliver(row);
                        }
                        again |= full;
                    }
                    Err(error) => {
                        tracing::warn!(%error, "outbox read failed; retrying");
                        tokio::time::sleep(Duration::from_millis(200)).await;
                        read = true;
                        continue;
                    }
                }
                // Held rows the read made continuous (the ones it delivered are dropped).
                for row in reorder.take(&mut cursor, Vec::new()) {
                    gap = None;
                    deliver(row);
                }
                if again {
                    let pause = if gap.is_some() { 2 } else { 0 };
                    tokio::time::sleep(Duration::from_millis(pause)).await;
                    read = true;
                    continue;
                }
            }
            let wait = reorder.deadline().map_or(POLL, |deadline| {
                deadline.saturating_duration_since(Instant::now()).min(POLL)
            });
            match tokio::time::timeout(wait, woken.recv()).await {
                Ok(Some(Wake::Rows(rows))) => {
                    for row in reorder.take(&mut cursor, rows) {
                        gap = None;
                        deliver(row);
                    }
                }
                // A notification without rows, the poll, or held rows that waited long enough
                // for their missing offset: read (the read waits for it).
                Ok(Some(Wake::Read)) | Err(_) => read = true,
                // The listener ended (it does not): poll.
                Ok(None) => {
                    tokio::time::sleep(POLL).await;
                    read = true;
                }
            }
        }
    })
}

/// Holds a `LISTEN` connection and hands the follower every notification's rows (a read when
/// it carries none, and after a reconnection, when notifications may have been lost).
async fn listen(url: String, wakes: mpsc::UnboundedSender<Wake>) {
    let mut delay = Duration::from_millis(100);
    loop {
        let listener = async {
            let mut listener = PgListener::connect(&url).await?;
            listener.listen(CHANNEL).await?;
            Ok::<_, sqlx::Error>(listener)
        };
        let mut listener = match listener.await {
            Ok(listener) => listener,
            Err(error) => {
                tracing::warn!(%error, "outbox LISTEN connection failed; retrying");
                tokio::time::sleep(delay).await;
                delay = delay.saturating_mul(2).min(Duration::from_secs(5));
                continue;
            }
        };
        delay = Duration::from_millis(100);
        if wakes.send(Wake::Read).is_err() {
            return;
        }
        loop {
            let wake = match listener.try_recv().await {
                Ok(Some(notification)) => {
                    notified_rows(notification.payload()).map_or(Wake::Read, Wake::Rows)
                }
                // Reconnected by the listener: what was notified meanwhile is lost, so read.
                Ok(None) => Wake::Read,
                Err(error) => {
                    tracing::warn!(%error, "outbox LISTEN connection lost");
                    break;
                }
            };
            if wakes.send(wake).is_err() {
                return;
            }
        }
    }
}

/// Aborts a task when dropped (the follower takes its listener along).
struct AbortOnDrop(JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Runs `prune` every `every` until aborted.
pub fn pruner(db: Db, keep: Duration, every: Duration) -> JoinHandle<()> {
    tokio::spawn(async move {
        let mut ticks = tokio::time::interval(every);
        ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            ticks.tick().await;
            match prune(&db, keep).await {
                Ok(0) => {}
                Ok(n) => tracing::debug!(pruned = n, "outbox pruned"),
                Err(error) => tracing::warn!(%error, "outbox prune failed"),
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(offset: u64) -> OutboxRow {
        OutboxRow {
            offset,
            name: "e".into(),
            payload: "{}".into(),
        }
    }

    #[test]
    fn a_notification_carries_its_rows_or_none() {
        let rows =
            notified_rows(r#"[[7,"session.message.added","{\"a\": [1, \"x\"]}"],[8,"b","{}"]]"#)
                .expect("rows");
        assert_eq!(rows.len(), 2);
        assert_eq!(
            (
                rows[0].offset,
                rows[0].name.as_str(),
                rows[0].payload.as_str()
            ),
            (7, "session.message.added", r#"{"a": [1, "x"]}"#)
        );
        assert_eq!(rows[1].offset, 8);
        // Too big to carry (empty), or not ours: read instead.
        assert!(notified_rows("").is_none());
        assert!(notified_rows("[[1,2]]").is_none());
        assert!(notified_rows("[[-1,\"a\",\"{}\"]]").is_none());
    }

    #[test]
    fn notified_rows_are_delivered_in_offset_order_across_gaps() {
        let offsets = |rows: Vec<OutboxRow>| rows.iter().map(|r| r.offset).collect::<Vec<_>>();
        let mut reorder = Reorder::default();
        let mut cursor = 4;
        assert_eq!(
            offsets(reorder.take(&mut cursor, vec![row(5), row(6)])),
            [5, 6]
        );
        assert_eq!((cursor, reorder.deadline()), (6, None));
        // Already delivered (by a read), in part or whole.
        assert_eq!(
            offsets(reorder.take(&mut cursor, vec![row(6), row(7)])),
            [7]
        );
        assert_eq!(
            offsets(reorder.take(&mut cursor, vec![row(5)])),
            [] as [u64; 0]
        );
        // Beyond a missing offset: held (with a deadline) until it comes, then delivered in order.
        assert_eq!(
            offsets(reorder.take(&mut cursor, vec![row(9), row(10)])),
            [] as [u64; 0]
        );
        assert_eq!(cursor, 7);
        let deadline = reorder.deadline().expect("rows wait for offset 8");
        assert!(deadline.saturating_duration_since(Instant::now()) <= NOTIFIED_GAP_WAIT);
        assert_eq!(
            offsets(reorder.take(&mut cursor, vec![row(12)])),
            [] as [u64; 0]
        );
        assert_eq!(
            reorder.deadline(),
            Some(deadline),
            "the oldest held row sets it"
        );
        assert_eq!(offsets(reorder.take(&mut cursor, vec![row(8)])), [8, 9, 10]);
        assert_eq!(cursor, 10);
        assert!(reorder.deadline().is_some(), "12 still waits for 11");
        // A read delivered 11 and 12: the held 12 is dropped, a later 14 waits for 13.
        assert_eq!(
            offsets(reorder.take(&mut cursor, vec![row(14)])),
            [] as [u64; 0]
        );
        let mut cursor = 12;
        assert!(reorder.take(&mut cursor, Vec::new()).is_empty());
        assert!(reorder.deadline().is_some(), "14 waits for 13");
        assert_eq!(offsets(reorder.take(&mut cursor, vec![row(13)])), [13, 14]);
        assert_eq!((cursor, reorder.deadline()), (14, None));
        // A read that stopped at 11: the held 12 and 13 are delivered after it, nothing lost.
        let mut reorder = Reorder::default();
        let mut cursor = 10;
        assert!(reorder.take(&mut cursor, vec![row(12), row(13)]).is_empty());
        let mut cursor = 11;
        assert_eq!(offsets(reorder.take(&mut cursor, Vec::new())), [12, 13]);
        assert_eq!((cursor, reorder.deadline()), (13, None));
        // Nothing follows the last offset.
        let mut cursor = u64::MAX;
        assert_eq!(
            offsets(reorder.take(&mut cursor, vec![row(1)])),
            [] as [u64; 0]
        );
    }

    /// Whatever order the inserts' notifications arrive in (each insert's rows are consecutive
    /// offsets), repeated or interleaved with reads of the committed prefix, the follower's
    /// [`Reorder`] and reads together deliver every offset once, in offset order.
    #[cfg(not(target_arch = "wasm32"))]
    mod properties {
        use super::*;
        use proptest::prelude::*;

        /// Split `1..=n` into consecutive inserts of the given sizes (the last takes the rest).
        fn inserts(n: u64, sizes: &[u64]) -> Vec<Vec<u64>> {
            let mut out = Vec::new();
            let mut next = 1;
            for size in sizes {
                if next > n {
                    break;
                }
                let end = (next + size - 1).min(n);
                out.push((next..=end).collect());
                next = end + 1;
            }
            if next <= n {
                out.push((next..=n).collect());
            }
            out
        }

        proptest! {
            #![proptest_config(ProptestConfig { cases: 4096, ..ProptestConfig::default() })]

            #[test]
            fn every_offset_is_delivered_once_in_order(
                n in 1u64..48,
                sizes in proptest::collection::vec(1u64..6, 0..48),
                order in proptest::collection::vec(any::<u16>(), 48),
                repeats in proptest::collection::vec(any::<bool>(), 48),
                reads in proptest::collection::vec(any::<bool>(), 48),
            ) {
                let mut pending = inserts(n, &sizes);
                let mut reorder = Reorder::default();
                let mut cursor = 0u64;
                let mut delivered: Vec<u64> = Vec::new();
                let mut committed: std::collections::BTreeSet<u64> = Default::default();
                let mut step = 0usize;
                while !pending.is_empty() {
                    // The next insert to commit (commit order is not offset order).
                    let pick = usize::from(order[step % order.len()]) % pending.len();
                    let batch = pending.remove(pick);
                    committed.extend(batch.iter().copied());
                    let times = if repeats[step % repeats.len()] { 2 } else { 1 };
                    for _ in 0..times {
                        let rows = batch.iter().copied().map(row).collect();
                        for r in reorder.take(&mut cursor, rows) {
                            delivered.push(r.offset);
                        }
                    }
                    if reads[step % reads.len()] {
                        // A read: the committed rows after the cursor, up to the first missing
                        // offset (the follower waits for it), then the held rows it joined.
                        while committed.contains(&(cursor + 1)) {
                            cursor += 1;
                            delivered.push(cursor);
                        }
                        for r in reorder.take(&mut cursor, Vec::new()) {
                            delivered.push(r.offset);
                        }
                    }
                    step += 1;
                }
                // Everything committed: nothing is held any more.
                prop_assert_eq!(reorder.deadline(), None);
                prop_assert_eq!(delivered, (1..=n).collect::<Vec<_>>());
                prop_assert_eq!(cursor, n);
            }
        }
    }

    #[test]
    fn too_many_held_rows_read_at_once() {
        let mut reorder = Reorder::default();
        let mut cursor = 0;
        let rows = (2..=u64::try_from(HELD_ROWS).unwrap() + 2)
            .map(row)
            .collect();
        assert!(reorder.take(&mut cursor, rows).is_empty());
        assert!(reorder.deadline().expect("held") <= Instant::now());
    }
}
