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


def test_p2p_group_receives_listed_before_their_sends(comm):
    out_a, out_b = np.arange(5, dtype=np.float32), np.full(3, 7, np.int32)
    in_a, in_b = np.zeros(5, np.float32), np.zeros(3, np.int32)
    ops = [dtrain.P2POp("recv", in_a, 0, tag=1), dtrain.P2POp("recv", in_b, 0, tag=2),
           dtrain.P2POp("send", out_b, 0, tag=2), dtrain.P2POp("send", out_a, 0, tag=1)]
    assert comm.p2p_group(ops) is None
    np.testing.assert_array_equal(in_a, out_a)
    np.testing.assert_array_equal(in_b, out_b)


def test_p2p_group_async_is_one_request(comm):
    got = np.zeros(4, np.int64)
    request = comm.p2p_group([dtrain.P2POp("send", np.arange(4, dtype=np.int64), 0, tag=3),
                              dtrain.P2POp("recv", got, 0, tag=3)], async_op=True)
    request.wait()
    np.testing.assert_array_equal(got, [0, 1, 2, 3])


def test_p2p_group_with_a_bad_op_starts_nothing(comm):
    sent = np.ones(2)
    with pytest.raises(dtrain.InvalidArgumentError, match=r"ops\[1\].peer"):
        comm.p2p_group([dtrain.P2POp("send", sent, 0, tag=5), dtrain.P2POp("recv", np.zeros(2), 3, tag=5)])
    with pytest.raises(dtrain.InvalidArgumentError, match="neither"):
        comm.p2p_group([dtrain.P2POp("post", sent, 0)])
    got = np.zeros(2)
    request = comm.recv(got, 0, tag=5, async_op=True)
    assert not request.test(), "a refused group sent nothing"
    comm.send(np.full(2, 4.0), 0, tag=5)
    request.wait()
    np.testing.assert_array_equal(got, [4.0, 4.0])
