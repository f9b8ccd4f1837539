"""The rules of every game: deterministic state machines, no I/O (docs/design.md).

Modules, bottom up:

* ``errors`` -- one exception class per failure, each naming who is at fault.
* ``cards`` -- faces, decks and the named card orders.
* ``options`` -- typed, validated table options.
* ``codec`` -- the wire form of actions, read from their annotations; the one decoder
  of untrusted actions.
* ``obligations`` -- what a game needs from a dealer (chance, hidden faces, proofs), and
  the three proof shapes every statement reduces to.
* ``game`` -- the ``Game`` base: phase table, driver, knowledge, state hash.
* ``dealer`` -- the ``Dealer`` seam and the trusted, seeded ``LocalDealer``.
* ``bots`` / ``players`` -- bots, and the ``Player`` interface of every kind of seat.
* ``runner`` -- the game loop: a game, a dealer and one player per seat.
* ``registry`` -- the games by name; each game registers itself.
* ``games`` -- one package per game (docs/adding-a-game.md).
"""
