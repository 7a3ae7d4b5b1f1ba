"""Objects that offer a tensor only through __dlpack__, for the binding's tests."""

import ctypes

import numpy as np

# The binding's own DLPack structures, enough to produce a capsule by hand.
from dtrain._device_array import _Deleter, _DLDataType, _DLDevice, _DLManagedTensor


class DLPackOnly:
    """Wraps a numpy array and exposes nothing but its __dlpack__."""

    def __init__(self, array):
        self._array = array

    def __dlpack__(self, stream=None):
        return self._array.__dlpack__()

    def __dlpack_device__(self):
        return self._array.__dlpack_device__()


_capsule_new = ctypes.pythonapi.PyCapsule_New
_capsule_new.restype = ctypes.py_object
_capsule_new.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
_capsule_name = ctypes.pythonapi.PyCapsule_GetName
_capsule_name.restype = ctypes.c_char_p
_capsule_name.argtypes = [ctypes.py_object]

KDL_BFLOAT = 4


KDL_CPU = 1
KDL_CUDA = 2


class ManualTensor:
    """A 1-d tensor over ``storage`` (a numpy array) with any DLPack dtype.

    Produces its capsule by hand, so a test can see what the consumer does
    with it: ``capsules`` are the capsules handed out, ``deleted`` counts the
    deleter's calls, ``calls`` the protocol methods called in order, with the
    keyword arguments ``__dlpack__`` was given. The capsule has no destructor;
    the consumer must call the deleter. ``device`` is what the tensor claims
    to be on: (KDL_CUDA, 0) makes a fake CUDA tensor (its data is host memory,
    which libdtrain must never read without a device).
    """

    def __init__(self, storage, code, bits, count, device=(KDL_CPU, 0)):
        self.storage = storage
        self.device = device
        self.capsules = []
        self.calls = []
        self.deleted = 0
        self._shape = (ctypes.c_int64 * 1)(count)
        self._deleter = _Deleter(self._on_delete)
        self._managed = _DLManagedTensor()
        t = self._managed.dl_tensor
        t.data = storage.ctypes.data
        t.device = _DLDevice(*device)
        t.ndim = 1
        t.dtype = _DLDataType(code, bits, 1)
        t.shape = self._shape
        t.strides = None
        t.byte_offset = 0
        self._managed.deleter = self._deleter

    def _on_delete(self, _managed):
        self.deleted += 1

    def __dlpack__(self, **kwargs):
        self.calls.append(("__dlpack__", kwargs))
        # As the protocol says, and as numpy does: host memory has no stream.
        if self.device[0] == KDL_CPU and kwargs.get("stream") is not None:
            raise BufferError("a stream was passed for a CPU tensor")
        capsule = _capsule_new(ctypes.addressof(self._managed), b"dltensor", None)
        self.capsules.append(capsule)
        return capsule

    def __dlpack_device__(self):
        self.calls.append(("__dlpack_device__", {}))
        return self.device

    @property
    def streams(self):
        """The ``stream`` arguments ``__dlpack__`` was given ("none" when it had none)."""
        return [kwargs.get("stream", "none") for name, kwargs in self.calls if name == "__dlpack__"]


def capsule_name(capsule):
    return _capsule_name(capsule).decode()


def bfloat16(values):
    """The bfloat16 bit patterns (as uint16) of float32 values that bfloat16 holds exactly."""
    bits = np.asarray(values, dtype=np.float32).view(np.uint32)
    return (bits >> 16).astype(np.uint16)
