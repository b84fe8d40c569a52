# Two commands do everything on a fresh machine: `make demo` (the core install and a demo) and
# `make test` (everything: torch, the training extras, the dev tools; then lint, types, tests).
PYTHON ?= python3
# Python writes bytecode here even where the environment says not to
# (PYTHONDONTWRITEBYTECODE=1): otherwise every test process compiles the package and pytest
# rewrites the asserts of every test module again (docs/guide/development.md says what it
# costs). The caches are __pycache__/ folders, ignored by git.
unexport PYTHONDONTWRITEBYTECODE
VENV   := .venv
# pip without compiling every module it installs to bytecode: torch and Ray are thousands of
# files, most never imported, and Python writes the bytecode of what is imported on first import
# (docs/guide/development.md says what it saves).
PIP    := -m pip install --no-compile
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
# Where pip gets torch. Empty (the default): pip's configured sources. On an ordinary Linux
# machine PyPI's default torch wheel is the multi-GB CUDA build; for the CPU build run
#   make test TORCH_INDEX_URL=https://download.pytorch.org/whl/cpu
TORCH_INDEX_URL ?=
# torch, installed first in every venv (the train extra pins the same version).
TORCH_INSTALL = $(if $(TORCH_INDEX_URL),--index-url $(TORCH_INDEX_URL)) torch==2.13.0

# The oldest Gymnasium we support, read from pyproject.toml's "gymnasium>=X,<2" (its one home).
# `make test` tests the newest (whatever pip resolves in .venv); `make test-gymnasium-oldest`
# tests this one in a second venv inside .venv/ (so `make clean` removes it too), on the tests
# that use Gymnasium's API themselves: spaces, make/make_vec and the registry, wrappers, vector
# envs, both env checkers, SB3's VecEnvs, the SB3 adapter and MaskablePPO (the other tests reach
# Gymnasium only through the env). .ci/run runs both.
GYMNASIUM_OLDEST := $(shell sed -n 's/^ *"gymnasium>=\([0-9.]*\),.*/\1/p' pyproject.toml)
OLDEST          := $(VENV)/gymnasium-oldest
OLDEST_STAMP    := $(OLDEST)/.installed
GYMNASIUM_TESTS := tests/test_env.py tests/test_vector.py tests/test_env_vector.py \
	tests/test_action_space.py tests/test_backends.py tests/test_variants_env.py \
	tests/test_action_features.py tests/test_sb3_vec.py

# The RLlib tests (tests/test_rllib.py) in a third venv inside .venv/: the rllib extra with the Ray
# release below, which pins its own Gymnasium (ray 2.60.0: gymnasium 1.2.2), and the Gymnasium
# tests again under that Gymnasium. .ci/run runs it after the other two.
RLLIB_RAY   := 2.60.0
RLLIB       := $(VENV)/rllib
RLLIB_STAMP := $(RLLIB)/.installed

.PHONY: install test test-gymnasium-oldest test-rllib lint typecheck compile-numba pytest demo bench differential golden golden-check clean check-sdk-coexistence ladder ladder-expert solver-table rl-recipe rl-table rl-1suit rl-2suit rl-4suit \
	rl-planner-1suit rl-planner-2suit rl-planner-4suit

# Two installs in the one venv, each with its stamp:
# - $(STAMP), everything (`make test` and the other targets): the package with the dev and train
#   extras, torch first. It also stamps the demo's install, which it holds.
# - $(DEMO_STAMP), what `make demo` needs and nothing more: the package and the cli extra (tqdm
#   for the progress bar); no torch, SB3, Ray, mypy or MoviePy. A later `make test` installs the
#   rest into the same venv (its own stamp is missing).
DEMO_STAMP := $(VENV)/.installed-demo

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) $(PIP) --upgrade pip setuptools wheel  # tests/test_packaging.py builds offline
	# torch first (the CPU build, given TORCH_INDEX_URL where PyPI's default is CUDA), so the
	# train extra finds it installed.
	$(PY) $(PIP) $(TORCH_INSTALL)
	$(PY) $(PIP) -e '.[dev,train]'
	touch $(STAMP) $(DEMO_STAMP)

