//! The element types a slice may hold when it is passed as a tensor.

use dtrain_sys as sys;

use crate::half::{Bf16, F16};

/// The dtypes libdtrain accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DataType {
    F32,
    F64,
    F16,
    Bf16,
    I32,
    I64,
    I8,
    U8,
}

impl DataType {
    /// The DLPack description of this dtype (one lane).
    pub fn to_dlpack(self) -> sys::DLDataType {
        let (code, bits) = match self {
            DataType::F32 => (sys::kDLFloat, 32),
            DataType::F64 => (sys::kDLFloat, 64),
            DataType::F16 => (sys::kDLFloat, 16),
            DataType::Bf16 => (sys::kDLBfloat, 16),
            DataType::I32 => (sys::kDLInt, 32),
            DataType::I64 => (sys::kDLInt, 64),
            DataType::I8 => (sys::kDLInt, 8),
            DataType::U8 => (sys::kDLUInt, 8),
        };
        sys::DLDataType {
            code: code as u8,
            bits,
            lanes: 1,
        }
    }
}

mod sealed {
    pub trait Sealed {}
}

/// A type whose slices libdtrain can read and write as tensors: plain data of
/// one of the [`DataType`]s, with no invalid bit patterns. Sealed: implemented
/// for `f32`, `f64`, `i32`, `i64`, `i8`, `u8`, [`F16`] and [`Bf16`] only.
pub trait Element: Copy + Send + Sync + 'static + sealed::Sealed {
    /// The dtype a slice of this type is described with.
    const DATA_TYPE: DataType;
}

macro_rules! element {
    ($($t:ty => $d:ident),* $(,)?) => {$(
        impl sealed::Sealed for $t {}
        impl Element for $t {
            const DATA_TYPE: DataType = DataType::$d;
        }
    )*};
}

element! {
    f32 => F32,
    f64 => F64,
    F16 => F16,
    Bf16 => Bf16,
    i32 => I32,
    i64 => I64,
    i8 => I8,
    u8 => U8,
}
