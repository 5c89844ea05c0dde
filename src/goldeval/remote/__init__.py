"""Calling a remote API politely, for every part of goldeval that does (synth's LLMs, API embedders and
rerankers): one retry rule (`remote.retry`), keys from the environment only (`remote.keys`), one way to sort
an SDK's exceptions (`remote.sdk`)."""
