"""A model file carrying code never runs it: a planted pickle (which would create a marker file)
in every format the project reads (a Stable-Baselines3 zip's ``data`` entry and its ``.pth``
entries, the ``.safetensors`` model file's metadata, an RLlib checkpoint) is read as data or
refused in one line, and the marker never appears. Shape, dtype and field errors are one line."""

from __future__ import annotations

import base64
import io
import json
import pickle
import struct
import sys
import warnings
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from model_files import Payload, payload, random_model
from spider_env.agents.model import OtherGameWarning, load_model_agent
from spider_env.agents.model_file import SavedModel
from spider_env.agents.model_format import ModelLoadError

from spider_env.apps.cli import main

# --- planting -----------------------------------------------------------------------------------


def torch_payload(marker: Path, around: bool = False) -> bytes:
    """A ``.pth`` (``torch.save``) whose unpickling creates ``marker`` (``around``: a dict of
    real tensors with the payload among them)."""
    torch = pytest.importorskip("torch")
    buf = io.BytesIO()
    obj: Any = Payload(marker)
    if around:
        obj = {"action_net.weight": torch.zeros(2, 2), "x": obj}
    torch.save(obj, buf)
    return buf.getvalue()


def rewrite_zip(src: Path, dst: Path, entries: dict[str, bytes]) -> Path:
    """A copy of the zip ``src`` with ``entries`` replaced; the sidecar copied unchanged."""
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w") as zout:
        for info in zin.infolist():
            zout.writestr(info.filename, entries.get(info.filename, zin.read(info)))
    if src.with_suffix(".json").exists():
        dst.with_suffix(".json").write_bytes(src.with_suffix(".json").read_bytes())
    return dst


def planted_data(zip_path: Path, marker: Path, policy_kwargs: bool = False) -> bytes:
    """The zip's ``data`` entry with every ``:serialized:`` value (policy_class, lr_schedule,
    clip_range, the spaces...) replaced by the payload, base64 as SB3 stores them
    (``policy_kwargs``: also a pickled ``activation_fn`` in the policy's settings)."""
    with zipfile.ZipFile(zip_path) as zf:
        data = json.loads(zf.read("data"))
    text = base64.b64encode(payload(marker)).decode()
    planted = 0
    for value in data.values():
        if isinstance(value, dict) and ":serialized:" in value:
            value[":serialized:"] = text
            planted += 1
    assert planted >= 5, planted  # policy_class, spaces, schedules, the rollout buffer
    if policy_kwargs:
        data["policy_kwargs"]["activation_fn"] = {":type:": "<class 'type'>", ":serialized:": text}
    return json.dumps(data).encode()


