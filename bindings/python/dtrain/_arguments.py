"""Python values as the numbers the C API takes; what cannot be one raises
InvalidArgumentError naming the argument, as the library itself would."""

from ._constants import Status
from ._errors import InvalidArgumentError


def _integer(value, what):
    try:
        return int(value)
    except (TypeError, ValueError, OverflowError):
        raise InvalidArgumentError(Status.ERR_INVALID_ARGUMENT,
                                   f"{what}: {value!r} is not an integer") from None


def _real(value, what):
    try:
        return float(value)
    except (TypeError, ValueError, OverflowError):
        raise InvalidArgumentError(Status.ERR_INVALID_ARGUMENT,
                                   f"{what}: {value!r} is not a number") from None
