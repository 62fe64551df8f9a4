"""Build hook for the optional C accelerator of METEOR's alignment (everything else is in pyproject.toml).

``optional=True``: without a C compiler (or Python headers) the build skips the extension
and the package installs as pure Python, which scores identically (the accelerator only
changes the speed; ``meteor_accel.describe()`` says which path runs, ``tests/test_meteor_accel.py`` checks both).
"""

from setuptools import Extension, setup

setup(ext_modules=[Extension("averitec_tools.metrics._meteor_c", ["averitec_tools/metrics/_meteor_c.c"], optional=True)])
