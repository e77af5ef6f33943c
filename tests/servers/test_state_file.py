"""The fake CortexDB's ``--data`` state file, in process."""

from __future__ import annotations

from pathlib import Path

from memeval.servers.fake_cortex import beliefs as cortex_beliefs

from memeval.servers.fake_cortex import forget as cortex_forget

from memeval.servers.fake_cortex import ops as cortex_ops
from memeval.servers.fake_cortex.config import FakeCortexConfig
from memeval.servers.fake_cortex.core import Core
from memeval.servers.fake_cortex.faults import Faults
from memeval.servers.fake_cortex.store import Store


def test_the_state_file_is_rewritten_on_a_change_only(tmp_path: Path) -> None:
    config = FakeCortexConfig(index_delay=0, data_file=tmp_path / "state.json")
    core = Core(config, Store.load(config.data_file), Faults(config.faults, config.index_delay))
    body = {
        "scope": "app:a",
        "modality": "conversation",
        "idempotency_key": "k-1",
        "content": {"kind": "message", "role": "user", "text": "Alice moved to Berlin."},
    }
    cortex_ops.append_many(core, [body])
    written = config.data_file.stat().st_ino  # every save replaces the file: a new inode
    assert cortex_ops.append_many(core, [body])[0].replayed
    cortex_forget.forget(core, {"scope": "app:b", "confirm_all": True})
    cortex_beliefs.build_beliefs(core, "app:b")
    assert config.data_file.stat().st_ino == written
    cortex_forget.forget(core, {"scope": "app:a", "confirm_all": True, "cascade": "redact_events"})
    assert config.data_file.stat().st_ino != written
    assert Store.load(config.data_file).events == {}
