"""An export whose rows were edited, evaluated by the real lmms-eval CLI (``--log_samples``) with its ``openai`` model
class against the loopback OpenAI-compatible server of ``test_api_model``, and with ``vdg_probe``.

A vdgsynth export (``vdgsynth_vdg_orig``, three videos) is edited after it was written: three rows of the first
video point outside the export (an absolute path, ``../``, a symlink out) at a private video of one distinctive
colour (magenta), and the second video's file is swapped for that same valid video (a digest mismatch). The
manifest's sha256 of the edited data file is rewritten to match (were it not, every row of the export would be an
error row: ``test_export_trust``), so each row's own checks are what stop it. Those questions must be ``error`` rows
naming why, the rest scored, and no request the server received may carry a single magenta frame.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import av
import numpy as np
import pytest

from tests.e2e.test_api_model import API_KEY, MODEL_ARGS, ChatCompletionsServer, images
from tests.helpers.runs import lmms_eval, offline_env
from vdg_tasks.data.export_folder import ROWS, rows_sha256
from vdg_tasks.lmms.yamlgen import write_all
from vdg_tasks.synthetic.synth import generate

pytestmark = pytest.mark.slow

NAME = "untrusted-x"
TASK = "vdgsynth_vdg_orig"
MAGENTA = (255, 0, 255)


def solid_video(path: Path, rgb: tuple[int, int, int], n_frames: int = 48, size: tuple[int, int] = (96, 72)) -> Path:
    """A valid H.264 video, every frame one colour."""
    path.parent.mkdir(parents=True, exist_ok=True)
    frame = np.empty((size[1], size[0], 3), np.uint8)
    frame[:] = rgb
    with av.open(str(path), "w") as out:
        stream = out.add_stream("libx264", rate=8)
        stream.width, stream.height, stream.pix_fmt = size[0], size[1], "yuv420p"
        for _ in range(n_frames):
            for packet in stream.encode(av.VideoFrame.from_ndarray(frame, format="rgb24")):
                out.mux(packet)
        for packet in stream.encode():
            out.mux(packet)
    return path


def magenta(picture: np.ndarray) -> bool:
    """Most of the picture is magenta (after the class's resize and PNG/JPEG encoding)."""
    near = np.abs(picture.astype(int) - np.array(MAGENTA)).max(axis=-1) < 60
    return bool(near.mean() > 0.5)


def _rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


@pytest.fixture(scope="module")
def tampered(tmp_path_factory):
    from vdg_tasks.jobs.export import export

    root = tmp_path_factory.mktemp("untrusted")
    jsonl = generate(root / "data", n_videos=3, seed=0, width=96, height=72, seconds=8)
    write_all(root / "tasks", synth_data=str(jsonl))
    env = {k: v for k, v in offline_env(root).items() if k != "VDG_EXPORTS"}
    with pytest.MonkeyPatch.context() as mp:
        for key in ("HF_HOME", "VDG_CACHE", "HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE"):
            mp.setenv(key, env[key])
        mp.delenv("VDG_EXPORTS", raising=False)
        result = export([TASK], root / "export", name=NAME, yaml_root=root / "tasks")
    private = solid_video(root / "private" / "secret.mp4", MAGENTA)
    shutil.copyfile(private, root / "outside.mp4")  # beside the export: ../outside.mp4
    out = result.out
    os.symlink(private, out / "videos" / "link.mp4")

    data = out / "data" / f"{TASK}.jsonl"
    rows = _rows(data)
    first, second = sorted({r["videoID"] for r in rows})[:2]
    edits = iter([("absolute", str(private)), ("dotdot", "../outside.mp4"), ("symlink", "videos/link.mp4")])
    hostile: dict[str, str] = {}
    for row in rows:
        if row["videoID"] == first and (edit := next(edits, None)) is not None:
            row["vdg_export"]["video_file"] = edit[1]
            hostile[row["question_id"]] = edit[0]
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    manifest = json.loads((out / "export.json").read_text())
    manifest[ROWS][f"data/{TASK}.jsonl"] = rows_sha256(rows)  # the edited rows listed: each row's checks must hold
    (out / "export.json").write_text(json.dumps(manifest, indent=1) + "\n")
    # The second video's file swapped for another valid video (unlinked first: the export hard-links sources).
    swapped = out / next(r["vdg_export"]["video_file"] for r in rows if r["videoID"] == second)
    swapped.unlink()
    shutil.copyfile(private, swapped)
    hostile |= {r["question_id"]: "swapped" for r in rows if r["videoID"] == second}

    with ChatCompletionsServer() as server:
        run_env = {k: v for k, v in env.items() if not k.startswith(("OPENAI_", "LMMS_IMAGE_"))}
        run_env |= {
            "OPENAI_API_KEY": API_KEY,
            "OPENAI_API_BASE": server.base_url,
            "NO_PROXY": "127.0.0.1,localhost",
            "no_proxy": "127.0.0.1,localhost",
        }
        run = lmms_eval(run_env, root / "runs", result.tasks_dir, "openai", TASK, "--model_args", MODEL_ARGS)
        requests = list(server.requests)
    probe_run = lmms_eval(env, root / "probe_runs", result.tasks_dir, "vdg_probe", TASK)

    def records_of(folder: Path) -> list[dict]:
        return [
            json.loads(line)["vdg"]
            for path in sorted(folder.rglob("*_samples_*.jsonl"))
            for line in path.read_text().splitlines()
            if line.strip()
        ]

    return {
        "records": records_of(run),
        "probe_records": records_of(probe_run),
        "requests": requests,
        "hostile": hostile,
        "rows": rows,
        "private": private,
    }


@pytest.mark.parametrize("model", ["openai", "vdg_probe"])
def test_edited_rows_are_error_rows_naming_why_and_the_rest_are_scored(tampered, model):
    records = {r["question_id"]: r for r in tampered["records" if model == "openai" else "probe_records"]}
    assert set(records) == {r["question_id"] for r in tampered["rows"]}
    reasons = {
        "absolute": "it is absolute",
        "dotdot": "climbs out",
        "symlink": "symlink out",
        "swapped": "replaced or edited after the export",
    }
    assert set(tampered["hostile"].values()) == set(reasons)
    for qid, rec in records.items():
        if qid in tampered["hostile"]:
            assert rec["status"] == "error", rec
            assert reasons[tampered["hostile"][qid]] in rec["error"], rec["error"]
            assert rec.get("score") is None
        else:
            assert rec["status"] in ("ok", "open") and not rec.get("error"), rec
    assert sum(qid not in tampered["hostile"] for qid in records) >= 5


def test_no_frame_of_the_file_outside_the_export_reached_the_api(tampered):
    requests = tampered["requests"]
    assert requests and all(r["status"] == 200 for r in requests)
    pictures = [picture for r in requests for _, picture in images(r["body"])]
    assert pictures  # the scored questions were shown their frames
    assert not any(magenta(p) for p in pictures)
    # The check can see magenta: the private video's own frames read as magenta.
    with av.open(str(tampered["private"])) as container:
        assert all(magenta(f.to_ndarray(format="rgb24")) for f in container.decode(video=0))
