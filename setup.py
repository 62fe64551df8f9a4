"""Build hook for the optional C accelerators (everything else is in pyproject.toml).

``optional=True``: without a C compiler (or Python headers) the build skips the extensions
and the package installs as pure Python, which scores identically (the accelerators only
change the speed): ``_meteor_c`` aligns METEOR pairs (``meteor_accel.describe()`` says which
path runs, ``tests/test_meteor_accel.py`` checks both), ``_text_c`` splits sentences and looks
tokens up in the tables (``text_accel``; ``tests/test_tokenize.py`` checks both).
"""

from setuptools import Extension, setup

setup(ext_modules=[
    Extension("averitec_tools.metrics._meteor_c", ["averitec_tools/metrics/_meteor_c.c"], optional=True),
    Extension("averitec_tools.metrics._text_c", ["averitec_tools/metrics/_text_c.c", "averitec_tools/metrics/_chunks_c.c",
                                                       "averitec_tools/metrics/_lookup_c.c"],
              depends=["averitec_tools/metrics/_text_c.h"], optional=True),
])
