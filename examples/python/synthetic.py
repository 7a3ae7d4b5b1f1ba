"""The synthetic task of examples/c/mlp/synthetic.h, with numpy.

The same counter-based generator gives the same inputs, labels and initial
weights as the C program for the same seed, so both train the same way.
Element i of stream s of a seed is a pure function of (seed, s, i): any rank
can produce any slice of any global batch.
"""

import numpy as np

TEACHER1, TEACHER2, TRAIN, HELDOUT, INIT = 1, 2, 3, 4, 100
TEACHER_HIDDEN = 32

_U64 = np.uint64


def mix(x):
    """splitmix64's finaliser on an array of uint64 (arithmetic modulo 2**64)."""
    z = np.asarray(x, dtype=_U64) + _U64(0x9E3779B97F4A7C15)
    z = (z ^ (z >> _U64(30))) * _U64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> _U64(27))) * _U64(0x94D049BB133111EB)
    return z ^ (z >> _U64(31))


def key(seed, stream):
    return mix(np.array([seed], dtype=_U64) + mix(np.array([stream], dtype=_U64)))[0]


def normal(k, first, n):
    """Elements [first, first + n) of the standard normal stream with key k, as float64."""
    i = np.arange(first, first + n, dtype=_U64)
    k = np.asarray(k, dtype=_U64)
    h1 = mix(k + _U64(2) * i)
    h2 = mix(k + _U64(2) * i + _U64(1))
    scale = 1.0 / 9007199254740992.0  # 2**-53
    u1 = ((h1 >> _U64(11)) + _U64(1)).astype(np.float64) * scale
    u2 = (h2 >> _U64(11)).astype(np.float64) * scale
    return np.sqrt(-2.0 * np.log(u1)) * np.cos(2.0 * np.pi * u2)


class Task:
    """Inputs are standard normal; a label is the argmax of a fixed random teacher."""

    def __init__(self, seed, inputs=64, classes=10):
        self.seed, self.inputs, self.classes = seed, inputs, classes
        self.t1 = (normal(key(seed, TEACHER1), 0, TEACHER_HIDDEN * inputs)
                   .reshape(TEACHER_HIDDEN, inputs) / np.sqrt(inputs))
        self.t2 = (normal(key(seed, TEACHER2), 0, classes * TEACHER_HIDDEN)
                   .reshape(classes, TEACHER_HIDDEN) / np.sqrt(TEACHER_HIDDEN))

    def samples(self, stream, first, n):
        """Samples [first, first + n) of a stream: x [n, inputs] float32, y [n] int32."""
        x = normal(key(self.seed, stream), first * self.inputs, n * self.inputs)
        x = x.astype(np.float32).reshape(n, self.inputs)
        scores = np.tanh(x.astype(np.float64) @ self.t1.T) @ self.t2.T
        return x, np.argmax(scores, axis=1).astype(np.int32)


def shard(total, rank, world):
    """This rank's items [begin, begin + count) of `total` split as evenly as possible."""
    begin, end = total * rank // world, total * (rank + 1) // world
    return begin, end - begin


def init_params(dims, k):
    """He initialisation as mlp_init_params(): [W0, b0, W1, b1, ...], W [out, in]."""
    params = []
    layers = len(dims) - 1
    for l in range(layers):
        fan_in, out = dims[l], dims[l + 1]
        gain = 2.0 if l + 1 < layers else 1.0
        w = normal(mix(np.array([k], dtype=_U64) + _U64(l))[0], 0, out * fan_in)
        params.append((w * np.sqrt(gain / fan_in)).astype(np.float32).reshape(out, fan_in))
        params.append(np.zeros(out, dtype=np.float32))
    return params
