"""A table's protocols on the record: forming, the game rule, one seat's part, silence and the lobby's policy (sans-I/O)."""
