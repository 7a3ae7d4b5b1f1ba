"""Every binding call checked across real ranks; run under dtrun:

    dtrun -n 2 python3 allranks.py
    dtrun -n 3 python3 allranks.py

Each rank computes what every operation must give from the data that every
rank sends (which is a function of the rank) and compares. A mismatch prints
what differed, on which rank, and exits 1; dtrun then stops the other ranks
and exits non-zero. Not a pytest module (tests/conftest.py keeps pytest out of
this folder); CTest runs it as python_multirank_2 and python_multirank_3.
"""

import sys
import traceback

import numpy as np

import dtrain

SMALL = 13          # odd and tiny: the eager path
LARGE = 40_000      # > 64 KiB for every dtype used: the large-message path
DTYPES = [np.float32, np.float64, np.int64]


class CheckFailed(Exception):
    pass


class Checks:
    def __init__(self, rank):
        self.rank = rank
        self.count = 0

    def equal(self, what, got, want):
        self.count += 1
        got, want = np.asarray(got), np.asarray(want)
        if got.shape != want.shape:
            raise CheckFailed(f"{what}: shape {got.shape}, want {want.shape}")
        if got.dtype != want.dtype:
            raise CheckFailed(f"{what}: dtype {got.dtype}, want {want.dtype}")
        bad = np.flatnonzero(got.ravel() != want.ravel())
        if bad.size:
            i = bad[0]
            raise CheckFailed(f"{what}: {bad.size} of {got.size} elements differ; first at flat "
                              f"index {i}: got {got.ravel()[i]!r}, want {want.ravel()[i]!r}")

    def close(self, what, got, want):
        """Floating-point results whose order of summation is the library's."""
        self.count += 1
        got, want = np.asarray(got), np.asarray(want)
        if got.shape != want.shape or got.dtype != want.dtype:
            raise CheckFailed(f"{what}: {got.dtype}{got.shape}, want {want.dtype}{want.shape}")
        rtol = 1e-5 if want.dtype == np.float32 else 1e-12
        ok = np.isclose(got, want, rtol=rtol, atol=0)
        if not ok.all():
            i = np.flatnonzero(~ok.ravel())[0]
            raise CheckFailed(f"{what}: {np.count_nonzero(~ok)} of {got.size} elements off by "
                              f"more than rtol {rtol}; first at flat index {i}: "
                              f"got {got.ravel()[i]!r}, want {want.ravel()[i]!r}")

    def true(self, what, condition, detail=""):
        self.count += 1
        if not condition:
            raise CheckFailed(f"{what}{': ' + detail if detail else ''}")


def contribution(rank, dtype, n):
    """What `rank` reduces: small integers (exact in every dtype), some negative,
    with a maximum that does not always belong to the same rank."""
    i = np.arange(n, dtype=np.int64)
    return (((i * 7 + rank * 5) % 23) - 11 + rank).astype(dtype)


def reference(op, size, dtype, n):
    stack = np.stack([contribution(r, dtype, n) for r in range(size)])
    if op == "sum":
        return stack.sum(axis=0, dtype=dtype)
    if op == "max":
        return stack.max(axis=0)
    if op == "avg":
        return (stack.sum(axis=0, dtype=dtype) / dtype(size)).astype(dtype)
    raise ValueError(op)


def wait(request, what, check):
    check.true(f"{what}: async_op=True returns a Request", isinstance(request, dtrain.Request),
               repr(request))
    request.wait()
    check.true(f"{what}: test() after wait()", request.test())
    request.free()


def check_rank_and_size(comm, check, expected_size):
    check.true("size", comm.size == expected_size, f"{comm.size}, want {expected_size}")
    check.true("rank", 0 <= comm.rank < comm.size, f"rank {comm.rank} of {comm.size}")
    ranks = np.zeros(comm.size, np.int64)
    comm.allgather(np.array([comm.rank], np.int64), ranks)
    check.equal("every rank distinct (allgather of ranks)", ranks, np.arange(comm.size))


