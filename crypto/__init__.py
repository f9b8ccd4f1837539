"""Verifiable mental poker on edwards25519: pure functions, no I/O.

Modules, bottom up:

* ``errors`` -- one exception class per kind of failure.
* ``group`` -- the prime-order subgroup via libsodium (validation, hash to group, op counters).
* ``nonces`` -- prover randomness hedged on statement, secret and fresh randomness.
* ``transcript`` -- the one Fiat-Shamir transcript with its ``Context``.
* ``identity`` / ``seal`` -- Ed25519 identities; payloads sealed to one receiver.
* ``commit`` -- hash commitments and commit-reveal joint randomness.
* ``dleq`` -- Chaum-Pedersen proofs, single and batched.
* ``keys`` -- key shares with Schnorr proofs; the joint key.
* ``deck`` / ``elgamal`` / ``reveal`` / ``transfer`` -- Barnett-Smart cards: encodings,
  masking and proven remasking, reveal tokens, hand-over.
* ``shuffle*`` -- shuffles with cut-and-choose and Terelius-Wikstrom proofs; the TW proof
  also in commitment form, for batch verification of several shuffles at once.
* ``hand_proofs`` -- CDS OR / threshold proofs about held cards.
* ``inequality`` -- "none of my cards is any of these": each card and each forbidden
  card blinded by one secret scalar and compared (the blinding of Jakobsson-Juels'
  plaintext equivalence test), constant work per card and per forbidden card.
"""
