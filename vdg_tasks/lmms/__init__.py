"""The lmms-eval side: the hooks generated task YAMLs name, YAML generation, ``vdg register``, ``vdg derive`` and the
dataset fields of vdg's YAMLs.
"""
