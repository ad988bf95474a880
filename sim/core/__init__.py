"""The vocabulary every layer speaks: content blocks and their chained hashes, the transcript and
its edits, typed names and values, token counting, the model catalog and provider profiles, the
shapes of a provider call and its record, the one registry, and the small speed helpers.

It imports nothing else of ctxbench: `traces`, `policies`, the engine (`sim`) and `bench` build on
it. Its compiled modules (`native.COMPILED`) are put on this package's path when the `ctxbench.sim`
package finds a build (`native.activate`).
"""
