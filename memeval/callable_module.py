"""Packages that can be called: ``memeval.run(...)`` and ``memeval.compare(...)`` are both the
package (``memeval.run.suite``, ``memeval.compare.table``, …) and the library function of the
same name in :mod:`memeval.api`. A package's module object is given a class with ``__call__``,
so no attribute of ``memeval`` ever has to switch between a module and a function."""

from __future__ import annotations

import importlib
import sys
import types
from typing import Any


def make_callable(package: str, function: str) -> None:
    """Make the already-imported module ``package`` callable as ``memeval.api.<function>``."""

    class CallablePackage(types.ModuleType):
        def __call__(self, *args: Any, **kwargs: Any) -> Any:
            return getattr(importlib.import_module("memeval.api"), function)(*args, **kwargs)

    CallablePackage.__doc__ = f"The {package} package, callable as memeval.api.{function}."
    sys.modules[package].__class__ = CallablePackage
