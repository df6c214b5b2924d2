"""`vdg leaderboard --merge`: vdg's columns added to a maintainer's own table (postprocess.leaderboard)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from postprocess.leaderboard import (
    LEADERBOARD_COLUMNS,
    MergeError,
    leaderboard_table,
    merge_leaderboard,
    read_name_map,
    read_their_table,
)
from tests.helpers.reference_data import ORIG_BLACK, reference_predictions
from vdg_tasks.cli import main

FAST = ["--resamples", "200", "--stability-resamples", "50"]


def _ours(*models: str) -> pd.DataFrame:
    """A leaderboard of ``models`` (vdg 0.3, 0.2, ... in that order)."""
    rows = []
    for i, model in enumerate(models):
        row = {c: np.nan for c in LEADERBOARD_COLUMNS}
        row.update(model=model, benchmark="videomme", n=100 + i, acc_orig=0.6, acc_black=0.3 + i / 10)
        row.update(vdg=0.3 - i / 10, vdg_ci_low=0.2 - i / 10, vdg_ci_high=0.4 - i / 10, dc_ratio=np.inf)
        row.update(temporal_vdg_source="", flags="errors" if i else "", missing_policy="exclude", ci_level=0.95)
        row["n_resamples"] = 2000
        rows.append(row)
    return pd.DataFrame(rows, columns=list(LEADERBOARD_COLUMNS))


def _theirs() -> pd.DataFrame:
    return pd.DataFrame(
        {"Model": ["GPT-4o", "Qwen2-VL-7B", "llava"], "Score": ["71.9", "63.3", ""], "Size": [None, 7, 7]},
        index=[10, 11, 12],
    )


def test_merge_keeps_their_table_and_adds_vdg_columns():
    theirs, ours = _theirs(), _ours("qwen2vl", "llava", "internvl2")
    merged, unmatched_theirs, unmatched_ours = merge_leaderboard(theirs, ours, "Model", {"Qwen2-VL-7B": "qwen2vl"})
    pd.testing.assert_frame_equal(merged[list(theirs.columns)], theirs)  # rows, order, index, values, dtypes
    assert list(merged.columns) == [*theirs.columns, *LEADERBOARD_COLUMNS]
    by_model = ours.set_index("model", drop=False)
    for their_index, label in ((11, "qwen2vl"), (12, "llava")):
        got = merged.loc[their_index, list(LEADERBOARD_COLUMNS)]
        pd.testing.assert_series_equal(got, by_model.loc[label, list(LEADERBOARD_COLUMNS)], check_names=False)
    assert merged.loc[10, list(LEADERBOARD_COLUMNS)].isna().all()  # no vdg data: empty, row kept
    assert unmatched_theirs == ["GPT-4o"] and unmatched_ours == ["internvl2"]
    assert merged.attrs["vdg_columns"] == {c: c for c in LEADERBOARD_COLUMNS}


def test_merge_prefixes_colliding_names():
    theirs = pd.DataFrame({"model": ["a", "b"], "vdg": [1, 2], "vdg_vdg": [3, 4], "flags": ["x", ""]})
    merged, _, _ = merge_leaderboard(theirs, _ours("b", "a"), "model")
    rename = merged.attrs["vdg_columns"]
    assert rename["model"] == "vdg_model" and rename["vdg"] == "vdg_vdg_vdg" and rename["flags"] == "vdg_flags"
    assert rename["acc_black"] == "acc_black"
    pd.testing.assert_frame_equal(merged[list(theirs.columns)], theirs)
    assert list(merged.columns) == [*theirs.columns, *rename.values()]
    assert merged["vdg_vdg_vdg"].tolist() == pytest.approx([0.2, 0.3]) and merged["vdg_model"].tolist() == ["a", "b"]


def test_merge_matches_stripped_names_and_blank_cells_stay_unmatched():
    theirs = pd.DataFrame({"name": [" a ", "", None, "zz"]})
    merged, unmatched_theirs, unmatched_ours = merge_leaderboard(theirs, _ours("a", "b"), "name", {"zz": "b"})
    assert merged["model"].tolist()[0] == "a" and merged["model"].tolist()[3] == "b"
    assert unmatched_theirs == ["row 2: empty", "row 3: empty"] and unmatched_ours == []


@pytest.mark.parametrize(
    ("theirs", "names", "ours", "source", "message"),
    [
        ({"Name": ["a"]}, None, ("a",), "theirs", "no column 'Model'"),
        ({"Model": ["a", "b", "a"]}, None, ("a",), "theirs", "names 'a' in more than one row"),
        ({"Model": ["x", "a"]}, {"x": "a"}, ("a",), "names", "rows 'x' and 'a' of column 'Model' both name"),
        ({"Model": ["a"]}, None, ("a", "a"), "ours", "several rows (benchmarks) for model 'a'"),
    ],
)
def test_merge_refuses(theirs, names, ours, source, message):
    with pytest.raises(MergeError, match=message.replace("(", r"\(").replace(")", r"\)")) as info:
        merge_leaderboard(pd.DataFrame(theirs), _ours(*ours), "Model", names)
    assert info.value.source == source


def test_read_their_table_csv_and_json(tmp_path):
    csv_path = tmp_path / "t.csv"
    csv_path.write_text("Model,Score,Size\nA,071.90,\nB,63.3,7B\n")
    table = read_their_table(csv_path)
    assert table.to_dict("list") == {"Model": ["A", "B"], "Score": ["071.90", "63.3"], "Size": ["", "7B"]}
    records = [{"Model": "A", "Score": 71.9}, {"Model": "B", "Size": 7}]
    expected = {"Model": ["A", "B"], "Score": [71.9, None], "Size": [None, 7]}
    layouts = {
        "records.json": records,
        "split.json": {"columns": list(expected), "index": [0, 1], "data": [["A", 71.9, None], ["B", None, 7]]},
        "rows.json": {"columns": {"Model": "their name"}, "rows": records},
    }
    for name, payload in layouts.items():
        (tmp_path / name).write_text(json.dumps(payload))
        got = read_their_table(tmp_path / name)
        assert list(got.columns) == ["Model", "Score", "Size"], name
        assert got.astype(object).where(got.notna(), None).to_dict("list") == expected, name
    pandas_split = tmp_path / "pandas_split.json"
    pd.DataFrame(expected).to_json(pandas_split, orient="split")
    assert list(read_their_table(pandas_split)["Model"]) == ["A", "B"]
    pandas_records = tmp_path / "pandas_records.json"
    pd.DataFrame(expected).to_json(pandas_records, orient="records")
    assert list(read_their_table(pandas_records)["Model"]) == ["A", "B"]


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        ("t.json", "{not json", "cannot read"),
        ("t.json", '{"a": {"0": 1}}', "expected a list of records"),
        ("t.json", "[1, 2]", "record 1 is not an object"),
        ("t.json", '{"columns": ["a"], "data": [[1, 2]]}', "data row 1 is not a list of 1 values"),
        ("t.xlsx", "", "is .csv or .json"),
        ("missing.csv", None, "cannot read"),
    ],
)
def test_read_their_table_refuses(tmp_path, name, text, message):
    path = tmp_path / name
    if text is not None:
        path.write_text(text)
    with pytest.raises(ValueError, match=message) as info:
        read_their_table(path)
    assert str(path) in str(info.value)


def test_read_name_map(tmp_path):
    path = tmp_path / "names.csv"
    path.write_text("their_name,vdg_model,note\n Qwen2-VL-7B , qwen2vl,x\n\nLLaVA-OV,llava,\n")
    assert read_name_map(path) == {"Qwen2-VL-7B": "qwen2vl", "LLaVA-OV": "llava"}
    for text, message in (
        ("name,model\na,b\n", "header must name their_name,vdg_model"),
        ("their_name,vdg_model\na,b\na,c\n", "duplicate their_name 'a'"),
        ("their_name,vdg_model\na,b\nc,b\n", "duplicate vdg_model 'b'"),
        ("their_name,vdg_model\na,\n", "line 2 lacks its vdg_model"),
    ):
        path.write_text(text)
        with pytest.raises(ValueError, match=message) as info:
            read_name_map(path)
        assert str(path) in str(info.value)


# ---------------------------------------------------------------------- end to end: reference data


def _args(*extra: str) -> list[str]:
    predictions = [x for m, p in reference_predictions(files=ORIG_BLACK) for x in ("--predictions", f"{m}={p}")]
    return ["leaderboard", *predictions, "--benchmark", "videomme", *FAST, *extra]


@pytest.fixture(scope="module")
def plain(tmp_path_factory):
    path = tmp_path_factory.mktemp("plain") / "board.csv"
    assert main(_args("--out", str(path))) == 0
    return pd.read_csv(path, keep_default_na=False, na_values=[""]).set_index("model", drop=False)


def test_cli_merge_csv_with_map(tmp_path, capsys, plain):
    theirs = tmp_path / "theirs.csv"
    theirs.write_text("Model,Params,Video-MME\nQwen2-VL-7B,7B,63.3\nGPT-4o,,71.9\nLLaVA-OneVision-7B,7B,58.2\n")
    names = tmp_path / "names.csv"
    names.write_text("their_name,vdg_model\nQwen2-VL-7B,qwen2vl\nLLaVA-OneVision-7B,llava\n")
    out = tmp_path / "merged.csv"
    args = _args("--merge", str(theirs), "--on", "Model", "--map", str(names), "--out", str(out))
    assert main(args) == 0
    captured = capsys.readouterr()
    assert captured.out.strip() == str(out)
    assert f"no vdg data for 1 row(s) of {theirs}" in captured.err and "GPT-4o" in captured.err
    assert "1 vdg model(s) not in" in captured.err and "internvl2" in captured.err
    merged = pd.read_csv(out, dtype=str, keep_default_na=False)
    original = read_their_table(theirs)
    pd.testing.assert_frame_equal(merged[list(original.columns)], original)
    assert list(merged.columns) == [*original.columns, *LEADERBOARD_COLUMNS]
    values = pd.read_csv(out, keep_default_na=False, na_values=[""])
    for row, label in ((0, "qwen2vl"), (2, "llava")):
        got, want = values.loc[row, list(LEADERBOARD_COLUMNS)], plain.loc[label, list(LEADERBOARD_COLUMNS)]
        pd.testing.assert_series_equal(got, want, check_names=False, check_dtype=False)
    assert values.loc[1, list(LEADERBOARD_COLUMNS)].isna().all()


def test_cli_merge_json_in_json_and_md_out(tmp_path, capsys, plain):
    theirs = tmp_path / "theirs.json"
    theirs.write_text(json.dumps({"columns": ["model", "vdg"], "data": [["llava", "n/a"], ["internvl2", 1]]}))
    out = tmp_path / "merged.json"
    assert main(_args("--merge", str(theirs), "--on", "model", "--out", str(out))) == 0
    capsys.readouterr()
    data = json.loads(out.read_text())
    assert data["on"] == "model" and data["unmatched"] == {"theirs": [], "vdg": ["qwen2vl"]}
    assert [r["model"] for r in data["rows"]] == ["llava", "internvl2"] and data["rows"][0]["vdg"] == "n/a"
    assert data["rows"][1]["vdg"] == 1 and data["rows"][1]["vdg_model"] == "internvl2"
    assert data["rows"][0]["vdg_vdg"] == pytest.approx(plain.loc["llava", "vdg"])
    assert data["rows"][0]["acc_black"] == pytest.approx(plain.loc["llava", "acc_black"])
    assert set(data["columns"]) == {
        "vdg_model",
        "vdg_vdg",
        *(c for c in LEADERBOARD_COLUMNS if c not in ("model", "vdg")),
    }
    md = tmp_path / "merged.md"
    assert main(_args("--merge", str(theirs), "--on", "model", "--out", str(md))) == 0
    text = md.read_text()
    assert text.startswith("# vdg leaderboard (merged)") and "| n/a " in text and "vdg_vdg [CI]" in text
    assert "vdg models not in the table: qwen2vl." in text


def test_cli_merge_errors(tmp_path, capsys):
    theirs = tmp_path / "theirs.csv"
    theirs.write_text("Model,Score\nA,1\nA,2\n")
    out = str(tmp_path / "m.csv")
    cases = [
        (["--merge", str(theirs), "--out", out], f"--merge {theirs}: name its model-name column with --on"),
        (["--on", "Model", "--out", out], "--on goes with --merge"),
        (["--merge", str(theirs), "--on", "Name", "--out", out], f"--merge {theirs}: no column 'Name'"),
        (["--merge", str(theirs), "--on", "Model", "--out", out], f"--merge {theirs}: column 'Model' names 'A'"),
        (["--merge", str(tmp_path / "nope.csv"), "--on", "Model", "--out", out], "nope.csv: cannot read"),
    ]
    names = tmp_path / "names.csv"
    names.write_text("their_name,vdg_model\nA,llava\nB,llava\n")
    cases.append(
        (["--merge", str(theirs), "--on", "Model", "--map", str(names), "--out", out], f"{names}: duplicate vdg_model")
    )
    for extra, message in cases:
        assert main(_args(*extra)) == 2, extra
        err = capsys.readouterr().err
        assert err.startswith("vdg leaderboard: ") and message in err, (extra, err)
    assert not (tmp_path / "m.csv").exists()


def test_leaderboard_table_of_nothing_has_the_columns():
    assert list(leaderboard_table({}).columns) == list(LEADERBOARD_COLUMNS)
