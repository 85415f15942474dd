"""Keras 3's `keras.utils.Config`: a dict with attribute access that can be
frozen. Layer L5."""

from __future__ import annotations

import copy
import difflib
import json


class Config:
    """A configuration holder (Keras's `keras.utils.Config`): keys read and
    set as attributes or items; `freeze()` makes it read-only (mutations then
    raise ValueError), `unfreeze()` undoes it.

    >>> config = Config(learning_rate=0.1)
    >>> config.momentum = 0.9
    >>> config.as_dict()
    {'learning_rate': 0.1, 'momentum': 0.9}
    """

    __attrs__ = None

    def __init__(self, **kwargs):
        self._config = kwargs
        self._frozen = False
        self.__attrs__ = set(dir(self))

    @property
    def frozen(self):
        """Whether the config is frozen (read-only)."""
        return self._frozen

    def freeze(self):
        """Makes the config read-only."""
        self._frozen = True

    def unfreeze(self):
        self._frozen = False

    def _raise_if_frozen(self):
        if self._frozen:
            raise ValueError("Cannot mutate attribute(s) because the config is frozen.")

    def as_dict(self):
        return copy.copy(self._config)

    def to_json(self):
        return json.dumps(self._config)

    def keys(self):
        return self._config.keys()

    def values(self):
        return self._config.values()

    def items(self):
        return self._config.items()

    def pop(self, *args):
        self._raise_if_frozen()
        return self._config.pop(*args)

    def update(self, *args, **kwargs):
        self._raise_if_frozen()
        return self._config.update(*args, **kwargs)

    def get(self, keyname, value=None):
        return self._config.get(keyname, value)

    def __setattr__(self, name, value):
        attrs = object.__getattribute__(self, "__attrs__")
        if attrs is None or name in attrs:
            return object.__setattr__(self, name, value)
        self._raise_if_frozen()
        self._config[name] = value

    def __getattr__(self, name):
        attrs = object.__getattribute__(self, "__attrs__")
        if attrs is None or name in attrs:
            return object.__getattribute__(self, name)
        if name in self._config:
            return self._config[name]
        msg = f"Unknown attribute: '{name}'."
        closest = difflib.get_close_matches(name, self._config.keys(), n=1, cutoff=0.7)
        if closest:
            msg += f" Did you mean '{closest[0]}'?"
        raise AttributeError(msg)

    def __setitem__(self, key, item):
        self._raise_if_frozen()
        self._config[key] = item

    def __getitem__(self, key):
        return self._config[key]

    def __repr__(self):
        return f"<Config {self._config}>"

    def __iter__(self):
        yield from sorted(self._config.keys())

    def __len__(self):
        return len(self._config)

    def __delitem__(self, key):
        self._raise_if_frozen()
        del self._config[key]

    def __contains__(self, item):
        return item in self._config
