"""The house: one bucket per folder, and imports point one way (down the list below).

Built from the AST of every module, so imports at any depth count (inside functions, under
``if TYPE_CHECKING``, in ``try`` blocks), and so do ``importlib.import_module("...")`` and
``__import__("...")`` calls with a literal name and ``"spider_env.x:Name"`` entry-point strings.

A bucket is a folder (its modules and ``__init__``); ``BUCKETS`` says, for each, which buckets
and third-party packages it may import (the standard library is always allowed, except in core):

==============  ========================================  ======================================
bucket          folder                                    may import (project)
==============  ========================================  ======================================
core            spider_env/core/                          core
fast            spider_env/fast/                          core, fast
search          spider_env/search/                        core, the search interface of fast
                                                          (``spider_env.fast.game``, ``.jit``)
heuristics      spider_env/heuristics/                    core
observation     spider_env/observation/                   core, heuristics, observation
env             spider_env/*.py                           core, fast, heuristics, observation,
                                                          env
sb3             spider_env/sb3/                           ... env, sb3 (+ stable_baselines3)
players         agents/*.py (spider_env.agents)           ... env, search, fast's public API
rl              agents/rl/ (spider_env.agents.rl)         ... players, sb3, rl (+ torch, SB3)
evaluation      spider_env/apps/evaluation/               ... players, evaluation
apps            spider_env/apps/*.py                      anything
research        research/ (outside the package)           the package's public API, research
==============  ========================================  ======================================

Nothing in the package imports ``research`` (it is not installed; it watches the product from
outside). No module imports another module's ``_private`` name (``from x import _y``), anywhere
(package, research, tests, examples, benchmarks), and research, examples and benchmarks use no
private attribute of another object (``obj._x``; ``self._x``, ``cls._x`` and ``super()._x``
are a class's own): where they must watch or steer a decision, the package offers a public
hook.

Two documented edges point up, each allowed by name only, inside one function:

* ``spider_env.__getattr__`` loads ``spider_env.apps.evaluation.evaluate`` on first use;
* ``spider_env.agents.model.load_model`` reaches training code
  (``spider_env.agents.rl.model_import``) only to read a Stable-Baselines3 ``.zip`` (its
  weights need torch; a model file does not).

Nothing (package, tests, examples, benchmarks) imports ``agents`` as a top-level name (that
name belongs to the OpenAI Agents SDK, issue 13), and an example imports no other example
(examples are thin scripts over importable code). A module in no bucket fails too.
"""

from __future__ import annotations

import ast
import re
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
STDLIB = frozenset(sys.stdlib_module_names)
ENTRY_POINT = re.compile(r"(spider_env|agents)(\.\w+)*:\w+(\.\w+)*")

#: bucket -> (module prefix, or the module set of the env bucket). Longest prefix wins.
PREFIXES = {
    "core": "spider_env.core",
    "fast": "spider_env.fast",
    "search": "spider_env.search",
    "heuristics": "spider_env.heuristics",
    "observation": "spider_env.observation",
    "sb3": "spider_env.sb3",
    "players": "spider_env.agents",
    "rl": "spider_env.agents.rl",
    "evaluation": "spider_env.apps.evaluation",
    "apps": "spider_env.apps",
    "research": "research",
}
#: The env bucket: the modules of spider_env/ itself (its files, not its folders).
ENV_MODULES = frozenset(
    {"spider_env"} | {f"spider_env.{p.stem}" for p in (ROOT / "spider_env").glob("*.py")}
) - {"spider_env.__init__"}
#: The interface of the compiled core that search code uses (issue 19: one small interface).
FAST_SEARCH_INTERFACE = frozenset({"spider_env.fast.game", "spider_env.fast.jit"})
#: What players may import of the compiled core: the package's public API and the interface.
FAST_PLAYER_INTERFACE = frozenset({"spider_env.fast", "spider_env.fast.game"})
ANY = "*"


@dataclass(frozen=True)
class Rule:
    """What a bucket may import: project buckets, and third-party top-level packages."""

    buckets: frozenset[str]
    third_party: frozenset[str]
    stdlib: bool = True


def _rule(buckets: str, third_party: str = "", stdlib: bool = True) -> Rule:
    return Rule(frozenset(buckets.split()), frozenset(third_party.split()), stdlib)


