"""LOCUS: the Local Ordinance Corpus for the United States."""
