//! Decoding the user's actions (SPEC §13): a respond's start and its reply, input like any other.
//!
//! A reply is what the app saw of its request: `{status, body}` (the HTTP status and the parsed
//! body, or `undefined`/`null` when the body was not JSON) or `{error: "network" | "timeout"}`.
//! The body's fields the rules read are typed: a `claimed` that is not a boolean is a typed error,
//! not a guess. Its `session.pending_action_revision` is the settlement's position.

use crate::error::{WireError, WireErrorKind};
use crate::rules::action::{gone, ReplyBody, ServerOutcome, Transport};
use crate::rules::model::Revision;

use super::decode::{invalid_type, object, optional_object, revision};
use super::{Path, Wire};

/// A respond reply: how the request ended, and the server's position when the body gave it.
#[inline(never)]
pub fn reply<W: Wire>(
    value: &W,
    path: &Path<'_>,
) -> Result<(Transport, Option<Revision>), WireError> {
    object(value, path)?;
    let error_path = path.key("error");
    let error = value.get("error");
    if !error.is_absent() {
        return match error.string().as_ref().map(AsRef::as_ref) {
            Some("network") => Ok((Transport::Network, None)),
            Some("timeout") => Ok((Transport::Timeout, None)),
            _ => Err(WireError::from(WireErrorKind::InvalidValue {
                field: error_path.text(),
                problem: "expected \"network\" or \"timeout\"".into(),
            })),
        };
    }
    let status_path = path.key("status");
    let status = value
        .get("status")
        .unsigned()
        .and_then(|s| u16::try_from(s).ok())
        .ok_or_else(|| {
            WireError::from(WireErrorKind::InvalidValue {
                field: status_path.text(),
                problem: "expected an HTTP status (an integer from 0 to 65535)".into(),
            })
        })?;
    let body_path = path.key("body");
    let body = value.get("body");
    if !body.is_object() {
        // Not JSON, or not an object: nothing of it is read (the rules call that unreadable).
        return Ok((Transport::Reply(status, None), None));
    }
    let flag = |key: &'static str| -> Result<Option<bool>, WireError> {
        let v = body.get(key);
        match v.boolean() {
            Some(b) => Ok(Some(b)),
            None if v.is_absent() => Ok(None),
            None => Err(invalid_type(&v, &body_path.key(key), "a boolean")),
        }
    };
    let outcome_value = body.get("outcome");
    let outcome = match outcome_value.string() {
        Some(text) => ServerOutcome::parse(text.as_ref()),
        None if outcome_value.is_absent() => None,
        None => {
            return Err(invalid_type(
                &outcome_value,
                &body_path.key("outcome"),
                "a string",
            ))
        }
    };
    // `error.code`: only its text is read (a body's error of another shape says nothing).
    let code = body.get("error").get("code");
    let parsed = ReplyBody {
        success: flag("success")?,
        claimed: flag("claimed")?,
        outcome,
        gone: code.string().is_some_and(|c| gone(c.as_ref())),
    };
    let session_path = body_path.key("session");
    let session = body.get("session");
    let position = if optional_object(&session, &session_path)? {
        revision(
            &session.get("pending_action_revision"),
            &session_path.key("pending_action_revision"),
        )?
    } else {
        None
    };
    Ok((Transport::Reply(status, Some(parsed)), position))
}
