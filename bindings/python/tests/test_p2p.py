"""Send and receive to oneself, matched by tag."""

import numpy as np
import pytest

import dtrain
from conftest import DTYPES


@pytest.mark.parametrize("dtype", DTYPES)
def test_send_then_recv(comm, dtype):
    sent = (np.arange(6) + 3).astype(dtype)
    comm.send(sent, 0)
    got = np.zeros(6, dtype)
    comm.recv(got, 0)
    np.testing.assert_array_equal(got, sent)


def test_tags_match_messages(comm):
    comm.send(np.full(3, 1.0), 0, tag=1)
    comm.send(np.full(3, 2.0), 0, tag=2)
    comm.send(np.full(3, 3.0), 0, tag=1)
    two, one_a, one_b = np.zeros(3), np.zeros(3), np.zeros(3)
    comm.recv(two, 0, tag=2)
    comm.recv(one_a, 0, tag=1)
    comm.recv(one_b, 0, tag=1)
    assert (two == 2).all() and (one_a == 1).all() and (one_b == 3).all()


def test_async_recv_before_send(comm):
    got = np.zeros(4, np.int64)
    request = comm.recv(got, 0, tag=9, async_op=True)
    send_request = comm.send(np.arange(4, dtype=np.int64), 0, tag=9, async_op=True)
    send_request.wait()
    request.wait()
    np.testing.assert_array_equal(got, [0, 1, 2, 3])


def test_recv_of_another_size_is_a_mismatch(comm):
    comm.send(np.zeros(3), 0, tag=4)
    with pytest.raises(dtrain.MismatchError, match="matched a send"):
        comm.recv(np.zeros(4), 0, tag=4)
