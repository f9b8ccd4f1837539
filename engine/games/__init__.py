"""Every game ``slaiga`` ships, one package each.

Importing this package imports every game package, and each registers its games with
``engine.registry`` where it defines them; ``PACKAGES`` is in the order players see.
A game package holds ``actions.py`` (the actions and the wire form of their fields),
``rules.py`` (the ``Game`` subclass and its phase table), ``bots.py`` and, where the game
has simulation statistics, ``stats.py``; ``words.py`` holds how its moves are typed,
described and chosen, how its table looks and how its events are told (``engine.words``). ``highcard`` is the template for a new game
(docs/adding-a-game.md); it is registered but not offered to players.
"""

import importlib

PACKAGES = ("slaiga", "aight", "slave", "slajens", "highcard")

for _package in PACKAGES:
    importlib.import_module(f"{__name__}.{_package}")
