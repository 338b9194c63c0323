"""A memory budget checked up front: a spec whose arrays would not fit is refused before allocating.

The budget defaults to half of the machine's physical memory; the environment variable
``FEDBOUND_MEMORY_BUDGET`` (bytes, or with a suffix K, M, G, T: ``"8G"``) or :func:`set_memory_budget`
overrides it. Builders estimate what they are about to allocate (floats x 8 bytes, a lower bound:
temporaries come on top) and call :func:`require_memory`, which raises
:class:`~fedbound.errors.ResourceLimitError` (a ValidationError: the CLI exits 2) with the estimate.
"""
from __future__ import annotations

import math
import os

from fedbound import validate
from fedbound.errors import ResourceLimitError, ValidationError

ENV_VAR = "FEDBOUND_MEMORY_BUDGET"
_UNITS = {"": 1, "B": 1, "K": 2 ** 10, "M": 2 ** 20, "G": 2 ** 30, "T": 2 ** 40}
_budget: int | None = None  # set_memory_budget's value; None: environment variable or default


def physical_memory() -> int:
    """Bytes of physical memory of this machine (sysconf; 8 GiB where it cannot be read)."""
    try:
        return int(os.sysconf("SC_PAGE_SIZE")) * int(os.sysconf("SC_PHYS_PAGES"))
    except (ValueError, OSError, AttributeError):
        return 8 * 2 ** 30


def parse_bytes(text: str, name: str = ENV_VAR) -> int:
    """``"4096"``, ``"512M"``, ``"8G"``, ``"1.5T"`` as a number of bytes >= 1."""
    raw = str(text).strip().upper().removesuffix("IB").removesuffix("B") if str(text).strip() else ""
    unit = raw[-1:] if raw[-1:] in _UNITS else ""
    try:
        value = float(raw[:len(raw) - len(unit)])
    except ValueError:
        raise ValidationError(f"{name} must be a number of bytes such as 8G or 512M, got {text!r}") from None
    value = validate.number(name, value, low=0, low_open=True)
    return max(1, int(value * _UNITS[unit]))


def memory_budget() -> int:
    """The budget in bytes: set_memory_budget's, else FEDBOUND_MEMORY_BUDGET, else half the memory."""
    if _budget is not None:
        return _budget
    env = os.environ.get(ENV_VAR)
    return parse_bytes(env) if env else physical_memory() // 2


def set_memory_budget(nbytes: int | str | None) -> None:
    """Set the budget (bytes as an int, or a string such as ``"8G"``); ``None`` restores the default."""
    global _budget
    if nbytes is None or isinstance(nbytes, str):
        _budget = None if nbytes is None else parse_bytes(nbytes, "memory budget")
    else:
        _budget = validate.integer("memory budget", nbytes, low=1)


def format_bytes(nbytes: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if nbytes < 1024 or unit == "PiB":
            return f"{nbytes:.0f} {unit}" if unit == "B" else f"{nbytes:.3g} {unit}"
        nbytes /= 1024
    return f"{nbytes:.3g} PiB"


def require_memory(what: str, floats: int | float, itemsize: int = 8) -> None:
    """Refuse (ResourceLimitError) to build ``what`` if its ``floats`` numbers of ``itemsize`` bytes
    exceed the budget; the message gives the estimate, the budget and how to raise it."""
    try:
        nbytes = float(floats * itemsize)
    except OverflowError:
        nbytes = math.inf
    budget = memory_budget()
    if not math.isfinite(nbytes) or nbytes > budget:
        raise ResourceLimitError(
            f"{what} needs about {format_bytes(nbytes)} of memory, over the budget of "
            f"{format_bytes(budget)} (set {ENV_VAR}, e.g. {ENV_VAR}=64G, or "
            "fedbound.resources.set_memory_budget)")


def require_run_memory(what: str, rounds: int, n: int, d: int, seeds: int = 1) -> None:
    """Refuse a run (or ``seeds`` runs kept together, as a Monte-Carlo estimate does) whose memory
    would exceed the budget: a few (n, d) client tensors (models, trackers, gradients: 8 n d floats)
    plus, per seed, the recorded global model and metrics of every round ((rounds + 1)(d + 16))."""
    rounds = validate.integer("rounds", rounds, low=0)
    n, d = validate.integer("n", n, low=1), validate.integer("d", d, low=1)
    seeds = validate.integer("seeds", seeds, low=1)
    require_memory(f"{what} ({rounds} rounds, n = {n}, d = {d}, {seeds} seed(s))",
                   8 * n * d + seeds * (rounds + 1) * (d + 16))


__all__ = ["ENV_VAR", "require_run_memory", "memory_budget", "set_memory_budget", "require_memory", "physical_memory",
           "parse_bytes", "format_bytes"]
