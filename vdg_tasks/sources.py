"""Front door to :mod:`vdg_tasks.lmms.dataset_fields`, which this name stays for: committed task YAMLs name
``vdg_tasks.sources.<benchmark>__<field>``.

Files made by earlier versions keep working; new code imports ``vdg_tasks.lmms.dataset_fields``.
"""

import sys

from vdg_tasks.lmms import dataset_fields as sources

sys.modules[__name__] = sources
