"""CUDA memory a libdtrain object owns, lent to torch, cupy or any other DLPack consumer.

Python cannot read device memory itself, so a :class:`DeviceArray` only
describes it; ``torch.from_dlpack(a)`` or ``cupy.from_dlpack(a)`` gives a
tensor over the same memory, with no copy. The capsule ``__dlpack__`` returns
keeps the array's owner (a :class:`dtrain.Zero`, say) referenced until the
consumer's tensor is gone, so collecting the owner cannot free the memory
under it; closing the owner still does, as its documentation says.
"""

import ctypes
import math

_KDL_CUDA = 2
# A capsule keeps the pointer to its name, not a copy: the name must live as
# long as the module.
_NAME = b"dltensor"


class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", _DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


class _DLManagedTensor(ctypes.Structure):
    pass


_Deleter = ctypes.CFUNCTYPE(None, ctypes.POINTER(_DLManagedTensor))
_DLManagedTensor._fields_ = [("dl_tensor", _DLTensor), ("manager_ctx", ctypes.c_void_p), ("deleter", _Deleter)]

# What each capsule handed out holds alive (its DLManagedTensor, its shape and
# the array's owner), by the DLManagedTensor's address, until the consumer
# calls the deleter or the capsule goes unused.
_lent = {}


@_Deleter
def _delete(managed):
    _lent.pop(ctypes.addressof(managed.contents), None)




def _python_api(name, result, *arguments):
    # Prototyped privately: ctypes.pythonapi.<name> is one object shared with
    # every other user, who may set other argtypes on it.
    return ctypes.PYFUNCTYPE(result, *arguments)((name, ctypes.pythonapi))


_capsule_new = _python_api("PyCapsule_New", ctypes.py_object, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p)
# The destructor sees the capsule as it dies: a plain pointer, never a
# py_object, which would take a reference to it.
_capsule_is_valid = _python_api("PyCapsule_IsValid", ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p)
_capsule_pointer = _python_api("PyCapsule_GetPointer", ctypes.c_void_p, ctypes.c_void_p, ctypes.c_char_p)
_CapsuleDestructor = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


@_CapsuleDestructor
def _unused_capsule(capsule):
    # A consumer renames the capsule "used_dltensor" and owns the tensor; one
    # still named "dltensor" was never consumed, so its hold ends here.
    if _capsule_is_valid(capsule, _NAME):
        _lent.pop(_capsule_pointer(capsule, _NAME), None)


class DeviceArray:
    """``shape`` elements of a DLPack ``(code, bits)`` dtype at ``data`` on CUDA device ``device``, owned by ``owner``."""

    def __init__(self, owner, data, device, dtype, shape):
        self._owner = owner
        self._data = data
        self._device = device
        self._dtype = dtype
        self.shape = tuple(shape)

    @property
    def device(self):
        """The CUDA device the memory is on."""
        return self._device

    @property
    def size(self):
        return math.prod(self.shape)

    def __dlpack_device__(self):
        return (_KDL_CUDA, self._device)

    def __dlpack__(self, stream=None, max_version=None, dl_device=None, copy=None):
        """A "dltensor" capsule over the memory, for any stream.

        The owner's calls return with this memory written (see its
        documentation), so there is nothing for ``stream`` to wait for. No copy
        is ever made: ``copy=True`` and a ``dl_device`` other than this one are
        refused with BufferError, as the protocol asks.
        """
        if copy:
            raise BufferError("a DeviceArray cannot be copied by __dlpack__ (copy=True)")
        if dl_device is not None and tuple(dl_device) != self.__dlpack_device__():
            raise BufferError(f"a DeviceArray lives on CUDA device {self._device}, not {tuple(dl_device)}")
        shape = (ctypes.c_int64 * len(self.shape))(*self.shape)
        managed = _DLManagedTensor()
        managed.dl_tensor.data = self._data
        managed.dl_tensor.device = _DLDevice(_KDL_CUDA, self._device)
        managed.dl_tensor.ndim = len(self.shape)
        managed.dl_tensor.dtype = _DLDataType(self._dtype[0], self._dtype[1], 1)
        managed.dl_tensor.shape = shape
        managed.deleter = _delete
        address = ctypes.addressof(managed)
        _lent[address] = (managed, shape, self._owner)
        return _capsule_new(address, _NAME, ctypes.cast(_unused_capsule, ctypes.c_void_p))

    def __repr__(self):
        return f"<dtrain.DeviceArray {self.shape} on CUDA device {self._device}>"
