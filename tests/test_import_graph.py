"""The import graph of vdg's packages has no circle, and no module takes another's private names.

Every import counts, at the top of a module or inside a function: a circle closed by a lazy import
is still a circle (each side needs the other to be understood or moved).
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("vdg_tasks", "postprocess", "model_wrappers")


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules() -> dict[str, Path]:
    return {module_name(p): p for package in PACKAGES for p in sorted((ROOT / package).rglob("*.py"))}


def imported(path: Path, name: str, known: set[str]) -> set[str]:
    """The modules of ``known`` that the module ``name`` at ``path`` imports anywhere in its code."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            # ``from pkg import sub`` imports the submodule where one exists, else a name of pkg
            targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base for alias in node.names]
        else:
            continue
        for target in targets:
            while target and target not in known:  # ``import a.b.c`` of a name inside a module
                target = target.rpartition(".")[0]
            if target and target != name:
                out.add(target)
    return out


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph[node]):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def import_graph() -> dict[str, set[str]]:
    known = modules()
    return {name: imported(path, name, set(known)) for name, path in known.items()}


def test_the_finder_sees_a_circle_closed_by_a_lazy_import(tmp_path):
    """A control: two modules importing each other, one of them inside a function."""
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("from pkg.b import thing\n")
    (package / "b.py").write_text("def thing():\n    from . import a\n    return a\n")
    (package / "c.py").write_text("import pkg.a\n")
    known = {"pkg", "pkg.a", "pkg.b", "pkg.c"}
    graph = {
        name: imported(package / (name.split(".")[-1] + ".py" if "." in name else "__init__.py"), name, known)
        for name in known
    }
    assert graph["pkg.b"] == {"pkg.a"} and graph["pkg.a"] == {"pkg.b"} and graph["pkg.c"] == {"pkg.a"}
    assert circles(graph) == [["pkg.a", "pkg.b"]]


def test_no_module_of_vdg_imports_itself_back_through_others():
    graph = import_graph()
    assert len(graph) > 70 and graph["vdg_tasks.lmms.hooks"]  # the walk found the modules and their imports
    assert circles(graph) == []