_BELOW_ENV = "core fast heuristics observation"
BUCKETS: dict[str, Rule] = {
    "core": _rule("core", stdlib=True),
    # llvmlite: numba's own code generator (a dependency of numba), for the cache hint
    # spider_env.fast.jit.prefetch
    "fast": _rule("core fast", "numpy numba llvmlite"),
    "search": _rule("core fast search", "numpy numba"),
    "heuristics": _rule("core heuristics"),
    "observation": _rule("core heuristics observation", "numpy gymnasium"),
    # PIL: spider_env.render_image draws with it, imported only when an image is drawn
    # (tests/test_render_image.py checks that importing and making envs leaves it unimported)
    "env": _rule(f"{_BELOW_ENV} env", "numpy gymnasium PIL"),
    "sb3": _rule(f"{_BELOW_ENV} env sb3", "numpy gymnasium stable_baselines3"),
    # safetensors: the model file's weights (agents/model_file.py), data only
    "players": _rule(f"{_BELOW_ENV} env search players", "numpy safetensors"),
    # ray: the rllib extra (agents/rl/rllib*.py); evaluation: RLlib training connects to Ray
    # as evaluation does (ray_session) and plays its exported model on validation deals
    "rl": _rule(
        f"{_BELOW_ENV} env search sb3 players evaluation rl",
        "numpy gymnasium torch stable_baselines3 sb3_contrib tqdm matplotlib ray",
    ),
    "evaluation": _rule(f"{_BELOW_ENV} env search players evaluation", ANY),
    "apps": _rule(f"{_BELOW_ENV} env search sb3 players rl evaluation apps", ANY),
    # research/ sits on top of everything, through the public API (checked by the private-name
    # tests below); nothing imports it
    "research": _rule(f"{_BELOW_ENV} env search sb3 players rl evaluation apps research", ANY),
}
#: Folders of scripts that use the package from outside as a user does.
OUTSIDE = ("research", "examples", "benchmarks")
#: The edges that point up, each allowed by (importing module, function, target, names).
LAZY_EDGES = (
    ("spider_env", "__getattr__", "spider_env.apps.evaluation", ("evaluate",)),
    ("spider_env.agents.model", "load_model", "spider_env.agents.rl.model_import", None),
)


def bucket_of(module: str) -> str | None:
    """The bucket of a project module (``None``: it belongs to none)."""
    if module in ENV_MODULES:
        return "env"
    best = None
    for bucket, prefix in PREFIXES.items():
        if (module == prefix or module.startswith(prefix + ".")) and (
            best is None or len(prefix) > len(PREFIXES[best])
        ):
            best = bucket
    return best


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


def _lazy(edge: Edge) -> bool:
    for source, function, target, names in LAZY_EDGES:
        if (edge.source, edge.function, edge.target) == (source, function, target) and (
            names is None or edge.names == names
        ):
            return True
    return False


def forbidden(edge: Edge) -> str | None:
    """Why ``edge`` breaks the house's rules, or None if it is allowed."""
    top = edge.target.split(".")[0]
    if top == "agents":
        return "imports the top-level name 'agents' (use spider_env.agents / relative imports)"
    if top == "research" and not edge.source.startswith("research"):
        return "imports research/ (nothing imports it: it watches the product from outside)"
    if not edge.source.startswith(("spider_env", "research")):
        return None  # tests, examples, benchmarks: see test_examples_are_thin_scripts
    source = bucket_of(edge.source)
    if source is None:
        return "the importing module belongs to no bucket (add it to tests/test_layers.py)"
    rule = BUCKETS[source]
    if top != "spider_env":
        if top in STDLIB:
            return None if rule.stdlib else f"{source} imports nothing but {source}"
        if ANY in rule.third_party or top in rule.third_party:
            return None
        return f"{source} may not import {top} (allowed: {sorted(rule.third_party) or 'none'})"
    target = bucket_of(edge.target)
    if target is None:
        return None  # a name that is no module of the project (checked by the import itself)
    if _lazy(edge):
        return None
    if target not in rule.buckets:
        return f"{source} may not import {target} (allowed: {', '.join(sorted(rule.buckets))})"
    if target == "fast" and source == "search" and edge.target not in FAST_SEARCH_INTERFACE:
        return f"search reaches the compiled core only through {sorted(FAST_SEARCH_INTERFACE)}"
    if target == "fast" and source == "players" and edge.target not in FAST_PLAYER_INTERFACE:
        return f"players reach the compiled core only through {sorted(FAST_PLAYER_INTERFACE)}"
    return None


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


