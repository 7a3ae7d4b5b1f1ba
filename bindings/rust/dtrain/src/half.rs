//! 16-bit floating-point element types, stored as their bits.

/// An IEEE 754 half-precision number (binary16), held as its bits.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
#[repr(transparent)]
pub struct F16(pub u16);

/// A bfloat16 number (the upper half of an `f32`), held as its bits.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
#[repr(transparent)]
pub struct Bf16(pub u16);

impl F16 {
    /// The nearest half-precision value (ties to even; overflow gives infinity).
    pub fn from_f32(value: f32) -> F16 {
        let bits = value.to_bits();
        let sign = ((bits >> 16) & 0x8000) as u16;
        let exponent = ((bits >> 23) & 0xff) as i32;
        let mantissa = bits & 0x007f_ffff;
        if exponent == 0xff {
            let nan = if mantissa != 0 {
                0x0200 | (mantissa >> 13) as u16
            } else {
                0
            };
            return F16(sign | 0x7c00 | nan);
        }
        let half_exponent = exponent - 127 + 15;
        if half_exponent >= 0x1f {
            return F16(sign | 0x7c00);
        }
        if half_exponent <= 0 {
            // Subnormal (or zero): count units of 2^-24 from the full significand.
            if half_exponent < -10 {
                return F16(sign);
            }
            let significand = mantissa | 0x0080_0000;
            let shift = (14 - half_exponent) as u32;
            let rounded = significand + (1 << (shift - 1)) - 1 + ((significand >> shift) & 1);
            return F16(sign | (rounded >> shift) as u16);
        }
        let rounded = mantissa + 0x0fff + ((mantissa >> 13) & 1);
        // A carry out of the mantissa correctly bumps the exponent.
        let magnitude = ((half_exponent as u32) << 10) + (rounded >> 13);
        F16(sign | magnitude.min(0x7c00) as u16)
    }

    /// The exact `f32` value.
    pub fn to_f32(self) -> f32 {
        let sign = ((self.0 & 0x8000) as u32) << 16;
        let exponent = ((self.0 >> 10) & 0x1f) as u32;
        let mantissa = (self.0 & 0x03ff) as u32;
        let magnitude = match exponent {
            0 => {
                // Zero or subnormal: units of 2^-24, exact in f32.
                let value = mantissa as f32 * f32::from_bits(0x3380_0000);
                return if sign != 0 { -value } else { value };
            }
            0x1f => 0x7f80_0000 | (mantissa << 13),
            _ => ((exponent + 112) << 23) | (mantissa << 13),
        };
        f32::from_bits(sign | magnitude)
    }
}

impl Bf16 {
    /// The nearest bfloat16 value (ties to even).
    pub fn from_f32(value: f32) -> Bf16 {
        let bits = value.to_bits();
        if value.is_nan() {
            return Bf16((bits >> 16) as u16 | 0x0040);
        }
        let rounded = bits + 0x7fff + ((bits >> 16) & 1);
        Bf16((rounded >> 16) as u16)
    }

    /// The exact `f32` value.
    pub fn to_f32(self) -> f32 {
        f32::from_bits((self.0 as u32) << 16)
    }
}

impl From<f32> for F16 {
    fn from(value: f32) -> F16 {
        F16::from_f32(value)
    }
}

impl From<F16> for f32 {
    fn from(value: F16) -> f32 {
        value.to_f32()
    }
}

impl From<f32> for Bf16 {
    fn from(value: f32) -> Bf16 {
        Bf16::from_f32(value)
    }
}

impl From<Bf16> for f32 {
    fn from(value: Bf16) -> f32 {
        value.to_f32()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn f16_round_trips_and_rounds() {
        for (value, bits) in [
            (0.0f32, 0x0000u16),
            (-0.0, 0x8000),
            (1.0, 0x3c00),
            (-2.5, 0xc100),
            (65504.0, 0x7bff),
            (65520.0, 0x7c00),
            (f32::INFINITY, 0x7c00),
            (5.960_464_5e-8, 0x0001),
            (6.097_555e-5, 0x03ff),
            (6.103_515_6e-5, 0x0400),
        ] {
            assert_eq!(F16::from_f32(value).0, bits, "{value}");
            if bits != 0x7c00 || value.is_infinite() {
                assert_eq!(F16(bits).to_f32(), value);
            }
        }
        // 1 + 2^-11 is halfway between 1 and the next half: ties to even.
        assert_eq!(F16::from_f32(1.0 + f32::EPSILON * 1024.0).0, 0x3c00);
        assert!(F16::from_f32(f32::NAN).to_f32().is_nan());
    }

    #[test]
    fn bf16_round_trips_and_rounds() {
        assert_eq!(Bf16::from_f32(1.0).0, 0x3f80);
        assert_eq!(Bf16::from_f32(-3.0).to_f32(), -3.0);
        assert_eq!(Bf16::from_f32(1.0 + f32::EPSILON * 64.0).0, 0x3f80);
        assert!(Bf16::from_f32(f32::NAN).to_f32().is_nan());
    }
}
