"""GPU lab catalog, runs and results. Experiments live in labs/experiments (no Django)."""
