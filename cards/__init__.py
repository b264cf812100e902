"""Dataset card templates, one per resource."""
