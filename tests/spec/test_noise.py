"""Issue 30, point 7: declarative haystack noise. Distractors per tenant, deterministic from a
seed (or drawn from a file in the suite's folder), written before the scenario's own items,
never holding a probe's string, recorded in the run's setup; the flagship suite uses it so that
its packs hold at most 10% of each haystack."""

from __future__ import annotations

from pathlib import Path

import pytest

import memeval
from memeval.errors import SpecError
from memeval.spec.load import load_suite
from tests.conftest import ROOT

SCENARIO = """\
scenario: tiny
about: one fact among noise
tenants: [acme, other]
documents:
  - {id: d1, tenant: acme, source: notion, title: Office, text: "The Oslo office moved to Bjorvika pier."}
probes:
  - {id: p1, route: ask, agent: a, tenant: acme, question: "Where did the Oslo office move?", style: lexical,
     expect: [Bjorvika], forbid: [ceiling lights]}
agents: [{id: a, tenant: acme}]
"""


def _suite(folder: Path, noise: str) -> str:
    (folder / "tiny.yaml").write_text(SCENARIO, encoding="utf-8")
    path = folder / "suite.yaml"
    path.write_text(f"suite: noisy\nabout: test\ninclude: [tiny.yaml]\n{noise}\n", encoding="utf-8")
    return str(path)


def _noise_docs(path: str, tenant: str = "acme") -> list:
    """The distractors: every document but the scenario's own (d1), which nothing else marks."""
    return [d for d in load_suite(path).scenarios[0].documents if d.id != "d1" and d.tenant == tenant]


def test_noise_is_per_tenant_sized_seeded_and_written_first(tmp_path):
    path = _suite(tmp_path, "noise: {seed: 3, tokens: 2000}")
    docs = load_suite(path).scenarios[0].documents
    assert docs[-1].id == "d1" and all(d.source == "drive" for d in docs[:-1])  # before the scenario's own
    for tenant in ("acme", "other"):
        size = sum(len(d.text) for d in _noise_docs(path, tenant)) / 4
        assert 2000 <= size < 2200
    assert [d.text for d in _noise_docs(path)] == [d.text for d in _noise_docs(path)]  # the same seed, the same bytes
    texts = " ".join(d.text for d in _noise_docs(path))
    assert "Bjorvika" not in texts and "ceiling lights" not in texts  # nothing a probe expects or forbids


def test_a_different_seed_gives_different_noise(tmp_path):
    a = [d.text for d in _noise_docs(_suite(tmp_path, "noise: {seed: 3, tokens: 1000}"))]
    b = [d.text for d in _noise_docs(_suite(tmp_path, "noise: {seed: 4, tokens: 1000}"))]
    assert a and b and a != b


def test_noise_drawn_from_a_file_leaves_out_paragraphs_holding_a_probe_string(tmp_path):
    (tmp_path / "distractors.txt").write_text("The canteen opens at eight.\n\nThe Oslo office is at Bjorvika.\n\n"
                                              "Parking permits renew in May.\n", encoding="utf-8")
    docs = _noise_docs(_suite(tmp_path, "noise: {seed: 1, tokens: 300, file: distractors.txt}"))
    text = " ".join(d.text for d in docs)
    assert "canteen" in text and "Parking" in text and "Bjorvika" not in text
    assert load_suite(str(tmp_path / "suite.yaml")).noise.file == str((tmp_path / "distractors.txt").resolve())


def test_a_noise_file_outside_the_suite_folder_or_a_bad_block_is_refused(tmp_path):
    inner = tmp_path / "suite"
    inner.mkdir()
    (tmp_path / "outside.txt").write_text("secret\n", encoding="utf-8")
    with pytest.raises(SpecError, match="outside the suite's folder"):
        load_suite(_suite(inner, "noise: {seed: 1, tokens: 300, file: ../outside.txt}"))
    with pytest.raises(SpecError, match="noise"):
        load_suite(_suite(inner, "noise: {seed: 1, tokens: 300, turns: 5}"))
    with pytest.raises(SpecError, match="noise"):
        load_suite(_suite(inner, "noise: {seed: 1}"))


def test_the_run_records_the_noise_in_its_setup(tmp_path):
    record = memeval.run(_suite(tmp_path, "noise: {seed: 3, tokens: 2000}"), engine="reference")
    assert record.setup.noise is not None and (record.setup.noise.seed, record.setup.noise.tokens) == (3, 2000)
    hay = [p.haystack_tokens for p in record.probes]
    assert all(h is not None and h >= 2000 for h in hay)


def test_the_flagship_suite_is_a_retrieval_test():
    record = memeval.run(f"{ROOT}/specs/agent-memory.yaml", engine="reference")
    stuffing = record.stuffing
    assert stuffing is not None and not stuffing.flagged
    assert stuffing.max_share <= 0.10 and stuffing.probes > 100