def research_modules() -> dict[str, tuple[Path, bool]]:
    """Module name (``research.planner.oracle``) -> (file, False) for research/'s scripts."""
    out: dict[str, tuple[Path, bool]] = {}
    for path in sorted((ROOT / "research").rglob("*.py")):
        rel = path.relative_to(ROOT).with_suffix("")
        if "__pycache__" not in rel.parts:
            out[".".join(rel.parts)] = (path, False)
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


def violations(edges: list[Edge], bucket: str | None = None) -> list[str]:
    out = []
    for edge in edges:
        reason = forbidden(edge)
        if reason and (bucket is None or bucket_of(edge.source) == bucket):
            out.append(f"{edge}: {reason}")
    return out


# ---- the project's graph ------------------------------------------------------------------


def test_every_module_belongs_to_a_bucket() -> None:
    assert [m for m in project_modules() if bucket_of(m) is None] == []


def test_every_bucket_has_modules_and_a_rule() -> None:
    buckets = {bucket_of(m) for m in project_modules() | research_modules()}
    assert buckets == set(BUCKETS)


def test_arrows_point_one_way() -> None:
    # The allowed graph (self-loops aside) has no cycle: the buckets have an order.
    order: list[str] = []
    left = {b: set(r.buckets) - {b} for b, r in BUCKETS.items()}
    while left:
        ready = sorted(b for b, deps in left.items() if not deps - set(order))
        assert ready, f"the allowed imports have a cycle among {sorted(left)}"
        order += ready
        for b in ready:
            del left[b]
    assert order.index("core") < order.index("fast") < order.index("search")
    assert order.index("env") < order.index("players") < order.index("rl") < order.index("apps")


@pytest.mark.parametrize("bucket", list(BUCKETS))
def test_bucket_imports_only_what_it_may(bucket: str) -> None:
    assert violations(all_edges(project_modules() | research_modules()), bucket) == []


def test_nothing_imports_agents_as_a_top_level_name() -> None:
    edges = all_edges(project_modules() | research_modules() | other_modules())
    assert [str(e) for e in edges if e.target.split(".")[0] == "agents"] == []


def test_nothing_outside_research_imports_it() -> None:
    edges = all_edges(project_modules() | research_modules() | other_modules())
    assert [str(e) for e in edges if forbidden(e) and e.target.split(".")[0] == "research"] == []


# ---- private names stay in their module ---------------------------------------------------


def private_names(edge: Edge) -> list[str]:
    """The ``_private`` names ``edge`` takes from another module of the project (or research),
    or the private module it imports."""
    if edge.target.split(".")[0] not in ("spider_env", "research") or edge.target == edge.source:
        return []
    parts = edge.target.split(".")
    bad = [p for p in parts if p.startswith("_") and not p.startswith("__")]
    bad += [n for n in edge.names if n.startswith("_") and not n.startswith("__")]
    return bad


def private_attributes(source: str) -> list[tuple[int, str]]:
    """``(line, text)`` of every private attribute read of an object that is not the code's own
    (``obj._x``; ``self._x``, ``cls._x`` and ``super()._x`` are allowed)."""
    out = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Attribute):
            continue
        if not node.attr.startswith("_") or node.attr.startswith("__"):
            continue
        base = node.value
        if isinstance(base, ast.Name) and base.id in ("self", "cls"):
            continue
        if isinstance(base, ast.Call) and getattr(base.func, "id", None) == "super":
            continue
        out.append((node.lineno, ast.unparse(node)))
    return out


def test_no_module_imports_another_modules_private_name() -> None:
    edges = all_edges(project_modules() | research_modules() | other_modules())
    assert [f"{e}: {private_names(e)}" for e in edges if private_names(e)] == []


@pytest.mark.parametrize("folder", OUTSIDE)
def test_research_examples_and_benchmarks_use_no_private_attribute(folder: str) -> None:
    bad = []
    for path in sorted((ROOT / folder).rglob("*.py")):
        for line, text in private_attributes(path.read_text(encoding="utf-8")):
            bad.append(f"{path.relative_to(ROOT)}:{line}: {text}")
    assert bad == []


