//! Slices described as DLPack tensors.

use std::os::raw::c_void;
use std::ptr;

use dtrain_sys as sys;

use crate::element::Element;
use crate::error::{check, Result};

/// A `DLTensor` describing a slice: one dimension (or rows x columns, see
/// [`RawTensor::as_matrix`]), on the CPU, compact.
///
/// It does not borrow the slice; whoever builds it keeps the slice borrowed for
/// as long as libdtrain may use the descriptor. The shape lives in its own heap
/// allocation, owned here and freed on drop, so the descriptor stays valid
/// wherever this value moves.
pub(crate) struct RawTensor {
    tensor: sys::DLTensor,
}

impl RawTensor {
    /// Describes a slice libdtrain will only read.
    pub(crate) fn of<T: Element>(slice: &[T]) -> RawTensor {
        RawTensor::new::<T>(slice.as_ptr() as *mut c_void, slice.len())
    }

    /// Describes a slice libdtrain may write.
    pub(crate) fn of_mut<T: Element>(slice: &mut [T]) -> RawTensor {
        RawTensor::new::<T>(slice.as_mut_ptr() as *mut c_void, slice.len())
    }

    /// Describes `len` elements at `data`, which the caller keeps valid.
    pub(crate) fn from_raw_parts<T: Element>(data: *mut T, len: usize) -> RawTensor {
        RawTensor::new::<T>(data as *mut c_void, len)
    }

    /// Describes `len` elements of CUDA memory at `data` on `device`.
    pub(crate) fn cuda<T: Element>(data: *mut T, len: usize, device: i32) -> RawTensor {
        let mut raw = RawTensor::new::<T>(data as *mut c_void, len);
        raw.tensor.device = sys::DLDevice {
            device_type: sys::kDLCUDA,
            device_id: device,
        };
        raw
    }

    fn new<T: Element>(data: *mut c_void, len: usize) -> RawTensor {
        // A slice never holds more than isize::MAX bytes, so its length fits
        // (and DeviceTensor checks the same of device memory).
        let shape = Box::into_raw(Box::new([len as i64])) as *mut i64;
        RawTensor {
            tensor: sys::DLTensor {
                data,
                device: sys::DLDevice {
                    device_type: sys::kDLCPU,
                    device_id: 0,
                },
                ndim: 1,
                dtype: T::DATA_TYPE.to_dlpack(),
                shape,
                strides: ptr::null_mut(),
                byte_offset: 0,
            },
        }
    }

    /// The same elements as `rows` x `cols` (two dimensions); the caller has
    /// checked that rows * cols is the element count.
    pub(crate) fn as_matrix(mut self, rows: usize, cols: usize) -> RawTensor {
        // SAFETY: the one-element shape came from `new` and is replaced here.
        drop(unsafe { Box::from_raw(self.tensor.shape as *mut [i64; 1]) });
        self.tensor.shape = Box::into_raw(Box::new([rows as i64, cols as i64])) as *mut i64;
        self.tensor.ndim = 2;
        self
    }

    pub(crate) fn as_ptr(&self) -> *const sys::DLTensor {
        &self.tensor
    }

    pub(crate) fn as_mut_ptr(&mut self) -> *mut sys::DLTensor {
        &mut self.tensor
    }

    /// A copy of the descriptor, for calls that take arrays of tensors; its
    /// shape pointer stays valid only while this value lives.
    pub(crate) fn descriptor(&self) -> sys::DLTensor {
        self.tensor
    }
}

impl Drop for RawTensor {
    fn drop(&mut self) {
        // SAFETY: `shape` came from Box::into_raw of an array of `ndim`
        // extents (in `new` or `as_matrix`) and is freed only here.
        unsafe {
            match self.tensor.ndim {
                2 => drop(Box::from_raw(self.tensor.shape as *mut [i64; 2])),
                _ => drop(Box::from_raw(self.tensor.shape as *mut [i64; 1])),
            }
        }
    }
}

/// Asks libdtrain whether it accepts `slice` as a tensor (`dt_tensor_check`)
/// and returns its element count.
pub fn tensor_check<T: Element>(slice: &[T]) -> Result<i64> {
    let tensor = RawTensor::of(slice);
    let mut count = 0i64;
    // SAFETY: the descriptor and its shape are valid for the call; only read.
    check(unsafe { sys::dt_tensor_check(tensor.as_ptr(), &mut count) })?;
    Ok(count)
}