def check_allreduce(comm, check):
    me, size = comm.rank, comm.size
    for dtype in DTYPES:
        name = np.dtype(dtype).name
        ops = ["sum", "max"] + (["avg"] if np.issubdtype(dtype, np.floating) else [])
        for n in (SMALL, LARGE):
            for op in ops:
                want = reference(op, size, dtype, n)
                compare = check.close if op == "avg" else check.equal
                what = f"allreduce {op} {name}[{n}]"

                send, recv = contribution(me, dtype, n), np.full(n, -99, dtype)
                comm.allreduce(send, recv, op=op)
                compare(what, recv, want)
                check.equal(what + ": send untouched", send, contribution(me, dtype, n))

                buf = contribution(me, dtype, n).reshape(-1, 1)
                comm.allreduce(buf, op=op)
                compare(what + " in place", buf.ravel(), want)

                recv = np.zeros(n, dtype)
                wait(comm.allreduce(contribution(me, dtype, n), recv, op=op, async_op=True),
                     what + " non-blocking", check)
                compare(what + " non-blocking", recv, want)

                buf = contribution(me, dtype, n)
                wait(comm.allreduce(buf, op=op, async_op=True), what + " non-blocking in place",
                     check)
                compare(what + " non-blocking in place", buf, want)

    # Two operations in flight at once, waited for in reverse order.
    a, b = contribution(me, np.float64, SMALL), np.zeros(LARGE, np.int64)
    first = comm.allreduce(a, op="sum", async_op=True)
    second = comm.allreduce(contribution(me, np.int64, LARGE), b, op="max", async_op=True)
    second.wait()
    first.wait()
    check.equal("two allreduces in flight: first", a, reference("sum", size, np.float64, SMALL))
    check.equal("two allreduces in flight: second", b, reference("max", size, np.int64, LARGE))


def check_allgather(comm, check):
    me, size = comm.rank, comm.size
    for dtype in DTYPES:
        for n in (SMALL, LARGE):
            mine = (np.arange(n) + 1000 * me).astype(dtype)
            want = np.stack([(np.arange(n) + 1000 * r).astype(dtype) for r in range(size)])
            recv = np.zeros((size, n), dtype)
            comm.allgather(mine, recv)
            check.equal(f"allgather {np.dtype(dtype).name}[{n}]", recv, want)
            recv[:] = 0
            wait(comm.allgather(mine, recv, async_op=True), "allgather non-blocking", check)
            check.equal(f"allgather non-blocking {np.dtype(dtype).name}[{n}]", recv, want)


def check_reduce_scatter(comm, check):
    me, size = comm.rank, comm.size
    for dtype in DTYPES:
        for n in (SMALL, LARGE):
            for op in ("sum", "max"):
                send = contribution(me, dtype, size * n)
                want = reference(op, size, dtype, size * n)[me * n:(me + 1) * n]
                recv = np.zeros(n, dtype)
                comm.reduce_scatter(send, recv, op=op)
                check.equal(f"reduce_scatter {op} {np.dtype(dtype).name}[{size}x{n}]", recv, want)
            recv = np.zeros(n, dtype)
            wait(comm.reduce_scatter(contribution(me, dtype, size * n), recv, async_op=True),
                 "reduce_scatter non-blocking", check)
            check.equal(f"reduce_scatter non-blocking {np.dtype(dtype).name}", recv,
                        reference("sum", size, dtype, size * n)[me * n:(me + 1) * n])


def check_broadcast(comm, check):
    me, size = comm.rank, comm.size
    root = size - 1
    for dtype in DTYPES:
        for n in (SMALL, LARGE):
            want = (np.arange(n) * 3 - 7).astype(dtype)
            buf = want.copy() if me == root else np.full(n, -1, dtype)
            comm.broadcast(buf, root=root)
            check.equal(f"broadcast from rank {root} {np.dtype(dtype).name}[{n}]", buf, want)
            buf = want.copy() * 2 if me == 0 else np.zeros(n, dtype)
            wait(comm.broadcast(buf, root=0, async_op=True), "broadcast non-blocking", check)
            check.equal(f"broadcast non-blocking from rank 0 {np.dtype(dtype).name}[{n}]", buf,
                        want * 2)


def block(sender, receiver, n, dtype):
    """What `sender` sends to `receiver`: distinct for every pair and element."""
    return (np.arange(n) + 100 * receiver + 10_000 * sender).astype(dtype)


