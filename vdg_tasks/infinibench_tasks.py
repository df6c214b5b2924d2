"""Front door to :mod:`vdg_tasks.lmms.infinibench_tasks`, which this name stays for: the InfiniBench YAMLs name
``vdg_tasks.infinibench_tasks.doc_to_text``.

Files made by earlier versions keep working; new code imports ``vdg_tasks.lmms.infinibench_tasks``.
"""

import sys

from vdg_tasks.lmms import infinibench_tasks

sys.modules[__name__] = infinibench_tasks
