"""One widget per module; the transcript, made of several pieces, is the package
`transcript/` (its document, painting, links and anchors, the reply's parts as they grow,
stored messages)."""
