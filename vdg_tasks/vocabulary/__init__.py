"""The words both sides of vdg share: the conditions, the reply parser, seeding, the per-sample record and where the
cache lives. Imports nothing of vdg.
"""