$(DEMO_STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) $(PIP) --upgrade pip
	$(PY) $(PIP) -e '.[cli]'
	touch $(DEMO_STAMP)

install: $(STAMP)

lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

typecheck: $(STAMP)
	$(VENV)/bin/mypy

# numba's functions compiled once into its cache by two processes side by side
# (tests/compile_numba.py; seconds when the cache is warm), where the two pytest workers would
# each compile them.
compile-numba: $(STAMP)
	$(PY) tests/compile_numba.py --jobs 2

# --durations: the ten slowest tests, in every run's log (CI's time is watched). --dist
# worksteal: a worker that runs out of tests takes some of the other's, so the run does not end
# with one worker on a tail of slow tests.
pytest: $(STAMP) compile-numba
	$(VENV)/bin/pytest -n 2 --dist worksteal --durations=10

# ruff and mypy (one core) side by side with numba's compiling (two processes), then the tests
test: $(STAMP)
	$(MAKE) --no-print-directory -j 3 --output-sync=target lint typecheck compile-numba
	$(MAKE) --no-print-directory pytest

$(OLDEST_STAMP): pyproject.toml
	@test -n "$(GYMNASIUM_OLDEST)" || { echo 'pyproject.toml: no "gymnasium>=X,..."' >&2; exit 1; }
	rm -rf $(OLDEST)
	$(PYTHON) -m venv $(OLDEST)
	$(OLDEST)/bin/python $(PIP) --upgrade pip setuptools wheel
	$(OLDEST)/bin/python $(PIP) $(TORCH_INSTALL)
	$(OLDEST)/bin/python $(PIP) -e '.[train]' pytest pytest-xdist hypothesis \
	  'gymnasium==$(GYMNASIUM_OLDEST)'
	touch $(OLDEST_STAMP)

test-gymnasium-oldest: $(OLDEST_STAMP)
	$(OLDEST)/bin/python -c 'import gymnasium; print("gymnasium", gymnasium.__version__)' \
	  | grep -Fx 'gymnasium $(GYMNASIUM_OLDEST)'
	$(OLDEST)/bin/pytest -n 2 $(GYMNASIUM_TESTS)

$(RLLIB_STAMP): pyproject.toml
	rm -rf $(RLLIB)
	$(PYTHON) -m venv $(RLLIB)
	$(RLLIB)/bin/python $(PIP) --upgrade pip setuptools wheel
	$(RLLIB)/bin/python $(PIP) $(TORCH_INSTALL)
	$(RLLIB)/bin/python $(PIP) -e '.[rllib]' 'ray[rllib]==$(RLLIB_RAY)' pytest \
	  pytest-xdist hypothesis
	touch $(RLLIB_STAMP)

# The RLlib tests start Ray themselves (a local cluster per module, 2 CPUs): one at a time, then
# the Gymnasium tests two at a time. A missing RLlib fails them (SPIDER_ENV_REQUIRE_RLLIB=1).
test-rllib: $(RLLIB_STAMP)
	$(RLLIB)/bin/python -c 'import gymnasium, ray; print("gymnasium", gymnasium.__version__, "ray", ray.__version__)'
	SPIDER_ENV_REQUIRE_RLLIB=1 $(RLLIB)/bin/pytest tests/test_rllib.py
	$(RLLIB)/bin/pytest -n 2 $(GYMNASIUM_TESTS)

# The demo needs the core install only (tests/test_packaging.py checks it imports no torch).
demo: $(DEMO_STAMP)
	$(VENV)/bin/spider-env demo

bench: $(STAMP)
	$(PY) benchmarks/bench_engine.py
	$(PY) benchmarks/bench_env.py
	$(PY) benchmarks/bench_fast.py

