"""Real components for tests: a scripted upstream, socket clients, a running Parley."""
