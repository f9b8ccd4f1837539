"""Benchmarks and standing checks, run as ``slaiga bench SUITE``."""


def help_text(doc: str | None, first_paragraph_only: bool = False) -> str:
    """A module docstring as ``--help`` text: reStructuredText literals shown plainly."""
    text = (doc or "").strip()
    if first_paragraph_only:
        text = text.split("\n\n")[0]
    return text.replace("``", "")