def check_alltoall(comm, check):
    me, size = comm.rank, comm.size
    for dtype in DTYPES:
        for n in (SMALL, LARGE // size):
            send = np.concatenate([block(me, j, n, dtype) for j in range(size)])
            want = np.concatenate([block(r, me, n, dtype) for r in range(size)])
            recv = np.zeros(size * n, dtype)
            comm.alltoall(send, recv)
            check.equal(f"alltoall {np.dtype(dtype).name}[{size}x{n}]", recv, want)
            recv[:] = 0
            wait(comm.alltoall(send, recv, async_op=True), "alltoall non-blocking", check)
            check.equal(f"alltoall non-blocking {np.dtype(dtype).name}", recv, want)


def vcount(sender, receiver):
    """Uneven alltoallv counts, zero for some pairs (0..4 elements) or large for one."""
    if (sender, receiver) == (0, 1):
        return 20_000
    return (sender * 3 + receiver * 2) % 5


def check_alltoallv(comm, check):
    me, size = comm.rank, comm.size
    send_counts = [vcount(me, j) for j in range(size)]
    recv_counts = [vcount(r, me) for r in range(size)]
    for dtype in DTYPES:
        send = np.concatenate([block(me, j, send_counts[j], dtype) for j in range(size)])
        want = np.concatenate([block(r, me, recv_counts[r], dtype) for r in range(size)])
        # One spare element at the end of recv must stay as it was.
        recv = np.full(sum(recv_counts) + 1, -5, dtype)
        comm.alltoallv(send, send_counts, recv, np.array(recv_counts))
        what = f"alltoallv {np.dtype(dtype).name} send_counts {send_counts} recv_counts {recv_counts}"
        check.equal(what, recv[:-1], want)
        check.equal(what + ": past the counted elements", recv[-1:], np.full(1, -5, dtype))
        recv[:] = -5
        wait(comm.alltoallv(send, send_counts, recv, recv_counts, async_op=True),
             "alltoallv non-blocking", check)
        check.equal(what + " non-blocking", recv[:-1], want)


def check_rooted(comm, check):
    """reduce, gather, scatter, allgatherv and reduce_scatterv at every root,
    uneven counts with zeros; the last root non-blocking."""
    me, size = comm.rank, comm.size
    for dtype in DTYPES:
        name = np.dtype(dtype).name
        for root in range(size):
            recv = np.zeros(SMALL, dtype) if me == root else None
            comm.reduce(contribution(me, dtype, SMALL), recv, op="max", root=root)
            if me == root:
                check.equal(f"reduce max {name} root {root}", recv, reference("max", size, dtype, SMALL))
            gathered = np.zeros(size * SMALL, dtype) if me == root else None
            comm.gather(contribution(me, dtype, SMALL), gathered, root=root)
            if me == root:
                want = np.concatenate([contribution(r, dtype, SMALL) for r in range(size)])
                check.equal(f"gather {name} root {root}", gathered, want)
            blocks = np.concatenate([block(root, r, SMALL, dtype) for r in range(size)]) if me == root else None
            mine = np.zeros(SMALL, dtype)
            request = comm.scatter(blocks, mine, root=root, async_op=root == size - 1)
            if request is not None:
                wait(request, "scatter non-blocking", check)
            check.equal(f"scatter {name} root {root}", mine, block(root, me, SMALL, dtype))
        counts = [vcount(r, 0) for r in range(size)]
        gathered = np.full(sum(counts) + 1, -5, dtype)
        comm.allgatherv(block(me, 0, counts[me], dtype), gathered, counts)
        want = np.concatenate([block(r, 0, counts[r], dtype) for r in range(size)])
        check.equal(f"allgatherv {name} counts {counts}", gathered[:-1], want)
        check.equal(f"allgatherv {name}: past the counted elements", gathered[-1:], np.full(1, -5, dtype))
        total = sum(counts)
        mine = np.zeros(counts[me], dtype)
        comm.reduce_scatterv(contribution(me, dtype, total), counts, mine, op="sum")
        first = sum(counts[:me])
        check.equal(f"reduce_scatterv {name} counts {counts}", mine,
                    reference("sum", size, dtype, total)[first:first + counts[me]])


def check_p2p_group(comm, check):
    """Every rank sends 8 MiB to both neighbours before receiving, as one group."""
    me, size = comm.rank, comm.size
    right, left = (me + 1) % size, (me - 1) % size
    n = (8 << 20) // 4
    to_right = np.full(n, me, np.float32)
    to_left = np.full(n, me + 0.5, np.float32)
    from_left, from_right = np.zeros(n, np.float32), np.zeros(n, np.float32)
    comm.p2p_group([dtrain.P2POp("send", to_right, right, tag=1), dtrain.P2POp("send", to_left, left, tag=2),
                    dtrain.P2POp("recv", from_left, left, tag=1), dtrain.P2POp("recv", from_right, right, tag=2)])
    check.equal("p2p_group from the left", from_left, np.full(n, left, np.float32))
    check.equal("p2p_group from the right", from_right, np.full(n, right + 0.5, np.float32))


def check_send_recv(comm, check):
    me, size = comm.rank, comm.size
    if size < 2:
        return
    right, left = (me + 1) % size, (me - 1) % size
    for dtype in DTYPES:
        for n in (SMALL, LARGE):
            name = f"{np.dtype(dtype).name}[{n}]"
            # Around the ring both ways; the receive is posted first so that no
            # send waits on a peer that is itself sending.
            for peer_to, peer_from, tag in ((right, left, 1), (left, right, 2)):
                inbox = np.zeros(n, dtype)
                pending = comm.recv(inbox, peer_from, tag=tag, async_op=True)
                comm.send(block(me, peer_to, n, dtype), peer_to, tag=tag)
                wait(pending, "recv non-blocking", check)
                check.equal(f"recv {name} from rank {peer_from} tag {tag}", inbox,
                            block(peer_from, me, n, dtype))

    # Tags pick the message: two sent with tags 7 then 3, received 3 then 7.
    first = comm.send(np.full(4, 7.0), right, tag=7, async_op=True)
    second = comm.send(np.full(6, 3.0), right, tag=3, async_op=True)
    got3, got7 = np.zeros(6), np.zeros(4)
    comm.recv(got3, left, tag=3)
    comm.recv(got7, left, tag=7)
    wait(first, "send non-blocking", check)
    wait(second, "send non-blocking", check)
    check.equal("recv tag 3 (sent second)", got3, np.full(6, 3.0))
    check.equal("recv tag 7 (sent first)", got7, np.full(4, 7.0))

    # One tag keeps the order: three messages from rank 0 to the last rank.
    last = size - 1
    if me == 0:
        for k in range(3):
            comm.send(np.full(5, k, np.int64), last, tag=11)
    elif me == last:
        for k in range(3):
            got = np.full(5, -1, np.int64)
            comm.recv(got, 0, tag=11)
            check.equal(f"message {k} with one tag in order", got, np.full(5, k, np.int64))


def check_split(comm, check):
    me, size = comm.rank, comm.size
    color = me % 2
    # key -rank: the child orders its ranks by descending parent rank.
    members = sorted((r for r in range(size) if r % 2 == color), key=lambda r: -r)
    with comm.split(color, key=-me) as child:
        check.true("split child size", child.size == len(members),
                   f"{child.size}, want {len(members)} (members {members})")
        check.true("split child rank", child.rank == members.index(me),
                   f"{child.rank}, want {members.index(me)} (members {members})")
        total = np.array([me], np.int64)
        child.allreduce(total)
        check.equal(f"allreduce on the {'odd' if color else 'even'} child", total,
                    np.array([sum(members)], np.int64))
        gathered = np.zeros(child.size, np.int64)
        wait(child.allgather(np.array([me], np.int64), gathered, async_op=True),
             "allgather non-blocking on the child", check)
        check.equal("allgather of parent ranks on the child", gathered, np.array(members))
        child.barrier()

    # color None leaves a rank out: rank 0 gets None, the rest a child.
    child = comm.split(None if me == 0 else 5, key=0)
    if me == 0:
        check.true("split with color None returns None", child is None, repr(child))
    else:
        with child:
            check.true("split without rank 0: size", child.size == size - 1, str(child.size))
            check.true("split without rank 0: rank", child.rank == me - 1, str(child.rank))
            buf = np.array([float(me)])
            child.allreduce(buf, op="max")
            check.equal("allreduce max without rank 0", buf, np.array([float(size - 1)]))
    # The parent goes on after its children.
    check_rank_and_size(comm, check, size)


def check_bad_arguments(comm, check):
    me, size = comm.rank, comm.size
    bad_calls = [
        ("allreduce with mismatched lengths",
         lambda: comm.allreduce(np.zeros(4, np.float32), np.zeros(5, np.float32))),
        ("allreduce avg on int64", lambda: comm.allreduce(np.zeros(4, np.int64), op="avg")),
        ("broadcast from root = size", lambda: comm.broadcast(np.zeros(4), root=size)),
        ("send to peer = size", lambda: comm.send(np.zeros(4), size)),
        ("recv with tag -1", lambda: comm.recv(np.zeros(4), (me + 1) % size, tag=-1)),
        ("alltoallv with too few counts",
         lambda: comm.alltoallv(np.zeros(4), [1] * (size + 1), np.zeros(4), [1] * (size + 1))),
        ("non-blocking allgather into a short buffer",
         lambda: comm.allgather(np.zeros(3), np.zeros(3 * size - 1), async_op=True)),
    ]
    for what, call in bad_calls:
        try:
            call()
        except dtrain.InvalidArgumentError as error:
            check.true(f"{what}: the error has a message", bool(error.message))
            check.true(f"{what}: the error has its status",
                       error.status == dtrain.ERR_INVALID_ARGUMENT, repr(error.status))
        except Exception as error:  # noqa: BLE001 - reported as a mismatch
            raise CheckFailed(f"{what}: raised {type(error).__name__}: {error}, "
                              "want InvalidArgumentError") from error
        else:
            raise CheckFailed(f"{what}: no error, want InvalidArgumentError")
    # Every rank refused the same calls; the communicator still works.
    buf = contribution(me, np.float64, SMALL)
    comm.allreduce(buf)
    check.equal("allreduce after the refused calls", buf, reference("sum", size, np.float64, SMALL))
    comm.barrier()


def check_ddp(comm, check):
    """dtrain.DDP and dtrain.broadcast_parameters across the ranks."""
    me, size = comm.rank, comm.size
    root = size - 1

    # Replicas start from root's weights, integers included.
    params = [(np.arange(SMALL) * (me + 1)).astype(np.float32), np.full(3, me, np.int64)]
    dtrain.broadcast_parameters(comm, params, root=root)
    check.equal("broadcast_parameters float32", params[0],
                (np.arange(SMALL) * (root + 1)).astype(np.float32))
    check.equal("broadcast_parameters int64", params[1], np.full(3, root, np.int64))

    def grads_of(rank):
        return [contribution(rank, np.float32, SMALL).reshape(1, SMALL),
                contribution(rank, np.float64, LARGE), contribution(rank + 3, np.float32, 7)]

    def mean_of(weights):
        total = sum(weights)
        return [sum(w * g.astype(np.float64) for w, g in zip(weights, parts)) / total
                for parts in zip(*(grads_of(r) for r in range(size)))]

    def approx(what, got, want, tolerance):
        check.true(what, np.allclose(got, want, rtol=tolerance, atol=tolerance),
                   f"largest difference {np.max(np.abs(got - want))}")

    # Uniform average: buckets of one gradient each, marked in reverse order
    # on even ranks and in forward order on odd ones.
    grads = grads_of(me)
    with dtrain.DDP(comm, grads, bucket_bytes=1) as ddp:
        check.true("DDP bucket_count", ddp.bucket_count == 3, str(ddp.bucket_count))
        for step in range(2):
            if step:
                for g, fresh in zip(grads, grads_of(me)):
                    g[...] = fresh
            order = [2, 1, 0] if me % 2 == 0 else [0, 1, 2]
            for i in order:
                ddp.mark_ready(i)
            ddp.wait()
            for k, (got, want) in enumerate(zip(grads, mean_of([1] * size))):
                approx(f"DDP uniform average, step {step}, gradient {k}", got, want, 1e-5)

    # Gradient accumulation: the first micro-step inside no_sync only adds up.
    grads = [np.zeros_like(g) for g in grads_of(me)]
    with dtrain.DDP(comm, grads) as ddp:
        with ddp.no_sync():
            for g, part in zip(grads, grads_of(me)):
                g += part
            for i in range(3):
                ddp.mark_ready(i)
            ddp.wait()
        for g, part in zip(grads, grads_of(me)):
            g += part
        for i in reversed(range(3)):
            ddp.mark_ready(i)
        ddp.wait()
        for k, (got, want) in enumerate(zip(grads, mean_of([1] * size))):
            approx(f"DDP no_sync accumulation, gradient {k}", got, 2 * want, 1e-5)

    # Weighted by sample counts that differ by rank.
    grads = grads_of(me)
    weights = [r + 1 for r in range(size)]
    with dtrain.DDP(comm, grads, weighted=True) as ddp:
        ddp.set_local_weight(weights[me])
        for i in range(3):
            ddp.mark_ready(i)
        ddp.wait()
    for k, (got, want) in enumerate(zip(grads, mean_of(weights))):
        approx(f"DDP weighted average, gradient {k}", got, want, 1e-5)

    # bf16 on the wire; gradient 1 unused on rank 0 (find_unused: zero from there).
    grads = grads_of(me)
    with dtrain.DDP(comm, grads, compression="bf16", find_unused=True) as ddp:
        for i in range(3):
            if not (me == 0 and i == 1):
                ddp.mark_ready(i)
        ddp.wait()
    want = mean_of([1] * size)
    want[1] = sum(grads_of(r)[1].astype(np.float64) for r in range(1, size)) / size
    for k, (got, expected) in enumerate(zip(grads, want)):
        approx(f"DDP bf16 with find_unused, gradient {k}", got, expected, 0.1)

    # Refusals reach every rank: a rank with a bad array raises its own error,
    # the others MismatchError; disagreeing ranks all raise MismatchError.
    refuser = size - 1

    def expect(what, call, mine, others):
        want = mine if me == refuser else others
        try:
            call()
        except want as error:
            check.true(f"{what}: the error has a message", bool(error.message))
        except Exception as error:  # noqa: BLE001 - reported as a mismatch
            raise CheckFailed(f"{what}: raised {type(error).__name__}: {error}, "
                              f"want {want.__name__}") from error
        else:
            raise CheckFailed(f"{what}: no error, want {want.__name__}")

    good = grads_of(me)
    expect("DDP with a bad array on one rank",
           lambda: dtrain.DDP(comm, good[:2] + (["text"] if me == refuser else good[2:])),
           dtrain.InvalidArgumentError, dtrain.MismatchError)
    expect("DDP with a bad compression on one rank",
           lambda: dtrain.DDP(comm, good, compression="int4" if me == refuser else None),
           dtrain.InvalidArgumentError, dtrain.MismatchError)
    expect("broadcast_parameters with a bad root on one rank",
           lambda: dtrain.broadcast_parameters(comm, [good[0]], root=size if me == refuser else 0),
           dtrain.InvalidArgumentError, dtrain.MismatchError)
    if size > 1:
        expect("DDP with another shape on one rank",
               lambda: dtrain.DDP(comm, good[:2] + ([np.zeros(8, np.float32)] if me == refuser
                                                     else good[2:])),
               dtrain.MismatchError, dtrain.MismatchError)
        expect("DDP with another bucket size on one rank",
               lambda: dtrain.DDP(comm, good, bucket_bytes=100 if me == refuser else 200),
               dtrain.MismatchError, dtrain.MismatchError)
    # The communicator still works.
    buf = contribution(me, np.float64, SMALL)
    comm.allreduce(buf)
    check.equal("allreduce after the refused DDPs", buf, reference("sum", size, np.float64, SMALL))


def check_mesh(comm, check):
    """dtrain.Mesh: coordinates, groups proven by an allgather over them, and a shape the ranks disagree on."""
    me, size = comm.rank, comm.size
    with dtrain.Mesh(comm, [("tp", 1), ("dp", size)]) as mesh:
        check.equal("mesh shape", mesh.shape, [("tp", 1), ("dp", size)])
        check.equal("mesh coords", [mesh.coord("tp"), mesh.coord("dp")], [0, me])
        check.equal("mesh coords_of", mesh.coords_of(size - 1), [0, size - 1])
        check.equal("mesh rank_at", mesh.rank_at([0, size - 1]), size - 1)
        check.equal("mesh group_ranks dp", mesh.group_ranks("dp"), list(range(size)))
        check.equal("mesh group_ranks tp", mesh.group_ranks("tp"), [me])
        with mesh.comm("dp", "tp") as dp:
            got = np.zeros(size, np.int64)
            dp.allgather(np.array([me], np.int64), got)
            check.equal("allgather over the mesh's dp,tp", got, np.arange(size, dtype=np.int64))
        with mesh.comm("tp") as tp:
            check.equal("tp group size", tp.size, 1)
    with dtrain.Mesh(comm, tp=1) as customary:
        check.equal("customary names", customary.names, ["tp", "cp", "ep", "dp", "pp"])
        check.equal("inferred dp", customary.dim_size("dp"), size)
    if size > 1:
        try:
            dtrain.Mesh(comm, [("tp", size if me == 0 else 1), ("dp", 1 if me == 0 else size)])
        except dtrain.MismatchError as error:
            check.equal("mesh mismatch names rank 1", "on rank 1" in str(error), True)
        else:
            raise CheckFailed("ranks that disagree about the mesh were not refused")


def check_tp(comm, check):
    """dtrain.tp: a column- then row-parallel MLP over all ranks equals the dense one, in float64 arithmetic."""
    me, size = comm.rank, comm.size
    rng = np.random.default_rng(11)
    x, w1, w2 = (rng.standard_normal(s).astype(np.float32) for s in [(6, 4), (4 * size, 4), (4, 4 * size)])
    w1_r = dtrain.tp.shard("rows", w1, np.zeros((4, 4), np.float32), me, size)
    w2_r = dtrain.tp.shard("columns", w2, np.zeros((4, 4), np.float32), me, size)
    h = dtrain.tp.column_linear_forward(comm, x, w1_r, None, np.zeros((6, 4), np.float32))
    y = dtrain.tp.row_linear_forward(comm, h, w2_r, None, np.zeros((6, 4), np.float32))
    want = (x.astype(np.float64) @ w1.T) @ w2.T
    check.equal("tp mlp", np.abs(y - want).max() <= 1e-4 * np.abs(want).max(), True)
    back = dtrain.tp.unshard(comm, "columns", w2_r, np.zeros_like(w2))
    check.equal("tp unshard", back, w2)


def check_pipeline(comm, check):
    """dtrain.Pipeline over every rank: stage s multiplies by s + 2, the loss sums the output; the
    loss and each stage's weight gradient are exact (float64), for 1F1B and zero-bubble H1."""
    me, size = comm.rank, comm.size
    n, m = 3, 2 * size
    weights = [float(s + 2) for s in range(size)]
    xs = [np.arange(n, dtype=np.float64) + i for i in range(m)]
    for kind in ["1f1b", "zb_h1"]:
        saved, grads, state = {}, {}, {"loss": 0.0, "grad_w": 0.0}

        def forward(chunk, i, input, output):
            x = xs[i] if input is None else input.copy()
            saved[i] = x
            if output is None:
                state["loss"] += float(np.sum(weights[me] * x))
            else:
                output[:] = weights[me] * x

        def backward(chunk, i, grad_output, grad_input):
            grads[i] = np.ones(n) if grad_output is None else grad_output.copy()
            if grad_input is not None:
                grad_input[:] = weights[me] * grads[i]
            if kind != "zb_h1":
                backward_weight(chunk, i)

        def backward_weight(chunk, i):
            state["grad_w"] += float(np.sum(grads.pop(i) * saved.pop(i)))

        with dtrain.PipelineSchedule(kind, stages=size, microbatches=m) as schedule, \
                dtrain.Pipeline(comm, schedule, n, np.float64, forward, backward,
                                backward_weight=backward_weight if kind == "zb_h1" else None) as p:
            info = p.step()
            check.equal(f"pipeline {kind} peak in flight", info.peak_in_flight, schedule.peak_in_flight(me))
        total = float(np.sum(xs))
        product = float(np.prod(weights))
        if me == size - 1:
            check.equal(f"pipeline {kind} loss", state["loss"], product * total)
        check.equal(f"pipeline {kind} weight gradient", state["grad_w"], product / weights[me] * total)
def check_context_parallel(comm, check):
    """Ring and all-to-all attention on each rank's zigzag shard: the rows of
    dtrain.attention over the whole sequence, and the same gradients both ways."""
    me, size = comm.rank, comm.size
    seq, heads, kv_heads, dim = 4 * size, 2 * size, size, 4
    rng = np.random.default_rng(7)
    q, d_o = (rng.uniform(-1, 1, (seq, heads, dim)).astype(np.float32) for _ in range(2))
    k, v = (rng.uniform(-1, 1, (seq, kv_heads, dim)).astype(np.float32) for _ in range(2))
    everywhere = np.arange(seq, dtype=np.int64)
    want_o, want_lse = dtrain.attention(q, k, v, everywhere, everywhere, causal=True)
    mine = dtrain.cp_positions(seq // size, size, me, "zigzag")
    local = [dtrain.cp_shard(x, size, me, "zigzag") for x in (q, k, v, d_o)]
    grads = {}
    for name, forward, backward in [
            ("ring", dtrain.ring_attention_forward, dtrain.ring_attention_backward),
            ("all-to-all", dtrain.ulysses_attention_forward, dtrain.ulysses_attention_backward)]:
        o, lse = forward(comm, *local[:3], causal=True, layout="zigzag")
        check.true(f"{name} o", np.allclose(o, want_o[mine], rtol=1e-5, atol=1e-6))
        check.true(f"{name} lse", np.allclose(lse, want_lse[mine], rtol=1e-5, atol=1e-6))
        grads[name] = backward(comm, *local[:3], o, lse, local[3], causal=True, layout="zigzag")
    for what, ring, all_to_all in zip(("dq", "dk", "dv"), grads["ring"], grads["all-to-all"]):
        check.true(f"{what} ring vs all-to-all", np.allclose(ring, all_to_all, rtol=1e-4, atol=1e-5))
    if size > 1:
        try:
            dtrain.ring_attention_forward(comm, *local[:3], causal=True, scale=0.25 if me == 0 else 0.0)
        except dtrain.MismatchError:
            check.true("ranks disagreeing about the scale are refused", True)
        else:
            raise CheckFailed("ranks that disagree about the scale were not refused")


def main():
    expected_size = int(sys.argv[1]) if len(sys.argv) > 1 else None
    with dtrain.Comm() as comm:
        rank = comm.rank
        check = Checks(rank)
        steps = [
            ("rank and size",
             lambda: check_rank_and_size(comm, check, expected_size or comm.size)),
            ("allreduce", lambda: check_allreduce(comm, check)),
            ("allgather", lambda: check_allgather(comm, check)),
            ("reduce_scatter", lambda: check_reduce_scatter(comm, check)),
            ("broadcast", lambda: check_broadcast(comm, check)),
            ("alltoall", lambda: check_alltoall(comm, check)),
            ("alltoallv", lambda: check_alltoallv(comm, check)),
            ("rooted and uneven collectives", lambda: check_rooted(comm, check)),
            ("p2p group", lambda: check_p2p_group(comm, check)),
            ("send/recv", lambda: check_send_recv(comm, check)),
            ("split", lambda: check_split(comm, check)),
            ("bad arguments", lambda: check_bad_arguments(comm, check)),
            ("data parallel", lambda: check_ddp(comm, check)),
            ("mesh", lambda: check_mesh(comm, check)),
            ("tensor parallel", lambda: check_tp(comm, check)),
            ("pipeline", lambda: check_pipeline(comm, check)),
            ("context parallel", lambda: check_context_parallel(comm, check)),
            ("barrier", comm.barrier),
        ]
        for name, step in steps:
            try:
                step()
            except CheckFailed as failure:
                print(f"FAIL rank {rank} of {comm.size}: {name}: {failure}", file=sys.stderr,
                      flush=True)
                return 1
            except Exception:  # noqa: BLE001 - any library error fails the run
                print(f"FAIL rank {rank} of {comm.size}: {name}: unexpected error:",
                      file=sys.stderr, flush=True)
                traceback.print_exc()
                return 1
        print(f"rank {rank} of {comm.size}: {check.count} checks passed", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
