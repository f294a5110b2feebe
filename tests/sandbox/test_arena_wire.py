"""The codec of the pipes between evaluator and submission (sandbox/runtime/arena_wire.py): what JSON
would bend (int keys become strings) arrives as it was sent; what it cannot carry is refused."""

from __future__ import annotations

import importlib.util
import json

import pytest

from sandbox.evaluation import RUNTIME_DIR


@pytest.fixture(scope="module")
def wire():
    spec = importlib.util.spec_from_file_location("arena_wire", RUNTIME_DIR / "arena_wire.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_it_round_trips_the_int_keyed_dicts_of_mlgyms_3sat_heuristic(wire):
    args = [[[1, -2, 3], [-1, 2, 4]], {1: True, 4: False}, {2: 3}, [1, 4], [0, 1]]
    assert json.loads(json.dumps(args))[1] == {"1": True, "4": False}  # what plain JSON would hand over
    assert wire.loads(wire.dumps(args)) == args
    nested = {"outer": {7: {"x": {None: 1.5, True: [2, {3: "a"}]}}}, "plain": {"a": 1}}
    assert wire.loads(wire.dumps(nested)) == nested
    assert wire.dumps({"a": 1}) == '{"a": 1}'  # string-keyed dicts travel as plain JSON


def test_it_cannot_be_fooled_by_a_dict_that_uses_the_tag_itself(wire):
    spoof = {wire.TAG: [[1, "x"]]}  # a string-keyed dict a submission might send
    assert wire.loads(wire.dumps(spoof)) == spoof
    with pytest.raises(ValueError, match="pairs"):
        wire.loads(json.dumps({wire.TAG: "not pairs"}))
    with pytest.raises(ValueError, match="keys must be"):
        wire.loads(json.dumps({wire.TAG: [[[1, 2], "x"]]}))


def test_it_refuses_a_key_json_cannot_carry(wire):
    with pytest.raises(TypeError, match="tuple cannot cross the pipes"):
        wire.dumps({(1, 2): 3})


def test_it_rebuilds_a_tagged_dict_however_json_spells_the_tag(wire):
    escaped = '{"\\u005f_referee_dict__": [[1, "x"]]}'  # the tag's first character as an escape
    assert wire.loads(escaped) == {1: "x"} and wire.loads(escaped.encode()) == {1: "x"}
    assert wire.loads(b'{"id": 3, "ok": [[0, 1], {"a": null}]}') == {"id": 3, "ok": [[0, 1], {"a": None}]}
