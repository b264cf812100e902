"""Frame selectors, one module per selector or tightly related family; importing this registers them all."""
