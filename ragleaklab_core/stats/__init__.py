"""Statistics with no I/O: epoch reducers and exact rates, AUC with DeLong intervals, fit inputs."""
