"""The import graph follows the layers: core <- fast <- env layer <- agents <- apps (agents
also use fast directly).

Built from the AST of every module, so imports at any depth count (inside functions, under
``if TYPE_CHECKING``, in ``try`` blocks), and so do ``importlib.import_module("...")`` and
``__import__("...")`` calls with a literal name and ``"spider_env.x:Name"`` entry-point strings:

* ``spider_env/core/*`` imports only the standard library and ``spider_env.core``;
* ``spider_env/fast/*`` (the compiled core) imports the standard library, core, itself, numpy
  and numba;
* the env layer (``spider_env/__init__.py``, env, observation, rewards, render, wrappers,
  registration, vector, sb3) imports the standard library, core, fast, the env layer, numpy and
  gymnasium (and ``spider_env.sb3``, the Stable-Baselines3 adapter, stable_baselines3),
  never ``spider_env.apps`` or ``spider_env.agents``, except the
  one lazy ``__getattr__`` of ``spider_env/__init__.py`` that loads
  ``spider_env.apps.evaluation.evaluate`` on first use;
* ``agents/`` (installed as ``spider_env.agents``) imports the standard library, core, the
  compiled core ``spider_env.fast`` (the expert agent's solver), the env layer, itself, numpy,
  gymnasium (the RL recipe's observation wrapper), tqdm and the optional ML libraries, never
  ``spider_env.apps`` (nor numba itself: only through fast);
* ``spider_env/apps/*`` may import anything of the project;
* nothing (package, tests, examples, benchmarks) imports ``agents`` as a top-level name: that
  name belongs to the OpenAI Agents SDK (issue 13).

A module that belongs to no layer fails too: a new module gets its layer here.
"""

from __future__ import annotations

import ast
import re
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
STDLIB = frozenset(sys.stdlib_module_names)

ENV_LAYER = frozenset(
    {
        "spider_env",
        "spider_env.env",
        "spider_env.observation",
        "spider_env.rewards",
        "spider_env.render",
        "spider_env.wrappers",
        "spider_env.registration",
        "spider_env.vector",
        "spider_env.sb3",
    }
)
# Third-party top-level names each layer may import (the standard library is always allowed
# except in core, which gets nothing else).
ENV_THIRD_PARTY = frozenset({"numpy", "gymnasium"})
FAST_THIRD_PARTY = frozenset({"numpy", "numba"})
# The env layer's one adapter to an optional library (the `train` extra), imported only there.
ENV_ADAPTERS = {"spider_env.sb3": frozenset({"stable_baselines3"})}
# gymnasium: the RL recipe's observation wrapper (agents.action_features) and training envs;
# tqdm: progress of recorded demonstrations
AGENTS_THIRD_PARTY = frozenset(
    {"numpy", "gymnasium", "tqdm", "stable_baselines3", "sb3_contrib", "torch"}
)
# The one documented edge from the env layer up to apps: `spider_env.evaluate`, loaded lazily.
LAZY_EVALUATE = ("spider_env", "__getattr__", "spider_env.apps.evaluation", "evaluate")
ENTRY_POINT = re.compile(r"(spider_env|agents)(\.\w+)*:\w+(\.\w+)*")


@dataclass(frozen=True)
class Edge:
    """One import: ``source`` (module name, file, line) imports module ``target``."""

    source: str
    path: str
    line: int
    target: str
    names: tuple[str, ...] = ()  # what a `from target import ...` takes
    function: str | None = None  # innermost enclosing function, if any

    def __str__(self) -> str:
        names = f" ({', '.join(self.names)})" if self.names else ""
        where = f" in {self.function}()" if self.function else ""
        return f"{self.path}:{self.line}: {self.source} -> {self.target}{names}{where}"


def layer_of(module: str) -> str | None:
    """``core``, ``fast``, ``env``, ``agents``, ``apps`` or None for a module of no layer."""
    for layer in ("core", "fast", "agents", "apps"):
        prefix = f"spider_env.{layer}"
        if module == prefix or module.startswith(prefix + "."):
            return layer
    return "env" if module in ENV_LAYER else None


def _resolve_relative(module: str, is_package: bool, level: int, name: str | None) -> str:
    parts = module.split(".") if is_package else module.split(".")[:-1]
    if level - 1 > len(parts) - 1:
        raise ValueError(f"relative import beyond the top-level package in {module}")
    base = parts[: len(parts) - (level - 1)]
    return ".".join([*base, name] if name else base)