# The ladder above greedy (docs/results.md, its planner section): for each variant,
# greedy and the planner on the same deals, the solver's verdicts from docs/solver/ (make
# solver-table), and a paired test against today's expert (its games in docs/ladder/: on
# Spiderette and Scorpion those of make ladder-expert, about 12 minutes; elsewhere those of
# round four, the expert unchanged since); one JSON per row and the per-deal CSV files in
# docs/ladder/. Long: about two hours on 2 cores.
LADDER := $(PY) benchmarks/ladder.py --jobs 2 --out-dir docs/ladder
L := docs/ladder
ladder: $(STAMP)
	$(LADDER) --variant spider-1suit --deals 0:1000 --solver-csv docs/solver/spider-1suit-0_1000.csv \
	  --compare $(L)/spider-1suit-0_1000-expert-evaluate.csv:expert --json $(L)/spider-1suit.json
	$(LADDER) --variant spider-4suit --deals 0:200 --solver-csv docs/solver/spider-4suit-0_1000.csv \
	  --compare $(L)/spider-4suit-0_50-expert_width=10-evaluate.csv:expert \
	  --json $(L)/spider-4suit.json
	$(LADDER) --variant simple-simon --deals 0:200 --solver-csv docs/solver/simple-simon-0_1000.csv \
	  --compare $(L)/simple-simon-0_100-expert_width=10-evaluate.csv:expert \
	  --json $(L)/simple-simon.json
	$(LADDER) --variant spider-2suit --deals 0:1000 --solver-csv docs/solver/spider-2suit-0_1000.csv \
	  --compare $(L)/spider-2suit-0_100-expert-evaluate.csv:expert --json $(L)/spider-2suit.json
	for v in spider-tournament-1suit spider-tournament-2suit; do \
	  $(LADDER) --variant $$v --deals 0:50 --solver-csv docs/solver/$$v-0_1000.csv \
	    --compare "$(L)/$$v-0_50-expert_width=10-evaluate.csv:expert" \
	    --json $(L)/$$v.json || exit 1; done
	for v in spiderette-1suit spiderette-2suit spiderette-4suit; do \
	  $(LADDER) --variant $$v --deals 0:200 --solver-csv docs/solver/$$v-0_1000.csv \
	    --compare $(L)/$$v-0_200-expert-evaluate.csv:expert --json $(L)/$$v.json || exit 1; done
	$(LADDER) --variant scorpion --deals 0:1000 --solver-csv docs/solver/scorpion-0_1000.csv \
	  --compare $(L)/scorpion-0_1000-expert-evaluate.csv:expert --json $(L)/scorpion.json

# Today's expert on the Spiderette rows (200 deals) and the Scorpion row (1,000): the files the
# ladder's --compare reads. On Scorpion and Spiderette 4 suits its games on deals 0..49 are
# those of round four, move for move; on Spiderette 1 and 2 suits the filter's kinds of empty
# columns (round six) changed them.
ladder-expert: $(STAMP)
	for v in spiderette-1suit spiderette-2suit spiderette-4suit; do \
	  $(VENV)/bin/spider-env evaluate --agent expert --variant $$v --deals 0:200 --jobs 2 \
	    --csv $(L)/$$v-0_200-expert-evaluate.csv --no-progress || exit 1; done
	$(VENV)/bin/spider-env evaluate --agent expert --variant scorpion --deals 0:1000 --jobs 2 \
	  --csv $(L)/scorpion-0_1000-expert-evaluate.csv --no-progress

# The RL recipe, an experiment kept in research/rl/ (its record: research/rl/README.md):
# lookahead's games, behaviour cloning, MaskablePPO fine-tuning, curves; about 1.5 hours on 2
# cores (docs/models/rl_1suit_recipe.safetensors). Then rl-table: its table on the test deals
# 0..999.
rl-recipe: $(STAMP)
	$(PY) research/rl/recipe.py run --suits 1 --dir runs/rl_1suit

