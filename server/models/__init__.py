"""Model backends: one streaming protocol, a lease per model, and a registry of models."""
