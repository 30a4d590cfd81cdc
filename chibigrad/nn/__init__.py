"""torch.nn: modules, parameters and losses (filled in by the library layer)."""
