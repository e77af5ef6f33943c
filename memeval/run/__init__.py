"""Running a suite against one engine: options, scenario execution, waits and the run record."""
