"""The values that cross the pipes between evaluator and submission (stdlib only; imported by
arena.py and driver.py, on each side of the wall).

JSON turns a dict's integer keys into strings: ``{3: True}`` would arrive as ``{"3": True}``, and
MLGym's 3-SAT heuristic_fn, which looks variables up by integer in its assignments and conflict
counts, would silently see none of them. A dict whose keys are not all strings therefore travels
as ``{"__referee_dict__": [[key, value], ...]}`` and is rebuilt with its keys as they were (ints,
floats, booleans, None). A string-keyed dict that happens to use that one key travels the same
way, so nothing a submission sends can be mistaken for it.
"""

import json

TAG = "__referee_dict__"
TAG_BYTES = TAG.encode()
KEY_TYPES = (int, float, bool, type(None))
SCALARS = frozenset({str, int, float, bool, type(None)})


def encode(value):
    """value with every dict that JSON would change replaced by its tagged form."""
    if isinstance(value, dict):
        if all(isinstance(key, str) for key in value) and TAG not in value:
            return {key: encode(item) for key, item in value.items()}
        pairs = []
        for key, item in value.items():
            if not isinstance(key, (str, *KEY_TYPES)):
                raise TypeError(f"a dict key of type {type(key).__name__} cannot cross the pipes")
            pairs.append([key, encode(item)])
        return {TAG: pairs}
    if isinstance(value, (list, tuple)):
        # Scalars as they are without a call each: a game's history is 10 rounds of move pairs,
        # sent 100,000 times an evaluation.
        return [item if type(item) in SCALARS else encode(item) for item in value]
    return value


def _object(pairs):
    if len(pairs) == 1 and pairs[0][0] == TAG:
        items = pairs[0][1]
        if not isinstance(items, list) or not all(isinstance(pair, list) and len(pair) == 2 for pair in items):
            raise ValueError(f"{TAG} must hold [key, value] pairs")
        if not all(isinstance(pair[0], (str, *KEY_TYPES)) for pair in items):
            raise ValueError(f"{TAG} keys must be strings, numbers, booleans or null")
        return {key: item for key, item in items}
    return dict(pairs)


def dumps(value, **kwargs):
    return json.dumps(encode(value), **kwargs)


def loads(text, **kwargs):
    # Text that spells no tag, not even with escapes (no backslash at all), holds no tagged dict:
    # JSON's own dicts, without a Python call for each object.
    if isinstance(text, str):
        plain = TAG not in text and "\\" not in text
    else:
        plain = TAG_BYTES not in text and b"\\" not in text
    if plain:
        return json.loads(text, **kwargs)
    return json.loads(text, object_pairs_hook=_object, **kwargs)
