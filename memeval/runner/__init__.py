"""Running a suite against one engine: options, scenario execution, waits and the run record.

The library function is :func:`memeval.run` (:func:`memeval.api.run`)."""
