"""neurips26: the methods of nineteen NeurIPS 2026 papers, and an honest reproduction of each.

Each paper is a subpackage (``neurips26.lr_schedules`` …) with the method as a public API and an
``experiment`` module; ``neurips26 reproduce`` runs them and writes ``report.html``.
"""

__version__ = "0.1.0"
