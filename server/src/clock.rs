//! Wall-clock time for the services, injectable for tests.

use std::sync::Mutex;

use chrono::{DateTime, Duration as ChronoDuration, SecondsFormat, Utc};

use task_projection::rules::stall::UnixNanos;

/// The current time.
pub trait Clock: Send + Sync {
    fn now(&self) -> DateTime<Utc>;
}

/// The system clock.
#[derive(Clone, Copy, Debug, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> DateTime<Utc> {
        Utc::now()
    }
}

/// A clock that moves only when told to (tests).
#[derive(Debug)]
pub struct ManualClock {
    now: Mutex<DateTime<Utc>>,
}

impl ManualClock {
    pub fn new(now: DateTime<Utc>) -> ManualClock {
        ManualClock {
            now: Mutex::new(now),
        }
    }

    /// Starts at a wire timestamp; `None` when it does not parse.
    pub fn at(wire: &str) -> Option<ManualClock> {
        parse_wire_time(wire).map(ManualClock::new)
    }

    pub fn set(&self, now: DateTime<Utc>) {
        *self
            .now
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = now;
    }

    /// Moves the clock forward by `seconds`.
    pub fn advance_secs(&self, seconds: i64) {
        let mut now = self
            .now
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(later) = now.checked_add_signed(ChronoDuration::seconds(seconds)) {
            *now = later;
        }
    }
}

impl Clock for ManualClock {
    fn now(&self) -> DateTime<Utc> {
        *self
            .now
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// The wire form: RFC 3339, UTC, `Z`, nine fractional digits.
pub fn wire_time(time: DateTime<Utc>) -> String {
    time.to_rfc3339_opts(SecondsFormat::Nanos, true)
}

/// Reads a wire timestamp (RFC 3339 with an offset); `None` when it is not one.
pub fn parse_wire_time(text: &str) -> Option<DateTime<Utc>> {
    DateTime::parse_from_rfc3339(text)
        .ok()
        .map(|t| t.with_timezone(&Utc))
}

/// Nanoseconds since the Unix epoch, as the stall rules count time.
pub fn unix_nanos(time: DateTime<Utc>) -> UnixNanos {
    let nanos = i128::from(time.timestamp())
        .saturating_mul(1_000_000_000)
        .saturating_add(i128::from(time.timestamp_subsec_nanos()));
    UnixNanos(nanos)
}