def test_examples_are_thin_scripts() -> None:
    # no sys.path edits, and no example imports another one (shared code lives in the package)
    examples = {p.stem for p in (ROOT / "examples").glob("*.py")}
    bad = []
    for path in sorted((ROOT / "examples").glob("*.py")):
        text = path.read_text(encoding="utf-8")
        if "sys.path" in text:
            bad.append(f"{path.name}: edits sys.path")
        mod = "outside:" + str(path.relative_to(ROOT))
        for edge in imports_of(text, mod, path=path.name):
            if edge.target.split(".")[0] in examples:
                bad.append(f"{edge}: imports another example")
    assert bad == []


def test_graph_sees_the_known_edges() -> None:
    # The collector reads real files.
    edges = all_edges(project_modules())
    pairs = {(bucket_of(e.source), bucket_of(e.target)) for e in edges}
    assert ("apps", "players") in pairs
    assert ("players", "search") in pairs  # the expert's solver
    assert ("search", "fast") in pairs
    assert ("observation", "heuristics") in pairs  # the per-action features' scorer
    assert ("core", "core") in pairs
    assert any(_lazy(e) for e in edges)


# ---- the checker can fail: imports planted in real modules' names ------------------------


def _reasons(source: str, module: str, is_package: bool = False) -> list[str | None]:
    return [forbidden(e) for e in imports_of(source, module, is_package=is_package)]


@pytest.mark.parametrize(
    ("module", "planted"),
    [
        ("spider_env.core.rules", "import numpy"),
        ("spider_env.core.rules", "from spider_env.fast import rules"),
        ("spider_env.fast.rules", "from spider_env.search.solver import solve"),
        ("spider_env.fast.step", "from spider_env.env import SpiderEnv"),
        ("spider_env.search.solver", "from spider_env.fast.layout import P_C"),
        ("spider_env.search.solver", "from spider_env.observation import TableView"),
        ("spider_env.heuristics.position", "from spider_env.observation import TableView"),
        ("spider_env.observation.actions", "from spider_env.agents.greedy import GreedyAgent"),
        ("spider_env.observation.actions", "from spider_env.env import SpiderEnv"),
        ("spider_env.env", "import torch"),
        ("spider_env.env", "from stable_baselines3 import PPO"),
        ("spider_env.vector", "from spider_env.sb3 import SpiderSB3VecEnv"),
        ("spider_env.vector", "from spider_env.agents import make_agent"),
        ("spider_env.sb3.vec_env", "from spider_env.agents.rl.policy import ActionSetPolicy"),
        ("spider_env.agents.greedy", "import torch"),
        ("spider_env.agents.greedy", "from sb3_contrib import MaskablePPO"),
        ("spider_env.agents.greedy", "from spider_env.agents.rl import policy"),
        ("spider_env.agents.expert", "from spider_env.fast.layout import P_L"),
        ("spider_env.agents.expert", "import numba"),
        ("spider_env.agents.model", "from spider_env.agents.rl.models import load"),
        ("spider_env.agents.model_file", "import torch"),
        ("spider_env.agents.networks", "from spider_env.agents.rl import model_import"),
        ("spider_env.agents.rl.policy", "from spider_env.apps.cli import main"),
        ("spider_env.apps.evaluation.runner", "from spider_env.apps.cli import main"),
        ("spider_env.apps.cli", "from agents import Agent"),
        ("spider_env.agents.planner", "import research.planner.oracle"),
        ("spider_env.apps.cli", "from research.planner import choices"),
        ("research.planner.oracle", "from agents.planner import PlannerAgent"),
    ],
)
def test_checker_flags_a_planted_import(module: str, planted: str) -> None:
    assert _reasons(planted + "\n", module) != [None]
    # at any depth: inside a function, under a condition
    nested = "def f():\n    if True:\n        " + planted + "\n"
    assert _reasons(nested, module) != [None]


