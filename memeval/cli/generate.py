"""``memeval generate needle -o FILE``: a needle-in-a-haystack benchmark file of any size."""

from __future__ import annotations

import click

from memeval.datasets.generate import HaystackSpec, load_template, write_file


@click.command("generate")
@click.argument("kind", type=click.Choice(["needle"]))
@click.option("-o", "--out", required=True, type=click.Path(dir_okay=False), help="The file to write (in the format this command's help names).")
@click.option("--events", type=int, default=1000, show_default=True, help="Turns in each haystack (1000, 10000, 100000, 1000000 …).")
@click.option("--depth", type=float, default=0.5, show_default=True, help="Where the needle sits: 0 = first turn, 1 = last.")
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--questions", type=int, default=1, show_default=True, help="Haystacks (one question each).")
@click.option("--session-turns", type=int, default=10, show_default=True, help="Turns per session.")
@click.option("--turn-words", type=int, default=20, show_default=True, help="Words per filler turn.")
@click.option("--template", default="locker-code", show_default=True,
              help="A shipped needle (locker-code, parking-spot) or a JSON file {fact, question, answer}.")
def command(kind: str, out: str, events: int, depth: float, seed: int, questions: int, session_turns: int,
            turn_words: int, template: str) -> int:
    """Write a synthetic haystack file; import it with `memeval import longmemeval FILE --variant synthetic`."""
    spec = HaystackSpec(load_template(template), events=events, depth=depth, seed=seed, questions=questions,
                        session_turns=session_turns, turn_words=turn_words)
    size = write_file(spec, out)
    click.echo(f"wrote {out}: {questions} question(s) x {events} events, needle at depth {depth} "
               f"(turn {spec.needle_index()}), {size} bytes")
    return 0
