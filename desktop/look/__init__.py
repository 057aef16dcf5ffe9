"""How Parley looks, defined once: the palettes of its two designed themes and its scales of
spacing and type (../shared/LOOK.md). Qt Quick surfaces read these as plain maps."""
