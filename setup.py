"""Build hook for the optional C accelerator of METEOR's alignment (everything else is in pyproject.toml).

``optional=True``: without a C compiler (or Python headers) the build skips the extension
and the package installs as pure Python, which scores identically (the accelerator only
changes the speed; ``averitec doctor`` and ``tests/test_meteor_accel.py`` say which path runs).
"""

from setuptools import Extension, setup

setup(ext_modules=[Extension("averitec_tools.metrics._meteor_c", ["averitec_tools/metrics/_meteor_c.c"], optional=True)])
