"""``sglang`` console script of the stand-in."""
