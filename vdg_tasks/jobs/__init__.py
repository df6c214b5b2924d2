"""Batch jobs run before or beside lmms-eval: ``vdg materialize``, ``vdg export`` and ``vdg sweep``."""
