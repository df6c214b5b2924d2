"""Front door to :mod:`vdg_tasks.lmms.synth_tasks`, which this name stays for: the vdgsynth YAMLs name
``vdg_tasks.synth_tasks.doc_to_text``.

Files made by earlier versions keep working; new code imports ``vdg_tasks.lmms.synth_tasks``.
"""

import sys

from vdg_tasks.lmms import synth_tasks

sys.modules[__name__] = synth_tasks
