"""``memeval import BENCHMARK FILE -o DIR``: a published benchmark file as editable YAML."""

from __future__ import annotations

import click

from memeval.benchmarks import benchmark, names
from memeval.benchmarks.importer import import_dataset
from memeval.benchmarks.source import Selection
from memeval.util.suggest import counted


@click.command("import")
@click.argument("fmt", metavar="|".join(names()) or "BENCHMARK")
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("-o", "--out", required=True, type=click.Path(file_okay=False), help="Directory to write suite.yaml and scenarios/ into.")
@click.option("--only", default="", help="Comma-separated question ids (or unit ids, meaning all their questions) to take.")
@click.option("--limit", type=click.IntRange(min=1), help="Take the first N selected questions.")
@click.option("--sample", type=click.IntRange(min=1), help="Take N questions at random (with --seed).")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed for --sample.")
@click.option("--sha256", "sha256", help="Expected sha256 of the file; anything else is refused.")
@click.option("--variant", help="Expected variant (one the benchmark publishes; default: the one the file shows).")
def command(fmt: str, file: str, out: str, only: str, limit: int | None, sample: int | None, seed: int,
            sha256: str | None, variant: str | None) -> int:
    """Verify a published benchmark file (format, sha256, variant) and write it as a suite."""
    bench = benchmark(fmt)  # an unknown name is refused before the file is read
    selection = Selection(only=tuple(i.strip() for i in only.split(",") if i.strip()), limit=limit,
                          sample=sample, seed=seed)
    dataset, result = import_dataset(fmt, file, out, selection, sha256=sha256, variant=variant)
    click.echo(f"{dataset.path}: {dataset.format} {dataset.variant}, sha256 {dataset.sha256}, "
               f"{counted(dataset.questions, 'question')} in {counted(len(dataset.units), 'unit')}")
    if bench.import_message:
        click.echo(bench.import_message)
    click.echo(f"wrote {result.directory}/suite.yaml: {counted(result.scenarios, 'scenario')}, "
               f"{counted(result.probes, 'probe')}")
    if result.unmapped:
        click.echo(f"{len(result.unmapped)} selected questions not mapped to probes (listed under x-unmapped in suite.yaml)")
    if result.dropped_turns:
        click.echo(f"{result.dropped_turns} turns dropped (empty, or an assistant turn with no user turn before it)")
    return 0
