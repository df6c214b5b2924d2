"""The documentation's condition tables list every declared condition (the CRF family as one row)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from vdg_tasks.extend.shipped import SHORT_SIDES
from vdg_tasks.vocabulary.conditions import CONDITIONS, CRF_LEVELS, JPEG_QUALITIES

ROOT = Path(__file__).resolve().parents[1]


def table_conditions(markdown: str) -> set[str]:
    """Condition names in the first column of ``| `name` | ... |`` rows; a ``crfA` ... `crfB`` row is every level
    (``jpegA` ... `jpegB``: every quality; ``downscaleA` ... `downscaleB``: every short side; ``options_rotated1` ...
    `options_rotatedK``: every rotation up to K)."""
    names: set[str] = set()
    for line in markdown.splitlines():
        match = re.match(r"\|\s*`(\w+)`(?:\s*\.\.\.\s*`(\w+)`)?\s*\|", line)
        if not match:
            continue
        names.add(match.group(1))
        if match.group(2):
            family = match.group(1).rstrip("0123456789")
            last = match.group(2).removeprefix(family)
            ladder = {"crf": CRF_LEVELS, "jpeg": JPEG_QUALITIES, "downscale": SHORT_SIDES}.get(family)
            ladder = range(1, int(last) + 1) if family == "options_rotated" else ladder
            names |= {f"{family}{level}" for level in ladder}
    return names


def test_the_table_reader_sees_a_family_row():
    text = "| condition | shown |\n|---|---|\n| `orig` | x |\n| `crf18` ... `crf38` | y |\n| other | z |\n"
    assert table_conditions(text) == {"orig", *(f"crf{level}" for level in CRF_LEVELS)}


@pytest.mark.parametrize("document", ["README.md", "docs/usage.md"])
def test_every_declared_condition_is_in_the_conditions_table(document):
    listed = table_conditions((ROOT / document).read_text(encoding="utf-8"))
    assert set(CONDITIONS) - listed == set(), f"{document} lacks a row for these conditions"


#: The names lmms-eval 0.7.3 gives its probing variants' folders (``tasks/<benchmark>/<name>/``).
PROBE_FOLDERS = ("no_visual", "random_choice", "gt_none_option", "number_option", "video_only_abcd", "revert_oe_mcq",
                 "convert_mcq_oe")  # fmt: skip


def test_the_readme_maps_every_probe_folder_of_the_installed_lmms_eval_to_a_declared_condition():
    from vdg_tasks.data.upstream import lmms_eval_tasks_dir

    tasks = lmms_eval_tasks_dir()
    folders = sorted(
        f"{p.parent.name}/{p.name}" for name in PROBE_FOLDERS for p in tasks.glob(f"*/{name}") if p.is_dir()
    )
    assert len(folders) >= 15  # 0.7.3 ships 18
    rows = [line for line in (ROOT / "README.md").read_text(encoding="utf-8").splitlines() if line.startswith("| `")]
    for folder in folders:
        row = next((line for line in rows if f"`{folder}`" in line), None)
        assert row is not None, f"README.md maps no vdg condition to lmms-eval's {folder}"
        condition = re.search(r"\|\s*`(\w+)`[^|]*\|\s*$", row)
        assert condition is not None and condition.group(1) in CONDITIONS, row


def test_the_readme_keeps_within_the_cap_it_states():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    stated = re.search(r"capped at ([\d,]+) characters", text)
    assert stated is not None, "README.md no longer states its cap"
    assert len(text) <= int(stated.group(1).replace(",", "")), "README.md is over its cap: move detail to docs/"
