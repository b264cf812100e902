"""Hub-ready dataset builders, one subpackage per released resource."""
