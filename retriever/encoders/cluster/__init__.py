"""Encoding on a Ray cluster (`assistant index --ray`, `assistant update --ray`): connection.py reaches the cluster,
backend.py runs the encoder's forward pass on a pool of actors behind the EncoderBackend interface."""
