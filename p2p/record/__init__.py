"""The signed record: entries, the hash chain, its ordering contract, the file and its offline verifier (sans-I/O)."""
