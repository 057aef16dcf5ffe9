"""The models page: one window for every model (desktop/models/page.py), and the model picker."""
