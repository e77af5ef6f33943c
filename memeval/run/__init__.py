"""Running a suite against one engine: options, scenario execution, waits and the run record.

The package is callable: ``memeval.run(suite, engine="reference")`` is :func:`memeval.api.run`."""

from memeval.callable_module import make_callable

make_callable(__name__, "run")
