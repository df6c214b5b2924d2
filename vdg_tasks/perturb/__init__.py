"""The perturbations: video transforms and their checks (``video``), text changes, the video cache and its provenance,
and which video a question is shown (``shown``).
"""
