//! Decimal text without `core::fmt`: the wasm builds write their numbers (snapshots, error
//! paths and messages) with these, so no formatting machinery is linked into them.

/// Appends `n` in decimal.
pub fn push_uint(out: &mut String, mut n: u64) {
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    while let Some(next) = at.checked_sub(1) {
        at = next;
        // `n % 10` < 10: the cast cannot truncate, and b'0' + 9 fits a byte.
        #[allow(clippy::cast_possible_truncation)]
        let digit = (n % 10) as u8;
        if let Some(d) = digits.get_mut(at) {
            *d = b'0'.wrapping_add(digit);
        }
        n /= 10;
        if n == 0 {
            break;
        }
    }
    for &d in digits.get(at..).unwrap_or_default() {
        out.push(char::from(d));
    }
}

/// `n` in decimal.
pub fn decimal(n: u64) -> String {
    let mut out = String::new();
    push_uint(&mut out, n);
    out
}

#[cfg(test)]
mod tests {
    use super::{decimal, push_uint};

    #[test]
    fn decimals_are_what_display_writes() {
        for n in [
            0,
            1,
            9,
            10,
            99,
            100,
            12_345,
            (1 << 53) - 1,
            1 << 53,
            u64::MAX,
        ] {
            let mut out = String::from("x");
            push_uint(&mut out, n);
            assert_eq!(out, format!("x{n}"));
            assert_eq!(decimal(n), n.to_string());
        }
    }
}
