"""Front door to :mod:`vdg_tasks.lmms.derive`, which this name stays for: ``vdg derive`` folders call
``vdg_tasks.derive.hooks_for``.

Files made by earlier versions keep working; new code imports ``vdg_tasks.lmms.derive``.
"""

import sys

from vdg_tasks.lmms import derive

sys.modules[__name__] = derive
