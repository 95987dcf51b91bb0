"""The stand-in's own machinery (not part of SGLang's API).

``sglang`` here is a *test and rehearsal stand-in*: it parses flags against the
real release's flag table, applies SGLang's main resolution rules with SGLang's
messages, prints SGLang's startup lines, serves SGLang's HTTP API with paced
tokens and injects faults on request. It needs no GPU and generates no real text.
"""
