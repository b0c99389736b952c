// Filled in by the models work.
