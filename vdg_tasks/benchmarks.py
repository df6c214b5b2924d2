"""Front door to :mod:`vdg_tasks.data.benchmarks`, which this name stays for: exported task YAMLs name
``vdg_tasks.benchmarks.infinibench_prompt``.

Files made by earlier versions keep working; new code imports ``vdg_tasks.data.benchmarks``.
"""

import sys

from vdg_tasks.data import benchmarks

sys.modules[__name__] = benchmarks