# The batched masked PPO (docs/guide/training.md, the shipped models' results:
# docs/models/rl_1suit.safetensors, rl_2suit.safetensors): train from scratch, then play the test
# deals 0..999 beside greedy and lookahead (paired McNemar in the JSON).
RL_1SUIT_STEPS ?= 10000000
rl-1suit: $(STAMP)
	$(PY) examples/batched_ppo.py --suits 1 --timesteps $(RL_1SUIT_STEPS) --eval-every 2000000 \
	  --hidden 128 --update-epochs 3 --out runs/ppo_1suit
	$(VENV)/bin/spider-env evaluate --agent runs/ppo_1suit/model.safetensors --agent greedy \
	  --agent lookahead --suits 1 --deals 0:1000 --jobs 2 --json runs/ppo_1suit/test.json

RL_2SUIT_STEPS ?= 8000000
rl-2suit: $(STAMP)
	$(PY) examples/batched_ppo.py --suits 2 --timesteps $(RL_2SUIT_STEPS) --eval-every 2000000 \
	  --out runs/ppo_2suit
	$(VENV)/bin/spider-env evaluate --agent runs/ppo_2suit/model.safetensors --agent greedy --suits 2 \
	  --deals 0:1000 --jobs 2 --json runs/ppo_2suit/test.json

RL_4SUIT_STEPS ?= 8000000
rl-4suit: $(STAMP)
	$(PY) examples/batched_ppo.py --suits 4 --reward-mode shaped --timesteps $(RL_4SUIT_STEPS) \
	  --eval-every 2000000 --out runs/ppo_4suit
	$(VENV)/bin/spider-env evaluate --agent runs/ppo_4suit/model.safetensors --agent greedy --suits 4 \
	  --deals 0:1000 --jobs 2 --json runs/ppo_4suit/test.json

# A network that learns from the planner (docs/guide/training.md, "Learning from the planner"):
# every stage of examples/planner_rl.py not done yet (the planner's games, cloning, DAgger, PPO,
# the test deals), into runs/planner-spider-Nsuit; run it again after an interruption and it
# goes on where it stopped. PLANNER_DEALS: the planner's training deals (the demonstrations are
# most of the time: about 14 CPU-seconds a game at 1 or 2 suits here, so 1,000 games take about
# two hours on 2 cores).
PLANNER_DEALS ?= 100000:101000
PLANNER_4SUIT_DEALS ?= 100000:100400
rl-planner-1suit: $(STAMP)
	$(PY) examples/planner_rl.py --suits 1 --demo-deals $(PLANNER_DEALS)

rl-planner-2suit: $(STAMP)
	$(PY) examples/planner_rl.py --suits 2 --demo-deals $(PLANNER_DEALS)

rl-planner-4suit: $(STAMP)
	$(PY) examples/planner_rl.py --suits 4 --demo-deals $(PLANNER_4SUIT_DEALS)

rl-table: $(STAMP)
	$(VENV)/bin/spider-env evaluate --agent random --agent greedy --agent lookahead \
	  --agent runs/rl_1suit/bc.safetensors --agent docs/models/rl_1suit_recipe.safetensors --suits 1 \
	  --deals 0:1000 --jobs 2 --json runs/rl_1suit/test.json

# The solver alone (its default: the beam; depth-first search on Scorpion) on deals 0..999 of
# every variant, every card known (docs/solver/V-0_1000.csv), then the solver's table of
# docs/results.md. About 2 hours here
# (the 4-suit games take most of it); SOLVER_VARIANTS="spider-2suit scorpion" for a part.
SOLVER_VARIANTS ?= spider-1suit spider-2suit spider-4suit simple-simon scorpion spiderette-1suit \
  spiderette-2suit spiderette-4suit spider-tournament-1suit spider-tournament-2suit \
  spider-relaxed-1suit spider-relaxed-2suit spider-relaxed-4suit spider-culbertson \
  pysol-spider-1suit pysol-spider-2suit pysol-spider-4suit
solver-table: $(STAMP)
	for v in $(SOLVER_VARIANTS); do \
	  $(VENV)/bin/spider-env solve --variant $$v --deals 0:1000 --jobs 2 --quiet \
	    --csv docs/solver/$$v-0_1000.csv || exit 1; done
	$(PY) benchmarks/solver_table.py --dir docs/solver

