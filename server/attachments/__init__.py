"""Files attached to a user message: uploaded, stored in the data dir, their text
given to the model, their images sent to models that take images."""
