"""Independent answer sets: answers the reference target did not write, labelled by a person.

See README.md in this folder. Nothing here imports a metric; the sets are data read by
whatever measures a metric on them.
"""
