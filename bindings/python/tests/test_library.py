"""Library-wide functions, constants and the exception hierarchy."""

import builtins
import pickle

import numpy as np
import pytest

import dtrain
from dtrain import _capi


def test_version_is_the_loaded_library():
    version = dtrain.version()
    assert isinstance(version, tuple) and len(version) == 3
    assert all(isinstance(part, int) and part >= 0 for part in version)
    # The module was compiled against these headers; the library loaded must agree.
    assert version == (_capi.DT_VERSION_MAJOR, _capi.DT_VERSION_MINOR, _capi.DT_VERSION_PATCH)
    assert dtrain.__version__ == "%d.%d.%d" % version


def test_build_info_names_version_and_backends():
    info = dtrain.build_info()
    assert info.startswith("libdtrain %d.%d.%d" % dtrain.version())
    assert "backends:" in info


def test_status_string():
    assert dtrain.status_string(dtrain.OK) != dtrain.status_string(dtrain.ERR_TIMEOUT)
    assert "timeout" in dtrain.status_string(dtrain.ERR_TIMEOUT).lower()
    assert dtrain.status_string(12345) == "unknown status"


def test_constants_have_the_c_values():
    assert dtrain.UNDEF == -2**31
    assert (dtrain.OK, dtrain.INPROGRESS) == (0, 1)
    assert [int(s) for s in dtrain.Status if s < 0] == list(range(-1, -13, -1))
    assert (dtrain.SUM, dtrain.AVG, dtrain.MAX, dtrain.MIN, dtrain.PROD) == (0, 1, 2, 3, 4)
    assert (dtrain.BACKEND_AUTO, dtrain.BACKEND_UCX, dtrain.BACKEND_NCCL) == (0, 1, 2)


SUBCLASSES = {
    dtrain.ERR_INVALID_ARGUMENT: dtrain.InvalidArgumentError,
    dtrain.ERR_INVALID_USAGE: dtrain.InvalidUsageError,
    dtrain.ERR_UNSUPPORTED: dtrain.UnsupportedError,
    dtrain.ERR_OUT_OF_MEMORY: dtrain.OutOfMemoryError,
    dtrain.ERR_TIMEOUT: dtrain.TimeoutError,
    dtrain.ERR_REMOTE: dtrain.RemoteError,
    dtrain.ERR_TRANSPORT: dtrain.TransportError,
    dtrain.ERR_ABORTED: dtrain.AbortedError,
    dtrain.ERR_AUTH: dtrain.AuthError,
    dtrain.ERR_MISMATCH: dtrain.MismatchError,
    dtrain.ERR_INTERNAL: dtrain.InternalError,
    dtrain.ERR_IO: dtrain.IoError,
}


@pytest.mark.parametrize("status", sorted(SUBCLASSES))
def test_one_subclass_per_status(status):
    error = dtrain._errors._from_status(status, "what failed")
    assert type(error) is SUBCLASSES[status]
    assert isinstance(error, dtrain.Error)
    assert error.status == status and error.message == "what failed"
    assert str(error) == "what failed"
    copy = pickle.loads(pickle.dumps(error))
    assert type(copy) is type(error) and (copy.status, copy.message) == (status, "what failed")


def test_timeout_error_is_also_the_builtin():
    assert issubclass(dtrain.TimeoutError, builtins.TimeoutError)
    error = dtrain.TimeoutError(dtrain.ERR_TIMEOUT, "late")
    assert error.status == dtrain.ERR_TIMEOUT and str(error) == "late"


def test_tensor_check_counts_elements():
    assert dtrain.tensor_check(np.zeros((3, 4), np.float32)) == 12
    assert dtrain.tensor_check(np.zeros((), np.float64)) == 1
    assert dtrain.tensor_check(np.zeros((5, 0), np.int8)) == 0
    assert dtrain.tensor_check(bytearray(7)) == 7


@pytest.mark.parametrize("obj, words", [
    (np.zeros((4, 4), np.float32)[:, ::2], "strides"),
    (np.zeros(4, np.int16), "int16"),
    (np.zeros(4, np.complex64), "not supported"),
    (np.zeros(4, ">f4"), "format"),
    (object(), "__dlpack__"),
])
def test_tensor_check_says_what_is_wrong(obj, words):
    with pytest.raises(dtrain.InvalidArgumentError, match=words) as info:
        dtrain.tensor_check(obj)
    assert info.value.status == dtrain.ERR_INVALID_ARGUMENT


def test_error_last_is_the_message_of_the_failure():
    with pytest.raises(dtrain.InvalidArgumentError) as info:
        dtrain.tensor_check(np.zeros(2, np.int16))
    assert dtrain.error_last() == info.value.message
