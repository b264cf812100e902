"""The one compiled module, which pyproject.toml cannot yet declare without an experimental table: the LOCUS
parsers' line normaliser (``corpora/locus/formats/_lines.c``). It is optional: without a C compiler the install
goes on and the same function runs in Python (``neurips26.corpora.locus.formats.lines``)."""

from setuptools import Extension, setup

setup(ext_modules=[Extension("neurips26.corpora.locus.formats._lines", ["corpora/locus/formats/_lines.c"],
                             optional=True)])