@pytest.fixture(scope="module")
def sb3_zip(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny action-set MaskablePPO saved by training's own writer (zip + sidecar)."""
    torch = pytest.importorskip("torch")
    pytest.importorskip("sb3_contrib")
    from spider_env.agents.rl.models import action_set_model, action_set_sidecar, save_model

    torch.set_num_threads(1)
    model = action_set_model("spider-1suit", hidden=8, seed=0)
    folder = tmp_path_factory.mktemp("sb3")
    return save_model(model, folder / "model.zip", action_set_sidecar("spider-1suit", True))


def one_line_error(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    """The CLI's stderr for ``argv``, which must fail with status 2 and one line."""
    status = main(list(argv))
    err = capsys.readouterr().err
    assert status == 2, err
    assert len(err.strip().splitlines()) == 1, err
    return err


def test_the_planted_payloads_run_when_unpickled(tmp_path: Path) -> None:
    # what the tests below plant is live: unpickling it (pickle, torch.load without
    # weights_only) creates the marker
    torch = pytest.importorskip("torch")
    marker = tmp_path / "marker"
    pickle.loads(payload(marker))
    assert marker.exists()
    marker.unlink()
    torch.load(io.BytesIO(torch_payload(marker)), weights_only=False)
    assert marker.exists()


# --- Stable-Baselines3 zips ---------------------------------------------------------------------


@pytest.mark.parametrize("sidecar", [True, False], ids=["with its sidecar", "without"])
def test_an_sb3_zip_with_code_in_its_serialized_entries_plays_and_never_runs_it(
    sb3_zip: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], sidecar: bool
) -> None:
    marker = tmp_path / "marker"
    bad = rewrite_zip(sb3_zip, tmp_path / "bad.zip", {"data": planted_data(sb3_zip, marker)})
    game = ["--suits", "1"]
    if not sidecar:  # the game is then the one asked for, after a warning
        bad.with_suffix(".json").unlink()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", OtherGameWarning)
        agent = load_model_agent(str(bad), "spider-1suit")
    assert agent.model.architecture.hidden == 8  # type: ignore[union-attr]
    status = main(["evaluate", "--agent", str(bad), *game, "--deals", "0:1"])
    out = capsys.readouterr().out
    assert status == 0 and "bad.zip" in out
    assert main(["model", "show", str(bad), *game]) == 0
    assert "action-set" in capsys.readouterr().out
    assert main(["model", "convert", str(bad), str(tmp_path / "m.safetensors"), *game]) == 0
    assert "nothing was unpickled" in capsys.readouterr().out
    assert not marker.exists()


def test_an_sb3_zip_with_pickled_policy_settings_is_refused_in_one_line(
    sb3_zip: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    marker = tmp_path / "marker"
    data = planted_data(sb3_zip, marker, policy_kwargs=True)
    bad = rewrite_zip(sb3_zip, tmp_path / "bad.zip", {"data": data})
    with pytest.raises(ModelLoadError, match="pickled objects, which are never read") as caught:
        load_model_agent(str(bad))
    assert "\n" not in str(caught.value) and "--trust-pickle" in str(caught.value)
    one_line_error(capsys, "evaluate", "--agent", str(bad), "--suits", "1", "--deals", "0:1")
    one_line_error(capsys, "model", "show", str(bad))
    err = one_line_error(capsys, "model", "convert", str(bad), str(tmp_path / "m.safetensors"))
    assert "convert it once (this unpickles it)" in err
    assert not marker.exists() and not (tmp_path / "m.safetensors").exists()


@pytest.mark.parametrize("around", [False, True], ids=["payload", "payload among tensors"])
def test_an_sb3_zip_whose_weights_carry_code_is_refused_in_one_line(
    sb3_zip: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], around: bool
) -> None:
    marker = tmp_path / "marker"
    bad = rewrite_zip(
        sb3_zip, tmp_path / "bad.zip", {"policy.pth": torch_payload(marker, around=around)}
    )
    with pytest.raises(ModelLoadError, match="not plain tensors") as caught:
        load_model_agent(str(bad))
    assert "\n" not in str(caught.value) and "refused without running" in str(caught.value)
    one_line_error(capsys, "evaluate", "--agent", str(bad), "--suits", "1", "--deals", "0:1")
    one_line_error(capsys, "model", "show", str(bad))
    one_line_error(capsys, "model", "convert", str(bad), str(tmp_path / "m.safetensors"))
    assert not marker.exists()


@pytest.mark.parametrize("entry", ["pytorch_variables.pth", "policy.optimizer.pth"])
def test_the_zips_other_entries_are_never_read(
    sb3_zip: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], entry: str
) -> None:
    marker = tmp_path / "marker"
    with zipfile.ZipFile(sb3_zip) as zf:
        assert entry in zf.namelist()
    bad = rewrite_zip(sb3_zip, tmp_path / "bad.zip", {entry: torch_payload(marker)})
    load_model_agent(str(bad))
    assert main(["evaluate", "--agent", str(bad), "--suits", "1", "--deals", "0:1"]) == 0
    assert main(["model", "show", str(bad)]) == 0
    capsys.readouterr()
    assert not marker.exists()


@pytest.fixture
def hostile_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[str, Path]:
    """An importable module whose import creates a marker file: its name, and the marker."""
    marker = tmp_path / "imported"
    folder = tmp_path / "path"
    folder.mkdir()
    (folder / "hostile_net.py").write_text(
        f"import pathlib\npathlib.Path({str(marker)!r}).touch()\nclass Net: ...\n"
    )
    monkeypatch.syspath_prepend(str(folder))
    return "hostile_net", marker


def test_a_sidecar_naming_a_hostile_policy_class_imports_nothing(
    sb3_zip: Path, tmp_path: Path, hostile_module: tuple[str, Path]
) -> None:
    name, marker = hostile_module
    bad = rewrite_zip(sb3_zip, tmp_path / "bad.zip", {})
    side = json.loads(bad.with_suffix(".json").read_text())
    side["policy"] = f"{name}.Net"
    bad.with_suffix(".json").write_text(json.dumps(side))
    assert load_model_agent(str(bad)).model.architecture.name == "action-set"
    assert not marker.exists() and name not in sys.modules


