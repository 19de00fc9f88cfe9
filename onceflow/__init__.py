"""What every stage of the pipeline shares: the contract's vocabulary, settings, paths, schema."""
