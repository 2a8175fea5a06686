"""A warm `assistant ask`: `assistant serve` keeps the index, the encoder and the model loaded behind a Unix socket in
the data folder, and `ask` hands its question to it when it runs, so a question costs what it costs the chat (a new
process otherwise spends seconds loading them first). The socket is a file only its owner may open: nothing
listens on the network."""