# --- the model file (.safetensors) ------------------------------------------------------------


def header_of(path: Path) -> tuple[dict[str, Any], bytes]:
    """The safetensors header of ``path`` (JSON) and the tensors' bytes after it."""
    raw = path.read_bytes()
    (n,) = struct.unpack("<Q", raw[:8])
    return json.loads(raw[8 : 8 + n]), raw[8 + n :]


def with_header(path: Path, header: dict[str, Any], body: bytes) -> Path:
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    path.write_bytes(struct.pack("<Q", len(text)) + text + body)
    return path


def with_metadata(src: Path, dst: Path, change: Callable[[dict[str, Any]], None]) -> Path:
    """A copy of the model file ``src`` whose spider-env JSON object is changed by ``change``."""
    header, body = header_of(src)
    meta = json.loads(header["__metadata__"]["spider_env"])
    change(meta)
    header["__metadata__"]["spider_env"] = json.dumps(meta)
    return with_header(dst, header, body)


@pytest.fixture
def model_file(tmp_path: Path) -> Path:
    return random_model("spider-1suit", "action-set", seed=2).write(tmp_path / "good.safetensors")


def _set(*keys: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def change(meta: dict[str, Any]) -> None:
        for key in keys[:-1]:
            meta = meta[key]
        meta[keys[-1]] = value

    return change


PICKLED = {":type:": "<class 'type'>", ":serialized:": "gASV..."}
HOSTILE_METADATA = [
    (_set("architecture", "name", value="os.system"), "unknown architecture 'os.system'"),
    (_set("architecture", "name", value="builtins.eval"), "unknown architecture 'builtins.eval'"),
    (_set("architecture", value=["os.system", ["touch marker"]]), "'architecture' must be"),
    (_set("__reduce__", value=["os.system", ["touch marker"]]), "unknown field '__reduce__'"),
    (_set("py/object", value="os.system"), "unknown field 'py/object'"),
    (_set("architecture", "activation_fn", value=PICKLED), "unknown field 'activation_fn'"),
    (_set("env", "policy_class", value=PICKLED), "unknown field 'policy_class' in its env"),
    (_set("env", "variant", value="os.system"), "names no game"),
    (_set("deterministic", value=PICKLED), "'deterministic' must be true or false"),
    (_set("format", value="pickle"), "format 'pickle'"),
    (_set("training", value="gASVpickle"), "'training' must be a JSON object"),
]


def test_a_model_file_naming_an_importable_class_imports_nothing(
    model_file: Path, tmp_path: Path, hostile_module: tuple[str, Path]
) -> None:
    name, marker = hostile_module
    for key, message in [
        (("architecture", "name"), f"unknown architecture '{name}.Net'"),
        (("architecture", "class"), "unknown field 'class' in its action-set architecture"),
        (("module",), "unknown field 'module' in its metadata"),
    ]:
        change = _set(*key, value=f"{name}.Net")
        bad = with_metadata(model_file, tmp_path / "bad.safetensors", change)
        with pytest.raises(ModelLoadError, match=message):
            SavedModel.read(bad)
    assert not marker.exists() and name not in sys.modules


@pytest.mark.parametrize(("change", "message"), HOSTILE_METADATA)
def test_a_model_file_with_code_or_class_names_in_its_metadata_is_refused_in_one_line(
    model_file: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    change: Callable[[dict[str, Any]], None],
    message: str,
) -> None:
    bad = with_metadata(model_file, tmp_path / "bad.safetensors", change)
    with pytest.raises(ModelLoadError, match=message) as caught:
        load_model_agent(str(bad))
    assert "\n" not in str(caught.value)
    err = one_line_error(capsys, "evaluate", "--agent", str(bad), "--deals", "0:1")
    assert "bad.safetensors" in err
    one_line_error(capsys, "model", "show", str(bad))


def test_pickle_bytes_in_a_model_file_are_never_decoded(
    model_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # as the free card, as other safetensors metadata, and as the whole metadata: data, or
    # refused, never unpickled
    marker = tmp_path / "marker"
    text = base64.b64encode(payload(marker)).decode()
    carded = with_metadata(
        model_file, tmp_path / "card.safetensors", _set("card", "pickle", value=text)
    )
    assert SavedModel.read(carded).card["pickle"] == text
    assert main(["model", "show", str(carded)]) == 0 and text in capsys.readouterr().out
    header, body = header_of(model_file)
    header["__metadata__"]["pickle"] = text
    assert SavedModel.read(with_header(tmp_path / "extra.safetensors", header, body))
    header["__metadata__"]["spider_env"] = payload(marker).decode("latin-1")
    raw = with_header(tmp_path / "raw.safetensors", header, body)
    with pytest.raises(ModelLoadError, match="its metadata is not JSON"):
        SavedModel.read(raw)
    one_line_error(capsys, "model", "show", str(raw))
    assert not marker.exists()


def _tensor(
    name: str, make: Callable[[np.ndarray], np.ndarray | None]
) -> Callable[[Path, Path], Path]:
    """A copy of a model file with the tensor ``name`` made by ``make`` (``None``: removed)."""

    def change(src: Path, dst: Path) -> Path:
        from safetensors.numpy import load_file, save_file

        header, _ = header_of(src)
        tensors = load_file(str(src))
        new = make(tensors[name]) if name in tensors else make(np.zeros(3, np.float32))
        if new is None:
            del tensors[name]
        else:
            tensors[name] = new
        save_file(tensors, str(dst), metadata=header["__metadata__"])
        return dst

    return change


def _nan(w: np.ndarray) -> np.ndarray:
    out = w.copy()
    out[1] = np.nan
    return out


def _missing(w: np.ndarray) -> None:
    return None


BAD_TENSORS = [
    (_tensor("embed.0.weight", lambda w: w[:, :-1].copy()), "tensor embed.0.weight is F32 of"),
    (_tensor("embed.0.weight", lambda w: w.astype(np.float64)), "tensor embed.0.weight is F64"),
    (_tensor("score.bias", lambda w: w.astype(np.int64)), "tensor score.bias is I64"),
    (_tensor("embed.2.bias", _nan), "tensor embed.2.bias holds a value that is not finite"),
    (_tensor("score.weight", lambda w: np.full_like(w, np.inf)), "score.weight holds a value"),
    (_tensor("score.weight", _missing), "missing score.weight"),
    (_tensor("__reduce__", lambda w: w), "unknown __reduce__"),
]


@pytest.mark.parametrize(("change", "message"), BAD_TENSORS)
def test_a_tensor_of_the_wrong_shape_dtype_or_value_is_refused_in_one_line(
    model_file: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    change: Callable[[Path, Path], Path],
    message: str,
) -> None:
    bad = change(model_file, tmp_path / "bad.safetensors")
    with pytest.raises(ModelLoadError, match=message) as caught:
        SavedModel.read(bad)
    assert "\n" not in str(caught.value)
    one_line_error(capsys, "evaluate", "--agent", str(bad), "--deals", "0:1")


def test_a_file_that_is_no_safetensors_is_refused_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    marker = tmp_path / "marker"
    bad = tmp_path / "bad.safetensors"
    bad.write_bytes(payload(marker))
    with pytest.raises(ModelLoadError, match="not a readable model file"):
        SavedModel.read(bad)
    one_line_error(capsys, "evaluate", "--agent", str(bad), "--deals", "0:1")
    assert not marker.exists()


def test_every_field_a_model_file_writes_is_one_it_reads() -> None:
    from spider_env.agents.model_file import ARCHITECTURES, ENV_FIELDS, FIELDS

    for architecture in ("action-set", "mlp"):
        model = random_model(architecture=architecture)
        meta = model.metadata()
        assert tuple(meta) == FIELDS
        assert set(meta["env"]) <= set(ENV_FIELDS)
        assert tuple(meta["architecture"]) == ARCHITECTURES[architecture].json_fields


# --- RLlib checkpoints: read only by a conversion the user trusts -------------------------------


def test_converting_an_rllib_checkpoint_needs_trust_pickle_and_unpickles_nothing_without(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    marker = tmp_path / "marker"
    module = tmp_path / "checkpoint" / "learner_group" / "learner" / "rl_module" / "default_policy"
    module.mkdir(parents=True)
    (module / "module_state.pkl").write_bytes(payload(marker))
    (module / "class_and_ctor_args.pkl").write_bytes(payload(marker))
    out = tmp_path / "m.safetensors"
    err = one_line_error(capsys, "model", "convert", str(tmp_path / "checkpoint"), str(out))
    assert "can only be read by unpickling it" in err and "--trust-pickle" in err
    assert not marker.exists() and not out.exists()
