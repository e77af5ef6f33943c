"""Matrix files: schema and semantic errors located, inheritance, intended env and flags."""

from __future__ import annotations

import os

import pytest

from memeval.errors import SpecError, UsageError
from memeval.spec.matrix import load_matrix
from memeval.spec.specfile import load_any
from tests.conftest import ROOT
from tests.sweep.conftest import write_matrix


def issues(path: str) -> list[str]:
    with pytest.raises(SpecError) as err:
        load_matrix(path)
    return [f"{i.line}:{i.column} {i.path}: {i.message}" for i in err.value.issues]


def test_a_valid_matrix_loads_with_defaults(tmp_path):
    path = write_matrix(tmp_path, """\
        matrix: small
        flag_prefix: CORTEX_
        baseline: {env: {CORTEX_ENTITY_GRAPH: 1, FAKE_CORTEX_INDEX_DELAY: "0.05"}}
        profiles:
          - {name: baseline}
          - {name: salience-high, env: {CORTEX_SALIENCE_WEIGHT: 0.3, CORTEX_ENTITY_GRAPH: "0"}, targets: [surprise]}
          - {name: paid, requires: [SOME_PAID_KEY]}
        """)
    m = load_matrix(path)
    assert (m.name, m.repeat, m.parallel, m.ports, m.engine.name) == ("small", 1, 1, (3150, 3199), "fake-cortex")
    high = m.profile("salience-high")
    assert m.intended_env(high) == {"CORTEX_ENTITY_GRAPH": "0", "FAKE_CORTEX_INDEX_DELAY": "0.05",
                                    "CORTEX_SALIENCE_WEIGHT": "0.3"}
    assert m.intended_flags(high) == {"CORTEX_ENTITY_GRAPH": "0", "CORTEX_SALIENCE_WEIGHT": "0.3"}
    assert m.missing(m.profile("paid"), {}) == ["SOME_PAID_KEY"]
    assert m.missing(m.profile("paid"), {"SOME_PAID_KEY": "x"}) == []
    assert load_any(path) == "matrix small, 3 profiles"
    with pytest.raises(UsageError, match="did you mean 'salience-high'"):
        m.profile("salience-hgh")


def test_schema_errors_are_located(tmp_path):
    path = write_matrix(tmp_path, """\
        matrix: small
        profiles:
          - {name: baseline, env: {CORTEX_X: [1]}, targets: [acuracy]}
        repeat: 0
        """)
    found = issues(path)
    assert any(f.startswith("5:") and "profiles[0].env.CORTEX_X: expected a string or a number" in f for f in found)
    assert any("profiles[0].targets[0]: 'acuracy' is not one of" in f and "did you mean 'accuracy'" in f for f in found)
    assert any(f.startswith("6:9 repeat: must be ≥ 1") for f in found)


def test_semantic_errors_are_all_reported(tmp_path):
    path = write_matrix(tmp_path, """\
        matrix: small
        baseline: {config: missing.toml}
        profiles:
          - {name: a, env: {COHERE_API_KEY: sk-123}}
          - {name: a, env: {CORTEX_VERIFIER_API_KEY: ""}}
          - {name: b, env: {CORTEX_LLM_APIKEY: x1, DB_PASS: x2, CORTEX_DATABASE_URL: "postgres://u:pw@db/x", CORTEX_DB_CREDENTIALS: x3}}
        parallel: 3
        ports: {from: 4000, to: 4001}
        run_args: {only: [ofice]}
        """)
    found = issues(path)
    assert "4:20 baseline.config: no such config file" in " ".join(found)
    assert any("baseline.config: config: needs config_env:" in f for f in found)
    assert any(f.startswith("6:37 profiles[0].env.COHERE_API_KEY: COHERE_API_KEY looks like a secret") for f in found)
    assert any("profiles[1].name: duplicate profile name 'a'" in f for f in found)
    assert any("ports: 2 port(s) cannot serve parallel: 3" in f for f in found)
    assert any("run_args.only[0]: no scenario 'ofice' in suite mini (did you mean 'office'?)" in f for f in found)
    assert not any("VERIFIER" in f for f in found)
    for name in ("CORTEX_LLM_APIKEY", "DB_PASS", "CORTEX_DATABASE_URL", "CORTEX_DB_CREDENTIALS"):
        assert any(f"profiles[2].env.{name}: {name} looks like a secret" in f for f in found), name


def test_an_engine_without_a_server_block_cannot_be_swept(tmp_path):
    path = os.path.join(tmp_path, "m.yaml")
    with open(path, "w") as fh:
        fh.write(f"matrix: m\nengine: reference\nsuite: {ROOT}/tests/fixtures/mini.yaml\nprofiles: [{{name: a}}]\n")
    assert any("engine: engine reference has no server: block" in f for f in issues(path))


def test_extends_inherits_what_a_matrix_leaves_out(tmp_path):
    write_matrix(tmp_path, """\
        matrix: base
        flag_prefix: CORTEX_
        baseline: {env: {CORTEX_ENTITY_GRAPH: "1"}}
        profiles: [{name: baseline}, {name: no-graph, env: {CORTEX_ENTITY_GRAPH: "0"}}]
        repeat: 3
        """, "base.yaml")
    child = tmp_path / "child.yaml"
    child.write_text("matrix: child\nextends: base.yaml\nrepeat: 1\nrun_args: {enrich_wait_s: 0}\n")
    m = load_matrix(str(child))
    assert (m.name, m.repeat, m.flag_prefix, [p.name for p in m.profiles]) == ("child", 1, "CORTEX_", ["baseline", "no-graph"])
    assert m.run_args.argv() == ["--enrich-wait", "0"]
    loop = tmp_path / "loop.yaml"
    loop.write_text("matrix: loop\nextends: loop.yaml\n")
    assert any("extends: extends itself" in f for f in issues(str(loop)))
    orphan = tmp_path / "orphan.yaml"
    orphan.write_text("matrix: orphan\n")
    assert {f.split(": ", 1)[1] for f in issues(str(orphan))} == {
        f"missing required key {k!r} (or extends: a matrix that has it)" for k in ("engine", "suite", "profiles")}


def test_the_shipped_cortex_matrices_hold_the_seventeen_profiles():
    real, fake = (load_matrix(os.path.join(ROOT, "specs", f)) for f in ("cortex-flags.yaml", "cortex-flags-fake.yaml"))
    names = ["baseline", "no-graph", "no-auto-route", "no-hyde-multihop", "salience-high", "surprise-strict",
             "surprise-loose", "bitemporal-enforce", "bitemporal-off", "no-polarity-recheck", "layers-incremental",
             "no-verifier", "enrich-batched", "no-learning-loop", "rerank-cohere", "max-recall", "cost-optimized"]
    assert [p.name for p in real.profiles] == names and fake.profiles == real.profiles
    assert (real.engine.name, fake.engine.name) == ("cortex", "fake-cortex")
    assert real.profile("rerank-cohere").requires == ("COHERE_API_KEY",)
