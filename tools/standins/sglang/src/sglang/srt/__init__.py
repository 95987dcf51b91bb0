"""``sglang.srt`` of the stand-in: only the modules the collection imports."""
