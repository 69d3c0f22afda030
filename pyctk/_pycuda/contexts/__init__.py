"""Devices, contexts, streams and events, occupancy: where work runs."""
