"""The models: the Models dialog, Download a model, Models on this computer."""
