"""LOCUS analysis layer: function, topic, substantive, four scores and fines for every section."""