def private_imports(path: Path, known: set[str]) -> list[str]:
    """``from vdg_module import _name`` and ``vdg_module._name`` in the code at ``path``."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    found, modules_here = [], set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.level or (node.module or "").split(".")[0] in PACKAGES):
            for alias in node.names:
                if f"{node.module}.{alias.name}" in known:
                    modules_here.add(alias.asname or alias.name)
                elif alias.name.startswith("_") and not alias.name.startswith("__"):
                    found.append(f"{path.name}:{node.lineno}: from {node.module} import {alias.name}")
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id in modules_here
            and node.attr.startswith("_")
            and not node.attr.startswith("__")
        ):
            found.append(f"{path.name}:{node.lineno}: {node.value.id}.{node.attr}")
    return found


def test_the_private_name_finder_sees_both_spellings(tmp_path):
    code = tmp_path / "user.py"
    code.write_text(
        "from vdg_tasks.perturb import cache\nfrom vdg_tasks.perturb.cache import _helper, public\ncache._other()\n"
    )
    assert private_imports(code, {"vdg_tasks.perturb.cache"}) == [
        "user.py:2: from vdg_tasks.perturb.cache import _helper",
        "user.py:3: cache._other",
    ]


def test_no_module_imports_a_private_name_of_another():
    known = modules()
    assert [hit for path in known.values() for hit in private_imports(path, set(known))] == []


#: The import contract: each room of vdg and what it may import of vdg (besides itself). The vocabulary
#: imports nothing of vdg; postprocess and model_wrappers only the vocabulary; only the CLI both sides (and the
#: report's input path the two modules ``BRIDGES`` names).
ROOMS: dict[str, frozenset[str]] = {
    "vdg_tasks.vocabulary": frozenset(),
    "vdg_tasks.data": frozenset({"vdg_tasks.vocabulary"}),
    "vdg_tasks.synthetic": frozenset({"vdg_tasks.vocabulary"}),
    "vdg_tasks.perturb": frozenset({"vdg_tasks.vocabulary", "vdg_tasks.data"}),
    "vdg_tasks.lmms": frozenset({"vdg_tasks.vocabulary", "vdg_tasks.data", "vdg_tasks.perturb"}),
    "vdg_tasks.jobs": frozenset({"vdg_tasks.vocabulary", "vdg_tasks.data", "vdg_tasks.perturb", "vdg_tasks.lmms"}),
    "vdg_tasks.cli": frozenset(
        {
            "vdg_tasks.vocabulary",
            "vdg_tasks.data",
            "vdg_tasks.synthetic",
            "vdg_tasks.perturb",
            "vdg_tasks.lmms",
            "vdg_tasks.jobs",
            "postprocess",
        }
    ),
    "vdg_tasks.extend": frozenset({"vdg_tasks.vocabulary"}),
    "postprocess": frozenset({"vdg_tasks.vocabulary"}),
    "model_wrappers": frozenset({"vdg_tasks.vocabulary"}),
}
#: Modules held to less than their room: vdg's own conditions written through the public API import nothing of vdg
#: but that API, as a user's module would.
ONLY: dict[str, frozenset[str]] = {"vdg_tasks.extend.shipped": frozenset({"vdg_tasks.extend"})}
#: Modules allowed named modules beyond their room. The report's one input path (vdg report, vdg leaderboard and
#: postprocess.build_report all read through it) reads question-set files and a plain base-task run as its orig, which
#: the task side declares; nothing else of postprocess reaches past the vocabulary.
BRIDGES: dict[str, frozenset[str]] = {
    "postprocess.reading.inputs": frozenset({"vdg_tasks.data.question_sets", "vdg_tasks.jobs.base_runs"}),
}
#: The package's own front (its lazy public names) and the front doors kept for the dotted paths that files
#: made by earlier versions name: each imports the one module it stands for.
FRONTS: dict[str, frozenset[str]] = {
    "vdg_tasks": frozenset({"vdg_tasks.vocabulary.conditions", "vdg_tasks.perturb.cache"}),
    "vdg_tasks.sources": frozenset({"vdg_tasks.lmms.dataset_fields"}),
    **{
        f"vdg_tasks.{name}": frozenset({f"vdg_tasks.{room}.{name}"})
        for room, name in [
            ("lmms", "hooks"),
            ("lmms", "synth_tasks"),
            ("lmms", "infinibench_tasks"),
            ("lmms", "derive"),
            ("jobs", "export"),
            ("data", "benchmarks"),
        ]
    },
}


def room_of(module: str) -> str | None:
    return next((room for room in ROOMS if module == room or module.startswith(f"{room}.")), None)


def contract_breaches(graph: dict[str, set[str]]) -> list[str]:
    """``importer -> imported`` for every import of vdg the contract does not allow."""
    found = []
    for module, targets in sorted(graph.items()):
        if module in FRONTS:
            found += [f"{module} -> {t} (a front imports only what it stands for)" for t in targets - FRONTS[module]]
            continue
        if module in ONLY:
            found += [
                f"{module} -> {t} (it imports only {', '.join(sorted(ONLY[module]))})" for t in targets - ONLY[module]
            ]
            continue
        room = room_of(module)
        if room is None:
            found.append(f"{module}: in no room of the contract")
            continue
        for target in sorted(targets - BRIDGES.get(module, frozenset())):
            target_room = room_of(target) or target
            if target_room != room and target_room not in ROOMS[room]:
                found.append(f"{module} -> {target}")
    return found


def test_the_contract_sees_a_breach():
    """A control: the vocabulary importing the hooks, postprocess importing materialize (the report's input path
    too: its bridge names two modules, not the task side), an unknown module, the shipped conditions importing past
    the public API."""
    graph = {
        "vdg_tasks.vocabulary.conditions": {"vdg_tasks.lmms.hooks"},
        "postprocess.reading.lmms_eval_logs": {"vdg_tasks.vocabulary.parse", "vdg_tasks.jobs.materialize"},
        "postprocess.reading.inputs": {"vdg_tasks.jobs.base_runs", "vdg_tasks.jobs.materialize"},
        "vdg_tasks.newroom.thing": set(),
        "vdg_tasks.hooks": {"vdg_tasks.lmms.hooks", "vdg_tasks.jobs.export"},
        "vdg_tasks.extend.shipped": {"vdg_tasks.extend", "vdg_tasks.vocabulary.conditions"},
    }
    assert contract_breaches(graph) == [
        "postprocess.reading.inputs -> vdg_tasks.jobs.materialize",
        "postprocess.reading.lmms_eval_logs -> vdg_tasks.jobs.materialize",
        "vdg_tasks.extend.shipped -> vdg_tasks.vocabulary.conditions (it imports only vdg_tasks.extend)",
        "vdg_tasks.hooks -> vdg_tasks.jobs.export (a front imports only what it stands for)",
        "vdg_tasks.newroom.thing: in no room of the contract",
        "vdg_tasks.vocabulary.conditions -> vdg_tasks.lmms.hooks",
    ]


def test_every_import_of_vdg_follows_the_contract():
    graph = import_graph()
    assert {room_of(m) for m in graph} >= set(ROOMS)  # every room exists
    assert contract_breaches(graph) == []
