//! CUDA device memory on any machine: the descriptor a DeviceTensor hands to
//! libdtrain, and the library's refusal of it (in collectives and a DDP's
//! gradients) where no CUDA device is usable.
//! The "device" memory here is host memory that claims to be on a device;
//! libdtrain must refuse it before reading it.

mod common;

use std::os::raw::c_void;

use common::assert_error;
use dtrain::{
    broadcast_parameters_device, build_info, sys, CudaStream, Ddp, DdpOptions, DeviceTensor,
    ReduceOp, Status,
};

fn no_device() -> bool {
    let info = build_info();
    let none = info.contains("cuda: compiled, no device") || info.contains("cuda: not compiled");
    if !none {
        eprintln!(
            "skipped: this machine has a CUDA device ({info}); the refusal is not observable"
        );
    }
    none
}

#[test]
fn the_descriptor_is_a_cuda_tensor_of_its_device() {
    let mut memory = vec![0f32; 5];
    // SAFETY: only the descriptor is looked at; nothing reads the memory.
    let tensor = unsafe { DeviceTensor::from_device_ptr(memory.as_mut_ptr(), 5, 3) };
    assert_eq!(
        (tensor.len(), tensor.device(), tensor.is_empty()),
        (5, 3, false)
    );
    assert_eq!(tensor.as_ptr(), memory.as_mut_ptr());
    let t = tensor.dl_tensor();
    assert_eq!(t.data, memory.as_mut_ptr() as *mut c_void);
    assert_eq!(
        (t.device.device_type, t.device.device_id),
        (sys::kDLCUDA, 3)
    );
    assert_eq!(t.ndim, 1);
    assert_eq!(
        (t.dtype.code, t.dtype.bits, t.dtype.lanes),
        (sys::kDLFloat as u8, 32, 1)
    );
    // SAFETY: the shape of a one-dimensional descriptor has one entry.
    assert_eq!(unsafe { *t.shape }, 5);
    assert!(t.strides.is_null());
    assert_eq!(t.byte_offset, 0);

    // SAFETY: an empty tensor may have a null pointer; nothing is read.
    let empty =
        unsafe { DeviceTensor::<dtrain::Bf16>::from_device_ptr(std::ptr::null_mut(), 0, 0) };
    assert!(empty.is_empty());
    assert_eq!(empty.dl_tensor().dtype.code, sys::kDLBfloat as u8);
}

#[test]
#[should_panic(expected = "CUDA device -1 is negative")]
fn a_negative_device_is_refused() {
    // SAFETY: the constructor panics before anything could use the pointer.
    let _ = unsafe { DeviceTensor::<f32>::from_device_ptr(std::ptr::null_mut(), 0, -1) };
}

#[test]
fn streams_are_the_c_api_values() {
    assert!(CudaStream::COMMUNICATOR.as_raw().is_null());
    assert_eq!(CudaStream::LEGACY_DEFAULT.as_raw() as usize, 1);
    assert_eq!(CudaStream::PER_THREAD_DEFAULT.as_raw() as usize, 2);
    // SAFETY: the handle is only compared.
    let stream = unsafe { CudaStream::from_raw(0x7000 as *mut c_void) };
    assert_eq!(stream.as_raw() as usize, 0x7000);
}

#[test]
fn without_a_device_libdtrain_refuses_device_tensors() {
    if !no_device() {
        return;
    }
    let comm = common::world();
    let mut memory = vec![1f32; 4];
    let mut out = vec![0f32; 4];
    // SAFETY: libdtrain refuses these before reading them (asserted below).
    let (mut send, mut recv) = unsafe {
        (
            DeviceTensor::from_device_ptr(memory.as_mut_ptr(), 4, 0),
            DeviceTensor::from_device_ptr(out.as_mut_ptr(), 4, 0),
        )
    };
    let needle = "CUDA tensors need a CUDA device";
    assert_error(send.check(), Status::Unsupported, needle);
    let streams = [CudaStream::COMMUNICATOR, CudaStream::LEGACY_DEFAULT];
    for stream in streams {
        assert_error(
            comm.allreduce_device(&send, &mut recv, ReduceOp::Sum, stream),
            Status::Unsupported,
            "send: CUDA tensors need a CUDA device",
        );
    }
    assert_error(
        comm.allreduce_device_in_place(&mut send, ReduceOp::Max, CudaStream::PER_THREAD_DEFAULT),
        Status::Unsupported,
        needle,
    );
    assert_error(
        comm.iallreduce_device(&send, &mut recv, ReduceOp::Sum, CudaStream::LEGACY_DEFAULT)
            .map(|_| ()),
        Status::Unsupported,
        needle,
    );
    let stream = CudaStream::LEGACY_DEFAULT;
    assert_error(
        comm.reduce_scatter_device(&send, &mut recv, ReduceOp::Sum, stream),
        Status::Unsupported,
        needle,
    );
    assert_error(
        comm.allgather_device(&send, &mut recv, stream),
        Status::Unsupported,
        needle,
    );
    assert_error(
        comm.alltoall_device(&send, &mut recv, stream),
        Status::Unsupported,
        needle,
    );
    assert_error(
        comm.broadcast_device(&mut send, 0, stream),
        Status::Unsupported,
        "buf: ",
    );
    assert_error(
        comm.send_device(&send, 0, 1, stream),
        Status::Unsupported,
        "buf: ",
    );
    assert_error(
        comm.recv_device(&mut recv, 0, 1, stream),
        Status::Unsupported,
        "buf: ",
    );
    assert_error(
        broadcast_parameters_device(&comm, &mut [&mut send, &mut recv], 0),
        Status::Unsupported,
        needle,
    );
    assert_eq!(out, vec![0f32; 4], "a refused operation changes nothing");
    assert_eq!(memory, vec![1f32; 4]);
    comm.barrier()
        .expect("a refusal leaves the communicator usable");
}

#[test]
fn without_a_device_a_ddp_refuses_device_gradients() {
    if !no_device() {
        return;
    }
    let comm = common::world();
    let (mut a, mut b) = (vec![1f32; 3], vec![2f32; 5]);
    for stream in [CudaStream::COMMUNICATOR, CudaStream::PER_THREAD_DEFAULT] {
        // SAFETY: libdtrain refuses these before reading them (asserted below).
        let grads = unsafe {
            vec![
                DeviceTensor::from_device_ptr(a.as_mut_ptr(), a.len(), 0),
                DeviceTensor::from_device_ptr(b.as_mut_ptr(), b.len(), 0),
            ]
        };
        assert_error(
            Ddp::new_device(&comm, grads, stream, &DdpOptions::default()),
            Status::Unsupported,
            "gradients[0]: CUDA tensors need a CUDA device",
        );
    }
    assert_eq!((&a[..], &b[..]), (&[1f32; 3][..], &[2f32; 5][..]));
    // The refusal leaves the communicator usable: a host DDP on it steps.
    let mut ddp = Ddp::new(&comm, vec![&mut a[..], &mut b[..]], &DdpOptions::default()).unwrap();
    ddp.grad_mut(1).fill(4.0);
    ddp.mark_ready(1).unwrap();
    ddp.mark_ready(0).unwrap();
    ddp.wait(-1).unwrap();
    assert_eq!((ddp.grad(0), ddp.grad(1)), (&[1f32; 3][..], &[4f32; 5][..]));
}
