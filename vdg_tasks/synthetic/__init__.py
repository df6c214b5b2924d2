"""The synthetic benchmarks vdg generates: vdgsynth (``vdg synth``) and the synthetic episodes (``vdg synth-
episodes``).
"""
