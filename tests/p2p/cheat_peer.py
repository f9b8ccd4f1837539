"""``python -m tests.p2p.cheat_peer KIND <cli.net arguments>``: a cheating peer process.

It runs the real ``cli.net`` peer (``--bot`` plays its seat) with one cheat of
:mod:`tests.p2p.cheaters` plugged into its game contributions, its decisions and
its sending.  Test-only: the product has no way to cheat on purpose.
"""

from __future__ import annotations

import sys

from cli import net
from engine import registry
from p2p.net import node as node_module
from tests.p2p.cheaters import Cheater, force_signing, make_bot


def main(argv: list[str]) -> int:
    kind, rest = argv[0], argv[1:]
    cheater = Cheater(kind)
    make_config = net._config
    holder: dict = {}

    def config(args, use_discovery):  # type: ignore[no-untyped-def]
        cfg = make_config(args, use_discovery)
        cfg.cheat = cheater
        cfg.behaviour = cheater

        def make_player(names, seat, game):  # type: ignore[no-untyped-def]
            node = holder["node"]
            return make_bot(registry.get(game), seat, cheater, lambda: node.driver.game)

        cfg.make_player = make_player
        return cfg

    net._config = config  # type: ignore[assignment]
    original = node_module.Node._new_record

    def new_record(self):  # type: ignore[no-untyped-def]
        original(self)
        holder["node"] = self
        force_signing(self.record)

    node_module.Node._new_record = new_record  # type: ignore[method-assign]
    return net.main(rest)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
