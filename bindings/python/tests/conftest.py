import numpy as np
import pytest

import dtrain

# multirank/allranks.py needs real ranks: CTest runs it under dtrun
# (python_multirank_2 and _3), never inside this single-process run. (A
# conftest.py of its own there would shadow this one's `from conftest import`.)
collect_ignore = ["multirank"]


@pytest.fixture
def comm():
    """A world of one: no launcher variables, so no store and no peers."""
    with dtrain.Comm() as c:
        yield c


# The dtypes libdtrain accepts that numpy has (bfloat16 is tested over DLPack).
DTYPES = [np.float32, np.float64, np.float16, np.int32, np.int64, np.int8, np.uint8]
