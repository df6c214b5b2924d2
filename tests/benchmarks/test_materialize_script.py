"""benchmarks/materialize.py's section 5: each API condition against crf18 (re-encodes) or a full decode (mute)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

from vdg_tasks.vocabulary.conditions import CONDITIONS

ROOT = Path(__file__).resolve().parents[2]


def _script():
    spec = importlib.util.spec_from_file_location("materialize_script", ROOT / "benchmarks" / "materialize.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_the_api_rows_give_each_declared_condition_its_ratio_against_its_reference():
    measured = {
        "360p": {
            "full decode": (1.5, 65.0, 3.0),
            "crf18": (20.0, 140.0, 6.0),
            "crf23": (15.0, 140.0, 4.0),  # vdg's own: no row
            "blur": (22.0, 150.0, 4.5),
            "mute": (0.12, 80.0, 3.0),
        }
    }
    lines = _script()._api_rows(measured, CONDITIONS)
    rows = {line.split()[1]: line.split() for line in lines[1:]}
    assert set(rows) == {"blur", "mute"}
    assert rows["blur"][4:] == ["crf18", "1.100", "0.750"]  # 22 / 20 s; 4.5 / 6 MB
    assert rows["mute"][4:] == ["full", "decode", "0.080"]  # 0.12 / 1.5 s
    assert _script()._api_rows({"360p": {"blur": (22.0, 150.0, 4.5)}}, CONDITIONS)[1].endswith("(no crf18)")
