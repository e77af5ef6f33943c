"""A judged probe (``gold:``, no ``expect``, no abstention) is scored by a benchmark's judge grader
alone: it loads as scored, and what a pack check would need (stale, accept) or a leak-only probe
forbids (gold) is a located spec error."""

import pytest

from memeval.errors import SpecError
from memeval.spec.load import load_suite

SCENARIO = """scenario: s
about: a
tenants: [t]
agents: [{{id: a, role: r}}]
threads: [{{id: th, agent: a, exchanges: [{{user: "I love the mountains."}}]}}]
probes:
  - {{id: p, route: ask, agent: a, question: "A weekend plan?", style: paraphrase, {probe}}}
"""


def _load(tmp_path, probe):
    path = tmp_path / "s.yaml"
    path.write_text(SCENARIO.format(probe=probe))
    return load_suite(str(path))


def test_a_probe_with_gold_and_no_expect_is_judged_and_scored(tmp_path):
    probe = _load(tmp_path, 'gold: "Suggest hiking: the user loves mountains."').scenarios[0].probes[0]
    assert probe.scored and probe.expect == () and not probe.leak_only


@pytest.mark.parametrize("probe, words", [
    ('gold: "a rubric", stale: [x]', "a judged probe (gold, no expect) holds nothing a pack is checked for, so it takes no stale"),
    ('leak_only: true, forbid: [x], gold: "g"', "a leak-only probe scores no answer, so it takes no gold"),
    ("", "missing expect"),
])
def test_what_a_judged_probe_cannot_take_is_a_spec_error(tmp_path, probe, words):
    with pytest.raises(SpecError) as err:
        _load(tmp_path, probe)
    assert any(words in i.message and i.line == 7 for i in err.value.issues), err.value.issues
