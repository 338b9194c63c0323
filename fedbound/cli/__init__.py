"""fedbound.cli."""
