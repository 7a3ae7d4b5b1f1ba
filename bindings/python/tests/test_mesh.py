"""dtrain.Mesh on a world of one: queries, a communicator per dimension, refusals."""

import numpy as np
import pytest

import dtrain


def test_customary_dimensions_infer_dp(comm):
    with dtrain.Mesh(comm) as mesh:
        assert mesh.names == ["tp", "cp", "ep", "dp", "pp"]
        assert mesh.shape == [(n, 1) for n in mesh.names]
        assert (mesh.ndims, mesh.size, mesh.rank) == (5, 1, 0)
        assert mesh.dim_index("dp") == 3
        assert mesh.coords_of(0) == [0] * 5
        assert mesh.rank_at([0] * 5) == 0
        assert mesh.group_ranks("dp", "cp") == [0]


def test_comm_of_a_dimension_works_and_outlives_the_mesh(comm):
    mesh = dtrain.Mesh(comm, [("tp", 1), ("dp", 1)])
    group = mesh.comm("tp,dp")
    mesh.close()
    data = np.arange(4, dtype=np.float32)
    group.allreduce(data)
    np.testing.assert_array_equal(data, np.arange(4, dtype=np.float32))
    assert group.size == 1
    group.close()


@pytest.mark.parametrize("dims, says", [
    ([("tp", 2)], "has 2 ranks but the communicator has 1"),
    ([("tp", 1), ("tp", 1)], "repeats"),
    ([("TP", 1)], "characters other than"),
    ([("tp", None), ("dp", None)], "both DT_UNDEF"),
])
def test_bad_shapes_are_refused(comm, dims, says):
    with pytest.raises(dtrain.InvalidArgumentError, match=says):
        dtrain.Mesh(comm, dims)


def test_unknown_dimension_is_refused(comm):
    with dtrain.Mesh(comm, [("dp", 1)]) as mesh:
        with pytest.raises(dtrain.InvalidArgumentError, match='no dimension "pp"'):
            mesh.comm("pp")
        with pytest.raises(dtrain.InvalidArgumentError, match="outside"):
            mesh.rank_at([1])
        with pytest.raises(dtrain.InvalidArgumentError):
            mesh.coord("tp")
    with pytest.raises(dtrain.InvalidArgumentError, match="unknown dimension"):
        dtrain.Mesh(comm, xp=2)