# The planner's win rate against its dial (planner:budget=N) on deals no default was tuned on:
# docs/budget/ (one evaluation JSON per game and budget, curve.csv, budget_curve.png; the players
# guide's "Strength against compute"). Resumes budget by budget. BUDGET_RAY=local (or a
# cluster's address) plays on Ray.
BUDGET_CURVE = $(PY) benchmarks/budget_curve.py $(if $(BUDGET_RAY),--ray $(BUDGET_RAY),--jobs 2)
.PHONY: budget-curves
budget-curves: $(STAMP)
	$(BUDGET_CURVE) --suits 1 --budgets 1,3,12,48,128 --deals 700000:700040
	$(BUDGET_CURVE) --suits 2 --budgets 3,12,48,192,384 --deals 700000:700040
	$(BUDGET_CURVE) --suits 4 --budgets 6,24,96,384,768,1536 --deals 700000:700030 --markdown

# docs/results.md, the results page, from the result files stored in docs/ (seconds).
.PHONY: results
results: $(STAMP)
	$(PY) docs/_scripts/results.py --out docs/results.md

# The compiled core (spider_env/fast) against the pure engine (spider_env/core), the
# specification: 1,000,000 steps of random play per registered variant, every step compared
# (legal actions, whole state, score). Prints one line per variant; exits 1 on a difference.
# tests/test_fast_differential.py runs a smaller version in `make test`.
differential: $(STAMP)
	$(PY) tests/differential.py --steps 1000000 --jobs 2

# Every golden file (deals, starting layouts, playthroughs of every variant, renders): rewrite
# them after a deliberate change; golden-check only compares (exit 1 naming the first difference).
golden: $(STAMP)
	$(PY) tests/golden/regenerate.py

golden-check: $(STAMP)
	$(PY) tests/golden/regenerate.py --check

# Issue 13: the wheel installs only spider_env (agents as spider_env.agents), so it lives next
# to the OpenAI Agents SDK (openai-agents, import name `agents`). Builds the wheel offline from a
# copy of the sources, installs it and openai-agents from PyPI into a fresh venv in a temporary
# directory, imports both, runs the CLI. Not part of `make test` (it downloads packages).
check-sdk-coexistence: $(STAMP)
	@set -eu; tmp=$$(mktemp -d); trap 'rm -rf "$$tmp"' EXIT; \
	mkdir "$$tmp/src"; \
	cp -R pyproject.toml README.md LICENSE spider_env agents "$$tmp/src/"; \
	find "$$tmp/src" -name __pycache__ -prune -exec rm -rf {} +; \
	$(PY) -m pip wheel --no-deps --no-build-isolation --no-index -q -w "$$tmp/dist" "$$tmp/src"; \
	$(PYTHON) -m venv "$$tmp/venv"; \
	"$$tmp/venv/bin/python" $(PIP) -q "$$tmp"/dist/*.whl openai-agents; \
	cd "$$tmp"; \
	"$$tmp/venv/bin/python" -c 'import agents, spider_env.agents; \
	from spider_env.agents import make_agent; from agents import Agent, Runner; \
	print("spider_env.agents:", spider_env.agents.__file__); \
	print("agents (OpenAI Agents SDK):", agents.__file__, Agent.__name__, Runner.__name__)'; \
	"$$tmp/venv/bin/spider-env" evaluate --agent greedy --suits 1 --deals 0:2 --jobs 1

# The documentation site (docs/conf.py): the env pages, the CLI reference and the API reference
# generated from the code, every page built with warnings as errors (-W), broken references
# included (-n). Into docs/_build/html; its own CI step (.ci/run), not part of `make test`.
DOCS_STAMP := $(VENV)/.installed-docs
$(DOCS_STAMP): $(STAMP) pyproject.toml
	$(PY) $(PIP) -e '.[docs]'
	touch $(DOCS_STAMP)

.PHONY: docs
docs: $(DOCS_STAMP)
	$(VENV)/bin/sphinx-build -b html -W --keep-going -n -q docs docs/_build/html
	@echo "docs: open docs/_build/html/index.html"

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
	rm -rf docs/_build docs/envs docs/reference/cli.md
