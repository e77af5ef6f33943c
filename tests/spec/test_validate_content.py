"""``memeval validate`` checks content, not only form (issue 16 point 4).

An expectation the scenario never writes is a warning (exit 0) under the scorer's own matching,
an error with ``--strict``; abstention probes' forbid strings are not checked. A folder
validates every spec under it and says which files it checked.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from memeval.score.grounding import ungrounded
from memeval.spec.load import load_suite
from tests.conftest import ROOT, cli

SCENARIO = """scenario: office
about: Where the office is, and what parking costs.
tenants: [acme, globex]
agents: [{id: a, tenant: acme}, {id: g, tenant: globex}]
documents:
  - {id: old, source: web, tenant: acme, title: Old handbook, text: "The office was on Harbour Street."}
  - {id: rival, source: web, tenant: globex, title: Globex notes, text: "Globex sits on Mill Lane."}
learnings:
  - {id: park, tenant: acme, kind: fact, text: "Parking costs 6,500 yen; the office is on Foundry Park."}
forget: [old]
probes:
  - {id: typo, route: ask, agent: a, question: q, style: lexical, expect: [Foundery Park]}
  - {id: number, route: ask, agent: a, question: q, style: lexical, expect: ["6500"]}
  - {id: word, route: ask, agent: a, question: q, style: lexical, expect: [Found]}
  - {id: substring, route: ask, agent: a, question: q, style: lexical, expect: [Found], match: substring}
  - {id: forgotten, route: ask, agent: a, question: q, style: lexical, expect: [Foundry Park], stale: [Harbour Street]}
  - {id: other-tenant, route: ask, agent: a, question: q, style: lexical, expect: [Mill Lane]}
  - {id: never, route: ask, agent: a, question: q, style: lexical, abstain: true, forbid: [Vault 7741]}
  - {id: alt, route: ask, agent: a, question: q, style: lexical, expect: [Foundry Park], accept: [[Foundry, Parc]]}
"""

WARNINGS = [
    "probes[0].expect[0]: warning: 'Foundery Park' is never written to tenant 'acme' by scenario 'office' (after its "
    "forget:) (did you mean 'Foundry Park'?); the probe can never find it",
    "probes[2].expect[0]: warning: 'Found' is never written to tenant 'acme' by scenario 'office' (after its forget:) "
    "(did you mean 'Foundry'?); the probe can never find it",
    "probes[4].stale[0]: warning: 'Harbour Street' is never written to tenant 'acme' by scenario 'office' (after its "
    "forget:); the probe can never find it",
    "probes[5].expect[0]: warning: 'Mill Lane' is never written to tenant 'acme' by scenario 'office' (after its "
    "forget:); the probe can never find it",
    "probes[7].accept[0][1]: warning: 'Parc' is never written to tenant 'acme' by scenario 'office' (after its forget:) "
    "(did you mean 'Park'?); the probe can never find it",
]


@pytest.fixture
def scenario(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.chdir(tmp_path)
    Path("office.yaml").write_text(SCENARIO)
    return "office.yaml"


def test_expectations_never_written_are_warnings_located_at_their_probe(scenario: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli(["validate", scenario]) == 0
    out, err = capsys.readouterr()
    assert out == "office.yaml: ok (suite office: 1 scenario, 8 probes, 5 warning(s))\n"
    lines = [line.split("  ", 1) for line in err.splitlines()]
    assert [place for place, _ in lines] == ["office.yaml:12:5", "office.yaml:14:5", "office.yaml:16:5",
                                             "office.yaml:17:5", "office.yaml:19:5"]
    assert [message for _, message in lines] == WARNINGS


def test_strict_makes_the_warnings_errors(scenario: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli(["validate", "--strict", scenario]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert [line.split("  ", 1)[1] for line in err.splitlines()[:-1]] == [w.replace("warning: ", "") for w in WARNINGS]
    assert err.splitlines()[-1] == "5 error(s); nothing was run."


def test_the_shipped_suite_has_no_ungrounded_expectation(capsys: pytest.CaptureFixture[str],
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    assert ungrounded(load_suite("specs/agent-memory.yaml")) == []
    assert cli(["validate", "--strict", "specs/agent-memory.yaml", "tests/fixtures/mini.yaml"]) == 0
    assert capsys.readouterr().err == ""


def test_a_folder_validates_every_spec_under_it_by_kind(capsys: pytest.CaptureFixture[str],
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    assert cli(["validate", "specs", "engines"]) == 0
    out = capsys.readouterr().out.splitlines()
    suite = load_suite("specs/agent-memory.yaml")  # counted, so a scenario added as the README shows keeps this true
    probes = sum(len(s.probes) for s in suite.scenarios)
    assert f"specs/agent-memory.yaml: ok (suite agent-memory: {len(suite.scenarios)} scenarios, {probes} probes)" in out
    assert "specs/cortex-flags.yaml: ok (matrix cortex-flags, 17 profiles)" in out
    assert "specs/scenarios/01_brain_lookup.yaml: ok (suite brain_lookup: 1 scenario, 9 probes)" in out
    assert "engines/fake-cortex.yaml: ok (engine fake-cortex)" in out
    assert "engines/docker-compose.cortex.yml: skipped (not a memeval spec)" in out
    engine_files = len(list(Path(ROOT, "engines").glob("*.yaml")))  # every engine definition, not the compose .yml
    spec_files = len(list(Path(ROOT, "specs").rglob("*.yaml")))
    assert out[-1] == f"engines: {engine_files} spec file(s) checked" and f"specs: {spec_files} spec file(s) checked" in out


def test_a_folder_with_a_broken_spec_fails_and_reports_each_error_once(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    Path("specs/scenarios").mkdir(parents=True)
    Path("specs/suite.yaml").write_text("suite: s\ninclude: [scenarios/*.yaml]\n")
    Path("specs/scenarios/a.yaml").write_text(SCENARIO.replace("agent: a, question", "agent: b, question", 1))
    Path("specs/notes.yml").write_text("title: not a spec\n")
    assert cli(["validate", "specs"]) == 2
    out, err = capsys.readouterr()
    assert out.splitlines() == ["specs/notes.yml: skipped (not a memeval spec)", "specs: 2 spec file(s) checked"]
    assert err.splitlines() == [
        "specs/scenarios/a.yaml:12:35  probes[0].agent: unknown agent 'b'; defined: a, g",  # once, for two files
        "1 error(s); nothing was run."]
