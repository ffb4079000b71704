//! Python's `round(x, ndigits)` on binary floats: the exact value, rounded half to even.

/// Python's `round(x, digits)` for a float: the exact binary value of `x` rounded to `digits`
/// decimal places, ties (only possible when the exact value ends in 5 there) to the even
/// neighbour, then read back as the nearest double, as CPython does with `_Py_dg_dtoa` in mode 3
/// and `_Py_dg_strtod`.
///
/// So `round(2.675, 2)` is 2.67 (the double is just below 2.675), `round(0.125, 2)` is 0.12 (an
/// exact tie) and `round(0.375, 2)` is 0.38. `digits` is at most 15 (more would not change a
/// double's value anyway: larger values are treated as 15). NaN and infinities come back as
/// they are.
pub fn round_to(x: f64, digits: u32) -> f64 {
    let digits = digits.min(15);
    if !x.is_finite() || x == 0.0 {
        return x;
    }
    let bits = x.to_bits();
    let negative = bits >> 63 == 1;
    let biased = ((bits >> 52) & 0x7ff) as i32;
    let fraction = bits & ((1u64 << 52) - 1);
    // x = ±mantissa · 2^exponent exactly.
    let (mantissa, exponent) = if biased == 0 {
        (fraction, -1074)
    } else {
        (fraction | (1u64 << 52), biased - 1075)
    };
    if exponent >= 0 {
        // An integer already (|x| >= 2^52).
        return x;
    }
    let shift = exponent.unsigned_abs();
    let scale = 10u128.pow(digits);
    // x · 10^digits = numerator / 2^shift, with numerator < 2^53 · 10^15 < 2^103.
    let numerator = u128::from(mantissa) * scale;
    let quotient = if shift >= 120 {
        // numerator / 2^shift < 2^-17: rounds to 0 and cannot be a tie.
        0
    } else {
        let quotient = numerator >> shift;
        let remainder = numerator & ((1u128 << shift) - 1);
        let half = 1u128 << (shift - 1);
        if remainder > half || (remainder == half && quotient % 2 == 1) {
            quotient + 1
        } else {
            quotient
        }
    };
    let sign = if negative { "-" } else { "" };
    let decimal = if digits == 0 {
        format!("{sign}{quotient}")
    } else {
        let width = digits as usize;
        format!(
            "{sign}{}.{:0width$}",
            quotient / scale,
            quotient % scale,
            width = width
        )
    };
    // A decimal string of digits always parses; the fallback is never taken.
    decimal.parse().unwrap_or(x)
}

/// Python's `round(x)` for a float: the nearest integer, ties to even (62.5 → 62, 17.5 → 18),
/// as a float.
pub fn round_half_even(x: f64) -> f64 {
    x.round_ties_even()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_to_matches_python() {
        // Values from CPython 3.11 `round(x, n)`.
        let cases: &[(f64, u32, f64)] = &[
            (0.125, 2, 0.12),
            (0.375, 2, 0.38),
            (2.675, 2, 2.67),
            (1.005, 2, 1.0),
            (88.285, 2, 88.28),
            (0.00005, 4, 0.0001),
            (0.00015, 4, 0.0001),
            (0.5, 0, 0.0),
            (1.5, 0, 2.0),
            (2.5, 0, 2.0),
            (-2.5, 0, -2.0),
            (-0.125, 2, -0.12),
            (1e300, 2, 1e300),
            (5e-324, 2, 0.0),
            (59.375, 2, 59.38),
            (100.0 * 63.0 / 192.0, 2, 32.81),
            (7.0 / 3.0, 4, 2.3333),
            (0.0, 2, 0.0),
        ];
        for &(x, digits, want) in cases {
            let got = round_to(x, digits);
            assert_eq!(
                got.to_bits(),
                want.to_bits(),
                "round({x:?}, {digits}) = {got:?}"
            );
        }
        assert!(round_to(f64::NAN, 2).is_nan());
        assert_eq!(round_to(f64::INFINITY, 2), f64::INFINITY);
        assert!(round_to(-0.001, 2).is_sign_negative());
    }

    #[test]
    fn round_half_even_at_exact_halves() {
        assert_eq!(round_half_even(62.5), 62.0);
        assert_eq!(round_half_even(17.5), 18.0);
        assert_eq!(round_half_even(42.5), 42.0);
        assert_eq!(round_half_even(42.50000000000001), 43.0);
        assert_eq!(round_half_even(0.49999999999999994), 0.0);
        assert_eq!(round_half_even(-0.5), -0.0);
    }
}
