"""Click parameter types for numbers a command line may give: finite, and within the range the
option's meaning needs (a timeout of 0 or -1 s, or ``nan``, is refused rather than replaced)."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:  # generic in newer click only
    _FloatType = click.ParamType[float]
else:
    _FloatType = click.ParamType


class Seconds(_FloatType):
    """A finite number of seconds, ``> 0`` or, with ``zero_ok``, ``>= 0``."""

    name = "seconds"

    def __init__(self, zero_ok: bool = False):
        self.zero_ok = zero_ok

    def convert(self, value: object, param: click.Parameter | None, ctx: click.Context | None) -> float:
        try:
            number = float(value)  # type: ignore[arg-type]  # click passes a str (or the default)
        except (TypeError, ValueError):
            self.fail(f"{value!r} is not a number of seconds", param, ctx)
        if not math.isfinite(number) or number < 0 or (number == 0 and not self.zero_ok):
            self.fail(f"{value!r}: give a finite number of seconds {'>= 0' if self.zero_ok else '> 0'}", param, ctx)
        return number
