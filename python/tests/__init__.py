"""Unit tests of the ``chrys.workflows`` SDK; run ``python3 -m unittest discover -s python/tests -t python``."""
