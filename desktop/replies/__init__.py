"""A reply's life in the window: sent, streamed, stopped, and the cards that ask the user
during it."""
