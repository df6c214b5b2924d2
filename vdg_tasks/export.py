"""Front door to :mod:`vdg_tasks.jobs.export`, which this name stays for: export cards name
``vdg_tasks.export.compute_revision`` and ``write_export_tasks``.

Files made by earlier versions keep working; new code imports ``vdg_tasks.jobs.export``.
"""

import sys

from vdg_tasks.jobs import export

sys.modules[__name__] = export
