//! The API's error answer and the small reply helpers every route uses (a leaf: it imports no
//! other module of `http`).

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::{json, Map, Value};

use crate::error::ServerError;

/// An API error: `{"error": {"code", "message"}}` with its HTTP status.
#[derive(Debug)]
pub struct ApiError {
    pub status: StatusCode,
    pub code: &'static str,
    pub message: String,
}

impl ApiError {
    pub fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> ApiError {
        ApiError {
            status,
            code,
            message: message.into(),
        }
    }

    pub fn bad_request(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::BAD_REQUEST, "bad_request", message)
    }

    pub fn not_found(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::NOT_FOUND, "not_found", message)
    }

    pub fn conflict(code: &'static str, message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::CONFLICT, code, message)
    }

    /// A server error as a projection failure (500 `projection_failed`), unless it is a 404.
    pub fn projection(error: ServerError) -> ApiError {
        match error {
            ServerError::NotFound { .. } => ApiError::from(error),
            other => ApiError::new(
                StatusCode::INTERNAL_SERVER_ERROR,
                "projection_failed",
                other.to_string(),
            ),
        }
    }
}

impl From<ServerError> for ApiError {
    fn from(error: ServerError) -> ApiError {
        let (status, code) = match &error {
            ServerError::NotFound { .. } => (StatusCode::NOT_FOUND, "not_found"),
            ServerError::Invalid(_) => (StatusCode::BAD_REQUEST, "bad_request"),
            ServerError::CorruptRow { .. } => (StatusCode::INTERNAL_SERVER_ERROR, "corrupt_row"),
            ServerError::Database(_)
            | ServerError::Sqlite(_)
            | ServerError::Migrate(_)
            | ServerError::SqliteMigrate(_)
            | ServerError::SqliteRefused(_) => {
                (StatusCode::INTERNAL_SERVER_ERROR, "database_error")
            }
            _ => (StatusCode::INTERNAL_SERVER_ERROR, "internal_error"),
        };
        if status.is_server_error() {
            tracing::warn!(%error, code, "request failed");
        }
        ApiError::new(status, code, error.to_string())
    }
}

impl IntoResponse for ApiError {
    /// `{"error": {"code", "message"}}`. A server error's details (row ids, database and parse
    /// errors) go to the log under a fresh error id; its body carries only the code and that id.
    fn into_response(self) -> Response {
        let body = if self.status.is_server_error() {
            let id = uuid::Uuid::new_v4().simple().to_string();
            tracing::error!(error_id = %id, code = self.code, message = %self.message, "server error");
            json!({ "error": {
                "code": self.code,
                "message": format!("internal error {id} (the server log has the details)"),
                "id": id,
            } })
        } else {
            json!({ "error": { "code": self.code, "message": self.message } })
        };
        (self.status, Json(body)).into_response()
    }
}

pub type ApiResult<T = Response> = Result<T, ApiError>;

/// A 200 JSON response.
pub fn ok(body: Value) -> Response {
    (StatusCode::OK, Json(body)).into_response()
}

/// A 200 `{"ok": true, ...fields}` (the simulator's answers).
pub fn done(mut fields: Map<String, Value>) -> Response {
    fields.insert("ok".into(), Value::Bool(true));
    ok(Value::Object(fields))
}

/// A 200 `{"ok": true, key: value}`.
pub fn one(key: &str, value: impl Into<Value>) -> Response {
    let mut map = Map::new();
    map.insert(key.to_owned(), value.into());
    done(map)
}
