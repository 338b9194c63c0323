"""One exception hierarchy for the whole toolkit.

Every error a user can cause derives from :class:`FedboundError`; its message names the bad value
and the valid range, in one line, so that the CLI can print it and exit with status 2.
"""


class FedboundError(Exception):
    """Root of all fedbound errors."""


class ValidationError(FedboundError, ValueError):
    """A value is outside its valid range (bad size, non-stochastic matrix, alpha <= 0, ...)."""


class ResourceLimitError(ValidationError):
    """A spec whose estimated memory exceeds the budget (:mod:`fedbound.resources`), refused before
    anything is allocated."""


class OutputError(ValidationError):
    """An output path that cannot be used: a file where a folder is needed, an existing non-empty
    folder without ``--overwrite``, no permission to write."""


class InputTypeError(FedboundError, TypeError):
    """A value of the wrong kind: a string or complex number where a real is needed, a bool where a
    number is, a float where an integer is."""


class UnknownNameError(ValidationError, KeyError):
    """A name (result id, variant, constant, topology, task, algorithm, option) that does not exist;
    the message offers the closest known name. A ValidationError (hence a ValueError) and a KeyError."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""


class DivergenceError(FedboundError, FloatingPointError):
    """A run produced non-finite values; the message names the round."""

    def __init__(self, message: str, round_index: int | None = None):
        super().__init__(message)
        self.round_index = round_index


class SolverError(FedboundError, RuntimeError):
    """An optimization solver failed, or returned a solution that violates its constraints."""


def require(condition: object, message: str) -> None:
    """Raise :class:`ValidationError` with ``message`` unless ``condition`` holds."""
    if not condition:
        raise ValidationError(message)

