//! The crate's JSON writer: explanations (`store::explain`), the store's snapshot
//! (`store::snapshot`) and traces (`trace`) are written with it. Hand-written, so serde's
//! serializer stays out of the wasm. Natively, strings are escaped as `JSON.stringify` escapes
//! them, so a trace line is the JS recorder's byte for byte (see [`Json::text`]); numbers beyond
//! 2^53 − 1 (where a JS Number would round them) are written as decimal strings. The modules that write domain values add
//! their own methods (`store::reason`: reasons and actions; `store::explain`, `store::snapshot`).

/// A JSON text being written: values are appended in order, a comma before each unless it opens
/// its container.
pub(crate) struct Json(pub(crate) String);

impl Json {
    /// An empty text with room for `capacity` bytes.
    #[inline]
    pub(crate) fn with_capacity(capacity: usize) -> Json {
        Json(String::with_capacity(capacity))
    }

    /// A comma unless the value opens its container. Not inlined, as the pushes below: a call
    /// at each of the writers' many sites instead of a capacity check and a grow.
    #[inline(never)]
    pub(crate) fn sep(&mut self) {
        if !matches!(self.0.as_bytes().last(), Some(b'{' | b'[') | None) {
            self.0.push(',');
        }
    }

    /// One ASCII character (a bracket, a comma, a colon).
    #[inline(never)]
    pub(crate) fn ch(&mut self, c: char) {
        self.0.push(c);
    }

    /// Text that is already JSON (`null`, `true`, a number's digits).
    #[inline(never)]
    pub(crate) fn push_raw(&mut self, raw: &str) {
        self.0.push_str(raw);
    }

    /// `"key":` (after a comma when needed).
    #[inline(never)]
    pub(crate) fn key(&mut self, key: &str) -> &mut Self {
        self.sep();
        self.text(key);
        self.0.push(':');
        self
    }

    /// `s` as a JSON string. Natively as `JSON.stringify(s)` writes it (a trace is compared byte
    /// for byte with the JS recorder's); the wasm builds, whose texts are only parsed, write
    /// every character that needs an escape as `\u00XX` (the same JSON, less code).
    #[inline(never)]
    pub(crate) fn text(&mut self, s: &str) {
        self.0.push('"');
        // Escapes are ASCII, so the text between them is pushed as whole UTF-8 slices.
        let mut from = 0;
        for (at, byte) in s.bytes().enumerate() {
            if byte >= 0x20 && byte != b'"' && byte != b'\\' {
                continue;
            }
            self.0.push_str(s.get(from..at).unwrap_or_default());
            self.escape(byte);
            from = at.saturating_add(1);
        }
        self.0.push_str(s.get(from..).unwrap_or_default());
        self.0.push('"');
    }

    /// The escape of `byte` (a control character, `"` or `\`) as `JSON.stringify` writes it.
    #[cfg(not(target_arch = "wasm32"))]
    fn escape(&mut self, byte: u8) {
        let short = match byte {
            b'"' => "\\\"",
            b'\\' => "\\\\",
            0x08 => "\\b",
            b'\t' => "\\t",
            b'\n' => "\\n",
            0x0c => "\\f",
            b'\r' => "\\r",
            _ => "",
        };
        if short.is_empty() {
            self.hex_escape(byte);
        } else {
            self.0.push_str(short);
        }
    }

    /// The escape of `byte` as `\u00XX` (the wasm builds: see [`Json::text`]).
    #[cfg(target_arch = "wasm32")]
    fn escape(&mut self, byte: u8) {
        self.hex_escape(byte);
    }

    fn hex_escape(&mut self, byte: u8) {
        self.0.push_str("\\u00");
        for d in [byte >> 4, byte & 0xf] {
            let hex = b"0123456789abcdef".get(usize::from(d)).copied();
            self.0.push(char::from(hex.unwrap_or(b'0')));
        }
    }

    /// `"key":"value"`, or `"key":null`.
    #[inline(never)]
    pub(crate) fn str(&mut self, key: &str, value: Option<&str>) {
        self.key(key);
        match value {
            Some(v) => self.text(v),
            None => self.push_raw("null"),
        }
    }

    /// `"key":` and `value` as it is (already JSON).
    pub(crate) fn raw(&mut self, key: &str, value: &str) {
        self.key(key).push_raw(value);
    }

    pub(crate) fn bool(&mut self, key: &str, value: bool) {
        self.raw(key, if value { "true" } else { "false" });
    }

    /// A count or revision number; beyond 2^53 − 1 a decimal string; `None` is `null`.
    #[inline(never)]
    pub(crate) fn num(&mut self, key: &str, value: Option<u64>) {
        self.key(key);
        match value {
            Some(n) if n > (1 << 53) - 1 => {
                self.0.push('"');
                crate::text::push_uint(&mut self.0, n);
                self.0.push('"');
            }
            Some(n) => crate::text::push_uint(&mut self.0, n),
            None => self.push_raw("null"),
        }
    }

    /// `"key":` and an opening `{` or `[`.
    pub(crate) fn open(&mut self, key: &str, bracket: char) {
        self.key(key).ch(bracket);
    }

    /// An array element that is an object (its `{`).
    pub(crate) fn element(&mut self) {
        self.sep();
        self.ch('{');
    }

    pub(crate) fn close(&mut self, bracket: char) {
        self.ch(bracket);
    }
}

#[cfg(test)]
mod tests {
    use super::Json;

    #[test]
    fn strings_are_escaped_as_json_stringify_escapes_them() {
        let mut j = Json::with_capacity(0);
        j.0.push('{');
        j.str("a\"b", Some("x\\y\n\t\r\u{8}\u{c}\u{1}\u{1f} é"));
        j.str("none", None);
        j.num("small", Some(42));
        j.num("large", Some(1 << 60));
        j.bool("yes", true);
        j.open("list", '[');
        j.element();
        j.close('}');
        j.element();
        j.close('}');
        j.close(']');
        j.close('}');
        assert_eq!(
            j.0,
            r#"{"a\"b":"x\\y\n\t\r\b\f\u0001\u001f é","none":null,"small":42,"large":"1152921504606846976","yes":true,"list":[{},{}]}"#
        );
        let parsed: serde_json::Value = serde_json::from_str(&j.0).unwrap_or_default();
        assert_eq!(parsed["a\"b"], "x\\y\n\t\r\u{8}\u{c}\u{1}\u{1f} é");
    }
}
