"""What every part stands on: the typed errors and their exit statuses (`errors`), the one
reader of the environment (`settings`), shipped data (`resources`), the CUDA toolchain's
discovery (`toolchain`), kernel sources read and written byte for byte (`sources`), the run
store (`store`), the LLM client (`llm`), the progress events long runs report (`progress`) and
the log's format and files (`logs`)."""
