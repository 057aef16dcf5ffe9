"""The transcript on Qt Quick: a virtualised list (a ListView over `TranscriptRows`) in which
only the messages on screen exist, each drawn by QML from properties Python holds once.

Attributes down, signals up: Python owns the rows and their text; QML only reads them and
calls back. A reply that streams is a row whose body is a list of HTML blocks: what can no
longer change is rendered once and frozen, only the live tail is rendered again
(`blocks.ReplyBlocks`), so an update costs the same at the reply's 10th token as at its
10,000th."""