class _Collector(ast.NodeVisitor):
    def __init__(self, module: str, is_package: bool, path: str, known: frozenset[str]) -> None:
        self.module, self.is_package, self.path, self.known = module, is_package, path, known
        self.functions: list[str] = []
        self.edges: list[Edge] = []

    def _add(self, node: ast.AST, target: str, names: tuple[str, ...] = ()) -> None:
        function = self.functions[-1] if self.functions else None
        line = getattr(node, "lineno", 0)
        self.edges.append(Edge(self.module, self.path, line, target, names, function))

    def _function(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> None:
        self.functions.append(getattr(node, "name", "<lambda>"))
        self.generic_visit(node)
        self.functions.pop()

    visit_FunctionDef = visit_AsyncFunctionDef = visit_Lambda = _function

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self._add(node, alias.name)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        if node.level:
            target = _resolve_relative(self.module, self.is_package, node.level, node.module)
        else:
            target = node.module or ""
        names = tuple(alias.name for alias in node.names)
        self._add(node, target, names)
        for name in names:  # `from pkg import submodule` also imports pkg.submodule
            if f"{target}.{name}" in self.known:
                self._add(node, f"{target}.{name}")

    def visit_Constant(self, node: ast.Constant) -> None:
        # "module:attr" entry points (gymnasium.register, wrapper specs) import when used
        if isinstance(node.value, str) and ENTRY_POINT.fullmatch(node.value):
            self._add(node, node.value.partition(":")[0])

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
        if called in ("import_module", "__import__") and node.args:
            arg = node.args[0]
            if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                name = arg.value
                if name.startswith("."):
                    level = len(name) - len(name.lstrip("."))
                    rest = name.lstrip(".") or None
                    name = _resolve_relative(self.module, self.is_package, level, rest)
                self._add(node, name)
        self.generic_visit(node)


def imports_of(
    source: str,
    module: str,
    *,
    is_package: bool = False,
    path: str = "<string>",
    known: frozenset[str] = frozenset(),
) -> list[Edge]:
    """Every import in ``source``, the text of module ``module``, at any depth."""
    collector = _Collector(module, is_package, path, known)
    collector.visit(ast.parse(source, filename=path))
    return collector.edges


def forbidden(edge: Edge) -> str | None:
    """Why ``edge`` breaks the layer rules, or None if it is allowed."""
    top = edge.target.split(".")[0]
    if top == "agents":
        return "imports the top-level name 'agents' (use spider_env.agents / relative imports)"
    source_layer = layer_of(edge.source) if edge.source.startswith("spider_env") else "outside"
    if source_layer in ("outside", "apps"):
        return None
    if source_layer is None:
        return "the importing module belongs to no layer (add it to tests/test_layers.py)"
    target_layer = layer_of(edge.target) if top == "spider_env" else None
    if source_layer == "core":
        if top in STDLIB or target_layer == "core":
            return None
        return "core imports only the standard library and spider_env.core"
    if top in STDLIB:
        return None
    if source_layer == "fast":
        if target_layer in ("core", "fast"):
            return None
        if top != "spider_env" and top in FAST_THIRD_PARTY:
            return None
        return "the compiled core imports only core, itself, numpy and numba"
    if source_layer == "env":
        if target_layer in ("core", "fast", "env"):
            return None
        lazy = (edge.source, edge.function, edge.target, edge.names)
        if lazy == (*LAZY_EVALUATE[:3], (LAZY_EVALUATE[3],)):
            return None
        if top != "spider_env" and top in ENV_THIRD_PARTY:
            return None
        if top in ENV_ADAPTERS.get(edge.source, ()):
            return None
        return "the env layer imports only core, fast, the env layer, numpy and gymnasium"
    # source_layer == "agents"
    if target_layer in ("core", "fast", "env", "agents"):
        return None
    if top != "spider_env" and top in AGENTS_THIRD_PARTY:
        return None
    return (
        "agents import only core, fast, the env layer, numpy and optional ML libraries (never apps)"
    )


def project_modules() -> dict[str, tuple[Path, bool]]:
    """Module name -> (file, is package) for spider_env/ and agents/ (as spider_env.agents)."""
    out: dict[str, tuple[Path, bool]] = {}
    for folder, package in (("spider_env", "spider_env"), ("agents", "spider_env.agents")):
        for path in sorted((ROOT / folder).rglob("*.py")):
            rel = path.relative_to(ROOT / folder).with_suffix("")
            if "__pycache__" in rel.parts:
                continue
            parts = list(rel.parts)
            is_package = parts[-1] == "__init__"
            if is_package:
                parts.pop()
            out[".".join([package, *parts])] = (path, is_package)
    return out


def other_modules() -> dict[str, tuple[Path, bool]]:
    """Tests, examples and benchmarks, named by their path (they belong to no layer)."""
    out: dict[str, tuple[Path, bool]] = {}
    for folder in ("tests", "examples", "benchmarks"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            out["outside:" + str(path.relative_to(ROOT))] = (path, False)
    return out


def all_edges(modules: dict[str, tuple[Path, bool]]) -> list[Edge]:
    known = frozenset(project_modules())
    edges: list[Edge] = []
    for module, (path, is_package) in modules.items():
        rel = str(path.relative_to(ROOT))
        text = path.read_text(encoding="utf-8")
        edges += imports_of(text, module, is_package=is_package, path=rel, known=known)
    return edges


def violations(edges: list[Edge], layer: str | None) -> list[str]:
    out = []
    for edge in edges:
        source_layer = layer_of(edge.source) if edge.source.startswith("spider_env") else None
        reason = forbidden(edge)
        if reason and (layer is None or source_layer == layer):
            out.append(f"{edge}: {reason}")
    return out


# ---- the project's graph ------------------------------------------------------------------


def test_every_module_belongs_to_a_layer() -> None:
    assert [m for m in project_modules() if layer_of(m) is None] == []


def test_core_imports_only_the_standard_library_and_core() -> None:
    assert violations(all_edges(project_modules()), "core") == []


def test_env_layer_imports_neither_apps_nor_agents_except_the_lazy_evaluate() -> None:
    assert violations(all_edges(project_modules()), "env") == []


def test_agents_never_import_apps() -> None:
    assert violations(all_edges(project_modules()), "agents") == []


def test_nothing_imports_agents_as_a_top_level_name() -> None:
    edges = all_edges(project_modules() | other_modules())
    assert [str(e) for e in edges if e.target.split(".")[0] == "agents"] == []


def test_graph_sees_the_known_edges() -> None:
    # The collector reads real files: apps import the agents, the package imports core.
    edges = all_edges(project_modules())
    pairs = {(layer_of(e.source), layer_of(e.target)) for e in edges}
    assert ("apps", "agents") in pairs
    assert ("agents", "fast") in pairs  # the expert agent's solver
    assert ("core", "core") in pairs


# ---- the checker can fail -----------------------------------------------------------------


def _reasons(source: str, module: str, is_package: bool = False) -> list[str | None]:
    return [forbidden(e) for e in imports_of(source, module, is_package=is_package)]


def test_checker_flags_an_apps_import_inside_a_function_of_the_env_layer() -> None:
    src = "def f():\n    if True:\n        from spider_env.apps.play import play\n"
    [edge] = imports_of(src, "spider_env.render")
    assert (edge.target, edge.line, edge.function) == ("spider_env.apps.play", 3, "f")
    assert forbidden(edge) is not None


def test_checker_flags_gymnasium_and_import_module_in_core() -> None:
    src = "import gymnasium\nimport importlib\nimportlib.import_module('spider_env.env')\n"
    assert [r is not None for r in _reasons(src, "spider_env.core.rules")] == [True, False, True]


def test_checker_flags_agents_reaching_apps_by_a_relative_import() -> None:
    [edge] = imports_of("from ..apps import cli\n", "spider_env.agents.greedy")
    assert edge.target == "spider_env.apps"
    assert forbidden(edge) is not None
    assert _reasons("from .base import Agent\nimport torch\n", "spider_env.agents.sb3") == [
        None,
        None,
    ]


def test_agents_may_import_the_compiled_core_but_not_numba_itself() -> None:
    src = "from spider_env.fast.solver import Solver\nfrom ..fast import load_kernel\n"
    assert _reasons(src, "spider_env.agents.expert") == [None, None]
    [reason] = _reasons("import numba\n", "spider_env.agents.expert")
    assert reason is not None and "fast" in reason


def test_checker_flags_an_entry_point_string_into_apps() -> None:
    src = 'register(id="X-v0", entry_point="spider_env.apps.play:Game")\n'
    [edge] = imports_of(src, "spider_env.registration")
    assert edge.target == "spider_env.apps.play"
    assert forbidden(edge) is not None
    assert imports_of('x = "see spider_env.env: the env"\n', "spider_env.registration") == []


def test_checker_flags_a_top_level_agents_import_anywhere() -> None:
    assert _reasons("from agents import Agent\n", "spider_env.apps.cli") != [None]
    assert _reasons("import agents.base\n", "outside:tests/x.py") != [None]


def test_lazy_evaluate_edge_is_allowed_only_by_name_in_the_package_getattr() -> None:
    lazy = "def __getattr__(name):\n    from spider_env.apps.evaluation import evaluate\n"
    assert _reasons(lazy, "spider_env", is_package=True) == [None]
    top = "from spider_env.apps.evaluation import evaluate\n"
    assert _reasons(top, "spider_env", is_package=True) != [None]
    other_name = lazy.replace("import evaluate", "import evaluate, parse_deals")
    assert _reasons(other_name, "spider_env", is_package=True) != [None]
    assert _reasons(lazy, "spider_env.env") != [None]