@pytest.mark.parametrize(
    ("module", "planted"),
    [
        ("spider_env.search.plan", "from spider_env.search.beam import _expand"),
        ("spider_env.agents.rl.ppo", "from .recipe import _cloned_model"),
        ("research.planner.choices", "from spider_env.agents.planner import _tied"),
        ("outside:tests/test_interop.py", "from spider_env.core.interop import _SUIT_MAP"),
        ("outside:examples/x.py", "import spider_env.fast._kernel"),
    ],
)
def test_checker_flags_a_planted_private_import(module: str, planted: str) -> None:
    [edge, *_] = imports_of(planted + "\n", module)
    assert private_names(edge) != []


@pytest.mark.parametrize(
    "source",
    [
        "from spider_env.search.beam import expand\n",
        "from __future__ import annotations\n",
        "from spider_env import __version__\n",
        "from numpy import _core\n",  # another project's names are its own business
    ],
)
def test_public_names_dunders_and_other_projects_names_pass(source: str) -> None:
    assert [private_names(e) for e in imports_of(source, "spider_env.search.plan")] == [[]]


#: The longest a function of the compiled core or the searches may run without saying why.
LONGEST = 120


def long_functions(source: str) -> list[str]:
    """The functions of ``source`` longer than :data:`LONGEST` lines whose docstring does not say
    why (``Long (...)``: a measured reason)."""
    out = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            length = (node.end_lineno or node.lineno) - node.lineno + 1
            if length > LONGEST and "Long (" not in (ast.get_docstring(node) or ""):
                out.append(f"{node.name} ({length} lines)")
    return out


@pytest.mark.parametrize("folder", ["spider_env/fast", "spider_env/search"])
def test_long_compiled_functions_say_why(folder: str) -> None:
    bad = [
        f"{path.relative_to(ROOT)}: {name}"
        for path in sorted((ROOT / folder).glob("*.py"))
        for name in long_functions(path.read_text(encoding="utf-8"))
    ]
    assert bad == []


def test_a_long_function_without_a_reason_is_flagged() -> None:
    body = "".join(f"    x{i} = {i}\n" for i in range(LONGEST))
    assert long_functions(f"def f():\n{body}") == [f"f ({LONGEST + 1} lines)"]
    why = '    """Long (measured): one loop."""\n'
    assert long_functions(f"def f():\n{why}{body}") == []


def test_checker_flags_a_planted_private_attribute() -> None:
    src = "agent._choose = spy\nx = env.unwrapped._engine\nsuper()._build()\nself._x = cls._y\n"
    assert [text for _, text in private_attributes(src)] == [
        "agent._choose",
        "env.unwrapped._engine",
    ]


def test_checker_resolves_relative_imports_and_import_module() -> None:
    [edge] = imports_of("from ..apps import cli\n", "spider_env.agents.greedy")
    assert edge.target == "spider_env.apps"
    assert forbidden(edge) is not None
    src = "import importlib\nimportlib.import_module('spider_env.env')\n"
    assert [r is not None for r in _reasons(src, "spider_env.core.rules")] == [False, True]
    assert _reasons("from .base import Agent\n", "spider_env.agents.greedy") == [None]


def test_checker_flags_an_entry_point_string_into_apps() -> None:
    src = 'register(id="X-v0", entry_point="spider_env.apps.play:Game")\n'
    [edge] = imports_of(src, "spider_env.registration")
    assert edge.target == "spider_env.apps.play"
    assert forbidden(edge) is not None
    assert imports_of('x = "see spider_env.env: the env"\n', "spider_env.registration") == []


def test_lazy_edges_are_allowed_only_by_name_in_their_function() -> None:
    lazy = "def __getattr__(name):\n    from spider_env.apps.evaluation import evaluate\n"
    assert _reasons(lazy, "spider_env", is_package=True) == [None]
    top = "from spider_env.apps.evaluation import evaluate\n"
    assert _reasons(top, "spider_env", is_package=True) != [None]
    other_name = lazy.replace("import evaluate", "import evaluate, parse_deals")
    assert _reasons(other_name, "spider_env", is_package=True) != [None]
    assert _reasons(lazy, "spider_env.env") != [None]
    model = "def load_model(path):\n    from spider_env.agents.rl.model_import import read\n"
    assert _reasons(model, "spider_env.agents.model") == [None]
    elsewhere = model.replace("load_model", "act")
    assert _reasons(elsewhere, "spider_env.agents.model") != [None]
    assert _reasons(model, "spider_env.agents.greedy") != [None]
